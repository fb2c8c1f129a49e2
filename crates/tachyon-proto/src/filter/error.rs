//! [`FilterError`]: why a filter expression or its parameters were refused, and where.

use std::fmt;

/// Why a content filter was refused. Every variant that concerns the expression names the
/// column (1-based, in characters) where the problem starts.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FilterError {
    /// The expression does not follow the grammar.
    Syntax {
        /// Where.
        column: usize,
        /// What the grammar allows there.
        expected: &'static str,
        /// What was found (`end of expression` at the end).
        found: String,
    },
    /// A name that is neither a member of the type nor an enumerator of the compared member.
    UnknownMember {
        /// Where.
        column: usize,
        /// The name as written.
        name: String,
        /// The member names the type has at that level (comma-separated).
        expected: String,
    },
    /// A member a filter cannot compare: a struct (name one of its members), a sequence,
    /// an array, a union.
    NotComparable {
        /// Where.
        column: usize,
        /// The member path.
        name: String,
        /// What it is.
        kind: &'static str,
    },
    /// `%n` names a parameter that was not given.
    MissingParameter {
        /// Where.
        column: usize,
        /// `n`.
        index: usize,
        /// How many parameters were given.
        given: usize,
    },
    /// A parameter's value does not fit the member it is compared with.
    BadParameter {
        /// Where `%n` is.
        column: usize,
        /// `n`.
        index: usize,
        /// The parameter as given.
        value: String,
        /// What the member needs.
        expected: &'static str,
    },
    /// Two operands that cannot be compared (a string with a number, …).
    TypeMismatch {
        /// Where the second operand is.
        column: usize,
        /// What the first operand is.
        left: &'static str,
        /// What the second operand is.
        right: &'static str,
    },
    /// A comparison that reads no member (`1 = 1`): DDS SQL compares a member with a value
    /// or with another member.
    NoMember {
        /// Where.
        column: usize,
    },
    /// A LIKE or MATCH pattern that is not usable.
    BadPattern {
        /// Where.
        column: usize,
        /// Why.
        reason: &'static str,
    },
    /// The expression exceeds a limit (nesting depth, member path depth, length).
    TooComplex {
        /// Where.
        column: usize,
        /// Which limit.
        limit: &'static str,
    },
    /// More parameters than DDS allows (100, `%0`..`%99`).
    TooManyParameters {
        /// How many were given.
        given: usize,
    },
    /// A filter class other than `DDSSQL`.
    UnsupportedClass(String),
}

impl fmt::Display for FilterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FilterError::Syntax {
                column,
                expected,
                found,
            } => write!(f, "column {column}: expected {expected}, found {found}"),
            FilterError::UnknownMember {
                column,
                name,
                expected,
            } => write!(
                f,
                "column {column}: `{name}` is not a member of the type (expected one of: {expected})"
            ),
            FilterError::NotComparable { column, name, kind } => write!(
                f,
                "column {column}: member `{name}` is a {kind}, which a filter cannot compare"
            ),
            FilterError::MissingParameter {
                column,
                index,
                given,
            } => write!(
                f,
                "column {column}: parameter %{index} is used but only {given} parameter(s) were given"
            ),
            FilterError::BadParameter {
                column,
                index,
                value,
                expected,
            } => write!(
                f,
                "column {column}: parameter %{index} is {value:?}, expected {expected}"
            ),
            FilterError::TypeMismatch {
                column,
                left,
                right,
            } => write!(f, "column {column}: cannot compare a {left} with a {right}"),
            FilterError::NoMember { column } => write!(
                f,
                "column {column}: expected a member name on one side of the comparison"
            ),
            FilterError::BadPattern { column, reason } => {
                write!(f, "column {column}: bad pattern: {reason}")
            }
            FilterError::TooComplex { column, limit } => {
                write!(f, "column {column}: expression too complex: {limit}")
            }
            FilterError::TooManyParameters { given } => {
                write!(f, "{given} expression parameters given, at most 100 are allowed")
            }
            FilterError::UnsupportedClass(c) => {
                write!(f, "filter class {c:?} is not supported (only DDSSQL)")
            }
        }
    }
}

impl std::error::Error for FilterError {}

impl FilterError {
    /// The column the error points at, if it concerns the expression.
    pub fn column(&self) -> Option<usize> {
        match self {
            FilterError::Syntax { column, .. }
            | FilterError::UnknownMember { column, .. }
            | FilterError::NotComparable { column, .. }
            | FilterError::MissingParameter { column, .. }
            | FilterError::BadParameter { column, .. }
            | FilterError::TypeMismatch { column, .. }
            | FilterError::NoMember { column }
            | FilterError::BadPattern { column, .. }
            | FilterError::TooComplex { column, .. } => Some(*column),
            FilterError::TooManyParameters { .. } | FilterError::UnsupportedClass(_) => None,
        }
    }
}
