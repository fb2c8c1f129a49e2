//! Malformed input gives a typed error that says what and where, never a panic, and never an
//! allocation sized by an unchecked length.

mod common;
use common::*;
use tachyon_cdr::{
    deserialize, serialize_to_vec, DdsType, DecodeErrorKind, EncodeError, Endianness, XcdrVersion,
};

fn le(bytes: &[u8]) -> Vec<u8> {
    let mut v = vec![0x00, 0x01, 0x00, 0x00]; // CDR_LE
    v.extend_from_slice(bytes);
    v
}

fn le2(bytes: &[u8]) -> Vec<u8> {
    let mut v = vec![0x00, 0x07, 0x00, 0x00]; // CDR2_LE
    v.extend_from_slice(bytes);
    v
}

#[test]
fn truncation_reports_offset_and_sizes() {
    // ShapeType: "RED" then x; cut in the middle of x.
    let bytes = le(&[4, 0, 0, 0, b'R', b'E', b'D', 0, 1, 0]);
    let e = deserialize::<ShapeType>(&bytes).unwrap_err();
    assert_eq!(e.offset, 12);
    assert_eq!(
        e.kind,
        DecodeErrorKind::Truncated {
            needed: 4,
            remaining: 2
        }
    );
    assert_eq!(
        e.to_string(),
        "at offset 12: truncated: 4 bytes needed, 2 remain"
    );
}

#[test]
fn string_longer_than_its_bound() {
    let mut body = vec![21, 0, 0, 0];
    body.extend_from_slice(b"twenty characters!!!\0");
    body.resize(body.len() + 3, 0);
    body.extend_from_slice(&[0; 12]);
    let bytes = le(&body);
    // Strings.bounded is string<8>; put the long one there.
    let mut s = vec![2, 0, 0, 0, b'a', 0, 0, 0];
    s.extend_from_slice(&body);
    let e = deserialize::<Strings>(&le(&s)).unwrap_err();
    assert_eq!(
        e.kind,
        DecodeErrorKind::BoundExceeded {
            what: "string",
            len: 21,
            bound: 9
        }
    );
    assert_eq!(e.offset, 12);
    let _ = bytes;
}

#[test]
fn sequence_count_beyond_input_is_rejected_before_allocating() {
    // Sequences.longs announces 0xffff_ffff elements in 8 bytes of input.
    let bytes = le(&[0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
    let e = deserialize::<Sequences>(&bytes).unwrap_err();
    assert_eq!(
        e.kind,
        DecodeErrorKind::LengthExceedsInput {
            what: "sequence",
            len: 0xffff_ffff,
            remaining: 4
        }
    );
    assert_eq!(e.offset, 4);
}

#[test]
fn bounded_sequence_over_its_bound() {
    // Sequences.octets is sequence<octet, 16>: announce 17.
    let mut body = vec![0, 0, 0, 0, 17, 0, 0, 0];
    body.extend_from_slice(&[0; 17]);
    let e = deserialize::<Sequences>(&le(&body)).unwrap_err();
    assert_eq!(
        e.kind,
        DecodeErrorKind::BoundExceeded {
            what: "sequence",
            len: 17,
            bound: 16
        }
    );
}

#[test]
fn invalid_boolean() {
    let mut p = serialize_to_vec(
        &match sample("Primitives", "prims").unwrap() {
            Sample::Primitives(p) => p,
            _ => unreachable!(),
        },
        XcdrVersion::Xcdr1,
        Endianness::Little,
    )
    .unwrap();
    p[4] = 2;
    let e = deserialize::<Primitives>(&p).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::InvalidBool(2));
    assert_eq!(e.offset, 4);
}

#[test]
fn unknown_union_discriminator_and_enum_value() {
    let e = deserialize::<Choice>(&le(&[9, 0, 0, 0, 0, 0, 0, 0])).unwrap_err();
    assert_eq!(
        e.kind,
        DecodeErrorKind::UnknownDiscriminator {
            type_name: "Choice",
            value: 9
        }
    );
    assert!(e
        .to_string()
        .contains("unknown union discriminator 9 for Choice"));
    let e = deserialize::<Color>(&le(&[7, 0, 0, 0])).unwrap_err();
    assert_eq!(
        e.kind,
        DecodeErrorKind::UnknownEnumValue {
            type_name: "Color",
            value: 7
        }
    );
}

#[test]
fn string_without_terminator_or_with_bad_utf8() {
    let e = deserialize::<Big>(&le(&[0, 0, 0, 0])).map(|_| ());
    assert!(e.is_ok());
    let e = deserialize::<Strings>(&le(&[3, 0, 0, 0, b'a', b'b', b'c'])).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::StringNotTerminated);
    let e = deserialize::<Strings>(&le(&[3, 0, 0, 0, 0xff, 0xfe, 0])).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::InvalidUtf8);
    let e = deserialize::<Strings>(&le(&[3, 0, 0, 0, b'a', 0, 0])).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::StringNotTerminated);
}

