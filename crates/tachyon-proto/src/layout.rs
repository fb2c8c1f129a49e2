//! Sizes of the submessages an endpoint writes, so it can decide before writing whether a piece
//! fits the datagram (the builder is atomic per submessage, but INFO_TS + DATA must go together).

use tachyon_wire::{InlineQos, SequenceNumberSet, HEADER_LEN};

use crate::history::{CacheChange, ChangeKind};
use tachyon_wire::PayloadKind;

/// RTPS header.
pub(crate) const HEADER: usize = HEADER_LEN;
/// INFO_DST submessage.
pub(crate) const INFO_DST: usize = 16;
/// INFO_TS submessage with a timestamp.
pub(crate) const INFO_TS: usize = 12;
/// HEARTBEAT submessage.
pub(crate) const HEARTBEAT: usize = 32;
/// HEARTBEAT_FRAG submessage.
pub(crate) const HEARTBEAT_FRAG: usize = 28;

const fn pad4(n: usize) -> usize {
    n.div_ceil(4) * 4
}

/// A DATA submessage with `qos` bytes of inline QoS and `payload` bytes of payload.
pub(crate) const fn data(qos: usize, payload: usize) -> usize {
    4 + pad4(20 + qos + payload)
}

/// A DATA_FRAG submessage carrying `bytes` of fragments.
pub(crate) const fn data_frag(qos: usize, bytes: usize) -> usize {
    4 + pad4(32 + qos + bytes)
}

/// A GAP submessage with this gap list.
pub(crate) const fn gap(list: &SequenceNumberSet) -> usize {
    4 + 16 + list.wire_len()
}

/// An ACKNACK submessage with this state.
pub(crate) const fn acknack(state: &SequenceNumberSet) -> usize {
    4 + 8 + state.wire_len() + 4
}

/// How a DATA carries its sample.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ByRef<'a> {
    /// In the datagram.
    No,
    /// By reference to readers of this process ([`crate::local`]).
    Local,
    /// By reference to a shared-memory slot ([`crate::shared`]); the reference.
    Shared(&'a [u8]),
}

impl ByRef<'_> {
    /// The sample is not in the datagram.
    pub(crate) fn is_ref(self) -> bool {
        self != ByRef::No
    }

    fn put(self, q: &mut InlineQos) {
        match self {
            ByRef::No => {}
            ByRef::Local => q.raw(crate::local::PID_TACHYON_LOCAL_SAMPLE, &[0; 4]),
            ByRef::Shared(r) => q.raw(crate::shared::PID_TACHYON_SHM_SAMPLE, r),
        }
    }
}

/// [`inline_qos_of`], and with `identity` (the writer's entity id) the sample's identity in
/// eProsima's parameter 0x800f (`WriterConfig::sample_identity`: discovery writers, whose
/// samples are never coherent nor handed by reference). The identity's writer is the one of
/// that entity id in the participant the instance (an entity's GUID) belongs to: the writer
/// itself for its own entities, the original writer for what a discovery server relays.
pub(crate) fn inline_qos_with(
    keyed: bool,
    identity: Option<tachyon_wire::EntityId>,
    change: &CacheChange,
    by_reference: ByRef<'_>,
) -> Option<InlineQos> {
    let Some(entity) = identity else {
        return inline_qos_of(keyed, change, by_reference);
    };
    let mut prefix = [0u8; 12];
    prefix.copy_from_slice(&change.instance.0[..12]);
    let writer = tachyon_wire::Guid::new(tachyon_wire::GuidPrefix(prefix), entity);
    let mut q = InlineQos::open(keyed.then_some(change.instance.0), status_info(change));
    q.raw(
        crate::discovery::PID_FASTDDS_SAMPLE_IDENTITY,
        &crate::discovery::sample_identity(&writer, change.sn),
    );
    q.close();
    Some(q)
}

/// The inline QoS a change carries: the key hash for keyed topics, the status info for
/// dispose/unregister, the coherent-set parameters of a change in a set, and with
/// `by_reference` the parameter saying the sample is handed by reference
/// ([`crate::local`], [`crate::shared`]).
pub(crate) fn inline_qos_of(
    keyed: bool,
    change: &CacheChange,
    by_reference: ByRef<'_>,
) -> Option<InlineQos> {
    use crate::history::coherent::{
        PID_COHERENT_SET, PID_GROUP_COHERENT_SET, PID_GROUP_SEQ_NUM, PID_TACHYON_COHERENT_GROUP,
    };
    use crate::history::Coherence;
    match change.coherent {
        None => {}
        Some(Coherence::Member { set, group }) => {
            let mut q = InlineQos::open(keyed.then_some(change.instance.0), status_info(change));
            q.sequence_number(PID_COHERENT_SET, set);
            if let Some(g) = group {
                q.sequence_number(PID_GROUP_COHERENT_SET, g.set);
                q.sequence_number(PID_GROUP_SEQ_NUM, g.sn);
            }
            by_reference.put(&mut q);
            q.close();
            return Some(q);
        }
        Some(Coherence::End {
            set,
            group_set,
            publisher,
        }) => {
            let mut q = InlineQos::open(None, None);
            q.sequence_number(PID_COHERENT_SET, tachyon_wire::SequenceNumber::UNKNOWN);
            if let Some(g) = group_set {
                q.sequence_number(PID_GROUP_COHERENT_SET, g);
            }
            q.raw(PID_TACHYON_COHERENT_GROUP, &publisher.encode(set));
            q.close();
            return Some(q);
        }
    }
    let status = status_info(change);
    if by_reference.is_ref() {
        let mut q = InlineQos::open(keyed.then_some(change.instance.0), status);
        by_reference.put(&mut q);
        q.close();
        return Some(q);
    }
    (keyed || status.is_some()).then(|| InlineQos::new(keyed.then_some(change.instance.0), status))
}

/// PID_STATUS_INFO of a dispose or unregister.
fn status_info(change: &CacheChange) -> Option<u32> {
    match change.kind {
        ChangeKind::Alive => None,
        ChangeKind::NotAliveDisposed => Some(InlineQos::DISPOSED),
        ChangeKind::NotAliveUnregistered => Some(InlineQos::UNREGISTERED),
        ChangeKind::NotAliveDisposedUnregistered => {
            Some(InlineQos::DISPOSED | InlineQos::UNREGISTERED)
        }
    }
}

/// What the payload of a change is on the wire.
pub(crate) fn payload_kind(change: &CacheChange) -> PayloadKind {
    if change.is_coherent_end() {
        return PayloadKind::None;
    }
    match change.kind {
        ChangeKind::Alive => PayloadKind::Data,
        _ if change.payload.is_empty() => PayloadKind::None,
        _ => PayloadKind::Key,
    }
}
