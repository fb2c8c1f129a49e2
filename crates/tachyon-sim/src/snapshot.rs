//! Result tables rendered as text and compared against committed snapshot files, so a change in
//! protocol behaviour shows up as a diff (smoltcp's `tests/netsim.rs` does the same).

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// A text table with a header row and right-aligned columns.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Table {
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column names.
    pub fn new<S: ToString>(header: impl IntoIterator<Item = S>) -> Table {
        Table {
            header: header.into_iter().map(|s| s.to_string()).collect(),
            rows: Vec::new(),
        }
    }

    /// Appends a row (missing cells are left blank, extra ones are kept).
    pub fn row<S: ToString>(&mut self, cells: impl IntoIterator<Item = S>) -> &mut Table {
        self.rows
            .push(cells.into_iter().map(|s| s.to_string()).collect());
        self
    }

    /// The table as text: a header, a rule, one line per row, each line ending in `\n`.
    pub fn render(&self) -> String {
        let columns = self
            .rows
            .iter()
            .map(Vec::len)
            .chain([self.header.len()])
            .max()
            .unwrap_or(0);
        let mut widths = vec![0; columns];
        for line in std::iter::once(&self.header).chain(&self.rows) {
            for (w, cell) in widths.iter_mut().zip(line) {
                *w = (*w).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        let mut line = |cells: &[String]| {
            let text: Vec<String> = widths
                .iter()
                .enumerate()
                .map(|(i, w)| format!("{:>w$}", cells.get(i).map_or("", String::as_str)))
                .collect();
            out.push_str(text.join(" | ").trim_end());
            out.push('\n');
        };
        line(&self.header);
        line(&widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>());
        for row in &self.rows {
            line(row);
        }
        out
    }
}

impl fmt::Display for Table {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render())
    }
}

/// What [`check_snapshot`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SnapshotOutcome {
    /// The file matched.
    Matched,
    /// The file was missing or `UPDATE_SNAPSHOTS=1` was set, and it was (re)written.
    Written,
}

/// Why a snapshot check failed.
#[non_exhaustive]
#[derive(Debug)]
pub enum SnapshotError {
    /// The file differs; `diff` shows the differing lines (`-` expected, `+` actual).
    Mismatch {
        /// The snapshot file.
        path: PathBuf,
        /// A line-by-line difference.
        diff: String,
    },
    /// The file could not be read or written.
    Io {
        /// The snapshot file.
        path: PathBuf,
        /// The underlying error.
        error: io::Error,
    },
}

impl fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SnapshotError::Mismatch { path, diff } => write!(
                f,
                "snapshot {} differs (rerun with UPDATE_SNAPSHOTS=1 to accept):\n{diff}",
                path.display()
            ),
            SnapshotError::Io { path, error } => write!(f, "snapshot {}: {error}", path.display()),
        }
    }
}

impl std::error::Error for SnapshotError {}

/// Compares `actual` with the file at `path`; writes the file instead when it is missing or the
/// environment variable `UPDATE_SNAPSHOTS` is `1`.
pub fn check_snapshot(
    path: impl AsRef<Path>,
    actual: &str,
) -> Result<SnapshotOutcome, SnapshotError> {
    let path = path.as_ref();
    let io_err = |error| SnapshotError::Io {
        path: path.to_owned(),
        error,
    };
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some_and(|v| v == "1");
    match fs::read_to_string(path) {
        Ok(expected) if !update => {
            if expected == actual {
                Ok(SnapshotOutcome::Matched)
            } else {
                Err(SnapshotError::Mismatch {
                    path: path.to_owned(),
                    diff: line_diff(&expected, actual),
                })
            }
        }
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_err(e)),
        _ => {
            if let Some(dir) = path.parent() {
                fs::create_dir_all(dir).map_err(io_err)?;
            }
            fs::write(path, actual).map_err(io_err)?;
            Ok(SnapshotOutcome::Written)
        }
    }
}

/// [`check_snapshot`] for tests.
///
/// # Panics
/// When the snapshot differs or cannot be read or written: failing the test is its purpose.
#[track_caller]
pub fn assert_snapshot(path: impl AsRef<Path>, actual: &str) {
    if let Err(e) = check_snapshot(path, actual) {
        panic!("{e}");
    }
}

/// Lines that differ between `expected` and `actual`, position by position.
fn line_diff(expected: &str, actual: &str) -> String {
    let (e, a): (Vec<&str>, Vec<&str>) = (expected.lines().collect(), actual.lines().collect());
    let mut out = String::new();
    for i in 0..e.len().max(a.len()) {
        match (e.get(i), a.get(i)) {
            (Some(x), Some(y)) if x == y => out.push_str(&format!("  {x}\n")),
            (x, y) => {
                if let Some(x) = x {
                    out.push_str(&format!("- {x}\n"));
                }
                if let Some(y) = y {
                    out.push_str(&format!("+ {y}\n"));
                }
            }
        }
    }
    if out.is_empty() || expected.ends_with('\n') != actual.ends_with('\n') {
        out.push_str("(the files differ in their trailing newline)\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_aligned() {
        let mut t = Table::new(["loss", "delivered"]);
        t.row(["0%", "100"]).row(["30%", "7"]);
        assert_eq!(
            t.render(),
            "loss | delivered\n---- | ---------\n  0% |       100\n 30% |         7\n"
        );
    }

    #[test]
    fn writes_then_matches_then_reports_diff() {
        let dir = std::env::temp_dir().join(format!("tachyon-sim-snap-{}", std::process::id()));
        let path = dir.join("t.txt");
        let _ = fs::remove_file(&path);
        if std::env::var_os("UPDATE_SNAPSHOTS").is_none() {
            assert_eq!(
                check_snapshot(&path, "a\nb\n").ok(),
                Some(SnapshotOutcome::Written)
            );
            assert_eq!(
                check_snapshot(&path, "a\nb\n").ok(),
                Some(SnapshotOutcome::Matched)
            );
            match check_snapshot(&path, "a\nc\n") {
                Err(SnapshotError::Mismatch { diff, .. }) => assert_eq!(diff, "  a\n- b\n+ c\n"),
                other => panic!("expected a mismatch, got {other:?}"),
            }
        }
        let _ = fs::remove_dir_all(&dir);
    }
}
