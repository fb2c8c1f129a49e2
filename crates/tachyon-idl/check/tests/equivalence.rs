//! The Rust `tachyon_idl::Builder` generated (`build.rs`) is the IDL: each generated type's
//! description (so its TypeObjects) is the one `tachyon_idl` reads from the IDL itself —
//! which `crates/tachyon-idl/tests/cyclone_vectors.rs` shows byte-identical with Cyclone DDS
//! 11's idlc — and the generated types decode Cyclone DDS's samples of every type and
//! encode them back to the same bytes.

use std::path::PathBuf;

use serde_json::Value;
use tachyon_cdr::{DdsType, EncapsulationHeader, TypeDesc};
use tachyon_idl_check::{everything, interop, shape, types};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn idl(path: &str) -> tachyon_idl::Idl {
    let options = tachyon_idl::Options {
        include_dirs: vec![PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("idl/include")],
        ..Default::default()
    };
    tachyon_idl::parse_file(root().join(path), &options).unwrap_or_else(|e| panic!("{e}"))
}

/// `d` with every typedef replaced by its target (`#[derive(DdsType)]` sees through Rust
/// type aliases).
fn without_aliases(d: &TypeDesc) -> TypeDesc {
    use std::sync::Arc;
    match d {
        TypeDesc::Alias(a) => without_aliases(&a.target),
        TypeDesc::Sequence { element, bound } => TypeDesc::Sequence {
            element: Box::new(without_aliases(element)),
            bound: *bound,
        },
        TypeDesc::Array { element, dims } => {
            // An array of a typedef'd array is one array once the typedef is gone.
            let mut out = without_aliases(element);
            for &n in dims.iter().rev() {
                out = TypeDesc::array_of(out, n);
            }
            out
        }
        TypeDesc::Struct(s) => {
            let mut s = (**s).clone();
            for m in &mut s.members {
                m.ty = without_aliases(&m.ty);
            }
            TypeDesc::Struct(Arc::new(s))
        }
        TypeDesc::Union(u) => {
            let mut u = (**u).clone();
            u.discriminator = without_aliases(&u.discriminator);
            for c in &mut u.cases {
                c.ty = without_aliases(&c.ty);
            }
            TypeDesc::Union(Arc::new(u))
        }
        other => other.clone(),
    }
}

macro_rules! same {
    ($idl:expr, $($name:literal => $t:ty),* $(,)?) => {{
        let idl = $idl;
        let mut n = 0;
        $(
            let want = idl.type_desc($name).unwrap_or_else(|e| panic!("{e}"));
            let got = <$t>::type_desc().expect("generated types describe themselves");
            assert_eq!(got, want, "{}", $name);
            let a = tachyon_xtypes::TypeRepresentations::of(&got).expect("representable");
            let b = tachyon_xtypes::TypeRepresentations::of(&want).expect("representable");
            assert_eq!(a.type_information(), b.type_information(), "{}", $name);
            n += 1;
        )*
        n
    }};
}

#[test]
fn generated_types_describe_themselves_as_the_idl_does() {
    let n = same!(idl("interop/cdr-vectors/types.idl"),
        "ShapeType" => types::ShapeType,
        "AppendableShape" => types::AppendableShape,
        "Primitives" => types::Primitives,
        "Strings" => types::Strings,
        "Inner" => types::Inner,
        "Sequences" => types::Sequences,
        "Arrays" => types::Arrays,
        "Nested" => types::Nested,
        "WithEnum" => types::WithEnum,
        "Choice" => types::Choice,
        "Small" => types::Small,
        "WithUnion" => types::WithUnion,
        "WithOptional" => types::WithOptional,
        "AppendableStruct" => types::AppendableStruct,
        "MutableStruct" => types::MutableStruct,
        "HashIds" => types::HashIds,
        "MustUnderstand" => types::MustUnderstand,
        "KeyedMulti" => types::KeyedMulti,
        "KeyedNested" => types::KeyedNested,
        "KeyedSmallString" => types::KeyedSmallString,
        "Big" => types::Big,
    );
    assert_eq!(n, 21);
    // The enum Color, not a topic type, is checked through WithEnum.
    let n = same!(idl("interop/peers/interop.idl"),
        "ShapeType" => interop::ShapeType,
        "AppendableShape" => interop::AppendableShape,
        "LargeData" => interop::LargeData,
    );
    assert_eq!(n, 3);
    let n = same!(idl("interop/shape/shape.idl"), "ShapeType" => shape::ShapeType);
    assert_eq!(n, 1);
}

