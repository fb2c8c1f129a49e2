//! The runtime: one per participant. It owns the protocol state ([`Participant`]), the UDP
//! transport and the clock, and a [`Driver`](driver::Driver) that waits on the sockets and
//! the next timer and serves what is ready through the fixed-priority, non-preemptive
//! executor ([`executor`]: critical user data, user data, reliability, discovery and
//! housekeeping; one bounded batch at a time, so work of a class waits at most for the one
//! batch already being processed plus those of higher classes).
//!
//! Thread model (`[threads]` of the configuration): by default a driver thread per
//! participant runs the driver, with the CPU affinity and `SCHED_FIFO` priority of
//! `[threads.driver]` applied when it starts; in single-thread mode no thread is spawned and
//! the application runs the driver with `DomainParticipant::run_once`/`spin`.
//!
//! User calls (`write`, `take`) lock the state briefly and send what became due straight from
//! the calling thread, so a write reaches the socket without a thread hop; the driver
//! handles what arrives and what a timer makes due. Shutdown is explicit: a mio waker, never
//! a datagram to oneself.
//!
//! Whatever changes the state notifies the `changed` condvar (blocking calls of this
//! participant) and the registered WaitSets ([`notify`]). Listeners are not called under the
//! lock: `State::flush` queues which endpoints have news, and the driver thread calls their
//! listeners after releasing it ([`Shared::dispatch_listeners`]), so a listener may call
//! `take` or `write`.
//!
//! The builtin-topic readers' caches live here too ([`builtin`]), fed by `State::flush`
//! from the discovery events; [`State::reader_history`], [`State::read`] and
//! [`State::take`] route a reader's handle to its cache, builtin or not.

pub(crate) mod builtin;
mod driver;
mod executor;
pub(crate) mod notify;
mod status;

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration as StdDuration;

use tachyon_proto::history::{Query, ReaderHistory, Sample};
use tachyon_proto::{Event, Instant, Participant, TxBuf};
use tachyon_transport::{thread, UdpTransport};
use tachyon_wire::EntityId;

pub(crate) use status::Statuses;

use crate::config::{ThreadMode, ThreadRoles, ThreadSettings};
use crate::error::Error;
use crate::status::StatusMask;
use driver::Driver;
use notify::Observers;

/// Largest datagram the runtime builds and receives.
pub(crate) const MAX_DATAGRAM: usize = tachyon_proto::DEFAULT_MAX_DATAGRAM;

/// What the user threads and the driver thread share.
pub(crate) struct Shared {
    state: Mutex<State>,
    /// Signalled whenever events were processed (data, matches, acknowledgements).
    pub(crate) changed: Condvar,
    /// The WaitSets waiting on conditions of this participant.
    pub(crate) observers: Observers,
    pub(crate) transport: UdpTransport,
    /// Bounds every DataReader of this participant is created with.
    pub(crate) reader_limits: ReaderLimits,
    epoch: std::time::Instant,
    waker: mio::Waker,
    stop: AtomicBool,
}

/// What a DataReader may hold of data that is not delivered yet (from the participant's
/// settings).
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReaderLimits {
    /// Samples being reassembled from fragments.
    pub(crate) reassembly: tachyon_proto::frag::ReassemblyLimits,
    /// Payload bytes held out of order.
    pub(crate) max_pending_bytes: usize,
}

/// The protocol state and what goes with it, behind one lock.
pub(crate) struct State {
    pub(crate) participant: Participant,
    txbuf: TxBuf,
    pub(crate) statuses: Statuses,
    /// The listener of each endpoint that has one.
    listeners: HashMap<EntityId, Listener>,
    /// Endpoints whose listeners have news, and which statuses (merged per endpoint).
    pending: Vec<(EntityId, StatusMask)>,
    /// The caches of the builtin-topic readers.
    builtin: builtin::BuiltinTopics,
}

/// Calls an endpoint's listener for the statuses given (type-erased: it holds the typed
/// listener and a weak handle to the typed endpoint).
pub(crate) type Dispatch = Arc<dyn Fn(StatusMask) + Send + Sync>;

