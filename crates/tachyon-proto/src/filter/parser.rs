//! The DDS SQL filter grammar (DDS 1.4 Annex B) into a [`Condition`] tree.
//!
//! ```text
//! condition  := and ( OR and )*
//! and        := not ( AND not )*
//! not        := NOT not | '(' condition ')' | predicate
//! predicate  := operand relop operand
//!             | operand [NOT] BETWEEN operand AND operand
//!             | operand [NOT] LIKE operand
//!             | operand [NOT] MATCH operand
//! operand    := name | integer | float | 'string' | TRUE | FALSE | %n
//! ```
//! Keywords are case-insensitive. Chains of AND / OR are kept flat, and parentheses and NOT
//! nest at most [`MAX_NESTING`] deep, so no input can exhaust the stack.

use std::fmt;

use super::error::FilterError;
use super::lexer::{tokenize, CmpOp, Tok, Token};

/// Deepest nesting of parentheses and NOT.
pub const MAX_NESTING: usize = 64;

/// Longest expression accepted, in characters.
pub const MAX_LENGTH: usize = 64 * 1024;

/// A parsed condition.
#[derive(Clone, Debug, PartialEq)]
pub enum Condition {
    /// Every one holds.
    And(Vec<Condition>),
    /// One holds.
    Or(Vec<Condition>),
    /// It does not hold.
    Not(Box<Condition>),
    /// `left op right`.
    Compare {
        /// Left operand.
        left: Operand,
        /// Operator.
        op: CmpOp,
        /// Right operand.
        right: Operand,
    },
    /// `value [NOT] BETWEEN low AND high` (both bounds included).
    Between {
        /// The value tested.
        value: Operand,
        /// Lower bound.
        low: Operand,
        /// Upper bound.
        high: Operand,
        /// `NOT BETWEEN`.
        negated: bool,
    },
    /// `value [NOT] LIKE pattern` (`%`, `_`) or `value [NOT] MATCH pattern` (`*`, `?`,
    /// `[…]`, `,` between alternatives).
    Like {
        /// The string tested.
        value: Operand,
        /// The pattern.
        pattern: Operand,
        /// MATCH rather than LIKE.
        matching: bool,
        /// `NOT LIKE` / `NOT MATCH`.
        negated: bool,
    },
}

/// An operand and where it starts.
#[derive(Clone, Debug)]
pub struct Operand {
    /// What it is.
    pub kind: OperandKind,
    /// Its column (1-based, in characters).
    pub column: usize,
}

/// Operands compare by what they are, not where they were written.
impl PartialEq for Operand {
    fn eq(&self, other: &Operand) -> bool {
        self.kind == other.kind
    }
}

/// What an operand is.
#[derive(Clone, Debug, PartialEq)]
pub enum OperandKind {
    /// A member path (`a.b.c`) or an enumerator (`RED`, `Color::RED`); which one is decided
    /// against the type.
    Name(String),
    /// An integer literal.
    Int(i128),
    /// A floating-point literal.
    Float(f64),
    /// A string (or character) literal.
    Str(String),
    /// `TRUE` / `FALSE`.
    Bool(bool),
    /// `%n`.
    Param(usize),
}

