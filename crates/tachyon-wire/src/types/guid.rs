//! GUIDs: the 12-byte participant prefix, the 4-byte entity id and their builtin values.

use crate::bytes::{Codec, Reader, Writer};
use crate::error::{EmitError, WireError};
use std::fmt;

/// The 12-byte GUID prefix shared by all entities of a participant.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct GuidPrefix(pub [u8; 12]);

// GUIDs, prefixes and entity ids key the maps a sample's path looks up several times per
// datagram. Hashed as whole words (one or two hasher steps), not as byte slices (a length
// and the bytes, and a slice hash per field): equal values hash equally either way.

impl std::hash::Hash for GuidPrefix {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let [a, b, c, d, e, f, g, h, i, j, k, l] = self.0;
        state.write_u64(u64::from_ne_bytes([a, b, c, d, e, f, g, h]));
        state.write_u32(u32::from_ne_bytes([i, j, k, l]));
    }
}

impl GuidPrefix {
    /// GUIDPREFIX_UNKNOWN: all zeros.
    pub const UNKNOWN: GuidPrefix = GuidPrefix([0; 12]);
}

/// The kind octet of an [`EntityId`] (its last byte).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct EntityKind(pub u8);

impl EntityKind {
    /// User-defined entity of unknown kind.
    pub const USER_UNKNOWN: EntityKind = EntityKind(0x00);
    /// User-defined writer with key.
    pub const USER_WRITER_WITH_KEY: EntityKind = EntityKind(0x02);
    /// User-defined writer without key.
    pub const USER_WRITER_NO_KEY: EntityKind = EntityKind(0x03);
    /// User-defined reader without key.
    pub const USER_READER_NO_KEY: EntityKind = EntityKind(0x04);
    /// User-defined reader with key.
    pub const USER_READER_WITH_KEY: EntityKind = EntityKind(0x07);
    /// User-defined writer group (publisher).
    pub const USER_WRITER_GROUP: EntityKind = EntityKind(0x08);
    /// User-defined reader group (subscriber).
    pub const USER_READER_GROUP: EntityKind = EntityKind(0x09);
    /// Builtin entity of unknown kind.
    pub const BUILTIN_UNKNOWN: EntityKind = EntityKind(0xc0);
    /// Builtin participant.
    pub const BUILTIN_PARTICIPANT: EntityKind = EntityKind(0xc1);
    /// Builtin writer with key.
    pub const BUILTIN_WRITER_WITH_KEY: EntityKind = EntityKind(0xc2);
    /// Builtin writer without key.
    pub const BUILTIN_WRITER_NO_KEY: EntityKind = EntityKind(0xc3);
    /// Builtin reader without key.
    pub const BUILTIN_READER_NO_KEY: EntityKind = EntityKind(0xc4);
    /// Builtin reader with key.
    pub const BUILTIN_READER_WITH_KEY: EntityKind = EntityKind(0xc7);
    /// Builtin writer group.
    pub const BUILTIN_WRITER_GROUP: EntityKind = EntityKind(0xc8);
    /// Builtin reader group.
    pub const BUILTIN_READER_GROUP: EntityKind = EntityKind(0xc9);

    /// Whether the kind is builtin (top bits `11`).
    #[inline]
    pub const fn is_builtin(self) -> bool {
        self.0 & 0xc0 == 0xc0
    }

    /// Whether the kind is vendor-specific (top bits `01`).
    #[inline]
    pub const fn is_vendor_specific(self) -> bool {
        self.0 & 0xc0 == 0x40
    }

    /// Whether the entity is a writer (with or without key).
    #[inline]
    pub const fn is_writer(self) -> bool {
        matches!(self.0 & 0x3f, 0x02 | 0x03)
    }

    /// Whether the entity is a reader (with or without key).
    #[inline]
    pub const fn is_reader(self) -> bool {
        matches!(self.0 & 0x3f, 0x04 | 0x07)
    }
}

/// The 4-byte entity id: a 3-byte key and an [`EntityKind`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct EntityId(pub [u8; 4]);

impl std::hash::Hash for EntityId {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write_u32(u32::from_ne_bytes(self.0));
    }
}

