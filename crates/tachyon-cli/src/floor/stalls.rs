//! `tachyon floor stalls`: what the machine itself takes from a thread that never sleeps.
//!
//! One thread, pinned with `--cpu`, reads the monotonic clock in a loop and records every gap
//! between two readings of [`STALL_NS`] or more: time the CPU was not running it (a timer
//! tick, an interrupt, a host that ran something else on the vCPU, another thread of the
//! machine). A busy-polled round trip that meets such a stall on either side takes about
//! that long, whatever the program: where the share of round trips the stalls can reach
//! (stalls a second over round trips a second) nears a percentile, that percentile lies among
//! the machine's stalls. The record's `latency` is the distribution of the stalls (its `count`
//! their number); `bench/run.py` runs one per vCPU, all at once, before a run that has
//! scenario 9 or 10 in it.

use std::time::{Duration, Instant};

use super::FloorArgs;
use crate::perf::Failure;
use crate::stats::{live_line, LatencyRecorder, RunResult, Usage};

/// The shortest gap between two clock readings counted as a stall: a reading takes some tens
/// of nanoseconds, a cache or TLB miss in the loop well under a microsecond.
pub const STALL_NS: u64 = 2_000;

/// Spins for `--warmup` + `--duration` seconds, recording the stalls of the measured part.
pub fn run(a: &FloorArgs) -> Result<RunResult, Failure> {
    a.pin();
    let mut result = super::result(a, "stalls");
    result.implementation = "machine".into();
    result.config.delivery = "busy-poll".into();
    let mut recorder = LatencyRecorder::new();
    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(a.warmup);
    let end = measure_from + Duration::from_secs_f64(a.duration);
    let mut usage = None;
    let mut next_tick = measure_from + Duration::from_secs(1);
    let mut last_tick = measure_from;
    let mut last = start;
    loop {
        let now = Instant::now();
        let gap = gap_ns(last, now);
        last = now;
        if now < measure_from {
            continue;
        }
        let Some(_) = usage else {
            // The first reading of the measured part: what came before is not counted.
            usage = Some(Usage::now());
            recorder.reset();
            continue;
        };
        if gap >= STALL_NS {
            recorder.record(gap);
        }
        if now >= next_tick || now >= end {
            let secs = now.duration_since(last_tick).as_secs_f64();
            let interval =
                recorder.end_interval(now.duration_since(measure_from).as_secs_f64(), secs);
            if !a.quiet {
                eprintln!("{}", live_line("stalls", &interval));
            }
            result.timeline.push(interval);
            last_tick = now;
            next_tick += Duration::from_secs(1);
            if now >= end {
                break;
            }
        }
    }
    result.process = usage.map(|u| u.since()).unwrap_or_default();
    result.config.duration_s = end.duration_since(measure_from).as_secs_f64();
    result.latency = Some(recorder.summary());
    result.histogram = recorder.buckets();
    Ok(result)
}

/// Nanoseconds from `a` to `b` (0 if the clock stood still).
fn gap_ns(a: Instant, b: Instant) -> u64 {
    u64::try_from(b.saturating_duration_since(a).as_nanos()).unwrap_or(u64::MAX)
}
