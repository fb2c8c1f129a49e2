//! `TypeObject` (XTypes 1.3, 7.3.4.5): a named type's definition, minimal or complete, as
//! one model. Minimal and complete differ in their details only (member names hashed or
//! spelt out, type names and annotations present or not), so each definition carries an
//! optional complete detail and each member a [`MemberDetail`]; the equivalence kind of the
//! [`TypeObject`] says which form is written.
//!
//! Decoding accepts what comes from the network only within limits: counts are checked
//! against the bytes that remain before anything is allocated, nesting is bounded by the
//! reader's depth limit, and unknown kinds are errors.

mod aggregate;
pub mod annotations;
mod collection;
mod enumerated;

use tachyon_cdr::{DecodeError, EncodeError, Endianness, Reader, Writer};

pub use aggregate::{
    AnnotationDef, AnnotationParam, StructDef, StructMember, UnionDef, UnionMember,
};
pub use annotations::{AnnotationValue, MemberAnnotations, TypeAnnotations};
pub use collection::{AliasDef, ArrayDef, CollectionElement, MapDef, SequenceDef};
pub use enumerated::{BitfieldDef, BitflagDef, BitmaskDef, BitsetDef, EnumDef, LiteralDef};

use crate::codec::{read_appendable, read_array, read_name, unknown, write_name, Codec};
use crate::identifier::{EquivalenceKind, EK_COMPLETE, EK_MINIMAL};

/// `TK_*` codes of the TypeObject kinds.
pub(crate) mod tk {
    pub const ALIAS: u8 = 0x30;
    pub const ENUM: u8 = 0x40;
    pub const BITMASK: u8 = 0x41;
    pub const ANNOTATION: u8 = 0x50;
    pub const STRUCTURE: u8 = 0x51;
    pub const UNION: u8 = 0x52;
    pub const BITSET: u8 = 0x53;
    pub const SEQUENCE: u8 = 0x60;
    pub const ARRAY: u8 = 0x61;
    pub const MAP: u8 = 0x62;
}

/// Member and type flags (`MemberFlag`, `TypeFlag`).
pub mod flags {
    /// `TRY_CONSTRUCT1`: DISCARD (the default try-construct behaviour).
    pub const TRY_CONSTRUCT1: u16 = 0x0001;
    /// `TRY_CONSTRUCT2`
    pub const TRY_CONSTRUCT2: u16 = 0x0002;
    /// `IS_EXTERNAL`
    pub const IS_EXTERNAL: u16 = 0x0004;
    /// `IS_OPTIONAL`
    pub const IS_OPTIONAL: u16 = 0x0008;
    /// `IS_MUST_UNDERSTAND`
    pub const IS_MUST_UNDERSTAND: u16 = 0x0010;
    /// `IS_KEY`
    pub const IS_KEY: u16 = 0x0020;
    /// `IS_DEFAULT`
    pub const IS_DEFAULT: u16 = 0x0040;
    /// `IS_FINAL`
    pub const IS_FINAL: u16 = 0x0001;
    /// `IS_APPENDABLE`
    pub const IS_APPENDABLE: u16 = 0x0002;
    /// `IS_MUTABLE`
    pub const IS_MUTABLE: u16 = 0x0004;
    /// `IS_NESTED`
    pub const IS_NESTED: u16 = 0x0008;
    /// `IS_AUTOID_HASH`
    pub const IS_AUTOID_HASH: u16 = 0x0010;
}

/// A type's definition in one of the two representations.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeObject {
    /// Minimal or complete.
    pub kind: EquivalenceKind,
    /// The definition.
    pub def: TypeDef,
}

/// The definitions a TypeObject holds.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeDef {
    /// A typedef.
    Alias(AliasDef),
    /// An annotation type.
    Annotation(AnnotationDef),
    /// A struct.
    Struct(StructDef),
    /// A union.
    Union(UnionDef),
    /// A bitset.
    Bitset(BitsetDef),
    /// A sequence that is not plain (an annotated or external element).
    Sequence(SequenceDef),
    /// An array that is not plain.
    Array(ArrayDef),
    /// A map that is not plain.
    Map(MapDef),
    /// An enum.
    Enum(EnumDef),
    /// A bitmask.
    Bitmask(BitmaskDef),
}

