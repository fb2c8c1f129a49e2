//! XCDR serialization for DDS: the bytes a sample takes on the wire.
//!
//! This crate encodes and decodes values in XCDR1 and XCDR2 (OMG DDS-XTypes 1.3, section 7.4),
//! both byte orders, for final, appendable and mutable types, and computes instance key hashes.
//! It does no I/O and holds no state: encoding writes into a buffer the caller owns and never
//! allocates; decoding borrows strings and octet sequences from the input where the type allows.
//!
//! The usual way in is `#[derive(DdsType)]`:
//!
//! ```
//! use tachyon_cdr::{DdsType, XcdrVersion, Endianness};
//!
//! #[derive(DdsType, Debug, PartialEq)]
//! #[dds(name = "ShapeType")]
//! struct ShapeType {
//!     #[dds(key, bound = 128)]
//!     color: String,
//!     x: i32,
//!     y: i32,
//!     shapesize: i32,
//! }
//!
//! let shape = ShapeType { color: "RED".into(), x: 1, y: 2, shapesize: 30 };
//! let mut buf = [0u8; 64];
//! let n = tachyon_cdr::serialize(&shape, XcdrVersion::Xcdr2, Endianness::Little, &mut buf)?;
//! let back: ShapeType = tachyon_cdr::deserialize(&buf[..n])?;
//! assert_eq!(back, shape);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Mapping of IDL to Rust: `boolean` → `bool`, `char` → `char` (one octet, Latin-1),
//! `octet`/`uint8` → `u8`, `int8` → `i8`, `short` → `i16`, `unsigned short` → `u16`, `long` →
//! `i32`, `unsigned long` → `u32`, `long long` → `i64`, `unsigned long long` → `u64`, `float` →
//! `f32`, `double` → `f64`, `string` → `String` or `&str`, `sequence<T>` → `Vec<T>` (or
//! `&[u8]` for octets), `T a[N][M]` → `[[T; M]; N]`, `@optional T` → `Option<T>`, `enum` → a
//! field-less Rust enum, `union` → a Rust enum whose variants carry `#[dds(case = …)]`. Bounds
//! (`string<N>`, `sequence<T, N>`) are `#[dds(bound = N)]` on the member.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// Lets the derive's `::tachyon_cdr::…` paths resolve inside this crate too.
extern crate self as tachyon_cdr;

mod encoding;
mod error;
pub mod fields;
#[doc(hidden)]
pub mod fuzzing;
mod impls;
mod keyhash;
pub mod member_id;
mod optional;
mod reader;
pub mod share;
mod small;
pub mod traits;
pub mod typedesc;
mod writer;

pub use encoding::{Encapsulation, EncapsulationHeader, Endianness, Extensibility, XcdrVersion};
pub use error::{DecodeError, DecodeErrorKind, EncodeError, TranscodeError};
pub use fields::{FieldKind, FieldValue, Fields};
pub use keyhash::{key_hash, key_hash_with_version, key_max_size, KeyHash, KEY_HASH_VERSION};
pub use optional::{decode_maybe_bounded, decode_optional, encode_maybe_bounded, encode_optional};
pub use reader::{MemberHeader, Reader, Region, MAX_DEPTH};
pub use share::{SharedSample, Sharing};
pub use traits::{DdsType, Decode, Discriminator, Encode};
pub use typedesc::{
    AliasDesc, BitFlag, BitmaskDesc, CaseDesc, Describe, EnumDesc, EnumLiteral, MemberDesc,
    Primitive, StructDesc, TypeDesc, UnionDesc,
};
pub use writer::{LengthMark, Writer};

#[cfg(feature = "derive")]
pub use tachyon_derive::DdsType;

/// Serializes `value` with its encapsulation header into `buf`; returns the bytes written.
///
/// The payload is padded to a multiple of 4 and the padding count recorded in the header's
/// options, as XTypes 1.3 (7.6.3.1.2) asks.
#[inline]
pub fn serialize<T: DdsType + ?Sized>(
    value: &T,
    version: XcdrVersion,
    endian: Endianness,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    encapsulate::<T>(version, endian, buf, |w| value.encode(w))
}

