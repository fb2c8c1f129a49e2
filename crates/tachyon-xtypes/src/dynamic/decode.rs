//! Reading a serialized sample of a described type.

use tachyon_cdr::{
    CaseDesc, DecodeError, DecodeErrorKind, EncapsulationHeader, Extensibility, MemberDesc,
    Primitive, Reader, StructDesc, TypeDesc, UnionDesc, XcdrVersion,
};

use super::value::Value;
use super::{holder_size, is_primitive, leaf, unalias};

/// Decodes a serialized sample of type `desc`, encapsulation header included.
pub fn decode(desc: &TypeDesc, payload: &[u8]) -> Result<Value, DecodeError> {
    let header = EncapsulationHeader::parse(payload)?;
    let enc = header.encapsulation;
    let mut body = &payload[4..];
    // An appendable struct in XCDR1 has no DHEADER: the padding is not its members.
    let appendable = matches!(unalias(desc), TypeDesc::Struct(s) if s.extensibility == Extensibility::Appendable);
    if appendable && enc.version() == XcdrVersion::Xcdr1 {
        body = &body[..body.len().saturating_sub(header.padding())];
    }
    let mut r = Reader::new(body, enc.version(), enc.endianness(), 4);
    decode_body(desc, &mut r)
}

/// Decodes a value of type `desc` from `r` (no encapsulation header).
pub fn decode_body(desc: &TypeDesc, r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    r.enter()?;
    let v = value(desc, r);
    r.leave();
    v
}

fn value(desc: &TypeDesc, r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    Ok(match unalias(desc) {
        TypeDesc::Primitive(p) => primitive(*p, r)?,
        TypeDesc::String { wide: false, bound } => {
            Value::String(r.read_str((*bound != 0).then_some(*bound))?.to_owned())
        }
        TypeDesc::String { wide: true, bound } => {
            // XCDR2 wstring: byte length, then UTF-16 code units, no terminator.
            let n = r.read_count("wstring", 1, (*bound != 0).then(|| bound.saturating_mul(2)))?;
            let units: Vec<u16> = r
                .read_bytes(n)?
                .chunks_exact(2)
                .map(|c| match r.endianness() {
                    tachyon_cdr::Endianness::Little => u16::from_le_bytes([c[0], c[1]]),
                    tachyon_cdr::Endianness::Big => u16::from_be_bytes([c[0], c[1]]),
                })
                .collect();
            Value::String(String::from_utf16_lossy(&units))
        }
        TypeDesc::Enum(e) => {
            let v = read_holder(holder_size(e.bit_bound), r)?;
            let v = v as i32;
            let name = e
                .literals
                .iter()
                .find(|l| l.value == v)
                .map(|l| l.name.clone());
            if name.is_none() {
                return Err(r.error(DecodeErrorKind::UnknownEnumValue {
                    type_name: "enum",
                    value: i64::from(v),
                }));
            }
            Value::Enum { value: v, name }
        }
        TypeDesc::Bitmask(b) => Value::Bitmask(read_holder(holder_size(b.bit_bound), r)? as u64),
        TypeDesc::Sequence { element, bound } => {
            let bound = (*bound != 0).then_some(*bound);
            let min = min_size(element);
            if r.is_xcdr2() && !is_primitive(element) {
                let region = r.begin_delimited()?;
                let v = (|| {
                    let n = r.read_count("sequence", min, bound)?;
                    list(element, n, r)
                })();
                r.end_region(region);
                v?
            } else {
                let n = r.read_count("sequence", min, bound)?;
                list(element, n, r)?
            }
        }
        TypeDesc::Array { element, dims } => {
            if r.is_xcdr2() && !is_primitive(leaf(element)) {
                let region = r.begin_delimited()?;
                let v = array(element, dims, r);
                r.end_region(region);
                v?
            } else {
                array(element, dims, r)?
            }
        }
        TypeDesc::Map {
            key,
            value: val,
            bound,
        } => {
            let bound = (*bound != 0).then_some(*bound);
            let delimited = r.is_xcdr2() && !(is_primitive(key) && is_primitive(val));
            let region = if delimited {
                Some(r.begin_delimited()?)
            } else {
                None
            };
            let v = (|| {
                let n = r.read_count("map", min_size(key) + min_size(val), bound)?;
                let mut out = Vec::with_capacity(n.min(r.remaining()));
                for _ in 0..n {
                    let k = nested(key, r)?;
                    let x = nested(val, r)?;
                    out.push((k, x));
                }
                Ok(Value::Map(out))
            })();
            if let Some(region) = region {
                r.end_region(region);
            }
            v?
        }
        TypeDesc::Struct(s) => structure(s, r)?,
        TypeDesc::Union(u) => union(u, r)?,
        TypeDesc::Alias(_) => {
            return Err(r.error(DecodeErrorKind::InvalidMemberHeader {
                reason: "typedefs nest too deeply",
            }))
        }
    })
}