/// An endpoint's listener and the statuses it wants.
struct Listener {
    mask: StatusMask,
    dispatch: Dispatch,
}

/// The handle the DCPS entities hold.
pub(crate) struct Runtime {
    pub(crate) shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
    /// The driver thread's kernel id (`None` in single-thread mode).
    thread_id: Option<thread::ThreadId>,
    /// Single-thread mode: the driver the application runs (`None` with a driver thread).
    driver: Option<Mutex<Driver>>,
}

impl Runtime {
    /// Starts the runtime of `participant` on `transport`: its driver thread, scheduled as
    /// `threads.driver` says, or, in single-thread mode, a driver for the application to run.
    pub(crate) fn start(
        participant: Participant,
        transport: UdpTransport,
        epoch: std::time::Instant,
        threads: &ThreadRoles,
        reader_limits: ReaderLimits,
    ) -> Result<Runtime, Error> {
        let poll = mio::Poll::new().map_err(Error::Thread)?;
        let waker = mio::Waker::new(poll.registry(), driver::WAKE).map_err(Error::Thread)?;
        let builtin = builtin::BuiltinTopics::new().map_err(tachyon_proto::Error::Qos)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                participant,
                txbuf: TxBuf::new(MAX_DATAGRAM),
                statuses: builtin::statuses(),
                listeners: HashMap::new(),
                pending: Vec::new(),
                builtin,
            }),
            changed: Condvar::new(),
            observers: Observers::default(),
            transport,
            reader_limits,
            epoch,
            waker,
            stop: AtomicBool::new(false),
        });
        let driver = Driver::new(&shared, poll);
        if threads.mode == ThreadMode::Single {
            return Ok(Runtime {
                shared,
                thread: Mutex::new(None),
                thread_id: None,
                driver: Some(Mutex::new(driver)),
            });
        }
        let s = Arc::clone(&shared);
        let settings = threads.driver.clone();
        let strict = threads.strict;
        let (started, outcome) = std::sync::mpsc::sync_channel(1);
        let thread = std::thread::Builder::new()
            .name("tachyon-driver".into())
            .spawn(move || {
                let applied = apply_thread_settings("driver", &settings);
                let go = applied.is_ok() || !strict;
                let _ = started.send((thread::current_id(), applied));
                if go {
                    let mut driver = driver;
                    while driver.turn(&s, None) {}
                }
            })
            .map_err(Error::Thread)?;
        let (tid, applied) = match outcome.recv() {
            Ok(o) => o,
            Err(_) => {
                let _ = thread.join();
                return Err(Error::Thread(std::io::Error::other(
                    "the driver thread ended before it started",
                )));
            }
        };
        if let Err(e) = applied {
            if strict {
                let _ = thread.join();
                return Err(e);
            }
        }
        Ok(Runtime {
            shared,
            thread: Mutex::new(Some(thread)),
            thread_id: Some(tid),
            driver: None,
        })
    }

    /// Single-thread mode: runs one round of the driver on the calling thread (see
    /// `DomainParticipant::run_once`).
    pub(crate) fn run_once(&self, timeout: StdDuration) -> Result<(), Error> {
        let Some(driver) = &self.driver else {
            return Err(Error::PreconditionNotMet(
                "the participant has its own driver thread; configure threads.mode = \"single\" \
                 to drive it with run_once",
            ));
        };
        if self.shared.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let mut d = match driver.try_lock() {
            Ok(d) => d,
            // A panicking listener cannot leave the driver inconsistent: it holds no
            // protocol state, only buffers and readiness flags.
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => {
                return Err(Error::PreconditionNotMet(
                    "another thread (or a listener of this participant) is running the \
                     participant's driver",
                ))
            }
        };
        d.turn(&self.shared, Some(timeout));
        Ok(())
    }

    /// The driver thread's kernel id (`None` in single-thread mode).
    pub(crate) fn thread_id(&self) -> Option<thread::ThreadId> {
        self.thread_id
    }

    /// Stops the driver thread after announcing the participant's deletion.
    pub(crate) fn shutdown(&self) {
        if self.shared.stop.swap(true, Ordering::SeqCst) {
            return;
        }
        {
            let mut st = self.shared.lock();
            let now = self.shared.now();
            st.participant.shutdown(now);
            st.flush(&self.shared, now);
        }
        let _ = self.shared.waker.wake();
        let handle = self.thread.lock().ok().and_then(|mut t| t.take());
        // A listener (on the driver thread) may close its participant: it cannot join itself,
        // the driver loop ends on its own when the listener returns.
        if let Some(h) = handle.filter(|h| h.thread().id() != std::thread::current().id()) {
            let _ = h.join();
        }
        self.shared.changed.notify_all();
        self.shared.observers.notify();
    }
}

