//! Entry point for the `cdr_decode` fuzz target and its corpus-replay test: decoding a rich
//! type (every construct: primitives, strings, sequences, arrays, unions, enums, optionals,
//! appendable and mutable nesting, borrowed fields) from arbitrary bytes.

use crate::{deserialize, serialize_to_vec, DdsType, Encapsulation, EncapsulationHeader};

/// An enumeration for the fuzz type.
#[derive(DdsType, Debug, Clone, Copy, PartialEq)]
#[dds(name = "fuzz::Kind")]
pub enum Kind {
    /// First.
    A,
    /// Second, with an explicit value.
    B = 7,
}

/// A union for the fuzz type.
#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "fuzz::Pick", switch = i16, appendable)]
pub enum Pick<'a> {
    /// A number.
    #[dds(case = 1)]
    Num(i64),
    /// A borrowed string.
    #[dds(case = 2)]
    Text(&'a str),
    /// No member.
    #[dds(case = 3)]
    Nothing,
}

/// A mutable member type.
#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "fuzz::Mut", mutable)]
pub struct Mut {
    /// Key member.
    #[dds(key)]
    pub id: u32,
    /// Sequence of doubles.
    pub values: Vec<f64>,
    /// Optional string.
    #[dds(id = 40, bound = 32)]
    pub label: Option<String>,
    /// Enum member.
    pub kind: Kind,
}

/// An appendable member type.
#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "fuzz::App", appendable)]
pub struct App {
    /// Plain member.
    pub a: i16,
    /// Optional member.
    pub b: Option<u64>,
    /// Two-dimensional array.
    pub grid: [[u8; 3]; 2],
}

/// The type the fuzzer decodes.
#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "fuzz::Rich")]
pub struct Rich<'a> {
    /// Key string.
    #[dds(key, bound = 64)]
    pub name: &'a str,
    /// Borrowed octets.
    pub blob: &'a [u8],
    /// Booleans and chars.
    pub flags: [bool; 2],
    /// A char.
    pub c: char,
    /// Float.
    pub f: f32,
    /// Strings.
    #[dds(bound = 8)]
    pub strings: Vec<String>,
    /// Union.
    pub pick: Pick<'a>,
    /// Nested appendable.
    pub app: App,
    /// Sequence of mutables.
    pub muts: Vec<Mut>,
    /// Nested sequences.
    pub nested: Vec<Vec<i32>>,
    /// Optional enum.
    pub kind: Option<Kind>,
}

/// Decodes `data` as [`Rich`]; when that succeeds, re-encodes it in the same representation
/// and checks that the re-encoding decodes to the same value. Panics only on a bug.
pub fn fuzz_decode(data: &[u8]) {
    let Ok(v) = deserialize::<Rich<'_>>(data) else {
        return;
    };
    let enc = match EncapsulationHeader::parse(data) {
        Ok(h) => h.encapsulation,
        Err(_) => Encapsulation::CdrLe,
    };
    // Floats that are NaN cannot compare equal; skip the equality check for them.
    let comparable = !v.f.is_nan() && v.muts.iter().all(|m| m.values.iter().all(|x| !x.is_nan()));
    match serialize_to_vec(&v, enc.version(), enc.endianness()) {
        Ok(bytes) => {
            let back = deserialize::<Rich<'_>>(&bytes)
                .expect("a re-encoded value must decode (round-trip invariant)");
            if comparable {
                assert_eq!(back, v, "round trip changed the value");
            }
        }
        // Decoding accepts what encoding refuses in a few places (e.g. a NUL inside a
        // string received as bytes is rejected on decode too, so this is rare), never a bug.
        Err(e) => panic!("decoded value does not re-encode: {e}"),
    }
}
