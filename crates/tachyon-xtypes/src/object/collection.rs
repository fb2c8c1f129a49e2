//! Aliases and the collections that need a TypeObject of their own (sequences, arrays and
//! maps whose element cannot be named by a plain identifier).

use tachyon_cdr::{DecodeError, EncodeError, Reader, Writer};

use super::annotations::MemberAnnotations;
use super::{read_detail, write_detail, TypeDetail};
use crate::codec::{
    appendable, read_appendable, read_opt, read_u32_seq, write_opt, write_u32_seq, Codec,
};
use crate::identifier::{EquivalenceKind, TypeIdentifier};

/// A typedef's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct AliasDef {
    /// `AliasTypeFlag` (unused).
    pub flags: u16,
    /// Name and annotations (complete).
    pub detail: Option<TypeDetail>,
    /// `AliasMemberFlag` (unused).
    pub related_flags: u16,
    /// The aliased type.
    pub related: TypeIdentifier,
    /// The body's annotations (complete).
    pub annotations: MemberAnnotations,
}

impl AliasDef {
    pub(crate) fn encode(&self, w: &mut Writer<'_>, k: EquivalenceKind) -> Result<(), EncodeError> {
        w.write_u16(self.flags)?;
        appendable(w, |w| write_detail(w, k, &self.detail))?;
        appendable(w, |w| {
            w.write_u16(self.related_flags)?;
            self.related.encode(w)?;
            if k == EquivalenceKind::Complete {
                self.annotations.encode(w)?;
            }
            Ok(())
        })
    }

    pub(crate) fn decode(r: &mut Reader<'_>, k: EquivalenceKind) -> Result<Self, DecodeError> {
        let flags = r.read_u16()?;
        let detail = read_appendable(r, |r| read_detail(r, k))?;
        let (related_flags, related, annotations) = read_appendable(r, |r| {
            let f = r.read_u16()?;
            let t = TypeIdentifier::decode(r)?;
            let a = if k == EquivalenceKind::Complete {
                MemberAnnotations::decode(r)?
            } else {
                MemberAnnotations::default()
            };
            Ok((f, t, a))
        })?;
        Ok(AliasDef {
            flags,
            detail,
            related_flags,
            related,
            annotations,
        })
    }
}

/// The element (or key) of a collection.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectionElement {
    /// `CollectionElementFlag`s (try-construct, external).
    pub flags: u16,
    /// Its type.
    pub type_id: TypeIdentifier,
    /// Its annotations (complete).
    pub annotations: MemberAnnotations,
}

impl CollectionElement {
    fn encode(&self, w: &mut Writer<'_>, k: EquivalenceKind) -> Result<(), EncodeError> {
        appendable(w, |w| {
            w.write_u16(self.flags)?;
            self.type_id.encode(w)?;
            if k == EquivalenceKind::Complete {
                self.annotations.encode(w)?;
            }
            Ok(())
        })
    }

    fn decode(r: &mut Reader<'_>, k: EquivalenceKind) -> Result<Self, DecodeError> {
        read_appendable(r, |r| {
            let flags = r.read_u16()?;
            let type_id = TypeIdentifier::decode(r)?;
            let annotations = if k == EquivalenceKind::Complete {
                MemberAnnotations::decode(r)?
            } else {
                MemberAnnotations::default()
            };
            Ok(CollectionElement {
                flags,
                type_id,
                annotations,
            })
        })
    }
}

/// Writes a `CollectionHeader`: the bound, and in the complete form an optional detail.
fn write_collection_header(
    w: &mut Writer<'_>,
    k: EquivalenceKind,
    bound: u32,
    detail: &Option<TypeDetail>,
) -> Result<(), EncodeError> {
    appendable(w, |w| {
        w.write_u32(bound)?;
        if k == EquivalenceKind::Complete {
            write_opt(w, detail, |w, d| d.encode(w))?;
        }
        Ok(())
    })
}

