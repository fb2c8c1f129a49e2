//! What Publishers and Subscribers share: a group's QoS and members, and DDS `set_qos` of a
//! group (PARTITION and GROUP_DATA changes re-announce every member).

use std::sync::Mutex;

use tachyon_proto::qos::{check_partitions, PublisherQos, QosPolicyId, SubscriberQos};
use tachyon_proto::{Instant, Participant};
use tachyon_wire::EntityId;

use crate::error::Error;
use crate::runtime::{lock, Runtime};

/// A publisher's or subscriber's QoS and the endpoints it created (some may be deleted since:
/// their ids are never reused, and they are pruned when found gone).
pub(crate) struct Group<Q> {
    pub(crate) qos: Q,
    pub(crate) members: Vec<EntityId>,
}

/// What [`set_group_qos`] needs of a Publisher's or Subscriber's QoS.
pub(crate) trait GroupQos: Sized {
    fn partition(&self) -> &[String];
    fn group_data(&self) -> &[u8];
    fn immutable_change(&self, new: &Self) -> Option<QosPolicyId>;
}

impl GroupQos for PublisherQos {
    fn partition(&self) -> &[String] {
        &self.partition
    }
    fn group_data(&self) -> &[u8] {
        &self.group_data
    }
    fn immutable_change(&self, new: &Self) -> Option<QosPolicyId> {
        PublisherQos::immutable_change(self, new)
    }
}

impl GroupQos for SubscriberQos {
    fn partition(&self) -> &[String] {
        &self.partition
    }
    fn group_data(&self) -> &[u8] {
        &self.group_data
    }
    fn immutable_change(&self, new: &Self) -> Option<QosPolicyId> {
        SubscriberQos::immutable_change(self, new)
    }
}

/// DDS `set_qos` of a Publisher or Subscriber: refuses an immutable change or an unusable
/// partition with nothing changed; a PARTITION or GROUP_DATA change re-announces every live
/// member through `reannounce(participant, now, member, new QoS)` (`None`: the member is
/// gone, and is pruned), so matching is re-evaluated here and at every remote participant.
pub(crate) fn set_group_qos<Q: GroupQos>(
    runtime: &Runtime,
    state: &Mutex<Group<Q>>,
    qos: Q,
    mut reannounce: impl FnMut(
        &mut Participant,
        Instant,
        EntityId,
        &Q,
    ) -> Option<Result<(), tachyon_proto::Error>>,
) -> Result<(), Error> {
    check_partitions(qos.partition())?;
    let sh = &runtime.shared;
    if sh.stopped() {
        return Err(Error::AlreadyDeleted);
    }
    let mut st = sh.lock();
    let mut g = lock(state);
    if let Some(p) = g.qos.immutable_change(&qos) {
        return Err(Error::ImmutablePolicy(p));
    }
    let now = sh.now();
    let announced = g.qos.partition() != qos.partition() || g.qos.group_data() != qos.group_data();
    g.qos = qos;
    let mut result = Ok(());
    if announced {
        let g = &mut *g;
        let mut live = Vec::with_capacity(g.members.len());
        for &id in &g.members {
            let Some(r) = reannounce(&mut st.participant, now, id, &g.qos) else {
                continue;
            };
            live.push(id);
            if let Err(e) = r {
                result = result.and(Err(e.into()));
            }
        }
        g.members = live;
    }
    drop(g);
    st.flush(sh, now);
    drop(st);
    sh.wake();
    result
}