impl EntityId {
    /// ENTITYID_UNKNOWN.
    pub const UNKNOWN: EntityId = EntityId([0, 0, 0, 0]);
    /// ENTITYID_PARTICIPANT.
    pub const PARTICIPANT: EntityId = EntityId([0, 0, 0x01, 0xc1]);
    /// ENTITYID_SEDP_BUILTIN_TOPICS_ANNOUNCER (topics writer).
    pub const SEDP_TOPICS_WRITER: EntityId = EntityId([0, 0, 0x02, 0xc2]);
    /// ENTITYID_SEDP_BUILTIN_TOPICS_DETECTOR (topics reader).
    pub const SEDP_TOPICS_READER: EntityId = EntityId([0, 0, 0x02, 0xc7]);
    /// ENTITYID_SEDP_BUILTIN_PUBLICATIONS_ANNOUNCER (publications writer).
    pub const SEDP_PUBLICATIONS_WRITER: EntityId = EntityId([0, 0, 0x03, 0xc2]);
    /// ENTITYID_SEDP_BUILTIN_PUBLICATIONS_DETECTOR (publications reader).
    pub const SEDP_PUBLICATIONS_READER: EntityId = EntityId([0, 0, 0x03, 0xc7]);
    /// ENTITYID_SEDP_BUILTIN_SUBSCRIPTIONS_ANNOUNCER (subscriptions writer).
    pub const SEDP_SUBSCRIPTIONS_WRITER: EntityId = EntityId([0, 0, 0x04, 0xc2]);
    /// ENTITYID_SEDP_BUILTIN_SUBSCRIPTIONS_DETECTOR (subscriptions reader).
    pub const SEDP_SUBSCRIPTIONS_READER: EntityId = EntityId([0, 0, 0x04, 0xc7]);
    /// ENTITYID_SPDP_BUILTIN_PARTICIPANT_ANNOUNCER (SPDP writer).
    pub const SPDP_WRITER: EntityId = EntityId([0, 0x01, 0x00, 0xc2]);
    /// ENTITYID_SPDP_BUILTIN_PARTICIPANT_DETECTOR (SPDP reader).
    pub const SPDP_READER: EntityId = EntityId([0, 0x01, 0x00, 0xc7]);
    /// ENTITYID_P2P_BUILTIN_PARTICIPANT_MESSAGE_WRITER.
    pub const PARTICIPANT_MESSAGE_WRITER: EntityId = EntityId([0, 0x02, 0x00, 0xc2]);
    /// ENTITYID_P2P_BUILTIN_PARTICIPANT_MESSAGE_READER.
    pub const PARTICIPANT_MESSAGE_READER: EntityId = EntityId([0, 0x02, 0x00, 0xc7]);
    /// ENTITYID_TL_SVC_REQ_WRITER (XTypes TypeLookup request writer).
    pub const TYPE_LOOKUP_REQUEST_WRITER: EntityId = EntityId([0, 0x03, 0x00, 0xc3]);
    /// ENTITYID_TL_SVC_REQ_READER (XTypes TypeLookup request reader).
    pub const TYPE_LOOKUP_REQUEST_READER: EntityId = EntityId([0, 0x03, 0x00, 0xc4]);
    /// ENTITYID_TL_SVC_REPLY_WRITER (XTypes TypeLookup reply writer).
    pub const TYPE_LOOKUP_REPLY_WRITER: EntityId = EntityId([0, 0x03, 0x01, 0xc3]);
    /// ENTITYID_TL_SVC_REPLY_READER (XTypes TypeLookup reply reader).
    pub const TYPE_LOOKUP_REPLY_READER: EntityId = EntityId([0, 0x03, 0x01, 0xc4]);

    /// An entity id from its 3-byte key and kind.
    #[inline]
    pub const fn new(key: [u8; 3], kind: EntityKind) -> Self {
        EntityId([key[0], key[1], key[2], kind.0])
    }

    /// The 3-byte entity key.
    #[inline]
    pub const fn key(self) -> [u8; 3] {
        [self.0[0], self.0[1], self.0[2]]
    }

    /// The entity kind octet.
    #[inline]
    pub const fn kind(self) -> EntityKind {
        EntityKind(self.0[3])
    }

