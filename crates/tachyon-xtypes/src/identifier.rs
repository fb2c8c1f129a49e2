//! `TypeIdentifier` (XTypes 1.3, 7.3.4.2): a type named by itself (primitives, strings, plain
//! collections of them) or by the hash of its TypeObject.

use core::fmt;

use tachyon_cdr::{DecodeError, EncodeError, Primitive, Reader, Writer};

use crate::codec::{read_array, read_u32_seq, unknown, write_u32_seq, Codec};

/// `EK_MINIMAL`
pub const EK_MINIMAL: u8 = 0xF1;
/// `EK_COMPLETE`
pub const EK_COMPLETE: u8 = 0xF2;
/// `EK_BOTH`: a plain collection whose element is fully descriptive.
pub const EK_BOTH: u8 = 0xF3;

const TI_STRING8_SMALL: u8 = 0x70;
const TI_STRING8_LARGE: u8 = 0x71;
const TI_STRING16_SMALL: u8 = 0x72;
const TI_STRING16_LARGE: u8 = 0x73;
const TI_PLAIN_SEQUENCE_SMALL: u8 = 0x80;
const TI_PLAIN_SEQUENCE_LARGE: u8 = 0x81;
const TI_PLAIN_ARRAY_SMALL: u8 = 0x90;
const TI_PLAIN_ARRAY_LARGE: u8 = 0x91;
const TI_PLAIN_MAP_SMALL: u8 = 0xA0;
const TI_PLAIN_MAP_LARGE: u8 = 0xA1;
const TI_STRONGLY_CONNECTED_COMPONENT: u8 = 0xB0;

/// First 14 bytes of the MD5 of a serialized TypeObject.
pub type EquivalenceHash = [u8; 14];

/// The two kinds of type representation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EquivalenceKind {
    /// Member names hashed, no type names: what assignability needs.
    Minimal,
    /// Everything the IDL said: names, annotations.
    Complete,
}

impl EquivalenceKind {
    /// `EK_MINIMAL` or `EK_COMPLETE`.
    pub fn code(self) -> u8 {
        match self {
            EquivalenceKind::Minimal => EK_MINIMAL,
            EquivalenceKind::Complete => EK_COMPLETE,
        }
    }
}

/// The header of a plain collection identifier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PlainHeader {
    /// `EK_MINIMAL`, `EK_COMPLETE` or `EK_BOTH`.
    pub equiv_kind: u8,
    /// The element's member flags.
    pub element_flags: u16,
}

/// A TypeIdentifier.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TypeIdentifier {
    /// `TK_NONE`: no type (a struct without base).
    None,
    /// A primitive type.
    Primitive(Primitive),
    /// `string<bound>` or `wstring<bound>`, bound 0 for unbounded; `large` for the 32-bit
    /// bound form.
    String {
        /// `wstring`
        wide: bool,
        /// The bound, 0 when unbounded.
        bound: u32,
        /// Written with a 32-bit bound (`TI_STRING*_LARGE`).
        large: bool,
    },
    /// A sequence whose element is named by its identifier.
    PlainSequence {
        /// Element equivalence kind and flags.
        header: PlainHeader,
        /// The bound, 0 when unbounded.
        bound: u32,
        /// Written with a 32-bit bound.
        large: bool,
        /// The element type.
        element: Box<TypeIdentifier>,
    },
    /// An array whose element is named by its identifier.
    PlainArray {
        /// Element equivalence kind and flags.
        header: PlainHeader,
        /// The dimensions.
        dims: Vec<u32>,
        /// Written with 32-bit dimensions.
        large: bool,
        /// The element type.
        element: Box<TypeIdentifier>,
    },
    /// A map whose key and element are named by their identifiers.
    PlainMap {
        /// Element equivalence kind and flags.
        header: PlainHeader,
        /// The bound, 0 when unbounded.
        bound: u32,
        /// Written with a 32-bit bound.
        large: bool,
        /// The element (value) type.
        element: Box<TypeIdentifier>,
        /// The key's flags.
        key_flags: u16,
        /// The key type.
        key: Box<TypeIdentifier>,
    },
    /// A type in a strongly connected component (mutually recursive types).
    StronglyConnected {
        /// `EK_MINIMAL` or `EK_COMPLETE`.
        kind: u8,
        /// The component's hash.
        hash: EquivalenceHash,
        /// The component's length.
        scc_length: i32,
        /// This type's index in it.
        scc_index: i32,
    },
    /// A type named by the hash of its minimal TypeObject.
    Minimal(EquivalenceHash),
    /// A type named by the hash of its complete TypeObject.
    Complete(EquivalenceHash),
}

/// `TK_*` of a primitive.
pub fn primitive_code(p: Primitive) -> u8 {
    match p {
        Primitive::Boolean => 0x01,
        Primitive::Byte => 0x02,
        Primitive::Int16 => 0x03,
        Primitive::Int32 => 0x04,
        Primitive::Int64 => 0x05,
        Primitive::UInt16 => 0x06,
        Primitive::UInt32 => 0x07,
        Primitive::UInt64 => 0x08,
        Primitive::Float32 => 0x09,
        Primitive::Float64 => 0x0A,
        Primitive::Float128 => 0x0B,
        Primitive::Int8 => 0x0C,
        Primitive::UInt8 => 0x0D,
        Primitive::Char8 => 0x10,
        Primitive::Char16 => 0x11,
    }
}

