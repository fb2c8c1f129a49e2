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
//! User calls (`write`, `take`) lock the state briefly and send what became due from the
//! calling thread, so a write reaches the socket without a thread hop; the driver handles
//! what arrives and what a timer makes due. Under the lock the protocol only writes its
//! datagrams into buffers the transports lend and queues them ([`outbox`]); they are sent
//! once the lock is released ([`StateGuard`]), so no system call runs under a lock another
//! endpoint's thread may wait for. Which transports carry what is [`transports`]'s concern.
//! Shutdown is explicit: a mio waker, never a datagram to oneself.
//!
//! Whatever changes the state notifies the `changed` condvar (blocking calls of this
//! participant) and the registered WaitSets ([`notify`]). Listeners are not called under the
//! lock: `State::flush` queues which entities have news, and the driver thread calls their
//! listeners after releasing it ([`Shared::dispatch_listeners`]), so a listener may call
//! `take` or `write`.
//!
//! Entities the protocol does not know — Subscribers and Publishers (groups), Topics, the
//! participant itself — have runtime-local entity ids (group and topic entity kinds, keys
//! counted here; never sent) so their statuses, conditions and listeners live in the same
//! maps as the endpoints'. A status change goes to the listener of the first entity, from
//! the endpoint (or topic) up through its group to the participant, whose listener is
//! enabled for it (DDS 2.2.4.2.3); DATA_AVAILABLE first marks the group's DATA_ON_READERS,
//! which, when a listener up the chain wants it, is called instead (DDS 2.2.4.4).
//!
//! The builtin-topic readers' caches live here too ([`builtin`]), fed by `State::flush`
//! from the discovery events; [`State::reader_history`], [`State::read`] and
//! [`State::take`] route a reader's handle to its cache, builtin or not.

pub(crate) mod builtin;
mod driver;
mod endpoints;
mod executor;
pub(crate) mod lanes;
pub(crate) mod notify;
mod outbox;
mod receive;
mod status;
mod transports;

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration as StdDuration;
use tachyon_proto::maps::HashMap;

use tachyon_proto::history::{Query, ReaderHistory, Sample};
use tachyon_proto::{Destination, Event, Instant, Participant, Transmit};
use tachyon_transport::{clock, intra, thread, Traffic, TxBuffer};
use tachyon_wire::{EntityId, EntityKind};

pub(crate) use status::Statuses;

use crate::config::{ThreadMode, ThreadRoles, ThreadSettings};
use crate::error::Error;
use crate::status::StatusMask;
use driver::Driver;
use lanes::{Lane, CRITICAL, MAIN};
use notify::{Observers, Touched};
use outbox::{Outbox, Outgoing};
pub(crate) use transports::Transports;

/// What the user threads and the driver thread share.
pub(crate) struct Shared {
    /// The protocol state: the main lane, and the critical lane with
    /// `threads.critical_priority` ([`lanes`]).
    lanes: Vec<Lane>,
    /// The WaitSets waiting on conditions of this participant.
    pub(crate) observers: Observers,
    pub(crate) transports: Transports,
    /// Datagrams written under the state lock, sent after it is released.
    outbox: Outbox,
    /// Datagrams of TRANSPORT_PRIORITY above this go in the outbox's critical lane.
    critical_above: Option<i32>,
    /// Bounds every DataReader of this participant is created with.
    pub(crate) reader_limits: ReaderLimits,
    /// `CLOCK_MONOTONIC` nanoseconds when the runtime started: the protocol clock's zero.
    epoch: u64,
    /// The wall clock, from a reading of the protocol's clock (`wall_time`).
    wall: clock::WallClock,
    waker: mio::Waker,
    stop: AtomicBool,
    /// When the driver wakes on its own next (runtime-clock nanoseconds; 0 until it first
    /// sleeps, so every call wakes it). Written under the state lock before it sleeps: a
    /// user call that arms an earlier timer (under the same lock) sees it and wakes it.
    driver_wakes_at: AtomicU64,
    /// The driver thread, once started (`None` in single-thread mode).
    driver_thread: std::sync::OnceLock<std::thread::ThreadId>,
    /// The critical lane's timers thread (threads mode with a critical lane).
    lane_timers: std::sync::OnceLock<std::thread::Thread>,
    /// When the critical lane's timers thread wakes on its own next (runtime-clock
    /// nanoseconds, written under the critical lane's lock).
    lane_wakes_at: AtomicU64,
    /// Datagrams for another lane dropped because its inbox was full
    /// ([`lanes::INBOX_MAX_DATAGRAMS`]).
    pub(crate) inbox_overflow: AtomicU64,
    /// Largest datagram user writers build: the smallest of the transports' (on loopback
    /// UDP nearly 64 KiB, so a 64 KiB sample goes in two datagrams; on a link an Ethernet
    /// MTU).
    pub(crate) max_datagram: usize,
    /// Whether the in-process transport may hand datagrams to this participant on the
    /// sending thread (not in single-thread mode, where the application's thread handles
    /// everything).
    inline_intra: bool,
    /// A datagram the in-process transport handed over on another thread armed a timer
    /// earlier than the timers thread planned to wake: it is woken after the listeners are
    /// called (woken before, it would call them itself, away from the writing thread).
    intra_wake: AtomicBool,
}

