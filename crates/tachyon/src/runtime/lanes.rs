//! Lanes: the participant's protocol state in two parts, each behind a lock of its own.
//!
//! With `threads.critical_priority` set, the critical endpoints (writers whose
//! TRANSPORT_PRIORITY is above it, readers of topics whose is) live in a protocol state of
//! their own, the *critical lane* (`tachyon_proto::Participant::new_lane`): their own lock,
//! statuses, listeners and timers. Discovery, the builtin endpoints and every other endpoint
//! stay in the main lane. A critical `write`, the critical receive thread and a critical
//! `take` lock the critical lane only: a bulk writer's burst, a receive batch of other
//! traffic or a discovery storm holds the main lane's lock, never theirs.
//!
//! The lanes meet in few places, always taking the main lane's lock first:
//! - discovery (main) announces and matches the critical endpoints; what it does to them
//!   comes out as commands, applied to the critical lane when the main lane flushes
//!   ([`State::feed_lanes`]), with the events it raises for them (incompatible QoS) and the
//!   participants heard from whose writers the critical readers follow (liveliness);
//! - a datagram that concerns both (multicast, a peer sending everything to one locator) is
//!   handled by the lane it arrived at, then by the other (`Participant::take_forward`): in
//!   threads mode a copy goes to the other lane's [`Inbox`], served by that lane's own thread
//!   (the driver, the critical timers thread), so no receive thread takes the other lane's
//!   lock; the driver, which serves both lanes, hands it over itself;
//! - participant-wide operations (statistics, liveliness, shutdown) visit both.
//!
//! In threads mode each lane's listeners are called by that lane's threads only
//! ([`Shared::dispatch_listeners`]): a critical listener never runs on, or waits for, a
//! thread at the default priority.
//!
//! Endpoints of a Publisher or Subscriber with coherent or GROUP-ordered access stay in the
//! main lane (their sets span the group's endpoints); so does everything without
//! `threads.critical_priority`, when there is one lane only.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use tachyon_proto::participant::lanes::is_lane_id;
use tachyon_proto::{Event, Instant};
use tachyon_wire::{EntityId, Locator};

use super::notify::{self, Touched};
use super::{Shared, State, StateGuard};

/// The most datagrams an inbox holds for its lane's thread (at most 64 KiB each); beyond that
/// a forwarded datagram is dropped and counted (`ParticipantStatistics::lane_inbox_overflow`).
pub(crate) const INBOX_MAX_DATAGRAMS: usize = 256;

/// The main lane: discovery, builtin endpoints, every endpoint that is not critical.
pub(crate) const MAIN: usize = 0;
/// The critical lane (only with `threads.critical_priority`).
pub(crate) const CRITICAL: usize = 1;

/// Who calls a lane's listeners: one thread at a time; a thread that finds another calling
/// leaves its news to it, and the caller looks again before it stops. Two atomic operations
/// per call, no lock.
#[derive(Debug, Default)]
pub(crate) struct ListenerCaller(AtomicU8);

/// [`ListenerCaller`]: nobody calls the lane's listeners.
const IDLE: u8 = 0;
/// [`ListenerCaller`]: a thread calls them.
const CALLING: u8 = 1;
/// [`ListenerCaller`]: a thread calls them, and another left news meanwhile.
const NEWS_LEFT: u8 = 2;

impl ListenerCaller {
    /// Whether the calling thread is now the caller (`false`: another thread calls, and
    /// will look again for this thread's news).
    pub(super) fn enter(&self) -> bool {
        let (acq_rel, acq) = (Ordering::AcqRel, Ordering::Acquire);
        loop {
            match self.0.compare_exchange(IDLE, CALLING, acq_rel, acq) {
                Ok(_) => return true,
                Err(_) => match self.0.compare_exchange(CALLING, NEWS_LEFT, acq_rel, acq) {
                    Ok(_) | Err(NEWS_LEFT) => return false,
                    // The caller stopped in between: try to become it.
                    Err(_) => continue,
                },
            }
        }
    }

    /// The caller is done calling: whether it may stop (`false`: another thread left news
    /// meanwhile, call again).
    pub(super) fn leave(&self) -> bool {
        let stopped = self
            .0
            .compare_exchange(CALLING, IDLE, Ordering::AcqRel, Ordering::Acquire)
            .is_ok();
        if !stopped {
            self.0.store(CALLING, Ordering::Release);
        }
        stopped
    }
}