/// The primitive of a `TK_*` code.
pub fn primitive_of(code: u8) -> Option<Primitive> {
    Some(match code {
        0x01 => Primitive::Boolean,
        0x02 => Primitive::Byte,
        0x03 => Primitive::Int16,
        0x04 => Primitive::Int32,
        0x05 => Primitive::Int64,
        0x06 => Primitive::UInt16,
        0x07 => Primitive::UInt32,
        0x08 => Primitive::UInt64,
        0x09 => Primitive::Float32,
        0x0A => Primitive::Float64,
        0x0B => Primitive::Float128,
        0x0C => Primitive::Int8,
        0x0D => Primitive::UInt8,
        0x10 => Primitive::Char8,
        0x11 => Primitive::Char16,
        _ => return None,
    })
}

impl TypeIdentifier {
    /// The identifier of a primitive.
    pub fn primitive(p: Primitive) -> TypeIdentifier {
        TypeIdentifier::Primitive(p)
    }

    /// The equivalence hash, for identifiers that are one.
    pub fn hash(&self) -> Option<(EquivalenceKind, &EquivalenceHash)> {
        match self {
            TypeIdentifier::Minimal(h) => Some((EquivalenceKind::Minimal, h)),
            TypeIdentifier::Complete(h) => Some((EquivalenceKind::Complete, h)),
            _ => None,
        }
    }

    /// True for identifiers that describe their type fully (primitives, strings, and plain
    /// collections of them): no TypeObject is needed to know the type.
    pub fn is_fully_descriptive(&self) -> bool {
        match self {
            TypeIdentifier::Primitive(_) | TypeIdentifier::String { .. } => true,
            TypeIdentifier::PlainSequence { header, .. }
            | TypeIdentifier::PlainArray { header, .. }
            | TypeIdentifier::PlainMap { header, .. } => header.equiv_kind == EK_BOTH,
            _ => false,
        }
    }

    /// The serialized identifier (XCDR2 little endian).
    pub fn to_bytes(&self) -> Vec<u8> {
        // Writing into a buffer sized by a counting pass cannot fail.
        crate::codec::to_bytes(|w| self.encode(w)).unwrap_or_default()
    }

    /// Decodes an identifier from its serialized form.
    pub fn from_bytes(bytes: &[u8]) -> Result<TypeIdentifier, DecodeError> {
        let mut r = crate::codec::reader(bytes, tachyon_cdr::Endianness::Little);
        TypeIdentifier::decode(&mut r)
    }
}

impl fmt::Display for TypeIdentifier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypeIdentifier::Minimal(h) | TypeIdentifier::Complete(h) => {
                let tag = if matches!(self, TypeIdentifier::Minimal(_)) {
                    "minimal"
                } else {
                    "complete"
                };
                write!(f, "{tag}:")?;
                h.iter().try_for_each(|b| write!(f, "{b:02x}"))
            }
            other => {
                for b in other.to_bytes() {
                    write!(f, "{b:02x}")?;
                }
                Ok(())
            }
        }
    }
}

fn write_header(w: &mut Writer<'_>, h: &PlainHeader) -> Result<(), EncodeError> {
    w.write_u8(h.equiv_kind)?;
    w.write_u16(h.element_flags)
}

fn read_header(r: &mut Reader<'_>) -> Result<PlainHeader, DecodeError> {
    Ok(PlainHeader {
        equiv_kind: r.read_u8()?,
        element_flags: r.read_u16()?,
    })
}

fn small(w: &mut Writer<'_>, large: bool, v: u32) -> Result<(), EncodeError> {
    if large {
        w.write_u32(v)
    } else {
        // A small form holds bounds below 256 (the builder chooses it only then).
        w.write_u8(u8::try_from(v).unwrap_or(u8::MAX))
    }
}

fn read_small(r: &mut Reader<'_>, large: bool) -> Result<u32, DecodeError> {
    if large {
        r.read_u32()
    } else {
        r.read_u8().map(u32::from)
    }
}

