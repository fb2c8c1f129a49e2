//! Folding protocol events into the DCPS statuses of each endpoint, with the changed flags
//! a StatusCondition triggers on and the `*_change` counts reset when a status is read.

use tachyon_proto::maps::HashMap;

use tachyon_proto::qos::QosPolicyId;
use tachyon_proto::Event;
use tachyon_wire::EntityId;

use crate::status::{
    DeadlineMissedStatus, IncompatibleQosStatus, InconsistentTopicStatus, LivelinessChangedStatus,
    LivelinessLostStatus, PublicationMatchedStatus, SampleLostStatus, SampleRejectedStatus,
    StatusKind, StatusMask, SubscriptionMatchedStatus,
};

/// Every status of one writer, reader or topic, and which changed since last read (groups
/// and the participant have only the changed flags).
#[derive(Clone, Debug, Default)]
pub(crate) struct EndpointStatuses {
    pub publication_matched: PublicationMatchedStatus,
    pub subscription_matched: SubscriptionMatchedStatus,
    /// Offered (writers) or requested (readers).
    pub incompatible_qos: IncompatibleQosStatus,
    pub liveliness_changed: LivelinessChangedStatus,
    pub liveliness_lost: LivelinessLostStatus,
    /// Offered (writers) or requested (readers).
    pub deadline_missed: DeadlineMissedStatus,
    pub sample_lost: SampleLostStatus,
    pub sample_rejected: SampleRejectedStatus,
    /// Topics only.
    pub inconsistent_topic: InconsistentTopicStatus,
    /// The statuses changed since they were last read (DDS StatusChangedFlag).
    pub changed: StatusMask,
    /// Of a user reader: what its DATA_AVAILABLE touches besides its flag, found with it in
    /// one look-up (`State::data_available`, `State::data_read`).
    pub data: super::DataWiring,
}

/// The statuses of every local endpoint, group (Subscriber, Publisher), topic and of the
/// participant.
#[derive(Debug, Default)]
pub(crate) struct Statuses {
    map: HashMap<EntityId, EndpointStatuses>,
}

