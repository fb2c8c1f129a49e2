//! Thread roles and their scheduling: CPU affinity and `SCHED_FIFO` priority.
//!
//! Parsed, validated and carried to the runtime now; *not applied yet*. The runtime has one
//! driver thread per participant today, and the fixed-priority executor that gives each role
//! its own thread (DESIGN.md section 3) comes later; until then a participant whose
//! configuration sets any of these logs a warning saying they are ignored.

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

/// The thread roles of a participant's runtime and how each is scheduled.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ThreadRoles {
    /// The thread that drives the protocol: handles datagrams and timers, sends what is due.
    pub driver: ThreadSettings,
    /// The thread that receives from the sockets (today the driver does it).
    pub receive: ThreadSettings,
    /// The thread that runs timers: heartbeats, announcements, deadlines (today the driver).
    pub timers: ThreadSettings,
}

impl ThreadRoles {
    /// Whether no role has any setting.
    pub fn is_default(&self) -> bool {
        self.roles().all(|(_, s)| s.is_default())
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