#[test]
fn everything_idl_generates_its_types_typedefs_aside() {
    let idl = idl("crates/tachyon-idl/check/idl/everything.idl");
    let cases: [(&str, TypeDesc); 4] = [
        (
            "robot::sensors::Scan",
            everything::robot::sensors::Scan::type_desc().expect("d"),
        ),
        (
            "robot::Command",
            everything::robot::Command::type_desc().expect("d"),
        ),
        (
            "robot::Status",
            everything::robot::Status::type_desc().expect("d"),
        ),
        (
            "robot::Heartbeat",
            everything::robot::Heartbeat::type_desc().expect("d"),
        ),
    ];
    for (name, got) in cases {
        let want = idl.type_desc(name).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(got, without_aliases(&want), "{name}");
    }
    // Constants, with their expressions evaluated and their types.
    use everything::{common, robot::sensors};
    assert_eq!(sensors::BUF, 32u32);
    assert_eq!(sensors::FRAME, "base_link");
    assert_eq!(sensors::SCALE, 0.5f64);
    assert_eq!(sensors::DEFAULT_UNIT, common::Unit::Feet);
    assert_eq!(common::MAX_POINTS, 8i32);
    // Names on the wire are the IDL's, Rust's are Rust's.
    let s = everything::robot::sensors::Scan {
        r#type: true,
        ..Default::default()
    };
    assert_eq!(s.points.len(), 8);
    let Some(TypeDesc::Struct(d)) = everything::robot::sensors::Scan::type_desc() else {
        panic!("a struct");
    };
    assert!(d.members.iter().any(|m| m.name == "type"));
    assert_eq!(d.name, "robot::sensors::Scan");
    // @value: FEET is 10, INCHES 11.
    let Some(TypeDesc::Enum(u)) = everything::common::Unit::type_desc() else {
        panic!("an enum");
    };
    let values: Vec<_> = u
        .literals
        .iter()
        .map(|l| (l.name.as_str(), l.value))
        .collect();
    assert_eq!(values, [("METERS", 0), ("FEET", 10), ("INCHES", 11)]);
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex"))
        .collect()
}

/// Decodes `bytes` as `T` and encodes the value again with the same header.
fn round_trip<T: DdsType + for<'de> tachyon_cdr::Decode<'de>>(bytes: &[u8]) -> Vec<u8> {
    let v: T = tachyon_cdr::deserialize(bytes).expect("decodes");
    let h = EncapsulationHeader::parse(bytes).expect("header");
    let e = h.encapsulation;
    let mut out = vec![0u8; bytes.len() + 64];
    let n = tachyon_cdr::serialize(&v, e.version(), e.endianness(), &mut out).expect("encodes");
    out.truncate(n);
    out
}

#[test]
fn generated_types_read_and_write_cyclone_dds_samples_byte_for_byte() {
    let path = root().join("interop/cdr-vectors/vectors.json");
    let v: Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("vectors")).expect("json");
    let mut n = 0;
    for x in v["vectors"].as_array().expect("vectors") {
        let bytes = unhex(x["hex"].as_str().expect("hex"));
        let ty = x["type"].as_str().expect("type");
        macro_rules! dispatch {
            ($($t:ident),*) => {
                match ty {
                    $(stringify!($t) => round_trip::<types::$t>(&bytes),)*
                    other => panic!("no generated type {other}"),
                }
            };
        }
        let again = dispatch!(
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
        );
        assert_eq!(again, bytes, "{ty} {} {}", x["sample"], x["encoding"]);
        n += 1;
    }
    assert!(n >= 70, "{n} vectors");
}