thread_local! {
    /// Lane locks this thread holds, of any participant: a datagram sent meanwhile is not
    /// handled on this thread by an in-process receiver (it might need a lock held here).
    static LANES_HELD: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
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

/// The protocol state of a lane and what goes with it, behind the lane's lock.
pub(crate) struct State {
    /// Which lane this is ([`lanes::MAIN`] or [`lanes::CRITICAL`]).
    lane: usize,
    pub(crate) participant: Participant,
    /// A lent transmit buffer the last flush did not fill (kept for the next one).
    spare: Option<TxBuffer>,
    /// The datagrams the last flushes wrote, by outbox lane, in order: handed to the outbox
    /// when the lock is released (`outbox.rs`), and sent then.
    out: [Vec<Outgoing>; outbox::LANES],
    pub(crate) statuses: Statuses,
    /// The listener of each entity that has one.
    listeners: HashMap<EntityId, Listener>,
    /// Listeners replaced or of deleted entities, dropped once the lock is released: a
    /// listener may own entities of this participant (a pong's writer), whose drop locks
    /// the state again.
    retired: Vec<Listener>,
    /// Listeners with news: the entity whose listener is called, the entity whose statuses
    /// changed, and which statuses (merged per pair).
    pending: Vec<(EntityId, EntityId, StatusMask)>,
    /// The endpoints whose waiters (WaitSets, `wait_for_data`, streams) the flushes made
    /// news for: woken once the lock is released, so that a woken thread does not find it
    /// held (on a shared CPU it preempted the notifier, blocked on the lock, and handed the
    /// CPU back: three context switches instead of one).
    to_notify: Touched,
    /// Whether `pending` may hold news, read without the lock (its lane's `listeners_due`):
    /// a delivery to readers without listeners does not lock the lane again to find none.
    listeners_due: Arc<AtomicBool>,
    /// The group (Subscriber or Publisher) of each user endpoint.
    groups: HashMap<EntityId, EntityId>,
    /// Where a status change of an entity goes, by entity and kind (`route`).
    routes: HashMap<(EntityId, StatusMask), Route>,
    /// Counts the times `routes` was forgotten: a reader's DATA_AVAILABLE route, kept with
    /// its statuses (`DataWiring`), is good while this has not moved since.
    routes_epoch: u64,
    /// The local topics: name and type name.
    topics: HashMap<EntityId, (String, String)>,
    /// The key of the next group or topic entity id.
    next_key: u32,
    /// The caches of the builtin-topic readers.
    builtin: builtin::BuiltinTopics,
}

/// Of a user reader, what its DATA_AVAILABLE touches besides its flag, kept with its
/// statuses: a sample's DATA_AVAILABLE and the take that resets it each look the reader up
/// once (and its group once), not in four maps.
#[derive(Clone, Debug, Default)]
pub(crate) struct DataWiring {
    /// Its subscriber's arrival count: bumped at every DATA_AVAILABLE of a reader of that
    /// subscriber (see [`Arrivals`]).
    arrivals: Option<Arc<Arrivals>>,
    /// Its group, whose DATA_ON_READERS a take resets.
    group: Option<EntityId>,
    /// Where its DATA_AVAILABLE goes, as found at `State::routes_epoch` (the epoch, the route).
    route: Option<(u64, Route)>,
}

/// A subscriber's arrival count, read without the state lock: a `take` or `read` of every
/// sample that found its reader's cache empty need not lock again until the count moved
/// (`DataReader` polling an empty reader). Every event that puts a sample in a reader's
/// cache (or changes an instance's state) raises DATA_AVAILABLE, which bumps the count of
/// the reader's subscriber under the same lock; a count per subscriber, not per reader,
/// because a take also resets the subscriber's DATA_ON_READERS, which any of its readers'
/// data sets.
#[derive(Debug, Default)]
pub(crate) struct Arrivals(AtomicU64);

impl Arrivals {
    /// The count now (what a take that finds the cache empty remembers).
    pub(crate) fn now(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }

    fn bump(&self) {
        self.0.fetch_add(1, Ordering::Release);
    }
}

/// Calls an endpoint's listener for the statuses given (type-erased: it holds the typed
/// listener and a weak handle to the typed endpoint).
pub(crate) type Dispatch = Arc<dyn Fn(StatusMask) + Send + Sync>;

/// Calls the listener of a group, topic or participant for statuses of `GroupCall::source`.
pub(crate) type GroupDispatch = Arc<dyn Fn(&GroupCall) + Send + Sync>;

/// One call of a group, topic or participant listener.
pub(crate) struct GroupCall {
    /// The entity whose statuses changed: an endpoint, a topic, or the listener's own entity
    /// for DATA_ON_READERS.
    pub(crate) source: EntityId,
    /// The statuses.
    pub(crate) kinds: StatusMask,
    /// DATA_ON_READERS: the readers under the listener's entity with DATA_AVAILABLE set.
    pub(crate) readers: Vec<EntityId>,
}

/// The entity kind of Subscribers (runtime-local ids).
pub(crate) const SUBSCRIBER_KIND: EntityKind = EntityKind::USER_READER_GROUP;
/// The entity kind of Publishers (runtime-local ids).
pub(crate) const PUBLISHER_KIND: EntityKind = EntityKind::USER_WRITER_GROUP;
/// The entity kind of Topics (runtime-local ids; the protocol allocates no entity of it).
pub(crate) const TOPIC_KIND: EntityKind = EntityKind(0x0a);

/// An entity's listener and the statuses it wants.
struct Listener {
    mask: StatusMask,
    call: ListenerCall,
}

/// An endpoint's own listener, or that of an entity listening for others.
enum ListenerCall {
    Own(Dispatch),
    Group(GroupDispatch),
}

/// The handle the DCPS entities hold.
pub(crate) struct Runtime {
    pub(crate) shared: Arc<Shared>,
    /// The runtime's threads: the driver (or timers thread) and the receive threads.
    threads: Mutex<Vec<JoinHandle<()>>>,
    /// The driver (or timers) thread's kernel id (`None` in single-thread mode).
    thread_id: Option<thread::ThreadId>,
    /// Every thread's role and kernel id, the driver's first.
    thread_ids: Mutex<Vec<(&'static str, thread::ThreadId)>>,
    /// Single-thread mode: the driver the application runs (`None` with a driver thread).
    driver: Option<Mutex<Driver>>,
}

impl Runtime {
    /// Starts the runtime of `participant` on `transport`: its driver thread, scheduled as
    /// `threads.driver` says, or, in single-thread mode, a driver for the application to run.
    pub(crate) fn start(
        mut participant: Participant,
        transports: Transports,
        epoch: u64,
        threads: &ThreadRoles,
        reader_limits: ReaderLimits,
    ) -> Result<Runtime, Error> {
        let poll = mio::Poll::new().map_err(Error::Thread)?;
        let waker = mio::Waker::new(poll.registry(), driver::WAKE).map_err(Error::Thread)?;
        let builtin = builtin::BuiltinTopics::new().map_err(tachyon_proto::Error::Qos)?;
        let max_datagram = transports.max_datagram();
        // Samples loaned by writers of other processes resolve through shared memory.
        let resolver = transports.shm().map(|shm| {
            Arc::new(crate::loan::ShmResolver::new(Arc::clone(shm.loans())))
                as Arc<dyn tachyon_proto::shared::SampleResolver>
        });
        if let Some(r) = &resolver {
            participant.set_sample_resolver(Arc::clone(r));
        }
        let mut lanes = vec![Lane::new(State::new(MAIN, participant, builtin))];
        if threads.critical_priority.is_some() {
            let prefix = lanes[MAIN]
                .state
                .lock()
                .map_or(tachyon_wire::GuidPrefix::UNKNOWN, |s| {
                    s.participant.guid_prefix()
                });
            let mut lane =
                Participant::new_lane(prefix, tachyon_proto::ParticipantConfig::default());
            lane.set_critical_priority(threads.critical_priority);
            if let Some(r) = &resolver {
                lane.set_sample_resolver(Arc::clone(r));
            }
            let builtin = builtin::BuiltinTopics::new().map_err(tachyon_proto::Error::Qos)?;
            lanes.push(Lane::new(State::new(CRITICAL, lane, builtin)));
        }
        let shared = Arc::new(Shared {
            lanes,
            observers: Observers::default(),
            transports,
            outbox: Outbox::default(),
            critical_above: threads.critical_priority,
            reader_limits,
            epoch,
            wall: clock::WallClock::new(),
            waker,
            stop: AtomicBool::new(false),
            driver_wakes_at: AtomicU64::new(0),
            driver_thread: std::sync::OnceLock::new(),
            lane_timers: std::sync::OnceLock::new(),
            lane_wakes_at: AtomicU64::new(0),
            inbox_overflow: AtomicU64::new(0),
            max_datagram,
            inline_intra: threads.mode != ThreadMode::Single,
            intra_wake: AtomicBool::new(false),
        });
        if let Some(intra) = shared.transports.intra() {
            let sink: std::sync::Weak<Shared> = Arc::downgrade(&shared);
            intra.set_sink(sink);
        }
        // In threads mode user data has receive threads of its own; the driver (the timers
        // thread) serves the timers and discovery.
        let split = threads.mode == ThreadMode::Threads;
        let mut driver_sources = Vec::new();
        let mut receive_sources = Vec::new();
        for (t, s) in shared.transports.sources() {
            if split && s.traffic != tachyon_transport::Traffic::Discovery {
                receive_sources.push((t, s));
            } else {
                driver_sources.push((t, s));
            }
        }
        let mut driver = Driver::new(&shared, poll, driver_sources);
        if threads.mode == ThreadMode::Single {
            return Ok(Runtime {
                shared,
                threads: Mutex::new(Vec::new()),
                thread_id: None,
                thread_ids: Mutex::new(Vec::new()),
                driver: Some(Mutex::new(driver)),
            });
        }
        let (role, settings) = if split {
            ("timers", &threads.timers)
        } else {
            ("driver", &threads.driver)
        };
        driver.busy_poll = settings.busy_poll;
        let s = Arc::clone(&shared);
        let (handle, tid) = spawn_role(role, settings, threads.strict, move || {
            let _ = s.driver_thread.set(std::thread::current().id());
            RUNTIME_THREAD.with(|c| c.set(Arc::as_ptr(&s) as usize));
            DRIVER_THREAD.with(|c| c.set(Arc::as_ptr(&s) as usize));
            let mut driver = driver;
            while driver.turn(&s, None) {}
        })?;
        let runtime = Runtime {
            shared,
            threads: Mutex::new(vec![handle]),
            thread_id: Some(tid),
            thread_ids: Mutex::new(vec![(role, tid)]),
            driver: None,
        };
        if split && runtime.shared.lanes.len() > CRITICAL {
            let s = Arc::clone(&runtime.shared);
            let settings = match threads.critical.is_default() {
                false => &threads.critical,
                true => &threads.receive,
            };
            let (h, tid) = spawn_role("critical-timers", settings, threads.strict, move || {
                RUNTIME_THREAD.with(|c| c.set(Arc::as_ptr(&s) as usize));
                let _ = s.lane_timers.set(std::thread::current());
                lanes::run_timers(&s);
            })?;
            lock(&runtime.threads).push(h);
            lock(&runtime.thread_ids).push(("critical-timers", tid));
        }
        for (t, source) in receive_sources {
            let s = Arc::clone(&runtime.shared);
            let critical = source.traffic == tachyon_transport::Traffic::Critical;
            let (role, settings) = match critical {
                true if !threads.critical.is_default() => ("critical", &threads.critical),
                true => ("critical", &threads.receive),
                false => ("receive", &threads.receive),
            };
            let (busy_poll, spin) = (settings.busy_poll, settings.receive_spin());
            let spawned = spawn_role(role, settings, threads.strict, move || {
                RUNTIME_THREAD.with(|c| c.set(Arc::as_ptr(&s) as usize));
                receive::run(&s, t, source, busy_poll, spin);
            });
            match spawned {
                // Dropping `runtime` stops the threads started so far.
                Err(e) => return Err(e),
                Ok((h, tid)) => {
                    lock(&runtime.threads).push(h);
                    lock(&runtime.thread_ids).push((role, tid));
                }
            }
        }
        Ok(runtime)
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

    /// Every thread's role and kernel id, the driver's (or timers thread's) first.
    pub(crate) fn thread_ids(&self) -> Vec<(&'static str, thread::ThreadId)> {
        lock(&self.thread_ids).clone()
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
            let sh = &self.shared;
            let writers: Vec<_> = sh
                .lock()
                .participant
                .local_publications()
                .map(|w| w.guid.entity_id)
                .collect();
            for w in writers {
                crate::publication::unregister_for_fast_readers(sh, w);
            }
            let mut st = sh.lock();
            let now = sh.now();
            st.participant.shutdown(now);
            st.flush(sh, now);
        }
        let _ = self.shared.waker.wake();
        if let Some(t) = self.shared.lane_timers.get() {
            t.unpark();
        }
        for t in self.shared.transports.all() {
            t.interrupt();
        }
        let handles = std::mem::take(&mut *lock(&self.threads));
        // A listener (on a runtime thread) may close its participant: that thread cannot join
        // itself, its loop ends on its own when the listener returns.
        for h in handles {
            if h.thread().id() != std::thread::current().id() {
                let _ = h.join();
            }
        }
        for lane in &self.shared.lanes {
            lane.changed.notify_all();
        }
        self.shared.observers.notify();
    }
}

/// Starts a thread of `role` scheduled as `settings` say, running `body`; returns its handle
/// and kernel id once it applied its settings. With `strict`, a setting that cannot be
/// applied is an error and `body` does not run.
fn spawn_role(
    role: &'static str,
    settings: &ThreadSettings,
    strict: bool,
    body: impl FnOnce() + Send + 'static,
) -> Result<(JoinHandle<()>, thread::ThreadId), Error> {
    let settings = settings.clone();
    let (started, outcome) = std::sync::mpsc::sync_channel(1);
    let handle = std::thread::Builder::new()
        .name(format!("tachyon-{role}"))
        .spawn(move || {
            let applied = apply_thread_settings(role, &settings);
            let go = applied.is_ok() || !strict;
            let _ = started.send((thread::current_id(), applied));
            if go {
                body();
            }
        })
        .map_err(Error::Thread)?;
    let (tid, applied) = match outcome.recv() {
        Ok(o) => o,
        Err(_) => {
            let _ = handle.join();
            return Err(Error::Thread(std::io::Error::other(format!(
                "the {role} thread ended before it started"
            ))));
        }
    };
    match applied {
        Err(e) if strict => {
            let _ = handle.join();
            Err(e)
        }
        _ => Ok((handle, tid)),
    }
}

thread_local! {
    /// The `Shared` (its address) whose runtime thread this is, 0 on other threads.
    static RUNTIME_THREAD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    /// The `Shared` (its address) whose driver (or timers) thread this is, 0 on others.
    static DRIVER_THREAD: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
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
    /// The protocol's time at `monotonic` (nanoseconds of `CLOCK_MONOTONIC`, read earlier).
    /// The protocol takes any time it is given (its arithmetic saturates): one a moment older
    /// than another thread's under the same lock delays nothing that matters.
    pub(crate) fn now_at(&self, monotonic: u64) -> Instant {
        Instant::from_nanos(monotonic.saturating_sub(self.epoch))
    }

    /// The protocol's clock: time since the runtime started (read as integer nanoseconds:
    /// `Instant::elapsed` costs twice as much, `tachyon_transport::clock`).
    pub(crate) fn now(&self) -> Instant {
        Instant::from_nanos(clock::monotonic_nanos().saturating_sub(self.epoch))
    }

    /// The wall clock, as an RTPS timestamp, when the protocol's clock read `now`: a
    /// writer's source timestamp without reading a second clock.
    pub(crate) fn wall_time(&self, now: Instant) -> tachyon_wire::Time {
        let monotonic = now.as_nanos().saturating_add(self.epoch);
        crate::publication::wire_nanos(self.wall.at(monotonic))
    }

    /// Locks the state (a panic while holding it cannot leave it inconsistent for us: the
    /// protocol state is plain data, so a poisoned lock is taken over). What the holder
    /// flushed is sent when the guard is dropped, after the lock is released.
    pub(crate) fn lock(&self) -> StateGuard<'_> {
        self.lock_lane(MAIN)
    }

    /// Locks lane `lane` (see [`lock`](Self::lock)); never the main lane's while holding
    /// another's.
    pub(crate) fn lock_lane(&self, lane: usize) -> StateGuard<'_> {
        let lane = self.lanes.get(lane).unwrap_or(&self.lanes[MAIN]);
        let guard = lane.state.lock().unwrap_or_else(|p| p.into_inner());
        LANES_HELD.with(|h| h.set(h.get() + 1));
        StateGuard {
            shared: self,
            guard: Some(guard),
        }
    }

    /// Waits on `changed` for at most `timeout`. Datagrams the holder queued are sent
    /// first, with the lock released and taken again, and the wait ends at once (the caller
    /// looks at its condition again, as after any wake-up).
    pub(crate) fn wait<'a>(
        &'a self,
        mut st: StateGuard<'a>,
        timeout: StdDuration,
    ) -> StateGuard<'a> {
        if st.has_sends() || st.has_news() {
            let lane = st.lane;
            drop(st);
            return self.lock_lane(lane);
        }
        let lane = &self.lanes[st.lane.min(self.lanes.len() - 1)];
        let Some(guard) = st.guard.take() else {
            return self.lock();
        };
        lane.changed_waiters.fetch_add(1, Ordering::SeqCst);
        let g = match lane.changed.wait_timeout(guard, timeout) {
            Ok((g, _)) => g,
            Err(p) => p.into_inner().0,
        };
        lane.changed_waiters.fetch_sub(1, Ordering::SeqCst);
        st.guard = Some(g);
        st
    }

    /// The unicast locators an endpoint of TRANSPORT_PRIORITY `priority` announces: the
    /// critical lane's when it is above `threads.critical_priority` (and a transport has
    /// one), else none (the participant's defaults apply).
    pub(crate) fn endpoint_locators(&self, priority: i32) -> Vec<tachyon_wire::Locator> {
        if self.critical_above.is_some_and(|c| priority > c) {
            self.transports.locators().critical_unicast.clone()
        } else {
            Vec::new()
        }
    }

    /// Sends the datagrams of the outbox lanes this thread holds ([`outbox::Held`]; call
    /// without the state lock). In-process receivers handle their datagrams during the
    /// sends; their listeners are called after them ([`intra::defer_listeners`]).
    fn send_held(&self, held: outbox::Held) {
        let _listeners_after = intra::defer_listeners();
        self.outbox.send_held(held, &self.transports);
    }

    /// The lane datagrams of `traffic` go to: the critical lane's for critical traffic
    /// (when there is one), else the main lane.
    pub(crate) fn lane_for(&self, traffic: Traffic) -> usize {
        match traffic {
            Traffic::Critical if self.lanes.len() > CRITICAL => CRITICAL,
            _ => MAIN,
        }
    }

    /// Wakes the threads waiting for lane `lane` to change, if any (call with its lock
    /// held).
    pub(crate) fn notify_changed(&self, lane: usize) {
        if let Some(l) = self.lanes.get(lane) {
            if l.changed_waiters.load(Ordering::SeqCst) > 0 {
                l.changed.notify_all();
            }
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

    /// Whether the calling thread is one of this runtime's (the driver or a receive thread):
    /// it calls the listeners with news itself, no other thread needs waking for them.
    pub(crate) fn on_runtime_thread(&self) -> bool {
        RUNTIME_THREAD.with(|c| c.get()) == self as *const Shared as usize
    }

    /// After a receive thread's batch (under the lock `st`): whether a timer is now due
    /// before the driver (the timers thread) planned to wake, so it must be woken. With
    /// `only_user` (the batch carried no discovery traffic) only the user endpoints' timers
    /// can have moved: a look at those the batch changed, not at discovery's endpoints with a
    /// proxy per remote participant.
    pub(crate) fn timer_earlier(&self, st: &mut State, only_user: bool) -> bool {
        let earliest = if only_user {
            // Only the endpoints this batch (or a user call since the last batch) changed
            // can have moved a deadline.
            st.participant.changed_user_poll_timeout()
        } else {
            st.participant.poll_timeout()
        };
        let earliest = earliest.map_or(u64::MAX, |t| t.as_nanos());
        if self.lane_timers_wake(st, earliest) {
            return false;
        }
        earliest < self.driver_wakes_at.load(Ordering::SeqCst)
    }

    /// In the critical lane with a timers thread of its own (`st` its state): wakes that
    /// thread when `earliest` comes before it planned to wake; `false` elsewhere (the driver
    /// serves the timers).
    fn lane_timers_wake(&self, st: &State, earliest: u64) -> bool {
        if st.lane != CRITICAL {
            return false;
        }
        let Some(t) = self.lane_timers.get() else {
            return false;
        };
        if earliest < self.lane_wakes_at.load(Ordering::SeqCst) {
            t.unpark();
        }
        true
    }

    /// Whether the calling thread is the driver thread (which needs no waking: it looks at
    /// its timers and queued listeners at the start of every turn).
    pub(crate) fn on_driver_thread(&self) -> bool {
        // A thread-local, not `thread::current().id()`: that clones and drops the thread's
        // handle, two atomic read-modify-writes on a line every thread's handle shares,
        // at every write (4 % of a writer's CPU writing 3 million small samples a second).
        DRIVER_THREAD.with(|c| c.get()) == self as *const Shared as usize
    }

    /// After a write to `writer` (under the lock `st`): which timers thread must look at
    /// its timers again, and from when ([`wake_timers`](Self::wake_timers) wakes it, once the
    /// lock is released and the write's datagrams left). A write that only sends (the usual
    /// case) costs the driver no wake-up and no context switch.
    pub(crate) fn timers_after_write(&self, st: &State, writer: EntityId) -> TimersWake {
        if self.on_driver_thread() {
            return TimersWake::None;
        }
        // Only the written writer's timers can have moved.
        let earliest = st
            .participant
            .writer_timeout(writer)
            .map_or(u64::MAX, |t| t.as_nanos());
        if st.lane == CRITICAL && self.lane_timers.get().is_some() {
            TimersWake::Lane(earliest)
        } else {
            TimersWake::Driver(earliest)
        }
    }

    /// Wakes the readers that this thread's last write published to under the lock
    /// (`State::send_written`), if it did.
    pub(crate) fn wake_published(&self, published: bool) {
        if let Some((publisher, _)) = self.transports.publisher().filter(|_| published) {
            publisher.wake_published();
        }
    }

    /// Releases `st` after a write to `writer` (or a request for its acknowledgements): the
    /// datagrams queued under it leave, then the timers thread is woken if that writer's
    /// next timer comes before it planned to wake ([`timers_after_write`](Self::timers_after_write),
    /// [`wake_timers`](Self::wake_timers)).
    pub(crate) fn release_after_write(&self, st: StateGuard<'_>, writer: EntityId) {
        let timers = self.timers_after_write(&st, writer);
        drop(st);
        self.wake_timers(timers);
    }

    /// Wakes the timers thread `plan` names if the earliest timer it found comes before that
    /// thread planned to wake. Called after the lock is released: a timers thread publishes
    /// when it wakes under that lock, so one that looked after the write saw its timers, and
    /// one that looked before planned a later time and is woken.
    pub(crate) fn wake_timers(&self, plan: TimersWake) {
        match plan {
            TimersWake::None => {}
            TimersWake::Lane(earliest) => {
                if earliest < self.lane_wakes_at.load(Ordering::SeqCst) {
                    if let Some(t) = self.lane_timers.get() {
                        t.unpark();
                    }
                }
            }
            TimersWake::Driver(earliest) => {
                if earliest < self.driver_wakes_at.load(Ordering::SeqCst) {
                    self.wake();
                }
            }
        }
    }

    /// The driver records when it will wake on its own (under the state lock).
    pub(crate) fn set_driver_wakes_at(&self, at: Option<Instant>) {
        let nanos = at.map_or(u64::MAX, |t| t.as_nanos());
        self.driver_wakes_at.store(nanos, Ordering::SeqCst);
    }

    /// Calls the listeners with news, without holding the state lock (on a runtime thread:
    /// the driver, a receive thread, or the application's in single-thread mode). One thread
    /// calls listeners at a time; a thread that finds another calling them leaves its news to
    /// it, which looks again before it stops. A panicking listener is logged and does not
    /// stop the runtime.
    ///
    /// Every lane's, except the critical lane's when it has threads of its own (threads
    /// mode): those call its listeners themselves, so a thread at the default priority never
    /// calls a critical listener (a ping's answer waiting behind a preempted thread) nor
    /// takes the critical lane's lock to find them.
    pub(crate) fn dispatch_listeners(&self) {
        for lane in self.lane_ids() {
            if lane == CRITICAL && self.lane_timers.get().is_some() {
                continue;
            }
            self.dispatch_listeners_of(lane);
        }
    }

    /// A user thread queued listener calls in lane `lane`: wakes the thread that calls
    /// them (the critical lane's timers thread, or the driver).
    fn wake_listeners_of(&self, lane: usize) {
        match (lane, self.lane_timers.get()) {
            (CRITICAL, Some(t)) => t.unpark(),
            _ => self.wake(),
        }
    }

    /// [`dispatch_listeners`](Self::dispatch_listeners) for lane `lane` only (what the
    /// critical receive thread calls: the main lane's listeners are not its business).
    pub(crate) fn dispatch_listeners_of(&self, lane: usize) {
        let Some(l) = self.lanes.get(lane) else {
            return;
        };
        // Become the caller, or leave the news to the thread calling (which looks again
        // before it stops).
        if !l.calling.enter() {
            return;
        }
        // This thread's vectors (a listener that makes another lane's listeners be called
        // on this thread finds them taken, and works in new ones).
        let mut scratch = LISTENER_SCRATCH
            .try_with(Cell::take)
            .ok()
            .flatten()
            .unwrap_or_default();
        loop {
            self.call_listeners(lane, &mut scratch);
            // Stop, unless another thread left news while we called: then call again.
            if l.calling.leave() {
                break;
            }
        }
        // Gone with its thread if that is ending (its thread-locals destroyed).
        let _ = LISTENER_SCRATCH.try_with(|s| s.set(Some(scratch)));
    }

    /// Calls the listeners `lane`'s state has queued; `scratch`'s vectors are reused from
    /// call to call (no allocation per sample).
    fn call_listeners(&self, lane: usize, scratch: &mut ListenerScratch) {
        if !self.lanes[lane].listeners_due.load(Ordering::Acquire) {
            return;
        }
        collect_calls(&mut self.lock_lane(lane), scratch);
        run_calls(scratch);
    }

    /// Under lane `lane`'s lock `st`, which a receive thread is about to release: becomes
    /// the lane's listener caller (unless another thread is) and takes the calls queued, so
    /// that calling them once the lock is released ([`dispatch_prepared`](Self::dispatch_prepared))
    /// needs no second lock. `None`: no news, or another thread calls.
    pub(crate) fn prepare_listeners(&self, st: &mut State, lane: usize) -> Option<ListenerScratch> {
        let l = self.lanes.get(lane)?;
        if !l.listeners_due.load(Ordering::Acquire) || !l.calling.enter() {
            return None;
        }
        let mut scratch = LISTENER_SCRATCH
            .try_with(Cell::take)
            .ok()
            .flatten()
            .unwrap_or_default();
        collect_calls(st, &mut scratch);
        Some(scratch)
    }

    /// After [`prepare_listeners`](Self::prepare_listeners), the lock released: makes the
    /// calls taken, then goes on as [`dispatch_listeners_of`](Self::dispatch_listeners_of)
    /// (news left meanwhile by other threads is called too). `None`: that alone.
    pub(crate) fn dispatch_prepared(&self, lane: usize, prepared: Option<ListenerScratch>) {
        let (Some(mut scratch), Some(l)) = (prepared, self.lanes.get(lane)) else {
            self.dispatch_listeners_of(lane);
            return;
        };
        run_calls(&mut scratch);
        while !l.calling.leave() {
            self.call_listeners(lane, &mut scratch);
        }
        let _ = LISTENER_SCRATCH.try_with(|s| s.set(Some(scratch)));
    }
}

/// Under the state lock: the listener calls `st` queued, taken into `scratch`.
fn collect_calls(st: &mut State, scratch: &mut ListenerScratch) {
    let ListenerScratch { pending, calls } = scratch;
    st.listeners_due.store(false, Ordering::Relaxed);
    if st.pending.is_empty() {
        return;
    }
    std::mem::swap(&mut st.pending, pending);
    for (target, source, kinds) in pending.drain(..) {
        let Some(l) = st.listeners.get(&target) else {
            continue;
        };
        let kinds = kinds & l.mask;
        if kinds.is_empty() {
            continue;
        }
        match &l.call {
            ListenerCall::Own(d) => {
                // Calling on_data_available resets DATA_AVAILABLE: done here, under the lock
                // the call is taken under, not by the call taking the lock again.
                if kinds.contains(StatusMask::DATA_AVAILABLE) {
                    st.statuses.clear(target, StatusMask::DATA_AVAILABLE);
                }
                calls.push(Call::Own(Arc::clone(d), kinds));
            }
            ListenerCall::Group(g) => {
                let g = Arc::clone(g);
                let readers = if kinds.contains(StatusMask::DATA_ON_READERS) {
                    st.take_data_on_readers(target)
                } else {
                    Vec::new()
                };
                let call = GroupCall {
                    source,
                    kinds,
                    readers,
                };
                calls.push(Call::Group(g, call));
            }
        }
    }
}

/// Without the state lock: makes the calls in `scratch` (a panicking listener is logged).
fn run_calls(scratch: &mut ListenerScratch) {
    for call in scratch.calls.drain(..) {
        let (r, kinds) = match &call {
            Call::Own(d, kinds) => (catch_unwind(AssertUnwindSafe(|| d(*kinds))), *kinds),
            Call::Group(g, c) => (catch_unwind(AssertUnwindSafe(|| g(c))), c.kinds),
        };
        if r.is_err() {
            tracing::error!(statuses = ?kinds, "a listener panicked; the runtime goes on");
        }
    }
}

/// A listener call, taken from the state under its lock and made after it is released.
enum Call {
    Own(Dispatch, StatusMask),
    Group(GroupDispatch, GroupCall),
}

thread_local! {
    /// The vectors this thread calls listeners with, reused from call to call.
    static LISTENER_SCRATCH: Cell<Option<ListenerScratch>> = const { Cell::new(None) };
}

/// The vectors the thread calling a lane's listeners works in ([`LISTENER_SCRATCH`]).
#[derive(Default)]
pub(crate) struct ListenerScratch {
    /// The state's queued listener calls, swapped out under its lock.
    pending: Vec<(EntityId, EntityId, StatusMask)>,
    calls: Vec<Call>,
}

/// The state lock held: derefs to [`State`]. Dropping it releases the lock, then sends what
/// was flushed meanwhile ([`outbox`]).
pub(crate) struct StateGuard<'a> {
    shared: &'a Shared,
    /// `None` only inside [`Shared::wait`].
    guard: Option<MutexGuard<'a, State>>,
}

