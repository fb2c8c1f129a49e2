//! Writing a value of a described type.

use tachyon_cdr::{
    Encapsulation, EncapsulationHeader, EncodeError, Endianness, Extensibility, Primitive,
    StructDesc, TypeDesc, UnionDesc, Writer, XcdrVersion,
};

use super::decode::all_members;
use super::value::Value;
use super::{holder_size, is_primitive, leaf, unalias};

/// A value that does not fit its type.
fn mismatch(what: &'static str) -> EncodeError {
    EncodeError::TypeMismatch(what)
}

/// Encodes `value` of type `desc` with its encapsulation header, padded to a multiple of 4.
pub fn encode(
    desc: &TypeDesc,
    value: &Value,
    version: XcdrVersion,
    endian: Endianness,
) -> Result<Vec<u8>, EncodeError> {
    with_encapsulation(desc, version, endian, |w| encode_body(desc, value, w))
}

/// The bytes [`encode`] makes of `value`: encapsulation header, body and padding.
pub fn encoded_size(
    desc: &TypeDesc,
    value: &Value,
    version: XcdrVersion,
) -> Result<usize, EncodeError> {
    let mut counter = Writer::counter(version, Endianness::Little);
    encode_body(desc, value, &mut counter)?;
    Ok(4 + counter.position().div_ceil(4) * 4)
}

/// Encodes `value` as [`encode`] does into `buf` (at least [`encoded_size`] bytes); returns
/// the bytes written.
pub fn encode_into(
    desc: &TypeDesc,
    value: &Value,
    version: XcdrVersion,
    endian: Endianness,
    buf: &mut [u8],
) -> Result<usize, EncodeError> {
    encapsulate(desc, version, endian, buf, |w| encode_body(desc, value, w))
}

