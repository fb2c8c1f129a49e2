//! Type assignability on minimal TypeObjects: the evolutions XTypes allows (appendable members
//! added, mutable members added or reordered, unions and enums grown) and those it refuses
//! (a changed member type, a renamed member, a new key, a must-understand member, a final
//! type grown), with the reason and the member where it fails. The cases are Cyclone DDS's
//! own (`tests/xtypes_assignability.c`: XSpace, XSpaceEnum, XSpaceTypeConsistencyEnforcement).

use std::sync::Arc;

use tachyon_cdr::{
    CaseDesc, EnumDesc, EnumLiteral, Extensibility, MemberDesc, Primitive, StructDesc, TypeDesc,
    UnionDesc,
};
use tachyon_xtypes::{is_assignable, AssignOptions, Reason, TypeLibrary, TypeRepresentations};

fn prim(p: Primitive) -> TypeDesc {
    TypeDesc::Primitive(p)
}

fn string(bound: u32) -> TypeDesc {
    TypeDesc::String { wide: false, bound }
}

fn m(name: &str, id: u32, ty: TypeDesc) -> MemberDesc {
    MemberDesc::new(name, id, ty)
}

fn key(mut d: MemberDesc) -> MemberDesc {
    d.key = true;
    d
}

fn st(name: &str, ext: Extensibility, members: Vec<MemberDesc>) -> TypeDesc {
    TypeDesc::Struct(Arc::new(StructDesc {
        name: name.into(),
        extensibility: ext,
        autoid_hash: false,
        nested: false,
        base: None,
        members,
    }))
}

fn check(reader: &TypeDesc, writer: &TypeDesc, o: &AssignOptions) -> Result<(), (Reason, String)> {
    let r = TypeRepresentations::of(reader).expect("reader type");
    let w = TypeRepresentations::of(writer).expect("writer type");
    let mut lib = TypeLibrary::new();
    lib.add_local(&r);
    lib.add_local(&w);
    is_assignable(&lib, &r.minimal.id, &w.minimal.id, o).map_err(|e| (e.reason, e.path))
}

fn ok(reader: &TypeDesc, writer: &TypeDesc) {
    assert_eq!(check(reader, writer, &AssignOptions::default()), Ok(()));
}

fn refused(reader: &TypeDesc, writer: &TypeDesc) -> (Reason, String) {
    check(reader, writer, &AssignOptions::default()).expect_err("not assignable")
}

use Extensibility::{Appendable, Final, Mutable};
use Primitive::{Int32, Int64};

fn xy(ext: Extensibility, extra: bool) -> TypeDesc {
    let mut members = vec![m("f1", 0, prim(Int32)), m("f2", 1, string(0))];
    if extra {
        members.push(m("f3", 2, prim(Int64)));
    }
    st("XType", ext, members)
}

#[test]
fn identical_types_are_assignable() {
    for ext in [Final, Appendable, Mutable] {
        ok(&xy(ext, false), &xy(ext, false));
    }
}

#[test]
fn an_appendable_member_added_is_assignable_both_ways() {
    ok(&xy(Appendable, false), &xy(Appendable, true));
    ok(&xy(Appendable, true), &xy(Appendable, false));
}

#[test]
fn a_mutable_member_added_or_reordered_is_assignable() {
    ok(&xy(Mutable, false), &xy(Mutable, true));
    let reordered = st(
        "XType",
        Mutable,
        vec![m("f2", 1, string(0)), m("f1", 0, prim(Int32))],
    );
    ok(&xy(Mutable, false), &reordered);
}

#[test]
fn a_final_type_grown_is_not() {
    assert_eq!(
        refused(&xy(Final, false), &xy(Final, true)).0,
        Reason::NumberOfMembers
    );
    assert_eq!(
        refused(&xy(Final, true), &xy(Final, false)).0,
        Reason::NumberOfMembers
    );
}

#[test]
fn a_changed_member_type_is_not_and_the_member_is_named() {
    for ext in [Final, Appendable, Mutable] {
        let changed = st(
            "XType",
            ext,
            vec![m("f1", 0, prim(Int64)), m("f2", 1, string(0))],
        );
        assert_eq!(
            refused(&xy(ext, false), &changed),
            (Reason::IncompatibleType, ".id0".to_owned()),
            "{ext:?}"
        );
    }
}

#[test]
fn no_primitive_widening() {
    let r = st("T", Final, vec![m("a", 0, prim(Int64))]);
    let w = st("T", Final, vec![m("a", 0, prim(Int32))]);
    assert_eq!(refused(&r, &w).0, Reason::IncompatibleType);
}