impl std::ops::Deref for StateGuard<'_> {
    type Target = State;
    fn deref(&self) -> &State {
        self.guard
            .as_deref()
            .expect("a StateGuard holds its lock outside Shared::wait")
    }
}

impl std::ops::DerefMut for StateGuard<'_> {
    fn deref_mut(&mut self) -> &mut State {
        self.guard
            .as_deref_mut()
            .expect("a StateGuard holds its lock outside Shared::wait")
    }
}

/// The in-process transport hands this participant datagrams on the sending thread
/// (`tachyon_transport::intra`): handled as the receive thread of that traffic would, with
/// the listeners called once the sender's outbox is drained.
impl intra::Sink for Shared {
    fn deliver(&self, traffic: Traffic, from: &tachyon_wire::Locator, data: &[u8]) -> bool {
        // A lock held here (of any participant) could be one the delivery needs: queued for
        // this participant's own threads instead.
        if !self.inline_intra || self.stopped() || LANES_HELD.with(|h| h.get()) > 0 {
            return false;
        }
        let lane = self.lane_for(traffic);
        let mut forward = Vec::new();
        let datagram = std::iter::once((0, (from, data)));
        // This thread calls the listeners the datagram gives news to (`after_delivery`): as
        // one of this runtime's threads, it does not wake another to call them.
        let me = self as *const Shared as usize;
        let outer = RUNTIME_THREAD.with(|c| c.replace(me));
        let wake = receive::handle(self, lane, datagram, Some(&mut forward));
        RUNTIME_THREAD.with(|c| c.set(outer));
        if !forward.is_empty() {
            let other = if lane == MAIN { CRITICAL } else { MAIN };
            self.forward_datagrams(other, std::iter::once((from, data)));
        }
        if wake {
            self.intra_wake.store(true, Ordering::SeqCst);
        }
        true
    }