/// Serializes `value` with its encapsulation header into a new vector.
pub fn serialize_to_vec<T: DdsType + ?Sized>(
    value: &T,
    version: XcdrVersion,
    endian: Endianness,
) -> Result<Vec<u8>, EncodeError> {
    let mut buf = vec![0u8; serialized_size(value, version)?];
    let n = serialize(value, version, endian, &mut buf)?;
    buf.truncate(n);
    Ok(buf)
}

/// The number of bytes [`serialize`] writes for `value`, header and padding included.
#[inline]
pub fn serialized_size<T: DdsType + ?Sized>(
    value: &T,
    version: XcdrVersion,
) -> Result<usize, EncodeError> {
    let mut w = Writer::counter(version, Endianness::NATIVE);
    value.encode(&mut w)?;
    Ok(4 + w.position().div_ceil(4) * 4)
}

/// Deserializes a value from `bytes`, which start with the encapsulation header.
///
/// The header decides the XCDR version and byte order. Strings and octet sequences of
/// borrowing types point into `bytes`.
#[inline]
pub fn deserialize<'de, T: DdsType + Decode<'de>>(bytes: &'de [u8]) -> Result<T, DecodeError> {
    let header = EncapsulationHeader::parse(bytes)?;
    T::decode(&mut body_reader::<T>(bytes, header))
}

/// A reader of the body of a serialized sample whose header is `header`. For an appendable
/// type in XCDR1, which has no DHEADER, the padding the header announces is left out: the
/// end of the body is then where the writer's members end, and members of the reader's type
/// past them take their default values (a writer of an older type version), as Cyclone DDS
/// 11 reads them.
#[inline]
fn body_reader<'de, T: DdsType>(bytes: &'de [u8], header: EncapsulationHeader) -> Reader<'de> {
    let enc = header.encapsulation;
    let mut body = &bytes[4..];
    if T::EXTENSIBILITY == Extensibility::Appendable && enc.version() == XcdrVersion::Xcdr1 {
        body = &body[..body.len().saturating_sub(header.padding())];
    }
    Reader::new(body, enc.version(), enc.endianness(), 4)
}

/// [`deserialize`] into `value`, reusing what it owns ([`Decode::decode_into`]): a
/// subscriber that takes into the same samples again and again allocates nothing for an
/// octet sequence that fits. After an error `value` holds a valid but unspecified value.
pub fn deserialize_into<'de, T: DdsType + Decode<'de>>(
    bytes: &'de [u8],
    value: &mut T,
) -> Result<(), DecodeError> {
    let header = EncapsulationHeader::parse(bytes)?;
    value.decode_into(&mut body_reader::<T>(bytes, header))
}

/// Re-serializes a serialized sample (encapsulation header included) in XCDR `version`, in
/// its own byte order: what a writer sends a reader that reads another representation than
/// the writer writes. Errors when the payload does not decode.
pub fn transcode<T>(payload: &[u8], version: XcdrVersion) -> Result<Vec<u8>, TranscodeError>
where
    T: DdsType + for<'de> Decode<'de>,
{
    let header = EncapsulationHeader::parse(payload)?;
    let value: T = deserialize(payload)?;
    Ok(serialize_to_vec(
        &value,
        version,
        header.encapsulation.endianness(),
    )?)
}

/// Deserializes a key-only payload (what peers send in DATA submessages that dispose or
/// unregister an instance, and what [`serialize_key_payload`] writes) in either form
/// ([`KeyForm`]): the key holder, framed as the type frames its members (XTypes 1.3
/// 7.2.2.4.7; Cyclone DDS 11), or the bare key members (Cyclone DDS 0.10). The framed form is
/// tried first and taken when it decodes and accounts for the whole payload (at most the
/// trailing padding left), then the bare one. The key members are read, the others take their
/// default values, so the result serves for [`key_hash`] and key lookups.
pub fn deserialize_key<'de, T: DdsType + Decode<'de>>(bytes: &'de [u8]) -> Result<T, DecodeError> {
    let header = EncapsulationHeader::parse(bytes)?;
    let enc = header.encapsulation;
    let reader = || Reader::new(&bytes[4..], enc.version(), enc.endianness(), 4);
    if !KeyForm::differ::<T>(enc.version()) {
        return T::decode_key(&mut reader());
    }
    let whole = |r: &Reader<'_>| r.remaining() < 4;
    let mut r = reader();
    let framed = T::decode_key_holder(&mut r);
    if framed.is_ok() && whole(&r) {
        return framed;
    }
    let mut r = reader();
    match T::decode_key(&mut r) {
        Ok(v) if whole(&r) || framed.is_err() => Ok(v),
        Ok(v) => framed.or(Ok(v)),
        Err(e) => framed.map_err(|_| e),
    }
}

