//! Samples and payload bytes counted at the subscriber, with losses found from sequence
//! numbers (per writer and key, as `ddsperf` counts them).

use std::collections::HashMap;

use serde::Serialize;

use super::latency::Interval;

/// Summary of what a subscriber received (`bench/SCHEMA.md`, `throughput`).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct ThroughputSummary {
    pub samples: u64,
    pub lost: u64,
    pub bytes: u64,
    pub seconds: f64,
    pub samples_per_s: f64,
    pub mbit_per_s: f64,
}

/// What a bulk writer wrote during a measurement (`bench/SCHEMA.md`, `bulk`): samples the
/// writer accepted, their payload octets, and writes that timed out in flow control.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct BulkSummary {
    pub topic: String,
    pub size: u32,
    pub payload_bytes: u64,
    pub transport_priority: i32,
    pub samples: u64,
    pub bytes: u64,
    pub blocked: u64,
    pub seconds: f64,
    pub samples_per_s: f64,
    pub mbit_per_s: f64,
}

impl BulkSummary {
    /// Rates over `seconds`.
    pub fn with_rates(mut self, seconds: f64) -> BulkSummary {
        self.seconds = seconds;
        if seconds > 0.0 {
            self.samples_per_s = self.samples as f64 / seconds;
            self.mbit_per_s = self.bytes as f64 * 8.0 / seconds / 1e6;
        }
        self
    }
}

/// Counts received samples; `W` identifies a writer.
/// Keys below this are kept by index ([`ThroughputCounter`]).
const INDEXED_KEYS: usize = 1 << 16;

pub struct ThroughputCounter<W> {
    /// Next sequence number expected per writer and key: a short list of the writers, each
    /// with its keys' numbers by key (as `ddsperf` keeps them; a hash of each sample's writer
    /// and key was 5 % of the subscriber's CPU at 3 million samples/s), and a map for keys
    /// too large to index.
    expected: Vec<(W, Vec<Option<u32>>)>,
    expected_far: HashMap<(W, u32), u32>,
    samples: u64,
    bytes: u64,
    lost: u64,
    interval_samples: u64,
    interval_bytes: u64,
}

impl<W: std::hash::Hash + Eq> Default for ThroughputCounter<W> {
    fn default() -> Self {
        ThroughputCounter::new()
    }
}

impl<W: std::hash::Hash + Eq> ThroughputCounter<W> {
    pub fn new() -> ThroughputCounter<W> {
        ThroughputCounter {
            expected: Vec::new(),
            expected_far: HashMap::new(),
            samples: 0,
            bytes: 0,
            lost: 0,
            interval_samples: 0,
            interval_bytes: 0,
        }
    }

    /// Counts one sample of `bytes` payload bytes, sequence number `seq` of `key` from
    /// `writer`. The writer cycles through `keys` keys, so the next sample of this key has
    /// `seq + keys`; a larger one means the ones between were lost.
    pub fn record(&mut self, writer: W, key: u32, seq: u32, keys: u32, bytes: u64) {
        self.samples += 1;
        self.bytes += bytes;
        self.interval_samples += 1;
        self.interval_bytes += bytes;
        let next = seq.wrapping_add(keys.max(1));
        if let Some(e) = self.expect(writer, key, next) {
            let gap = seq.wrapping_sub(e);
            // A gap of more than half the space is a sample from before (reordering,
            // duplicate), not a loss.
            if gap < u32::MAX / 2 {
                self.lost += u64::from(gap / keys.max(1));
            }
        }
    }

    /// Sets the number expected next of `key` from `writer`; returns the one expected until
    /// now, if any.
    fn expect(&mut self, writer: W, key: u32, next: u32) -> Option<u32> {
        match usize::try_from(key).ok().filter(|&k| k < INDEXED_KEYS) {
            Some(k) => {
                let i = match self.expected.iter().position(|(w, _)| *w == writer) {
                    Some(i) => i,
                    None => {
                        self.expected.push((writer, Vec::new()));
                        self.expected.len() - 1
                    }
                };
                let by_key = &mut self.expected[i].1;
                if by_key.len() <= k {
                    by_key.resize(k + 1, None);
                }
                by_key[k].replace(next)
            }
            None => self.expected_far.insert((writer, key), next),
        }
    }

    /// Forgets the counts (the end of the warm-up); keeps the expected sequence numbers.
    pub fn reset(&mut self) {
        self.samples = 0;
        self.bytes = 0;
        self.lost = 0;
        self.interval_samples = 0;
        self.interval_bytes = 0;
    }

    pub fn samples(&self) -> u64 {
        self.samples
    }

    /// Closes the current interval of `seconds`.
    pub fn end_interval(&mut self, t: f64, seconds: f64) -> Interval {
        let per_s = |x: u64| {
            if seconds > 0.0 {
                x as f64 / seconds
            } else {
                0.0
            }
        };
        let i = Interval {
            t,
            count: self.interval_samples,
            p50: None,
            max: None,
            samples_per_s: per_s(self.interval_samples),
            mbit_per_s: per_s(self.interval_bytes) * 8.0 / 1e6,
        };
        self.interval_samples = 0;
        self.interval_bytes = 0;
        i
    }

    pub fn summary(&self, seconds: f64) -> ThroughputSummary {
        let per_s = |x: u64| {
            if seconds > 0.0 {
                x as f64 / seconds
            } else {
                0.0
            }
        };
        ThroughputSummary {
            samples: self.samples,
            lost: self.lost,
            bytes: self.bytes,
            seconds,
            samples_per_s: per_s(self.samples),
            mbit_per_s: per_s(self.bytes) * 8.0 / 1e6,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_per_writer_and_key_are_losses() {
        let mut c = ThroughputCounter::new();
        // Two keys: key 0 gets 0, 2, 4 …; key 1 gets 1, 3, 5 …
        for seq in [0u32, 1, 2, 3, 6, 7, 9] {
            c.record("w", seq % 2, seq, 2, 100);
        }
        // Key 0 lost 4; key 1 lost 5.
        let s = c.summary(1.0);
        assert_eq!((s.samples, s.lost, s.bytes), (7, 2, 700));
        assert_eq!(s.mbit_per_s, 700.0 * 8.0 / 1e6);
        // Another writer starts its own count.
        c.record("v", 0, 1000, 2, 1);
        assert_eq!(c.summary(1.0).lost, 2);
        // Keys too large to index (another vendor's key values) are counted the same way.
        let far = u32::MAX - 1;
        c.record("w", far, 10, 1, 1);
        c.record("w", far, 11, 1, 1);
        c.record("w", far, 14, 1, 1);
        assert_eq!(c.summary(1.0).lost, 4);
    }
}
