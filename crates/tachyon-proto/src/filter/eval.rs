//! Checking a parsed condition against a type and binding its parameters ([`compile`]), then
//! evaluating it on samples ([`Node::eval`]), in three-valued logic: a comparison that reads
//! an absent optional member is unknown, NOT unknown is unknown, and a sample passes only when
//! the whole condition is true.

use std::cmp::Ordering;

use tachyon_cdr::{FieldKind, FieldValue, Fields};

use super::error::FilterError;
use super::lexer::CmpOp;
use super::parser::{Condition, Operand, OperandKind};
use super::pattern::Pattern;

/// Deepest member path (`a.b.c…`) a filter reads.
pub const MAX_PATH: usize = 16;

/// What the type says about member paths (`T::field_kind`).
pub type KindsOf<'a> = &'a dyn Fn(&[&str]) -> Option<FieldKind>;

/// A condition checked against a type, its parameters bound.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    And(Vec<Node>),
    Or(Vec<Node>),
    Not(Box<Node>),
    Compare {
        left: Term,
        op: CmpOp,
        right: Term,
    },
    Between {
        value: Term,
        low: Term,
        high: Term,
        negated: bool,
    },
    Like {
        value: Term,
        pattern: Pattern,
        negated: bool,
    },
}

/// An operand: a member of the sample or a constant.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Term {
    Field(Vec<String>),
    Value(Value),
}

/// A constant, converted to what the member it is compared with holds.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Int(i128),
    Float(f64),
    Str(String),
    Bool(bool),
}

/// A value read from a sample or a constant, ready to compare.
#[derive(Clone, Copy, Debug)]
enum Val<'a> {
    Int(i128),
    Float(f64),
    Str(&'a str),
    Char(char),
    Bool(bool),
}

/// Checks `c` against the type `kinds` describes and binds `params`.
pub(crate) fn compile(
    c: &Condition,
    params: &[String],
    kinds: KindsOf<'_>,
) -> Result<Node, FilterError> {
    Binder { params, kinds }.node(c)
}

struct Binder<'a> {
    params: &'a [String],
    kinds: KindsOf<'a>,
}