    fn after_delivery(&self, traffic: Traffic) {
        self.dispatch_listeners_of(self.lane_for(traffic));
        if self.intra_wake.swap(false, Ordering::SeqCst) {
            self.wake();
        }
    }
}

/// Which timers thread a write may have to wake, and the earliest timer (nanoseconds of the
/// protocol's clock) of the written writer ([`Shared::timers_after_write`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum TimersWake {
    /// Called on the driver thread: it looks at its timers before it sleeps.
    None,
    /// The critical lane's own timers thread.
    Lane(u64),
    /// The driver (or the main lane's timers thread).
    Driver(u64),
}

/// Queues datagram `t`, written into `buf`, in the outbox lane of its priority.
fn queue_out(
    shared: &Shared,
    out: &mut [Vec<Outgoing>; outbox::LANES],
    buf: TxBuffer,
    t: Transmit,
) {
    let critical = shared.critical_above.is_some_and(|c| t.priority > c);
    out[outbox::lane_of(critical)].push(Outgoing {
        buf,
        len: t.len,
        dest: t.destination,
        priority: t.priority,
    });
}

impl Drop for StateGuard<'_> {
    fn drop(&mut self) {
        let (mut held, mut retired, mut news) = (None, None, None);
        if let Some(g) = self.guard.as_mut() {
            if g.has_news() {
                news = Some(std::mem::take(&mut g.to_notify));
            }
            // The datagrams flushed under the lock: handed to the outbox before it is
            // released (`outbox.rs`), the lanes this thread then holds sent after.
            if g.has_sends() {
                held = Some(self.shared.outbox.hand_over_all(&mut g.out));
            }
            // Listeners are rarely retired: an empty list is left where it is (taking and
            // dropping it on every release cost the round trip a few hundred instructions).
            if !g.retired.is_empty() {
                retired = Some(std::mem::take(&mut g.retired));
            }
        }
        drop(self.guard.take());
        LANES_HELD.with(|h| h.set(h.get().saturating_sub(1)));
        if let Some(held) = held {
            self.shared.send_held(held);
        }
        if let Some(news) = news {
            self.shared.observers.notify_touched(&news);
        }
        // A retired listener's drop may lock this state again (the entities it owns).
        drop(retired);
    }
}

