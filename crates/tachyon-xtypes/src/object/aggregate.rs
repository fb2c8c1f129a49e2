//! Structs, unions and annotation types.

use tachyon_cdr::{DecodeError, EncodeError, Reader, Writer};

use super::annotations::{AnnotationValue, TypeAnnotations};
use super::{read_detail, write_detail, MemberDetail, TypeDetail};
use crate::codec::{
    appendable, read_appendable, read_array, read_name, read_seq_with, write_name, write_seq_with,
    Codec,
};
use crate::identifier::{EquivalenceKind, TypeIdentifier};

/// A struct's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct StructDef {
    /// `TypeFlag`s: extensibility, nested, autoid hash.
    pub flags: u16,
    /// The base struct, or [`TypeIdentifier::None`].
    pub base: TypeIdentifier,
    /// Name and annotations (complete).
    pub detail: Option<TypeDetail>,
    /// The members in declaration order.
    pub members: Vec<StructMember>,
}

/// A member of a struct.
#[derive(Debug, Clone, PartialEq)]
pub struct StructMember {
    /// The member id.
    pub id: u32,
    /// `MemberFlag`s: key, optional, must-understand, external, try-construct.
    pub flags: u16,
    /// Its type.
    pub type_id: TypeIdentifier,
    /// Its name.
    pub detail: MemberDetail,
}

impl StructDef {
    pub(crate) fn encode(&self, w: &mut Writer<'_>, k: EquivalenceKind) -> Result<(), EncodeError> {
        w.write_u16(self.flags)?;
        appendable(w, |w| {
            self.base.encode(w)?;
            write_detail(w, k, &self.detail)
        })?;
        write_seq_with(w, &self.members, |w, m| {
            appendable(w, |w| {
                w.write_u32(m.id)?;
                w.write_u16(m.flags)?;
                m.type_id.encode(w)?;
                m.detail.encode(w)
            })
        })
    }

    pub(crate) fn decode(r: &mut Reader<'_>, k: EquivalenceKind) -> Result<Self, DecodeError> {
        let flags = r.read_u16()?;
        let (base, detail) =
            read_appendable(r, |r| Ok((TypeIdentifier::decode(r)?, read_detail(r, k)?)))?;
        let members = read_seq_with(r, "struct members", 12, |r| {
            read_appendable(r, |r| {
                Ok(StructMember {
                    id: r.read_u32()?,
                    flags: r.read_u16()?,
                    type_id: TypeIdentifier::decode(r)?,
                    detail: MemberDetail::decode(r, k)?,
                })
            })
        })?;
        Ok(StructDef {
            flags,
            base,
            detail,
            members,
        })
    }
}

/// A union's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct UnionDef {
    /// `TypeFlag`s: extensibility, nested.
    pub flags: u16,
    /// Name and annotations (complete).
    pub detail: Option<TypeDetail>,
    /// The discriminator's flags (try-construct, key).
    pub discriminator_flags: u16,
    /// The discriminator's type.
    pub discriminator: TypeIdentifier,
    /// The discriminator's annotations (complete).
    pub discriminator_annotations: TypeAnnotations,
    /// The cases.
    pub members: Vec<UnionMember>,
}

/// A case of a union.
#[derive(Debug, Clone, PartialEq)]
pub struct UnionMember {
    /// The member id.
    pub id: u32,
    /// `MemberFlag`s: default, external, try-construct.
    pub flags: u16,
    /// Its type.
    pub type_id: TypeIdentifier,
    /// The discriminator values that select it.
    pub labels: Vec<i32>,
    /// Its name.
    pub detail: MemberDetail,
}

impl UnionDef {
    pub(crate) fn encode(&self, w: &mut Writer<'_>, k: EquivalenceKind) -> Result<(), EncodeError> {
        w.write_u16(self.flags)?;
        appendable(w, |w| write_detail(w, k, &self.detail))?;
        appendable(w, |w| {
            w.write_u16(self.discriminator_flags)?;
            self.discriminator.encode(w)?;
            if k == EquivalenceKind::Complete {
                self.discriminator_annotations.encode(w)?;
            }
            Ok(())
        })?;
        write_seq_with(w, &self.members, |w, m| {
            appendable(w, |w| {
                w.write_u32(m.id)?;
                w.write_u16(m.flags)?;
                m.type_id.encode(w)?;
                w.write_len(m.labels.len())?;
                m.labels.iter().try_for_each(|l| w.write_i32(*l))?;
                m.detail.encode(w)
            })
        })
    }

