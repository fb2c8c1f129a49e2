//! `transcode` re-serializes a sample in the other XCDR version, in its own byte order: what a
//! writer of XCDR2 sends a reader that reads only XCDR1 (Fast DDS 2.x).

use tachyon_cdr::{
    deserialize, serialize_to_vec, transcode, DdsType, DecodeError, Endianness, TranscodeError,
    XcdrVersion,
};

/// The OMG interoperability suite's `ShapeType`: `@appendable`, so XCDR2 puts a DHEADER in
/// front of it and XCDR1 does not.
#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(appendable)]
struct ShapeType {
    #[dds(key, bound = 128)]
    color: String,
    x: i32,
    y: i32,
    shapesize: i32,
    additional_payload_size: Vec<u8>,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(mutable)]
struct Wide {
    #[dds(key)]
    id: u64,
    value: f64,
    label: String,
}

fn shape() -> ShapeType {
    ShapeType {
        color: "BLUE".into(),
        x: 10,
        y: -20,
        shapesize: 30,
        additional_payload_size: vec![7; 9],
    }
}

#[test]
fn xcdr2_becomes_exactly_what_xcdr1_serialization_writes_and_back() {
    for endian in [Endianness::Little, Endianness::Big] {
        let v2 = serialize_to_vec(&shape(), XcdrVersion::Xcdr2, endian).expect("xcdr2");
        let v1 = serialize_to_vec(&shape(), XcdrVersion::Xcdr1, endian).expect("xcdr1");
        assert_ne!(v1, v2, "the DHEADER makes them differ");
        assert_eq!(
            transcode::<ShapeType>(&v2, XcdrVersion::Xcdr1).expect("to 1"),
            v1
        );
        assert_eq!(
            transcode::<ShapeType>(&v1, XcdrVersion::Xcdr2).expect("to 2"),
            v2
        );
        assert_eq!(
            ShapeType::transcode_serialized(&v2, XcdrVersion::Xcdr1),
            Some(v1.clone())
        );
        let back: ShapeType = deserialize(&v1).expect("decodes");
        assert_eq!(back, shape());
    }
    let w = Wide {
        id: 3,
        value: 0.5,
        label: "eight".into(),
    };
    let v2 = serialize_to_vec(&w, XcdrVersion::Xcdr2, Endianness::Little).expect("xcdr2");
    let v1 = serialize_to_vec(&w, XcdrVersion::Xcdr1, Endianness::Little).expect("xcdr1");
    assert_eq!(
        transcode::<Wide>(&v2, XcdrVersion::Xcdr1).expect("mutable"),
        v1
    );
}

#[test]
fn a_payload_that_does_not_decode_is_an_error_not_a_panic() {
    let v2 = serialize_to_vec(&shape(), XcdrVersion::Xcdr2, Endianness::Little).expect("xcdr2");
    for cut in 0..v2.len() - 4 {
        let r = transcode::<ShapeType>(&v2[..cut], XcdrVersion::Xcdr1);
        assert!(
            matches!(r, Err(TranscodeError::Decode(DecodeError { .. }))),
            "{cut}: {r:?}"
        );
    }
    assert_eq!(
        ShapeType::transcode_serialized(&[], XcdrVersion::Xcdr1),
        None
    );
}
