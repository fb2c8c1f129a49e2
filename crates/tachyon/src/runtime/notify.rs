//! How a WaitSet learns that a condition may have changed: each WaitSet owns a [`Signal`]
//! and registers it with the [`Observers`] of every runtime and guard condition its
//! conditions depend on; those notify it whenever their state changes.
//!
//! The async API (`DataReader::stream`, `wait_for_data_async`) uses the same signals: a
//! [`Signal`] also holds at most one task [`Waker`], woken (and dropped) by the next
//! notification, so a future re-registers each time it returns `Pending`. No thread is
//! spawned and none blocks: the waker is called by whoever changed the state (the driver
//! thread, or a user thread that wrote, read or closed). It may be called while that thread
//! holds the runtime's state lock, so a waker must schedule its task, not poll it inline
//! (what every executor's waker does).
//!
//! Lock order: the runtime's state lock, then an `Observers` list, then a `Signal`. A waiter
//! never holds its `Signal` while it evaluates conditions (which takes state locks), so the
//! order cannot invert.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::task::Waker;
use std::time::{Duration, Instant};

/// A generation counter and a condvar: a waiter reads the generation, evaluates its
/// conditions, then sleeps until the generation moves on.
#[derive(Debug, Default)]
pub(crate) struct Signal {
    generation: Mutex<u64>,
    cv: Condvar,
    /// The task to wake at the next notification (async waiters).
    waker: Mutex<Option<Waker>>,
}

impl Signal {
    /// The current generation.
    pub(crate) fn generation(&self) -> u64 {
        *self.lock()
    }

    /// Moves the generation on and wakes every waiter, thread or task.
    pub(crate) fn notify(&self) {
        {
            let mut g = self.lock();
            *g = g.wrapping_add(1);
            self.cv.notify_all();
        }
        // Woken outside the signal's own lock: a waker may register again at once.
        let waker = self.waker_slot().take();
        if let Some(w) = waker {
            w.wake();
        }
    }

    /// Registers the task to wake at the next [`notify`](Self::notify) (replacing the one
    /// registered before, unless it would wake the same task).
    pub(crate) fn register(&self, waker: &Waker) {
        let mut slot = self.waker_slot();
        match slot.as_ref() {
            Some(w) if w.will_wake(waker) => {}
            _ => *slot = Some(waker.clone()),
        }
    }

    fn waker_slot(&self) -> MutexGuard<'_, Option<Waker>> {
        // An `Option<Waker>` cannot be left inconsistent by a panic.
        self.waker.lock().unwrap_or_else(|p| p.into_inner())
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
    /// The list's length, kept under its lock: a notify with nobody registered (a reader
    /// polled without a wait set, the usual hot path) takes no lock.
    registered: AtomicUsize,
}

impl Observers {
    /// Registers `signal` (once per attached condition; [`remove`](Self::remove) undoes one).
    pub(crate) fn add(&self, signal: &Arc<Signal>) {
        let mut l = self.lock();
        l.retain(|w| w.strong_count() > 0);
        l.push(Arc::downgrade(signal));
        self.registered.store(l.len(), Ordering::SeqCst);
    }

    /// Undoes one [`add`](Self::add) of `signal`.
    pub(crate) fn remove(&self, signal: &Arc<Signal>) {
        let mut l = self.lock();
        let target = Arc::downgrade(signal);
        if let Some(i) = l.iter().position(|w| w.ptr_eq(&target)) {
            l.swap_remove(i);
        }
        self.registered.store(l.len(), Ordering::SeqCst);
    }

    /// Wakes every registered signal.
    ///
    /// Called after the change it reports, made under the state lock. A waiter registers
    /// before it looks at the state under that lock, so either it sees the change or this
    /// sees it registered (both orders go through the state lock).
    pub(crate) fn notify(&self) {
        if self.registered.load(Ordering::SeqCst) == 0 {
            return;
        }
        let l = self.lock();
        for s in l.iter().filter_map(Weak::upgrade) {
            s.notify();
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Weak<Signal>>> {
        self.list.lock().unwrap_or_else(|p| p.into_inner())
    }
}
