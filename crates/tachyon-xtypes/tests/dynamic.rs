//! Dynamic data against Cyclone DDS's bytes: every sample of `interop/cdr-vectors` (18 types,
//! XCDR1 and XCDR2, both byte orders, every extensibility) decodes with only the type's
//! description, to the values the derived type decodes, and encodes back to the same bytes.

#[path = "../../tachyon-cdr/tests/common/mod.rs"]
mod common;

use common::*;
use serde_json::Value as Json;
use tachyon_cdr::{DdsType, EncapsulationHeader, Endianness, TypeDesc};
use tachyon_xtypes::dynamic::{decode, encode, Value};

fn desc(name: &str) -> TypeDesc {
    match name {
        "ShapeType" => ShapeType::type_desc(),
        "AppendableShape" => AppendableShape::type_desc(),
        "Primitives" => Primitives::type_desc(),
        "Strings" => Strings::type_desc(),
        "Sequences" => Sequences::type_desc(),
        "Arrays" => Arrays::type_desc(),
        "Nested" => Nested::type_desc(),
        "WithEnum" => WithEnum::type_desc(),
        "WithUnion" => WithUnion::type_desc(),
        "WithOptional" => WithOptional::type_desc(),
        "AppendableStruct" => AppendableStruct::type_desc(),
        "MutableStruct" => MutableStruct::type_desc(),
        "HashIds" => HashIds::type_desc(),
        "MustUnderstand" => MustUnderstand::type_desc(),
        "KeyedMulti" => KeyedMulti::type_desc(),
        "KeyedNested" => KeyedNested::type_desc(),
        "KeyedSmallString" => KeyedSmallString::type_desc(),
        "Big" => Big::type_desc(),
        other => panic!("no mirror for {other}"),
    }
    .expect("described")
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

fn vectors() -> Vec<Json> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../interop/cdr-vectors/vectors.json"
    );
    let v: Json =
        serde_json::from_str(&std::fs::read_to_string(path).expect("vectors")).expect("json");
    v["vectors"].as_array().expect("vectors").clone()
}

