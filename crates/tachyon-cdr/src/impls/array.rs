//! IDL arrays, including multi-dimensional ones: `[T; N]`, `[[T; N]; M]`, …
//!
//! IDL `T a[M][N]` is one array of `M*N` elements on the wire: in XCDR2 it gets a single DHEADER
//! (only when the innermost element type is not primitive), never one per dimension.

use crate::encoding::XcdrVersion;
use crate::error::{DecodeError, DecodeErrorKind, EncodeError};
use crate::reader::Reader;
use crate::traits::{Decode, Encode};
use crate::writer::Writer;

impl<T: Encode, const N: usize> Encode for [T; N] {
    const LEAF_PRIMITIVE: bool = T::LEAF_PRIMITIVE;
    const LENGTH_CODE: u8 = if T::LEAF_PRIMITIVE { 4 } else { 5 };

    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        let dheader = if w.is_xcdr2() && !T::LEAF_PRIMITIVE {
            Some(w.begin_dheader()?)
        } else {
            None
        };
        self.encode_array_element(w)?;
        if let Some(mark) = dheader {
            w.end_dheader(mark)?;
        }
        Ok(())
    }

    #[inline]
    fn encode_array_element(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        if T::PRIMITIVE {
            T::encode_slice(self, w)
        } else {
            self.iter().try_for_each(|e| e.encode_array_element(w))
        }
    }

    fn encode_key(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.encode(w)
    }

    fn key_max_end(start: usize, version: XcdrVersion, _: Option<u32>) -> Option<usize> {
        let mut pos = start;
        if version == XcdrVersion::Xcdr2 && !T::LEAF_PRIMITIVE {
            pos = pos.div_ceil(4) * 4 + 4;
        }
        for _ in 0..N {
            pos = T::key_max_end(pos, version, None)?;
        }
        Some(pos)
    }
}

impl<'de, T: Decode<'de>, const N: usize> Decode<'de> for [T; N] {
    const MIN_SIZE: usize = N * T::MIN_SIZE;

    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        if r.is_xcdr2() && !T::LEAF_PRIMITIVE {
            let region = r.begin_delimited()?;
            let v = Self::decode_array_element(r);
            r.end_region(region);
            v
        } else {
            Self::decode_array_element(r)
        }
    }

    fn decode_array_element(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        let v: Vec<T> = if T::PRIMITIVE {
            let need = N.saturating_mul(T::MIN_SIZE);
            if need > r.remaining() {
                return Err(r.error(DecodeErrorKind::Truncated {
                    needed: need,
                    remaining: r.remaining(),
                }));
            }
            T::decode_vec(N, r)?
        } else {
            let mut v = Vec::with_capacity(N);
            for _ in 0..N {
                v.push(T::decode_array_element(r)?);
            }
            v
        };
        into_array(v, r)
    }

    fn default_value() -> Option<Self> {
        let mut v = Vec::with_capacity(N);
        for _ in 0..N {
            v.push(T::default_value()?);
        }
        v.try_into().ok()
    }
}

fn into_array<T, const N: usize>(v: Vec<T>, r: &Reader<'_>) -> Result<[T; N], DecodeError> {
    let len = v.len();
    v.try_into().map_err(|_| {
        r.error(DecodeErrorKind::Truncated {
            needed: N,
            remaining: len,
        })
    })
}
