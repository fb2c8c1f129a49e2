//! Keys of dynamic samples: the key hash that names an instance (XTypes 1.3 7.6.8), and the
//! key-only payloads of disposes and unregisters in both forms implementations send (the
//! framed key holder of 7.2.2.4.7, and the bare key members) — what `#[derive(DdsType)]`
//! generates for a Rust type, computed from a [`TypeDesc`] instead (`tests/dynamic_key.rs`
//! compares the two byte for byte).

use md5::{Digest, Md5};
use tachyon_cdr::{
    DecodeError, EncapsulationHeader, EncodeError, Endianness, Extensibility, KeyForm, KeyHash,
    MemberDesc, Reader, StructDesc, TypeDesc, Writer, XcdrVersion, KEY_HASH_VERSION,
};

use super::decode::{all_members, decode_body, default};
use super::encode::{encode_body, length_code, with_encapsulation};
use super::value::Value;
use super::{holder_size, is_primitive, leaf, unalias};

/// The longest bounded sequence whose largest key encoding is worked out element by element
/// (the derive's limit: beyond it the key counts as unbounded and is hashed with MD5).
const KEY_BOUND_WALK_LIMIT: u32 = 4096;

/// Whether samples of the type are told apart by key: a struct with a key member (its
/// bases' included).
pub fn is_keyed(desc: &TypeDesc) -> bool {
    match unalias(desc) {
        TypeDesc::Struct(s) => all_members(s).iter().any(|m| m.key),
        _ => false,
    }
}

/// The key hash of `value` of type `desc`: the key members serialized big-endian with XCDR2
/// alignment, zero-padded to 16 bytes when the largest possible key fits in 16, else their
/// MD5 digest; all zeros for a type without key. The same hash `tachyon_cdr::key_hash`
/// computes for a derived type.
pub fn key_hash(desc: &TypeDesc, value: &Value) -> Result<KeyHash, EncodeError> {
    if !is_keyed(desc) {
        return Ok(KeyHash::default());
    }
    let version = KEY_HASH_VERSION;
    let small = matches!(key_max_end(desc, 0, version, 0), Some(n) if n <= 16);
    let mut counter = Writer::counter(version, Endianness::Big);
    encode_key(desc, value, &mut counter, 0)?;
    let mut buf = vec![0u8; counter.position()];
    let mut w = Writer::new(&mut buf, version, Endianness::Big);
    encode_key(desc, value, &mut w, 0)?;
    let len = w.position();
    let mut out = [0u8; 16];
    if small && len <= 16 {
        out[..len].copy_from_slice(&buf[..len]);
    } else {
        out.copy_from_slice(&Md5::digest(&buf[..len]));
    }
    Ok(KeyHash(out))
}

/// The key-only payload of `value` (a dispose's or an unregister's), encapsulation header
/// included, with its key members in `form`.
pub fn encode_key_payload(
    desc: &TypeDesc,
    value: &Value,
    version: XcdrVersion,
    endian: Endianness,
    form: KeyForm,
) -> Result<Vec<u8>, EncodeError> {
    with_encapsulation(desc, version, endian, |w| match form {
        KeyForm::Framed => encode_holder(desc, value, w, 0),
        KeyForm::Bare => encode_key(desc, value, w, 0),
    })
}

/// Decodes a key-only payload (encapsulation header included) in either form: the framed
/// key holder or the bare key members. Members outside the key take their default values
/// (optional ones are absent): the value is good for its key only.
pub fn decode_key(desc: &TypeDesc, payload: &[u8]) -> Result<Value, DecodeError> {
    let header = EncapsulationHeader::parse(payload)?;
    let enc = header.encapsulation;
    let reader = || Reader::new(&payload[4..], enc.version(), enc.endianness(), 4);
    let whole = |r: &Reader<'_>| r.remaining() < 4;
    if !forms_differ(desc, enc.version()) {
        return decode_bare(desc, &mut reader());
    }
    let mut r = reader();
    let framed = decode_holder(desc, &mut r);
    if framed.is_ok() && whole(&r) {
        return framed;
    }
    let mut r = reader();
    match decode_bare(desc, &mut r) {
        Ok(v) if whole(&r) || framed.is_err() => Ok(v),
        Ok(v) => framed.or(Ok(v)),
        Err(e) => framed.map_err(|_| e),
    }
}

