//! Annotations carried by complete TypeObjects: parameter values, applied annotations, the
//! builtin member annotations (`@unit`, `@min`, `@max`, `@hash_id`) and `@verbatim`.

use tachyon_cdr::{DecodeError, EncodeError, Reader, Writer};

use crate::codec::{
    appendable, read_appendable, read_array, read_opt, read_seq, write_opt, write_seq, Codec,
};
use crate::identifier::TypeIdentifier;

/// A literal value of an annotation parameter (`AnnotationParameterValue`).
#[derive(Debug, Clone, PartialEq)]
pub enum AnnotationValue {
    /// `boolean`
    Boolean(bool),
    /// `octet`
    Byte(u8),
    /// `int8`
    Int8(i8),
    /// `uint8`
    UInt8(u8),
    /// `short`
    Int16(i16),
    /// `unsigned short`
    UInt16(u16),
    /// `long`
    Int32(i32),
    /// `unsigned long`
    UInt32(u32),
    /// `long long`
    Int64(i64),
    /// `unsigned long long`
    UInt64(u64),
    /// `float`
    Float32(f32),
    /// `double`
    Float64(f64),
    /// `char`
    Char8(u8),
    /// An enumerator's value.
    Enum(i32),
    /// `string<128>`
    String(String),
    /// A kind this version does not know (an `ExtendedAnnotationParameterValue`), with its
    /// discriminator.
    Extended(u8),
}

impl Codec for AnnotationValue {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        match self {
            AnnotationValue::Boolean(v) => {
                w.write_u8(0x01)?;
                w.write_bool(*v)
            }
            AnnotationValue::Byte(v) => {
                w.write_u8(0x02)?;
                w.write_u8(*v)
            }
            AnnotationValue::Int8(v) => {
                w.write_u8(0x0C)?;
                w.write_i8(*v)
            }
            AnnotationValue::UInt8(v) => {
                w.write_u8(0x0D)?;
                w.write_u8(*v)
            }
            AnnotationValue::Int16(v) => {
                w.write_u8(0x03)?;
                w.write_i16(*v)
            }
            AnnotationValue::UInt16(v) => {
                w.write_u8(0x06)?;
                w.write_u16(*v)
            }
            AnnotationValue::Int32(v) => {
                w.write_u8(0x04)?;
                w.write_i32(*v)
            }
            AnnotationValue::UInt32(v) => {
                w.write_u8(0x07)?;
                w.write_u32(*v)
            }
            AnnotationValue::Int64(v) => {
                w.write_u8(0x05)?;
                w.write_i64(*v)
            }
            AnnotationValue::UInt64(v) => {
                w.write_u8(0x08)?;
                w.write_u64(*v)
            }
            AnnotationValue::Float32(v) => {
                w.write_u8(0x09)?;
                w.write_f32(*v)
            }
            AnnotationValue::Float64(v) => {
                w.write_u8(0x0A)?;
                w.write_f64(*v)
            }
            AnnotationValue::Char8(v) => {
                w.write_u8(0x10)?;
                w.write_u8(*v)
            }
            AnnotationValue::Enum(v) => {
                w.write_u8(0x40)?;
                w.write_i32(*v)
            }
            AnnotationValue::String(s) => {
                w.write_u8(0x20)?;
                w.write_string(s, Some(128))
            }
            AnnotationValue::Extended(d) => {
                w.write_u8(*d)?;
                // An empty mutable struct: its DHEADER alone.
                appendable(w, |_| Ok(()))
            }
        }
    }

    fn decode(r: &mut Reader<'_>) -> Result<AnnotationValue, DecodeError> {
        let d = r.read_u8()?;
        Ok(match d {
            0x01 => AnnotationValue::Boolean(r.read_bool()?),
            0x02 => AnnotationValue::Byte(r.read_u8()?),
            0x0C => AnnotationValue::Int8(r.read_i8()?),
            0x0D => AnnotationValue::UInt8(r.read_u8()?),
            0x03 => AnnotationValue::Int16(r.read_i16()?),
            0x06 => AnnotationValue::UInt16(r.read_u16()?),
            0x04 => AnnotationValue::Int32(r.read_i32()?),
            0x07 => AnnotationValue::UInt32(r.read_u32()?),
            0x05 => AnnotationValue::Int64(r.read_i64()?),
            0x08 => AnnotationValue::UInt64(r.read_u64()?),
            0x09 => AnnotationValue::Float32(r.read_f32()?),
            0x0A => AnnotationValue::Float64(r.read_f64()?),
            0x10 => AnnotationValue::Char8(r.read_u8()?),
            0x40 => AnnotationValue::Enum(r.read_i32()?),
            0x20 => AnnotationValue::String(r.read_str(Some(128))?.to_owned()),
            other => {
                read_appendable(r, |_| Ok(()))?;
                AnnotationValue::Extended(other)
            }
        })
    }
}

/// A parameter of an applied annotation.
#[derive(Debug, Clone, PartialEq)]
pub struct AppliedParameter {
    /// MD5 of the parameter name, first 4 bytes.
    pub name_hash: [u8; 4],
    /// Its value.
    pub value: AnnotationValue,
}

