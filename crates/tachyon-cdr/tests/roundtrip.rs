//! Every sample round-trips in every version and byte order, and sizes agree with encodings.

mod common;
use common::*;
use tachyon_cdr::{
    deserialize, serialize, serialize_to_vec, serialized_size, DdsType, Endianness, Extensibility,
    XcdrVersion,
};

const COMBOS: [(XcdrVersion, Endianness); 4] = [
    (XcdrVersion::Xcdr1, Endianness::Little),
    (XcdrVersion::Xcdr1, Endianness::Big),
    (XcdrVersion::Xcdr2, Endianness::Little),
    (XcdrVersion::Xcdr2, Endianness::Big),
];

#[test]
fn every_sample_round_trips() {
    for (ty, name) in SAMPLES {
        let s = sample(ty, name).unwrap();
        with_sample!(&s, v, {
            for (ver, end) in COMBOS {
                let bytes = serialize_to_vec(v, ver, end).unwrap();
                assert_eq!(bytes.len(), serialized_size(v, ver).unwrap(), "{name}");
                assert_eq!(bytes.len() % 4, 0);
                let back =
                    deserialize(&bytes).unwrap_or_else(|e| panic!("{name} {ver:?} {end:?}: {e}"));
                assert_eq!(v, &back, "{name} {ver:?} {end:?}");
            }
        });
    }
}

#[test]
fn buffer_too_small_is_an_error_at_every_size() {
    let s = sample("WithUnion", "unions").unwrap();
    let Sample::WithUnion(v) = s else {
        unreachable!()
    };
    let full = serialized_size(&v, XcdrVersion::Xcdr2).unwrap();
    for n in 0..full {
        let mut buf = vec![0u8; n];
        assert!(serialize(&v, XcdrVersion::Xcdr2, Endianness::Little, &mut buf).is_err());
    }
}

#[test]
fn truncated_input_is_an_error_never_a_panic() {
    for (ty, name) in SAMPLES {
        let s = sample(ty, name).unwrap();
        with_sample!(&s, v, {
            for (ver, end) in COMBOS {
                let bytes = serialize_to_vec(v, ver, end).unwrap();
                let pad = (bytes[3] & 3) as usize;
                // An appendable struct has no DHEADER in XCDR1: a sample cut at a member
                // boundary is a writer of an older type version, and decodes with defaults
                // (tests/key_forms.rs); cut elsewhere it is an error, never a panic.
                let older =
                    ver == XcdrVersion::Xcdr1 && extensibility_of(v) == Extensibility::Appendable;
                for cut in 0..bytes.len() - pad {
                    let r = deserialize_like(v, &bytes[..cut]);
                    assert!(
                        older || r.is_err(),
                        "{name} {ver:?} {end:?} cut at {cut} decoded"
                    );
                }
            }
        });
    }
}

fn extensibility_of<T: DdsType>(_: &T) -> Extensibility {
    T::EXTENSIBILITY
}

fn deserialize_like<'a, T>(_: &T, bytes: &'a [u8]) -> Result<T, tachyon_cdr::DecodeError>
where
    T: DdsType + tachyon_cdr::Decode<'a>,
{
    deserialize(bytes)
}

#[test]
fn type_names_and_keys() {
    assert_eq!(ShapeType::TYPE_NAME, "ShapeType");
    const { assert!(ShapeType::KEYED) };
    const { assert!(!Primitives::KEYED) };
    assert_eq!(
        tachyon_cdr::key_max_size::<KeyedMulti>(XcdrVersion::Xcdr2),
        Some(12)
    );
    assert_eq!(
        tachyon_cdr::key_max_size::<KeyedMulti>(XcdrVersion::Xcdr1),
        Some(16)
    );
    assert_eq!(
        tachyon_cdr::key_max_size::<ShapeType>(XcdrVersion::Xcdr2),
        Some(133)
    );
}
