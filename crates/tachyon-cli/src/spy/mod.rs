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
//!   ([`types`]);
//! - `echo TOPIC`: the topic's samples, decoded with that type ([`echo`]);
//! - `hz TOPIC`: the rate and sizes of its samples ([`hz`]);
//! - `watch`: a live table of every topic's rate ([`watch`]).
//!
//! `--json` prints the same as JSON, for scripts.

mod echo;
mod hz;
mod participants;
mod snapshot;
mod subscribe;
mod topics;
mod types;
mod watch;

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

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

#[derive(Subcommand, Debug, Clone, PartialEq)]
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
    /// A topic's samples, decoded with the type its writers describe (TypeLookup), as YAML
    /// (or JSON lines with --json), with their instance states.
    Echo {
        /// The topic.
        topic: String,
        /// Stop after this many samples.
        #[arg(long, short = 'n')]
        count: Option<u64>,
        /// Stop after this many seconds.
        #[arg(long)]
        duration: Option<f64>,
        /// Print only samples this DDS SQL expression accepts (`x > 100 AND color = 'RED'`;
        /// `%0`, `%1`… are the --param values).
        #[arg(long)]
        filter: Option<String>,
        /// A filter parameter (repeat for %0, %1, …).
        #[arg(long = "param")]
        params: Vec<String>,
        /// Read the type from this IDL file instead of asking the writers (for peers that do
        /// not describe their types, as Fast DDS 2.x).
        #[arg(long)]
        idl: Option<std::path::PathBuf>,
        /// A directory the IDL's #include looks in (repeatable).
        #[arg(long = "include", short = 'I')]
        include: Vec<std::path::PathBuf>,
        /// The type's name in the IDL file (default: the type name the writers announce).
        #[arg(long = "type")]
        type_name: Option<String>,
    },
    /// The rate and sizes of a topic's samples, every second over a sliding window (any
    /// type: samples are not decoded).
    Hz {
        /// The topic.
        topic: String,
        /// Arrivals the statistics are computed over.
        #[arg(long, default_value_t = 10_000)]
        window: usize,
        /// Stop after this many reports.
        #[arg(long, short = 'n')]
        count: Option<u64>,
        /// Stop after this many seconds.
        #[arg(long)]
        duration: Option<f64>,
    },
    /// A live table of every topic with its writers, readers and sample rate, redrawn in
    /// place.
    Watch {
        /// Seconds between redraws.
        #[arg(long, default_value_t = 1.0)]
        interval: f64,
        /// Stop after this many seconds.
        #[arg(long)]
        duration: Option<f64>,
    },
}

impl What {
    pub fn name(&self) -> &'static str {
        match self {
            What::Ls => "ls",
            What::Topics => "topics",
            What::Typeof { .. } => "typeof",
            What::Echo { .. } => "echo",
            What::Hz { .. } => "hz",
            What::Watch { .. } => "watch",
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
    for (name, v) in [
        ("--duration", duration_of(&a.what)),
        ("--interval", interval_of(&a.what)),
    ] {
        if let Some(v) = v.filter(|v| !(v.is_finite() && *v > 0.0 && *v <= 1e7)) {
            return Err(Failure::Usage(format!(
                "{name} {v}: give a positive number of seconds"
            )));
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .map_err(|e| Failure::Other(format!("cannot handle signal {signal}: {e}")))?;
    }
    std::thread::sleep(Duration::from_secs_f64(a.wait));
    let snap = Snapshot::take(&participant);
    let domain = a.domain;
    match &a.what {
        What::Echo {
            topic,
            count,
            duration,
            filter,
            params,
            idl,
            include,
            type_name,
        } => {
            let o = echo::Options {
                topic,
                count: *count,
                duration: *duration,
                filter: filter.as_deref(),
                params,
                json: a.json,
                domain,
                idl: idl.as_deref(),
                include,
                type_name: type_name.as_deref(),
            };
            return echo::run(&participant, &snap, &o, &stop);
        }
        What::Hz {
            topic,
            window,
            count,
            duration,
        } => {
            let o = hz::Options {
                topic,
                window: *window,
                count: *count,
                duration: *duration,
                json: a.json,
                domain,
            };
            return hz::run(&participant, &snap, &o, &stop);
        }
        What::Watch { interval, duration } => {
            let o = watch::Options {
                interval: *interval,
                duration: *duration,
                json: a.json,
                domain,
            };
            return watch::run(&participant, &o, &stop);
        }
        _ => {}
    }
    let out = match (&a.what, a.json) {
        (What::Ls, false) => participants::table(&snap),
        (What::Ls, true) => json(participants::json(&snap)),
        (What::Topics, false) => topics::table(&snap),
        (What::Topics, true) => json(topics::json(&snap)),
        (What::Typeof { topic }, false) => types::text(&participant, &snap, topic, a.domain)?,
        (What::Typeof { topic }, true) => json(types::json(&participant, &snap, topic)),
        (What::Echo { .. } | What::Hz { .. } | What::Watch { .. }, _) => String::new(),
    };
    print!("{out}");
    Ok(())
}

fn duration_of(w: &What) -> Option<f64> {
    match w {
        What::Echo { duration, .. } | What::Hz { duration, .. } | What::Watch { duration, .. } => {
            *duration
        }
        _ => None,
    }
}

fn interval_of(w: &What) -> Option<f64> {
    match w {
        What::Watch { interval, .. } => Some(*interval),
        _ => None,
    }
}

/// Prints `text` and flushes it; `false` when standard output is gone (a pipe into `head`
/// closed), which ends a streaming command quietly.
fn emit(text: &str) -> bool {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_ok()
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
