//! IDL primitive types: boolean, char, octet, int8/uint8, 16/32/64-bit integers, float, double.

use crate::encoding::XcdrVersion;
use crate::error::{DecodeError, EncodeError};
use crate::reader::Reader;
use crate::traits::{Decode, Encode};
use crate::writer::Writer;

fn aligned_end(start: usize, size: usize, version: XcdrVersion) -> usize {
    let a = size.min(version.max_align());
    start.div_ceil(a) * a + size
}

macro_rules! numeric {
    ($($t:ty, $write:ident, $wslice:ident, $read:ident, $rvec:ident;)*) => {$(
        impl Encode for $t {
            const PRIMITIVE: bool = true;
            const FIXED_SIZE: Option<usize> = Some(core::mem::size_of::<$t>());
            const LENGTH_CODE: u8 = core::mem::size_of::<$t>().trailing_zeros() as u8;
            #[inline(always)]
            fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
                w.$write(*self)
            }
            #[inline]
            fn encode_slice(items: &[Self], w: &mut Writer<'_>) -> Result<(), EncodeError> {
                w.$wslice(items)
            }
            fn key_max_end(start: usize, version: XcdrVersion, _: Option<u32>) -> Option<usize> {
                Some(aligned_end(start, core::mem::size_of::<$t>(), version))
            }
        }
        impl<'de> Decode<'de> for $t {
            const MIN_SIZE: usize = core::mem::size_of::<$t>();
            #[inline(always)]
            fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
                r.$read()
            }
            #[inline]
            fn decode_vec(n: usize, r: &mut Reader<'de>) -> Result<Vec<Self>, DecodeError> {
                r.$rvec(n)
            }
            #[inline]
            fn default_value() -> Option<Self> {
                Some(<$t>::default())
            }
        }
    )*};
}

numeric! {
    u16, write_u16, write_u16_slice, read_u16, read_u16_vec;
    i16, write_i16, write_i16_slice, read_i16, read_i16_vec;
    u32, write_u32, write_u32_slice, read_u32, read_u32_vec;
    i32, write_i32, write_i32_slice, read_i32, read_i32_vec;
    u64, write_u64, write_u64_slice, read_u64, read_u64_vec;
    i64, write_i64, write_i64_slice, read_i64, read_i64_vec;
    f32, write_f32, write_f32_slice, read_f32, read_f32_vec;
    f64, write_f64, write_f64_slice, read_f64, read_f64_vec;
}

impl Encode for u8 {
    const PRIMITIVE: bool = true;
    const FIXED_SIZE: Option<usize> = Some(1);
    const LENGTH_CODE: u8 = 0;
    #[inline(always)]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.write_u8(*self)
    }
    #[inline]
    fn encode_slice(items: &[Self], w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.write_bytes(items)
    }
    fn key_max_end(start: usize, _: XcdrVersion, _: Option<u32>) -> Option<usize> {
        Some(start + 1)
    }
}

impl<'de> Decode<'de> for u8 {
    const MIN_SIZE: usize = 1;
    #[inline(always)]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        r.read_u8()
    }
    #[inline]
    fn decode_vec(n: usize, r: &mut Reader<'de>) -> Result<Vec<Self>, DecodeError> {
        Ok(r.read_bytes(n)?.to_vec())
    }
    #[inline]
    fn decode_vec_into(
        n: usize,
        r: &mut Reader<'de>,
        v: &mut Vec<Self>,
    ) -> Result<(), DecodeError> {
        let bytes = r.read_bytes(n)?;
        v.clear();
        v.extend_from_slice(bytes);
        Ok(())
    }
    fn default_value() -> Option<Self> {
        Some(0)
    }
}

macro_rules! byte_like {
    ($($t:ty, $write:ident, $read:ident, $default:expr;)*) => {$(
        impl Encode for $t {
            const PRIMITIVE: bool = true;
            const FIXED_SIZE: Option<usize> = Some(1);
            const LENGTH_CODE: u8 = 0;
            #[inline(always)]
            fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
                w.$write(*self)
            }
            fn key_max_end(start: usize, _: XcdrVersion, _: Option<u32>) -> Option<usize> {
                Some(start + 1)
            }
        }
        impl<'de> Decode<'de> for $t {
            const MIN_SIZE: usize = 1;
            #[inline(always)]
            fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
                r.$read()
            }
            fn default_value() -> Option<Self> {
                Some($default)
            }
        }
    )*};
}

byte_like! {
    i8, write_i8, read_i8, 0;
    bool, write_bool, read_bool, false;
    char, write_char, read_char, '\0';
}