impl Binder<'_> {
    fn node(&self, c: &Condition) -> Result<Node, FilterError> {
        Ok(match c {
            Condition::And(v) => {
                Node::And(v.iter().map(|c| self.node(c)).collect::<Result<_, _>>()?)
            }
            Condition::Or(v) => Node::Or(v.iter().map(|c| self.node(c)).collect::<Result<_, _>>()?),
            Condition::Not(c) => Node::Not(Box::new(self.node(c)?)),
            Condition::Compare { left, op, right } => {
                let (left, right) = self.pair(left, right)?;
                Node::Compare {
                    left,
                    op: *op,
                    right,
                }
            }
            Condition::Between {
                value,
                low,
                high,
                negated,
            } => {
                let Some((path, kind)) = self.field(value)? else {
                    return Err(self.not_a_member(value));
                };
                Node::Between {
                    value: Term::Field(path),
                    low: self.against(low, kind)?,
                    high: self.against(high, kind)?,
                    negated: *negated,
                }
            }
            Condition::Like {
                value,
                pattern,
                matching,
                negated,
            } => {
                let Some((path, kind)) = self.field(value)? else {
                    return Err(self.not_a_member(value));
                };
                if !matches!(kind, FieldKind::String | FieldKind::Char) {
                    return Err(FilterError::TypeMismatch {
                        column: pattern.column,
                        left: kind.describe(),
                        right: "pattern (LIKE and MATCH read strings)",
                    });
                }
                let text = match &pattern.kind {
                    OperandKind::Str(s) => s.clone(),
                    OperandKind::Param(n) => {
                        let p = self.param(*n, pattern.column)?.trim();
                        unquote(p).unwrap_or_else(|| p.to_owned())
                    }
                    _ => {
                        return Err(FilterError::BadPattern {
                            column: pattern.column,
                            reason: "a pattern is a 'string' or a parameter",
                        })
                    }
                };
                let compiled = if *matching {
                    Pattern::matching(&text).map_err(|reason| FilterError::BadPattern {
                        column: pattern.column,
                        reason,
                    })?
                } else {
                    Pattern::like(&text)
                };
                Node::Like {
                    value: Term::Field(path),
                    pattern: compiled,
                    negated: *negated,
                }
            }
        })
    }

    /// The two sides of a comparison: at least one is a member; the other is converted to
    /// what that member holds.
    fn pair(&self, left: &Operand, right: &Operand) -> Result<(Term, Term), FilterError> {
        match (self.field(left)?, self.field(right)?) {
            (Some((lp, lk)), Some((rp, rk))) => {
                if !comparable(lk, rk) {
                    return Err(FilterError::TypeMismatch {
                        column: right.column,
                        left: lk.describe(),
                        right: rk.describe(),
                    });
                }
                Ok((Term::Field(lp), Term::Field(rp)))
            }
            (Some((lp, lk)), None) => Ok((Term::Field(lp), self.constant(right, lk)?)),
            (None, Some((rp, rk))) => Ok((self.constant(left, rk)?, Term::Field(rp))),
            (None, None) => Err(self.not_a_member(left)),
        }
    }

    /// A bound of BETWEEN: a member comparable with `kind`, or a constant.
    fn against(&self, op: &Operand, kind: FieldKind) -> Result<Term, FilterError> {
        match self.field(op)? {
            Some((path, k)) if comparable(kind, k) => Ok(Term::Field(path)),
            Some((_, k)) => Err(FilterError::TypeMismatch {
                column: op.column,
                left: kind.describe(),
                right: k.describe(),
            }),
            None => self.constant(op, kind),
        }
    }

    fn not_a_member(&self, op: &Operand) -> FilterError {
        match &op.kind {
            OperandKind::Name(n) => self.unknown(n, op.column, &[]),
            _ => FilterError::NoMember { column: op.column },
        }
    }

    fn unknown(&self, name: &str, column: usize, parent: &[&str]) -> FilterError {
        let expected = match (self.kinds)(parent) {
            Some(FieldKind::Struct(names)) => names.join(", "),
            _ => String::new(),
        };
        FilterError::UnknownMember {
            column,
            name: name.to_owned(),
            expected,
        }
    }

    /// The member `op` names, with its kind; `None` when `op` is no name, or a single name
    /// the type does not have (it may be an enumerator).
    fn field(&self, op: &Operand) -> Result<Option<(Vec<String>, FieldKind)>, FilterError> {
        let OperandKind::Name(name) = &op.kind else {
            return Ok(None);
        };
        if name.contains("::") {
            return Ok(None);
        }
        let segments: Vec<&str> = name.split('.').collect();
        if segments.len() > MAX_PATH {
            return Err(FilterError::TooComplex {
                column: op.column,
                limit: "member path deeper than 16",
            });
        }
        let mut kind = None;
        for i in 1..=segments.len() {
            match (self.kinds)(&segments[..i]) {
                Some(k) => kind = Some(k),
                None if i == 1 => return Ok(None),
                None => {
                    return Err(self.unknown(name, op.column, &segments[..i - 1]));
                }
            }
        }
        let Some(kind) = kind else {
            return Ok(None);
        };
        if !kind.is_value() {
            return Err(FilterError::NotComparable {
                column: op.column,
                name: name.clone(),
                kind: kind.describe(),
            });
        }
        Ok(Some((
            segments.into_iter().map(str::to_owned).collect(),
            kind,
        )))
    }

    fn param(&self, n: usize, column: usize) -> Result<&str, FilterError> {
        self.params
            .get(n)
            .map(String::as_str)
            .ok_or(FilterError::MissingParameter {
                column,
                index: n,
                given: self.params.len(),
            })
    }

    /// A constant operand compared with a member of `kind`.
    fn constant(&self, op: &Operand, kind: FieldKind) -> Result<Term, FilterError> {
        let mismatch = |right: &'static str| FilterError::TypeMismatch {
            column: op.column,
            left: kind.describe(),
            right,
        };
        let value = match &op.kind {
            OperandKind::Name(n) => match kind {
                FieldKind::Enum(list) => enumerator(list, n).map(Value::Int).ok_or_else(|| {
                    FilterError::UnknownMember {
                        column: op.column,
                        name: n.clone(),
                        expected: list.iter().map(|e| e.0).collect::<Vec<_>>().join(", "),
                    }
                })?,
                _ => return Err(self.unknown(n, op.column, &[])),
            },
            OperandKind::Int(i) => match kind {
                FieldKind::Int | FieldKind::UInt | FieldKind::Float | FieldKind::Enum(_) => {
                    Value::Int(*i)
                }
                _ => return Err(mismatch("number")),
            },
            OperandKind::Float(x) => match kind {
                FieldKind::Int | FieldKind::UInt | FieldKind::Float => Value::Float(*x),
                _ => return Err(mismatch("number")),
            },
            OperandKind::Str(s) => match kind {
                FieldKind::String | FieldKind::Char => Value::Str(s.clone()),
                FieldKind::Enum(list) => enumerator(list, s).map(Value::Int).ok_or_else(|| {
                    FilterError::UnknownMember {
                        column: op.column,
                        name: s.clone(),
                        expected: list.iter().map(|e| e.0).collect::<Vec<_>>().join(", "),
                    }
                })?,
                _ => return Err(mismatch("string")),
            },
            OperandKind::Bool(b) => match kind {
                FieldKind::Bool => Value::Bool(*b),
                _ => return Err(mismatch("boolean")),
            },
            OperandKind::Param(n) => {
                let text = self.param(*n, op.column)?;
                param_value(text, kind).map_err(|expected| FilterError::BadParameter {
                    column: op.column,
                    index: *n,
                    value: text.to_owned(),
                    expected,
                })?
            }
        };
        Ok(Term::Value(value))
    }
}