/// The complete detail of a type: its name and annotations.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TypeDetail {
    /// Its annotations.
    pub annotations: TypeAnnotations,
    /// The fully qualified name.
    pub type_name: String,
}

impl TypeDetail {
    /// The detail of a type named `name`, unannotated.
    pub fn named(name: impl Into<String>) -> TypeDetail {
        TypeDetail {
            annotations: TypeAnnotations::default(),
            type_name: name.into(),
        }
    }
}

impl Codec for TypeDetail {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.annotations.encode(w)?;
        write_name(w, &self.type_name)
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(TypeDetail {
            annotations: TypeAnnotations::decode(r)?,
            type_name: read_name(r)?,
        })
    }
}

/// The detail of a member: its name hash (minimal), or its name and annotations (complete).
#[derive(Debug, Clone, PartialEq)]
pub enum MemberDetail {
    /// The first 4 bytes of the MD5 of the name.
    Minimal([u8; 4]),
    /// The name and annotations.
    Complete {
        /// The name.
        name: String,
        /// Its annotations.
        annotations: MemberAnnotations,
    },
}

impl MemberDetail {
    /// The detail of a member named `name`, in representation `kind`.
    pub fn new(kind: EquivalenceKind, name: &str) -> MemberDetail {
        match kind {
            EquivalenceKind::Minimal => MemberDetail::Minimal(crate::hash::name_hash(name)),
            EquivalenceKind::Complete => MemberDetail::Complete {
                name: name.to_owned(),
                annotations: MemberAnnotations::default(),
            },
        }
    }

    /// The name hash (computed from the name of a complete detail).
    pub fn name_hash(&self) -> [u8; 4] {
        match self {
            MemberDetail::Minimal(h) => *h,
            MemberDetail::Complete { name, .. } => crate::hash::name_hash(name),
        }
    }

    /// The name, in a complete detail.
    pub fn name(&self) -> Option<&str> {
        match self {
            MemberDetail::Minimal(_) => None,
            MemberDetail::Complete { name, .. } => Some(name),
        }
    }

    pub(crate) fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        match self {
            MemberDetail::Minimal(h) => w.write_bytes(h),
            MemberDetail::Complete { name, annotations } => {
                write_name(w, name)?;
                annotations.encode(w)
            }
        }
    }

    pub(crate) fn decode(r: &mut Reader<'_>, kind: EquivalenceKind) -> Result<Self, DecodeError> {
        Ok(match kind {
            EquivalenceKind::Minimal => MemberDetail::Minimal(read_array(r)?),
            EquivalenceKind::Complete => MemberDetail::Complete {
                name: read_name(r)?,
                annotations: MemberAnnotations::decode(r)?,
            },
        })
    }
}

impl TypeObject {
    /// The `TK_*` kind of the definition.
    pub fn type_kind(&self) -> u8 {
        match &self.def {
            TypeDef::Alias(_) => tk::ALIAS,
            TypeDef::Annotation(_) => tk::ANNOTATION,
            TypeDef::Struct(_) => tk::STRUCTURE,
            TypeDef::Union(_) => tk::UNION,
            TypeDef::Bitset(_) => tk::BITSET,
            TypeDef::Sequence(_) => tk::SEQUENCE,
            TypeDef::Array(_) => tk::ARRAY,
            TypeDef::Map(_) => tk::MAP,
            TypeDef::Enum(_) => tk::ENUM,
            TypeDef::Bitmask(_) => tk::BITMASK,
        }
    }

    /// The fully qualified type name (complete objects of named types).
    pub fn type_name(&self) -> Option<&str> {
        let detail = match &self.def {
            TypeDef::Alias(d) => d.detail.as_ref(),
            TypeDef::Annotation(d) => return d.name.as_deref(),
            TypeDef::Struct(d) => d.detail.as_ref(),
            TypeDef::Union(d) => d.detail.as_ref(),
            TypeDef::Bitset(d) => d.detail.as_ref(),
            TypeDef::Sequence(d) => d.detail.as_ref(),
            TypeDef::Array(d) => d.detail.as_ref(),
            TypeDef::Map(d) => d.detail.as_ref(),
            TypeDef::Enum(d) => d.detail.as_ref(),
            TypeDef::Bitmask(d) => d.detail.as_ref(),
        };
        detail.map(|d| d.type_name.as_str())
    }

