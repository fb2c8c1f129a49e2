//! IDL `string` and `string<N>`: `String` (owned) and `&str` (borrowed from the input).

use crate::encoding::XcdrVersion;
use crate::error::{DecodeError, EncodeError};
use crate::reader::Reader;
use crate::traits::{Decode, Encode};
use crate::writer::Writer;

impl Encode for str {
    const LENGTH_CODE: u8 = 5;
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.write_string(self, None)
    }
    #[inline]
    fn encode_bounded(&self, w: &mut Writer<'_>, bound: u32) -> Result<(), EncodeError> {
        w.write_string(self, Some(bound))
    }
    fn key_max_end(start: usize, _: XcdrVersion, bound: Option<u32>) -> Option<usize> {
        bound.map(|b| start.div_ceil(4) * 4 + 4 + b as usize + 1)
    }
}

impl Encode for String {
    const LENGTH_CODE: u8 = 5;
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.as_str().encode(w)
    }
    #[inline]
    fn encode_bounded(&self, w: &mut Writer<'_>, bound: u32) -> Result<(), EncodeError> {
        self.as_str().encode_bounded(w, bound)
    }
    fn key_max_end(start: usize, version: XcdrVersion, bound: Option<u32>) -> Option<usize> {
        str::key_max_end(start, version, bound)
    }
}

impl<'de: 'a, 'a> Decode<'de> for &'a str {
    const MIN_SIZE: usize = 4;
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        r.read_str(None)
    }
    #[inline]
    fn decode_bounded(r: &mut Reader<'de>, bound: u32) -> Result<Self, DecodeError> {
        r.read_str(Some(bound))
    }
    fn default_value() -> Option<Self> {
        Some("")
    }
}

impl<'de> Decode<'de> for String {
    const MIN_SIZE: usize = 4;
    #[inline]
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        r.read_str(None).map(String::from)
    }
    #[inline]
    fn decode_bounded(r: &mut Reader<'de>, bound: u32) -> Result<Self, DecodeError> {
        r.read_str(Some(bound)).map(String::from)
    }
    fn default_value() -> Option<Self> {
        Some(String::new())
    }
}
