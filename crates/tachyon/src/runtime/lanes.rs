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
//!   handled by the lane it arrived at, then by the other (`Participant::take_forward`);
//! - participant-wide operations (statistics, liveliness, shutdown) visit both.
//!
//! Endpoints of a Publisher or Subscriber with coherent or GROUP-ordered access stay in the
//! main lane (their sets span the group's endpoints); so does everything without
//! `threads.critical_priority`, when there is one lane only.

use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::{Condvar, Mutex};

use tachyon_proto::participant::lanes::is_lane_id;
use tachyon_proto::{Event, Instant};
use tachyon_wire::EntityId;

use super::{Shared, State, StateGuard};

/// The main lane: discovery, builtin endpoints, every endpoint that is not critical.
pub(crate) const MAIN: usize = 0;
/// The critical lane (only with `threads.critical_priority`).
pub(crate) const CRITICAL: usize = 1;

/// One lane: its state and what threads wait and call listeners with.
pub(crate) struct Lane {
    pub(super) state: Mutex<State>,
    /// Signalled whenever events of this lane were processed (data, matches,
    /// acknowledgements).
    pub(super) changed: Condvar,
    /// Threads waiting on `changed` (counted under the state lock, so a notifier holding it
    /// skips the wake-up system call when there are none).
    pub(super) changed_waiters: AtomicU64,
    /// Held while this lane's listeners are called: one thread at a time calls them, the
    /// others leave their news to it.
    pub(super) listening: Mutex<super::ListenerScratch>,
    /// A thread found `listening` held and left its news to the holder.
    pub(super) news_left: AtomicBool,
}

impl Lane {
    pub(super) fn new(state: State) -> Lane {
        Lane {
            state: Mutex::new(state),
            changed: Condvar::new(),
            changed_waiters: AtomicU64::new(0),
            listening: Mutex::new(super::ListenerScratch::default()),
            news_left: AtomicBool::new(false),
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
        let input = std::mem::take(&mut *super::lock(&shared.lane_inbox));
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
            super::lock(&shared.lane_inbox).append(input);
            t.unpark();
            return;
        }
        let mut st = shared.lock_lane(CRITICAL);
        st.take_input(shared, now, input);
        // Sent once this (main) lane's lock is released, not under it.
        self.pushed |= std::mem::take(&mut st.pushed);
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
        for e in &input.events {
            self.record(e);
        }
        self.flush(shared, now);
        if !input.events.is_empty() {
            shared.observers.notify();
        }
    }
}

/// What the main lane hands to the critical lane: discovery's commands for its endpoints,
/// the events discovery raised for them, the participants heard from whose writers its
/// readers follow.
#[derive(Default)]
pub(crate) struct Inbox {
    commands: Vec<tachyon_proto::participant::lanes::LaneCommand>,
    events: Vec<Event>,
    activity: Vec<tachyon_wire::GuidPrefix>,
}

impl Inbox {
    fn is_empty(&self) -> bool {
        self.commands.is_empty() && self.events.is_empty() && self.activity.is_empty()
    }

    fn append(&mut self, mut other: Inbox) {
        self.commands.append(&mut other.commands);
        self.events.append(&mut other.events);
        self.activity.append(&mut other.activity);
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant as StdInstant};

    use crate::config::ThreadRoles;
    use crate::prelude::*;
    use crate::qos::TopicQos;
    use crate::ParticipantSettings;

    #[derive(DdsType, Debug, Clone, PartialEq)]
    #[dds(name = "lanes::Crit")]
    struct Crit {
        seq: u64,
    }

    /// Critical traffic never waits for the main lane: with its lock held (as discovery or
    /// a bulk writer's burst would hold it), a critical writer's samples still reach a
    /// critical reader, both directions of the reliable protocol included.
    #[test]
    fn critical_samples_flow_while_the_main_lane_is_locked() {
        tachyon_transport::testing::require_isolated_network();
        let settings = ParticipantSettings {
            threads: ThreadRoles {
                critical_priority: Some(5),
                ..ThreadRoles::default()
            },
            ..ParticipantSettings::default()
        };
        let p = DomainParticipant::with_settings(61, &settings).expect("participant");
        let qos = TopicQos {
            transport_priority: 10,
            ..TopicQos::default()
        };
        let topic = p.create_topic_with_qos::<Crit>("crit", qos).expect("topic");
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
        let sub = p.create_subscriber().expect("subscriber");
        let r = sub
            .create_datareader(&topic, DataReaderQos::default().reliable().keep_all())
            .expect("reader");
        let sh = &p.runtime.shared;
        assert_eq!(sh.lane_of(w.guid().entity_id), super::CRITICAL);
        assert_eq!(sh.lane_of(r.guid().entity_id), super::CRITICAL);
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

        let held = sh.lock();
        let got = std::thread::scope(|s| {
            let t = s.spawn(|| {
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
            });
            let got = t.join().expect("critical thread");
            drop(held);
            got
        });
        let seqs: Vec<u64> = got.iter().map(|c| c.seq).collect();
        assert_eq!(seqs, (0..20).collect::<Vec<_>>());
    }
}