/// Whether the two key-only forms differ for the type in `version` (as `KeyForm::differ`
/// decides for a derived type).
fn forms_differ(desc: &TypeDesc, version: XcdrVersion) -> bool {
    match unalias(desc) {
        TypeDesc::Struct(s) => match s.extensibility {
            Extensibility::Final => false,
            Extensibility::Appendable => version == XcdrVersion::Xcdr2,
            Extensibility::Mutable => true,
        },
        _ => false,
    }
}

/// The members of the bare key form, in member-id order: the key members, or every member
/// of a struct without keys (a nested struct used as a key).
fn key_members(s: &StructDesc) -> Vec<&MemberDesc> {
    let all = all_members(s);
    let keyed = all.iter().any(|m| m.key);
    let mut keys: Vec<_> = all.into_iter().filter(|m| m.key || !keyed).collect();
    keys.sort_by_key(|m| m.id);
    keys
}

/// The members of the key holder, in declaration order.
fn holder_members(s: &StructDesc) -> Vec<&MemberDesc> {
    let all = all_members(s);
    let keyed = all.iter().any(|m| m.key);
    all.into_iter().filter(|m| m.key || !keyed).collect()
}

fn too_deep() -> EncodeError {
    EncodeError::TypeMismatch("value nested too deeply")
}

fn member_value<'v>(values: &'v [(String, Option<Value>)], name: &str) -> Option<&'v Value> {
    values
        .iter()
        .find(|(n, _)| n == name)
        .and_then(|(_, v)| v.as_ref())
}

/// The bare key form: a struct's key members in id order (nested structs in their own key
/// form), any other type as itself.
fn encode_key(
    desc: &TypeDesc,
    value: &Value,
    w: &mut Writer<'_>,
    depth: usize,
) -> Result<(), EncodeError> {
    if depth > 64 {
        return Err(too_deep());
    }
    let (TypeDesc::Struct(s), Value::Struct(values)) = (unalias(desc), value) else {
        return encode_body(desc, value, w);
    };
    for m in key_members(s) {
        let v = member_value(values, &m.name);
        if m.optional {
            w.write_bool(v.is_some())?;
            if let Some(v) = v {
                encode_key(&m.ty, v, w, depth + 1)?;
            }
        } else {
            let v = v.ok_or(EncodeError::TypeMismatch("a key member without its value"))?;
            encode_key(&m.ty, v, w, depth + 1)?;
        }
    }
    Ok(())
}

/// The key holder: a struct's key members in declaration order, framed as the struct frames
/// its members (DHEADER, member headers), nested structs in their own holder form.
fn encode_holder(
    desc: &TypeDesc,
    value: &Value,
    w: &mut Writer<'_>,
    depth: usize,
) -> Result<(), EncodeError> {
    if depth > 64 {
        return Err(too_deep());
    }
    let (TypeDesc::Struct(s), Value::Struct(values)) = (unalias(desc), value) else {
        return encode_body(desc, value, w);
    };
    let d = depth + 1;
    let missing = EncodeError::TypeMismatch("a key member without its value");
    match s.extensibility {
        Extensibility::Final | Extensibility::Appendable => {
            let mark = if s.extensibility == Extensibility::Appendable {
                Some(w.begin_dheader()?)
            } else {
                None
            };
            for m in holder_members(s) {
                let v = member_value(values, &m.name);
                if m.optional {
                    w.write_bool(v.is_some())?;
                    if let Some(v) = v {
                        encode_holder(&m.ty, v, w, d)?;
                    }
                } else {
                    encode_holder(&m.ty, v.ok_or(missing.clone())?, w, d)?;
                }
            }
            match mark {
                Some(mark) => w.end_dheader(mark),
                None => Ok(()),
            }
        }
        Extensibility::Mutable => {
            let mark = w.begin_dheader()?;
            for m in holder_members(s) {
                let Some(v) = member_value(values, &m.name) else {
                    if m.optional {
                        continue;
                    }
                    return Err(missing);
                };
                let mu = m.must_understand || (m.key && w.is_xcdr2());
                let h = w.begin_member(m.id, mu, length_code(&m.ty))?;
                encode_holder(&m.ty, v, w, d)?;
                w.end_member(h)?;
            }
            w.end_parameter_list()?;
            w.end_dheader(mark)
        }
    }
}

/// Fills a struct value from the members read: those outside the key take their defaults.
fn with_defaults(s: &StructDesc, mut got: Vec<(String, Option<Value>)>) -> Value {
    Value::Struct(
        all_members(s)
            .into_iter()
            .map(|m| match got.iter().position(|(n, _)| *n == m.name) {
                Some(i) => got.swap_remove(i),
                None => (m.name.clone(), (!m.optional).then(|| default(&m.ty))),
            })
            .collect(),
    )
}

