//! The result of a run: the JSON record (`bench/SCHEMA.md`) and the human-readable table.

use std::io::Write;

use serde::Serialize;

use super::{BulkSummary, Interval, LatencySummary, ProcessSummary, ThroughputSummary};

/// What was asked for (`bench/SCHEMA.md`, `config`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct RunConfig {
    pub size: u32,
    pub payload_bytes: u64,
    #[serde(rename = "type")]
    pub type_: String,
    pub reliability: String,
    pub history: String,
    pub depth: u32,
    pub durability: String,
    pub keys: u32,
    pub rate: Option<f64>,
    pub burst: u32,
    pub delivery: String,
    pub multicast: bool,
    pub subscribers: u32,
    pub warmup_s: f64,
    pub duration_s: f64,
    /// The data topic, when not ddsperf's (`--topic`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// TRANSPORT_PRIORITY of the ping and pong writers (`--critical`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transport_priority: Option<i32>,
    /// The participant's `threads.critical_priority` (`--critical`); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub critical_priority: Option<i32>,
    /// Microseconds the receiving threads busy-poll before they block (`--busy-poll`);
    /// absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub busy_poll_us: Option<f64>,
    /// Microseconds the receiving threads watch their sources before they block (`--spin`);
    /// absent: the participant's default.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spin_us: Option<f64>,
    /// `--transport` (tachyon perf): auto, udp or intra; empty for other programs.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub transport: String,
}

/// One run (`bench/SCHEMA.md`).
#[derive(Clone, Debug, Serialize)]
pub struct RunResult {
    pub schema: &'static str,
    pub implementation: String,
    pub version: String,
    pub role: String,
    pub config: RunConfig,
    pub latency: Option<LatencySummary>,
    pub histogram: Vec<[u64; 2]>,
    pub throughput: Option<ThroughputSummary>,
    pub timeline: Vec<Interval>,
    pub process: ProcessSummary,
    pub discovery_ns: Option<u64>,
    /// What the bulk writer of `ping --bulk-size` wrote while the round trips were measured;
    /// absent without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bulk: Option<BulkSummary>,
}

impl RunResult {
    pub fn new(implementation: &str, role: &str, config: RunConfig) -> RunResult {
        RunResult {
            schema: "tachyon-perf/1",
            implementation: implementation.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            role: role.to_owned(),
            config,
            latency: None,
            histogram: Vec::new(),
            throughput: None,
            timeline: Vec::new(),
            process: ProcessSummary::default(),
            discovery_ns: None,
            bulk: None,
        }
    }
}

/// Writes the record to `path` (`-`: standard output).
pub fn write_json(result: &RunResult, path: &str) -> std::io::Result<()> {
    let text = serde_json::to_string_pretty(result).map_err(std::io::Error::other)?;
    if path == "-" {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{text}")
    } else {
        std::fs::write(path, text + "\n")
    }
}

fn us(ns: u64) -> String {
    format!("{:.1}", ns as f64 / 1e3)
}

/// The one line printed each second.
pub fn live_line(role: &str, i: &Interval) -> String {
    let what = match role {
        "stalls" => "stalls",
        _ => "round trips",
    };
    match (i.p50, i.max) {
        (Some(p50), Some(max)) => format!(
            "{role} {:6.1}s  {:>8} {what}  p50 {:>8} µs  max {:>8} µs",
            i.t,
            i.count,
            us(p50),
            us(max)
        ),
        _ if role == "ping" || role == "intra" || role == "stalls" => {
            format!("{role} {:6.1}s  {:>8} {what}", i.t, i.count)
        }
        _ => format!(
            "{role} {:6.1}s  {:>10.0} samples/s  {:>9.1} Mbit/s",
            i.t, i.samples_per_s, i.mbit_per_s
        ),
    }
}

