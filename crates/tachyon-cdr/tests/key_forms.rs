//! The two forms of a key-only payload (a dispose's or unregister's serialized key): the key
//! holder of XTypes 1.3 7.2.2.4.7, framed as the type frames its members (what Cyclone DDS 11
//! writes and requires), and the bare key members (what Cyclone DDS 0.10 writes and
//! requires). Tachyon writes either and reads both. And an XCDR1 appendable sample that ends
//! before the reader's type does: the members past its end take their default values.

mod common;

use common::{AppendableShape, MutableStruct, ShapeType};
use tachyon_cdr::{
    deserialize, deserialize_key, key_hash, serialize_key_payload, serialize_to_vec, DdsType,
    Decode, Endianness, KeyForm, XcdrVersion,
};

fn key_payload<T: DdsType>(v: &T, version: XcdrVersion, e: Endianness, form: KeyForm) -> Vec<u8> {
    let mut buf = vec![0u8; 512];
    let n = serialize_key_payload(v, version, e, form, &mut buf).expect("key payload");
    buf.truncate(n);
    buf
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Both forms decode to a value with the sample's key hash.
fn both_forms_read_back<T>(v: &T, version: XcdrVersion)
where
    T: DdsType + for<'de> Decode<'de> + std::fmt::Debug,
{
    for e in [Endianness::Little, Endianness::Big] {
        for form in [KeyForm::Framed, KeyForm::Bare] {
            let p = key_payload(v, version, e, form);
            let back: T = deserialize_key(&p)
                .unwrap_or_else(|err| panic!("{form:?} {version:?} {e:?} {}: {err}", hex(&p)));
            assert_eq!(
                key_hash(&back).expect("hash"),
                key_hash(v).expect("hash"),
                "{form:?} {version:?} {e:?}: {back:?}"
            );
        }
    }
}

fn blue() -> AppendableShape {
    AppendableShape {
        color: "BLUE".into(),
        x: 1,
        y: 2,
        shapesize: 30,
    }
}

#[test]
fn an_appendable_key_in_xcdr2_is_framed_by_a_dheader_as_cyclone_dds_11_writes_it() {
    // Captured from Cyclone DDS 11.0.1 (issue 17): `09000000 05000000 424c5545 00…`, a
    // DHEADER of 9, then the string; D_CDR2_LE, 3 octets of padding.
    let framed = key_payload(
        &blue(),
        XcdrVersion::Xcdr2,
        Endianness::Little,
        KeyForm::Framed,
    );
    assert_eq!(hex(&framed), "000900030900000005000000424c554500000000");
    // Cyclone DDS 0.10.2's: the string alone.
    let bare = key_payload(
        &blue(),
        XcdrVersion::Xcdr2,
        Endianness::Little,
        KeyForm::Bare,
    );
    assert_eq!(hex(&bare), "0009000305000000424c554500000000");
    both_forms_read_back(&blue(), XcdrVersion::Xcdr2);
}

#[test]
fn forms_that_do_not_differ_are_the_same_bytes() {
    // @final: no framing in either version; @appendable in XCDR1: no DHEADER.
    let shape = ShapeType {
        color: "RED".into(),
        x: 0,
        y: 0,
        shapesize: 0,
    };
    for version in [XcdrVersion::Xcdr1, XcdrVersion::Xcdr2] {
        let f = key_payload(&shape, version, Endianness::Little, KeyForm::Framed);
        let b = key_payload(&shape, version, Endianness::Little, KeyForm::Bare);
        assert_eq!(f, b, "final {version:?}");
        assert!(!KeyForm::differ::<ShapeType>(version));
        both_forms_read_back(&shape, version);
    }
    let f = key_payload(
        &blue(),
        XcdrVersion::Xcdr1,
        Endianness::Little,
        KeyForm::Framed,
    );
    let b = key_payload(
        &blue(),
        XcdrVersion::Xcdr1,
        Endianness::Little,
        KeyForm::Bare,
    );
    assert_eq!(f, b, "appendable in XCDR1");
}

#[test]
fn a_mutable_key_holder_has_member_headers_in_both_versions() {
    let v = MutableStruct {
        id: 7,
        name: "not in the key".into(),
        value: 1.5,
        opt: Some(3),
    };
    // XCDR2: DHEADER, then an EMHEADER (must-understand, id 0, 4 octets) and the id.
    let framed = key_payload(&v, XcdrVersion::Xcdr2, Endianness::Little, KeyForm::Framed);
    assert_eq!(
        hex(&framed[4..]),
        "08000000".to_owned() + "000000a0" + "07000000"
    );
    // XCDR1: a parameter list (id 0, length 4, the id) and its end (0x3f02, must-understand).
    let framed1 = key_payload(&v, XcdrVersion::Xcdr1, Endianness::Little, KeyForm::Framed);
    assert_eq!(
        hex(&framed1[4..]),
        "00000400".to_owned() + "07000000" + "027f0000"
    );
    both_forms_read_back(&v, XcdrVersion::Xcdr2);
    both_forms_read_back(&v, XcdrVersion::Xcdr1);
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "InnerKey", appendable)]
struct InnerKey {
    #[dds(key)]
    a: i32,
    #[dds(key)]
    b: u8,
    c: i32,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "OuterKey", appendable)]