/// Applies a thread role's settings to the calling thread. Each setting that fails is logged
/// at warn with the role, the setting and the OS error; the first failure is returned (the
/// caller decides whether it is fatal: `threads.strict`).
fn apply_thread_settings(role: &'static str, t: &ThreadSettings) -> Result<(), Error> {
    let mut first = None;
    if !t.cpus.is_empty() {
        match thread::set_affinity(&t.cpus) {
            Ok(()) => tracing::debug!(role, cpus = ?t.cpus, "thread pinned"),
            Err(e) => {
                tracing::warn!(role, cpus = ?t.cpus, error = %e,
                    "cannot set the CPU affinity; the thread runs on any CPU");
                first.get_or_insert(Error::ThreadSettings {
                    role,
                    setting: format!("cpus = {:?}", t.cpus),
                    source: e,
                });
            }
        }
    }
    if let Some(p) = t.priority {
        match thread::set_fifo_priority(p) {
            Ok(()) => tracing::debug!(role, priority = p, "thread runs SCHED_FIFO"),
            Err(e) => {
                tracing::warn!(role, priority = p, error = %e,
                    "cannot set the SCHED_FIFO priority (needs CAP_SYS_NICE or RLIMIT_RTPRIO); \
                     the thread keeps the default policy");
                first.get_or_insert(Error::ThreadSettings {
                    role,
                    setting: format!("priority = {p} (SCHED_FIFO)"),
                    source: e,
                });
            }
        }
    }
    first.map_or(Ok(()), Err)
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl Shared {
    /// The protocol's clock: time since the runtime started.
    pub(crate) fn now(&self) -> Instant {
        let n = self.epoch.elapsed().as_nanos();
        Instant::from_nanos(u64::try_from(n).unwrap_or(u64::MAX))
    }

    /// Locks the state (a panic while holding it cannot leave it inconsistent for us: the
    /// protocol state is plain data, so a poisoned lock is taken over).
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits on `changed` for at most `timeout`.
    pub(crate) fn wait<'a>(
        &self,
        guard: MutexGuard<'a, State>,
        timeout: StdDuration,
    ) -> MutexGuard<'a, State> {
        match self.changed.wait_timeout(guard, timeout) {
            Ok((g, _)) => g,
            Err(p) => p.into_inner().0,
        }
    }

    /// Whether the runtime was shut down.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Tells the driver thread to recompute its timeout (a user call armed a timer) or to
    /// call the listeners that have news.
    pub(crate) fn wake(&self) {
        let _ = self.waker.wake();
    }

    /// Calls the listeners with news, without holding the state lock (the driver's thread
    /// only: the driver thread, or the application's in single-thread mode).
    /// A panicking listener is logged and does not stop the runtime.
    pub(crate) fn dispatch_listeners(&self) {
        let calls: Vec<(Dispatch, StatusMask)> = {
            let mut st = self.lock();
            if st.pending.is_empty() {
                return;
            }
            let pending = std::mem::take(&mut st.pending);
            pending
                .into_iter()
                .filter_map(|(id, kinds)| {
                    let l = st.listeners.get(&id)?;
                    Some((Arc::clone(&l.dispatch), kinds & l.mask))
                })
                .collect()
        };
        for (dispatch, kinds) in calls {
            if catch_unwind(AssertUnwindSafe(|| dispatch(kinds))).is_err() {
                tracing::error!(statuses = ?kinds, "a listener panicked; the runtime goes on");
            }
        }
    }
}

