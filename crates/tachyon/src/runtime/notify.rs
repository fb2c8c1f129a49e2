//! How a WaitSet learns that a condition may have changed: each WaitSet owns a [`Signal`]
//! and registers it with the [`Observers`] of every runtime and guard condition its
//! conditions depend on; those notify it whenever their state changes.
//!
//! A registration names the entity it waits on where there is one (a reader's
//! ReadCondition, `wait_for_data`, its stream; an endpoint's StatusCondition): the events of
//! one flush then wake only the signals of the endpoints they concern
//! ([`Observers::notify_touched`]), and those registered for anything (a group's or the
//! participant's StatusCondition). Before, every sample of every reader woke every waiting
//! thread of the participant: a thread blocked in `wait_for_data` on a quiet reader woke with
//! each sample of the others, and on a CPU shared with them took its turn in their latency.
//!
//! The async API (`DataReader::stream`, `wait_for_data_async`) uses the same signals: a
//! [`Signal`] also holds at most one task [`Waker`], woken (and dropped) by the next
//! notification, so a future re-registers each time it returns `Pending`. No thread is
//! spawned and none blocks: the waker is called by whoever changed the state (the driver
//! thread, or a user thread that wrote, read or closed). What a flush made news for is
//! notified once the state lock is released (`State::to_notify`); other notifications may
//! come while the notifier holds that lock, so a waker must schedule its task, not poll it
//! inline (what every executor's waker does).
//!
//! Lock order: the runtime's state lock, then an `Observers` list, then a `Signal`. A waiter
//! never holds its `Signal` while it evaluates conditions (which takes state locks), so the
//! order cannot invert.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::task::Waker;
use std::time::{Duration, Instant};

use tachyon_proto::Event;
use tachyon_wire::EntityId;

/// A generation counter and a condvar: a waiter reads the generation, evaluates its
/// conditions, then sleeps until the generation moves on.
#[derive(Debug, Default)]
pub(crate) struct Signal {
    generation: Mutex<Generation>,
    cv: Condvar,
    /// The task to wake at the next notification (async waiters).
    waker: Mutex<Option<Waker>>,
}

/// A [`Signal`]'s count, and how many threads sleep on it.
#[derive(Debug, Default)]
struct Generation {
    count: u64,
    sleeping: u32,
}

impl Signal {
    /// The current generation.
    pub(crate) fn generation(&self) -> u64 {
        self.lock().count
    }

    /// Moves the generation on and wakes every waiter, thread or task.
    pub(crate) fn notify(&self) {
        let sleeping = {
            let mut g = self.lock();
            g.count = g.count.wrapping_add(1);
            g.sleeping
        };
        // Woken after the lock is released: a waiter woken under it would find it held (on
        // a shared CPU it preempts this thread, blocks on the lock and hands the CPU back).
        // Only when a thread sleeps: a condvar's notification is a system call even when
        // nobody waits (a reader's own take notifies the signal of its thread's WaitSet).
        if sleeping > 0 {
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
        while g.count == seen {
            g.sleeping += 1;
            match deadline {
                None => {
                    g = self.cv.wait(g).unwrap_or_else(|p| p.into_inner());
                }
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left == Duration::ZERO {
                        g.sleeping -= 1;
                        return;
                    }
                    g = match self.cv.wait_timeout(g, left) {
                        Ok((g, _)) => g,
                        Err(p) => p.into_inner().0,
                    };
                }
            }
            g.sleeping -= 1;
        }
    }

    fn lock(&self) -> MutexGuard<'_, Generation> {
        // A counter cannot be left inconsistent by a panic.
        self.generation.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The signals to notify when a runtime or a guard condition changes, each with the entity
/// it waits on (`None`: any change).
#[derive(Debug, Default)]
pub(crate) struct Observers {
    list: Mutex<Vec<(Weak<Signal>, Option<EntityId>)>>,
    /// The list's length, kept under its lock: a notify with nobody registered (a reader
    /// polled without a wait set, the usual hot path) takes no lock.
    registered: AtomicUsize,
    /// What the registered wait on, kept under the list's lock: [`ANY_CHANGE`] if one
    /// waits on any change, and a bit per entity waited on ([`interest_bit`], shared by
    /// ids that hash alike). A notify that names none of them (the samples of a reader
    /// nobody waits on, while a WaitSet elsewhere waits) takes no lock either.
    interest: AtomicU64,
}

/// [`Observers::interest`]'s bit for a registration that waits on any change.
const ANY_CHANGE: u64 = 1 << 63;

/// The bit of [`Observers::interest`] for an entity (one of 63).
fn interest_bit(id: EntityId) -> u64 {
    let key = u32::from_be_bytes(id.0);
    1 << ((key.wrapping_mul(0x9E37_79B9) >> 26) % 63)
}

/// The bits of `interest` for a list of registrations.
fn interest_of<'a>(list: impl Iterator<Item = &'a Option<EntityId>>) -> u64 {
    list.fold(0, |bits, e| bits | e.map_or(ANY_CHANGE, interest_bit))
}

