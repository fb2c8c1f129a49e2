//! Folding protocol events into the DCPS statuses of each endpoint.

use std::collections::HashMap;

use tachyon_proto::qos::QosPolicyId;
use tachyon_proto::Event;
use tachyon_wire::EntityId;

use crate::status::{EndpointStatus, IncompatibleQosStatus};

/// The statuses of every local endpoint.
#[derive(Debug, Default)]
pub(crate) struct Statuses {
    map: HashMap<EntityId, EndpointStatus>,
}

impl Statuses {
    /// The statuses of one endpoint (all zero if nothing happened yet).
    pub(crate) fn get(&self, id: EntityId) -> EndpointStatus {
        self.map.get(&id).cloned().unwrap_or_default()
    }

    /// Forgets a deleted endpoint.
    pub(crate) fn remove(&mut self, id: EntityId) {
        self.map.remove(&id);
    }

    pub(crate) fn apply(&mut self, e: &Event) {
        match e {
            Event::PublicationMatched {
                writer,
                remote,
                matched,
                current_count,
            } => {
                let s = &mut self.entry(*writer).publication_matched;
                s.total_count += u32::from(*matched);
                s.current_count = u32::try_from(*current_count).unwrap_or(u32::MAX);
                s.last_subscription_handle = Some(*remote);
            }
            Event::SubscriptionMatched {
                reader,
                remote,
                matched,
                current_count,
            } => {
                let s = &mut self.entry(*reader).subscription_matched;
                s.total_count += u32::from(*matched);
                s.current_count = u32::try_from(*current_count).unwrap_or(u32::MAX);
                s.last_publication_handle = Some(*remote);
            }
            Event::OfferedIncompatibleQos {
                writer, policies, ..
            } => incompatible(&mut self.entry(*writer).incompatible_qos, policies),
            Event::RequestedIncompatibleQos {
                reader, policies, ..
            } => incompatible(&mut self.entry(*reader).incompatible_qos, policies),
            Event::LivelinessChanged {
                reader,
                writer,
                alive_count,
                not_alive_count,
                ..
            } => {
                let s = &mut self.entry(*reader).liveliness_changed;
                s.alive_count = u32::try_from(*alive_count).unwrap_or(u32::MAX);
                s.not_alive_count = u32::try_from(*not_alive_count).unwrap_or(u32::MAX);
                s.last_publication_handle = Some(*writer);
            }
            Event::LivelinessLost { writer } => {
                self.entry(*writer).liveliness_lost.total_count += 1;
            }
            Event::OfferedDeadlineMissed { writer, .. } => {
                self.entry(*writer).deadline_missed.total_count += 1;
            }
            Event::RequestedDeadlineMissed { reader, .. } => {
                self.entry(*reader).deadline_missed.total_count += 1;
            }
            Event::SampleLost { reader, count, .. } => {
                self.entry(*reader).sample_lost.total_count += count;
            }
            Event::SampleRejected { reader, .. } => {
                self.entry(*reader).sample_rejected.total_count += 1;
            }
            _ => {}
        }
    }

    fn entry(&mut self, id: EntityId) -> &mut EndpointStatus {
        self.map.entry(id).or_default()
    }
}

fn incompatible(s: &mut IncompatibleQosStatus, policies: &[QosPolicyId]) {
    s.total_count += 1;
    s.last_policy_id = policies.first().copied();
    for p in policies {
        match s.policies.iter_mut().find(|(q, _)| q == p) {
            Some((_, n)) => *n += 1,
            None => s.policies.push((*p, 1)),
        }
    }
}