impl State {
    fn new(lane: usize, participant: Participant, builtin: builtin::BuiltinTopics) -> State {
        let mut statuses = builtin::statuses();
        statuses.insert(EntityId::PARTICIPANT);
        State {
            lane,
            participant,
            spare: None,
            out: Default::default(),
            statuses,
            listeners: HashMap::default(),
            retired: Vec::new(),
            listeners_due: Arc::default(),
            pending: Vec::new(),
            to_notify: Touched::default(),
            groups: HashMap::default(),
            routes: HashMap::default(),
            routes_epoch: 0,
            topics: HashMap::default(),
            next_key: 1,
            builtin,
        }
    }

    /// Which lane this is.
    pub(crate) fn lane(&self) -> usize {
        self.lane
    }

    /// Takes over what `other` (another lane, locked inside this one) queued to send, so it
    /// is sent when this lane's lock is released rather than under it.
    pub(crate) fn take_sends(&mut self, other: &mut State) {
        for (mine, theirs) in self.out.iter_mut().zip(&mut other.out) {
            mine.append(theirs);
        }
    }

    /// Whether datagrams wait to be sent when the lock is released.
    pub(crate) fn has_sends(&self) -> bool {
        self.out.iter().any(|o| !o.is_empty())
    }

    /// Whether waiters are to be woken when the lock is released.
    pub(crate) fn has_news(&self) -> bool {
        !self.to_notify.is_empty()
    }