impl Observers {
    /// Registers `signal` for changes of entity `interest` (`None`: any change), once per
    /// attached condition; [`remove`](Self::remove) undoes one.
    pub(crate) fn add(&self, signal: &Arc<Signal>, interest: Option<EntityId>) {
        let mut l = self.lock();
        l.retain(|(w, _)| w.strong_count() > 0);
        l.push((Arc::downgrade(signal), interest));
        self.interest
            .store(interest_of(l.iter().map(|(_, e)| e)), Ordering::SeqCst);
        self.registered.store(l.len(), Ordering::SeqCst);
    }

    /// Undoes one [`add`](Self::add) of `signal` for `interest`.
    pub(crate) fn remove(&self, signal: &Arc<Signal>, interest: Option<EntityId>) {
        let mut l = self.lock();
        let target = Arc::downgrade(signal);
        if let Some(i) = l
            .iter()
            .position(|(w, e)| w.ptr_eq(&target) && *e == interest)
        {
            l.swap_remove(i);
        }
        self.interest
            .store(interest_of(l.iter().map(|(_, e)| e)), Ordering::SeqCst);
        self.registered.store(l.len(), Ordering::SeqCst);
    }

    /// Wakes every registered signal.
    ///
    /// Called after the change it reports, made under the state lock. A waiter registers
    /// before it looks at the state under that lock, so either it sees the change or this
    /// sees it registered (both orders go through the state lock).
    pub(crate) fn notify(&self) {
        self.notify_touched(&Touched::everything());
    }