/// Parses a filter expression (syntax only; [`ContentFilter`](super::ContentFilter) also
/// checks it against a type).
pub fn parse(expression: &str) -> Result<Condition, FilterError> {
    if expression.chars().count() > MAX_LENGTH {
        return Err(FilterError::TooComplex {
            column: MAX_LENGTH + 1,
            limit: "longer than 65536 characters",
        });
    }
    let tokens = tokenize(expression)?;
    let mut p = Parser { tokens, pos: 0 };
    let c = p.condition(0)?;
    match p.peek() {
        Tok::End => Ok(c),
        _ => Err(p.unexpected("AND, OR or the end of the expression")),
    }
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> &Tok {
        self.tokens.get(self.pos).map_or(&Tok::End, |t| &t.kind)
    }

    fn column(&self) -> usize {
        self.tokens
            .get(self.pos)
            .or(self.tokens.last())
            .map_or(1, |t| t.column)
    }

    fn bump(&mut self) -> Token {
        let t = self.tokens.get(self.pos).cloned().unwrap_or(Token {
            kind: Tok::End,
            column: self.column(),
        });
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
        t
    }

    fn keyword(&self, k: &str) -> bool {
        matches!(self.peek(), Tok::Ident(s) if s.eq_ignore_ascii_case(k))
    }

    fn unexpected(&self, expected: &'static str) -> FilterError {
        FilterError::Syntax {
            column: self.column(),
            expected,
            found: self.peek().describe(),
        }
    }

    fn condition(&mut self, depth: usize) -> Result<Condition, FilterError> {
        let mut terms = vec![self.and(depth)?];
        while self.keyword("OR") {
            self.bump();
            terms.push(self.and(depth)?);
        }
        Ok(flatten(terms, Condition::Or))
    }

    fn and(&mut self, depth: usize) -> Result<Condition, FilterError> {
        let mut terms = vec![self.not(depth)?];
        while self.keyword("AND") {
            self.bump();
            terms.push(self.not(depth)?);
        }
        Ok(flatten(terms, Condition::And))
    }

    fn not(&mut self, depth: usize) -> Result<Condition, FilterError> {
        if depth >= MAX_NESTING {
            return Err(FilterError::TooComplex {
                column: self.column(),
                limit: "parentheses and NOT nested more than 64 deep",
            });
        }
        if self.keyword("NOT") {
            self.bump();
            return Ok(Condition::Not(Box::new(self.not(depth + 1)?)));
        }
        if *self.peek() == Tok::LParen {
            self.bump();
            let c = self.condition(depth + 1)?;
            if *self.peek() != Tok::RParen {
                return Err(self.unexpected("`)`, AND or OR"));
            }
            self.bump();
            return Ok(c);
        }
        self.predicate()
    }

    fn predicate(&mut self) -> Result<Condition, FilterError> {
        let left = self.operand()?;
        if let Tok::Op(op) = *self.peek() {
            self.bump();
            let right = self.operand()?;
            return Ok(Condition::Compare { left, op, right });
        }
        let negated = self.keyword("NOT");
        if negated {
            self.bump();
        }
        if self.keyword("BETWEEN") {
            self.bump();
            let low = self.operand()?;
            if !self.keyword("AND") {
                return Err(self.unexpected("AND between the bounds of BETWEEN"));
            }
            self.bump();
            let high = self.operand()?;
            return Ok(Condition::Between {
                value: left,
                low,
                high,
                negated,
            });
        }
        let matching = self.keyword("MATCH");
        if matching || self.keyword("LIKE") {
            self.bump();
            let pattern = self.operand()?;
            return Ok(Condition::Like {
                value: left,
                pattern,
                matching,
                negated,
            });
        }
        Err(self.unexpected(if negated {
            "BETWEEN, LIKE or MATCH after NOT"
        } else {
            "a comparison operator (=, <>, !=, <, <=, >, >=), BETWEEN, LIKE or MATCH"
        }))
    }

    fn operand(&mut self) -> Result<Operand, FilterError> {
        let column = self.column();
        let kind = match self.peek() {
            Tok::Ident(s) if s.eq_ignore_ascii_case("TRUE") => OperandKind::Bool(true),
            Tok::Ident(s) if s.eq_ignore_ascii_case("FALSE") => OperandKind::Bool(false),
            Tok::Ident(s) if is_reserved(s) => {
                return Err(self.unexpected("a member name, a value or a parameter"))
            }
            Tok::Ident(s) => OperandKind::Name(s.clone()),
            Tok::Int(i) => OperandKind::Int(*i),
            Tok::Float(x) => OperandKind::Float(*x),
            Tok::Str(s) => OperandKind::Str(s.clone()),
            Tok::Param(n) => OperandKind::Param(*n),
            _ => return Err(self.unexpected("a member name, a value or a parameter")),
        };
        self.bump();
        Ok(Operand { kind, column })
    }
}

/// Keywords cannot be member names.
fn is_reserved(s: &str) -> bool {
    ["AND", "OR", "NOT", "BETWEEN", "LIKE", "MATCH"]
        .iter()
        .any(|k| s.eq_ignore_ascii_case(k))
}

fn flatten(mut terms: Vec<Condition>, make: fn(Vec<Condition>) -> Condition) -> Condition {
    if terms.len() == 1 {
        terms.pop().unwrap_or(Condition::And(Vec::new()))
    } else {
        make(terms)
    }
}

