//! Errors with the file, line and column they are at.

use std::fmt;
use std::path::PathBuf;

/// Where in the IDL something is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pos {
    /// The file.
    pub file: PathBuf,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (in characters).
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.col)
    }
}

/// What went wrong, and where: `file:line:col: message`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{pos}: {message}")]
pub struct IdlError {
    /// Where.
    pub pos: Pos,
    /// What, in a sentence.
    pub message: String,
}

impl IdlError {
    pub(crate) fn at(pos: &Pos, message: impl Into<String>) -> IdlError {
        IdlError {
            pos: pos.clone(),
            message: message.into(),
        }
    }
}

/// A result of this crate.
pub type Result<T> = std::result::Result<T, IdlError>;
