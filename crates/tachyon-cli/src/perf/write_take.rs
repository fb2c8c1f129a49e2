//! `write-take`: a writer and a reader in one process (two participants, or one with
//! `--same-participant`), and one thread that writes a sample, then takes it from the reader
//! (`take_next_sample`), and records the time from the call to `write` until the take
//! returned it. The sample is in the reader's cache when `write` returns (through the
//! in-process transport between two participants, handed over directly within one), so this
//! is the cost of the whole path on one thread (HDDS's `latency_benchmark` measures the same:
//! write, then take one sample, on one thread, its writer and reader in one participant).

use std::time::{Duration, Instant};

use tachyon::prelude::*;

use super::options::PerfArgs;
use super::types::PerfSample;
use super::Failure;
use crate::stats::{live_line, LatencyRecorder, RunResult, Usage};

/// Runs the loop on `writer` and `reader` (of this process) for `--warmup` + `--duration`
/// seconds.
pub fn run<T: PerfSample>(
    a: &PerfArgs,
    writer: &DataWriter<T>,
    reader: &DataReader<T>,
) -> Result<RunResult, Failure> {
    let deadline = Instant::now() + Duration::from_secs_f64(a.match_timeout);
    while writer.get_publication_matched_status().current_count < 1
        || reader.get_subscription_matched_status().current_count < 1
    {
        if Instant::now() >= deadline {
            return Err(Failure::NoMatch(format!(
                "the data writer and reader did not match within {} s",
                a.match_timeout
            )));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    super::pin_this_thread(a.cpu, a.rt_priority);
    let mut sample = T::with_size(a.size);
    let mut result = RunResult::new(
        "tachyon",
        "write-take",
        a.run_config(sample.payload_bytes()),
    );
    let mut taken = T::with_size(a.size);
    let mut recorder = LatencyRecorder::new();
    let start = Instant::now();
    let warmup = Duration::from_secs_f64(a.warmup);
    let measure = Duration::from_secs_f64(a.duration);
    let mut measured_from: Option<(Instant, Usage)> = None;
    let mut next_tick = start + warmup + Duration::from_secs(1);
    let mut last_tick = start + warmup;
    let mut seq = 0u32;
    loop {
        let now = Instant::now();
        if measured_from.is_none() && now >= start + warmup {
            recorder.reset();
            measured_from = Some((now, Usage::now()));
        }
        if let Some((from, _)) = measured_from {
            let done = now >= from + measure || a.count.is_some_and(|c| recorder.count() >= c);
            if now >= next_tick || done {
                let secs = now.duration_since(last_tick).as_secs_f64();
                let interval = recorder.end_interval(now.duration_since(from).as_secs_f64(), secs);
                if !a.quiet {
                    eprintln!("{}", live_line("write-take", &interval));
                }
                result.timeline.push(interval);
                last_tick = now;
                next_tick += Duration::from_secs(1);
            }
            if done {
                break;
            }
        }
        seq = seq.wrapping_add(1);
        sample.set_seq(seq);
        let t0 = Instant::now();
        // A plain `write`, stamped by the writer, as an application writes (and as HDDS's
        // benchmark does): no timestamp of the tool's own inside the measured span.
        match writer.write(&sample) {
            Ok(()) => {}
            Err(Error::Timeout) => continue,
            Err(e) => return Err(Failure::dds(e)),
        }
        // One sample per call, into the same value (as HDDS's benchmark takes one).
        let found = loop {
            match reader.take_next_sample(&mut taken).map_err(Failure::dds)? {
                Some(info) if info.valid_data && taken.seq() == seq => break true,
                // An older sample (one found lost before): the next.
                Some(_) => continue,
                None if t0.elapsed() >= a.lost_after() => break false,
                None => std::hint::spin_loop(),
            }
        };
        if found {
            recorder.record(u64::try_from(t0.elapsed().as_nanos()).unwrap_or(u64::MAX));
        } else {
            recorder.lost(1);
        }
    }
    if !a.quiet {
        // Readers of the writer's type in this process take its values: nothing serialized.
        eprintln!(
            "write-take: samples as values: {} written, {} taken; serialized later: {}; \
             handed to the reader directly (one participant): {}",
            writer.shared_samples_written(),
            reader.shared_samples_taken(),
            writer.late_serializations(),
            writer.direct_deliveries()
        );
    }
    let (from, usage) = measured_from.ok_or_else(Failure::poisoned)?;
    result.process = usage.since();
    result.config.duration_s = from.elapsed().as_secs_f64();
    result.latency = Some(recorder.summary());
    result.histogram = recorder.buckets();
    Ok(result)
}
