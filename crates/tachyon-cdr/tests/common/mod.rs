//! The Rust mirror of `interop/cdr-vectors/types.idl`, and the named samples of the vectors.
#![allow(dead_code)]

use tachyon_cdr::DdsType;

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "ShapeType")]
pub struct ShapeType {
    #[dds(key, bound = 128)]
    pub color: String,
    pub x: i32,
    pub y: i32,
    pub shapesize: i32,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "AppendableShape", appendable)]
pub struct AppendableShape {
    #[dds(key, bound = 128)]
    pub color: String,
    pub x: i32,
    pub y: i32,
    pub shapesize: i32,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "Primitives")]
pub struct Primitives {
    pub b: bool,
    pub c: char,
    pub o: u8,
    pub i8v: i8,
    #[dds(idl = "uint8")]
    pub u8v: u8,
    pub s: i16,
    pub us: u16,
    pub l: i32,
    pub ul: u32,
    pub ll: i64,
    pub ull: u64,
    pub f: f32,
    pub d: f64,
    pub o2: u8,
    pub d2: f64,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "Strings")]
pub struct Strings {
    pub plain: String,
    #[dds(bound = 8)]
    pub bounded: String,
    pub empty: String,
}

#[derive(DdsType, Debug, Clone, Copy, PartialEq)]
#[dds(name = "Inner")]
pub struct Inner {
    pub a: i16,
    pub b: f64,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "Sequences")]
pub struct Sequences {
    pub longs: Vec<i32>,
    #[dds(bound = 16)]
    pub octets: Vec<u8>,
    pub doubles: Vec<f64>,
    pub strings: Vec<String>,
    pub inners: Vec<Inner>,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "Arrays")]
pub struct Arrays {
    pub a1: [i32; 3],
    pub a2: [[i16; 3]; 2],
    pub a3: [String; 2],
    pub a4: [f64; 2],
    pub a5: [u8; 5],
    pub a6: [Inner; 2],
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "Nested")]
pub struct Nested {
    pub tag: u8,
    pub inner: Inner,
    #[dds(bound = 4)]
    pub seq: Vec<Inner>,
}

#[derive(DdsType, Debug, Clone, Copy, PartialEq)]
#[dds(name = "Color")]
pub enum Color {
    Red,
    Green,
    Blue,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "WithEnum")]
pub struct WithEnum {
    pub c: Color,
    pub cs: Vec<Color>,
    pub arr: [Color; 2],
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "Choice", switch = i32)]
pub enum Choice {
    #[dds(case = 1)]
    L(i32),
    #[dds(case = 2)]
    S(String),
    #[dds(case = 3)]
    D(f64),
    #[dds(case = 4)]
    Inner(Inner),
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "Small", switch = i16)]
pub enum Small {
    #[dds(case = 1)]
    O(u8),
    #[dds(case = 2)]
    Ll(i64),
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "WithUnion")]
pub struct WithUnion {
    pub a: Choice,
    pub b: Choice,
    pub c: Choice,
    pub d: Choice,
    pub e: Small,
    pub f: Small,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "WithOptional")]
pub struct WithOptional {
    pub a: i32,
    pub b: Option<i32>,
    pub c: Option<String>,
    pub d: Option<Inner>,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "AppendableStruct", appendable)]
pub struct AppendableStruct {
    pub a: i32,
    pub b: String,
    pub c: Vec<i16>,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "MutableStruct", mutable)]
pub struct MutableStruct {
    #[dds(key, name = "ident")]
    pub id: i32,
    #[dds(id = 10)]
    pub name: String,
    pub value: f64,
    pub opt: Option<i16>,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "HashIds", mutable, autoid = "hash")]
pub struct HashIds {
    pub alpha: i32,
    pub beta: String,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "MustUnderstand", mutable)]
pub struct MustUnderstand {
    #[dds(key)]
    pub id: i32,
    #[dds(must_understand)]
    pub m: i32,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "KeyedMulti")]
pub struct KeyedMulti {
    #[dds(key)]
    pub k1: u8,
    #[dds(key)]
    pub k2: i64,
    pub v: i32,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "KeyedNested")]
