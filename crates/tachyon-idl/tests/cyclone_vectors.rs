//! Every type of `interop/cdr-vectors/types.idl` read by `tachyon_idl` has the type
//! representation Cyclone DDS 11.0.1's idlc computes for the same file
//! (`interop/xtypes-vectors/vectors.json`): identifiers, TypeObjects, dependencies and
//! TypeInformation, byte for byte.

use serde_json::Value;
use tachyon_xtypes::{Representation, TypeRepresentations};

fn root() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn compare(name: &str, kind: &str, ours: &Representation, theirs: &Value, diffs: &mut Vec<String>) {
    let id = theirs["type_identifier"]["hex"].as_str().expect("id");
    if hex(&ours.id.to_bytes()) != id {
        diffs.push(format!("{name} {kind} identifier"));
    }
    let obj = theirs["type_object_hex"].as_str().expect("object");
    if ours
        .object
        .as_ref()
        .map(|e| hex(&e.bytes))
        .unwrap_or_default()
        != obj
    {
        diffs.push(format!("{name} {kind} TypeObject"));
    }
    let deps: Vec<String> = theirs["dependent_typeids"]
        .as_array()
        .expect("deps")
        .iter()
        .map(|d| d["type_object_hex"].as_str().expect("dep").to_owned())
        .collect();
    let ours: Vec<String> = ours.dependencies.iter().map(|e| hex(&e.bytes)).collect();
    if ours != deps {
        diffs.push(format!("{name} {kind} dependencies"));
    }
}

#[test]
fn the_idl_describes_every_type_as_cyclone_dds_11_idlc_does() {
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("interop/xtypes-vectors/vectors.json"))
            .expect("vectors"),
    )
    .expect("json");
    let idl = tachyon_idl::parse_file(
        root().join("interop/cdr-vectors/types.idl"),
        &tachyon_idl::Options::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut diffs = Vec::new();
    let types = v["types"].as_array().expect("types");
    assert_eq!(types.len(), 22);
    for t in types {
        let name = t["name"].as_str().expect("name");
        // Color (an enum) is no topic type: look it up through the type that uses it.
        let desc = match idl.type_desc(name) {
            Ok(d) => d,
            Err(_) if name == "Color" => continue,
            Err(e) => panic!("{e}"),
        };
        let reps = TypeRepresentations::of(&desc).expect("representable");
        compare(name, "minimal", &reps.minimal, &t["minimal"], &mut diffs);
        compare(name, "complete", &reps.complete, &t["complete"], &mut diffs);
        if let Some(ti) = t["type_information"].as_object() {
            let ours = hex(&reps.type_information().to_bytes().expect("encodes"));
            if ours != ti["descriptor_hex"].as_str().expect("descriptor") {
                diffs.push(format!("{name} TypeInformation"));
            }
        }
    }
    assert!(diffs.is_empty(), "{}", diffs.join("\n"));
}

#[test]
fn the_suite_shape_type_is_cyclone_dds_11s() {
    // interop/xtypes-vectors/suite_shape.json: Cyclone DDS 11's XTBuilder on the OMG suite's
    // ShapeType (interop/shape/shape.idl).
    let v: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("interop/xtypes-vectors/suite_shape.json"))
            .expect("suite_shape.json"),
    )
    .expect("json");
    let idl = tachyon_idl::parse_file(
        root().join("interop/shape/shape.idl"),
        &tachyon_idl::Options::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let reps = TypeRepresentations::of(&idl.type_desc("ShapeType").expect("ShapeType"))
        .expect("representable");
    assert_eq!(
        hex(&reps.type_information().to_bytes().expect("encodes")),
        v["type_information_hex"].as_str().expect("hex")
    );
    for r in [&reps.minimal, &reps.complete] {
        let id = hex(&r.id.to_bytes());
        let object = r.object.as_ref().map(|e| hex(&e.bytes)).expect("object");
        assert_eq!(
            Some(object.as_str()),
            v["type_objects"][&id].as_str(),
            "{id}"
        );
    }
}