    /// Wakes the signals registered for an entity `touched` names, or for any change.
    pub(crate) fn notify_touched(&self, touched: &Touched) {
        if self.registered.load(Ordering::SeqCst) == 0 || !touched.may_name(&self.interest) {
            return;
        }
        // Notified once the list's lock is released (a woken thread that notifies in turn,
        // after its own take, would find it held), unless more are due than kept here.
        let mut due: [Option<Arc<Signal>>; NOTIFIED_AFTER] = Default::default();
        let mut n = 0;
        {
            let l = self.lock();
            for (w, interest) in l.iter() {
                if !interest.map_or(true, |e| touched.names(e)) {
                    continue;
                }
                if let Some(s) = w.upgrade() {
                    match due.get_mut(n) {
                        Some(slot) => {
                            *slot = Some(s);
                            n += 1;
                        }
                        None => s.notify(),
                    }
                }
            }
        }
        for s in due.iter().take(n).flatten() {
            s.notify();
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<(Weak<Signal>, Option<EntityId>)>> {
        self.list.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// The endpoint of ours whose statuses or samples event `e` changed, if a single one
/// (discovery's events and an inconsistent topic concern none: their waiters are woken with
/// everyone's; a builtin reader's new sample is added apart).
pub(crate) fn endpoint_of(e: &Event) -> Option<EntityId> {
    match e {
        Event::DataAvailable { reader }
        | Event::SubscriptionMatched { reader, .. }
        | Event::SampleLost { reader, .. }
        | Event::SampleRejected { reader, .. }
        | Event::RequestedDeadlineMissed { reader, .. }
        | Event::LivelinessChanged { reader, .. }
        | Event::RequestedIncompatibleQos { reader, .. } => Some(*reader),
        Event::PublicationMatched { writer, .. }
        | Event::OfferedDeadlineMissed { writer, .. }
        | Event::LivelinessLost { writer }
        | Event::OfferedIncompatibleQos { writer, .. } => Some(*writer),
        _ => None,
    }
}

/// The entities the events of one flush concerned: a few endpoints by id, or everything (an
/// event of no single endpoint, such as discovery's, or more endpoints than it keeps).
#[derive(Clone, Debug, Default)]
pub(crate) struct Touched {
    ids: [EntityId; TOUCHED_IDS],
    len: usize,
    everything: bool,
}

/// Signals a notification wakes after it released the list's lock (more are woken under it).
const NOTIFIED_AFTER: usize = 8;

/// Endpoints a [`Touched`] names one by one before it stands for everything.
const TOUCHED_IDS: usize = 4;

impl Touched {
    pub(crate) fn everything() -> Touched {
        Touched {
            everything: true,
            ..Touched::default()
        }
    }

    /// Endpoint `id` alone.
    pub(crate) fn one(id: EntityId) -> Touched {
        let mut t = Touched::default();
        t.add(Some(id));
        t
    }

    /// Adds endpoint `id` (`None`: a change of no single endpoint, so everything).
    pub(crate) fn add(&mut self, id: Option<EntityId>) {
        let Some(id) = id else {
            self.everything = true;
            return;
        };
        if self.everything || self.ids[..self.len].contains(&id) {
            return;
        }
        match self.ids.get_mut(self.len) {
            Some(slot) => {
                *slot = id;
                self.len += 1;
            }
            None => self.everything = true,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        !self.everything && self.len == 0
    }

    /// Whether a registration of `interest` ([`Observers::interest`]) may be concerned.
    fn may_name(&self, interest: &AtomicU64) -> bool {
        if self.is_empty() {
            return false;
        }
        let bits = interest.load(Ordering::SeqCst);
        self.everything
            || bits & ANY_CHANGE != 0
            || self.ids[..self.len]
                .iter()
                .any(|&id| bits & interest_bit(id) != 0)
    }

    /// Adds what `other` names.
    pub(crate) fn merge(&mut self, other: &Touched) {
        if other.everything {
            self.everything = true;
        }
        for id in &other.ids[..other.len] {
            self.add(Some(*id));
        }
    }

    /// Whether a change of `id` is among those.
    fn names(&self, id: EntityId) -> bool {
        self.everything || self.ids[..self.len].contains(&id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(n: u8) -> EntityId {
        EntityId([0, 0, n, 0x07])
    }

    #[test]
    fn a_flush_wakes_the_signals_of_the_endpoints_it_touched_and_those_of_any_change() {
        let obs = Observers::default();
        let (a, b, any) = (
            Arc::new(Signal::default()),
            Arc::new(Signal::default()),
            Arc::new(Signal::default()),
        );
        obs.add(&a, Some(id(1)));
        obs.add(&b, Some(id(2)));
        obs.add(&any, None);
        let gens = || (a.generation(), b.generation(), any.generation());
        let mut t = Touched::default();
        obs.notify_touched(&t);
        assert_eq!(gens(), (0, 0, 0), "nothing touched, nobody woken");
        t.add(Some(id(1)));
        t.add(Some(id(1)));
        obs.notify_touched(&t);
        assert_eq!(gens(), (1, 0, 1));
        t.add(Some(id(3)));
        obs.notify_touched(&t);
        assert_eq!(gens(), (2, 0, 2));
        // An event of no endpoint, or more endpoints than kept one by one: everything.
        let mut t = Touched::default();
        t.add(None);
        obs.notify_touched(&t);
        assert_eq!(gens(), (3, 1, 3));
        let mut t = Touched::default();
        for n in 10..10 + TOUCHED_IDS as u8 + 1 {
            t.add(Some(id(n)));
        }
        obs.notify_touched(&t);
        assert_eq!(gens(), (4, 2, 4));
        obs.notify();
        assert_eq!(gens(), (5, 3, 5));
        // Merged: what either names.
        let mut t = Touched::one(id(1));
        t.merge(&Touched::one(id(2)));
        assert!(t.names(id(1)) && t.names(id(2)) && !t.names(id(3)));
        t.merge(&Touched::everything());
        assert!(t.names(id(3)));
        assert!(Touched::default().is_empty() && !Touched::one(id(1)).is_empty());
        // Removing undoes the registration of that interest only.
        obs.add(&a, None);
        obs.remove(&a, Some(id(1)));
        let mut t = Touched::default();
        t.add(Some(id(2)));
        obs.notify_touched(&t);
        assert_eq!(gens(), (6, 4, 6), "still registered for any change");
        obs.remove(&a, None);
        obs.notify_touched(&t);
        assert_eq!(gens(), (6, 5, 7));
    }

    #[test]
    fn a_notify_that_names_no_registered_interest_is_ruled_out_without_the_list() {
        let obs = Observers::default();
        let a = Arc::new(Signal::default());
        obs.add(&a, Some(id(1)));
        // Ids whose bits differ from id(1)'s: ruled out by the bits alone.
        let others: Vec<EntityId> = (2..=255u8)
            .map(id)
            .filter(|&o| interest_bit(o) != interest_bit(id(1)))
            .collect();
        assert!(others.len() > 200, "the ids spread over the bits");
        assert!(others
            .iter()
            .all(|&o| !Touched::one(o).may_name(&obs.interest)));
        assert!(Touched::one(id(1)).may_name(&obs.interest));
        assert!(Touched::everything().may_name(&obs.interest));
        assert!(!Touched::default().may_name(&obs.interest));
        // One registration for any change: every notify may concern it.
        let any = Arc::new(Signal::default());
        obs.add(&any, None);
        assert!(Touched::one(others[0]).may_name(&obs.interest));
        obs.remove(&any, None);
        assert!(!Touched::one(others[0]).may_name(&obs.interest));
        obs.remove(&a, Some(id(1)));
        assert_eq!(obs.interest.load(Ordering::SeqCst), 0);
    }
}
