//! Property tests: every construct round-trips in XCDR1 and XCDR2, both byte orders; decoding
//! arbitrary or corrupted bytes never panics; borrowed decoding points into the input.

mod common;
use common::{Choice, Color, Inner, Small};
use proptest::prelude::*;
use tachyon_cdr::{
    deserialize, serialize_to_vec, serialized_size, DdsType, Endianness, XcdrVersion,
};

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "prop::App", appendable)]
struct App {
    a: i32,
    b: Option<String>,
    c: Vec<Color>,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "prop::Mut", mutable)]
struct Mut {
    #[dds(key)]
    k: u16,
    s: String,
    #[dds(id = 100)]
    v: Vec<f64>,
    o: Option<Inner>,
    bytes: Vec<u8>,
    shorts: Vec<i16>,
    arr: [i64; 2],
    e: Color,
    u: Choice,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "prop::Rich")]
struct Rich {
    b: bool,
    c: char,
    o: u8,
    i8v: i8,
    s: i16,
    us: u16,
    l: i32,
    ul: u32,
    ll: i64,
    ull: u64,
    f: f32,
    d: f64,
    #[dds(key, bound = 16)]
    name: String,
    text: String,
    longs: Vec<i32>,
    #[dds(bound = 64)]
    octets: Vec<u8>,
    strings: Vec<String>,
    inners: Vec<Inner>,
    grid: [[i16; 3]; 2],
    names: [String; 2],
    opt_l: Option<i32>,
    opt_s: Option<String>,
    color: Color,
    choice: Choice,
    small: Small,
    app: App,
    muts: Vec<Mut>,
    nested_seq: Vec<Vec<u32>>,
}

/// A `@final` struct without optional or bounded members: decoded into member by member.
#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "prop::Flat", final)]
struct Flat {
    #[dds(key)]
    k: u32,
    bytes: Vec<u8>,
    words: Vec<u32>,
    s: String,
    inners: Vec<Inner>,
    app: App,
    nested: Vec<Vec<u8>>,
}

fn flat() -> impl Strategy<Value = Flat> {
    (
        any::<u32>(),
        proptest::collection::vec(any::<u8>(), 0..300),
        proptest::collection::vec(any::<u32>(), 0..5),
        text(),
        proptest::collection::vec(inner(), 0..3),
        app(),
        proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..9), 0..3),
    )
        .prop_map(|(k, bytes, words, s, inners, app, nested)| Flat {
            k,
            bytes,
            words,
            s,
            inners,
            app,
            nested,
        })
}

fn text() -> impl Strategy<Value = String> {
    "[^\u{0}]{0,12}"
}

fn finite64() -> impl Strategy<Value = f64> {
    any::<f64>().prop_filter("not NaN", |v| !v.is_nan())
}

fn finite32() -> impl Strategy<Value = f32> {
    any::<f32>().prop_filter("not NaN", |v| !v.is_nan())
}

fn inner() -> impl Strategy<Value = Inner> {
    (any::<i16>(), finite64()).prop_map(|(a, b)| Inner { a, b })
}

fn color() -> impl Strategy<Value = Color> {
    prop_oneof![Just(Color::Red), Just(Color::Green), Just(Color::Blue)]
}

fn choice() -> impl Strategy<Value = Choice> {
    prop_oneof![
        any::<i32>().prop_map(Choice::L),
        text().prop_map(Choice::S),
        finite64().prop_map(Choice::D),
        inner().prop_map(Choice::Inner),
    ]
}

fn small() -> impl Strategy<Value = Small> {
    prop_oneof![
        any::<u8>().prop_map(Small::O),
        any::<i64>().prop_map(Small::Ll)
    ]
}

fn app() -> impl Strategy<Value = App> {
    (
        any::<i32>(),
        proptest::option::of(text()),
        proptest::collection::vec(color(), 0..4),
    )
        .prop_map(|(a, b, c)| App { a, b, c })
}

