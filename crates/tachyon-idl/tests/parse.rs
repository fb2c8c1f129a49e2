//! What the parser accepts and refuses: the preprocessor, names and scopes, constants, and
//! errors that name the file, line and column.

use std::path::Path;

use tachyon_cdr::{Extensibility, Primitive, TypeDesc};
use tachyon_idl::{parse_str, Options};

fn parse(text: &str) -> Result<tachyon_idl::Idl, tachyon_idl::IdlError> {
    parse_str(text, Path::new("test.idl"), &Options::default())
}

fn err(text: &str) -> String {
    match parse(text) {
        Ok(_) => panic!("parsed: {text}"),
        Err(e) => e.to_string(),
    }
}

fn members(d: &TypeDesc) -> Vec<(String, u32, TypeDesc)> {
    let TypeDesc::Struct(s) = d else {
        panic!("not a struct: {d:?}")
    };
    s.members
        .iter()
        .map(|m| (m.name.clone(), m.id, m.ty.clone()))
        .collect()
}

#[test]
fn names_resolve_from_the_innermost_scope() {
    let idl = parse(
        "module a { struct T { long v; }; module b { struct T { short v; }; struct U { T t; ::a::T at; a::T at2; }; }; };",
    )
    .expect("parses");
    let m = members(&idl.type_desc("a::b::U").expect("U"));
    assert_eq!(m[0].2.name(), Some("a::b::T"));
    assert_eq!(m[1].2.name(), Some("a::T"));
    assert_eq!(m[2].2.name(), Some("a::T"));
    assert_eq!(idl.type_names(), ["a::T", "a::b::T", "a::b::U"]);
}

#[test]
fn constants_evaluate_in_bounds_and_dimensions() {
    let idl = parse(
        "const long N = 3; const long M = (N << 2) | 1; struct S { string<M> s; long a[N][N + 1]; sequence<octet, 0x10> q; };",
    )
    .expect("parses");
    let m = members(&idl.type_desc("S").expect("S"));
    assert_eq!(
        m[0].2,
        TypeDesc::String {
            wide: false,
            bound: 13
        }
    );
    assert_eq!(
        m[1].2,
        TypeDesc::Array {
            element: Box::new(TypeDesc::Primitive(Primitive::Int32)),
            dims: vec![3, 4]
        }
    );
    assert!(matches!(m[2].2, TypeDesc::Sequence { bound: 16, .. }));
}

#[test]
fn the_preprocessor_takes_guards_defines_and_conditions() {
    let idl = parse(
        "#define LEN 8\n#ifndef GUARD\n#define GUARD\nstruct A { string<LEN> s; };\n#endif\n#ifdef GUARD\n#if defined(LEN) && LEN > 4\nstruct B { long x; };\n#else\nstruct B { short x; };\n#endif\n#endif\n#pragma anything\n",
    )
    .expect("parses");
    assert_eq!(idl.type_names(), ["A", "B"]);
    let m = members(&idl.type_desc("B").expect("B"));
    assert_eq!(m[0].2, TypeDesc::Primitive(Primitive::Int32));
}

#[test]
fn annotations_set_ids_keys_and_extensibility() {
    let idl = parse(
        "@mutable struct S { @key long a; @id(10) long b; long c; @hashid long d; @optional @must_understand long e; };\n@extensibility(APPENDABLE) struct T { long x; };",
    )
    .expect("parses");
    let TypeDesc::Struct(s) = idl.type_desc("S").expect("S") else {
        panic!()
    };
    assert_eq!(s.extensibility, Extensibility::Mutable);
    let ids: Vec<u32> = s.members.iter().map(|m| m.id).collect();
    assert_eq!(ids[..3], [0, 10, 11]);
    assert_eq!(ids[3], tachyon_cdr::member_id::hashed_member_id("d"));
    assert!(s.members[0].key && s.members[4].optional && s.members[4].must_understand);
    let TypeDesc::Struct(t) = idl.type_desc("T").expect("T") else {
        panic!()
    };
    assert_eq!(t.extensibility, Extensibility::Appendable);
}