impl Codec for AppliedParameter {
    const MIN_SIZE: usize = 9;
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        appendable(w, |w| {
            w.write_bytes(&self.name_hash)?;
            self.value.encode(w)
        })
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        read_appendable(r, |r| {
            Ok(AppliedParameter {
                name_hash: read_array(r)?,
                value: AnnotationValue::decode(r)?,
            })
        })
    }
}

/// A user annotation applied to a type or member.
#[derive(Debug, Clone, PartialEq)]
pub struct AppliedAnnotation {
    /// The annotation's type.
    pub annotation: TypeIdentifier,
    /// Its parameters, if any were given.
    pub params: Option<Vec<AppliedParameter>>,
}

impl Codec for AppliedAnnotation {
    const MIN_SIZE: usize = 6;
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        appendable(w, |w| {
            self.annotation.encode(w)?;
            write_opt(w, &self.params, |w, p| write_seq(w, p))
        })
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        read_appendable(r, |r| {
            Ok(AppliedAnnotation {
                annotation: TypeIdentifier::decode(r)?,
                params: read_opt(r, |r| read_seq(r, "annotation parameters"))?,
            })
        })
    }
}

/// `@verbatim(placement, language, text)`.
#[derive(Debug, Clone, PartialEq)]
pub struct Verbatim {
    /// Where the text goes (`string<32>`).
    pub placement: String,
    /// For which language (`string<32>`).
    pub language: String,
    /// The text.
    pub text: String,
}

/// The builtin annotations of a type (`AppliedBuiltinTypeAnnotations`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BuiltinTypeAnnotations {
    /// `@verbatim`
    pub verbatim: Option<Verbatim>,
}

impl Codec for BuiltinTypeAnnotations {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        appendable(w, |w| {
            write_opt(w, &self.verbatim, |w, v| {
                w.write_string(&v.placement, Some(32))?;
                w.write_string(&v.language, Some(32))?;
                w.write_string(&v.text, None)
            })
        })
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        read_appendable(r, |r| {
            Ok(BuiltinTypeAnnotations {
                verbatim: read_opt(r, |r| {
                    Ok(Verbatim {
                        placement: r.read_str(Some(32))?.to_owned(),
                        language: r.read_str(Some(32))?.to_owned(),
                        text: r.read_str(None)?.to_owned(),
                    })
                })?,
            })
        })
    }
}

/// The builtin annotations of a member (`AppliedBuiltinMemberAnnotations`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BuiltinMemberAnnotations {
    /// `@unit`
    pub unit: Option<String>,
    /// `@min` (or the low end of `@range`)
    pub min: Option<AnnotationValue>,
    /// `@max` (or the high end of `@range`)
    pub max: Option<AnnotationValue>,
    /// `@hash_id`
    pub hash_id: Option<String>,
}

impl Codec for BuiltinMemberAnnotations {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        appendable(w, |w| {
            write_opt(w, &self.unit, |w, s| w.write_string(s, None))?;
            write_opt(w, &self.min, |w, v| v.encode(w))?;
            write_opt(w, &self.max, |w, v| v.encode(w))?;
            write_opt(w, &self.hash_id, |w, s| w.write_string(s, None))
        })
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        read_appendable(r, |r| {
            let mut a = BuiltinMemberAnnotations::default();
            // Members a sender left out (an older version of the structure) stay absent.
            if r.at_end() {
                return Ok(a);
            }
            a.unit = read_opt(r, |r| Ok(r.read_str(None)?.to_owned()))?;
            if r.at_end() {
                return Ok(a);
            }
            a.min = read_opt(r, AnnotationValue::decode)?;
            if r.at_end() {
                return Ok(a);
            }
            a.max = read_opt(r, AnnotationValue::decode)?;
            if r.at_end() {
                return Ok(a);
            }
            a.hash_id = read_opt(r, |r| Ok(r.read_str(None)?.to_owned()))?;
            Ok(a)
        })
    }
}

/// The annotations of a member, an element or an alias body (complete only).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MemberAnnotations {
    /// The builtin ones.
    pub builtin: Option<BuiltinMemberAnnotations>,
    /// User annotations.
    pub custom: Option<Vec<AppliedAnnotation>>,
}

impl Codec for MemberAnnotations {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        write_opt(w, &self.builtin, |w, b| b.encode(w))?;
        write_opt(w, &self.custom, |w, c| write_seq(w, c))
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(MemberAnnotations {
            builtin: read_opt(r, BuiltinMemberAnnotations::decode)?,
            custom: read_opt(r, |r| read_seq(r, "annotations"))?,
        })
    }
}

/// The annotations of a type or a union discriminator (complete only).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TypeAnnotations {
    /// The builtin ones.
    pub builtin: Option<BuiltinTypeAnnotations>,
    /// User annotations.
    pub custom: Option<Vec<AppliedAnnotation>>,
}

impl Codec for TypeAnnotations {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        write_opt(w, &self.builtin, |w, b| b.encode(w))?;
        write_opt(w, &self.custom, |w, c| write_seq(w, c))
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        Ok(TypeAnnotations {
            builtin: read_opt(r, BuiltinTypeAnnotations::decode)?,
            custom: read_opt(r, |r| read_seq(r, "annotations"))?,
        })
    }
}