pub struct KeyedNested {
    #[dds(key)]
    pub k: Inner,
    pub v: i32,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "KeyedSmallString")]
pub struct KeyedSmallString {
    #[dds(key, bound = 8)]
    pub name: String,
    pub v: i32,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "Big")]
pub struct Big {
    pub data: Vec<u8>,
}

/// A sample of one of the types above, by the name the vector files use.
#[derive(Debug, Clone, PartialEq)]
pub enum Sample {
    ShapeType(ShapeType),
    AppendableShape(AppendableShape),
    Primitives(Primitives),
    Strings(Strings),
    Sequences(Sequences),
    Arrays(Arrays),
    Nested(Nested),
    WithEnum(WithEnum),
    WithUnion(WithUnion),
    WithOptional(WithOptional),
    AppendableStruct(AppendableStruct),
    MutableStruct(MutableStruct),
    HashIds(HashIds),
    MustUnderstand(MustUnderstand),
    KeyedMulti(KeyedMulti),
    KeyedNested(KeyedNested),
    KeyedSmallString(KeyedSmallString),
    Big(Big),
}

fn inner(a: i16, b: f64) -> Inner {
    Inner { a, b }
}

/// The sample `name` of type `type_name`, as the vector generator defines it.
pub fn sample(type_name: &str, name: &str) -> Option<Sample> {
    let s = sample_by_name(name)?;
    match (type_name, s) {
        ("AppendableShape", Sample::ShapeType(v)) => {
            Some(Sample::AppendableShape(AppendableShape {
                color: v.color,
                x: v.x,
                y: v.y,
                shapesize: v.shapesize,
            }))
        }
        (_, s) => Some(s),
    }
}

fn sample_by_name(name: &str) -> Option<Sample> {
    use Sample as S;
    let shape = |color: &str, x, y, shapesize| ShapeType {
        color: color.into(),
        x,
        y,
        shapesize,
    };
    Some(match name {
        "shape_red" => S::ShapeType(shape("RED", 10, 20, 30)),
        "shape_long" => S::ShapeType(shape("MAGENTA_LONGER_COLOR_NAME", -1, i32::MAX, 0)),
        "prims" => S::Primitives(Primitives {
            b: true,
            c: 'A',
            o: 0xab,
            i8v: -5,
            u8v: 250,
            s: -1234,
            us: 54321,
            l: -123456789,
            ul: 4000000000,
            ll: -1234567890123,
            ull: 18000000000000000000,
            f: 1.5,
            d: -2.25,
            o2: 7,
            d2: 3.0e100,
        }),
        "strs" => S::Strings(Strings {
            plain: "hello, world".into(),
            bounded: "12345678".into(),
            empty: String::new(),
        }),
        "seqs" => S::Sequences(Sequences {
            longs: vec![1, -2, 3],
            octets: vec![1, 2, 3, 4, 5],
            doubles: vec![0.5],
            strings: vec!["a".into(), "bc".into(), String::new()],
            inners: vec![inner(1, 1.0), inner(-1, -1.0)],
        }),
        "seqs_empty" => S::Sequences(Sequences {
            longs: vec![],
            octets: vec![],
            doubles: vec![],
            strings: vec![],
            inners: vec![],
        }),
        "arrs" => S::Arrays(Arrays {
            a1: [1, 2, 3],
            a2: [[1, 2, 3], [4, 5, 6]],
            a3: ["x".into(), "yz".into()],
            a4: [1.0, -1.0],
            a5: [9, 8, 7, 6, 5],
            a6: [inner(1, 2.0), inner(3, 4.0)],
        }),
        "nested" => S::Nested(Nested {
            tag: 1,
            inner: inner(7, 0.25),
            seq: vec![inner(8, 8.5)],
        }),
        "enums" => S::WithEnum(WithEnum {
            c: Color::Blue,
            cs: vec![Color::Red, Color::Green, Color::Blue],
            arr: [Color::Green, Color::Red],
        }),
        "unions" => S::WithUnion(WithUnion {
            a: Choice::L(-7),
            b: Choice::S("union".into()),
            c: Choice::D(6.5),
            d: Choice::Inner(inner(2, 2.5)),
            e: Small::O(0x11),
            f: Small::Ll(-9),
        }),
        "opt_all" => S::WithOptional(WithOptional {
            a: 1,
            b: Some(2),
            c: Some("three".into()),
            d: Some(inner(4, 5.0)),
        }),
        "opt_none" => S::WithOptional(WithOptional {
            a: 1,
            b: None,
            c: None,
            d: None,
        }),
        "app" => S::AppendableStruct(AppendableStruct {
            a: 42,
            b: "app".into(),
            c: vec![1, 2, 3],
        }),
        "mut_all" => S::MutableStruct(MutableStruct {
            id: 7,
            name: "mutable".into(),
            value: 0.125,
            opt: Some(9),
        }),
        "mut_noopt" => S::MutableStruct(MutableStruct {
            id: 7,
            name: "mutable".into(),
            value: 0.125,
            opt: None,
        }),
        "hash" => S::HashIds(HashIds {
            alpha: 1,
            beta: "beta".into(),
        }),
        "mu" => S::MustUnderstand(MustUnderstand { id: 3, m: 4 }),
        "km" => S::KeyedMulti(KeyedMulti {
            k1: 1,
            k2: 0x0102030405060708,
            v: 99,
        }),
        "kn" => S::KeyedNested(KeyedNested {
            k: inner(5, 6.5),
            v: 1,
        }),
        "kss" => S::KeyedSmallString(KeyedSmallString {
            name: "abc".into(),
            v: 2,
        }),
        "kss_full" => S::KeyedSmallString(KeyedSmallString {
            name: "12345678".into(),
            v: 3,
        }),
        "big1k" => S::Big(Big {
            data: (0..1024u32).map(|i| (i % 251) as u8).collect(),
        }),
        _ => return None,
    })
}