/// The encapsulation header of `desc`'s representation in `version`, the body `f` writes
/// (run twice: once to count), and the padding to a multiple of 4.
pub(crate) fn with_encapsulation(
    desc: &TypeDesc,
    version: XcdrVersion,
    endian: Endianness,
    f: impl Fn(&mut Writer<'_>) -> Result<(), EncodeError>,
) -> Result<Vec<u8>, EncodeError> {
    let mut counter = Writer::counter(version, endian);
    f(&mut counter)?;
    let mut buf = vec![0u8; 4 + counter.position().div_ceil(4) * 4];
    let n = encapsulate(desc, version, endian, &mut buf, f)?;
    buf.truncate(n);
    Ok(buf)
}

/// Writes the encapsulation header, the body `f` writes and the padding into `buf`.
fn encapsulate(
    desc: &TypeDesc,
    version: XcdrVersion,
    endian: Endianness,
    buf: &mut [u8],
    f: impl FnOnce(&mut Writer<'_>) -> Result<(), EncodeError>,
) -> Result<usize, EncodeError> {
    let capacity = buf.len();
    let Some((head, rest)) = buf.split_first_chunk_mut::<4>() else {
        return Err(EncodeError::BufferTooSmall {
            needed: 4,
            capacity,
        });
    };
    let mut w = Writer::new(rest, version, endian);
    f(&mut w)?;
    let len = w.position();
    w.align(4)?;
    let padded = w.position();
    let ext = match unalias(desc) {
        TypeDesc::Struct(s) => s.extensibility,
        TypeDesc::Union(u) => u.extensibility,
        _ => Extensibility::Final,
    };
    let header = EncapsulationHeader {
        encapsulation: Encapsulation::for_type(ext, version, endian),
        options: (padded - len) as u16,
    };
    *head = header.to_bytes();
    Ok(4 + padded)
}

/// Encodes `value` of type `desc` into `w` (no encapsulation header).
pub fn encode_body(desc: &TypeDesc, value: &Value, w: &mut Writer<'_>) -> Result<(), EncodeError> {
    encode_at(desc, value, w, 0)
}

fn encode_at(
    desc: &TypeDesc,
    v: &Value,
    w: &mut Writer<'_>,
    depth: usize,
) -> Result<(), EncodeError> {
    if depth > 128 {
        return Err(mismatch("value nested too deeply"));
    }
    let d = depth + 1;
    match (unalias(desc), v) {
        (TypeDesc::Primitive(p), v) => primitive(*p, v, w),
        (TypeDesc::String { wide: false, bound }, Value::String(s)) => {
            w.write_string(s, (*bound != 0).then_some(*bound))
        }
        (TypeDesc::String { wide: true, bound }, Value::String(s)) => {
            let units: Vec<u16> = s.encode_utf16().collect();
            if *bound != 0 && units.len() > *bound as usize {
                return Err(EncodeError::BoundExceeded {
                    what: "wstring",
                    len: units.len(),
                    bound: *bound,
                });
            }
            w.write_len(units.len() * 2)?;
            units.iter().try_for_each(|u| w.write_u16(*u))
        }
        (TypeDesc::Enum(e), Value::Enum { value, .. }) => {
            write_holder(holder_size(e.bit_bound), i64::from(*value), w)
        }
        (TypeDesc::Bitmask(b), Value::Bitmask(bits)) => {
            write_holder(holder_size(b.bit_bound), *bits as i64, w)
        }
        (TypeDesc::Sequence { element, bound }, Value::List(items)) => {
            if *bound != 0 && items.len() > *bound as usize {
                return Err(EncodeError::BoundExceeded {
                    what: "sequence",
                    len: items.len(),
                    bound: *bound,
                });
            }
            let mark = if w.is_xcdr2() && !is_primitive(element) {
                Some(w.begin_dheader()?)
            } else {
                None
            };
            w.write_len(items.len())?;
            for x in items {
                encode_at(element, x, w, d)?;
            }
            if let Some(m) = mark {
                w.end_dheader(m)?;
            }
            Ok(())
        }
        (TypeDesc::Array { element, dims }, Value::List(_)) => {
            let mark = if w.is_xcdr2() && !is_primitive(leaf(element)) {
                Some(w.begin_dheader()?)
            } else {
                None
            };
            array(element, dims, v, w, d)?;
            if let Some(m) = mark {
                w.end_dheader(m)?;
            }
            Ok(())
        }
        (TypeDesc::Map { key, value, bound }, Value::Map(entries)) => {
            if *bound != 0 && entries.len() > *bound as usize {
                return Err(EncodeError::BoundExceeded {
                    what: "map",
                    len: entries.len(),
                    bound: *bound,
                });
            }
            let mark = if w.is_xcdr2() && !(is_primitive(key) && is_primitive(value)) {
                Some(w.begin_dheader()?)
            } else {
                None
            };
            w.write_len(entries.len())?;
            for (k, x) in entries {
                encode_at(key, k, w, d)?;
                encode_at(value, x, w, d)?;
            }
            if let Some(m) = mark {
                w.end_dheader(m)?;
            }
            Ok(())
        }
        (TypeDesc::Struct(s), Value::Struct(members)) => structure(s, members, w, d),
        (
            TypeDesc::Union(u),
            Value::Union {
                discriminator,
                member,
            },
        ) => union(
            u,
            discriminator,
            member.as_ref().map(|(n, v)| (n.as_str(), &**v)),
            w,
            d,
        ),
        _ => Err(mismatch("a value of another type")),
    }
}

fn array(
    element: &TypeDesc,
    dims: &[u32],
    v: &Value,
    w: &mut Writer<'_>,
    d: usize,
) -> Result<(), EncodeError> {
    let Some((&n, rest)) = dims.split_first() else {
        return encode_at(element, v, w, d);
    };
    let Value::List(items) = v else {
        return Err(mismatch("an array value that is no list"));
    };
    if items.len() != n as usize {
        return Err(EncodeError::BoundExceeded {
            what: "array",
            len: items.len(),
            bound: n,
        });
    }
    items.iter().try_for_each(|x| array(element, rest, x, w, d))
}

fn write_holder(size: usize, v: i64, w: &mut Writer<'_>) -> Result<(), EncodeError> {
    match size {
        1 => w.write_u8(v as u8),
        2 => w.write_u16(v as u16),
        4 => w.write_i32(v as i32),
        _ => w.write_i64(v),
    }
}

fn primitive(p: Primitive, v: &Value, w: &mut Writer<'_>) -> Result<(), EncodeError> {
    match (p, v) {
        (Primitive::Boolean, Value::Bool(b)) => w.write_bool(*b),
        (Primitive::Byte, Value::Byte(x)) => w.write_u8(*x),
        (Primitive::Int8, Value::Int8(x)) => w.write_i8(*x),
        (Primitive::UInt8, Value::UInt8(x)) => w.write_u8(*x),
        (Primitive::Int16, Value::Int16(x)) => w.write_i16(*x),
        (Primitive::UInt16, Value::UInt16(x)) => w.write_u16(*x),
        (Primitive::Int32, Value::Int32(x)) => w.write_i32(*x),
        (Primitive::UInt32, Value::UInt32(x)) => w.write_u32(*x),
        (Primitive::Int64, Value::Int64(x)) => w.write_i64(*x),
        (Primitive::UInt64, Value::UInt64(x)) => w.write_u64(*x),
        (Primitive::Float32, Value::Float32(x)) => w.write_f32(*x),
        (Primitive::Float64, Value::Float64(x)) => w.write_f64(*x),
        (Primitive::Float128, Value::Float128(b)) => {
            w.align(if w.is_xcdr2() { 4 } else { 8 })?;
            w.write_bytes(b)
        }
        (Primitive::Char8, Value::Char8(c)) => w.write_char(*c),
        (Primitive::Char16, Value::Char16(x)) => w.write_u16(*x),
        _ => Err(mismatch("a value of another primitive type")),
    }
}

/// The EMHEADER length code of a member of this type, chosen as Cyclone DDS (and the derive)
/// chooses it: 0–3 for 1/2/4/8-byte primitives and enums, 5 for strings and for sequences and
/// arrays that begin with a length or DHEADER, 6/7 for sequences of 4/8-byte primitives, 4
/// otherwise.
pub(crate) fn length_code(t: &TypeDesc) -> u8 {
    let size_code = |n: usize| match n {
        1 => 0,
        2 => 1,
        4 => 2,
        8 => 3,
        _ => 4,
    };
    match unalias(t) {
        TypeDesc::Primitive(p) => size_code(p.size()),
        TypeDesc::Enum(e) => size_code(holder_size(e.bit_bound)),
        TypeDesc::Bitmask(b) => size_code(holder_size(b.bit_bound)),
        TypeDesc::String { .. } => 5,
        TypeDesc::Sequence { element, .. } => {
            if !is_primitive(element) {
                return 5;
            }
            match unalias(element) {
                TypeDesc::Primitive(p) => match p.size() {
                    1 => 5,
                    4 => 6,
                    8 => 7,
                    _ => 4,
                },
                _ => 4,
            }
        }
        TypeDesc::Array { element, .. } => {
            if is_primitive(leaf(element)) {
                4
            } else {
                5
            }
        }
        _ => 4,
    }
}

fn structure(
    s: &StructDesc,
    values: &[(String, Option<Value>)],
    w: &mut Writer<'_>,
    d: usize,
) -> Result<(), EncodeError> {
    let members = all_members(s);
    let get = |name: &str| {
        values
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_ref())
    };
    match s.extensibility {
        Extensibility::Final | Extensibility::Appendable => {
            let mark = if s.extensibility == Extensibility::Appendable {
                Some(w.begin_dheader()?)
            } else {
                None
            };
            for m in &members {
                let v = get(&m.name);
                if !m.optional {
                    let v = v.ok_or(mismatch("a member without its value"))?;
                    encode_at(&m.ty, v, w, d)?;
                } else if w.is_xcdr2() {
                    w.write_bool(v.is_some())?;
                    if let Some(v) = v {
                        encode_at(&m.ty, v, w, d)?;
                    }
                } else {
                    let h = w.begin_member(m.id, m.must_understand, 4)?;
                    if let Some(v) = v {
                        encode_at(&m.ty, v, w, d)?;
                    }
                    w.end_member(h)?;
                }
            }
            if let Some(mark) = mark {
                w.end_dheader(mark)?;
            }
            Ok(())
        }
        Extensibility::Mutable => {
            let mark = w.begin_dheader()?;
            for m in &members {
                let Some(v) = get(&m.name) else {
                    if m.optional {
                        continue;
                    }
                    return Err(mismatch("a member without its value"));
                };
                // XCDR2 flags key members must-understand, as the derive and Cyclone do.
                let mu = m.must_understand || (m.key && w.is_xcdr2());
                let h = w.begin_member(m.id, mu, length_code(&m.ty))?;
                encode_at(&m.ty, v, w, d)?;
                w.end_member(h)?;
            }
            w.end_parameter_list()?;
            w.end_dheader(mark)
        }
    }
}

fn union(
    u: &UnionDesc,
    discriminator: &Value,
    member: Option<(&str, &Value)>,
    w: &mut Writer<'_>,
    d: usize,
) -> Result<(), EncodeError> {
    if u.extensibility == Extensibility::Mutable {
        return Err(mismatch("mutable unions are not supported"));
    }
    let mark = if u.extensibility == Extensibility::Appendable {
        Some(w.begin_dheader()?)
    } else {
        None
    };
    encode_at(&u.discriminator, discriminator, w, d)?;
    if let Some((name, v)) = member {
        let c = u
            .cases
            .iter()
            .find(|c| c.name == name)
            .ok_or(mismatch("a union member the type does not have"))?;
        encode_at(&c.ty, v, w, d)?;
    }
    if let Some(mark) = mark {
        w.end_dheader(mark)?;
    }
    Ok(())
}