/// Prints the condition in DDS SQL, fully parenthesized: parsing the text gives the same tree.
impl fmt::Display for Condition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let list = |f: &mut fmt::Formatter<'_>, items: &[Condition], sep: &str| {
            f.write_str("(")?;
            for (i, c) in items.iter().enumerate() {
                if i > 0 {
                    write!(f, " {sep} ")?;
                }
                write!(f, "{c}")?;
            }
            f.write_str(")")
        };
        match self {
            Condition::And(items) => list(f, items, "AND"),
            Condition::Or(items) => list(f, items, "OR"),
            Condition::Not(c) => write!(f, "NOT ({c})"),
            Condition::Compare { left, op, right } => {
                write!(f, "{left} {} {right}", op.as_str())
            }
            Condition::Between {
                value,
                low,
                high,
                negated,
            } => {
                let not = if *negated { "NOT " } else { "" };
                write!(f, "{value} {not}BETWEEN {low} AND {high}")
            }
            Condition::Like {
                value,
                pattern,
                matching,
                negated,
            } => {
                let not = if *negated { "NOT " } else { "" };
                let kw = if *matching { "MATCH" } else { "LIKE" };
                write!(f, "{value} {not}{kw} {pattern}")
            }
        }
    }
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            OperandKind::Name(s) => f.write_str(s),
            OperandKind::Int(i) => write!(f, "{i}"),
            OperandKind::Float(x) => write!(f, "{x:?}"),
            OperandKind::Str(s) => write!(f, "'{}'", s.replace('\'', "''")),
            OperandKind::Bool(b) => f.write_str(if *b { "TRUE" } else { "FALSE" }),
            OperandKind::Param(n) => write!(f, "%{n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(s: &str) -> Operand {
        Operand {
            kind: OperandKind::Name(s.into()),
            column: 0,
        }
    }

    #[test]
    fn precedence_and_flattening() {
        let c = parse("a = 1 OR b = 2 AND NOT c = 3 OR (d > %0)").unwrap();
        let Condition::Or(items) = &c else {
            panic!("{c:?}")
        };
        assert_eq!(items.len(), 3);
        assert!(matches!(&items[1], Condition::And(v) if v.len() == 2));
        assert_eq!(
            c.to_string(),
            "(a = 1 OR (b = 2 AND NOT (c = 3)) OR d > %0)"
        );
    }

    #[test]
    fn keywords_are_case_insensitive() {
        let c = parse("x not between 1 and 2 And y Like 'a%' or z match 'a*'").unwrap();
        assert_eq!(
            c.to_string(),
            "((x NOT BETWEEN 1 AND 2 AND y LIKE 'a%') OR z MATCH 'a*')"
        );
        assert_eq!(
            parse("flag = true").unwrap(),
            Condition::Compare {
                left: name("flag"),
                op: CmpOp::Eq,
                right: Operand {
                    kind: OperandKind::Bool(true),
                    column: 0
                }
            }
        );
    }

    #[test]
    fn syntax_errors_name_column_and_expectation() {
        let e = parse("x = 1 AND").unwrap_err();
        assert_eq!(e.column(), Some(10));
        assert_eq!(
            e.to_string(),
            "column 10: expected a member name, a value or a parameter, found end of expression"
        );
        let e = parse("x 1").unwrap_err();
        assert_eq!(e.column(), Some(3));
        assert!(e.to_string().contains("comparison operator"), "{e}");
        assert_eq!(parse("(x = 1").unwrap_err().column(), Some(7));
        assert_eq!(parse("x = 1)").unwrap_err().column(), Some(6));
        assert_eq!(parse("x BETWEEN 1 OR 2").unwrap_err().column(), Some(13));
        assert_eq!(parse("AND = 1").unwrap_err().column(), Some(1));
        assert_eq!(parse("").unwrap_err().column(), Some(1));
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}x = 1{}", "(".repeat(100), ")".repeat(100));
        assert!(matches!(parse(&deep), Err(FilterError::TooComplex { .. })));
        let nots = format!("{}x = 1", "NOT ".repeat(100));
        assert!(matches!(parse(&nots), Err(FilterError::TooComplex { .. })));
        let long = vec!["x = 1"; 5000].join(" AND ");
        assert!(parse(&long).is_ok());
    }
}
