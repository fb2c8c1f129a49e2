//! Member ids of mutable types: `@autoid(HASH)` (XTypes 1.3, 7.3.1.2.1.1).

use md5::{Digest, Md5};

/// The member id `@autoid(HASH)` gives a member named `name`: the first four bytes of the MD5
/// digest of the name, read little-endian, masked to 28 bits.
pub fn hashed_member_id(name: &str) -> u32 {
    let d = Md5::digest(name.as_bytes());
    u32::from_le_bytes([d[0], d[1], d[2], d[3]]) & 0x0fff_ffff
}
