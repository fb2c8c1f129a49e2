//! Optional members (`Option<T>`, IDL `@optional`) of final and appendable types.
//!
//! XCDR2 writes a boolean "present" octet before the value. XCDR1 wraps the member in a
//! parameter header carrying its member id, with length 0 when absent (XTypes 1.3, 7.4.1.2.1).
//! Mutable types simply leave absent members out; the derive handles that case itself.

use crate::error::{DecodeError, EncodeError};
use crate::reader::Reader;
use crate::traits::{Decode, Encode};
use crate::writer::Writer;

/// Writes an optional member of a final or appendable type.
pub fn encode_optional<T: Encode>(
    w: &mut Writer<'_>,
    value: &Option<T>,
    member_id: u32,
    must_understand: bool,
    bound: Option<u32>,
) -> Result<(), EncodeError> {
    if w.is_xcdr2() {
        w.write_bool(value.is_some())?;
        if let Some(v) = value {
            encode_maybe_bounded(v, w, bound)?;
        }
        return Ok(());
    }
    let mark = w.begin_member(member_id, must_understand, 4)?;
    if let Some(v) = value {
        encode_maybe_bounded(v, w, bound)?;
    }
    w.end_member(mark)
}

/// Reads an optional member of a final or appendable type.
pub fn decode_optional<'de, T: Decode<'de>>(
    r: &mut Reader<'de>,
    member_id: u32,
    bound: Option<u32>,
) -> Result<Option<T>, DecodeError> {
    if r.is_xcdr2() {
        return if r.read_bool()? {
            decode_maybe_bounded(r, bound).map(Some)
        } else {
            Ok(None)
        };
    }
    match r.begin_optional1(member_id)? {
        None => Ok(None),
        Some(region) => {
            let v = decode_maybe_bounded(r, bound);
            r.end_region(region);
            v.map(Some)
        }
    }
}

/// Writes `v`, checking `bound` when there is one.
#[inline]
pub fn encode_maybe_bounded<T: Encode + ?Sized>(
    v: &T,
    w: &mut Writer<'_>,
    bound: Option<u32>,
) -> Result<(), EncodeError> {
    match bound {
        Some(b) => v.encode_bounded(w, b),
        None => v.encode(w),
    }
}

/// Reads a `T`, checking `bound` when there is one.
#[inline]
pub fn decode_maybe_bounded<'de, T: Decode<'de>>(
    r: &mut Reader<'de>,
    bound: Option<u32>,
) -> Result<T, DecodeError> {
    match bound {
        Some(b) => T::decode_bounded(r, b),
        None => T::decode(r),
    }
}