fn read_collection_header(
    r: &mut Reader<'_>,
    k: EquivalenceKind,
) -> Result<(u32, Option<TypeDetail>), DecodeError> {
    read_appendable(r, |r| {
        let bound = r.read_u32()?;
        let detail = if k == EquivalenceKind::Complete {
            read_opt(r, TypeDetail::decode)?
        } else {
            None
        };
        Ok((bound, detail))
    })
}

/// A sequence's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct SequenceDef {
    /// `CollectionTypeFlag` (unused).
    pub flags: u16,
    /// The bound, 0 when unbounded.
    pub bound: u32,
    /// Name and annotations (complete, named sequences only).
    pub detail: Option<TypeDetail>,
    /// The element.
    pub element: CollectionElement,
}

impl SequenceDef {
    pub(crate) fn encode(&self, w: &mut Writer<'_>, k: EquivalenceKind) -> Result<(), EncodeError> {
        w.write_u16(self.flags)?;
        write_collection_header(w, k, self.bound, &self.detail)?;
        self.element.encode(w, k)
    }

    pub(crate) fn decode(r: &mut Reader<'_>, k: EquivalenceKind) -> Result<Self, DecodeError> {
        let flags = r.read_u16()?;
        let (bound, detail) = read_collection_header(r, k)?;
        Ok(SequenceDef {
            flags,
            bound,
            detail,
            element: CollectionElement::decode(r, k)?,
        })
    }
}

/// An array's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct ArrayDef {
    /// `CollectionTypeFlag` (unused).
    pub flags: u16,
    /// The dimensions.
    pub bounds: Vec<u32>,
    /// Name and annotations (complete).
    pub detail: Option<TypeDetail>,
    /// The element.
    pub element: CollectionElement,
}

impl ArrayDef {
    pub(crate) fn encode(&self, w: &mut Writer<'_>, k: EquivalenceKind) -> Result<(), EncodeError> {
        let body = |w: &mut Writer<'_>| -> Result<(), EncodeError> {
            w.write_u16(self.flags)?;
            appendable(w, |w| {
                write_u32_seq(w, &self.bounds)?;
                write_detail(w, k, &self.detail)
            })?;
            self.element.encode(w, k)
        };
        // CompleteArrayType is appendable, MinimalArrayType final (as Cyclone DDS's copy of
        // the XTypes IDL declares them).
        match k {
            EquivalenceKind::Complete => appendable(w, body),
            EquivalenceKind::Minimal => body(w),
        }
    }

    pub(crate) fn decode(r: &mut Reader<'_>, k: EquivalenceKind) -> Result<Self, DecodeError> {
        let body = |r: &mut Reader<'_>| -> Result<Self, DecodeError> {
            let flags = r.read_u16()?;
            let (bounds, detail) = read_appendable(r, |r| {
                Ok((read_u32_seq(r, "array bounds")?, read_detail(r, k)?))
            })?;
            Ok(ArrayDef {
                flags,
                bounds,
                detail,
                element: CollectionElement::decode(r, k)?,
            })
        };
        match k {
            EquivalenceKind::Complete => read_appendable(r, body),
            EquivalenceKind::Minimal => body(r),
        }
    }
}

/// A map's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct MapDef {
    /// `CollectionTypeFlag` (unused).
    pub flags: u16,
    /// The bound, 0 when unbounded.
    pub bound: u32,
    /// Name and annotations (complete, named maps only).
    pub detail: Option<TypeDetail>,
    /// The key.
    pub key: CollectionElement,
    /// The element (value).
    pub element: CollectionElement,
}

impl MapDef {
    pub(crate) fn encode(&self, w: &mut Writer<'_>, k: EquivalenceKind) -> Result<(), EncodeError> {
        w.write_u16(self.flags)?;
        write_collection_header(w, k, self.bound, &self.detail)?;
        self.key.encode(w, k)?;
        self.element.encode(w, k)
    }

    pub(crate) fn decode(r: &mut Reader<'_>, k: EquivalenceKind) -> Result<Self, DecodeError> {
        let flags = r.read_u16()?;
        let (bound, detail) = read_collection_header(r, k)?;
        Ok(MapDef {
            flags,
            bound,
            detail,
            key: CollectionElement::decode(r, k)?,
            element: CollectionElement::decode(r, k)?,
        })
    }
}
