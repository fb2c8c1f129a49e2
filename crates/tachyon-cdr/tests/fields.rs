//! `#[derive(DdsType)]` implements `Fields`: members by IDL name, for content filters.

use tachyon_cdr::{DdsType, FieldKind, FieldValue, Fields};

#[derive(DdsType, Debug, Clone, Copy, PartialEq)]
enum Color {
    Red,
    Green = 5,
    Blue,
}

#[derive(DdsType, Debug, PartialEq)]
struct Point {
    x: i16,
    y: u64,
}

#[derive(DdsType, Debug, PartialEq)]
enum Choice {
    #[dds(case = 1)]
    A(i32),
    #[dds(case = 2)]
    B(String),
}

#[derive(DdsType, Debug, PartialEq)]
#[dds(appendable)]
struct Shape {
    #[dds(key, bound = 128)]
    color: String,
    tint: Color,
    at: Point,
    size: f32,
    visible: bool,
    letter: char,
    #[dds(name = "label")]
    tag: Option<String>,
    r#type: u8,
    payload: Vec<u8>,
    choice: Choice,
}

#[derive(DdsType, Debug, PartialEq)]
struct Wrapper<T> {
    inner: T,
}

fn shape() -> Shape {
    Shape {
        color: "RED".into(),
        tint: Color::Green,
        at: Point { x: -3, y: 7 },
        size: 1.5,
        visible: true,
        letter: 'q',
        tag: None,
        r#type: 9,
        payload: vec![1, 2],
        choice: Choice::A(1),
    }
}

#[test]
fn members_by_name() {
    let s = shape();
    assert_eq!(s.field(&["color"]), Some(FieldValue::Str("RED")));
    assert_eq!(
        s.field(&["tint"]),
        Some(FieldValue::Enum {
            value: 5,
            name: "Green"
        })
    );
    assert_eq!(s.field(&["at", "x"]), Some(FieldValue::Int(-3)));
    assert_eq!(s.field(&["at", "y"]), Some(FieldValue::UInt(7)));
    assert_eq!(s.field(&["size"]), Some(FieldValue::Float(1.5)));
    assert_eq!(s.field(&["visible"]), Some(FieldValue::Bool(true)));
    assert_eq!(s.field(&["letter"]), Some(FieldValue::Char('q')));
    assert_eq!(s.field(&["type"]), Some(FieldValue::UInt(9)));
    assert_eq!(s.field(&["label"]), None, "absent optional member");
    assert_eq!(s.field(&["tag"]), None, "named by its IDL name");
    assert_eq!(s.field(&["payload"]), None);
    assert_eq!(s.field(&["choice"]), None);
    assert_eq!(s.field(&["at"]), None, "a struct is not a value");
    assert_eq!(s.field(&["at", "z"]), None);
    assert_eq!(s.field(&[]), None);
    let tagged = Shape {
        tag: Some("x".into()),
        ..shape()
    };
    assert_eq!(tagged.field(&["label"]), Some(FieldValue::Str("x")));
}

#[test]
fn kinds_from_the_type() {
    assert_eq!(
        Shape::field_kind(&[]),
        Some(FieldKind::Struct(&[
            "color", "tint", "at", "size", "visible", "letter", "label", "type", "payload",
            "choice"
        ]))
    );
    assert_eq!(Shape::field_kind(&["color"]), Some(FieldKind::String));
    assert_eq!(
        Shape::field_kind(&["tint"]),
        Some(FieldKind::Enum(&[("Red", 0), ("Green", 5), ("Blue", 6)]))
    );
    assert_eq!(Shape::field_kind(&["at", "y"]), Some(FieldKind::UInt));
    assert_eq!(Shape::field_kind(&["label"]), Some(FieldKind::String));
    assert_eq!(
        Shape::field_kind(&["payload"]),
        Some(FieldKind::Unsupported("sequence"))
    );
    assert_eq!(
        Shape::field_kind(&["choice"]),
        Some(FieldKind::Unsupported("union"))
    );
    assert_eq!(Shape::field_kind(&["nope"]), None);
    assert_eq!(Shape::field_kind(&["size", "x"]), None);
}

#[test]
fn generic_structs_read_through() {
    let w = Wrapper {
        inner: Point { x: 1, y: 2 },
    };
    assert_eq!(w.field(&["inner", "x"]), Some(FieldValue::Int(1)));
    assert_eq!(
        Wrapper::<Point>::field_kind(&["inner", "y"]),
        Some(FieldKind::UInt)
    );
}

#[test]
fn serialized_samples_are_inspected_through_dyn_fields() {
    let mut buf = [0u8; 256];
    let n = tachyon_cdr::serialize(
        &shape(),
        tachyon_cdr::XcdrVersion::Xcdr2,
        tachyon_cdr::Endianness::Little,
        &mut buf,
    )
    .unwrap();
    let seen = Shape::inspect_serialized(&buf[..n], &mut |f: &dyn Fields| {
        f.field(&["at", "x"]) == Some(FieldValue::Int(-3))
    });
    assert_eq!(seen, Some(true));
    assert_eq!(Shape::inspect_serialized(&buf[..3], &mut |_| true), None);
    assert_eq!(
        Wrapper::<Point>::inspect_serialized(&buf[..n], &mut |_| true),
        None,
        "generic types do not support it"
    );
}