/// One lane: its state and what threads wait and call listeners with.
pub(crate) struct Lane {
    pub(super) state: Mutex<State>,
    /// Signalled whenever events of this lane were processed (data, matches,
    /// acknowledgements).
    pub(super) changed: Condvar,
    /// Threads waiting on `changed` (counted under the state lock, so a notifier holding it
    /// skips the wake-up system call when there are none).
    pub(super) changed_waiters: AtomicU64,
    /// Who calls this lane's listeners.
    pub(super) calling: ListenerCaller,
    /// The state's `listeners_due`: listeners may have news.
    pub(super) listeners_due: Arc<AtomicBool>,
    /// What other threads hand to the thread serving this lane (threads mode).
    pub(super) inbox: Mutex<Inbox>,
}

impl Lane {
    pub(super) fn new(state: State) -> Lane {
        let listeners_due = Arc::clone(&state.listeners_due);
        Lane {
            listeners_due,
            state: Mutex::new(state),
            changed: Condvar::new(),
            changed_waiters: AtomicU64::new(0),
            calling: ListenerCaller::default(),
            inbox: Mutex::new(Inbox::default()),
        }
    }
}

impl Shared {
    /// The lane of endpoint (or group, topic, participant) `id`.
    pub(crate) fn lane_of(&self, id: EntityId) -> usize {
        if self.lanes.len() > CRITICAL && is_lane_id(id) {
            CRITICAL
        } else {
            MAIN
        }
    }

    /// Locks the lane of `id` (see [`lock`](Self::lock)).
    pub(crate) fn lock_for(&self, id: EntityId) -> StateGuard<'_> {
        self.lock_lane(self.lane_of(id))
    }

    /// The lanes there are (`MAIN`, and `CRITICAL` with `threads.critical_priority`).
    pub(crate) fn lane_ids(&self) -> std::ops::Range<usize> {
        0..self.lanes.len()
    }

    /// Whether a new endpoint of TRANSPORT_PRIORITY `priority` goes to the critical lane:
    /// there is one, the priority is above the threshold, and its group does not assemble
    /// sets across its endpoints (`grouped`).
    pub(crate) fn goes_to_critical_lane(&self, priority: i32, grouped: bool) -> bool {
        self.lanes.len() > CRITICAL && !grouped && self.critical_above.is_some_and(|c| priority > c)
    }
}

impl Shared {
    /// Sets (or removes) the listener of group or participant `id` in every lane: each calls
    /// it for its own endpoints' statuses.
    pub(crate) fn set_group_listener(
        &self,
        id: EntityId,
        listener: Option<(super::GroupDispatch, crate::status::StatusMask)>,
    ) {
        for lane in self.lane_ids().rev() {
            self.lock_lane(lane)
                .set_group_listener(id, listener.clone());
        }
    }

    /// The statuses of group `id` changed since last read, in any lane (DATA_ON_READERS of
    /// a Subscriber with readers in both).
    pub(crate) fn status_changes(&self, id: EntityId) -> crate::status::StatusMask {
        let mut changes = crate::status::StatusMask::NONE;
        for lane in self.lane_ids().rev() {
            changes |= self.lock_lane(lane).statuses.changes(id);
        }
        changes
    }