impl State {
    /// Sends everything the protocol has due and processes its events.
    pub(crate) fn flush(&mut self, shared: &Shared, now: Instant) {
        while let Some(t) = self.participant.poll_transmit(now, &mut self.txbuf) {
            let bytes = self.txbuf.datagram(&t);
            let r = match &t.destination {
                tachyon_proto::Destination::Unicast(l)
                | tachyon_proto::Destination::Multicast(l) => {
                    shared.transport.send_to(l, bytes, t.priority)
                }
                tachyon_proto::Destination::Many(ls) => {
                    shared.transport.send_to_many(ls, bytes, t.priority)
                }
            };
            if let Err(e) = r {
                tracing::debug!(error = %e, "send failed");
            }
        }
        let mut any = false;
        while let Some(e) = self.participant.poll_event() {
            any = true;
            if let Some(reader) = self.builtin.apply(&self.participant, now, &e) {
                self.record(&Event::DataAvailable { reader });
            }
            self.record(&e);
        }
        if any {
            shared.changed.notify_all();
            shared.observers.notify();
            if !self.pending.is_empty() {
                // Listeners run on the driver thread; this may be a user thread.
                shared.wake();
            }
        }
    }

    /// Folds an event into the statuses and queues the listener it concerns.
    fn record(&mut self, e: &Event) {
        let Some((id, kind)) = self.statuses.apply(e) else {
            return;
        };
        if self
            .listeners
            .get(&id)
            .is_some_and(|l| l.mask.intersects(kind))
        {
            match self.pending.iter_mut().find(|(i, _)| *i == id) {
                Some((_, kinds)) => *kinds |= kind,
                None => self.pending.push((id, kind)),
            }
        }
    }

    /// The cache of reader `id`: a builtin-topic reader's or a user reader's.
    pub(crate) fn reader_history(&self, id: EntityId) -> Option<&ReaderHistory> {
        match self.builtin.history(id) {
            Some(h) => Some(h),
            None => self.participant.reader_history(id),
        }
    }

    /// Reads what `query` selects from reader `id` into `out`.
    pub(crate) fn read(
        &mut self,
        id: EntityId,
        query: &Query,
        out: &mut Vec<Sample>,
    ) -> Result<usize, Error> {
        match self.builtin.history_mut(id) {
            Some(h) => Ok(h.read(query, out).map_err(tachyon_proto::Error::Read)?),
            None => Ok(self.participant.read(id, query, out)?),
        }
    }

    /// Takes what `query` selects from reader `id` into `out`.
    pub(crate) fn take(
        &mut self,
        now: Instant,
        id: EntityId,
        query: &Query,
        out: &mut Vec<Sample>,
    ) -> Result<usize, Error> {
        match self.builtin.history_mut(id) {
            Some(h) => Ok(h.take(query, out).map_err(tachyon_proto::Error::Read)?),
            None => Ok(self.participant.take(now, id, query, out)?),
        }
    }

    /// Sets (or, with `None`, removes) the listener of endpoint `id`.
    pub(crate) fn set_listener(&mut self, id: EntityId, listener: Option<(Dispatch, StatusMask)>) {
        match listener {
            Some((dispatch, mask)) if !mask.is_empty() => {
                self.listeners.insert(id, Listener { mask, dispatch });
            }
            _ => {
                self.listeners.remove(&id);
            }
        }
    }

    /// Registers a new endpoint's statuses (before any event of it is processed).
    pub(crate) fn add_endpoint(&mut self, id: EntityId) {
        self.statuses.insert(id);
    }

    /// Forgets a deleted endpoint's statuses and listener.
    pub(crate) fn remove_endpoint(&mut self, id: EntityId) {
        self.statuses.remove(id);
        self.listeners.remove(&id);
        self.pending.retain(|(i, _)| *i != id);
    }
}

/// Locks a mutex that guards plain data (an entity's QoS): a poisoned lock is taken over.
/// Taken after the state lock when both are held.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