#[test]
fn errors_name_the_file_line_and_column() {
    assert_eq!(
        err("struct S {\n  long a;\n  Unknown b;\n};"),
        "test.idl:3:3: Unknown is not declared"
    );
    assert_eq!(
        err("struct S { long a }"),
        "test.idl:1:19: expected `;`, found `}`"
    );
    assert_eq!(
        err("struct S { long a; };\nstruct S { long b; };"),
        "test.idl:2:8: S is defined twice (first at test.idl:1:8)"
    );
    assert!(err("struct S { string<0> s; };").contains("a string bound must be a positive integer"));
    assert!(err("struct S { sequence<S> s; };").contains("recursive types are not supported"));
    assert!(err("interface I { void f(); };").contains("`interface` definitions are not supported"));
    let e = err("#include \"missing.idl\"\n");
    assert!(e.contains("missing.idl\": not found"), "{e}");
    assert!(err("#if 1\nstruct S { long a; };\n").contains("#if without #endif"));
    assert!(err("const octet O = 300;").contains("300 does not fit"));
    assert!(err("struct S { long a; /* never ends").contains("never ends"));
}

#[test]
fn hostile_input_is_an_error_not_a_crash() {
    // Deep nesting, huge numbers, garbage.
    let deep = format!(
        "{}struct S {{ long a; }};{}",
        "module m { ".repeat(500),
        "};".repeat(500)
    );
    assert!(parse(&deep).is_err());
    let expr = format!("const long N = {}1{};", "(".repeat(1000), ")".repeat(1000));
    assert!(parse(&expr).is_err());
    assert!(parse("const long long N = 999999999999999999999999999999999999999;").is_err());
    assert!(parse("struct S { long a[4294967296]; };").is_err());
    for junk in [
        "\u{0}",
        "@",
        "struct",
        "module m {",
        "union U switch (long) { };",
        "enum E {};",
        "'",
    ] {
        assert!(parse(junk).is_err(), "{junk:?}");
    }
}

#[test]
fn rust_is_generated_for_what_the_derive_expresses_and_refused_otherwise() {
    let idl = parse("module m { enum E { RED, DARK_RED }; union U switch (E) { case RED: long r; case DARK_RED: string d; }; struct S { @key string<8> id; U u; sequence<uint8> raw; }; };")
        .expect("parses");
    let rust = idl.to_rust(&Default::default()).expect("rust");
    assert!(rust.contains("pub mod m {"), "{rust}");
    assert!(rust.contains("#[dds(name = \"m::S\", final)]"), "{rust}");
    assert!(rust.contains("#[dds(key, bound = 8)]"), "{rust}");
    assert!(
        rust.contains("#[dds(case = E::DarkRed, name = \"d\")]"),
        "{rust}"
    );
    assert!(rust.contains("#[dds(idl = \"uint8\")]"), "{rust}");
    for (idl, what) in [
        ("struct S { wstring w; };", "wstring"),
        (
            "struct B { long a; }; struct S : B { long b; };",
            "struct inheritance",
        ),
        (
            "union U switch (long) { case 1: long a; default: short b; };",
            "`default:`",
        ),
        ("struct S { map<long, long> m; };", "a map"),
        ("bitmask F { A, B };", "a bitmask"),
    ] {
        let e = parse(idl)
            .expect("parses")
            .to_rust(&Default::default())
            .expect_err(idl);
        assert!(e.to_string().contains(what), "{e}");
        assert!(
            e.to_string()
                .contains("cannot be expressed with #[derive(DdsType)]"),
            "{e}"
        );
    }
}

#[test]
fn ros2_message_idl_reads() {
    // What rosidl generates: @verbatim comments with concatenated strings, @default and
    // @unit (ignored), a Constants module, a typedef'd array.
    let idl = parse(
        r#"
module builtin_interfaces { module msg {
  @verbatim (language="comment", text=
    "ROS Time." "\n"
    "See the design article.")
  struct Time { int32 sec; uint32 nanosec; };
}; };
module sensor_msgs { module msg {
  typedef double double__9[9];
  module Imu_Constants { const uint8 COVARIANCE_UNKNOWN = 0; };
  struct Imu {
    builtin_interfaces::msg::Time stamp;
    @default (value=0.0)
    double w;
    double__9 orientation_covariance;
    @unit (value="m/s^2")
    sequence<double, 3> accel;
  };
}; };
"#,
    )
    .expect("parses");
    assert_eq!(
        idl.type_names(),
        ["builtin_interfaces::msg::Time", "sensor_msgs::msg::Imu"]
    );
    let m = members(&idl.type_desc("sensor_msgs::msg::Imu").expect("Imu"));
    assert_eq!(m[0].2.name(), Some("builtin_interfaces::msg::Time"));
    assert_eq!(m[2].2.name(), Some("sensor_msgs::msg::double__9"));
    let rust = idl.to_rust(&Default::default()).expect("rust");
    assert!(
        rust.contains("pub const COVARIANCE_UNKNOWN: u8 = 0;"),
        "{rust}"
    );
    assert!(rust.contains("pub type double__9 = [f64; 9];"), "{rust}");
}