#[test]
fn a_renamed_member_is_refused_unless_names_are_ignored() {
    let renamed = st(
        "XType",
        Final,
        vec![m("f1a", 0, prim(Int32)), m("f2", 1, string(0))],
    );
    assert_eq!(
        refused(&xy(Final, false), &renamed),
        (Reason::NameDiffers, ".id0".to_owned())
    );
    let o = AssignOptions {
        ignore_member_names: true,
        ..AssignOptions::default()
    };
    assert_eq!(check(&xy(Final, false), &renamed, &o), Ok(()));
}

#[test]
fn different_extensibility_is_refused() {
    assert_eq!(
        refused(&xy(Final, false), &xy(Appendable, false)).0,
        Reason::DifferentExtensibility
    );
}

#[test]
fn keys_must_be_on_both_sides() {
    let keyed = st(
        "XType",
        Mutable,
        vec![
            m("f1", 0, prim(Int32)),
            m("f2", 1, string(0)),
            key(m("k", 5, prim(Int32))),
        ],
    );
    assert_eq!(
        refused(&xy(Mutable, false), &keyed),
        (Reason::KeyDiffers, ".id5".to_owned())
    );
    assert_eq!(
        refused(&keyed, &xy(Mutable, false)),
        (Reason::KeyDiffers, ".id5".to_owned())
    );
}

#[test]
fn a_must_understand_member_must_be_known() {
    let mut mu = m("f3", 2, prim(Int32));
    mu.must_understand = true;
    let w = st(
        "XType",
        Mutable,
        vec![m("f1", 0, prim(Int32)), m("f2", 1, string(0)), mu],
    );
    assert_eq!(refused(&xy(Mutable, false), &w).0, Reason::MustUnderstand);
}

#[test]
fn string_bounds_count_when_asked_and_always_for_keys() {
    let r = st("S", Final, vec![m("s", 0, string(8))]);
    let w = st("S", Final, vec![m("s", 0, string(16))]);
    ok(&r, &w);
    let strict = AssignOptions {
        ignore_string_bounds: false,
        ..AssignOptions::default()
    };
    assert_eq!(check(&r, &w, &strict).map_err(|e| e.0), Err(Reason::Bound));
    assert_eq!(check(&w, &r, &strict), Ok(()));
    let rk = st("S", Final, vec![key(m("s", 0, string(8)))]);
    let wk = st("S", Final, vec![key(m("s", 0, string(16)))]);
    assert_eq!(refused(&rk, &wk), (Reason::Bound, ".id0".to_owned()));
}

#[test]
fn a_sequence_of_a_final_struct_needs_the_same_struct() {
    let inner = |extra: bool, ext| {
        let mut v = vec![m("a", 0, prim(Int32))];
        if extra {
            v.push(m("b", 1, prim(Int32)));
        }
        st("Inner", ext, v)
    };
    let outer = |i: TypeDesc| {
        st(
            "Outer",
            Appendable,
            vec![m(
                "s",
                0,
                TypeDesc::Sequence {
                    element: Box::new(i),
                    bound: 0,
                },
            )],
        )
    };
    assert_eq!(
        refused(&outer(inner(false, Final)), &outer(inner(true, Final))).0,
        Reason::NotDelimited
    );
    // An appendable element is delimited: it may grow.
    ok(
        &outer(inner(false, Appendable)),
        &outer(inner(true, Appendable)),
    );
}

fn choice(ext: Extensibility, cases: &[(&str, u32, i32, TypeDesc)]) -> TypeDesc {
    TypeDesc::Union(Arc::new(UnionDesc {
        name: "Choice".into(),
        extensibility: ext,
        nested: false,
        discriminator: prim(Int32),
        discriminator_key: false,
        cases: cases
            .iter()
            .map(|(n, id, label, ty)| CaseDesc {
                name: (*n).into(),
                id: *id,
                ty: ty.clone(),
                labels: vec![*label],
                default: false,
                external: false,
            })
            .collect(),
    }))
}

#[test]
fn unions_grow_when_appendable_not_when_final() {
    let two = |ext| choice(ext, &[("l", 0, 1, prim(Int32)), ("s", 1, 2, string(0))]);
    let three = |ext| {
        choice(
            ext,
            &[
                ("l", 0, 1, prim(Int32)),
                ("s", 1, 2, string(0)),
                ("d", 2, 3, prim(Int64)),
            ],
        )
    };
    ok(&two(Appendable), &three(Appendable));
    assert_eq!(refused(&three(Final), &two(Final)).0, Reason::MissingCase);
    let retyped = choice(
        Appendable,
        &[("l", 0, 1, prim(Int64)), ("s", 1, 2, string(0))],
    );
    assert_eq!(
        refused(&two(Appendable), &retyped).0,
        Reason::IncompatibleType
    );
    let disjoint = choice(Appendable, &[("x", 7, 9, prim(Int32))]);
    assert_eq!(refused(&two(Appendable), &disjoint).0, Reason::NoOverlap);
}

