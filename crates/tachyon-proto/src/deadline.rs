//! [`Deadlines`]: the DEADLINE bookkeeping writers (offered) and readers (requested) share —
//! per instance, when its period runs out, and the earliest of those for the timer.

use crate::maps::HashMap;

use tachyon_cdr::KeyHash;

use crate::time::{Duration, Instant};

/// Deadline state of one endpoint; inert when the period is infinite (`None`).
#[derive(Debug)]
pub(crate) struct Deadlines {
    period: Option<Duration>,
    due: HashMap<KeyHash, Instant>,
    /// A lower bound of the earliest due time (exact after each [`Deadlines::fire`]); a stale
    /// early value only costs a spurious timeout.
    next: Option<Instant>,
}

impl Deadlines {
    pub fn new(period: Option<Duration>) -> Deadlines {
        Deadlines {
            period,
            due: HashMap::default(),
            next: None,
        }
    }

    /// `instance` was written / received at `now`: its deadline restarts.
    pub fn arm(&mut self, now: Instant, instance: KeyHash) {
        if let Some(d) = self.period {
            let due = now + d;
            self.due.insert(instance, due);
            self.next = Some(self.next.map_or(due, |n| n.min(due)));
        }
    }

    /// The period changed (`set_qos`): every tracked instance's period restarts at `now` with
    /// the new length; an infinite period stops the timer (instances written meanwhile are
    /// tracked again from their next write once a finite period returns).
    pub fn set_period(&mut self, now: Instant, period: Option<Duration>) {
        if self.period == period {
            return;
        }
        self.period = period;
        match period {
            Some(d) => {
                for due in self.due.values_mut() {
                    *due = now + d;
                }
                self.next = (!self.due.is_empty()).then_some(now + d);
            }
            None => {
                self.due.clear();
                self.next = None;
            }
        }
    }

    /// `instance` is no longer alive: it has no deadline.
    pub fn remove(&mut self, instance: &KeyHash) {
        self.due.remove(instance);
    }

    /// When [`fire`](Self::fire) may next have work.
    pub fn next(&self) -> Option<Instant> {
        self.next
    }

    /// Calls `missed` for every instance whose deadline ran out by `now` (each restarts its
    /// period), if any is due.
    pub fn fire(&mut self, now: Instant, mut missed: impl FnMut(KeyHash)) {
        if !self.next.is_some_and(|at| at <= now) {
            return;
        }
        let Some(period) = self.period else {
            self.next = None;
            return;
        };
        let mut next: Option<Instant> = None;
        for (instance, due) in self.due.iter_mut() {
            if *due <= now {
                missed(*instance);
                *due = now + period;
            }
            next = Some(next.map_or(*due, |n| n.min(*due)));
        }
        self.next = next;
    }
}
