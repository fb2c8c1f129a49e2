//! Enums, bitmasks and bitsets.

use tachyon_cdr::{DecodeError, EncodeError, Reader, Writer};

use super::{read_detail, write_detail, MemberDetail, TypeDetail};
use crate::codec::{appendable, read_appendable, read_seq_with, write_seq_with};
use crate::identifier::EquivalenceKind;

/// An enum's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumDef {
    /// `EnumTypeFlag` (Cyclone DDS sets IS_FINAL).
    pub flags: u16,
    /// `@bit_bound`
    pub bit_bound: u16,
    /// Name and annotations (complete).
    pub detail: Option<TypeDetail>,
    /// The enumerators.
    pub literals: Vec<LiteralDef>,
}

/// An enumerator.
#[derive(Debug, Clone, PartialEq)]
pub struct LiteralDef {
    /// Its value.
    pub value: i32,
    /// Flags (IS_DEFAULT).
    pub flags: u16,
    /// Its name.
    pub detail: MemberDetail,
}

/// Writes an `EnumeratedHeader` (enums and bitmasks share it).
fn write_header(
    w: &mut Writer<'_>,
    k: EquivalenceKind,
    bit_bound: u16,
    detail: &Option<TypeDetail>,
) -> Result<(), EncodeError> {
    appendable(w, |w| {
        w.write_u16(bit_bound)?;
        write_detail(w, k, detail)
    })
}

fn read_header(
    r: &mut Reader<'_>,
    k: EquivalenceKind,
) -> Result<(u16, Option<TypeDetail>), DecodeError> {
    read_appendable(r, |r| Ok((r.read_u16()?, read_detail(r, k)?)))
}

impl EnumDef {
    pub(crate) fn encode(&self, w: &mut Writer<'_>, k: EquivalenceKind) -> Result<(), EncodeError> {
        w.write_u16(self.flags)?;
        write_header(w, k, self.bit_bound, &self.detail)?;
        write_seq_with(w, &self.literals, |w, l| {
            appendable(w, |w| {
                appendable(w, |w| {
                    w.write_i32(l.value)?;
                    w.write_u16(l.flags)
                })?;
                l.detail.encode(w)
            })
        })
    }

    pub(crate) fn decode(r: &mut Reader<'_>, k: EquivalenceKind) -> Result<Self, DecodeError> {
        let flags = r.read_u16()?;
        let (bit_bound, detail) = read_header(r, k)?;
        let literals = read_seq_with(r, "enumerators", 14, |r| {
            read_appendable(r, |r| {
                let (value, flags) = read_appendable(r, |r| Ok((r.read_i32()?, r.read_u16()?)))?;
                Ok(LiteralDef {
                    value,
                    flags,
                    detail: MemberDetail::decode(r, k)?,
                })
            })
        })?;
        Ok(EnumDef {
            flags,
            bit_bound,
            detail,
            literals,
        })
    }
}

/// A bitmask's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct BitmaskDef {
    /// `BitmaskTypeFlag` (unused).
    pub flags: u16,
    /// `@bit_bound`
    pub bit_bound: u16,
    /// Name and annotations (complete).
    pub detail: Option<TypeDetail>,
    /// The flags.
    pub bitflags: Vec<BitflagDef>,
}

/// A flag of a bitmask.
#[derive(Debug, Clone, PartialEq)]
pub struct BitflagDef {
    /// Its bit.
    pub position: u16,
    /// Flags (unused).
    pub flags: u16,
    /// Its name.
    pub detail: MemberDetail,
}

impl BitmaskDef {
    pub(crate) fn encode(&self, w: &mut Writer<'_>, k: EquivalenceKind) -> Result<(), EncodeError> {
        appendable(w, |w| {
            w.write_u16(self.flags)?;
            write_header(w, k, self.bit_bound, &self.detail)?;
            write_seq_with(w, &self.bitflags, |w, f| {
                appendable(w, |w| {
                    w.write_u16(f.position)?;
                    w.write_u16(f.flags)?;
                    f.detail.encode(w)
                })
            })
        })
    }

    pub(crate) fn decode(r: &mut Reader<'_>, k: EquivalenceKind) -> Result<Self, DecodeError> {
        read_appendable(r, |r| {
            let flags = r.read_u16()?;
            let (bit_bound, detail) = read_header(r, k)?;
            let bitflags = read_seq_with(r, "bitmask flags", 12, |r| {
                read_appendable(r, |r| {
                    Ok(BitflagDef {
                        position: r.read_u16()?,
                        flags: r.read_u16()?,
                        detail: MemberDetail::decode(r, k)?,
                    })
                })
            })?;
            Ok(BitmaskDef {
                flags,
                bit_bound,
                detail,
                bitflags,
            })
        })
    }
}

/// A bitset's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct BitsetDef {
    /// `BitsetTypeFlag` (unused).
    pub flags: u16,
    /// Name and annotations (complete).
    pub detail: Option<TypeDetail>,
    /// The bit fields.
    pub fields: Vec<BitfieldDef>,
}

/// A field of a bitset.
#[derive(Debug, Clone, PartialEq)]
pub struct BitfieldDef {
    /// Its first bit.
    pub position: u16,
    /// Flags (unused).
    pub flags: u16,
    /// Its width in bits.
    pub bitcount: u8,
    /// The `TK_*` of the integer type holding it.
    pub holder_type: u8,
    /// Its name.
    pub detail: MemberDetail,
}

impl BitsetDef {
    pub(crate) fn encode(&self, w: &mut Writer<'_>, k: EquivalenceKind) -> Result<(), EncodeError> {
        appendable(w, |w| {
            w.write_u16(self.flags)?;
            appendable(w, |w| write_detail(w, k, &self.detail))?;
            write_seq_with(w, &self.fields, |w, f| {
                appendable(w, |w| {
                    w.write_u16(f.position)?;
                    w.write_u16(f.flags)?;
                    w.write_u8(f.bitcount)?;
                    w.write_u8(f.holder_type)?;
                    f.detail.encode(w)
                })
            })
        })
    }

    pub(crate) fn decode(r: &mut Reader<'_>, k: EquivalenceKind) -> Result<Self, DecodeError> {
        read_appendable(r, |r| {
            let flags = r.read_u16()?;
            let detail = read_appendable(r, |r| read_detail(r, k))?;
            let fields = read_seq_with(r, "bitset fields", 14, |r| {
                read_appendable(r, |r| {
                    Ok(BitfieldDef {
                        position: r.read_u16()?,
                        flags: r.read_u16()?,
                        bitcount: r.read_u8()?,
                        holder_type: r.read_u8()?,
                        detail: MemberDetail::decode(r, k)?,
                    })
                })
            })?;
            Ok(BitsetDef {
                flags,
                detail,
                fields,
            })
        })
    }
}
