//! [`ConfigError`]: why a configuration could not be loaded, naming the file and the key.

use std::path::PathBuf;

/// Why a configuration could not be loaded. Every variant names the file (or the origin
/// given to [`Config::from_toml_str`](crate::Config::from_toml_str)); those about one entry
/// name its key path (`udp.multicast`, `domain.7.discovery.lease_duration`).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The configuration file could not be read.
    #[error("cannot read configuration file {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// The file named by an environment variable (`TACHYON_CONFIG`) could not be read.
    #[error("cannot read configuration file {} (named by {variable}): {source}", path.display())]
    EnvFile {
        /// The variable.
        variable: &'static str,
        /// Its value.
        path: PathBuf,
        /// What the operating system said.
        source: std::io::Error,
    },
    /// An environment variable's value is malformed (`TACHYON_PEERS`).
    #[error("bad value of the environment variable {variable}: {message}")]
    EnvValue {
        /// The variable.
        variable: &'static str,
        /// What was expected and what was found.
        message: String,
    },
    /// The file is not valid TOML.
    #[error("{file}{}: {message}", at(*.line))]
    Syntax {
        /// The file.
        file: String,
        /// The line of the error, from 1, when known.
        line: Option<usize>,
        /// What is wrong.
        message: String,
    },
    /// A key Tachyon does not know (a typo is not silently ignored).
    #[error("{file}{}: unknown key `{key}` (expected one of {expected})", at(*.line))]
    UnknownKey {
        /// The file.
        file: String,
        /// The line of the key, from 1, when known.
        line: Option<usize>,
        /// The key's full path, like `udp.multcast`.
        key: String,
        /// The keys allowed there.
        expected: String,
    },
    /// A value of the wrong type, malformed or out of range.
    #[error("{file}{}: bad value for `{key}`: {message}", at(*.line))]
    InvalidValue {
        /// The file.
        file: String,
        /// The line of the value, from 1, when known.
        line: Option<usize>,
        /// The key's full path, like `udp.multicast`.
        key: String,
        /// What was expected and what was found.
        message: String,
    },
}

/// `:LINE` when the line is known.
fn at(line: Option<usize>) -> String {
    line.map(|l| format!(":{l}")).unwrap_or_default()
}