/// Runs `$body` with `$v` bound to the typed value inside a [`Sample`].
#[macro_export]
macro_rules! with_sample {
    ($s:expr, $v:ident, $body:expr) => {
        match $s {
            Sample::ShapeType($v) => $body,
            Sample::AppendableShape($v) => $body,
            Sample::Primitives($v) => $body,
            Sample::Strings($v) => $body,
            Sample::Sequences($v) => $body,
            Sample::Arrays($v) => $body,
            Sample::Nested($v) => $body,
            Sample::WithEnum($v) => $body,
            Sample::WithUnion($v) => $body,
            Sample::WithOptional($v) => $body,
            Sample::AppendableStruct($v) => $body,
            Sample::MutableStruct($v) => $body,
            Sample::HashIds($v) => $body,
            Sample::MustUnderstand($v) => $body,
            Sample::KeyedMulti($v) => $body,
            Sample::KeyedNested($v) => $body,
            Sample::KeyedSmallString($v) => $body,
            Sample::Big($v) => $body,
        }
    };
}

/// Every (type, sample) the generator knows.
pub const SAMPLES: &[(&str, &str)] = &[
    ("ShapeType", "shape_red"),
    ("ShapeType", "shape_long"),
    ("AppendableShape", "shape_red"),
    ("AppendableShape", "shape_long"),
    ("Primitives", "prims"),
    ("Strings", "strs"),
    ("Sequences", "seqs"),
    ("Sequences", "seqs_empty"),
    ("Arrays", "arrs"),
    ("Nested", "nested"),
    ("WithEnum", "enums"),
    ("WithUnion", "unions"),
    ("WithOptional", "opt_all"),
    ("WithOptional", "opt_none"),
    ("AppendableStruct", "app"),
    ("MutableStruct", "mut_all"),
    ("MutableStruct", "mut_noopt"),
    ("HashIds", "hash"),
    ("MustUnderstand", "mu"),
    ("KeyedMulti", "km"),
    ("KeyedNested", "kn"),
    ("KeyedSmallString", "kss"),
    ("KeyedSmallString", "kss_full"),
    ("Big", "big1k"),
];