fn color(literals: &[(&str, i32)]) -> TypeDesc {
    TypeDesc::Enum(Arc::new(EnumDesc {
        name: "Color".into(),
        bit_bound: 32,
        literals: literals
            .iter()
            .map(|(n, v)| EnumLiteral {
                name: (*n).into(),
                value: *v,
                default: false,
            })
            .collect(),
    }))
}

#[test]
fn final_enums_need_the_same_enumerators() {
    let rgb = color(&[("RED", 0), ("GREEN", 1), ("BLUE", 2)]);
    let rgby = color(&[("RED", 0), ("GREEN", 1), ("BLUE", 2), ("YELLOW", 3)]);
    let renamed = color(&[("RED", 0), ("GREEN", 1), ("AZURE", 2)]);
    let holder = |e: &TypeDesc| st("H", Appendable, vec![m("c", 0, e.clone())]);
    ok(&holder(&rgb), &holder(&rgb));
    assert_eq!(
        refused(&holder(&rgb), &holder(&rgby)).0,
        Reason::MissingCase
    );
    assert_eq!(
        refused(&holder(&rgb), &holder(&renamed)).0,
        Reason::NameDiffers
    );
}

#[test]
fn an_unknown_type_is_unresolved() {
    let r = TypeRepresentations::of(&xy(Appendable, false)).expect("ok");
    let w = TypeRepresentations::of(&xy(Appendable, true)).expect("ok");
    let mut lib = TypeLibrary::new();
    lib.add_local(&r);
    let e = is_assignable(
        &lib,
        &r.minimal.id,
        &w.minimal.id,
        &AssignOptions::default(),
    )
    .expect_err("unresolved");
    assert_eq!(e.reason, Reason::Unresolved);
    assert_eq!(lib.unresolved(&w.minimal.id), vec![w.minimal.id.clone()]);
}

#[test]
fn a_received_object_must_hash_to_its_identifier() {
    let r = TypeRepresentations::of(&xy(Appendable, false)).expect("ok");
    let w = TypeRepresentations::of(&xy(Appendable, true)).expect("ok");
    let mut lib = TypeLibrary::new();
    let wrong = r.minimal.object.clone().expect("object").object;
    assert!(lib.add_received(&w.minimal.id, wrong).is_err());
    let right = w.minimal.object.clone().expect("object").object;
    assert_eq!(lib.add_received(&w.minimal.id, right), Ok(true));
    assert!(lib.is_resolved(&w.minimal.id));
}

/// The suite's ShapeType, its last member a sequence of `element` (Cyclone DDS 0.10 writes
/// `uint8` as `octet`).
fn suite_shape(element: Primitive) -> TypeDesc {
    st(
        "ShapeType",
        Appendable,
        vec![
            key(m("color", 0, string(128))),
            m("x", 1, prim(Int32)),
            m(
                "payload",
                2,
                TypeDesc::Sequence {
                    element: Box::new(prim(element)),
                    bound: 0,
                },
            ),
        ],
    )
}

#[test]
fn uint8_and_int8_are_octet_and_char_only_for_peers_that_write_them_so() {
    let (octet, uint8) = (suite_shape(Primitive::Byte), suite_shape(Primitive::UInt8));
    assert_eq!(
        refused(&uint8, &octet),
        (Reason::IncompatibleType, ".id2".to_owned())
    );
    assert_eq!(refused(&octet, &uint8).0, Reason::IncompatibleType);
    let older = AssignOptions {
        xtypes_1_2_integers: true,
        ..AssignOptions::default()
    };
    assert_eq!(check(&uint8, &octet, &older), Ok(()));
    assert_eq!(check(&octet, &uint8, &older), Ok(()));
    // Cyclone DDS 0.10 writes int8 as char.
    let (int8, char8) = (suite_shape(Primitive::Int8), suite_shape(Primitive::Char8));
    assert_eq!(refused(&int8, &char8).0, Reason::IncompatibleType);
    assert_eq!(check(&int8, &char8, &older), Ok(()));
    assert_eq!(check(&char8, &int8, &older), Ok(()));
    // Other primitives stay apart.
    assert_eq!(
        check(&int8, &octet, &older).map_err(|e| e.0),
        Err(Reason::IncompatibleType)
    );
}

#[test]
fn a_type_says_whether_it_uses_xtypes_1_3_integers() {
    let uses = |d: &TypeDesc| {
        TypeRepresentations::of(d)
            .expect("representable")
            .xtypes_1_3_integers
    };
    assert!(uses(&suite_shape(Primitive::UInt8)));
    assert!(uses(&suite_shape(Primitive::Int8)));
    assert!(!uses(&suite_shape(Primitive::Byte)));
    assert!(!uses(&xy(Final, true)));
    // Nested, through a member's struct.
    let outer = st(
        "Outer",
        Final,
        vec![m("inner", 0, suite_shape(Primitive::UInt8))],
    );
    assert!(uses(&outer));
}