    /// Writes everything the protocol has due into lent buffers, queued to be sent when the
    /// lock is released, and processes its events.
    pub(crate) fn flush(&mut self, shared: &Shared, now: Instant) {
        self.transmit(shared, now);
        self.settle(shared, now);
    }

    /// The first half of [`flush`](Self::flush): the datagrams due, written and queued to
    /// be sent when the lock is released. A write that made datagrams releases the lock
    /// after this half and settles its events under the lock again, after the send
    /// (`DataWriter::submit`): a peer waiting for the sample gets it sooner.
    pub(crate) fn transmit(&mut self, shared: &Shared, now: Instant) {
        if !self.participant.may_transmit(now) {
            return;
        }
        // The buffer the last datagram was written into, when a small copy of it was queued
        // instead (or the one the last flush did not use): lent again before a new one.
        let spare = std::cell::Cell::new(self.spare.take());
        let out = &mut self.out;
        let unused = self.participant.poll_transmits(
            now,
            || spare.take().unwrap_or_else(|| shared.transports.lend()),
            |buf, t| {
                let (buf, reusable) = shared.transports.shrink(buf, t.len);
                spare.set(reusable);
                queue_out(shared, out, buf, t);
            },
        );
        self.spare = Some(unused);
    }

    /// Sends the DATA writer `writer` just wrote, when every new sample of the writer goes
    /// to one locator: built at once, not found by the transmit scan (which would look at
    /// the queued endpoints in turn, and at the writer once more to find it has nothing
    /// more). Through a transport that publishes without a system call (shared memory:
    /// `Transport::publish`), straight into the reader's ring under the lock; the caller
    /// wakes the reader once the lock is released (`Shared::wake_published`), and `true`
    /// says there may be one to wake. Anything else, or a datagram that cannot be published
    /// so (no channel to that reader yet, a full ring), goes to the outbox as the scan would
    /// have sent it. A writer with several destinations is left to the scan.
    pub(crate) fn send_written(&mut self, shared: &Shared, now: Instant, writer: EntityId) -> bool {
        // Into a buffer the transports lend, as the scan writes it.
        let mut buf = self
            .spare
            .take()
            .unwrap_or_else(|| shared.transports.lend());
        let Some(t) = self.participant.poll_writer_transmit(now, writer, &mut buf) else {
            self.spare = Some(buf);
            return false;
        };
        if let (Some((publisher, kind)), Destination::Unicast(l)) =
            (shared.transports.publisher(), &t.destination)
        {
            if l.kind == kind && publisher.publish(l, &buf[..t.len]) {
                self.spare = Some(buf);
                return true;
            }
        }
        let (buf, reusable) = shared.transports.shrink(buf, t.len);
        self.spare = reusable;
        queue_out(shared, &mut self.out, buf, t);
        false
    }

