//! Round-trip latencies: an HDR histogram for the percentiles (recording allocates nothing),
//! running sums for the mean, the standard deviation and the packet-delay variation, and a
//! per-second histogram for the timeline.

use hdrhistogram::Histogram;
use serde::Serialize;

/// The largest latency kept exactly: 60 s. Anything longer is recorded as 60 s.
const HIGHEST_NS: u64 = 60_000_000_000;

/// Summary of the round trips of a run, in nanoseconds (`bench/SCHEMA.md`, `latency`).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct LatencySummary {
    pub count: u64,
    pub lost: u64,
    pub min: u64,
    pub mean: u64,
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p99_9: u64,
    pub p99_99: u64,
    pub max: u64,
    /// Standard deviation (jitter).
    pub stddev: u64,
    /// Packet-delay variation: the mean of `|rtt[i] - rtt[i-1]|` (RFC 5481's IPDV).
    pub pdv: u64,
}

/// One second of a run, for the live line and the timeline plot.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct Interval {
    /// Seconds since the measured part began, at the end of the interval.
    pub t: f64,
    pub count: u64,
    pub p50: Option<u64>,
    pub max: Option<u64>,
    pub samples_per_s: f64,
    pub mbit_per_s: f64,
}

/// Records round trips in nanoseconds.
pub struct LatencyRecorder {
    all: Histogram<u64>,
    second: Histogram<u64>,
    lost: u64,
    mean: f64,
    m2: f64,
    previous: Option<u64>,
    pdv_sum: u128,
}

impl Default for LatencyRecorder {
    fn default() -> Self {
        LatencyRecorder::new()
    }
}

impl LatencyRecorder {
    pub fn new() -> LatencyRecorder {
        let hist = || {
            // 3 significant digits from 1 ns to 60 s: about 190 KiB, allocated once.
            Histogram::new_with_bounds(1, HIGHEST_NS, 3).expect("constant bounds are valid")
        };
        LatencyRecorder {
            all: hist(),
            second: hist(),
            lost: 0,
            mean: 0.0,
            m2: 0.0,
            previous: None,
            pdv_sum: 0,
        }
    }

    /// Records one round trip.
    pub fn record(&mut self, ns: u64) {
        let v = ns.clamp(1, HIGHEST_NS);
        self.all.saturating_record(v);
        self.second.saturating_record(v);
        // Welford's running mean and variance.
        let n = self.all.len() as f64;
        let delta = v as f64 - self.mean;
        self.mean += delta / n;
        self.m2 += delta * (v as f64 - self.mean);
        if let Some(p) = self.previous {
            self.pdv_sum += u128::from(p.abs_diff(v));
        }
        self.previous = Some(v);
    }

    /// Counts `n` round trips that never completed.
    pub fn lost(&mut self, n: u64) {
        self.lost += n;
    }

    /// Round trips recorded so far.
    pub fn count(&self) -> u64 {
        self.all.len()
    }

    /// Closes the current second: its count, median and maximum.
    pub fn end_interval(&mut self, t: f64, seconds: f64) -> Interval {
        let count = self.second.len();
        let (p50, max) = if count == 0 {
            (None, None)
        } else {
            (
                Some(self.second.value_at_quantile(0.5)),
                Some(self.second.max()),
            )
        };
        self.second.reset();
        Interval {
            t,
            count,
            p50,
            max,
            samples_per_s: if seconds > 0.0 {
                count as f64 / seconds
            } else {
                0.0
            },
            mbit_per_s: 0.0,
        }
    }

    /// Forgets everything recorded (the end of the warm-up); keeps the allocations.
    pub fn reset(&mut self) {
        self.all.reset();
        self.second.reset();
        self.lost = 0;
        self.mean = 0.0;
        self.m2 = 0.0;
        self.previous = None;
        self.pdv_sum = 0;
    }

    pub fn summary(&self) -> LatencySummary {
        let n = self.all.len();
        if n == 0 {
            return LatencySummary {
                lost: self.lost,
                ..LatencySummary::default()
            };
        }
        let q = |q: f64| self.all.value_at_quantile(q);
        LatencySummary {
            count: n,
            lost: self.lost,
            min: self.all.min(),
            mean: self.mean.round() as u64,
            p50: q(0.5),
            p90: q(0.9),
            p99: q(0.99),
            p99_9: q(0.999),
            p99_99: q(0.9999),
            max: self.all.max(),
            stddev: if n > 1 {
                (self.m2 / (n - 1) as f64).sqrt().round() as u64
            } else {
                0
            },
            pdv: if n > 1 {
                (self.pdv_sum / u128::from(n - 1)) as u64
            } else {
                0
            },
        }
    }

    /// The distribution in buckets about 2% wide: `[upper bound ns, count]`, non-empty only.
    pub fn buckets(&self) -> Vec<[u64; 2]> {
        if self.all.is_empty() {
            return Vec::new();
        }
        self.all
            .iter_log(100, 1.02)
            .filter(|v| v.count_since_last_iteration() > 0)
            .map(|v| [v.value_iterated_to(), v.count_since_last_iteration()])
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_mean_stddev_and_pdv_of_a_known_series() {
        let mut r = LatencyRecorder::new();
        for v in 1..=1000u64 {
            r.record(v * 1000);
        }
        let s = r.summary();
        assert_eq!(s.count, 1000);
        assert_eq!(s.min, 1000);
        assert!(s.max.abs_diff(1_000_000) <= 1000, "{}", s.max);
        assert!(s.p50.abs_diff(500_000) <= 1000, "{}", s.p50);
        assert!(s.p99.abs_diff(990_000) <= 1000, "{}", s.p99);
        assert_eq!(s.mean, 500_500);
        // Standard deviation of 1..=1000 (sample): 288.8194 → × 1000 ns.
        assert!(s.stddev.abs_diff(288_819) <= 1, "{}", s.stddev);
        assert_eq!(s.pdv, 1000);
        let buckets = r.buckets();
        assert_eq!(buckets.iter().map(|b| b[1]).sum::<u64>(), 1000);
    }

    #[test]
    fn reset_forgets_the_warm_up_and_intervals_close_each_second() {
        let mut r = LatencyRecorder::new();
        r.record(5_000_000);
        r.lost(3);
        r.reset();
        assert_eq!(r.summary(), LatencySummary::default());
        r.record(10_000);
        r.record(20_000);
        let i = r.end_interval(1.0, 1.0);
        assert_eq!(i.count, 2);
        // HDR keeps 3 significant digits.
        assert!(
            i.max.is_some_and(|m| m.abs_diff(20_000) <= 20),
            "{:?}",
            i.max
        );
        assert_eq!(r.end_interval(2.0, 1.0).count, 0);
        assert_eq!(r.summary().count, 2);
    }
}
