//! `ping --bulk-size`: a bulk load in the pinging participant. A thread of its own writes
//! samples of `--bulk-size` with the node's RELIABLE KEEP_ALL bulk writer as fast as flow
//! control allows (a write that times out waiting for acknowledgements is retried), while the
//! ping thread measures; the ping's record says what it wrote during the measured part.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tachyon::prelude::*;

use super::types::PerfSample;
use super::Failure;
use crate::stats::BulkSummary;

/// Writes between two checks that a reader is still matched (without one, a keep-all writer
/// would accept samples as fast as the thread runs: the thread waits instead).
const MATCH_CHECK_EVERY: u32 = 16;

#[derive(Default)]
struct Counters {
    samples: AtomicU64,
    bytes: AtomicU64,
    blocked: AtomicU64,
}

/// The counters at one moment.
#[derive(Clone, Copy, Debug)]
pub struct Mark {
    samples: u64,
    bytes: u64,
    blocked: u64,
    at: Instant,
}

/// The running bulk writer thread.
pub struct BulkLoad {
    stop: Arc<AtomicBool>,
    counters: Arc<Counters>,
    thread: Option<JoinHandle<Option<String>>>,
    template: BulkSummary,
}

/// Waits until `writer` matched a reader (`--match-timeout`).
pub fn wait_matched<T: PerfSample>(
    writer: &DataWriter<T>,
    topic: &str,
    timeout: f64,
) -> Result<(), Failure> {
    let deadline = Instant::now() + Duration::from_secs_f64(timeout);
    while writer.get_publication_matched_status().current_count == 0 {
        if Instant::now() >= deadline {
            return Err(Failure::NoMatch(format!(
                "after {timeout} s the bulk writer on {topic} matched no reader (start a `sub --topic {topic}`)"
            )));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Ok(())
}

impl BulkLoad {
    /// Starts writing samples of `size` with `writer` (TRANSPORT_PRIORITY as its QoS says).
    pub fn start<T: PerfSample>(
        writer: Arc<DataWriter<T>>,
        topic: &str,
        size: u32,
    ) -> Result<BulkLoad, Failure> {
        let mut sample = T::with_size(size);
        let template = BulkSummary {
            topic: topic.to_owned(),
            size,
            payload_bytes: sample.payload_bytes(),
            transport_priority: writer.qos().transport_priority,
            ..BulkSummary::default()
        };
        let stop = Arc::new(AtomicBool::new(false));
        let counters = Arc::new(Counters::default());
        let thread = {
            let stop = Arc::clone(&stop);
            let counters = Arc::clone(&counters);
            let bytes = template.payload_bytes;
            std::thread::Builder::new()
                .name("perf-bulk".into())
                .spawn(move || {
                    let mut seq = 0u32;
                    let mut since_check = 0u32;
                    while !stop.load(Ordering::Relaxed) {
                        if since_check == 0
                            && writer.get_publication_matched_status().current_count == 0
                        {
                            std::thread::sleep(Duration::from_millis(5));
                            continue;
                        }
                        since_check = (since_check + 1) % MATCH_CHECK_EVERY;
                        sample.set_seq(seq);
                        match writer.write(&sample) {
                            Ok(()) => {
                                seq = seq.wrapping_add(1);
                                counters.samples.fetch_add(1, Ordering::Relaxed);
                                counters.bytes.fetch_add(bytes, Ordering::Relaxed);
                            }
                            // KEEP_ALL: the readers' acknowledgements did not come within
                            // max_blocking_time; try the same sample again.
                            Err(Error::Timeout) => {
                                since_check = 0;
                                counters.blocked.fetch_add(1, Ordering::Relaxed);
                            }
                            Err(e) => return Some(e.to_string()),
                        }
                    }
                    None
                })
                .map_err(|e| Failure::Other(format!("cannot start the bulk thread: {e}")))?
        };
        Ok(BulkLoad {
            stop,
            counters,
            thread: Some(thread),
            template,
        })
    }

    /// The counters now.
    pub fn mark(&self) -> Mark {
        Mark {
            samples: self.counters.samples.load(Ordering::Relaxed),
            bytes: self.counters.bytes.load(Ordering::Relaxed),
            blocked: self.counters.blocked.load(Ordering::Relaxed),
            at: Instant::now(),
        }
    }

    /// Stops the thread; what it wrote since `from` (taken now, before stopping it).
    pub fn finish(mut self, from: Mark) -> Result<BulkSummary, Failure> {
        let to = self.mark();
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            match t.join() {
                Ok(None) => {}
                Ok(Some(e)) => return Err(Failure::Other(format!("bulk writer: {e}"))),
                Err(_) => return Err(Failure::poisoned()),
            }
        }
        Ok(summary(&self.template, from, to))
    }
}

impl Drop for BulkLoad {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What was written between two marks.
fn summary(template: &BulkSummary, from: Mark, to: Mark) -> BulkSummary {
    BulkSummary {
        samples: to.samples - from.samples,
        bytes: to.bytes - from.bytes,
        blocked: to.blocked - from.blocked,
        ..template.clone()
    }
    .with_rates(to.at.duration_since(from.at).as_secs_f64())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_between_the_marks() {
        let t0 = Instant::now();
        let from = Mark {
            samples: 10,
            bytes: 10 * 65_536,
            blocked: 1,
            at: t0,
        };
        let to = Mark {
            samples: 1010,
            bytes: 1010 * 65_536,
            blocked: 4,
            at: t0 + Duration::from_secs(2),
        };
        let template = BulkSummary {
            topic: "DDSPerfRBulkKS".into(),
            size: 65_536,
            payload_bytes: 65_536,
            ..BulkSummary::default()
        };
        let s = summary(&template, from, to);
        assert_eq!((s.samples, s.blocked), (1000, 3));
        assert_eq!(s.bytes, 1000 * 65_536);
        assert!((s.seconds - 2.0).abs() < 1e-9);
        assert!((s.samples_per_s - 500.0).abs() < 1e-9);
        assert!((s.mbit_per_s - 1000.0 * 65_536.0 * 8.0 / 2.0 / 1e6).abs() < 1e-6);
        assert_eq!(s.topic, "DDSPerfRBulkKS");
    }
}
