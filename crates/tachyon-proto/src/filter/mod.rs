//! Content filters in the DDS SQL grammar (DDS 1.4 Annex B), as content-filtered topics use
//! them: [`ContentFilter`] parses an expression, checks it against a type (its members by
//! name, [`tachyon_cdr::Fields`]), binds the `%n` parameters and evaluates samples.
//!
//! Sans-IO and type-agnostic where it matters: the protocol layer only sees a
//! [`SampleFilter`] (serialized payload in, keep or drop out), which the typed API builds by
//! decoding the sample and calling [`ContentFilter::matches`]. A reader applies its own
//! filter on reception, before samples enter its cache ([`Participant::set_reader_filter`]);
//! a writer applies the filters its remote readers announce (PID_CONTENT_FILTER_PROPERTY)
//! through the [`RemoteFilterFactory`] it was given ([`Participant::set_writer_filter_factory`]).
//!
//! [`Participant::set_reader_filter`]: crate::Participant::set_reader_filter
//! [`Participant::set_writer_filter_factory`]: crate::Participant::set_writer_filter_factory
//!
//! ```
//! use tachyon_proto::filter::ContentFilter;
//! # #[derive(tachyon_cdr::DdsType)]
//! # struct Shape { color: String, x: i32, y: i32, shapesize: i32 }
//! let f = ContentFilter::new::<Shape>("color = %0 AND shapesize BETWEEN 10 AND %1", &["'RED'", "30"])?;
//! assert!(f.matches(&Shape { color: "RED".into(), x: 0, y: 0, shapesize: 20 }));
//! assert!(!f.matches(&Shape { color: "BLUE".into(), x: 0, y: 0, shapesize: 20 }));
//! # Ok::<(), tachyon_proto::filter::FilterError>(())
//! ```

mod error;
mod eval;
mod lexer;
mod parser;
mod pattern;

use std::sync::Arc;

use tachyon_cdr::Fields;
use tachyon_wire::parameter::ContentFilterProperty;

pub use error::FilterError;
pub use eval::{KindsOf, MAX_PATH};
pub use lexer::CmpOp;
pub use parser::{parse, Condition, Operand, OperandKind, MAX_LENGTH, MAX_NESTING};

/// The filter class name of the DDS SQL grammar, announced in PID_CONTENT_FILTER_PROPERTY.
pub const DDSSQL: &str = "DDSSQL";

/// Most expression parameters (`%0` to `%99`).
pub const MAX_PARAMETERS: usize = 100;

/// Decides from a sample whether it passes: from its serialized bytes (encapsulation header
/// included), or from the writer's value when the payload holds it
/// ([`Payload::shared_sample`](crate::history::Payload::shared_sample): no serialization).
pub type SampleFilter = Arc<dyn Fn(&crate::history::Payload) -> bool + Send + Sync>;

/// Builds the [`SampleFilter`] of a remote reader's announced content filter, or says why it
/// cannot (unknown class, an expression that does not fit the writer's type).
pub type RemoteFilterFactory =
    Arc<dyn Fn(&ContentFilterProperty) -> Result<SampleFilter, FilterError> + Send + Sync>;

/// A [`SampleFilter`] held by an endpoint (prints as its name only).
#[derive(Clone)]
pub(crate) struct Hook(pub(crate) SampleFilter);

impl std::fmt::Debug for Hook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SampleFilter")
    }
}

/// A [`RemoteFilterFactory`] held by a writer (prints as its name only).
#[derive(Clone)]
pub(crate) struct FactoryHook(pub(crate) RemoteFilterFactory);

impl std::fmt::Debug for FactoryHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RemoteFilterFactory")
    }
}

/// A filter expression checked against a type, with its parameters bound.
#[derive(Clone, Debug)]
pub struct ContentFilter {
    expression: String,
    parameters: Vec<String>,
    condition: Condition,
    node: eval::Node,
}

impl ContentFilter {
    /// Parses `expression`, checks it against `T`'s members and binds `parameters` (DDS
    /// passes them as strings: `'RED'` or `RED` for strings and enumerators, `20` for
    /// numbers).
    pub fn new<T: Fields>(
        expression: &str,
        parameters: &[impl AsRef<str>],
    ) -> Result<ContentFilter, FilterError> {
        ContentFilter::with_kinds(expression, parameters, &T::field_kind)
    }

    /// [`new`](Self::new) with the type described by a function (`T::field_kind`).
    pub fn with_kinds(
        expression: &str,
        parameters: &[impl AsRef<str>],
        kinds: KindsOf<'_>,
    ) -> Result<ContentFilter, FilterError> {
        let parameters = owned(parameters)?;
        let condition = parse(expression)?;
        let node = eval::compile(&condition, &parameters, kinds)?;
        Ok(ContentFilter {
            expression: expression.to_owned(),
            parameters,
            condition,
            node,
        })
    }

    /// Replaces the parameters; on error nothing changes.
    pub fn set_parameters<T: Fields>(
        &mut self,
        parameters: &[impl AsRef<str>],
    ) -> Result<(), FilterError> {
        self.set_parameters_with(parameters, &T::field_kind)
    }

    /// [`set_parameters`](Self::set_parameters) with the type described by a function.
    pub fn set_parameters_with(
        &mut self,
        parameters: &[impl AsRef<str>],
        kinds: KindsOf<'_>,
    ) -> Result<(), FilterError> {
        let parameters = owned(parameters)?;
        self.node = eval::compile(&self.condition, &parameters, kinds)?;
        self.parameters = parameters;
        Ok(())
    }

    /// Whether `sample` passes: the condition is true (a comparison that reads an absent
    /// optional member is unknown, and unknown does not pass).
    pub fn matches<T: Fields + ?Sized>(&self, sample: &T) -> bool {
        self.node.eval(sample) == Some(true)
    }

    /// The expression as given.
    pub fn expression(&self) -> &str {
        &self.expression
    }

    /// The parameters now.
    pub fn parameters(&self) -> &[String] {
        &self.parameters
    }

    /// The parsed expression.
    pub fn condition(&self) -> &Condition {
        &self.condition
    }
}

/// Builds a [`ContentFilter`] for a remote reader's PID_CONTENT_FILTER_PROPERTY (class
/// `DDSSQL`, compared ignoring case) against `T`.
pub fn from_property<T: Fields>(p: &ContentFilterProperty) -> Result<ContentFilter, FilterError> {
    if !p.filter_class_name.eq_ignore_ascii_case(DDSSQL) {
        return Err(FilterError::UnsupportedClass(p.filter_class_name.clone()));
    }
    ContentFilter::new::<T>(&p.filter_expression, &p.expression_parameters)
}

fn owned(parameters: &[impl AsRef<str>]) -> Result<Vec<String>, FilterError> {
    if parameters.len() > MAX_PARAMETERS {
        return Err(FilterError::TooManyParameters {
            given: parameters.len(),
        });
    }
    Ok(parameters.iter().map(|p| p.as_ref().to_owned()).collect())
}

#[cfg(test)]
mod tests;
