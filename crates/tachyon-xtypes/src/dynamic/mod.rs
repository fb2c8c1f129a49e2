//! Dynamic data: a sample of any described type ([`TypeDesc`]) read from and written to XCDR1
//! and XCDR2, in every extensibility, without a Rust type for it — what a program that never
//! saw a topic's type uses to read it (`tachyon spy echo`).
//!
//! [`decode`] reads a serialized sample (encapsulation header included) into a [`Value`] tree;
//! [`encode`] writes one back. Both follow the encoding rules the derived types do, so the
//! bytes are those of `#[derive(DdsType)]` and of Cyclone DDS for the same type and value
//! (`tests/dynamic.rs` re-encodes every Cyclone vector byte for byte).

mod decode;
mod encode;
mod fields;
mod key;
mod value;

pub use decode::{decode, decode_body, default};
pub use encode::{encode, encode_body, encode_into, encoded_size};
pub use fields::{field_kind, DynFieldKind};
pub use key::{decode_key, encode_key_payload, is_keyed, key_hash};
pub use value::Value;

use tachyon_cdr::TypeDesc;

/// The type with aliases followed (a typedef is its target on the wire).
pub(crate) fn unalias(t: &TypeDesc) -> &TypeDesc {
    let mut t = t;
    for _ in 0..64 {
        match t {
            TypeDesc::Alias(a) => t = &a.target,
            _ => return t,
        }
    }
    t
}

/// Whether a collection of the type has no DHEADER in XCDR2: booleans, characters,
/// integers and floats (enums and bitmasks get one, as Cyclone DDS writes them).
pub(crate) fn is_primitive(t: &TypeDesc) -> bool {
    matches!(unalias(t), TypeDesc::Primitive(_))
}

/// The innermost element of an array (arrays of arrays are one array).
pub(crate) fn leaf(t: &TypeDesc) -> &TypeDesc {
    match unalias(t) {
        TypeDesc::Array { element, .. } => leaf(element),
        other => other,
    }
}

/// The bytes an enum or bitmask takes (its bit bound decides: 1, 2, 4 or 8).
pub(crate) fn holder_size(bit_bound: u16) -> usize {
    match bit_bound {
        0..=8 => 1,
        9..=16 => 2,
        17..=32 => 4,
        _ => 8,
    }
}