fn mutable() -> impl Strategy<Value = Mut> {
    (
        any::<u16>(),
        text(),
        proptest::collection::vec(finite64(), 0..3),
        proptest::option::of(inner()),
        proptest::collection::vec(any::<u8>(), 0..9),
        proptest::collection::vec(any::<i16>(), 0..5),
        any::<[i64; 2]>(),
        color(),
        choice(),
    )
        .prop_map(|(k, s, v, o, bytes, shorts, arr, e, u)| Mut {
            k,
            s,
            v,
            o,
            bytes,
            shorts,
            arr,
            e,
            u,
        })
}

prop_compose! {
    fn rich()(
        prims in (any::<bool>(), any::<u8>().prop_map(char::from), any::<u8>(), any::<i8>(),
                  any::<i16>(), any::<u16>(), any::<i32>(), any::<u32>(), any::<i64>(),
                  any::<u64>(), finite32(), finite64()),
        name in "[a-zA-Z]{0,16}",
        text in text(),
        longs in proptest::collection::vec(any::<i32>(), 0..6),
        octets in proptest::collection::vec(any::<u8>(), 0..64),
        strings in proptest::collection::vec(text(), 0..4),
        inners in proptest::collection::vec(inner(), 0..3),
        grid in any::<[[i16; 3]; 2]>(),
        names in (text(), text()),
        opt_l in proptest::option::of(any::<i32>()),
        opt_s in proptest::option::of(text()),
        color in color(),
        choice in choice(),
        small in small(),
        app in app(),
        muts in proptest::collection::vec(mutable(), 0..3),
        nested_seq in proptest::collection::vec(proptest::collection::vec(any::<u32>(), 0..3), 0..3),
    ) -> Rich {
        let (b, c, o, i8v, s, us, l, ul, ll, ull, f, d) = prims;
        Rich { b, c, o, i8v, s, us, l, ul, ll, ull, f, d, name, text, longs, octets, strings,
               inners, grid, names: [names.0, names.1], opt_l, opt_s, color, choice, small,
               app, muts, nested_seq }
    }
}

const COMBOS: [(XcdrVersion, Endianness); 4] = [
    (XcdrVersion::Xcdr1, Endianness::Little),
    (XcdrVersion::Xcdr1, Endianness::Big),
    (XcdrVersion::Xcdr2, Endianness::Little),
    (XcdrVersion::Xcdr2, Endianness::Big),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn rich_round_trips(v in rich()) {
        for (ver, end) in COMBOS {
            let bytes = serialize_to_vec(&v, ver, end).unwrap();
            prop_assert_eq!(bytes.len(), serialized_size(&v, ver).unwrap());
            let back: Rich = deserialize(&bytes).unwrap();
            prop_assert_eq!(&back, &v);
        }
    }

    /// `serialize` writes every byte up to the length it returns (padding included), so a
    /// writer's payload pool may hand out recycled buffers without zeroing them first.
    #[test]
    fn serialize_overwrites_every_byte(v in rich(), fill in any::<u8>()) {
        for (ver, end) in COMBOS {
            let clean = serialize_to_vec(&v, ver, end).unwrap();
            let mut dirty = vec![fill; clean.len() + 8];
            let n = tachyon_cdr::serialize(&v, ver, end, &mut dirty).unwrap();
            prop_assert_eq!(&dirty[..n], &clean[..]);
        }
    }

    /// Decoding into a value that held anything gives what decoding afresh gives: for a
    /// `@final` struct decoded member by member, and for one that falls back to a whole decode.
    #[test]
    fn decode_into_equals_decode(prev in flat(), v in flat(), rprev in rich(), rv in rich()) {
        for (ver, end) in COMBOS {
            let bytes = serialize_to_vec(&v, ver, end).unwrap();
            let mut into = prev.clone();
            tachyon_cdr::deserialize_into(&bytes, &mut into).unwrap();
            prop_assert_eq!(&into, &v);
            let bytes = serialize_to_vec(&rv, ver, end).unwrap();
            let mut into = rprev.clone();
            tachyon_cdr::deserialize_into(&bytes, &mut into).unwrap();
            prop_assert_eq!(&into, &rv);
        }
    }

    #[test]
    fn mutable_round_trips_alone(v in mutable()) {
        for (ver, end) in COMBOS {
            let bytes = serialize_to_vec(&v, ver, end).unwrap();
            let back: Mut = deserialize(&bytes).unwrap();
            prop_assert_eq!(&back, &v);
        }
    }

    #[test]
    fn key_hash_depends_only_on_the_key(a in rich(), b in rich()) {
        let mut b2 = b.clone();
        b2.name = a.name.clone();
        prop_assert_eq!(tachyon_cdr::key_hash(&a).unwrap(), tachyon_cdr::key_hash(&b2).unwrap());
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512), prev in flat()) {
        let mut into = prev;
        let _ = tachyon_cdr::deserialize_into(&bytes, &mut into);
        let _ = deserialize::<Rich>(&bytes);
        let _ = deserialize::<Mut>(&bytes);
        let _ = deserialize::<App>(&bytes);
        let _ = deserialize::<Borrowed>(&bytes);
    }

    #[test]
    fn corrupted_encodings_never_panic(v in rich(), flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8), which in 0..4usize) {
        let (ver, end) = COMBOS[which];
        let mut bytes = serialize_to_vec(&v, ver, end).unwrap();
        for (i, x) in flips {
            let at = i.index(bytes.len());
            bytes[at] ^= x;
        }
        let _ = deserialize::<Rich>(&bytes);
    }
}