/// The table printed at the end of a run.
pub fn print_table(r: &RunResult, out: &mut impl Write) -> std::io::Result<()> {
    let c = &r.config;
    if r.role == "stalls" {
        return print_stalls(r, out);
    }
    let history = if c.history == "keep-last" {
        format!("keep-last({})", c.depth)
    } else {
        c.history.clone()
    };
    writeln!(
        out,
        "{} {} {}: size {} ({} B payload), {} {}, {}, {} key(s), rate {}",
        r.implementation,
        r.role,
        c.type_,
        c.size,
        c.payload_bytes,
        c.reliability,
        history,
        c.delivery,
        c.keys,
        c.rate.map_or("unlimited".to_owned(), |r| format!("{r}/s")),
    )?;
    if let Some(l) = &r.latency {
        writeln!(
            out,
            "round trip (µs)  count {}  lost {}\n  min {}  mean {}  p50 {}  p90 {}  p99 {}  p99.9 {}  p99.99 {}  max {}\n  stddev {}  pdv {}",
            l.count,
            l.lost,
            us(l.min),
            us(l.mean),
            us(l.p50),
            us(l.p90),
            us(l.p99),
            us(l.p99_9),
            us(l.p99_99),
            us(l.max),
            us(l.stddev),
            us(l.pdv),
        )?;
        if l.count > 0 {
            writeln!(
                out,
                "  one-way estimate (half) p50 {} µs; {:.0} round trips/s",
                us(l.p50 / 2),
                l.count as f64 / c.duration_s.max(1e-9)
            )?;
        }
    }
    if let Some(t) = &r.throughput {
        writeln!(
            out,
            "throughput  {} samples  {} lost  {:.0} samples/s  {:.1} Mbit/s over {:.1} s",
            t.samples, t.lost, t.samples_per_s, t.mbit_per_s, t.seconds
        )?;
    }
    if let Some(b) = &r.bulk {
        writeln!(
            out,
            "bulk  {} samples of {} B on {} written  {:.0} samples/s  {:.1} Mbit/s over {:.1} s  {} writes timed out",
            b.samples, b.payload_bytes, b.topic, b.samples_per_s, b.mbit_per_s, b.seconds, b.blocked
        )?;
    }
    let p = &r.process;
    writeln!(
        out,
        "process  cpu {:.1}% (user {:.2} s, sys {:.2} s)  peak rss {}",
        p.cpu_percent,
        p.cpu_user_s,
        p.cpu_sys_s,
        p.peak_rss_kib
            .map_or("?".to_owned(), |k| format!("{:.1} MiB", k as f64 / 1024.0)),
    )?;
    if let Some(d) = r.discovery_ns {
        writeln!(out, "discovery  {:.2} ms", d as f64 / 1e6)?;
    }
    Ok(())
}

/// The end of `tachyon floor stalls`: the gaps of 2 µs or more in a spinning thread's clock.
fn print_stalls(r: &RunResult, out: &mut impl Write) -> std::io::Result<()> {
    let l = r.latency.clone().unwrap_or_default();
    writeln!(
        out,
        "stalls of a spinning thread (gaps of 2 µs or more in its clock readings, µs)\n  count {}  {:.0} a second  min {}  p50 {}  p90 {}  p99 {}  max {}  lost in all {:.2} % of the time",
        l.count,
        l.count as f64 / r.config.duration_s.max(1e-9),
        us(l.min),
        us(l.p50),
        us(l.p90),
        us(l.p99),
        us(l.max),
        l.count as f64 * l.mean as f64 / (r.config.duration_s.max(1e-9) * 1e7),
    )
}

/// The end of a run: the table on standard error (so `--json -` keeps standard output clean)
/// and, when asked, the JSON record.
pub fn emit(result: &RunResult, json: Option<&str>) -> Result<(), String> {
    let _ = print_table(result, &mut std::io::stderr());
    match json {
        Some(path) => write_json(result, path).map_err(|e| format!("cannot write {path}: {e}")),
        None => Ok(()),
    }
}
