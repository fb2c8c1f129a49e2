//! The policy of the fixed-priority, non-preemptive executor (DESIGN.md section 3): which
//! class of ready work the driver serves next. Pure, so the order is tested without sockets
//! or clocks; [`driver`](super::driver) does the serving.
//!
//! # The guarantee
//!
//! Work is served one *batch* at a time: at most [`BATCH`](super::driver::BATCH) datagrams
//! of one socket (one `recvmmsg` round, handed to the protocol under one lock, then what they
//! made due is sent), or one class of due timers (`handle_timeout_of`, then what they made
//! due is sent). A batch is never interrupted (non-preemptive). Between two batches the
//! driver asks epoll, without blocking, which sockets became readable, and serves the
//! highest-priority class that has work. So **work of a class waits at most for the one
//! batch already being processed, plus the batches of higher classes** — a discovery storm
//! delays user data by at most one discovery batch, however long the storm lasts. The price
//! of a fixed priority is that a lower class waits while a higher one stays busy (a flood of
//! user data delays discovery, by design).

use tachyon_proto::TimerClass;
use tachyon_transport::Traffic;

/// A class of work, in priority order (`Critical` first).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Class {
    /// User data of critical writers and readers: the timers of writers whose
    /// TRANSPORT_PRIORITY is above `threads.critical_priority` (heartbeats, repairs), and
    /// the receive sources a transport reserves for critical traffic.
    Critical,
    /// Other user data: the user-data unicast and multicast sockets.
    UserData,
    /// Reliability traffic of user endpoints: heartbeats, acknack replies, repairs, and the
    /// other timers of user writers and readers (lifespan, deadlines, liveliness leases).
    Reliability,
    /// Discovery and housekeeping: the metatraffic (SPDP/SEDP) sockets, SPDP announcements,
    /// lease checks, the builtin endpoints' timers.
    Discovery,
}

impl Class {
    /// Every class, in priority order.
    pub(crate) const ALL: [Class; 4] = [
        Class::Critical,
        Class::UserData,
        Class::Reliability,
        Class::Discovery,
    ];

    /// The class of what arrives on a receive source carrying `traffic`.
    pub(crate) fn of_traffic(traffic: Traffic) -> Class {
        match traffic {
            Traffic::Critical => Class::Critical,
            Traffic::UserData => Class::UserData,
            Traffic::Discovery => Class::Discovery,
        }
    }

    /// The class of the protocol's timers of class `timers`.
    pub(crate) fn of_timers(timers: TimerClass) -> Class {
        match timers {
            TimerClass::Critical => Class::Critical,
            TimerClass::User => Class::Reliability,
            TimerClass::Discovery => Class::Discovery,
        }
    }

    fn bit(self) -> u8 {
        1 << self as u8
    }
}

/// The set of classes that have work ready.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Ready(u8);

impl Ready {
    /// Marks `class` as having work.
    pub(crate) fn insert(&mut self, class: Class) {
        self.0 |= class.bit();
    }

    /// Whether `class` has work.
    pub(crate) fn contains(self, class: Class) -> bool {
        self.0 & class.bit() != 0
    }

    /// Whether no class has work.
    pub(crate) fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The class to serve next: the highest-priority one with work.
    pub(crate) fn next(self) -> Option<Class> {
        Class::ALL.into_iter().find(|&c| self.contains(c))
    }
}

impl FromIterator<Class> for Ready {
    fn from_iter<I: IntoIterator<Item = Class>>(iter: I) -> Ready {
        let mut r = Ready::default();
        for c in iter {
            r.insert(c);
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Serves `ready` the way the driver does, one batch per step; `work` says how many
    /// batches each class has, `arrivals` what becomes ready after each step. Returns the
    /// order served.
    fn run(mut work: [usize; 4], arrivals: &[(usize, Class)]) -> Vec<Class> {
        let mut order = Vec::new();
        let ready = |w: &[usize; 4]| -> Ready {
            Class::ALL
                .into_iter()
                .filter(|&c| w[c as usize] > 0)
                .collect()
        };
        while let Some(c) = ready(&work).next() {
            work[c as usize] -= 1;
            order.push(c);
            for &(_, a) in arrivals.iter().filter(|(step, _)| *step == order.len()) {
                work[a as usize] += 1;
            }
        }
        order
    }

    #[test]
    fn the_highest_class_with_work_goes_first() {
        use Class::*;
        assert_eq!(Ready::default().next(), None);
        for (set, first) in [
            (vec![Discovery], Discovery),
            (vec![Discovery, Reliability], Reliability),
            (vec![Discovery, UserData, Reliability], UserData),
            (vec![Reliability, Critical, UserData, Discovery], Critical),
            (vec![UserData, Critical], Critical),
        ] {
            let r: Ready = set.iter().copied().collect();
            assert_eq!(r.next(), Some(first), "{set:?}");
            for c in Class::ALL {
                assert_eq!(r.contains(c), set.contains(&c));
            }
        }
    }

    #[test]
    fn classes_are_served_in_priority_order() {
        use Class::*;
        assert_eq!(
            run([0, 2, 1, 3], &[]),
            vec![
                UserData,
                UserData,
                Reliability,
                Discovery,
                Discovery,
                Discovery
            ]
        );
    }

    #[test]
    fn user_data_arriving_during_a_discovery_storm_waits_for_one_batch_only() {
        use Class::*;
        // 100 batches of discovery garbage; user data becomes ready while the third batch
        // is processed, a critical timer while the fifth one (a discovery batch) is.
        let order = run([0, 0, 0, 100], &[(3, UserData), (5, Critical)]);
        assert_eq!(
            &order[..7],
            &[Discovery, Discovery, Discovery, UserData, Discovery, Critical, Discovery]
        );
        assert_eq!(order.len(), 102);
    }

    #[test]
    fn sources_and_timers_map_to_their_classes() {
        assert_eq!(Class::of_traffic(Traffic::Critical), Class::Critical);
        assert_eq!(Class::of_traffic(Traffic::UserData), Class::UserData);
        assert_eq!(Class::of_traffic(Traffic::Discovery), Class::Discovery);
        assert_eq!(Class::of_timers(TimerClass::Critical), Class::Critical);
        assert_eq!(Class::of_timers(TimerClass::User), Class::Reliability);
        assert_eq!(Class::of_timers(TimerClass::Discovery), Class::Discovery);
    }
}
