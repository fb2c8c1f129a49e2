//! How a WaitSet learns that a condition may have changed: each WaitSet owns a [`Signal`]
//! and registers it with the [`Observers`] of every runtime and guard condition its
//! conditions depend on; those notify it whenever their state changes.
//!
//! Lock order: the runtime's state lock, then an `Observers` list, then a `Signal`. A waiter
//! never holds its `Signal` while it evaluates conditions (which takes state locks), so the
//! order cannot invert.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

/// A generation counter and a condvar: a waiter reads the generation, evaluates its
/// conditions, then sleeps until the generation moves on.
#[derive(Debug, Default)]
pub(crate) struct Signal {
    generation: Mutex<u64>,
    cv: Condvar,
}

impl Signal {
    /// The current generation.
    pub(crate) fn generation(&self) -> u64 {
        *self.lock()
    }

    /// Moves the generation on and wakes every waiter.
    pub(crate) fn notify(&self) {
        let mut g = self.lock();
        *g = g.wrapping_add(1);
        self.cv.notify_all();
    }

    /// Sleeps until the generation differs from `seen` or `deadline` passes (`None`: no
    /// deadline).
    pub(crate) fn wait_past(&self, seen: u64, deadline: Option<Instant>) {
        let mut g = self.lock();
        while *g == seen {
            match deadline {
                None => {
                    g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner());
                }
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left == Duration::ZERO {
                        return;
                    }
                    g = match self.cv.wait_timeout(g, left) {
                        Ok((g, _)) => g,
                        Err(p) => p.into_inner().0,
                    };
                }
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, u64> {
        // A counter cannot be left inconsistent by a panic.
        self.generation.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The signals to notify when a runtime or a guard condition changes.
#[derive(Debug, Default)]
pub(crate) struct Observers {
    list: Mutex<Vec<Weak<Signal>>>,
}

impl Observers {
    /// Registers `signal` (once per attached condition; [`remove`](Self::remove) undoes one).
    pub(crate) fn add(&self, signal: &Arc<Signal>) {
        let mut l = self.lock();
        l.retain(|w| w.strong_count() > 0);
        l.push(Arc::downgrade(signal));
    }

    /// Undoes one [`add`](Self::add) of `signal`.
    pub(crate) fn remove(&self, signal: &Arc<Signal>) {
        let mut l = self.lock();
        let target = Arc::downgrade(signal);
        if let Some(i) = l.iter().position(|w| w.ptr_eq(&target)) {
            l.swap_remove(i);
        }
    }

    /// Wakes every registered signal.
    pub(crate) fn notify(&self) {
        let l = self.lock();
        for s in l.iter().filter_map(Weak::upgrade) {
            s.notify();
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Weak<Signal>>> {
        self.list.lock().unwrap_or_else(|p| p.into_inner())
    }
}