    pub(crate) fn decode(r: &mut Reader<'_>, k: EquivalenceKind) -> Result<Self, DecodeError> {
        let flags = r.read_u16()?;
        let detail = read_appendable(r, |r| read_detail(r, k))?;
        let (discriminator_flags, discriminator, discriminator_annotations) =
            read_appendable(r, |r| {
                let f = r.read_u16()?;
                let t = TypeIdentifier::decode(r)?;
                let a = if k == EquivalenceKind::Complete {
                    TypeAnnotations::decode(r)?
                } else {
                    TypeAnnotations::default()
                };
                Ok((f, t, a))
            })?;
        let members = read_seq_with(r, "union members", 16, |r| {
            read_appendable(r, |r| {
                let id = r.read_u32()?;
                let flags = r.read_u16()?;
                let type_id = TypeIdentifier::decode(r)?;
                let n = r.read_count("union labels", 4, None)?;
                let labels = r.read_i32_vec(n)?;
                Ok(UnionMember {
                    id,
                    flags,
                    type_id,
                    labels,
                    detail: MemberDetail::decode(r, k)?,
                })
            })
        })?;
        Ok(UnionDef {
            flags,
            detail,
            discriminator_flags,
            discriminator,
            discriminator_annotations,
            members,
        })
    }
}

/// An annotation type's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct AnnotationDef {
    /// `AnnotationTypeFlag` (unused).
    pub flags: u16,
    /// The annotation's name (complete).
    pub name: Option<String>,
    /// Its parameters.
    pub params: Vec<AnnotationParam>,
}

/// A parameter of an annotation type.
#[derive(Debug, Clone, PartialEq)]
pub struct AnnotationParam {
    /// Flags (unused).
    pub flags: u16,
    /// Its type.
    pub type_id: TypeIdentifier,
    /// Its name (complete) or name hash (minimal).
    pub name: MemberDetail,
    /// Its default value.
    pub default: AnnotationValue,
}

impl AnnotationDef {
    pub(crate) fn encode(&self, w: &mut Writer<'_>, k: EquivalenceKind) -> Result<(), EncodeError> {
        w.write_u16(self.flags)?;
        appendable(w, |w| {
            if k == EquivalenceKind::Complete {
                write_name(w, self.name.as_deref().unwrap_or(""))?;
            }
            Ok(())
        })?;
        write_seq_with(w, &self.params, |w, p| {
            appendable(w, |w| {
                w.write_u16(p.flags)?;
                p.type_id.encode(w)?;
                match &p.name {
                    MemberDetail::Minimal(h) => w.write_bytes(h)?,
                    MemberDetail::Complete { name, .. } => write_name(w, name)?,
                }
                p.default.encode(w)
            })
        })
    }

    pub(crate) fn decode(r: &mut Reader<'_>, k: EquivalenceKind) -> Result<Self, DecodeError> {
        let flags = r.read_u16()?;
        let name = read_appendable(r, |r| {
            if k == EquivalenceKind::Complete {
                read_name(r).map(Some)
            } else {
                Ok(None)
            }
        })?;
        let params = read_seq_with(r, "annotation parameters", 8, |r| {
            read_appendable(r, |r| {
                let flags = r.read_u16()?;
                let type_id = TypeIdentifier::decode(r)?;
                let name = match k {
                    EquivalenceKind::Minimal => MemberDetail::Minimal(read_array(r)?),
                    EquivalenceKind::Complete => MemberDetail::Complete {
                        name: read_name(r)?,
                        annotations: Default::default(),
                    },
                };
                Ok(AnnotationParam {
                    flags,
                    type_id,
                    name,
                    default: AnnotationValue::decode(r)?,
                })
            })
        })?;
        Ok(AnnotationDef {
            flags,
            name,
            params,
        })
    }
}