struct OuterKey {
    v: i32,
    #[dds(key)]
    inner: InnerKey,
    #[dds(key, bound = 16)]
    name: String,
}

#[test]
fn a_nested_appendable_key_member_has_its_own_dheader_and_declaration_order_is_kept() {
    let v = OuterKey {
        v: 99,
        inner: InnerKey { a: 1, b: 2, c: 3 },
        name: "n".into(),
    };
    let framed = key_payload(&v, XcdrVersion::Xcdr2, Endianness::Little, KeyForm::Framed);
    // Outer DHEADER (18): inner DHEADER (5): a, b; padding; the string; the payload's padding.
    assert_eq!(
        hex(&framed[4..]),
        "12000000".to_owned()
            + "05000000"
            + "01000000"
            + "02"
            + "000000"
            + "02000000"
            + "6e00"
            + "0000"
    );
    both_forms_read_back(&v, XcdrVersion::Xcdr2);
}

#[test]
fn a_hostile_key_payload_is_an_error_not_a_panic() {
    let mut p = key_payload(
        &blue(),
        XcdrVersion::Xcdr2,
        Endianness::Little,
        KeyForm::Framed,
    );
    // A DHEADER past the end of the payload, then one that cuts the string short.
    p[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(deserialize_key::<AppendableShape>(&p).is_err());
    p[4..8].copy_from_slice(&6u32.to_le_bytes());
    assert!(deserialize_key::<AppendableShape>(&p).is_err());
    for n in 0..p.len() {
        let _ = deserialize_key::<AppendableShape>(&p[..n]);
        let _ = deserialize_key::<OuterKey>(&p[..n]);
        let _ = deserialize_key::<MutableStruct>(&p[..n]);
    }
}

/// The classic four-member ShapeType, @appendable (what RustDDS 0.15 publishes).
#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "ShapeType", appendable)]
struct Shape4 {
    #[dds(key, bound = 128)]
    color: String,
    x: i32,
    y: i32,
    shapesize: i32,
}

/// The OMG suite's five-member one.
#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "ShapeType", appendable)]
struct Shape5 {
    #[dds(key, bound = 128)]
    color: String,
    x: i32,
    y: i32,
    shapesize: i32,
    additional_payload_size: Vec<u8>,
}

/// Ends with an octet, so that XCDR1 pads the body.
#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "Small", appendable)]
struct Small1 {
    a: i32,
    b: u8,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "Small", appendable)]
struct Small2 {
    a: i32,
    b: u8,
    c: u8,
    d: i32,
}

#[test]
fn an_xcdr1_appendable_sample_of_an_older_type_version_decodes_with_defaults() {
    let old = Shape4 {
        color: "GREEN".into(),
        x: 10,
        y: 20,
        shapesize: 30,
    };
    for e in [Endianness::Little, Endianness::Big] {
        for version in [XcdrVersion::Xcdr1, XcdrVersion::Xcdr2] {
            let bytes = serialize_to_vec(&old, version, e).expect("serialize");
            let new: Shape5 = deserialize(&bytes).expect("an older writer's sample");
            assert_eq!(
                (new.color.as_str(), new.x, new.y, new.shapesize),
                ("GREEN", 10, 20, 30)
            );
            assert!(new.additional_payload_size.is_empty());
            // Padding at the end (announced in the header's options) is not a member.
            let small = serialize_to_vec(&Small1 { a: 5, b: 6 }, version, e).expect("serialize");
            let wider: Small2 = deserialize(&small).expect("padded");
            assert_eq!(
                (wider.a, wider.b, wider.c, wider.d),
                (5, 6, 0, 0),
                "{version:?}"
            );
        }
    }
    // A sample that ends inside a member is still an error.
    let bytes = serialize_to_vec(&old, XcdrVersion::Xcdr1, Endianness::Little).expect("ser");
    assert!(deserialize::<Shape5>(&bytes[..bytes.len() - 2]).is_err());
}
