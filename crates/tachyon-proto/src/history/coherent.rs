//! Coherent-set membership of a writer's changes (RTPS 2.5 8.7.6, DDS PRESENTATION
//! `coherent_access`), as the writer's cache keeps it and the wire carries it.
//!
//! Every sample written between a publisher's `begin_coherent_changes` and
//! `end_coherent_changes` is a [`Coherence::Member`] of its writer's set, named by the
//! sequence number of the set's first sample (PID_COHERENT_SET). The set ends with an end
//! marker, a [`Coherence::End`] change: a DATA without payload whose PID_COHERENT_SET is
//! SEQUENCENUMBER_UNKNOWN. With GROUP access scope the samples also carry the publisher's
//! group sequence numbers (PID_GROUP_COHERENT_SET, PID_GROUP_SEQ_NUM), and every end marker
//! carries [`PID_TACHYON_COHERENT_GROUP`] so Tachyon subscribers can assemble the parts of
//! one publisher-wide set from all its writers.

use tachyon_wire::{EntityId, SequenceNumber};

/// PID_COHERENT_SET (inline QoS): the sequence number of the first sample of the set.
pub const PID_COHERENT_SET: u16 = 0x0056;
/// PID_GROUP_COHERENT_SET (inline QoS): the group sequence number of the first sample of
/// the publisher's set.
pub const PID_GROUP_COHERENT_SET: u16 = 0x0063;
/// PID_GROUP_SEQ_NUM (inline QoS): the sample's group sequence number.
pub const PID_GROUP_SEQ_NUM: u16 = 0x0064;
/// Tachyon's vendor-specific inline QoS of an end marker (from vendor id 0x01.0xf0, Tachyon, only; other
/// vendors ignore it), 24 octets, little-endian like the list: the publisher's group entity
/// id (4 octets), the publisher's set number (SequenceNumber_t, increasing by one per set),
/// how many writers of the publisher end the set (u32), and the sequence number of this
/// writer's first sample in the set (SequenceNumber_t, 0 when it wrote none).
pub const PID_TACHYON_COHERENT_GROUP: u16 = 0x8001;

/// Which coherent set a change belongs to, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Coherence {
    /// A sample of the writer's set whose first sample has sequence number `set`.
    Member {
        /// Sequence number of the set's first sample (PID_COHERENT_SET).
        set: SequenceNumber,
        /// GROUP scope: the publisher's group numbering.
        group: Option<GroupMember>,
    },
    /// The end marker of the writer's part of a publisher's set.
    End {
        /// Sequence number of the first sample of the set it ends; `None` when the writer
        /// wrote nothing in it (the marker only tells subscribers its part is empty).
        set: Option<SequenceNumber>,
        /// GROUP scope: the group sequence number of the publisher set's first sample.
        group_set: Option<SequenceNumber>,
        /// The publisher-wide set this marker ends (PID_TACHYON_COHERENT_GROUP).
        publisher: PublisherSet,
    },
}

impl Coherence {
    /// Whether this is an end marker (no instance, no payload).
    pub fn is_end(&self) -> bool {
        matches!(self, Coherence::End { .. })
    }
}

/// The group sequence numbers of a sample in a GROUP-scope set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GroupMember {
    /// Group sequence number of the publisher set's first sample (PID_GROUP_COHERENT_SET).
    pub set: SequenceNumber,
    /// This sample's group sequence number (PID_GROUP_SEQ_NUM).
    pub sn: SequenceNumber,
}

/// A publisher-wide coherent set: which publisher, which of its sets, how many writers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PublisherSet {
    /// The publisher's entity id (GROUP_ENTITYID in SEDP).
    pub group: EntityId,
    /// The publisher's set number (1, 2, …).
    pub number: SequenceNumber,
    /// Writers of the publisher that end the set (each sends an end marker).
    pub writers: u32,
}

impl PublisherSet {
    /// The value of [`PID_TACHYON_COHERENT_GROUP`] for a writer whose part of the set
    /// starts at `part` (`None`: it wrote nothing).
    pub fn encode(&self, part: Option<SequenceNumber>) -> [u8; 24] {
        let mut v = [0u8; 24];
        v[..4].copy_from_slice(&self.group.0);
        v[4..12].copy_from_slice(&encode_sequence_number(self.number));
        v[12..16].copy_from_slice(&self.writers.to_le_bytes());
        v[16..].copy_from_slice(&encode_sequence_number(
            part.unwrap_or(SequenceNumber::ZERO),
        ));
        v
    }

    /// Decodes a [`PID_TACHYON_COHERENT_GROUP`] value (`big_endian`: the list's byte
    /// order) into the set and the writer's part; `None` when it is too short or a number
    /// is out of range.
    pub fn decode(v: &[u8], big_endian: bool) -> Option<(PublisherSet, Option<SequenceNumber>)> {
        let group = EntityId(v.get(..4)?.try_into().ok()?);
        let number = decode_sequence_number(v.get(4..12)?, big_endian)?;
        let writers = read_u32(v.get(12..16)?, big_endian)?;
        let part = decode_sequence_number(v.get(16..24)?, big_endian)?;
        if number.0 <= 0 || part.0 < 0 {
            return None;
        }
        let set = PublisherSet {
            group,
            number,
            writers,
        };
        Some((set, (part.0 > 0).then_some(part)))
    }
}

/// A SequenceNumber_t value, little-endian.
fn encode_sequence_number(sn: SequenceNumber) -> [u8; 8] {
    let mut v = [0u8; 8];
    v[..4].copy_from_slice(&((sn.0 >> 32) as i32).to_le_bytes());
    v[4..].copy_from_slice(&(sn.0 as u32).to_le_bytes());
    v
}

/// A SequenceNumber_t parameter value in the list's byte order.
pub fn decode_sequence_number(v: &[u8], big_endian: bool) -> Option<SequenceNumber> {
    let high = read_u32(v.get(..4)?, big_endian)? as i32;
    let low = read_u32(v.get(4..8)?, big_endian)?;
    Some(SequenceNumber((i64::from(high) << 32) | i64::from(low)))
}

fn read_u32(b: &[u8], big_endian: bool) -> Option<u32> {
    let a: [u8; 4] = b.try_into().ok()?;
    Some(if big_endian {
        u32::from_be_bytes(a)
    } else {
        u32::from_le_bytes(a)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tachyon_wire::EntityKind;

    #[test]
    fn publisher_set_round_trips_and_refuses_garbage() {
        let p = PublisherSet {
            group: EntityId::new([0, 0, 7], EntityKind::USER_WRITER_GROUP),
            number: SequenceNumber((3 << 32) + 9),
            writers: 3,
        };
        let part = Some(SequenceNumber(12));
        assert_eq!(
            PublisherSet::decode(&p.encode(part), false),
            Some((p, part))
        );
        assert_eq!(
            PublisherSet::decode(&p.encode(None), false),
            Some((p, None))
        );
        assert_eq!(PublisherSet::decode(&p.encode(part)[..23], false), None);
        let mut zero = p.encode(part);
        zero[4..12].fill(0);
        assert_eq!(PublisherSet::decode(&zero, false), None);
    }

    #[test]
    fn sequence_numbers_in_either_order() {
        let le = [0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0];
        assert_eq!(
            decode_sequence_number(&le, false),
            Some(SequenceNumber::UNKNOWN)
        );
        let be = [0, 0, 0, 1, 0, 0, 0, 2];
        assert_eq!(
            decode_sequence_number(&be, true),
            Some(SequenceNumber((1 << 32) + 2))
        );
        assert_eq!(decode_sequence_number(&be[..7], true), None);
    }
}
