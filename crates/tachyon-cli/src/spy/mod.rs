//! `tachyon spy`: look at a running DDS system, any vendor's, with zero configuration.
//!
//! It joins the domain as a participant without endpoints, listens for `--wait` seconds
//! (discovery: every participant answers a new one with its announcement), then prints what
//! the builtin topics hold (only remote entities: the spy's own participant is not listed):
//!
//! - `ls`: the participants, their vendor and release, host, process, lease and endpoints
//!   ([`participants`]);
//! - `topics`: each topic with its type names, writers and readers and their QoS, and every
//!   writer/reader pair of it that does not match and why ([`topics`]);
//! - `typeof TOPIC`: the topic's type as IDL, fetched with the XTypes TypeLookup service
//!   ([`types`]).
//!
//! `--json` prints the same as one JSON document, for scripts.

mod participants;
mod snapshot;
mod topics;
mod types;

use std::time::Duration;

use clap::{Args, Subcommand};
use tachyon::config::Config;
use tachyon::DomainParticipant;

use crate::perf::Failure;
use snapshot::Snapshot;

#[derive(Args, Debug)]
pub struct SpyArgs {
    #[command(subcommand)]
    pub what: What,
    /// DDS domain id.
    #[arg(long, short = 'd', default_value_t = 0, global = true)]
    pub domain: u32,
    /// How long to listen before printing, in seconds.
    #[arg(long, default_value_t = 2.0, global = true)]
    pub wait: f64,
    /// Print one JSON document instead of tables.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Subcommand, Debug, Clone, PartialEq, Eq)]
pub enum What {
    /// The participants: GUID prefix, vendor and release, host, process, lease, endpoints.
    Ls,
    /// The topics: types, writers and readers with their QoS, and the pairs that do not match.
    Topics,
    /// A topic's type as IDL, fetched from its writers' and readers' participants (XTypes
    /// TypeLookup).
    Typeof {
        /// The topic.
        topic: String,
    },
}

impl What {
    pub fn name(&self) -> &'static str {
        match self {
            What::Ls => "ls",
            What::Topics => "topics",
            What::Typeof { .. } => "typeof",
        }
    }
}

pub fn run(a: &SpyArgs) -> Result<(), Failure> {
    if !(a.wait.is_finite() && (0.0..=3600.0).contains(&a.wait)) {
        return Err(Failure::Usage(format!(
            "--wait {}: give seconds between 0 and 3600",
            a.wait
        )));
    }
    let config = Config::from_env().map_err(|e| Failure::Other(e.to_string()))?;
    let mut settings = config.settings(a.domain);
    settings.entity_name = Some(format!("tachyon spy {}", a.what.name()));
    let participant =
        DomainParticipant::with_settings(a.domain, &settings).map_err(Failure::dds)?;
    std::thread::sleep(Duration::from_secs_f64(a.wait));
    let snap = Snapshot::take(&participant);
    let out = match (&a.what, a.json) {
        (What::Ls, false) => participants::table(&snap),
        (What::Ls, true) => json(participants::json(&snap)),
        (What::Topics, false) => topics::table(&snap),
        (What::Topics, true) => json(topics::json(&snap)),
        (What::Typeof { topic }, false) => types::text(&participant, &snap, topic, a.domain)?,
        (What::Typeof { topic }, true) => json(types::json(&participant, &snap, topic)),
    };
    print!("{out}");
    Ok(())
}

fn json(v: serde_json::Value) -> String {
    let mut s = serde_json::to_string_pretty(&v).unwrap_or_else(|e| format!("\"{e}\""));
    s.push('\n');
    s
}

/// Lays out rows (the first one the header) in columns two spaces apart.
fn columns(rows: &[Vec<String>]) -> String {
    let n = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..n)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for r in rows {
        let mut line = String::new();
        for (c, cell) in r.iter().enumerate() {
            if c + 1 == r.len() {
                line.push_str(cell);
            } else {
                let pad = widths[c] - cell.chars().count();
                line.push_str(cell);
                line.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_as_wide_as_their_widest_cell() {
        let rows = vec![
            vec!["A".to_owned(), "BB".to_owned(), "C".to_owned()],
            vec!["long cell".to_owned(), "x".to_owned(), "last".to_owned()],
        ];
        assert_eq!(columns(&rows), "A          BB  C\nlong cell  x   last\n");
    }
}
