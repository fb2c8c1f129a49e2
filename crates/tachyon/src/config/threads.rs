//! Thread roles and their scheduling: CPU affinity and `SCHED_FIFO` priority, the thread mode
//! (a driver thread, or the application drives the participant itself) and which writers the
//! executor treats as critical.
//!
//! The roles depend on the mode. In `driver` mode one thread, `driver`, receives, runs the
//! timers and sends what they make due, serving work in the fixed priority order of DESIGN.md
//! section 3. In `threads` mode that work is split: a `receive` thread per user-data receive
//! source blocks in its `recvmmsg` and handles what arrives (one system call per wake-up, no
//! epoll), and one `timers` thread runs the timers and serves the discovery sockets. Settings
//! are applied when each thread starts; a setting that cannot be applied (`EPERM` for
//! `SCHED_FIFO` without `CAP_SYS_NICE`, a CPU that does not exist) is logged at warn with the
//! role, the setting and the OS error, and the participant still starts, unless `strict` is
//! set. A role the mode does not have (`receive` and `timers` in `driver` mode, `driver` in
//! `threads` mode, any in `single` mode) is refused with a warning naming the mode.

/// Scheduling of one thread role.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadSettings {
    /// CPUs the thread may run on (`sched_setaffinity`); empty: any CPU.
    pub cpus: Vec<u16>,
    /// `SCHED_FIFO` priority, 1 (lowest) to 99; `None`: the default policy (`SCHED_OTHER`).
    pub priority: Option<u8>,
    /// Busy polling: when the thread runs out of work it keeps asking its sockets, without
    /// blocking, for up to this long before it blocks. A datagram arriving meanwhile is
    /// handled at once instead of after a wake-up of a blocked thread (tens of µs when the
    /// CPU went idle, on virtual machines especially), for the price of that CPU time spent
    /// spinning. Worth it only where the thread has a CPU of its own; on a CPU shared with
    /// the thread that sends what it waits for, spinning delays that very sender. `None`
    /// (the default): block at once, as Cyclone DDS and Fast DDS do.
    pub busy_poll: Option<std::time::Duration>,
    /// Watching before blocking, for the threads that receive user data (`[threads.receive]`,
    /// `[threads.critical]`; `threads` mode): after a wait, a receive thread asks its source
    /// again, yielding its CPU between asks, for up to this long before it blocks, and only
    /// while that catches datagrams (`tachyon_transport::spin`: from the second miss in a
    /// row, waits go straight to sleep, doubling up to 64, until one catches again). A reply
    /// or a stream is then taken without the wake-up of a blocked thread (35–60 µs where the
    /// vCPU went idle on a virtual machine) for the CPU spent watching; periodic traffic
    /// slower than the window costs next to nothing. `None`: [`DEFAULT_RECEIVE_SPIN`] for
    /// a thread of the default policy, none for a `SCHED_FIFO` one (its yields would not let
    /// the other threads of its CPU run); zero: block at once, as Cyclone DDS and Fast DDS
    /// do. [`busy_poll`](Self::busy_poll) replaces it where set.
    pub spin: Option<std::time::Duration>,
}

/// [`ThreadSettings::spin`]'s default: longer than a small sample's round trip between two
/// processes of a host over UDP (about 7 µs here), far shorter than a blocked thread's
/// wake-up on a vCPU that went idle. The shared-memory transport's doorbell watch has the same
/// (`[shm] spin`).
pub const DEFAULT_RECEIVE_SPIN: std::time::Duration = std::time::Duration::from_micros(20);

impl ThreadSettings {
    /// Whether nothing is set (the thread runs as the operating system schedules it).
    pub fn is_default(&self) -> bool {
        self.cpus.is_empty()
            && self.priority.is_none()
            && self.busy_poll.is_none()
            && self.spin.is_none()
    }

    /// How long a receive thread of these settings watches its source before it blocks
    /// ([`spin`](Self::spin) resolved: zero with `busy_poll`, which spins unconditionally).
    pub fn receive_spin(&self) -> std::time::Duration {
        if self.busy_poll.is_some() {
            return std::time::Duration::ZERO;
        }
        match (self.spin, self.priority) {
            (Some(window), _) => window,
            (None, Some(_)) => std::time::Duration::ZERO,
            (None, None) => DEFAULT_RECEIVE_SPIN,
        }
    }
}

/// Who runs a participant's protocol: its own driver thread, or the application.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ThreadMode {
    /// A driver thread per participant waits on every socket and the timers and serves them
    /// in the executor's priority order ([`ThreadRoles::driver`]).
    Driver,
    /// The default: a receive thread per user-data receive source ([`ThreadRoles::receive`])
    /// blocks in its `recvmmsg` and handles what arrives, listeners included (a round trip
    /// costs the pong two system calls, against three through the driver's epoll), and a
    /// timers thread runs the timers and serves discovery ([`ThreadRoles::timers`]).
    #[default]
    Threads,
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
    /// `driver` mode: the thread that drives the protocol (handles datagrams and timers,
    /// sends what is due).
    pub driver: ThreadSettings,
    /// `threads` mode: each thread that receives user data.
    pub receive: ThreadSettings,
    /// `threads` mode: the thread that runs the timers and serves discovery.
    pub timers: ThreadSettings,
    /// `threads` mode with `critical_priority` set: the thread that receives critical user
    /// data (the critical lane's socket). Unset: as `receive`.
    pub critical: ThreadSettings,
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
            ("critical", &self.critical),
        ]
        .into_iter()
    }
}
