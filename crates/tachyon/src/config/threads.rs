//! Thread roles and their scheduling: CPU affinity and `SCHED_FIFO` priority, the thread mode
//! (a driver thread, or the application drives the participant itself) and which writers the
//! executor treats as critical.
//!
//! The runtime has one thread role today, `driver`: it receives, runs timers and sends what
//! they make due, serving work in the fixed priority order of DESIGN.md section 3. Its
//! settings are applied when the thread starts; a setting that cannot be applied (`EPERM` for
//! `SCHED_FIFO` without `CAP_SYS_NICE`, a CPU that does not exist) is logged at warn with the
//! role, the setting and the OS error, and the participant still starts, unless `strict` is
//! set. `receive` and `timers` are accepted for the day they become threads of their own; a
//! participant whose configuration sets them logs a warning that they are not applied.

/// Scheduling of one thread role.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadSettings {
    /// CPUs the thread may run on (`sched_setaffinity`); empty: any CPU.
    pub cpus: Vec<u16>,
    /// `SCHED_FIFO` priority, 1 (lowest) to 99; `None`: the default policy (`SCHED_OTHER`).
    pub priority: Option<u8>,
}

impl ThreadSettings {
    /// Whether nothing is set (the thread runs as the operating system schedules it).
    pub fn is_default(&self) -> bool {
        self.cpus.is_empty() && self.priority.is_none()
    }
}

/// Who runs a participant's protocol: its own driver thread, or the application.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ThreadMode {
    /// A driver thread per participant waits on the sockets and the timers (the default).
    #[default]
    Driver,
    /// No thread is spawned: the application calls
    /// [`DomainParticipant::run_once`](crate::DomainParticipant::run_once) or
    /// [`spin`](crate::DomainParticipant::spin) to process datagrams and timers on its own
    /// thread (also the way to busy-poll: `run_once(Duration::ZERO)` in a loop).
    Single,
}

/// The thread roles of a participant's runtime and how each is scheduled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadRoles {
    /// A driver thread, or none (the application drives).
    pub mode: ThreadMode,
    /// Whether a thread setting that cannot be applied fails the participant's creation
    /// ([`Error::Thread`](crate::Error::Thread)) instead of being logged at warn.
    pub strict: bool,
    /// Writers whose TRANSPORT_PRIORITY is above this value are *critical*: the executor
    /// serves their timers (heartbeats, repairs) before any other work. `None`: no writer is.
    pub critical_priority: Option<i32>,
    /// The thread that drives the protocol: handles datagrams and timers, sends what is due.
    pub driver: ThreadSettings,
    /// The thread that receives from the sockets (the driver does it today: not applied).
    pub receive: ThreadSettings,
    /// The thread that runs timers (the driver does it today: not applied).
    pub timers: ThreadSettings,
}

impl ThreadRoles {
    /// Whether nothing is set: a driver thread scheduled by the operating system.
    pub fn is_default(&self) -> bool {
        *self == ThreadRoles::default()
    }

    /// Each role's name (as written in the configuration file) and settings.
    pub fn roles(&self) -> impl Iterator<Item = (&'static str, &ThreadSettings)> {
        [
            ("driver", &self.driver),
            ("receive", &self.receive),
            ("timers", &self.timers),
        ]
        .into_iter()
    }
}