/// Whether members of these kinds can be compared with each other.
fn comparable(a: FieldKind, b: FieldKind) -> bool {
    let group = |k: FieldKind| match k {
        FieldKind::Int | FieldKind::UInt | FieldKind::Float | FieldKind::Enum(_) => 0,
        FieldKind::String | FieldKind::Char => 1,
        FieldKind::Bool => 2,
        FieldKind::Struct(_) | FieldKind::Unsupported(_) => 3,
    };
    group(a) == group(b) && group(a) != 3
}

/// The value of enumerator `name` (`RED`, `Color::RED`; exact, else ignoring case).
fn enumerator(list: &[(&str, i32)], name: &str) -> Option<i128> {
    let short = name.rsplit("::").next().unwrap_or(name);
    list.iter()
        .find(|(n, _)| *n == short)
        .or_else(|| list.iter().find(|(n, _)| n.eq_ignore_ascii_case(short)))
        .map(|&(_, v)| i128::from(v))
}

/// The text inside `'…'` (or `` `…' ``), `''` read as `'`; `None` when not quoted.
fn unquote(t: &str) -> Option<String> {
    let inner = t
        .strip_prefix('\'')
        .or_else(|| t.strip_prefix('`'))?
        .strip_suffix('\'')?;
    Some(inner.replace("''", "'"))
}

/// A parameter (text, as DDS passes them) as a value for a member of `kind`: `'RED'` or
/// `RED` for strings and enumerators, `20`, `0x14`, `2.5` for numbers, `TRUE`/`FALSE`.
fn param_value(text: &str, kind: FieldKind) -> Result<Value, &'static str> {
    let t = text.trim();
    let quoted = unquote(t);
    let bare = quoted.as_deref().unwrap_or(t);
    match kind {
        FieldKind::String | FieldKind::Char => {
            Ok(Value::Str(quoted.unwrap_or_else(|| text.to_owned())))
        }
        FieldKind::Int | FieldKind::UInt | FieldKind::Float => number(bare)
            .or_else(|| {
                (kind == FieldKind::Float)
                    .then(|| bare.parse::<f64>().ok().filter(|x| x.is_finite()))
                    .flatten()
                    .map(Value::Float)
            })
            .ok_or("a number"),
        FieldKind::Enum(list) => enumerator(list, bare)
            .or_else(|| match number(bare) {
                Some(Value::Int(i)) => Some(i),
                _ => None,
            })
            .map(Value::Int)
            .ok_or("an enumerator of the member"),
        FieldKind::Bool => match bare {
            b if b.eq_ignore_ascii_case("TRUE") || b == "1" => Ok(Value::Bool(true)),
            b if b.eq_ignore_ascii_case("FALSE") || b == "0" => Ok(Value::Bool(false)),
            _ => Err("TRUE or FALSE"),
        },
        FieldKind::Struct(_) | FieldKind::Unsupported(_) => Err("a comparable member"),
    }
}

/// An integer (decimal or `0x` hex, signed) or a float.
fn number(t: &str) -> Option<Value> {
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let int = match digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        Some(hex) => i128::from_str_radix(hex, 16).ok(),
        None if digits.bytes().all(|b| b.is_ascii_digit()) => digits.parse::<i128>().ok(),
        None => None,
    };
    if let Some(i) = int {
        return Some(Value::Int(if neg { -i } else { i }));
    }
    t.parse::<f64>()
        .ok()
        .filter(|x| x.is_finite())
        .map(Value::Float)
}