    /// The second half of [`flush`](Self::flush): the protocol's events folded into the
    /// statuses and routed to their listeners, and the waiters told.
    pub(crate) fn settle(&mut self, shared: &Shared, now: Instant) {
        let mut any = false;
        let mut forwarded = Vec::new();
        // The endpoints the events concern: only the waiters on those (and on any change)
        // are woken.
        let mut touched = Touched::default();
        while let Some(e) = self.participant.poll_event() {
            any = true;
            if let Event::ParticipantLost { participant, .. } = &e {
                shared.transports.forget_alternates(*participant);
            }
            touched.add(notify::endpoint_of(&e));
            if let Some(reader) = self.builtin.apply(&self.participant, now, &e) {
                touched.add(Some(reader));
                self.record(&Event::DataAvailable { reader });
            }
            match lanes::lane_endpoint(&e) {
                Some(id) if shared.lane_of(id) != self.lane => forwarded.push(e),
                _ => self.record(&e),
            }
        }
        while let Some(a) = self.participant.poll_locator_alternates() {
            shared.transports.learn_alternates(a);
        }
        if self.lane == MAIN && shared.lanes.len() > CRITICAL {
            self.feed_lanes(shared, now, forwarded);
        }
        // Waiters on `changed` also wait for what makes no event: acknowledgements that free
        // a blocked KEEP_ALL writer (wait_for_acknowledgments, flow control).
        shared.notify_changed(self.lane);
        if any {
            self.to_notify.merge(&touched);
            if !self.pending.is_empty() && !shared.on_runtime_thread() {
                // Listeners run on the runtime's threads; this is a user thread.
                shared.wake_listeners_of(self.lane);
            }
        }
    }

    /// Folds an event into the statuses and queues the listener it concerns.
    fn record(&mut self, e: &Event) {
        if let Event::DataAvailable { reader } = e {
            self.data_available(*reader);
            return;
        }
        if let Event::InconsistentTopic {
            topic, type_name, ..
        } = e
        {
            self.inconsistent_topic(topic, type_name);
            return;
        }
        let Some((id, kind)) = self.statuses.apply(e) else {
            return;
        };
        self.route(id, kind);
    }

    /// An INCONSISTENT_TOPIC: every local topic of that name and type is told (rare: out of
    /// line, away from a sample's path).
    #[cold]
    #[inline(never)]
    fn inconsistent_topic(&mut self, topic: &str, type_name: &str) {
        let ids: Vec<EntityId> = self
            .topics
            .iter()
            .filter(|(_, (n, t))| n == topic && t == type_name)
            .map(|(id, _)| *id)
            .collect();
        for id in ids {
            self.statuses.inconsistent_topic_found(id);
            self.route(id, StatusMask::INCONSISTENT_TOPIC);
        }
    }

    /// A DATA_AVAILABLE of `reader`: its flag set, its subscriber's arrival count bumped,
    /// and routed as [`route`](Self::route) does, the way found once and kept with the
    /// reader's statuses.
    fn data_available(&mut self, reader: EntityId) {
        let epoch = self.routes_epoch;
        let Some(e) = self.statuses.get_mut(reader) else {
            return;
        };
        e.changed |= StatusMask::DATA_AVAILABLE;
        if let Some(a) = &e.data.arrivals {
            a.bump();
        }
        let r = match e.data.route {
            Some((at, r)) if at == epoch => r,
            _ => {
                let r = self.find_route(reader, StatusMask::DATA_AVAILABLE);
                if let Some(e) = self.statuses.get_mut(reader) {
                    e.data.route = Some((epoch, r));
                }
                r
            }
        };
        self.follow(reader, StatusMask::DATA_AVAILABLE, r);
    }

    /// Forgets every route found (a listener or a group changed).
    fn forget_routes(&mut self) {
        self.routes.clear();
        self.routes_epoch += 1;
    }

    /// Queues the listener a status change of `source` goes to: DATA_ON_READERS of its
    /// group first for DATA_AVAILABLE, then the first entity from `source` up to the
    /// participant whose listener is enabled for it. The way is found once per source and
    /// kind (`routes`, forgotten when a listener or a group changes): a sample's
    /// DATA_AVAILABLE costs one look-up, not one per entity on the way.
    fn route(&mut self, source: EntityId, kind: StatusMask) {
        let r = match self.routes.get(&(source, kind)) {
            Some(r) => *r,
            None => {
                let r = self.find_route(source, kind);
                self.routes.insert((source, kind), r);
                r
            }
        };
        self.follow(source, kind, r);
    }

    /// Marks and queues what route `r` of a status change of `source` says.
    fn follow(&mut self, source: EntityId, kind: StatusMask, r: Route) {
        if let Some(group) = r.group {
            self.statuses.mark(group, StatusMask::DATA_ON_READERS);
        }
        match r.to {
            Some((target, true)) => self.queue(target, target, StatusMask::DATA_ON_READERS),
            Some((target, false)) => self.queue(target, source, kind),
            None => {}
        }
    }

    /// Where [`route`](Self::route) sends a status change of `source` (found once per source
    /// and kind: out of line).
    #[inline(never)]
    fn find_route(&self, source: EntityId, kind: StatusMask) -> Route {
        let mut route = Route {
            group: None,
            to: None,
        };
        if kind == StatusMask::DATA_AVAILABLE {
            if let Some(&group) = self.groups.get(&source) {
                route.group = Some(group);
                let mut at = Some(group);
                while let Some(id) = at {
                    if self.wants(id, StatusMask::DATA_ON_READERS) {
                        route.to = Some((id, true));
                        return route;
                    }
                    at = self.parent(id);
                }
            }
        }
        let mut at = Some(source);
        while let Some(id) = at {
            if self.wants(id, kind) {
                route.to = Some((id, false));
                return route;
            }
            at = self.parent(id);
        }
        route
    }

