//! The type representation of every type of `interop/cdr-vectors/types.idl`, compared byte
//! for byte with what Cyclone DDS 11.0.1 computes (`interop/xtypes-vectors/vectors.json`):
//! identifiers, TypeObjects, dependency lists and TypeInformation, from the Rust mirror of
//! the IDL through `#[derive(DdsType)]`.

#[path = "../../tachyon-cdr/tests/common/mod.rs"]
mod common;

use common::*;
use serde_json::Value;
use tachyon_cdr::{DdsType, Endianness, TypeDesc};
use tachyon_xtypes::{
    Codec, EquivalenceKind, Representation, TypeIdentifier, TypeInformation, TypeObject,
    TypeRepresentations,
};

fn vectors() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../interop/xtypes-vectors/vectors.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).expect("vectors.json")).expect("json")
}

fn desc(name: &str) -> TypeDesc {
    let d = match name {
        "ShapeType" => ShapeType::type_desc(),
        "AppendableShape" => AppendableShape::type_desc(),
        "Primitives" => Primitives::type_desc(),
        "Strings" => Strings::type_desc(),
        "Inner" => Inner::type_desc(),
        "Sequences" => Sequences::type_desc(),
        "Arrays" => Arrays::type_desc(),
        "Nested" => Nested::type_desc(),
        "Color" => Color::type_desc(),
        "WithEnum" => WithEnum::type_desc(),
        "Choice" => Choice::type_desc(),
        "Small" => Small::type_desc(),
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
        other => panic!("no Rust mirror for {other}"),
    };
    d.expect("derived types describe themselves")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Compares one representation with Cyclone's; returns the differences.
fn compare(name: &str, kind: &str, ours: &Representation, theirs: &Value) -> Vec<String> {
    let mut diffs = Vec::new();
    let id = theirs["type_identifier"]["hex"].as_str().expect("id hex");
    if hex(&ours.id.to_bytes()) != id {
        diffs.push(format!(
            "{name} {kind} id: ours {} theirs {id}",
            hex(&ours.id.to_bytes())
        ));
    }
    let obj = theirs["type_object_hex"].as_str().expect("object hex");
    let our_obj = ours
        .object
        .as_ref()
        .map(|e| hex(&e.bytes))
        .unwrap_or_default();
    if our_obj != obj {
        diffs.push(format!(
            "{name} {kind} object:\n  ours   {our_obj}\n  theirs {obj}"
        ));
    }
    let deps = theirs["dependent_typeids"].as_array().expect("deps");
    let our_deps: Vec<String> = ours
        .dependencies
        .iter()
        .map(|e| hex(&e.id.to_bytes()))
        .collect();
    let their_deps: Vec<String> = deps
        .iter()
        .map(|d| {
            d["type_identifier"]["hex"]
                .as_str()
                .expect("dep id")
                .to_owned()
        })
        .collect();
    if our_deps != their_deps {
        diffs.push(format!(
            "{name} {kind} dependencies: ours {our_deps:?} theirs {their_deps:?}"
        ));
    }
    for (e, d) in ours.dependencies.iter().zip(deps) {
        let want = d["type_object_hex"].as_str().expect("dep object");
        if hex(&e.bytes) != want {
            diffs.push(format!(
                "{name} {kind} dependency object:\n  ours   {}\n  theirs {want}",
                hex(&e.bytes)
            ));
        }
    }
    diffs
}

#[test]
fn every_type_is_byte_identical_with_cyclone_dds_11() {
    let v = vectors();
    let types = v["types"].as_array().expect("types");
    assert_eq!(types.len(), 22);
    let mut diffs = Vec::new();
    for t in types {
        let name = t["name"].as_str().expect("name");
        let reps = TypeRepresentations::of(&desc(name)).expect("representable");
        diffs.extend(compare(name, "minimal", &reps.minimal, &t["minimal"]));
        diffs.extend(compare(name, "complete", &reps.complete, &t["complete"]));
        if let Some(ti) = t["type_information"].as_object() {
            let ours = hex(&reps.type_information().to_bytes().expect("encodes"));
            let want = ti["descriptor_hex"].as_str().expect("descriptor");
            if ours != want {
                diffs.push(format!(
                    "{name} TypeInformation:\n  ours   {ours}\n  theirs {want}"
                ));
            }
        }
    }
    assert!(
        diffs.is_empty(),
        "{} differences:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
}

#[test]
fn type_information_from_cyclone_sedp_decodes_to_ours_with_its_zero_sizes() {
    let v = vectors();
    for t in v["types"].as_array().expect("types") {
        let Some(ti) = t["type_information"].as_object() else {
            continue;
        };
        let name = t["name"].as_str().expect("name");
        let sedp = unhex(ti["sedp_hex"].as_str().expect("sedp"));
        let got = TypeInformation::from_bytes(&sedp, Endianness::Little).expect("decodes");
        let mut ours = TypeRepresentations::of(&desc(name))
            .expect("ok")
            .type_information();
        ours.minimal.id.size = 0;
        ours.complete.id.size = 0;
        assert_eq!(got, ours, "{name}");
        // And it writes back the same bytes.
        assert_eq!(hex(&got.to_bytes().expect("encodes")), hex(&sedp), "{name}");
    }
}

#[test]
fn every_cyclone_type_object_decodes_and_writes_back_identically() {
    let v = vectors();
    let mut n = 0;
    for t in v["types"].as_array().expect("types") {
        for kind in ["minimal", "complete"] {
            let r = &t[kind];
            let mut objects = vec![r["type_object_hex"].as_str().expect("hex").to_owned()];
            for d in r["dependent_typeids"].as_array().expect("deps") {
                objects.push(d["type_object_hex"].as_str().expect("hex").to_owned());
            }
            for o in objects {
                let bytes = unhex(&o);
                let obj = TypeObject::from_bytes(&bytes, Endianness::Little).expect("decodes");
                let want = if kind == "minimal" {
                    EquivalenceKind::Minimal
                } else {
                    EquivalenceKind::Complete
                };
                assert_eq!(obj.kind, want);
                assert_eq!(hex(&obj.to_bytes().expect("encodes")), o);
                n += 1;
            }
        }
    }
    assert!(n >= 44, "{n} objects");
}

#[test]
fn identifiers_decode_and_write_back() {
    let v = vectors();
    for t in v["types"].as_array().expect("types") {
        for kind in ["minimal", "complete"] {
            for m in t[kind]["summary"]["members"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let h = m["type_id"]["hex"].as_str().expect("hex");
                let id = TypeIdentifier::from_bytes(&unhex(h)).expect("decodes");
                assert_eq!(hex(&id.to_bytes()), h);
                let mut c = tachyon_cdr::Writer::counter(
                    tachyon_cdr::XcdrVersion::Xcdr2,
                    Endianness::Little,
                );
                id.encode(&mut c).expect("counts");
                assert_eq!(c.position() * 2, h.len());
            }
        }
    }
}
