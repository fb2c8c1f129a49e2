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

/// The inline QoS of a change that carries at most its key hash (alive, by value, in no
/// coherent set, no sample identity): `Some(key hash)` for a keyed topic, `Some(None)` for
/// none, written without building the list ([`tachyon_wire::MessageBuilder::info_ts_and_data`]);
/// `None` for any other change ([`inline_qos_with`]).
pub(crate) fn plain_inline_qos<'c>(
    keyed: bool,
    identity: Option<tachyon_wire::EntityId>,
    change: &'c CacheChange,
    by_reference: ByRef<'_>,
) -> Option<Option<&'c [u8; 16]>> {
    let plain = identity.is_none()
        && change.coherent.is_none()
        && change.kind == ChangeKind::Alive
        && !by_reference.is_ref();
    plain.then_some(keyed.then_some(&change.instance.0))
}

/// Octets of the inline QoS [`plain_inline_qos`] describes.
pub(crate) const fn plain_qos_len(key_hash: Option<&[u8; 16]>) -> usize {
    match key_hash {
        Some(_) => 4 + 16 + 4,
        None => 0,
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::Coherence;
    use tachyon_cdr::KeyHash;
    use tachyon_wire::{EntityId, SequenceNumber, Time};

    fn change(kind: ChangeKind, coherent: Option<Coherence>) -> CacheChange {
        CacheChange {
            sn: SequenceNumber(7),
            kind,
            instance: KeyHash([9; 16]),
            source_timestamp: Time::ZERO,
            expiry: None,
            payload: vec![0, 1, 0, 0, 5, 6, 7, 8].into(),
            coherent,
        }
    }

    /// Wherever the plain description applies, it is the list `inline_qos_with` builds: the
    /// key hash alone (keyed) or no list at all; everywhere else it does not apply.
    #[test]
    fn plain_inline_qos_is_the_general_list_where_it_applies() {
        let kinds = [
            ChangeKind::Alive,
            ChangeKind::NotAliveDisposed,
            ChangeKind::NotAliveUnregistered,
            ChangeKind::NotAliveDisposedUnregistered,
        ];
        let sets = [
            None,
            Some(Coherence::Member {
                set: SequenceNumber(3),
                group: None,
            }),
        ];
        let reference = [0u8; 8];
        let refs = [ByRef::No, ByRef::Local, ByRef::Shared(&reference)];
        let mut plain_seen = 0;
        for kind in kinds {
            for set in sets {
                for by_ref in refs {
                    for keyed in [false, true] {
                        for identity in [None, Some(EntityId([0, 0, 1, 2]))] {
                            let c = change(kind, set);
                            let general = inline_qos_with(keyed, identity, &c, by_ref);
                            let applies = kind == ChangeKind::Alive
                                && set.is_none()
                                && by_ref == ByRef::No
                                && identity.is_none();
                            match plain_inline_qos(keyed, identity, &c, by_ref) {
                                Some(key_hash) => {
                                    plain_seen += 1;
                                    assert!(applies);
                                    let expected = key_hash.map(|k| InlineQos::new(Some(*k), None));
                                    assert_eq!(
                                        general.as_ref().map(InlineQos::as_bytes),
                                        expected.as_ref().map(InlineQos::as_bytes)
                                    );
                                    assert_eq!(
                                        plain_qos_len(key_hash),
                                        general.map_or(0, |q| q.as_bytes().len())
                                    );
                                    assert_eq!(payload_kind(&c), PayloadKind::Data);
                                }
                                None => assert!(!applies),
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(plain_seen, 2);
    }
}