    /// Hands `datagrams` (received in the other lane; they concern lane `lane` too) to lane
    /// `lane`: when another thread serves it (the critical timers thread the critical lane,
    /// the driver thread the main lane), copies go to its inbox and it is woken; else (the
    /// driver serving both lanes) they are handled here, the first lane's lock released.
    pub(super) fn forward_datagrams<'a>(
        &self,
        lane: usize,
        datagrams: impl Iterator<Item = (&'a Locator, &'a [u8])>,
    ) {
        let served_elsewhere = match lane {
            CRITICAL => self.lane_timers.get().is_some(),
            _ => self.driver_thread.get().is_some() && !self.on_driver_thread(),
        };
        if !served_elsewhere {
            super::receive::handle(self, lane, datagrams.enumerate(), None);
            return;
        }
        let Some(l) = self.lanes.get(lane) else {
            return;
        };
        {
            let mut inbox = super::lock(&l.inbox);
            for (from, bytes) in datagrams {
                if inbox.datagrams.len() >= INBOX_MAX_DATAGRAMS {
                    // The lane's thread is behind (or a peer floods datagrams that concern
                    // both lanes): dropped and counted, as a full socket would; reliable
                    // writers repair.
                    let before = self.inbox_overflow.fetch_add(1, Ordering::Relaxed);
                    if before == 0 {
                        tracing::warn!(
                            lane,
                            held = INBOX_MAX_DATAGRAMS,
                            "datagrams for another lane dropped: its inbox is full (counted in \
                             ParticipantStatistics::lane_inbox_overflow)"
                        );
                    }
                    continue;
                }
                inbox.datagrams.push((*from, bytes.to_vec()));
            }
        }
        match (lane, self.lane_timers.get()) {
            (CRITICAL, Some(t)) => t.unpark(),
            _ => self.wake(),
        }
    }

    /// What other threads handed to the thread serving lane `lane` since it last looked.
    pub(super) fn take_inbox(&self, lane: usize) -> Inbox {
        self.lanes
            .get(lane)
            .map(|l| std::mem::take(&mut *super::lock(&l.inbox)))
            .unwrap_or_default()
    }

    /// Forgets a deleted group (its listener and statuses) in every lane.
    pub(crate) fn remove_group(&self, id: EntityId) {
        for lane in self.lane_ids().rev() {
            self.lock_lane(lane).remove_entity(id);
        }
    }
}

/// The critical lane's timers thread (threads mode): serves the lane's timers (heartbeats,
/// acknowledgements, repairs, deadlines, leases), what the main lane hands it ([`Inbox`])
/// and the listeners they call, taking no lock but the lane's (and the inbox's, for a
/// swap), so a main lane busy with discovery delays none of them. Sleeps until the
/// next timer; a thread that arms an earlier one wakes it (`Shared::timer_earlier`).
pub(super) fn run_timers(shared: &Shared) {
    use std::sync::atomic::Ordering;
    while !shared.stopped() {
        let input = shared.take_inbox(CRITICAL);
        let (now, next) = {
            let mut st = shared.lock_lane(CRITICAL);
            let now = shared.now();
            if !input.is_empty() {
                st.take_input(shared, now, input);
            }
            if st.participant.poll_timeout().is_some_and(|t| t <= now) {
                st.participant.handle_timeout(now);
                st.flush(shared, now);
            }
            let next = st.participant.poll_timeout();
            let nanos = next.map_or(u64::MAX, |t| t.as_nanos());
            shared.lane_wakes_at.store(nanos, Ordering::SeqCst);
            (now, next)
        };
        shared.dispatch_listeners_of(CRITICAL);
        if shared.stopped() {
            return;
        }
        match next {
            Some(t) => std::thread::park_timeout(std::time::Duration::from_nanos(
                t.saturating_duration_since(now).as_nanos() as u64,
            )),
            None => std::thread::park(),
        }
    }
}

/// The endpoint of another lane an event of the main lane's discovery concerns.
pub(super) fn lane_endpoint(e: &Event) -> Option<EntityId> {
    match e {
        Event::OfferedIncompatibleQos { writer, .. } => Some(*writer),
        Event::RequestedIncompatibleQos { reader, .. } => Some(*reader),
        _ => None,
    }
}

impl State {
    /// The main lane, after its protocol work (`flush`): what discovery did to the critical
    /// lane's endpoints (commands), the events it raised for them (`forwarded`) and the
    /// participants heard from whose writers the critical readers follow go to the critical
    /// lane, under its lock taken inside this one; what that makes due is sent when this
    /// lane's lock is released.
    ///
    /// With a critical timers thread (threads mode) they are only queued for it
    /// ([`Inbox`]): the threads of the main lane, which run at the default priority, then
    /// never hold the critical lane's lock, so a critical thread never waits for one of them
    /// that the scheduler preempted (priority inversion).
    #[inline(never)]
    pub(super) fn feed_lanes(&mut self, shared: &Shared, now: Instant, forwarded: Vec<Event>) {
        let mut input = Inbox {
            events: forwarded,
            ..Inbox::default()
        };
        while let Some(c) = self.participant.poll_lane_command() {
            input.commands.push(c);
        }
        while let Some(p) = self.participant.poll_participant_activity() {
            input.activity.push(p);
        }
        if input.is_empty() || shared.lanes.len() <= CRITICAL {
            return;
        }
        if let Some(t) = shared.lane_timers.get() {
            super::lock(&shared.lanes[CRITICAL].inbox).append(input);
            t.unpark();
            return;
        }
        let mut st = shared.lock_lane(CRITICAL);
        st.take_input(shared, now, input);
        // Sent once this (main) lane's lock is released, not under it.
        self.take_sends(&mut st);
    }