/// Reads a status and resets its change counts and changed flag (`get_*_status`).
macro_rules! getter {
    ($(#[$doc:meta])* $name:ident -> $ty:ty, $field:ident, $kinds:expr, |$s:ident| $reset:expr) => {
        $(#[$doc])*
        pub(crate) fn $name(&mut self, id: EntityId) -> $ty {
            let Some(e) = self.map.get_mut(&id) else {
                return <$ty>::default();
            };
            e.changed = e.changed & !($kinds);
            let out = e.$field.clone();
            let $s = &mut e.$field;
            $reset;
            out
        }
    };
}

impl Statuses {
    /// Registers an endpoint (so its statuses exist before anything happens to it).
    pub(crate) fn insert(&mut self, id: EntityId) {
        self.map.entry(id).or_default();
    }

    /// The statuses of `id`, when registered.
    pub(crate) fn get_mut(&mut self, id: EntityId) -> Option<&mut EndpointStatuses> {
        self.map.get_mut(&id)
    }

    /// The statuses of `id`, registered now if they were not.
    pub(crate) fn get_or_insert(&mut self, id: EntityId) -> &mut EndpointStatuses {
        self.map.entry(id).or_default()
    }

    /// Forgets a deleted endpoint.
    pub(crate) fn remove(&mut self, id: EntityId) {
        self.map.remove(&id);
    }

    /// The statuses of `id` changed since last read (DDS `get_status_changes`).
    pub(crate) fn changes(&self, id: EntityId) -> StatusMask {
        self.map.get(&id).map_or(StatusMask::NONE, |e| e.changed)
    }

    /// Marks `kinds` changed (a status without counts: DATA_ON_READERS).
    pub(crate) fn mark(&mut self, id: EntityId, kinds: StatusMask) {
        if let Some(e) = self.map.get_mut(&id) {
            e.changed |= kinds;
        }
    }

    /// One more inconsistent remote endpoint for topic `id`.
    pub(crate) fn inconsistent_topic_found(&mut self, id: EntityId) {
        if let Some(e) = self.map.get_mut(&id) {
            let s = &mut e.inconsistent_topic;
            s.total_count = s.total_count.saturating_add(1);
            s.total_count_change = s.total_count_change.saturating_add(1);
            e.changed |= StatusMask::INCONSISTENT_TOPIC;
        }
    }

    /// DATA_AVAILABLE is reset by any read or take (and by `on_data_available`).
    pub(crate) fn clear(&mut self, id: EntityId, kinds: StatusMask) {
        if let Some(e) = self.map.get_mut(&id) {
            e.changed = e.changed & !kinds;
        }
    }

    getter!(publication_matched -> PublicationMatchedStatus, publication_matched,
    StatusMask::PUBLICATION_MATCHED, |s| {
        s.total_count_change = 0;
        s.current_count_change = 0;
    });
    getter!(subscription_matched -> SubscriptionMatchedStatus, subscription_matched,
    StatusMask::SUBSCRIPTION_MATCHED, |s| {
        s.total_count_change = 0;
        s.current_count_change = 0;
    });
    getter!(incompatible_qos -> IncompatibleQosStatus, incompatible_qos,
        StatusMask::OFFERED_INCOMPATIBLE_QOS | StatusMask::REQUESTED_INCOMPATIBLE_QOS,
        |s| s.total_count_change = 0);
    getter!(liveliness_changed -> LivelinessChangedStatus, liveliness_changed,
    StatusMask::LIVELINESS_CHANGED, |s| {
        s.alive_count_change = 0;
        s.not_alive_count_change = 0;
    });
    getter!(liveliness_lost -> LivelinessLostStatus, liveliness_lost,
        StatusMask::LIVELINESS_LOST, |s| s.total_count_change = 0);
    getter!(deadline_missed -> DeadlineMissedStatus, deadline_missed,
        StatusMask::OFFERED_DEADLINE_MISSED | StatusMask::REQUESTED_DEADLINE_MISSED,
        |s| s.total_count_change = 0);
    getter!(sample_lost -> SampleLostStatus, sample_lost,
        StatusMask::SAMPLE_LOST, |s| s.total_count_change = 0);
    getter!(sample_rejected -> SampleRejectedStatus, sample_rejected,
        StatusMask::SAMPLE_REJECTED, |s| s.total_count_change = 0);
    getter!(inconsistent_topic -> InconsistentTopicStatus, inconsistent_topic,
        StatusMask::INCONSISTENT_TOPIC, |s| s.total_count_change = 0);

    /// Folds one event into the statuses; returns the endpoint and the status that changed.
    pub(crate) fn apply(&mut self, e: &Event) -> Option<(EntityId, StatusKind)> {
        let (id, kind) = match e {
            Event::DataAvailable { reader } => (*reader, StatusMask::DATA_AVAILABLE),
            Event::PublicationMatched {
                writer,
                remote,
                matched,
                current_count,
            } => {
                let s = &mut self.entry(*writer)?.publication_matched;
                let current = count(*current_count);
                s.total_count_change = s.total_count_change.saturating_add(u32::from(*matched));
                s.total_count = s.total_count.saturating_add(u32::from(*matched));
                s.current_count_change = s
                    .current_count_change
                    .saturating_add(delta(s.current_count, current));
                s.current_count = current;
                s.last_subscription_handle = Some(*remote);
                (*writer, StatusMask::PUBLICATION_MATCHED)
            }
            Event::SubscriptionMatched {
                reader,
                remote,
                matched,
                current_count,
            } => {
                let s = &mut self.entry(*reader)?.subscription_matched;
                let current = count(*current_count);
                s.total_count_change = s.total_count_change.saturating_add(u32::from(*matched));
                s.total_count = s.total_count.saturating_add(u32::from(*matched));
                s.current_count_change = s
                    .current_count_change
                    .saturating_add(delta(s.current_count, current));
                s.current_count = current;
                s.last_publication_handle = Some(*remote);
                (*reader, StatusMask::SUBSCRIPTION_MATCHED)
            }
            Event::OfferedIncompatibleQos {
                writer, policies, ..
            } => {
                incompatible(&mut self.entry(*writer)?.incompatible_qos, policies);
                (*writer, StatusMask::OFFERED_INCOMPATIBLE_QOS)
            }
            Event::RequestedIncompatibleQos {
                reader, policies, ..
            } => {
                incompatible(&mut self.entry(*reader)?.incompatible_qos, policies);
                (*reader, StatusMask::REQUESTED_INCOMPATIBLE_QOS)
            }
            Event::LivelinessChanged {
                reader,
                writer,
                alive_count,
                not_alive_count,
                ..
            } => {
                let s = &mut self.entry(*reader)?.liveliness_changed;
                let (alive, not_alive) = (count(*alive_count), count(*not_alive_count));
                s.alive_count_change = s
                    .alive_count_change
                    .saturating_add(delta(s.alive_count, alive));
                s.not_alive_count_change = s
                    .not_alive_count_change
                    .saturating_add(delta(s.not_alive_count, not_alive));
                s.alive_count = alive;
                s.not_alive_count = not_alive;
                s.last_publication_handle = Some(*writer);
                (*reader, StatusMask::LIVELINESS_CHANGED)
            }
            Event::LivelinessLost { writer } => {
                let s = &mut self.entry(*writer)?.liveliness_lost;
                s.total_count = s.total_count.saturating_add(1);
                s.total_count_change = s.total_count_change.saturating_add(1);
                (*writer, StatusMask::LIVELINESS_LOST)
            }
            Event::OfferedDeadlineMissed { writer, instance } => {
                deadline(&mut self.entry(*writer)?.deadline_missed, instance);
                (*writer, StatusMask::OFFERED_DEADLINE_MISSED)
            }
            Event::RequestedDeadlineMissed { reader, instance } => {
                deadline(&mut self.entry(*reader)?.deadline_missed, instance);
                (*reader, StatusMask::REQUESTED_DEADLINE_MISSED)
            }
            Event::SampleLost { reader, count, .. } => {
                let s = &mut self.entry(*reader)?.sample_lost;
                s.total_count = s.total_count.saturating_add(*count);
                s.total_count_change = s.total_count_change.saturating_add(*count);
                (*reader, StatusMask::SAMPLE_LOST)
            }
            Event::SampleRejected {
                reader,
                reason,
                instance,
            } => {
                let s = &mut self.entry(*reader)?.sample_rejected;
                s.total_count = s.total_count.saturating_add(1);
                s.total_count_change = s.total_count_change.saturating_add(1);
                s.last_reason = Some(*reason);
                s.last_instance_handle = Some(*instance);
                (*reader, StatusMask::SAMPLE_REJECTED)
            }
            _ => return None,
        };
        let e = self.entry(id)?;
        e.changed |= kind;
        Some((id, kind))
    }

    /// The statuses of a registered endpoint; events of endpoints already deleted (or not
    /// yet registered) are dropped.
    fn entry(&mut self, id: EntityId) -> Option<&mut EndpointStatuses> {
        self.map.get_mut(&id)
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// `to - from` as a change count.
fn delta(from: u32, to: u32) -> i32 {
    let d = i64::from(to) - i64::from(from);
    i32::try_from(d).unwrap_or(if d < 0 { i32::MIN } else { i32::MAX })
}

fn incompatible(s: &mut IncompatibleQosStatus, policies: &[QosPolicyId]) {
    s.total_count = s.total_count.saturating_add(1);
    s.total_count_change = s.total_count_change.saturating_add(1);
    s.last_policy_id = policies.first().copied();
    for p in policies {
        match s.policies.iter_mut().find(|(q, _)| q == p) {
            Some((_, n)) => *n = n.saturating_add(1),
            None => s.policies.push((*p, 1)),
        }
    }
}

fn deadline(s: &mut DeadlineMissedStatus, instance: &tachyon_cdr::KeyHash) {
    s.total_count = s.total_count.saturating_add(1);
    s.total_count_change = s.total_count_change.saturating_add(1);
    s.last_instance_handle = Some(*instance);
}

#[cfg(test)]
mod tests {
    use super::*;
    use tachyon_cdr::KeyHash;
    use tachyon_proto::history::RejectReason;
    use tachyon_wire::{EntityKind, Guid, GuidPrefix};

    fn reader() -> EntityId {
        EntityId::new([0, 0, 7], EntityKind::USER_READER_WITH_KEY)
    }

    fn remote(n: u8) -> Guid {
        Guid::new(
            GuidPrefix([n; 12]),
            EntityId::new([0, 0, 1], EntityKind::USER_WRITER_WITH_KEY),
        )
    }

    fn matched(n: u8, matched: bool, current_count: usize) -> Event {
        Event::SubscriptionMatched {
            reader: reader(),
            remote: remote(n),
            matched,
            current_count,
        }
    }

    #[test]
    fn change_counts_accumulate_until_read() {
        let mut s = Statuses::default();
        // Events of an endpoint not registered (deleted, or not yet created) are dropped.
        assert_eq!(s.apply(&matched(1, true, 1)), None);
        s.insert(reader());
        let kind = Some((reader(), StatusMask::SUBSCRIPTION_MATCHED));
        assert_eq!(s.apply(&matched(1, true, 1)), kind);
        assert_eq!(s.apply(&matched(2, true, 2)), kind);
        assert_eq!(s.apply(&matched(1, false, 1)), kind);
        assert_eq!(s.changes(reader()), StatusMask::SUBSCRIPTION_MATCHED);
        let st = s.subscription_matched(reader());
        assert_eq!((st.total_count, st.total_count_change), (2, 2));
        assert_eq!((st.current_count, st.current_count_change), (1, 1));
        assert_eq!(st.last_publication_handle, Some(remote(1)));
        assert_eq!(s.changes(reader()), StatusMask::NONE);
        s.apply(&matched(2, false, 0));
        let st = s.subscription_matched(reader());
        assert_eq!((st.total_count, st.total_count_change), (2, 0));
        assert_eq!((st.current_count, st.current_count_change), (0, -1));
    }

    #[test]
    fn every_reader_status_is_folded() {
        let mut s = Statuses::default();
        s.insert(reader());
        let k = KeyHash([3; 16]);
        for alive in [true, false] {
            s.apply(&Event::LivelinessChanged {
                reader: reader(),
                writer: remote(1),
                alive,
                alive_count: usize::from(alive),
                not_alive_count: usize::from(!alive),
            });
        }
        s.apply(&Event::RequestedDeadlineMissed {
            reader: reader(),
            instance: k,
        });
        s.apply(&Event::SampleLost {
            reader: reader(),
            writer: remote(1),
            count: 5,
        });
        s.apply(&Event::SampleRejected {
            reader: reader(),
            reason: RejectReason::SamplesPerInstanceLimit,
            instance: k,
        });
        s.apply(&Event::DataAvailable { reader: reader() });
        let want = StatusMask::LIVELINESS_CHANGED
            | StatusMask::REQUESTED_DEADLINE_MISSED
            | StatusMask::SAMPLE_LOST
            | StatusMask::SAMPLE_REJECTED
            | StatusMask::DATA_AVAILABLE;
        assert_eq!(s.changes(reader()), want);

        let l = s.liveliness_changed(reader());
        assert_eq!((l.alive_count, l.alive_count_change), (0, 0));
        assert_eq!((l.not_alive_count, l.not_alive_count_change), (1, 1));
        let d = s.deadline_missed(reader());
        assert_eq!((d.total_count, d.total_count_change), (1, 1));
        assert_eq!(d.last_instance_handle, Some(k));
        let lost = s.sample_lost(reader());
        assert_eq!((lost.total_count, lost.total_count_change), (5, 5));
        let r = s.sample_rejected(reader());
        assert_eq!((r.total_count, r.total_count_change), (1, 1));
        assert_eq!(r.last_reason, Some(RejectReason::SamplesPerInstanceLimit));
        assert_eq!(r.last_instance_handle, Some(k));
        assert_eq!(s.changes(reader()), StatusMask::DATA_AVAILABLE);
        s.clear(reader(), StatusMask::DATA_AVAILABLE);
        assert_eq!(s.changes(reader()), StatusMask::NONE);
        assert_eq!(s.sample_rejected(reader()).total_count_change, 0);
        s.remove(reader());
        assert_eq!(s.sample_lost(reader()), SampleLostStatus::default());
    }
}
