//! Typed errors of encoding and decoding, each saying what went wrong and where.

use core::fmt;

/// Why a value could not be encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum EncodeError {
    /// The caller's buffer ended at `capacity` bytes; the encoding needed at least `needed`.
    /// Size the buffer with [`crate::serialized_size`].
    BufferTooSmall {
        /// Bytes needed so far when the buffer ran out.
        needed: usize,
        /// Size of the buffer given.
        capacity: usize,
    },
    /// A string or sequence is longer than the bound declared for it.
    BoundExceeded {
        /// `"string"` or `"sequence"`.
        what: &'static str,
        /// Its length (characters without the terminating NUL, or elements).
        len: usize,
        /// The declared bound.
        bound: u32,
    },
    /// A string contains a NUL character, which CDR cannot carry inside a string.
    NulInString {
        /// Byte position of the NUL in the string.
        at: usize,
    },
    /// An IDL `char` is one byte; this `char` does not fit in one.
    CharOutOfRange(char),
    /// A length does not fit the 32 bits CDR has for it.
    LengthOverflow {
        /// The length that was too large.
        len: usize,
    },
    /// A dynamic value does not fit the type it is written as (`tachyon_xtypes::dynamic`):
    /// what is wrong.
    TypeMismatch(&'static str),
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EncodeError::BufferTooSmall { needed, capacity } => write!(
                f,
                "buffer too small: {capacity} bytes given, at least {needed} needed"
            ),
            EncodeError::BoundExceeded { what, len, bound } => {
                write!(f, "{what} of length {len} exceeds its bound of {bound}")
            }
            EncodeError::NulInString { at } => {
                write!(f, "string contains a NUL character at byte {at}")
            }
            EncodeError::CharOutOfRange(c) => write!(
                f,
                "character {c:?} (U+{:04X}) does not fit an IDL char (one byte)",
                *c as u32
            ),
            EncodeError::LengthOverflow { len } => {
                write!(f, "length {len} does not fit in 32 bits")
            }
            EncodeError::TypeMismatch(what) => write!(f, "the value does not fit its type: {what}"),
        }
    }
}

impl std::error::Error for EncodeError {}

/// Why bytes could not be decoded: what went wrong, at which offset of the payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodeError {
    /// Offset in the decoded bytes (counting the encapsulation header, when there is one) where
    /// the problem was found.
    pub offset: usize,
    /// What went wrong.
    pub kind: DecodeErrorKind,
}

impl DecodeError {
    /// An error of `kind` found at `offset`.
    pub const fn new(offset: usize, kind: DecodeErrorKind) -> DecodeError {
        DecodeError { offset, kind }
    }
}

/// What went wrong while decoding.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// The input ends (or the enclosing DHEADER/member ends) before the value does.
    Truncated {
        /// Bytes the value needs.
        needed: usize,
        /// Bytes left.
        remaining: usize,
    },
    /// A length prefix announces more elements or bytes than can possibly follow.
    LengthExceedsInput {
        /// `"string"`, `"sequence"`, `"DHEADER"`, `"member"`.
        what: &'static str,
        /// The announced length.
        len: u64,
        /// Bytes left.
        remaining: usize,
    },
    /// A string or sequence is longer than the bound declared for it.
    BoundExceeded {
        /// `"string"` or `"sequence"`.
        what: &'static str,
        /// The announced length.
        len: u32,
        /// The declared bound.
        bound: u32,
    },
    /// A boolean octet other than 0 or 1.
    InvalidBool(u8),
    /// A string whose last octet is not NUL, or that contains a NUL before its end.
    StringNotTerminated,
    /// A string that is not valid UTF-8 (Rust strings must be).
    InvalidUtf8,
    /// An enumeration value that names no enumerator.
    UnknownEnumValue {
        /// The enumerated type.
        type_name: &'static str,
        /// The value found.
        value: i64,
    },
    /// A union discriminator that selects no member.
    UnknownDiscriminator {
        /// The union type.
        type_name: &'static str,
        /// The discriminator found.
        value: i64,
    },
    /// The encapsulation identifier is not one of the CDR representations.
    UnknownEncapsulation(u16),
    /// A member flagged must-understand whose id this type does not know.
    MustUnderstand {
        /// The member id.
        member_id: u32,
    },
    /// A non-optional member absent from a mutable or appendable encoding, with no default.
    MissingMember {
        /// The member id.
        member_id: u32,
    },
    /// An EMHEADER length code or parameter header that cannot be valid here.
    InvalidMemberHeader {
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The input nests deeper than the decoder allows (a guard against stack exhaustion).
    DepthLimitExceeded {
        /// The limit.
        limit: u16,
    },
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "at offset {}: ", self.offset)?;
        match &self.kind {
            DecodeErrorKind::Truncated { needed, remaining } => {
                write!(f, "truncated: {needed} bytes needed, {remaining} remain")
            }
            DecodeErrorKind::LengthExceedsInput {
                what,
                len,
                remaining,
            } => write!(
                f,
                "{what} length {len} exceeds the {remaining} bytes that remain"
            ),
            DecodeErrorKind::BoundExceeded { what, len, bound } => {
                write!(f, "{what} length {len} exceeds its bound of {bound}")
            }
            DecodeErrorKind::InvalidBool(b) => write!(f, "invalid boolean octet {b:#04x}"),
            DecodeErrorKind::StringNotTerminated => {
                f.write_str("string not terminated by a single NUL")
            }
            DecodeErrorKind::InvalidUtf8 => f.write_str("string is not valid UTF-8"),
            DecodeErrorKind::UnknownEnumValue { type_name, value } => {
                write!(f, "value {value} names no enumerator of {type_name}")
            }
            DecodeErrorKind::UnknownDiscriminator { type_name, value } => {
                write!(f, "unknown union discriminator {value} for {type_name}")
            }
            DecodeErrorKind::UnknownEncapsulation(id) => {
                write!(f, "unknown encapsulation identifier {id:#06x}")
            }
            DecodeErrorKind::MustUnderstand { member_id } => write!(
                f,
                "member id {member_id:#x} is flagged must-understand but unknown to this type"
            ),
            DecodeErrorKind::MissingMember { member_id } => {
                write!(f, "member id {member_id:#x} is missing and has no default")
            }
            DecodeErrorKind::InvalidMemberHeader { reason } => {
                write!(f, "invalid member header: {reason}")
            }
            DecodeErrorKind::DepthLimitExceeded { limit } => {
                write!(f, "nesting deeper than {limit} levels")
            }
        }
    }
}

impl std::error::Error for DecodeError {}

/// Why [`crate::transcode`] could not re-serialize a sample in another representation.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TranscodeError {
    /// The payload does not decode as the type.
    Decode(DecodeError),
    /// The decoded value does not encode in the other representation.
    Encode(EncodeError),
}

impl fmt::Display for TranscodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TranscodeError::Decode(e) => write!(f, "the sample does not decode: {e}"),
            TranscodeError::Encode(e) => write!(f, "the sample does not encode: {e}"),
        }
    }
}

impl std::error::Error for TranscodeError {}

impl From<DecodeError> for TranscodeError {
    fn from(e: DecodeError) -> TranscodeError {
        TranscodeError::Decode(e)
    }
}

impl From<EncodeError> for TranscodeError {
    fn from(e: EncodeError) -> TranscodeError {
        TranscodeError::Encode(e)
    }
}