    /// Applies what the main lane handed to this (critical) lane, and flushes.
    fn take_input(&mut self, shared: &Shared, now: Instant, input: Inbox) {
        for c in input.commands {
            let id = c.endpoint();
            if let Err(e) = self.participant.apply_lane_command(now, c) {
                // Deleted in the lane, not yet withdrawn from discovery.
                tracing::debug!(endpoint = ?id, error = %e, "lane command for a gone endpoint");
            }
        }
        for p in input.activity {
            self.participant.handle_participant_activity(now, p);
        }
        for (from, bytes) in &input.datagrams {
            self.participant.handle_datagram(now, from, bytes);
            // Handed over from the other lane, which had it first.
            self.participant.take_forward();
        }
        let mut touched = Touched::default();
        for e in &input.events {
            touched.add(notify::endpoint_of(e));
            self.record(e);
        }
        self.flush(shared, now);
        self.to_notify.merge(&touched);
    }
}

/// What one lane's threads hand to the thread serving the other (threads mode). To the
/// critical lane: discovery's commands for its endpoints, the events discovery raised for
/// them, the participants heard from whose writers its readers follow; to either: datagrams
/// that arrived at the other lane's sockets and concern this one too.
#[derive(Default)]
pub(crate) struct Inbox {
    commands: Vec<tachyon_proto::participant::lanes::LaneCommand>,
    events: Vec<Event>,
    activity: Vec<tachyon_wire::GuidPrefix>,
    pub(super) datagrams: Vec<(Locator, Vec<u8>)>,
}

impl Inbox {
    fn is_empty(&self) -> bool {
        self.commands.is_empty()
            && self.events.is_empty()
            && self.activity.is_empty()
            && self.datagrams.is_empty()
    }

    fn append(&mut self, mut other: Inbox) {
        self.commands.append(&mut other.commands);
        self.events.append(&mut other.events);
        self.activity.append(&mut other.activity);
        self.datagrams.append(&mut other.datagrams);
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant as StdInstant};

    use std::sync::Arc;

    use tachyon_wire::{EntityId, Locator};

    use crate::config::ThreadRoles;
    use crate::prelude::*;
    use crate::qos::TopicQos;
    use crate::ParticipantSettings;

    use super::ListenerCaller;

