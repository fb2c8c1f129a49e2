//! The 16-byte key hash that identifies an instance (RTPS 2.5, 9.6.4.8; XTypes 1.3, 7.6.8).
//!
//! The key members are serialized big-endian in their key-only form. When the largest possible
//! key-only serialization fits in 16 bytes, the hash is those bytes zero-padded to 16; otherwise
//! it is the MD5 digest of the serialization.

use md5::{Digest, Md5};

use crate::encoding::{Endianness, XcdrVersion};
use crate::error::EncodeError;
use crate::traits::DdsType;
use crate::writer::Writer;

/// The XCDR version whose alignment rules key hashes use (matches Cyclone DDS).
pub const KEY_HASH_VERSION: XcdrVersion = XcdrVersion::Xcdr2;

/// A 16-byte key hash.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KeyHash(pub [u8; 16]);

/// The bytes' lexicographic order, compared as one big-endian 128-bit number (the same
/// order): a reader's instances are kept sorted by key hash, and a byte-by-byte slice
/// comparison at every step of their look-ups cost a sample's path about 60 instructions.
impl Ord for KeyHash {
    #[inline]
    fn cmp(&self, other: &Self) -> core::cmp::Ordering {
        u128::from_be_bytes(self.0).cmp(&u128::from_be_bytes(other.0))
    }
}

impl PartialOrd for KeyHash {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<core::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

/// Hashed as one 128-bit word (a single hasher step: instances are looked up by key hash
/// on every sample's path), not as a byte slice.
impl core::hash::Hash for KeyHash {
    #[inline]
    fn hash<H: core::hash::Hasher>(&self, state: &mut H) {
        state.write_u128(u128::from_ne_bytes(self.0));
    }
}

impl core::fmt::Display for KeyHash {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// The largest key-only serialization of `T` in `version`, or `None` when unbounded.
pub fn key_max_size<T: DdsType + ?Sized>(version: XcdrVersion) -> Option<usize> {
    T::key_max_end(0, version, None)
}

/// Computes the key hash of `value`. Unkeyed types have the all-zero hash.
pub fn key_hash<T: DdsType + ?Sized>(value: &T) -> Result<KeyHash, EncodeError> {
    key_hash_with_version(value, KEY_HASH_VERSION)
}

/// Computes the key hash of `value` with the alignment rules of `version`.
pub fn key_hash_with_version<T: DdsType + ?Sized>(
    value: &T,
    version: XcdrVersion,
) -> Result<KeyHash, EncodeError> {
    if !T::KEYED {
        return Ok(KeyHash::default());
    }
    let small = matches!(key_max_size::<T>(version), Some(n) if n <= 16);
    let mut stack = [0u8; 256];
    let mut w = Writer::new(&mut stack, version, Endianness::Big);
    let len = match value.encode_key(&mut w) {
        Ok(()) => w.position(),
        Err(EncodeError::BufferTooSmall { .. }) if !small => {
            return md5_of_large_key(value, version);
        }
        Err(e) => return Err(e),
    };
    let mut out = [0u8; 16];
    if small && len <= 16 {
        out[..len].copy_from_slice(&stack[..len]);
    } else {
        out.copy_from_slice(&Md5::digest(&stack[..len]));
    }
    Ok(KeyHash(out))
}

#[cold]
fn md5_of_large_key<T: DdsType + ?Sized>(
    value: &T,
    version: XcdrVersion,
) -> Result<KeyHash, EncodeError> {
    let mut counter = Writer::counter(version, Endianness::Big);
    value.encode_key(&mut counter)?;
    let mut buf = vec![0u8; counter.position()];
    let mut w = Writer::new(&mut buf, version, Endianness::Big);
    value.encode_key(&mut w)?;
    let mut out = [0u8; 16];
    out.copy_from_slice(&Md5::digest(&buf));
    Ok(KeyHash(out))
}
