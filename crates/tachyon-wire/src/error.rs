//! Error types: one enum per concern (message parsing, parameter lists, emitting).

use thiserror::Error;

/// Why an RTPS message or submessage could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum WireError {
    /// Fewer bytes were available than the element needs.
    #[error("{what} truncated at offset {offset}: needed {needed} bytes, {available} available")]
    Truncated {
        /// Element being parsed.
        what: &'static str,
        /// Offset (from the start of the parsed buffer) where the element starts.
        offset: usize,
        /// Bytes the element needs.
        needed: usize,
        /// Bytes that were left.
        available: usize,
    },
    /// The message does not start with `RTPS`.
    #[error("not an RTPS message: magic {found:02x?}")]
    BadMagic {
        /// The first four bytes found.
        found: [u8; 4],
    },
    /// A submessage's octetsToNextHeader points past the end of the message.
    #[error(
        "submessage 0x{id:02x} at offset {offset}: octetsToNextHeader {octets} exceeds the {available} bytes left"
    )]
    BadSubmessageLength {
        /// Submessage id.
        id: u8,
        /// Offset of the submessage header.
        offset: usize,
        /// The octetsToNextHeader value.
        octets: u16,
        /// Bytes left after the submessage header.
        available: usize,
    },
    /// A SequenceNumberSet or FragmentNumberSet declares more than 256 bits.
    #[error("{what} at offset {offset}: numBits {num_bits} exceeds 256")]
    NumBitsTooLarge {
        /// Which set.
        what: &'static str,
        /// Offset of the set.
        offset: usize,
        /// The numBits value.
        num_bits: u32,
    },
    /// DATA / DATA_FRAG octetsToInlineQos is smaller than the fixed fields it must skip.
    #[error("{what} at offset {offset}: octetsToInlineQos {value} is below the minimum {minimum}")]
    BadOctetsToInlineQos {
        /// Which submessage.
        what: &'static str,
        /// Offset of the submessage body.
        offset: usize,
        /// The octetsToInlineQos value.
        value: u16,
        /// The smallest legal value.
        minimum: u16,
    },
    /// DATA has both the D (data) and K (key) flags set, which the spec declares invalid.
    #[error("DATA at offset {offset}: both D and K flags set")]
    DataAndKeyFlags {
        /// Offset of the submessage body.
        offset: usize,
    },
    /// The inline QoS parameter list of a DATA / DATA_FRAG is malformed.
    #[error("{what} inline QoS at offset {offset}: {source}")]
    InlineQos {
        /// Which submessage.
        what: &'static str,
        /// Offset of the inline QoS.
        offset: usize,
        /// The parameter list error (offsets relative to the inline QoS).
        #[source]
        source: ParameterError,
    },
}

/// Why a ParameterList (inline QoS or an SPDP/SEDP payload) could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum ParameterError {
    /// A parameter header or value runs past the end of the buffer.
    #[error(
        "parameter truncated at offset {offset}: needed {needed} bytes, {available} available"
    )]
    Truncated {
        /// Offset of the parameter (header or value) in the list.
        offset: usize,
        /// Bytes needed.
        needed: usize,
        /// Bytes left.
        available: usize,
    },
    /// The list ended exactly at a parameter boundary without a PID_SENTINEL.
    #[error("parameter list ends at offset {offset} without PID_SENTINEL")]
    MissingSentinel {
        /// Offset where the sentinel was expected.
        offset: usize,
    },
    /// A parameter length is not a multiple of 4.
    #[error("parameter 0x{pid:04x} at offset {offset}: length {length} is not a multiple of 4")]
    UnalignedLength {
        /// Parameter id.
        pid: u16,
        /// The length field.
        length: u16,
        /// Offset of the parameter header.
        offset: usize,
    },
    /// A serialized payload's encapsulation is not PL_CDR_BE / PL_CDR_LE.
    #[error("encapsulation 0x{encapsulation:04x} is not a parameter list (PL_CDR_BE/PL_CDR_LE)")]
    NotParameterList {
        /// The encapsulation identifier found.
        encapsulation: u16,
    },
    /// The serialized payload is shorter than its 4-byte encapsulation header.
    #[error("serialized payload of {available} bytes is shorter than its encapsulation header")]
    NoEncapsulation {
        /// Bytes available.
        available: usize,
    },
}

/// Why an element could not be emitted.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum EmitError {
    /// The output buffer is smaller than `buffer_len()`.
    #[error("buffer too small: needed {needed} bytes, {available} available")]
    BufferTooSmall {
        /// Bytes needed.
        needed: usize,
        /// Bytes available.
        available: usize,
    },
    /// A submessage body exceeds 65535 bytes and is not marked as extending to the end.
    #[error("submessage 0x{id:02x} body of {length} bytes does not fit octetsToNextHeader")]
    SubmessageTooLong {
        /// Submessage id.
        id: u8,
        /// Body length.
        length: usize,
    },
    /// A parameter value exceeds 65535 bytes.
    #[error("parameter 0x{pid:04x} value of {length} bytes does not fit its length field")]
    ParameterTooLong {
        /// Parameter id.
        pid: u16,
        /// Value length.
        length: usize,
    },
    /// A submessage other than the last one is marked `extends_to_end`, or has an empty body
    /// (which octetsToNextHeader can only express as 0, "up to the end of the message").
    #[error("submessage #{index} extends to the end of the message but is not the last one")]
    ExtendsToEndNotLast {
        /// Index of the offending submessage.
        index: usize,
    },
    /// A SequenceNumberSet / FragmentNumberSet has more than 256 bits.
    #[error("{what}: numBits {num_bits} exceeds 256")]
    NumBitsTooLarge {
        /// Which set.
        what: &'static str,
        /// The numBits value.
        num_bits: u32,
    },
}
