//! Property tests of the DDS SQL filter grammar: no input makes it panic, and printing a
//! condition then parsing the text gives the same condition.

use proptest::prelude::*;
use tachyon_cdr::DdsType;
use tachyon_proto::filter::{parse, CmpOp, Condition, ContentFilter, Operand, OperandKind};

#[derive(DdsType, Debug, Clone, PartialEq)]
struct Inner {
    a: i64,
    s: String,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
struct Sample {
    color: String,
    x: i32,
    f: f32,
    b: bool,
    inner: Inner,
    o: Option<u16>,
}

fn sample() -> impl Strategy<Value = Sample> {
    (
        any::<String>(),
        any::<i32>(),
        any::<f32>(),
        any::<bool>(),
        any::<i64>(),
        any::<String>(),
        any::<Option<u16>>(),
    )
        .prop_map(|(color, x, f, b, a, s, o)| Sample {
            color,
            x,
            f,
            b,
            inner: Inner { a, s },
            o,
        })
}

fn operand() -> impl Strategy<Value = Operand> {
    let kind = prop_oneof![
        prop::sample::select(vec![
            "color", "x", "f", "b", "inner.a", "inner.s", "o", "RED"
        ])
        .prop_map(|s| OperandKind::Name(s.to_owned())),
        any::<i64>().prop_map(|i| OperandKind::Int(i128::from(i))),
        (-1e6f64..1e6).prop_map(OperandKind::Float),
        "[ -~]{0,8}".prop_map(OperandKind::Str),
        any::<bool>().prop_map(OperandKind::Bool),
        (0usize..100).prop_map(OperandKind::Param),
    ];
    kind.prop_map(|kind| Operand { kind, column: 0 })
}

fn condition() -> impl Strategy<Value = Condition> {
    let op = prop::sample::select(vec![
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ]);
    let leaf = prop_oneof![
        (operand(), op, operand()).prop_map(|(left, op, right)| Condition::Compare {
            left,
            op,
            right
        }),
        (operand(), operand(), operand(), any::<bool>()).prop_map(|(value, low, high, negated)| {
            Condition::Between {
                value,
                low,
                high,
                negated,
            }
        }),
        (operand(), operand(), any::<bool>(), any::<bool>()).prop_map(
            |(value, pattern, matching, negated)| Condition::Like {
                value,
                pattern,
                matching,
                negated
            }
        ),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 2..4).prop_map(Condition::And),
            prop::collection::vec(inner.clone(), 2..4).prop_map(Condition::Or),
            inner.prop_map(|c| Condition::Not(Box::new(c))),
        ]
    })
}

/// Printing wraps every AND/OR list in parentheses, so a parsed AND directly inside an AND
/// stays nested: the printed forms are compared, and the tree of a reparse.
fn normalized(c: &Condition) -> String {
    c.to_string()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn arbitrary_text_never_panics(s in ".{0,200}", params in prop::collection::vec(".{0,10}", 0..4), v in sample()) {
        let _ = parse(&s);
        if let Ok(f) = ContentFilter::new::<Sample>(&s, &params) {
            let _ = f.matches(&v);
        }
    }

    #[test]
    fn grammar_shaped_text_never_panics(
        words in prop::collection::vec(prop::sample::select(vec![
            "color", "x", "f", "b", "inner.a", "inner.s", "o", "AND", "OR", "NOT", "BETWEEN",
            "LIKE", "MATCH", "(", ")", "=", "<>", "<", ">=", "'R%'", "%0", "%1", "12", "-3.5",
            "0x1f", "TRUE", "'[a-'", "inner", "nope.x",
        ]), 0..24),
        params in prop::collection::vec(prop::sample::select(vec!["'RED'", "RED", "20", "1.5", "true", "'[a'", ""]), 0..3),
        v in sample(),
    ) {
        let text = words.join(" ");
        if let Ok(f) = ContentFilter::new::<Sample>(&text, &params) {
            let _ = f.matches(&v);
            let _ = f.matches(&v);
        }
    }

    #[test]
    fn printed_conditions_parse_back(c in condition()) {
        let text = c.to_string();
        let back = parse(&text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
        prop_assert_eq!(normalized(&back), normalized(&c));
        prop_assert_eq!(parse(&back.to_string()).ok(), Some(back));
    }

    #[test]
    fn checked_filters_evaluate_like_the_rust_expression(
        color in prop::sample::select(vec!["RED", "BLUE", "GREEN"]),
        x in -50i32..50,
        lo in -50i32..50,
        hi in -50i32..50,
        v in sample(),
    ) {
        let f = ContentFilter::new::<Sample>(
            "color = %0 OR x BETWEEN %1 AND %2",
            &[color.to_owned(), lo.to_string(), hi.to_string()],
        ).unwrap();
        let s = Sample { x, ..v };
        prop_assert_eq!(f.matches(&s), s.color == color || (lo <= x && x <= hi));
    }
}