    /// The serialized TypeObject (XCDR2 little endian, no header, no trailing padding): the
    /// bytes its equivalence hash is computed from.
    pub fn to_bytes(&self) -> Result<Vec<u8>, EncodeError> {
        crate::codec::to_bytes(|w| self.encode(w))
    }

    /// Decodes a serialized TypeObject in the given byte order.
    pub fn from_bytes(bytes: &[u8], endian: Endianness) -> Result<TypeObject, DecodeError> {
        let mut r = crate::codec::reader(bytes, endian);
        TypeObject::decode(&mut r)
    }
}

impl Codec for TypeObject {
    const MIN_SIZE: usize = 8;

    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        let k = self.kind;
        crate::codec::appendable(w, |w| {
            w.write_u8(k.code())?;
            w.write_u8(self.type_kind())?;
            match &self.def {
                TypeDef::Alias(d) => d.encode(w, k),
                TypeDef::Annotation(d) => d.encode(w, k),
                TypeDef::Struct(d) => d.encode(w, k),
                TypeDef::Union(d) => d.encode(w, k),
                TypeDef::Bitset(d) => d.encode(w, k),
                TypeDef::Sequence(d) => d.encode(w, k),
                TypeDef::Array(d) => d.encode(w, k),
                TypeDef::Map(d) => d.encode(w, k),
                TypeDef::Enum(d) => d.encode(w, k),
                TypeDef::Bitmask(d) => d.encode(w, k),
            }
        })
    }

    fn decode(r: &mut Reader<'_>) -> Result<TypeObject, DecodeError> {
        read_appendable(r, |r| {
            let kind = match r.read_u8()? {
                EK_MINIMAL => EquivalenceKind::Minimal,
                EK_COMPLETE => EquivalenceKind::Complete,
                other => return Err(unknown(r, "TypeObject", other)),
            };
            let k = kind;
            let def = match r.read_u8()? {
                tk::ALIAS => TypeDef::Alias(AliasDef::decode(r, k)?),
                tk::ANNOTATION => TypeDef::Annotation(AnnotationDef::decode(r, k)?),
                tk::STRUCTURE => TypeDef::Struct(StructDef::decode(r, k)?),
                tk::UNION => TypeDef::Union(UnionDef::decode(r, k)?),
                tk::BITSET => TypeDef::Bitset(BitsetDef::decode(r, k)?),
                tk::SEQUENCE => TypeDef::Sequence(SequenceDef::decode(r, k)?),
                tk::ARRAY => TypeDef::Array(ArrayDef::decode(r, k)?),
                tk::MAP => TypeDef::Map(MapDef::decode(r, k)?),
                tk::ENUM => TypeDef::Enum(EnumDef::decode(r, k)?),
                tk::BITMASK => TypeDef::Bitmask(BitmaskDef::decode(r, k)?),
                other => return Err(unknown(r, "TypeObject kind", other)),
            };
            Ok(TypeObject { kind, def })
        })
    }
}

/// Writes the complete detail of a type when the representation is complete.
pub(crate) fn write_detail(
    w: &mut Writer<'_>,
    kind: EquivalenceKind,
    detail: &Option<TypeDetail>,
) -> Result<(), EncodeError> {
    if kind == EquivalenceKind::Complete {
        match detail {
            Some(d) => d.encode(w),
            None => TypeDetail::default().encode(w),
        }
    } else {
        Ok(())
    }
}

/// Reads what [`write_detail`] writes.
pub(crate) fn read_detail(
    r: &mut Reader<'_>,
    kind: EquivalenceKind,
) -> Result<Option<TypeDetail>, DecodeError> {
    match kind {
        EquivalenceKind::Complete => TypeDetail::decode(r).map(Some),
        EquivalenceKind::Minimal => Ok(None),
    }
}