/// A nested value: one level deeper (bounded by the reader's depth limit).
fn nested(desc: &TypeDesc, r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    decode_body(desc, r)
}

fn list(element: &TypeDesc, n: usize, r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    let mut out = Vec::with_capacity(n.min(r.remaining()));
    for _ in 0..n {
        out.push(nested(element, r)?);
    }
    Ok(Value::List(out))
}

fn array(element: &TypeDesc, dims: &[u32], r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    let Some((&n, rest)) = dims.split_first() else {
        return nested(element, r);
    };
    let need = (n as usize).saturating_mul(min_size(element));
    if need > r.remaining() {
        return Err(r.error(DecodeErrorKind::LengthExceedsInput {
            what: "array",
            len: n.into(),
            remaining: r.remaining(),
        }));
    }
    let mut out = Vec::with_capacity(n as usize);
    for _ in 0..n {
        out.push(array(element, rest, r)?);
    }
    Ok(Value::List(out))
}

/// The fewest bytes one value of the type takes (sequence counts are checked against it).
fn min_size(t: &TypeDesc) -> usize {
    match unalias(t) {
        TypeDesc::Primitive(p) => p.size(),
        TypeDesc::Enum(e) => holder_size(e.bit_bound),
        TypeDesc::Bitmask(b) => holder_size(b.bit_bound),
        _ => 1,
    }
}

fn read_holder(size: usize, r: &mut Reader<'_>) -> Result<i64, DecodeError> {
    Ok(match size {
        1 => i64::from(r.read_u8()?),
        2 => i64::from(r.read_u16()?),
        4 => i64::from(r.read_i32()?),
        _ => r.read_i64()?,
    })
}

fn primitive(p: Primitive, r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    Ok(match p {
        Primitive::Boolean => Value::Bool(r.read_bool()?),
        Primitive::Byte => Value::Byte(r.read_u8()?),
        Primitive::Int8 => Value::Int8(r.read_i8()?),
        Primitive::UInt8 => Value::UInt8(r.read_u8()?),
        Primitive::Int16 => Value::Int16(r.read_i16()?),
        Primitive::UInt16 => Value::UInt16(r.read_u16()?),
        Primitive::Int32 => Value::Int32(r.read_i32()?),
        Primitive::UInt32 => Value::UInt32(r.read_u32()?),
        Primitive::Int64 => Value::Int64(r.read_i64()?),
        Primitive::UInt64 => Value::UInt64(r.read_u64()?),
        Primitive::Float32 => Value::Float32(r.read_f32()?),
        Primitive::Float64 => Value::Float64(r.read_f64()?),
        Primitive::Float128 => {
            r.align(if r.is_xcdr2() { 4 } else { 8 })?;
            let mut b = [0u8; 16];
            b.copy_from_slice(r.read_bytes(16)?);
            Value::Float128(b)
        }
        Primitive::Char8 => Value::Char8(r.read_char()?),
        Primitive::Char16 => Value::Char16(r.read_u16()?),
    })
}

/// The members of a struct and its bases, bases first.
pub(crate) fn all_members(s: &StructDesc) -> Vec<&MemberDesc> {
    let mut out = match &s.base {
        Some(b) => all_members(b),
        None => Vec::new(),
    };
    out.extend(s.members.iter());
    out
}

fn structure(s: &StructDesc, r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    let members = all_members(s);
    match s.extensibility {
        Extensibility::Final => {
            let mut out = Vec::with_capacity(members.len());
            for m in &members {
                out.push((m.name.clone(), member(m, r)?));
            }
            Ok(Value::Struct(out))
        }
        Extensibility::Appendable => {
            let region = r.begin_delimited()?;
            let v = (|| {
                let mut out = Vec::with_capacity(members.len());
                for m in &members {
                    // A writer of an older version of the type ended here.
                    let v = if r.at_end() {
                        (!m.optional).then(|| default(&m.ty))
                    } else {
                        member(m, r)?
                    };
                    out.push((m.name.clone(), v));
                }
                Ok(Value::Struct(out))
            })();
            r.end_region(region);
            v
        }
        Extensibility::Mutable => {
            let region = r.begin_delimited()?;
            let v = (|| {
                let mut got: Vec<Option<Value>> = vec![None; members.len()];
                while let Some(h) = r.next_member()? {
                    match members.iter().position(|m| m.id == h.id) {
                        Some(i) => {
                            let ty = &members[i].ty;
                            got[i] = Some(r.member_value(&h, |r| nested(ty, r))?);
                        }
                        None => r.skip_member(&h)?,
                    }
                }
                Ok(Value::Struct(
                    members
                        .iter()
                        .zip(got)
                        .map(|(m, v)| {
                            let v = v.or_else(|| (!m.optional).then(|| default(&m.ty)));
                            (m.name.clone(), v)
                        })
                        .collect(),
                ))
            })();
            r.end_region(region);
            v
        }
    }
}