impl Node {
    /// Three-valued evaluation: `None` is unknown.
    pub(crate) fn eval<T: Fields + ?Sized>(&self, s: &T) -> Option<bool> {
        match self {
            Node::And(v) => {
                let mut unknown = false;
                for n in v {
                    match n.eval(s) {
                        Some(false) => return Some(false),
                        None => unknown = true,
                        Some(true) => {}
                    }
                }
                (!unknown).then_some(true)
            }
            Node::Or(v) => {
                let mut unknown = false;
                for n in v {
                    match n.eval(s) {
                        Some(true) => return Some(true),
                        None => unknown = true,
                        Some(false) => {}
                    }
                }
                (!unknown).then_some(false)
            }
            Node::Not(n) => n.eval(s).map(|b| !b),
            Node::Compare { left, op, right } => {
                let ord = compare(term(left, s)?, term(right, s)?)?;
                Some(match op {
                    CmpOp::Eq => ord == Ordering::Equal,
                    CmpOp::Ne => ord != Ordering::Equal,
                    CmpOp::Lt => ord == Ordering::Less,
                    CmpOp::Le => ord != Ordering::Greater,
                    CmpOp::Gt => ord == Ordering::Greater,
                    CmpOp::Ge => ord != Ordering::Less,
                })
            }
            Node::Between {
                value,
                low,
                high,
                negated,
            } => {
                let v = term(value, s)?;
                let inside = compare(term(low, s)?, v)? != Ordering::Greater
                    && compare(v, term(high, s)?)? != Ordering::Greater;
                Some(inside != *negated)
            }
            Node::Like {
                value,
                pattern,
                negated,
            } => {
                let mut buf = [0u8; 4];
                let text = match term(value, s)? {
                    Val::Str(t) => t,
                    Val::Char(c) => c.encode_utf8(&mut buf),
                    _ => return None,
                };
                Some(pattern.matches(text) != *negated)
            }
        }
    }
}

fn term<'a, T: Fields + ?Sized>(t: &'a Term, s: &'a T) -> Option<Val<'a>> {
    match t {
        Term::Value(Value::Int(i)) => Some(Val::Int(*i)),
        Term::Value(Value::Float(x)) => Some(Val::Float(*x)),
        Term::Value(Value::Str(x)) => Some(Val::Str(x)),
        Term::Value(Value::Bool(b)) => Some(Val::Bool(*b)),
        Term::Field(path) => {
            let mut buf: [&str; MAX_PATH] = [""; MAX_PATH];
            for (slot, seg) in buf.iter_mut().zip(path) {
                *slot = seg;
            }
            let segs = buf.get(..path.len())?;
            Some(match s.field(segs)? {
                FieldValue::Bool(b) => Val::Bool(b),
                FieldValue::Char(c) => Val::Char(c),
                FieldValue::Int(i) => Val::Int(i128::from(i)),
                FieldValue::UInt(u) => Val::Int(i128::from(u)),
                FieldValue::Float(x) => Val::Float(x),
                FieldValue::Str(x) => Val::Str(x),
                FieldValue::Enum { value, .. } => Val::Int(i128::from(value)),
            })
        }
    }
}

fn compare(a: Val<'_>, b: Val<'_>) -> Option<Ordering> {
    let mut ba = [0u8; 4];
    let mut bb = [0u8; 4];
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => Some(x.cmp(&y)),
        (Val::Int(x), Val::Float(y)) => (x as f64).partial_cmp(&y),
        (Val::Float(x), Val::Int(y)) => x.partial_cmp(&(y as f64)),
        (Val::Float(x), Val::Float(y)) => x.partial_cmp(&y),
        (Val::Bool(x), Val::Bool(y)) => Some(x.cmp(&y)),
        (Val::Str(x), Val::Str(y)) => Some(x.cmp(y)),
        (Val::Char(x), Val::Char(y)) => Some(x.cmp(&y)),
        (Val::Char(x), Val::Str(y)) => Some((*x.encode_utf8(&mut ba)).cmp(y)),
        (Val::Str(x), Val::Char(y)) => Some(x.cmp(y.encode_utf8(&mut bb))),
        _ => None,
    }
}