    #[test]
    fn one_thread_calls_listeners_and_looks_again_for_news_left_meanwhile() {
        let c = ListenerCaller::default();
        assert!(c.enter(), "nobody calls: this thread does");
        assert!(!c.enter(), "another calls: the news is left to it");
        assert!(!c.enter(), "more news, still left");
        assert!(!c.leave(), "news was left: the caller calls again");
        assert!(c.leave(), "nothing new since: it stops");
        assert!(c.enter(), "stopped: the next thread calls");
        assert!(c.leave());
        // Threads entering at once: exactly one calls each time, and every thread's news is
        // seen by a call that starts after it.
        let c = Arc::new(ListenerCaller::default());
        let calls = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let news = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let seen = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let (c, calls, news, seen) = (
                    Arc::clone(&c),
                    Arc::clone(&calls),
                    Arc::clone(&news),
                    Arc::clone(&seen),
                );
                std::thread::spawn(move || {
                    use std::sync::atomic::Ordering::SeqCst;
                    for _ in 0..20_000 {
                        news.fetch_add(1, SeqCst);
                        if !c.enter() {
                            continue;
                        }
                        loop {
                            assert_eq!(calls.fetch_add(1, SeqCst), 0, "one caller at a time");
                            seen.store(news.load(SeqCst), SeqCst);
                            calls.fetch_sub(1, SeqCst);
                            if c.leave() {
                                break;
                            }
                        }
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        let all = news.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(all, 80_000);
        assert_eq!(
            seen.load(std::sync::atomic::Ordering::SeqCst),
            all,
            "the last news was seen by a call"
        );
    }

    #[derive(DdsType, Debug, Clone, PartialEq)]
    #[dds(name = "lanes::Crit")]
    struct Crit {
        seq: u64,
    }

    /// Participant settings with a critical lane (TRANSPORT_PRIORITY above 5), over UDP
    /// alone: these tests are about the kernel path's sockets and threads (the in-process
    /// transport hands datagrams over on the writing thread instead).
    fn critical_settings() -> ParticipantSettings {
        ParticipantSettings {
            threads: ThreadRoles {
                critical_priority: Some(5),
                ..ThreadRoles::default()
            },
            transports: crate::TransportSettings {
                no_intra: true,
                no_shm: true,
                ..crate::TransportSettings::default()
            },
            ..ParticipantSettings::default()
        }
    }

    /// Two participants of `domain` with a critical lane, and each one's topic "crit" of
    /// TRANSPORT_PRIORITY 10 (critical).
    fn critical_participants(
        domain: u32,
    ) -> (
        DomainParticipant,
        DomainParticipant,
        Topic<Crit>,
        Topic<Crit>,
    ) {
        let settings = critical_settings();
        let a = DomainParticipant::with_settings(domain, &settings).expect("a");
        let b = DomainParticipant::with_settings(domain, &settings).expect("b");
        let critical = TopicQos {
            transport_priority: 10,
            ..TopicQos::default()
        };
        let ta = a
            .create_topic_with_qos::<Crit>("crit", critical.clone())
            .expect("topic");
        let tb = b
            .create_topic_with_qos::<Crit>("crit", critical)
            .expect("topic");
        (a, b, ta, tb)
    }

    /// Critical traffic never waits for the main lane: with its lock held (as discovery or
    /// a bulk writer's burst would hold it), a critical writer's samples still reach a
    /// critical reader, both directions of the reliable protocol included.
    #[test]
    fn critical_samples_flow_while_the_main_lane_is_locked() {
        critical_flow_with_the_main_lane_locked(61, &critical_settings(), false);
    }

    /// The same between two participants of the process through the in-process transport:
    /// the writer reaches the reader through the other's critical port, handled in its
    /// critical lane on the writing thread, the acknowledgements through the critical lane's
    /// queue and thread.
    #[test]
    fn in_process_critical_samples_flow_while_the_main_lane_is_locked() {
        let mut settings = critical_settings();
        settings.transports.no_intra = false;
        critical_flow_with_the_main_lane_locked(69, &settings, true);
    }

    /// The same through shared memory (the in-process transport left out): the critical
    /// port of the participant's segment, served by the critical receive thread.
    #[test]
    fn shared_memory_critical_samples_flow_while_the_main_lane_is_locked() {
        let mut settings = critical_settings();
        settings.transports.no_shm = false;
        critical_flow_with_the_main_lane_locked(70, &settings, true);
    }

    /// A writer and a reader of one participant (its critical lane) with the main lane
    /// locked, or with `two`, the reader in a second participant whose main lane is locked
    /// too: the samples reach the reader in order and are acknowledged. In one participant
    /// they are handed over directly; between two, through the transport the settings leave.
    fn critical_flow_with_the_main_lane_locked(
        domain: u32,
        settings: &ParticipantSettings,
        two: bool,
    ) {
        tachyon_transport::testing::require_isolated_network();
        let p = DomainParticipant::with_settings(domain, settings).expect("participant");
        let other = two.then(|| DomainParticipant::with_settings(domain, settings).expect("q"));
        let q = other.as_ref().unwrap_or(&p);
        let qos = TopicQos {
            transport_priority: 10,
            ..TopicQos::default()
        };
        let topic = p
            .create_topic_with_qos::<Crit>("crit", qos.clone())
            .expect("topic");
        let other_topic = other
            .as_ref()
            .map(|q| q.create_topic_with_qos::<Crit>("crit", qos).expect("topic"));
        let reader_topic = other_topic.as_ref().unwrap_or(&topic);
        let w = p
            .create_publisher()
            .expect("publisher")
            .create_datawriter(
                &topic,
                DataWriterQos {
                    transport_priority: 10,
                    ..DataWriterQos::default().reliable().keep_all()
                },
            )
            .expect("writer");
        let sub = q.create_subscriber().expect("subscriber");
        let r = sub
            .create_datareader(reader_topic, DataReaderQos::default().reliable().keep_all())
            .expect("reader");
        let sh = &p.runtime.shared;
        assert_eq!(sh.lane_of(w.guid().entity_id), super::CRITICAL);
        assert_eq!(
            q.runtime.shared.lane_of(r.guid().entity_id),
            super::CRITICAL
        );
        // The builtin-topic readers (vendor-specific ids) stay with discovery.
        for id in [
            super::super::builtin::PARTICIPANT_READER,
            super::super::builtin::PUBLICATION_READER,
        ] {
            assert_eq!(sh.lane_of(id), super::MAIN);
        }
        let deadline = StdInstant::now() + Duration::from_secs(10);
        while w.matched_subscriptions().is_empty() || r.matched_publications().is_empty() {
            assert!(
                StdInstant::now() < deadline,
                "the critical pair never matched"
            );
            std::thread::sleep(Duration::from_millis(5));
        }

        let before = p.statistics();
        let held = sh.lock();
        let held_too = other.as_ref().map(|q| q.runtime.shared.lock());
        let got = critical_flow(&w, &r, deadline);
        drop(held_too);
        drop(held);
        let seqs: Vec<u64> = got.iter().map(|c| c.seq).collect();
        assert_eq!(seqs, (0..20).collect::<Vec<_>>());
        if !two {
            assert_eq!(w.direct_deliveries(), 20, "handed over directly");
            return;
        }
        assert_eq!(w.direct_deliveries(), 0);
        let after = p.statistics();
        let intra = after.intra.datagrams_sent - before.intra.datagrams_sent;
        let shm = after.shm.datagrams_sent - before.shm.datagrams_sent;
        match settings.transports.no_intra {
            true => assert_eq!(intra, 0),
            false => assert!(intra >= 20, "{intra} in-process datagrams for 20 samples"),
        }
        match settings.transports.no_shm || !settings.transports.no_intra {
            true => assert_eq!(shm, 0),
            false => assert!(shm >= 20, "{shm} shared-memory datagrams for 20 samples"),
        }
    }

    /// On a thread of its own (the caller holds the main lane's lock): writes 20 samples with
    /// critical writer `w`, takes them with critical reader `r` and waits until they are
    /// acknowledged; what it took.
    fn critical_flow(
        w: &DataWriter<Crit>,
        r: &DataReader<Crit>,
        deadline: StdInstant,
    ) -> Vec<Crit> {
        std::thread::scope(|s| {
            s.spawn(|| {
                let mut got = Vec::new();
                for seq in 0..20 {
                    w.write(&Crit { seq }).expect("write");
                }
                while got.len() < 20 && StdInstant::now() < deadline {
                    got.extend(
                        r.take(100)
                            .expect("take")
                            .into_iter()
                            .filter_map(|s| s.data),
                    );
                    std::thread::sleep(Duration::from_millis(1));
                }
                w.wait_for_acknowledgments(Duration::from_secs(5))
                    .expect("acknowledged");
                got
            })
            .join()
            .expect("critical thread")
        })
    }

    /// What `r` holds once it holds anything (before `deadline`).
    fn taken_once_some(r: &DataReader<Crit>, deadline: StdInstant) -> Vec<Crit> {
        loop {
            let got: Vec<Crit> = r
                .take(10)
                .expect("take")
                .into_iter()
                .filter_map(|s| s.data)
                .collect();
            if !got.is_empty() {
                return got;
            }
            assert!(
                StdInstant::now() < deadline,
                "timed out waiting for a handed-over sample"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// A forged DATA of writer `writer` (of participant `from`) carrying `value`, for every
    /// matched reader, sent to `to`.
    fn send_forged(from: &DomainParticipant, writer: EntityId, sn: i64, value: &Crit, to: Locator) {
        use tachyon_wire::{
            DataSpec, Header, MessageBuilder, PayloadKind, ProtocolVersion, SequenceNumber,
            VendorId,
        };
        let payload = tachyon_cdr::serialize_to_vec(
            value,
            tachyon_cdr::XcdrVersion::Xcdr1,
            tachyon_cdr::Endianness::Little,
        )
        .expect("encodes");
        let header = Header {
            protocol_version: ProtocolVersion::V2_5,
            vendor_id: VendorId([0x01, 0x99]),
            guid_prefix: from.guid_prefix(),
        };
        let mut buf = vec![0u8; 1024];
        let mut mb = MessageBuilder::new(&mut buf, &header).expect("header fits");
        mb.data(&DataSpec {
            reader_id: EntityId::UNKNOWN,
            writer_id: writer,
            writer_sn: SequenceNumber(sn),
            inline_qos: None,
            kind: PayloadKind::Data,
            payload: &payload,
        })
        .expect("DATA fits");
        let n = mb.finish();
        let to = to.to_socket_addr().expect("a UDP locator");
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").expect("socket");
        socket.send_to(&buf[..n], to).expect("sent");
    }

    /// A datagram that arrives at one lane's socket and concerns the other lane is handed
    /// over through the other lane's inbox, in both directions: the critical receive thread
    /// goes on receiving critical traffic while the main lane's lock is held, and the main
    /// lane's datagram reaches a critical reader.
    #[test]
    fn datagrams_for_the_other_lane_go_through_its_inbox() {
        tachyon_transport::testing::require_isolated_network();
        let (a, b, crit_a, crit_b) = critical_participants(62);
        let bulk_a = a.create_topic::<Crit>("bulk").expect("topic");
        let bulk_b = b.create_topic::<Crit>("bulk").expect("topic");
        let publisher = a.create_publisher().expect("publisher");
        let wc = publisher
            .create_datawriter(
                &crit_a,
                DataWriterQos {
                    transport_priority: 10,
                    ..DataWriterQos::default().reliable().keep_all()
                },
            )
            .expect("writer");
        let wb = publisher
            .create_datawriter(&bulk_a, DataWriterQos::default().best_effort())
            .expect("writer");
        let subscriber = b.create_subscriber().expect("subscriber");
        let rc = subscriber
            .create_datareader(&crit_b, DataReaderQos::default().reliable().keep_all())
            .expect("reader");
        let rb = subscriber
            .create_datareader(&bulk_b, DataReaderQos::default().best_effort().keep_all())
            .expect("reader");
        let deadline = StdInstant::now() + Duration::from_secs(10);
        let wait = |what: &str, done: &mut dyn FnMut() -> bool| {
            while !done() {
                assert!(StdInstant::now() < deadline, "timed out waiting: {what}");
                std::thread::sleep(Duration::from_millis(5));
            }
        };
        wait("both pairs matched", &mut || {
            !wc.matched_subscriptions().is_empty()
                && !rc.matched_publications().is_empty()
                && !wb.matched_subscriptions().is_empty()
                && !rb.matched_publications().is_empty()
        });
        // b's critical socket (its critical reader's locator) and its main one.
        wait("a knows both readers", &mut || {
            a.discovered_subscriptions().len() == 2
        });
        let subs = a.discovered_subscriptions();
        let crit_port = subs
            .iter()
            .find(|s| s.topic_name == "crit")
            .and_then(|s| s.unicast_locators.first().copied())
            .expect("the critical reader's locator");
        let main_port = a
            .discovered_participants()
            .iter()
            .find_map(|p| p.default_unicast_locators.first().copied())
            .expect("b's default locator");
        assert_ne!(crit_port.port, main_port.port);

        // To the critical socket, for the main lane's reader: the critical receive thread
        // hands it to the main lane's inbox and goes on, although the main lane is locked.
        let bulk = Crit { seq: 777 };
        send_forged(&a, wb.guid().entity_id, 1000, &bulk, crit_port);
        let held = b.runtime.shared.lock();
        let got = critical_flow(&wc, &rc, deadline);
        assert_eq!(
            got.len(),
            20,
            "critical samples while the main lane was locked"
        );
        drop(held);
        assert_eq!(taken_once_some(&rb, deadline), vec![bulk]);

        // A flood of them while the main lane stays locked: its inbox holds a bounded number,
        // the rest are dropped and counted; every one is either delivered or counted.
        let sh = &b.runtime.shared;
        let held = sh.lock();
        let flood = 1000u64;
        for i in 0..flood {
            let sn = 2000 + i as i64;
            send_forged(&a, wb.guid().entity_id, sn, &Crit { seq: i }, crit_port);
        }
        // The timers thread takes at most one inbox-full before it waits for the lock.
        let least = flood as usize - 2 * super::INBOX_MAX_DATAGRAMS;
        wait("the inbox overflowing", &mut || {
            sh.inbox_overflow.load(std::sync::atomic::Ordering::Relaxed) as usize >= least
        });
        drop(held);
        let mut flooded = 0u64;
        wait("every flooded datagram delivered or counted", &mut || {
            flooded += rb.take(usize::MAX).expect("take").len() as u64;
            flooded + b.statistics().lane_inbox_overflow == flood
        });
        assert!(b.statistics().refused_by_limits() >= least as u64);

        // To the main socket, for the critical lane's reader: the next sequence number of
        // the critical writer (its 20 were acknowledged), handed to the critical lane's inbox.
        let next = Crit { seq: 555 };
        send_forged(&a, wc.guid().entity_id, 21, &next, main_port);
        assert_eq!(taken_once_some(&rc, deadline), vec![next]);
    }

    /// Records the threads a critical reader's listener is called on.
    struct ThreadNames(std::sync::Mutex<Vec<String>>);

    impl ThreadNames {
        fn note(&self) {
            let name = std::thread::current().name().unwrap_or("?").to_owned();
            self.0.lock().expect("names").push(name);
        }
    }

    impl DataReaderListener<Crit> for ThreadNames {
        fn on_data_available(&self, reader: &DataReader<Crit>) {
            self.note();
            let _ = reader.take(100);
        }
        fn on_subscription_matched(
            &self,
            _: &DataReader<Crit>,
            _: crate::status::SubscriptionMatchedStatus,
        ) {
            self.note();
        }
    }

    /// The critical lane's listeners are called by its own threads only (the critical receive
    /// and timers threads, SCHED_FIFO where configured), never by the main lane's threads at
    /// the default priority: data (received by the critical thread) and matches (made by
    /// discovery in the main lane, handed over through the inbox) alike.
    #[test]
    fn critical_listeners_run_on_critical_threads() {
        tachyon_transport::testing::require_isolated_network();
        let (a, b, ta, tb) = critical_participants(66);
        let names = Arc::new(ThreadNames(std::sync::Mutex::new(Vec::new())));
        let r = b
            .create_subscriber()
            .expect("subscriber")
            .create_datareader(&tb, DataReaderQos::default().reliable().keep_all())
            .expect("reader");
        r.set_listener(
            Some(Arc::clone(&names) as Arc<dyn DataReaderListener<Crit>>),
            StatusMask::DATA_AVAILABLE | StatusMask::SUBSCRIPTION_MATCHED,
        );
        let w = a
            .create_publisher()
            .expect("publisher")
            .create_datawriter(
                &ta,
                DataWriterQos {
                    transport_priority: 10,
                    ..DataWriterQos::default().reliable().keep_all()
                },
            )
            .expect("writer");
        let deadline = StdInstant::now() + Duration::from_secs(10);
        while w.matched_subscriptions().is_empty() {
            assert!(StdInstant::now() < deadline, "never matched");
            std::thread::sleep(Duration::from_millis(5));
        }
        for seq in 0..20 {
            w.write(&Crit { seq }).expect("write");
        }
        w.wait_for_acknowledgments(Duration::from_secs(5))
            .expect("acknowledged");
        while names.0.lock().expect("names").len() < 2 {
            assert!(StdInstant::now() < deadline, "no listener calls");
            std::thread::sleep(Duration::from_millis(5));
        }
        let called = names.0.lock().expect("names").clone();
        assert!(
            called
                .iter()
                .all(|n| n == "tachyon-critical" || n == "tachyon-critical-timers"),
            "{called:?}"
        );
    }
}