fn decode_bare(desc: &TypeDesc, r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    let TypeDesc::Struct(s) = unalias(desc) else {
        return decode_body(desc, r);
    };
    r.enter()?;
    let v = (|| {
        let mut got = Vec::new();
        for m in key_members(s) {
            let v = if m.optional && !r.read_bool()? {
                None
            } else {
                Some(decode_bare(&m.ty, r)?)
            };
            got.push((m.name.clone(), v));
        }
        Ok(with_defaults(s, got))
    })();
    r.leave();
    v
}

fn decode_holder(desc: &TypeDesc, r: &mut Reader<'_>) -> Result<Value, DecodeError> {
    let TypeDesc::Struct(s) = unalias(desc) else {
        return decode_body(desc, r);
    };
    r.enter()?;
    let v = (|| match s.extensibility {
        Extensibility::Final | Extensibility::Appendable => {
            let region = if s.extensibility == Extensibility::Appendable {
                Some(r.begin_delimited()?)
            } else {
                None
            };
            let v = (|| {
                let mut got = Vec::new();
                for m in holder_members(s) {
                    let v = if m.optional && !r.read_bool()? {
                        None
                    } else {
                        Some(decode_holder(&m.ty, r)?)
                    };
                    got.push((m.name.clone(), v));
                }
                Ok(got)
            })();
            if let Some(region) = region {
                r.end_region(region);
            }
            Ok(with_defaults(s, v?))
        }
        Extensibility::Mutable => {
            let region = r.begin_delimited()?;
            let members = holder_members(s);
            let v = (|| {
                let mut got = Vec::new();
                while let Some(h) = r.next_member()? {
                    match members.iter().find(|m| m.id == h.id) {
                        Some(m) => {
                            let v = r.member_value(&h, |r| decode_holder(&m.ty, r))?;
                            got.push((m.name.clone(), Some(v)));
                        }
                        None => r.skip_member(&h)?,
                    }
                }
                Ok(got)
            })();
            r.end_region(region);
            Ok(with_defaults(s, v?))
        }
    })();
    r.leave();
    v
}

/// Where the largest possible bare key encoding of the type ends when it starts at `start`
/// (`None`: no upper bound), as the derive computes it.
fn key_max_end(desc: &TypeDesc, start: usize, version: XcdrVersion, depth: usize) -> Option<usize> {
    if depth > 64 {
        return None;
    }
    let d = depth + 1;
    let align4 = |pos: usize| pos.div_ceil(4) * 4;
    match unalias(desc) {
        TypeDesc::Primitive(p) => {
            let size = p.size();
            let a = size.min(version.max_align()).max(1);
            Some(start.div_ceil(a) * a + size)
        }
        TypeDesc::String { wide: false, bound } if *bound != 0 => {
            Some(align4(start) + 4 + *bound as usize + 1)
        }
        TypeDesc::String { .. } => None,
        TypeDesc::Enum(e) => {
            let size = holder_size(e.bit_bound);
            Some(start.div_ceil(size) * size + size)
        }
        TypeDesc::Bitmask(b) => {
            let size = holder_size(b.bit_bound);
            let a = size.min(version.max_align());
            Some(start.div_ceil(a) * a + size)
        }
        TypeDesc::Sequence { element, bound } => {
            if *bound == 0 || *bound > KEY_BOUND_WALK_LIMIT {
                return None;
            }
            let mut pos = align4(start) + 4;
            if version == XcdrVersion::Xcdr2 && !is_primitive(element) {
                pos += 4;
            }
            for _ in 0..*bound {
                pos = key_max_end(element, pos, version, d)?;
            }
            Some(pos)
        }
        TypeDesc::Array { element, dims } => {
            let mut pos = start;
            if version == XcdrVersion::Xcdr2 && !is_primitive(leaf(element)) {
                pos = align4(pos) + 4;
            }
            let n = dims
                .iter()
                .try_fold(1u32, |n, d| n.checked_mul(*d))
                .filter(|&n| n <= KEY_BOUND_WALK_LIMIT)?;
            for _ in 0..n {
                pos = key_max_end(leaf(element), pos, version, d)?;
            }
            Some(pos)
        }
        TypeDesc::Struct(s) => {
            let keys = key_members(s);
            if keys.iter().any(|m| m.optional) {
                return None;
            }
            keys.iter()
                .try_fold(start, |pos, m| key_max_end(&m.ty, pos, version, d))
        }
        TypeDesc::Union(_) | TypeDesc::Map { .. } | TypeDesc::Alias(_) => None,
    }
}