#[test]
fn unknown_must_understand_member_is_an_error_unknown_plain_member_is_skipped() {
    // PL_CDR2_LE MutableStruct with an extra member id 99.
    let v = MutableStruct {
        id: 1,
        name: "n".into(),
        value: 2.0,
        opt: None,
    };
    let mut bytes = serialize_to_vec(&v, XcdrVersion::Xcdr2, Endianness::Little).unwrap();
    // Append member 99 (LC 2, 4 bytes) and fix the DHEADER.
    let pad = (bytes[3] & 3) as usize;
    bytes.truncate(bytes.len() - pad);
    let extra = |mu: bool| {
        let em: u32 = (if mu { 0x8000_0000 } else { 0 }) | (2 << 28) | 99;
        let mut e = em.to_le_bytes().to_vec();
        e.extend_from_slice(&5u32.to_le_bytes());
        e
    };
    for mu in [false, true] {
        let mut b = bytes.clone();
        while (b.len() - 4) % 4 != 0 {
            b.push(0);
        }
        b.extend_from_slice(&extra(mu));
        let dlen = (b.len() - 8) as u32;
        b[4..8].copy_from_slice(&dlen.to_le_bytes());
        b[2..4].copy_from_slice(&[0, 0]);
        let r = deserialize::<MutableStruct>(&b);
        if mu {
            assert_eq!(
                r.unwrap_err().kind,
                DecodeErrorKind::MustUnderstand { member_id: 99 }
            );
        } else {
            assert_eq!(r.unwrap(), v);
        }
    }
}

#[test]
fn missing_mutable_member_takes_its_default() {
    // Only the key member: DHEADER 8, EMHEADER (M, LC2, id 0), value 5.
    let mut b = vec![0x00, 0x0b, 0x00, 0x00];
    b.extend_from_slice(&8u32.to_le_bytes());
    b.extend_from_slice(&(0x8000_0000u32 | (2 << 28)).to_le_bytes());
    b.extend_from_slice(&5i32.to_le_bytes());
    let v = deserialize::<MutableStruct>(&b).unwrap();
    assert_eq!(
        v,
        MutableStruct {
            id: 5,
            name: String::new(),
            value: 0.0,
            opt: None
        }
    );
}

#[test]
fn dheader_longer_than_input() {
    let mut b = vec![0x00, 0x09, 0x00, 0x00];
    b.extend_from_slice(&1000u32.to_le_bytes());
    b.extend_from_slice(&[0; 8]);
    let e = deserialize::<AppendableStruct>(&b).unwrap_err();
    assert_eq!(
        e.kind,
        DecodeErrorKind::LengthExceedsInput {
            what: "DHEADER",
            len: 1000,
            remaining: 8
        }
    );
}

#[test]
fn appendable_type_accepts_a_newer_longer_version() {
    // AppendableStruct followed by an extra member a newer writer appended.
    let v = AppendableStruct {
        a: 1,
        b: "x".into(),
        c: vec![7],
    };
    let bytes = serialize_to_vec(&v, XcdrVersion::Xcdr2, Endianness::Little).unwrap();
    let pad = (bytes[3] & 3) as usize;
    let mut b = bytes[..bytes.len() - pad].to_vec();
    while (b.len() - 4) % 4 != 0 {
        b.push(0);
    }
    b.extend_from_slice(&0xdead_beefu32.to_le_bytes());
    let dlen = (b.len() - 8) as u32;
    b[4..8].copy_from_slice(&dlen.to_le_bytes());
    b[2..4].copy_from_slice(&[0, 0]);
    assert_eq!(deserialize::<AppendableStruct>(&b).unwrap(), v);
}

#[derive(DdsType, Debug, PartialEq)]
#[dds(name = "Node")]
struct Node {
    children: Vec<Node>,
}

#[test]
fn nesting_depth_is_limited() {
    let mut n = Node { children: vec![] };
    for _ in 0..300 {
        n = Node { children: vec![n] };
    }
    let bytes = serialize_to_vec(&n, XcdrVersion::Xcdr2, Endianness::Little).unwrap();
    let e = deserialize::<Node>(&bytes).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::DepthLimitExceeded { limit: 128 });
    // Drop iteratively so the test itself does not recurse deeply.
    let mut cur = Some(n);
    while let Some(mut node) = cur {
        cur = node.children.pop();
    }
}

#[test]
fn encoding_errors_are_typed() {
    let s = Strings {
        plain: "ok".into(),
        bounded: "123456789".into(),
        empty: String::new(),
    };
    assert_eq!(
        serialize_to_vec(&s, XcdrVersion::Xcdr2, Endianness::Little).unwrap_err(),
        EncodeError::BoundExceeded {
            what: "string",
            len: 9,
            bound: 8
        }
    );
    let s = Strings {
        plain: "a\0b".into(),
        bounded: String::new(),
        empty: String::new(),
    };
    assert_eq!(
        serialize_to_vec(&s, XcdrVersion::Xcdr2, Endianness::Little).unwrap_err(),
        EncodeError::NulInString { at: 1 }
    );
    let mut p = match sample("Primitives", "prims").unwrap() {
        Sample::Primitives(p) => p,
        _ => unreachable!(),
    };
    p.c = 'Ω';
    assert_eq!(
        serialize_to_vec(&p, XcdrVersion::Xcdr2, Endianness::Little).unwrap_err(),
        EncodeError::CharOutOfRange('Ω')
    );
    let mut buf = [0u8; 10];
    let v = ShapeType {
        color: "RED".into(),
        x: 1,
        y: 2,
        shapesize: 3,
    };
    assert!(matches!(
        tachyon_cdr::serialize(&v, XcdrVersion::Xcdr2, Endianness::Little, &mut buf),
        Err(EncodeError::BufferTooSmall { capacity: 10, .. })
    ));
}

#[test]
fn unknown_encapsulation() {
    let e = deserialize::<ShapeType>(&[0x00, 0x04, 0, 0]).unwrap_err();
    assert_eq!(e.kind, DecodeErrorKind::UnknownEncapsulation(4));
    let e = deserialize::<ShapeType>(&[0x00]).unwrap_err();
    assert!(matches!(e.kind, DecodeErrorKind::Truncated { .. }));
    let _ = le2(&[]);
}