/// The two forms of a key-only payload that implementations send.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyForm {
    /// The key holder of XTypes 1.3 7.2.2.4.7: the key members framed as the type frames its
    /// members (a DHEADER for an appendable or mutable struct in XCDR2, a member header each
    /// and the sentinel for a mutable one). What Cyclone DDS 11 writes and requires.
    Framed,
    /// The key members alone, without DHEADER or member headers: what Cyclone DDS 0.10
    /// writes and requires.
    Bare,
}

impl KeyForm {
    /// Whether the two forms of `T`'s key-only payload differ in XCDR `version`: for an
    /// appendable or mutable type in XCDR2, a mutable one in XCDR1 (nested types aside:
    /// a `@final` struct with an appendable key member differs too, and is treated as if not).
    pub fn differ<T: DdsType + ?Sized>(version: XcdrVersion) -> bool {
        match T::EXTENSIBILITY {
            Extensibility::Final => false,
            Extensibility::Appendable => version == XcdrVersion::Xcdr2,
            Extensibility::Mutable => true,
        }
    }
}

/// Serializes only the key members of `value` (its key-only form), without a header.
pub fn serialize_key<T: DdsType + ?Sized>(
    value: &T,
    version: XcdrVersion,
    endian: Endianness,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    let mut w = Writer::new(buf, version, endian);
    value.encode_key(&mut w)?;
    Ok(w.position())
}

/// Serializes the key-only payload of `value` with an encapsulation header, as carried by
/// DATA submessages that dispose or unregister an instance: the header names the type's
/// representation, the body holds the key members in `form`.
pub fn serialize_key_payload<T: DdsType + ?Sized>(
    value: &T,
    version: XcdrVersion,
    endian: Endianness,
    form: KeyForm,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    match form {
        KeyForm::Framed => encapsulate::<T>(version, endian, buf, |w| value.encode_key_holder(w)),
        KeyForm::Bare => encapsulate::<T>(version, endian, buf, |w| value.encode_key(w)),
    }
}

/// Writes the encapsulation header of `T`, the body `body` writes, and the trailing padding.
#[inline(always)]
fn encapsulate<T: DdsType + ?Sized>(
    version: XcdrVersion,
    endian: Endianness,
    buf: &mut [u8],
    body: impl FnOnce(&mut Writer<'_>) -> Result<(), EncodeError>,
) -> Result<usize, EncodeError> {
    let capacity = buf.len();
    let Some((head, rest)) = buf.split_first_chunk_mut::<4>() else {
        return Err(EncodeError::BufferTooSmall {
            needed: 4,
            capacity,
        });
    };
    let mut w = Writer::new(rest, version, endian);
    body(&mut w).map_err(|e| shift(e, 4))?;
    let len = w.position();
    // Trailing padding to a multiple of 4 (both versions align at least to 4).
    w.align(4).map_err(|e| shift(e, 4))?;
    let header = EncapsulationHeader {
        encapsulation: Encapsulation::for_type(T::EXTENSIBILITY, version, endian),
        options: (w.position() - len) as u16,
    };
    *head = header.to_bytes();
    Ok(4 + w.position())
}

fn shift(e: EncodeError, by: usize) -> EncodeError {
    match e {
        EncodeError::BufferTooSmall { needed, capacity } => EncodeError::BufferTooSmall {
            needed: needed + by,
            capacity: capacity + by,
        },
        other => other,
    }
}
