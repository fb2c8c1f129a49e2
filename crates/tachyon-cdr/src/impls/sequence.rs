//! IDL `sequence<T>` and `sequence<T, N>`: `Vec<T>`, `[T]`, and `&[u8]` borrowed from the input;
//! plus the forwarding impls for references and boxes.

use crate::encoding::XcdrVersion;
use crate::error::{DecodeError, EncodeError};
use crate::reader::Reader;
use crate::traits::{Decode, Encode};
use crate::writer::Writer;

/// Above this bound a bounded sequence key is treated as unbounded when sizing keys.
const KEY_BOUND_WALK_LIMIT: u32 = 4096;

#[inline]
fn encode_seq<T: Encode>(
    items: &[T],
    w: &mut Writer<'_>,
    bound: Option<u32>,
) -> Result<(), EncodeError> {
    if let Some(bound) = bound {
        if items.len() > bound as usize {
            return Err(EncodeError::BoundExceeded {
                what: "sequence",
                len: items.len(),
                bound,
            });
        }
    }
    let dheader = if w.is_xcdr2() && !T::PRIMITIVE {
        Some(w.begin_dheader()?)
    } else {
        None
    };
    w.write_len(items.len())?;
    T::encode_slice(items, w)?;
    if let Some(mark) = dheader {
        w.end_dheader(mark)?;
    }
    Ok(())
}

#[inline]
fn decode_seq<'de, T: Decode<'de>>(
    r: &mut Reader<'de>,
    bound: Option<u32>,
) -> Result<Vec<T>, DecodeError> {
    if r.is_xcdr2() && !T::PRIMITIVE {
        let region = r.begin_delimited()?;
        let n = r.read_count("sequence", T::MIN_SIZE, bound)?;
        let v = T::decode_vec(n, r)?;
        r.end_region(region);
        Ok(v)
    } else {
        let n = r.read_count("sequence", T::MIN_SIZE, bound)?;
        T::decode_vec(n, r)
    }
}

fn seq_key_max_end<T: Encode>(
    start: usize,
    version: XcdrVersion,
    bound: Option<u32>,
) -> Option<usize> {
    let bound = bound.filter(|&b| b <= KEY_BOUND_WALK_LIMIT)?;
    let mut pos = start.div_ceil(4) * 4 + 4;
    if version == XcdrVersion::Xcdr2 && !T::PRIMITIVE {
        pos += 4;
    }
    for _ in 0..bound {
        pos = T::key_max_end(pos, version, None)?;
    }
    Some(pos)
}

/// Length code of a sequence member: see [`Encode::LENGTH_CODE`].
const fn seq_length_code<T: Encode>() -> u8 {
    if !T::PRIMITIVE {
        return 5;
    }
    match T::FIXED_SIZE {
        Some(1) => 5,
        Some(4) => 6,
        Some(8) => 7,
        _ => 4,
    }
}

impl<T: Encode> Encode for [T] {
    const LENGTH_CODE: u8 = seq_length_code::<T>();
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        encode_seq(self, w, None)
    }
    #[inline]
    fn encode_bounded(&self, w: &mut Writer<'_>, bound: u32) -> Result<(), EncodeError> {
        encode_seq(self, w, Some(bound))
    }
    fn key_max_end(start: usize, version: XcdrVersion, bound: Option<u32>) -> Option<usize> {
        seq_key_max_end::<T>(start, version, bound)
    }
}

impl<T: Encode> Encode for Vec<T> {
    const LENGTH_CODE: u8 = seq_length_code::<T>();
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        encode_seq(self, w, None)
    }
    #[inline]
    fn encode_bounded(&self, w: &mut Writer<'_>, bound: u32) -> Result<(), EncodeError> {
        encode_seq(self, w, Some(bound))
    }
    fn key_max_end(start: usize, version: XcdrVersion, bound: Option<u32>) -> Option<usize> {
        seq_key_max_end::<T>(start, version, bound)
    }
}

impl<'de, T: Decode<'de>> Decode<'de> for Vec<T> {
    const MIN_SIZE: usize = 4;
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        decode_seq(r, None)
    }
    #[inline]
    fn decode_bounded(r: &mut Reader<'de>, bound: u32) -> Result<Self, DecodeError> {
        decode_seq(r, Some(bound))
    }
    #[inline]
    fn decode_into(&mut self, r: &mut Reader<'de>) -> Result<(), DecodeError> {
        if r.is_xcdr2() && !T::PRIMITIVE {
            let region = r.begin_delimited()?;
            let n = r.read_count("sequence", T::MIN_SIZE, None);
            let done = n.and_then(|n| T::decode_vec_into(n, r, self));
            r.end_region(region);
            done
        } else {
            let n = r.read_count("sequence", T::MIN_SIZE, None)?;
            T::decode_vec_into(n, r, self)
        }
    }
    fn default_value() -> Option<Self> {
        Some(Vec::new())
    }
}

impl<'de: 'a, 'a> Decode<'de> for &'a [u8] {
    const MIN_SIZE: usize = 4;
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let n = r.read_count("sequence", 1, None)?;
        r.read_bytes(n)
    }
    #[inline]
    fn decode_bounded(r: &mut Reader<'de>, bound: u32) -> Result<Self, DecodeError> {
        let n = r.read_count("sequence", 1, Some(bound))?;
        r.read_bytes(n)
    }
    fn default_value() -> Option<Self> {
        Some(&[])
    }
}

/// `Encode` for smart pointers and references: everything forwards to the pointee.
macro_rules! forward_encode {
    ($($ptr:ty),*) => {$(
        impl<T: Encode + ?Sized> Encode for $ptr {
            const PRIMITIVE: bool = T::PRIMITIVE;
            const LEAF_PRIMITIVE: bool = T::LEAF_PRIMITIVE;
            const FIXED_SIZE: Option<usize> = T::FIXED_SIZE;
            const LENGTH_CODE: u8 = T::LENGTH_CODE;
            #[inline]
            fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
                (**self).encode(w)
            }
            #[inline]
            fn encode_bounded(&self, w: &mut Writer<'_>, bound: u32) -> Result<(), EncodeError> {
                (**self).encode_bounded(w, bound)
            }
            #[inline]
            fn encode_array_element(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
                (**self).encode_array_element(w)
            }
            #[inline]
            fn encode_key(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
                (**self).encode_key(w)
            }
            fn key_max_end(start: usize, version: XcdrVersion, bound: Option<u32>) -> Option<usize> {
                T::key_max_end(start, version, bound)
            }
        }
    )*};
}

forward_encode!(&T, Box<T>);

impl<'de, T: Decode<'de>> Decode<'de> for Box<T> {
    const MIN_SIZE: usize = T::MIN_SIZE;
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        T::decode(r).map(Box::new)
    }
    #[inline]
    fn decode_bounded(r: &mut Reader<'de>, bound: u32) -> Result<Self, DecodeError> {
        T::decode_bounded(r, bound).map(Box::new)
    }
    #[inline]
    fn decode_array_element(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        T::decode_array_element(r).map(Box::new)
    }
    fn default_value() -> Option<Self> {
        T::default_value().map(Box::new)
    }
}