    fn wants(&self, id: EntityId, kind: StatusMask) -> bool {
        self.listeners
            .get(&id)
            .is_some_and(|l| l.mask.intersects(kind))
    }

    fn queue(&mut self, target: EntityId, source: EntityId, kind: StatusMask) {
        match self
            .pending
            .iter_mut()
            .find(|(t, s, _)| *t == target && *s == source)
        {
            Some((_, _, kinds)) => *kinds |= kind,
            None => self.pending.push((target, source, kind)),
        }
        self.listeners_due.store(true, Ordering::Release);
    }

    /// The entity whose listener a status goes to when `id`'s does not take it: a user
    /// endpoint's group, the participant for groups and topics.
    fn parent(&self, id: EntityId) -> Option<EntityId> {
        if let Some(g) = self.groups.get(&id) {
            return Some(*g);
        }
        matches!(id.kind(), SUBSCRIBER_KIND | PUBLISHER_KIND | TOPIC_KIND)
            .then_some(EntityId::PARTICIPANT)
    }

    /// DATA_ON_READERS read by a listener of `target` (a Subscriber, or the participant
    /// for all of them): resets it and returns the readers with DATA_AVAILABLE set.
    fn take_data_on_readers(&mut self, target: EntityId) -> Vec<EntityId> {
        let all = target == EntityId::PARTICIPANT;
        let mut readers: Vec<EntityId> = self
            .groups
            .iter()
            .filter(|(r, g)| {
                (all || **g == target)
                    && r.kind().is_reader()
                    && self
                        .statuses
                        .changes(**r)
                        .contains(StatusMask::DATA_AVAILABLE)
            })
            .map(|(r, _)| *r)
            .collect();
        readers.sort();
        let groups: Vec<EntityId> = if all {
            self.groups.values().copied().collect()
        } else {
            vec![target]
        };
        for g in groups {
            self.statuses.clear(g, StatusMask::DATA_ON_READERS);
        }
        readers
    }

    /// A new runtime-local entity id of `kind` (a group or a topic), with its statuses.
    pub(crate) fn new_entity(&mut self, kind: EntityKind) -> EntityId {
        let k = self.next_key.to_be_bytes();
        self.next_key = self.next_key.wrapping_add(1) & 0x00ff_ffff;
        let id = EntityId::new([k[1], k[2], k[3]], kind);
        self.statuses.insert(id);
        id
    }

    /// Forgets a group, topic or their listener (a topic's registration with discovery
    /// too).
    pub(crate) fn remove_entity(&mut self, id: EntityId) {
        if let Some((name, type_name)) = self.topics.remove(&id) {
            self.participant.remove_local_topic(&name, &type_name);
        }
        self.remove_endpoint(id);
    }

    /// Registers a local topic; discovery reports remote endpoints of `name` with another
    /// type (flush to process what it found already).
    pub(crate) fn add_topic(&mut self, name: &str, type_name: &str) -> EntityId {
        let id = self.new_entity(TOPIC_KIND);
        self.topics
            .insert(id, (name.to_owned(), type_name.to_owned()));
        self.participant.add_local_topic(name, type_name);
        id
    }

    /// The name and type name of local topic `id`.
    pub(crate) fn topic(&self, id: EntityId) -> Option<&(String, String)> {
        self.topics.get(&id)
    }

    /// Places endpoint `id` in group `group` (its listener cascade and DATA_ON_READERS; in
    /// the critical lane the group's statuses are its endpoints' there).
    pub(crate) fn set_group(&mut self, id: EntityId, group: EntityId) {
        self.forget_routes();
        self.groups.insert(id, group);
        self.statuses.get_or_insert(id).data.group = Some(group);
        self.statuses.insert(group);
    }

    /// Reader `id` was read or taken: resets its DATA_AVAILABLE and its group's
    /// DATA_ON_READERS.
    pub(crate) fn data_read(&mut self, id: EntityId) {
        let Some(e) = self.statuses.get_mut(id) else {
            return;
        };
        e.changed = e.changed & !StatusMask::DATA_AVAILABLE;
        if let Some(g) = e.data.group {
            self.statuses.clear(g, StatusMask::DATA_ON_READERS);
        }
    }

    /// Sets (or, with `None`, removes) the listener of group, topic or participant `id`.
    pub(crate) fn set_group_listener(
        &mut self,
        id: EntityId,
        listener: Option<(GroupDispatch, StatusMask)>,
    ) {
        match listener {
            Some((dispatch, mask)) if !mask.is_empty() => {
                self.forget_routes();
                let call = ListenerCall::Group(dispatch);
                let old = self.listeners.insert(id, Listener { mask, call });
                self.retired.extend(old);
            }
            _ => self.retire_listener(id),
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
        clock: impl FnOnce() -> Instant,
        id: EntityId,
        query: &Query,
        out: &mut Vec<Sample>,
    ) -> Result<usize, Error> {
        match self.builtin.history_mut(id) {
            Some(h) => Ok(h.take(query, out).map_err(tachyon_proto::Error::Read)?),
            None => Ok(self.participant.take_timed(clock, id, query, out)?),
        }
    }

    /// Sets (or, with `None`, removes) the listener of endpoint `id`.
    pub(crate) fn set_listener(&mut self, id: EntityId, listener: Option<(Dispatch, StatusMask)>) {
        match listener {
            Some((dispatch, mask)) if !mask.is_empty() => {
                self.forget_routes();
                let call = ListenerCall::Own(dispatch);
                let old = self.listeners.insert(id, Listener { mask, call });
                self.retired.extend(old);
            }
            _ => self.retire_listener(id),
        }
    }

    /// Removes entity `id`'s listener, to be dropped once the lock is released.
    fn retire_listener(&mut self, id: EntityId) {
        self.forget_routes();
        let old = self.listeners.remove(&id);
        self.retired.extend(old);
    }

    /// Registers a new endpoint's statuses (before any event of it is processed).
    pub(crate) fn add_endpoint(&mut self, id: EntityId) {
        self.statuses.insert(id);
    }

    /// Forgets a deleted endpoint's statuses, listener and group.
    /// User reader `id` belongs to the subscriber counting `arrivals`.
    pub(crate) fn set_arrivals(&mut self, id: EntityId, arrivals: Arc<Arrivals>) {
        self.statuses.get_or_insert(id).data.arrivals = Some(arrivals);
    }

    pub(crate) fn remove_endpoint(&mut self, id: EntityId) {
        self.statuses.remove(id);
        self.retire_listener(id);
        self.groups.remove(&id);
        self.forget_routes();
        self.pending.retain(|(t, s, _)| *t != id && *s != id);
    }
}

/// Where a status change goes ([`State::route`]).
#[derive(Clone, Copy, Debug)]
struct Route {
    /// The group whose DATA_ON_READERS a DATA_AVAILABLE sets.
    group: Option<EntityId>,
    /// The entity whose listener is called, and whether for its DATA_ON_READERS.
    to: Option<(EntityId, bool)>,
}

/// Locks a mutex that guards plain data (an entity's QoS): a poisoned lock is taken over.
/// Taken after the state lock when both are held.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