    /// The id as a big-endian u32 (how it is usually printed).
    #[inline]
    pub const fn to_u32(self) -> u32 {
        u32::from_be_bytes(self.0)
    }

    /// Whether this is one of the builtin SPDP/SEDP writers whose DATA carries a ParameterList.
    #[inline]
    pub fn is_builtin_discovery_writer(self) -> bool {
        self == Self::SPDP_WRITER
            || self == Self::SEDP_PUBLICATIONS_WRITER
            || self == Self::SEDP_SUBSCRIPTIONS_WRITER
            || self == Self::SEDP_TOPICS_WRITER
    }

    /// A short name for builtin ids (`SPDP_WRITER`, ...), `None` for others.
    #[inline]
    pub fn builtin_name(self) -> Option<&'static str> {
        Some(match self {
            Self::UNKNOWN => "UNKNOWN",
            Self::PARTICIPANT => "PARTICIPANT",
            Self::SEDP_TOPICS_WRITER => "SEDP_TOPICS_WRITER",
            Self::SEDP_TOPICS_READER => "SEDP_TOPICS_READER",
            Self::SEDP_PUBLICATIONS_WRITER => "SEDP_PUBLICATIONS_WRITER",
            Self::SEDP_PUBLICATIONS_READER => "SEDP_PUBLICATIONS_READER",
            Self::SEDP_SUBSCRIPTIONS_WRITER => "SEDP_SUBSCRIPTIONS_WRITER",
            Self::SEDP_SUBSCRIPTIONS_READER => "SEDP_SUBSCRIPTIONS_READER",
            Self::SPDP_WRITER => "SPDP_WRITER",
            Self::SPDP_READER => "SPDP_READER",
            Self::PARTICIPANT_MESSAGE_WRITER => "PARTICIPANT_MESSAGE_WRITER",
            Self::PARTICIPANT_MESSAGE_READER => "PARTICIPANT_MESSAGE_READER",
            Self::TYPE_LOOKUP_REQUEST_WRITER => "TYPE_LOOKUP_REQUEST_WRITER",
            Self::TYPE_LOOKUP_REQUEST_READER => "TYPE_LOOKUP_REQUEST_READER",
            Self::TYPE_LOOKUP_REPLY_WRITER => "TYPE_LOOKUP_REPLY_WRITER",
            Self::TYPE_LOOKUP_REPLY_READER => "TYPE_LOOKUP_REPLY_READER",
            _ => return None,
        })
    }
}

/// A full 16-byte GUID: participant prefix plus entity id.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Guid {
    /// The participant's prefix.
    pub prefix: GuidPrefix,
    /// The entity within the participant.
    pub entity_id: EntityId,
}

impl std::hash::Hash for Guid {
    #[inline]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        let mut bytes = [0; 16];
        bytes[..12].copy_from_slice(&self.prefix.0);
        bytes[12..].copy_from_slice(&self.entity_id.0);
        state.write_u128(u128::from_ne_bytes(bytes));
    }
}

impl Guid {
    /// GUID_UNKNOWN.
    pub const UNKNOWN: Guid = Guid {
        prefix: GuidPrefix::UNKNOWN,
        entity_id: EntityId::UNKNOWN,
    };

    /// A GUID from its parts.
    #[inline]
    pub const fn new(prefix: GuidPrefix, entity_id: EntityId) -> Self {
        Guid { prefix, entity_id }
    }
}

impl Codec for GuidPrefix {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(GuidPrefix(r.array()?))
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put(&self.0)
    }
}

impl Codec for EntityId {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(EntityId(r.array()?))
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put(&self.0)
    }
}

impl Codec for Guid {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Guid {
            prefix: r.decode()?,
            entity_id: r.decode()?,
        })
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.encode(&self.prefix)?;
        w.encode(&self.entity_id)
    }
}

impl fmt::Display for GuidPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, chunk) in self.0.chunks(4).enumerate() {
            if i > 0 {
                f.write_str(":")?;
            }
            for b in chunk {
                write!(f, "{b:02x}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for EntityId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "0x{:08x}", self.to_u32())
    }
}

impl fmt::Display for Guid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{:08x}", self.prefix, self.entity_id.to_u32())
    }
}