impl Codec for TypeIdentifier {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        match self {
            TypeIdentifier::None => w.write_u8(0),
            TypeIdentifier::Primitive(p) => w.write_u8(primitive_code(*p)),
            TypeIdentifier::String { wide, bound, large } => {
                let d = match (wide, large) {
                    (false, false) => TI_STRING8_SMALL,
                    (false, true) => TI_STRING8_LARGE,
                    (true, false) => TI_STRING16_SMALL,
                    (true, true) => TI_STRING16_LARGE,
                };
                w.write_u8(d)?;
                small(w, *large, *bound)
            }
            TypeIdentifier::PlainSequence {
                header,
                bound,
                large,
                element,
            } => {
                w.write_u8(if *large {
                    TI_PLAIN_SEQUENCE_LARGE
                } else {
                    TI_PLAIN_SEQUENCE_SMALL
                })?;
                write_header(w, header)?;
                small(w, *large, *bound)?;
                element.encode(w)
            }
            TypeIdentifier::PlainArray {
                header,
                dims,
                large,
                element,
            } => {
                w.write_u8(if *large {
                    TI_PLAIN_ARRAY_LARGE
                } else {
                    TI_PLAIN_ARRAY_SMALL
                })?;
                write_header(w, header)?;
                if *large {
                    write_u32_seq(w, dims)?;
                } else {
                    w.write_len(dims.len())?;
                    dims.iter().try_for_each(|d| small(w, false, *d))?;
                }
                element.encode(w)
            }
            TypeIdentifier::PlainMap {
                header,
                bound,
                large,
                element,
                key_flags,
                key,
            } => {
                w.write_u8(if *large {
                    TI_PLAIN_MAP_LARGE
                } else {
                    TI_PLAIN_MAP_SMALL
                })?;
                write_header(w, header)?;
                small(w, *large, *bound)?;
                element.encode(w)?;
                w.write_u16(*key_flags)?;
                key.encode(w)
            }
            TypeIdentifier::StronglyConnected {
                kind,
                hash,
                scc_length,
                scc_index,
            } => {
                w.write_u8(TI_STRONGLY_CONNECTED_COMPONENT)?;
                crate::codec::appendable(w, |w| {
                    w.write_u8(*kind)?;
                    w.write_bytes(hash)?;
                    w.write_i32(*scc_length)?;
                    w.write_i32(*scc_index)
                })
            }
            TypeIdentifier::Minimal(h) => {
                w.write_u8(EK_MINIMAL)?;
                w.write_bytes(h)
            }
            TypeIdentifier::Complete(h) => {
                w.write_u8(EK_COMPLETE)?;
                w.write_bytes(h)
            }
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<TypeIdentifier, DecodeError> {
        r.enter()?;
        let v = decode_inner(r);
        r.leave();
        v
    }
}

fn decode_inner(r: &mut Reader<'_>) -> Result<TypeIdentifier, DecodeError> {
    let d = r.read_u8()?;
    if d == 0 {
        return Ok(TypeIdentifier::None);
    }
    if let Some(p) = primitive_of(d) {
        return Ok(TypeIdentifier::primitive(p));
    }
    Ok(match d {
        TI_STRING8_SMALL | TI_STRING8_LARGE | TI_STRING16_SMALL | TI_STRING16_LARGE => {
            let large = d == TI_STRING8_LARGE || d == TI_STRING16_LARGE;
            TypeIdentifier::String {
                wide: d == TI_STRING16_SMALL || d == TI_STRING16_LARGE,
                bound: read_small(r, large)?,
                large,
            }
        }
        TI_PLAIN_SEQUENCE_SMALL | TI_PLAIN_SEQUENCE_LARGE => {
            let large = d == TI_PLAIN_SEQUENCE_LARGE;
            let header = read_header(r)?;
            let bound = read_small(r, large)?;
            TypeIdentifier::PlainSequence {
                header,
                bound,
                large,
                element: Box::new(TypeIdentifier::decode(r)?),
            }
        }
        TI_PLAIN_ARRAY_SMALL | TI_PLAIN_ARRAY_LARGE => {
            let large = d == TI_PLAIN_ARRAY_LARGE;
            let header = read_header(r)?;
            let dims = if large {
                read_u32_seq(r, "array bounds")?
            } else {
                let n = r.read_count("array bounds", 1, None)?;
                r.read_bytes(n)?.iter().map(|b| u32::from(*b)).collect()
            };
            TypeIdentifier::PlainArray {
                header,
                dims,
                large,
                element: Box::new(TypeIdentifier::decode(r)?),
            }
        }
        TI_PLAIN_MAP_SMALL | TI_PLAIN_MAP_LARGE => {
            let large = d == TI_PLAIN_MAP_LARGE;
            let header = read_header(r)?;
            let bound = read_small(r, large)?;
            let element = Box::new(TypeIdentifier::decode(r)?);
            let key_flags = r.read_u16()?;
            TypeIdentifier::PlainMap {
                header,
                bound,
                large,
                element,
                key_flags,
                key: Box::new(TypeIdentifier::decode(r)?),
            }
        }
        TI_STRONGLY_CONNECTED_COMPONENT => crate::codec::read_appendable(r, |r| {
            Ok(TypeIdentifier::StronglyConnected {
                kind: r.read_u8()?,
                hash: read_array(r)?,
                scc_length: r.read_i32()?,
                scc_index: r.read_i32()?,
            })
        })?,
        EK_MINIMAL => TypeIdentifier::Minimal(read_array(r)?),
        EK_COMPLETE => TypeIdentifier::Complete(read_array(r)?),
        other => return Err(unknown(r, "TypeIdentifier", other)),
    })
}
