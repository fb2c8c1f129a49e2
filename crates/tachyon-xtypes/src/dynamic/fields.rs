//! Dynamic values read by content filters: [`Fields`] for [`Value`] (members by name, `a.b`
//! into nested structs), and [`field_kind`], what a member path names in a described type —
//! what the DDS SQL filter of `tachyon_proto::filter` checks an expression against.

use tachyon_cdr::{FieldValue, Fields, Primitive, TypeDesc};

use super::decode::all_members;
use super::unalias;
use super::value::Value;

impl Fields for Value {
    fn field(&self, path: &[&str]) -> Option<FieldValue<'_>> {
        let mut v = self;
        for name in path {
            v = v.field(name)?;
        }
        Some(match v {
            Value::Bool(b) => FieldValue::Bool(*b),
            Value::Byte(x) | Value::UInt8(x) => FieldValue::UInt(u64::from(*x)),
            Value::Int8(x) => FieldValue::Int(i64::from(*x)),
            Value::Int16(x) => FieldValue::Int(i64::from(*x)),
            Value::UInt16(x) => FieldValue::UInt(u64::from(*x)),
            Value::Int32(x) => FieldValue::Int(i64::from(*x)),
            Value::UInt32(x) => FieldValue::UInt(u64::from(*x)),
            Value::Int64(x) => FieldValue::Int(*x),
            Value::UInt64(x) => FieldValue::UInt(*x),
            Value::Float32(x) => FieldValue::Float(f64::from(*x)),
            Value::Float64(x) => FieldValue::Float(*x),
            Value::Char8(c) => FieldValue::Char(*c),
            Value::String(s) => FieldValue::Str(s),
            Value::Enum { value, name } => FieldValue::Enum {
                value: *value,
                name: name.as_deref().unwrap_or(""),
            },
            _ => return None,
        })
    }
}

/// What the member at `path` of type `desc` is, as a filter sees it (the shapes of
/// `tachyon_cdr::FieldKind`, with owned names): `None` when there is no such member.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DynFieldKind {
    /// `boolean`.
    Bool,
    /// `char`.
    Char,
    /// A signed integer.
    Int,
    /// An unsigned integer (octets included).
    UInt,
    /// `float` or `double`.
    Float,
    /// `string`.
    String,
    /// An enumeration and its enumerators (name, value).
    Enum(Vec<(String, i32)>),
    /// A struct and the names of its members.
    Struct(Vec<String>),
    /// A member a filter cannot read, and what it is.
    Unsupported(&'static str),
}

/// The kind of the member at `path` of `desc` (empty: the type itself).
pub fn field_kind(desc: &TypeDesc, path: &[&str]) -> Option<DynFieldKind> {
    let mut t = desc;
    for name in path {
        let TypeDesc::Struct(s) = unalias(t) else {
            return None;
        };
        t = &all_members(s).into_iter().find(|m| m.name == *name)?.ty;
    }
    Some(match unalias(t) {
        TypeDesc::Primitive(p) => match p {
            Primitive::Boolean => DynFieldKind::Bool,
            Primitive::Char8 => DynFieldKind::Char,
            Primitive::Byte | Primitive::UInt8 | Primitive::UInt16 => DynFieldKind::UInt,
            Primitive::UInt32 | Primitive::UInt64 => DynFieldKind::UInt,
            Primitive::Int8 | Primitive::Int16 | Primitive::Int32 | Primitive::Int64 => {
                DynFieldKind::Int
            }
            Primitive::Float32 | Primitive::Float64 => DynFieldKind::Float,
            Primitive::Float128 => DynFieldKind::Unsupported("long double"),
            Primitive::Char16 => DynFieldKind::Unsupported("wchar"),
        },
        TypeDesc::String { wide: false, .. } => DynFieldKind::String,
        TypeDesc::String { wide: true, .. } => DynFieldKind::Unsupported("wstring"),
        TypeDesc::Enum(e) => DynFieldKind::Enum(
            e.literals
                .iter()
                .map(|l| (l.name.clone(), l.value))
                .collect(),
        ),
        TypeDesc::Struct(s) => {
            DynFieldKind::Struct(all_members(s).iter().map(|m| m.name.clone()).collect())
        }
        TypeDesc::Bitmask(_) => DynFieldKind::Unsupported("bitmask"),
        TypeDesc::Sequence { .. } => DynFieldKind::Unsupported("sequence"),
        TypeDesc::Array { .. } => DynFieldKind::Unsupported("array"),
        TypeDesc::Map { .. } => DynFieldKind::Unsupported("map"),
        TypeDesc::Union(_) => DynFieldKind::Unsupported("union"),
        TypeDesc::Alias(_) => DynFieldKind::Unsupported("typedef"),
    })
}
