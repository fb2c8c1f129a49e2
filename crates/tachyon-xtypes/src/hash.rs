//! The MD5-derived hashes of XTypes 1.3: equivalence hashes of TypeObjects (7.3.4.8) and
//! name hashes of members (7.3.4.5).

use md5::{Digest, Md5};

use crate::identifier::EquivalenceHash;

/// The first 14 bytes of the MD5 of a serialized TypeObject.
pub fn equivalence_hash(type_object: &[u8]) -> EquivalenceHash {
    let d = Md5::digest(type_object);
    let mut h = [0u8; 14];
    h.copy_from_slice(&d[..14]);
    h
}

/// The first 4 bytes of the MD5 of a name (UTF-8, no NUL): a minimal member's name.
pub fn name_hash(name: &str) -> [u8; 4] {
    let d = Md5::digest(name.as_bytes());
    [d[0], d[1], d[2], d[3]]
}

/// The member id `@autoid(HASH)` gives a member named `name`: the first 4 bytes of its MD5,
/// read little endian, masked to 28 bits.
pub fn hashed_member_id(name: &str) -> u32 {
    u32::from_le_bytes(name_hash(name)) & 0x0fff_ffff
}

#[cfg(test)]
mod tests {
    #[test]
    fn name_hash_of_color_is_the_specs_example() {
        // XTypes 1.3, NameHash: "the member name "color" has NameHash {0x70, 0xDD, 0xA5, 0xDF}".
        assert_eq!(super::name_hash("color"), [0x70, 0xDD, 0xA5, 0xDF]);
    }
}