/// A member of a final or appendable struct: optional ones carry a presence flag (XCDR2) or
/// a parameter header (XCDR1).
fn member(m: &MemberDesc, r: &mut Reader<'_>) -> Result<Option<Value>, DecodeError> {
    if !m.optional {
        return nested(&m.ty, r).map(Some);
    }
    if r.is_xcdr2() {
        return if r.read_bool()? {
            nested(&m.ty, r).map(Some)
        } else {
            Ok(None)
        };
    }
    match r.begin_optional1(m.id)? {
        None => Ok(None),
        Some(region) => {
            let v = nested(&m.ty, r);
            r.end_region(region);
            v.map(Some)
        }
    }
}

fn union(u: &UnionDesc, r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    if u.extensibility == Extensibility::Mutable {
        return Err(r.error(DecodeErrorKind::InvalidMemberHeader {
            reason: "mutable unions are not supported",
        }));
    }
    let region = if u.extensibility == Extensibility::Appendable {
        Some(r.begin_delimited()?)
    } else {
        None
    };
    let v = (|| {
        let d = nested(&u.discriminator, r)?;
        let member = match select_case(u, &d) {
            Some(c) => Some((c.name.clone(), Box::new(nested(&c.ty, r)?))),
            None => None,
        };
        Ok(Value::Union {
            discriminator: Box::new(d),
            member,
        })
    })();
    if let Some(region) = region {
        r.end_region(region);
    }
    v
}

/// The case a discriminator selects: the one with its value among its labels, else the
/// `default:` one, else none.
pub(crate) fn select_case<'a>(u: &'a UnionDesc, discriminator: &Value) -> Option<&'a CaseDesc> {
    let label = discriminator.as_i64().unwrap_or(0);
    u.cases
        .iter()
        .find(|c| c.labels.iter().any(|l| i64::from(*l) == label))
        .or_else(|| u.cases.iter().find(|c| c.default))
}

/// The value a member takes when an appendable or mutable encoding leaves it out.
pub fn default(t: &TypeDesc) -> Value {
    default_at(t, 0)
}

fn default_at(t: &TypeDesc, depth: usize) -> Value {
    if depth > 64 {
        return Value::Struct(Vec::new());
    }
    let d = depth + 1;
    match unalias(t) {
        TypeDesc::Primitive(p) => match p {
            Primitive::Boolean => Value::Bool(false),
            Primitive::Byte => Value::Byte(0),
            Primitive::Int8 => Value::Int8(0),
            Primitive::UInt8 => Value::UInt8(0),
            Primitive::Int16 => Value::Int16(0),
            Primitive::UInt16 => Value::UInt16(0),
            Primitive::Int32 => Value::Int32(0),
            Primitive::UInt32 => Value::UInt32(0),
            Primitive::Int64 => Value::Int64(0),
            Primitive::UInt64 => Value::UInt64(0),
            Primitive::Float32 => Value::Float32(0.0),
            Primitive::Float64 => Value::Float64(0.0),
            Primitive::Float128 => Value::Float128([0; 16]),
            Primitive::Char8 => Value::Char8('\0'),
            Primitive::Char16 => Value::Char16(0),
        },
        TypeDesc::String { .. } => Value::String(String::new()),
        TypeDesc::Enum(e) => {
            let l = e.literals.iter().find(|l| l.default).or(e.literals.first());
            Value::Enum {
                value: l.map_or(0, |l| l.value),
                name: l.map(|l| l.name.clone()),
            }
        }
        TypeDesc::Bitmask(_) => Value::Bitmask(0),
        TypeDesc::Sequence { .. } | TypeDesc::Map { .. } => Value::List(Vec::new()),
        TypeDesc::Array { element, dims } => {
            fn fill(e: &TypeDesc, dims: &[u32], d: usize) -> Value {
                match dims.split_first() {
                    None => default_at(e, d),
                    Some((&n, rest)) => {
                        Value::List((0..n.min(1 << 16)).map(|_| fill(e, rest, d)).collect())
                    }
                }
            }
            fill(element, dims, d)
        }
        TypeDesc::Struct(s) => Value::Struct(
            all_members(s)
                .into_iter()
                .map(|m| (m.name.clone(), (!m.optional).then(|| default_at(&m.ty, d))))
                .collect(),
        ),
        TypeDesc::Union(u) => {
            let disc = default_at(&u.discriminator, d);
            let member =
                select_case(u, &disc).map(|c| (c.name.clone(), Box::new(default_at(&c.ty, d))));
            Value::Union {
                discriminator: Box::new(disc),
                member,
            }
        }
        TypeDesc::Alias(_) => Value::Struct(Vec::new()),
    }
}