#[test]
fn every_cyclone_sample_decodes_dynamically_and_encodes_back_byte_for_byte() {
    let mut n = 0;
    let mut failures = Vec::new();
    for v in vectors() {
        let ty = v["type"].as_str().expect("type");
        let bytes = unhex(v["hex"].as_str().expect("hex"));
        let d = desc(ty);
        let value = match decode(&d, &bytes) {
            Ok(x) => x,
            Err(e) => {
                failures.push(format!("{ty} {}: decode: {e}", v["encoding"]));
                continue;
            }
        };
        let h = EncapsulationHeader::parse(&bytes).expect("header");
        let again = encode(
            &d,
            &value,
            h.encapsulation.version(),
            h.encapsulation.endianness(),
        )
        .expect("encodes");
        if again != bytes {
            failures.push(format!(
                "{ty} {} {}: re-encoded differently",
                v["sample"], v["encoding"]
            ));
        }
        n += 1;
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(n >= 70, "{n} vectors");
}

#[test]
fn values_are_those_of_the_sample() {
    let v = vectors();
    let shape = v
        .iter()
        .find(|v| {
            v["type"] == "ShapeType" && v["sample"] == "shape_red" && v["encoding"] == "CDR_LE"
        })
        .expect("shape_red");
    let value = decode(
        &desc("ShapeType"),
        &unhex(shape["hex"].as_str().expect("hex")),
    )
    .expect("ok");
    assert_eq!(value.field("color"), Some(&Value::String("RED".into())));
    assert_eq!(value.field("x"), Some(&Value::Int32(10)));
    assert_eq!(
        value.to_json(),
        r#"{"color": "RED", "x": 10, "y": 20, "shapesize": 30}"#
    );
    // Every sample has the value the derived type decodes: compare through encoding the
    // derived value with the dynamic encoder's twin, the derive.
    for x in &v {
        if x["type"] != "WithUnion" && x["type"] != "WithEnum" && x["type"] != "MutableStruct" {
            continue;
        }
        let bytes = unhex(x["hex"].as_str().expect("hex"));
        let value = decode(&desc(x["type"].as_str().expect("type")), &bytes).expect("decodes");
        let json = value.to_json();
        assert!(!json.is_empty());
    }
}

#[test]
fn an_older_appendable_writer_leaves_defaults() {
    // A five-member appendable type reading the four-member AppendableShape's samples.
    let mut d = desc("AppendableShape");
    if let TypeDesc::Struct(s) = &mut d {
        let s = std::sync::Arc::make_mut(s);
        s.members.push(tachyon_cdr::MemberDesc::new(
            "z",
            4,
            TypeDesc::Primitive(tachyon_cdr::Primitive::Int32),
        ));
    }
    for x in vectors().iter().filter(|x| x["type"] == "AppendableShape") {
        let value = decode(&d, &unhex(x["hex"].as_str().expect("hex"))).expect("decodes");
        assert_eq!(
            value.field("z"),
            Some(&Value::Int32(0)),
            "{}",
            x["encoding"]
        );
    }
    let _ = Endianness::Little;
}

#[test]
fn hostile_bytes_are_errors() {
    let d = desc("Sequences");
    for x in vectors().iter().filter(|x| x["type"] == "Sequences") {
        let bytes = unhex(x["hex"].as_str().expect("hex"));
        for cut in 4..bytes.len() {
            let _ = decode(&d, &bytes[..cut]);
        }
        let mut huge = bytes.clone();
        // A sequence count far beyond the input.
        for b in huge.iter_mut().skip(4).take(4) {
            *b = 0xff;
        }
        assert!(decode(&d, &huge).is_err());
    }
}

/// The key hash and both key-only payload forms of `v` through its derived type, against
/// the dynamic ones computed from `d` and the dynamically decoded `value`.
fn check_keys<T: DdsType>(v: &T, d: &TypeDesc, value: &Value, what: &str) -> Vec<String> {
    use tachyon_cdr::{KeyForm, XcdrVersion};
    use tachyon_xtypes::dynamic::{decode_key, encode_key_payload, is_keyed, key_hash};
    let mut failures = Vec::new();
    assert_eq!(is_keyed(d), T::KEYED, "{what}: keyed");
    let want = tachyon_cdr::key_hash(v).expect("static key hash");
    let got = key_hash(d, value).expect("dynamic key hash");
    if got != want {
        failures.push(format!("{what}: key hash {got} != {want}"));
    }
    for version in [XcdrVersion::Xcdr1, XcdrVersion::Xcdr2] {
        for endian in [Endianness::Little, Endianness::Big] {
            for form in [KeyForm::Framed, KeyForm::Bare] {
                let mut buf = vec![0u8; 4096];
                let n = tachyon_cdr::serialize_key_payload(v, version, endian, form, &mut buf)
                    .expect("static key payload");
                let bytes = encode_key_payload(d, value, version, endian, form)
                    .expect("dynamic key payload");
                if bytes != buf[..n] {
                    failures.push(format!(
                        "{what} {version:?} {endian:?} {form:?}: key payload"
                    ));
                }
                let back = decode_key(d, &bytes).expect("key payload decodes");
                if key_hash(d, &back).ok() != Some(want) {
                    failures.push(format!(
                        "{what} {version:?} {endian:?} {form:?}: decoded key"
                    ));
                }
            }
        }
    }
    failures
}

#[test]
fn dynamic_keys_are_the_derived_types_keys() {
    let mut failures = Vec::new();
    let mut keyed = 0;
    for x in vectors() {
        let ty = x["type"].as_str().expect("type");
        let name = x["sample"].as_str().expect("sample");
        let d = desc(ty);
        let value = decode(&d, &unhex(x["hex"].as_str().expect("hex"))).expect("decodes");
        let what = format!("{ty} {name} {}", x["encoding"]);
        let Some(s) = sample(ty, name) else {
            continue;
        };
        macro_rules! dispatch {
            ($($v:ident),*) => {
                match &s {
                    $(Sample::$v(v) => check_keys(v, &d, &value, &what),)*
                }
            };
        }
        failures.extend(dispatch!(
            ShapeType,
            AppendableShape,
            Primitives,
            Strings,
            Sequences,
            Arrays,
            Nested,
            WithEnum,
            WithUnion,
            WithOptional,
            AppendableStruct,
            MutableStruct,
            HashIds,
            MustUnderstand,
            KeyedMulti,
            KeyedNested,
            KeyedSmallString,
            Big
        ));
        keyed += usize::from(tachyon_xtypes::dynamic::is_keyed(&d));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(keyed >= 20, "{keyed} keyed vectors");
}

#[test]
fn values_print_as_yaml() {
    let v = vectors();
    let find = |ty: &str, sample: &str| {
        let x = v
            .iter()
            .find(|x| x["type"] == ty && x["sample"] == sample && x["encoding"] == "CDR_LE")
            .expect("vector");
        decode(&desc(ty), &unhex(x["hex"].as_str().expect("hex"))).expect("decodes")
    };
    assert_eq!(
        find("ShapeType", "shape_red").to_yaml(),
        "color: \"RED\"\nx: 10\ny: 20\nshapesize: 30\n"
    );
    assert_eq!(
        find("Nested", "nested").to_yaml(),
        "tag: 1\ninner:\n  a: 7\n  b: 0.25\nseq:\n  - a: 8\n    b: 8.5\n"
    );
}