#[derive(DdsType, Debug, PartialEq)]
#[dds(name = "prop::Borrowed", appendable)]
struct Borrowed<'a> {
    #[dds(key)]
    name: &'a str,
    data: &'a [u8],
    n: i32,
}

#[test]
fn borrowed_decode_points_into_the_input() {
    let payload: Vec<u8> = (0..100).collect();
    let v = Borrowed {
        name: "zero-copy",
        data: &payload,
        n: 5,
    };
    for (ver, end) in COMBOS {
        let bytes = serialize_to_vec(&v, ver, end).unwrap();
        let back: Borrowed<'_> = deserialize(&bytes).unwrap();
        assert_eq!(back, v);
        let range = bytes.as_ptr_range();
        assert!(range.contains(&back.data.as_ptr()));
        assert!(range.contains(&back.name.as_ptr()));
    }
}

/// An octet sequence decoded into one that had room keeps its buffer: no allocation.
#[test]
fn decode_into_reuses_an_octet_buffer_that_fits() {
    let big = Flat {
        k: 1,
        bytes: vec![7; 4096],
        words: vec![1, 2],
        s: "first".into(),
        inners: Vec::new(),
        app: App {
            a: 1,
            b: None,
            c: Vec::new(),
        },
        nested: Vec::new(),
    };
    let small = Flat {
        bytes: vec![9; 1000],
        ..big.clone()
    };
    let bytes = serialize_to_vec(&small, XcdrVersion::Xcdr2, Endianness::Little).unwrap();
    let mut into = big;
    let before = into.bytes.as_ptr();
    tachyon_cdr::deserialize_into(&bytes, &mut into).unwrap();
    assert_eq!(into, small);
    assert_eq!(into.bytes.as_ptr(), before, "the 4 KiB buffer was reused");
}

proptest! {
    /// Key hashes order as their bytes do (instances are kept sorted by key hash, and DDS
    /// hands them out in that order), though compared as one 128-bit number.
    #[test]
    fn key_hashes_order_as_their_bytes(
        a in proptest::array::uniform16(any::<u8>()),
        b in proptest::array::uniform16(any::<u8>()),
        shared in 0usize..=16,
    ) {
        // Pairs with a common prefix of any length, equal ones included.
        let mut b = b;
        b[..shared].copy_from_slice(&a[..shared]);
        let (ka, kb) = (tachyon_cdr::KeyHash(a), tachyon_cdr::KeyHash(b));
        prop_assert_eq!(ka.cmp(&kb), a.as_slice().cmp(b.as_slice()));
        prop_assert_eq!(ka.partial_cmp(&kb), Some(a.as_slice().cmp(b.as_slice())));
    }
}
