//! Checking and evaluating filters against a derived type.

use tachyon_cdr::DdsType;

use super::*;

#[derive(DdsType, Debug, Clone, Copy, PartialEq)]
enum Color {
    Red,
    Green,
    Blue = 7,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
struct Pos {
    x: i32,
    y: i32,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
struct Shape {
    #[dds(key, bound = 128)]
    color: String,
    pos: Pos,
    shapesize: i32,
    big: u64,
    ratio: f64,
    tint: Color,
    flag: bool,
    letter: char,
    note: Option<String>,
    payload: Vec<u8>,
}

fn shape(color: &str, size: i32) -> Shape {
    Shape {
        color: color.into(),
        pos: Pos { x: 10, y: 20 },
        shapesize: size,
        big: u64::MAX,
        ratio: 0.5,
        tint: Color::Green,
        flag: true,
        letter: 'k',
        note: None,
        payload: vec![],
    }
}

fn pass(expr: &str, params: &[&str], s: &Shape) -> bool {
    ContentFilter::new::<Shape>(expr, params)
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
        .matches(s)
}

fn err(expr: &str, params: &[&str]) -> FilterError {
    ContentFilter::new::<Shape>(expr, params).unwrap_err()
}

#[test]
fn comparisons() {
    let s = shape("RED", 20);
    assert!(pass("color = 'RED'", &[], &s));
    assert!(pass("'RED' = color", &[], &s));
    assert!(!pass("color <> 'RED'", &[], &s));
    assert!(pass("color != 'BLUE'", &[], &s));
    assert!(pass("color < 'S' AND color > 'Q'", &[], &s));
    assert!(pass("shapesize <= 20", &[], &s));
    assert!(!pass("shapesize < 20", &[], &s));
    assert!(pass("20 >= shapesize", &[], &s));
    assert!(pass("shapesize = 0x14", &[], &s));
    assert!(pass("shapesize > -5", &[], &s));
    assert!(pass("shapesize < 20.5", &[], &s));
    assert!(pass("big = 18446744073709551615", &[], &s));
    assert!(pass("big > shapesize", &[], &s));
    assert!(pass("pos.x < pos.y", &[], &s));
    assert!(pass("ratio = 0.5 AND ratio > 0", &[], &s));
    assert!(pass("flag = TRUE", &[], &s));
    assert!(pass("letter = 'k'", &[], &s));
    assert!(pass("letter < 'kz'", &[], &s));
}

#[test]
fn enums_by_name_and_value() {
    let s = shape("RED", 20);
    assert!(pass("tint = Green", &[], &s));
    assert!(pass("tint = Color::Green", &[], &s));
    assert!(pass("tint = 'Green'", &[], &s));
    assert!(pass("tint = 1", &[], &s));
    assert!(pass("tint < Blue", &[], &s));
    assert!(pass("tint = %0", &["Green"], &s));
    assert!(pass("tint = %0", &["'Green'"], &s));
    assert!(pass("tint = %0", &["1"], &s));
    assert!(matches!(
        err("tint = Purple", &[]),
        FilterError::UnknownMember { column: 8, .. }
    ));
}

#[test]
fn logic_between_like_match() {
    let s = shape("BLUE", 25);
    assert!(pass("shapesize BETWEEN 20 AND 30", &[], &s));
    assert!(pass("shapesize BETWEEN 25 AND 25", &[], &s));
    assert!(!pass("shapesize NOT BETWEEN 20 AND 30", &[], &s));
    assert!(pass("shapesize BETWEEN pos.x AND %0", &["30"], &s));
    assert!(pass("color LIKE 'B%'", &[], &s));
    assert!(pass("color LIKE 'BL_E'", &[], &s));
    assert!(!pass("color LIKE 'B_E'", &[], &s));
    assert!(pass("color NOT LIKE 'R%'", &[], &s));
    assert!(pass("color LIKE %0", &["'%LU%'"], &s));
    assert!(pass("color MATCH 'RED,BL*'", &[], &s));
    assert!(pass("color match %0", &["[A-C]LUE"], &s));
    assert!(pass(
        "(color = 'RED' OR color = 'BLUE') AND NOT shapesize > 30",
        &[],
        &s
    ));
    assert!(!pass("color = 'RED' OR shapesize > 30", &[], &s));
}

#[test]
fn absent_optional_members_are_unknown() {
    let mut s = shape("RED", 20);
    assert!(!pass("note = 'x'", &[], &s));
    assert!(!pass("NOT note = 'x'", &[], &s));
    assert!(pass("note = 'x' OR shapesize = 20", &[], &s));
    assert!(!pass("note = 'x' AND shapesize = 20", &[], &s));
    s.note = Some("x".into());
    assert!(pass("note = 'x'", &[], &s));
}

#[test]
fn parameters() {
    let s = shape("RED", 20);
    assert!(pass("color = %0", &["'RED'"], &s));
    assert!(pass("color = %0", &["RED"], &s));
    assert!(pass("shapesize <= %0", &["20"], &s));
    assert!(pass("shapesize <= %0", &["'20'"], &s));
    assert!(pass("ratio < %0", &["1e0"], &s));
    assert!(pass("flag = %0", &["true"], &s));
    let mut f =
        ContentFilter::new::<Shape>("color = %0 AND shapesize < %1", &["RED", "30"]).unwrap();
    assert!(f.matches(&s));
    f.set_parameters::<Shape>(&["BLUE", "30"]).unwrap();
    assert!(!f.matches(&s));
    assert_eq!(f.parameters(), ["BLUE", "30"]);
    let e = f.set_parameters::<Shape>(&["BLUE", "big"]).unwrap_err();
    assert_eq!(
        e,
        FilterError::BadParameter {
            column: 28,
            index: 1,
            value: "big".into(),
            expected: "a number"
        }
    );
    assert_eq!(f.parameters(), ["BLUE", "30"], "unchanged on error");
    assert_eq!(
        err("color = %1", &["RED"]),
        FilterError::MissingParameter {
            column: 9,
            index: 1,
            given: 1
        }
    );
    let many: Vec<String> = (0..101).map(|i| i.to_string()).collect();
    assert_eq!(
        ContentFilter::new::<Shape>("shapesize = %0", &many).unwrap_err(),
        FilterError::TooManyParameters { given: 101 }
    );
}

#[test]
fn errors_against_the_type() {
    let e = err("colour = 'RED'", &[]);
    assert_eq!(e.column(), Some(1));
    assert_eq!(
        e.to_string(),
        "column 1: `colour` is not a member of the type (expected one of: color, pos, \
         shapesize, big, ratio, tint, flag, letter, note, payload)"
    );
    let e = err("shapesize > 1 AND pos.z = 1", &[]);
    assert_eq!(
        e,
        FilterError::UnknownMember {
            column: 19,
            name: "pos.z".into(),
            expected: "x, y".into()
        }
    );
    assert!(matches!(
        err("pos = 1", &[]),
        FilterError::NotComparable {
            column: 1,
            kind: "struct",
            ..
        }
    ));
    assert!(matches!(
        err("payload = 1", &[]),
        FilterError::NotComparable {
            kind: "sequence",
            ..
        }
    ));
    assert!(matches!(
        err("color = 5", &[]),
        FilterError::TypeMismatch { column: 9, .. }
    ));
    assert!(matches!(
        err("shapesize = 'x'", &[]),
        FilterError::TypeMismatch { column: 13, .. }
    ));
    assert!(matches!(
        err("shapesize = color", &[]),
        FilterError::TypeMismatch { .. }
    ));
    assert!(matches!(
        err("shapesize LIKE 'x'", &[]),
        FilterError::TypeMismatch { .. }
    ));
    assert!(matches!(
        err("1 = 1", &[]),
        FilterError::NoMember { column: 1 }
    ));
    assert!(matches!(
        err("color MATCH '[a'", &[]),
        FilterError::BadPattern { column: 13, .. }
    ));
    assert!(matches!(
        err("color = ", &[]),
        FilterError::Syntax { column: 9, .. }
    ));
}

#[test]
fn remote_properties() {
    let p = ContentFilterProperty {
        content_filtered_topic_name: "cft".into(),
        related_topic_name: "Square".into(),
        filter_class_name: "DDSSQL".into(),
        filter_expression: "shapesize > %0".into(),
        expression_parameters: vec!["10".into()],
    };
    assert!(from_property::<Shape>(&p)
        .unwrap()
        .matches(&shape("RED", 20)));
    let other = ContentFilterProperty {
        filter_class_name: "MYFILTER".into(),
        ..p
    };
    assert!(matches!(
        from_property::<Shape>(&other),
        Err(FilterError::UnsupportedClass(_))
    ));
}
