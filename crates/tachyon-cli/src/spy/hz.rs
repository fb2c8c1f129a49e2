//! `spy hz TOPIC`: the rate at which a topic's samples arrive and their sizes, as
//! `ros2 topic hz` prints them — every second, over a sliding window of the latest arrivals.
//! It reads the samples undecoded, so it needs no type: any vendor's topic, also one whose
//! type its writers do not describe.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tachyon::DomainParticipant;

use super::snapshot::Snapshot;
use super::subscribe;
use crate::perf::Failure;

/// What `hz` measures and for how long.
pub struct Options<'a> {
    pub topic: &'a str,
    /// Arrivals the statistics are computed over.
    pub window: usize,
    /// Reports to print before stopping.
    pub count: Option<u64>,
    pub duration: Option<f64>,
    pub json: bool,
    pub domain: u32,
}

/// The latest arrivals: their reception times (ns) and sizes (bytes).
pub struct Window {
    cap: usize,
    arrivals: VecDeque<(u64, usize)>,
}

/// The statistics of a window.
#[derive(Debug, PartialEq)]
pub struct Stats {
    pub rate_hz: f64,
    pub min_s: f64,
    pub max_s: f64,
    pub std_dev_s: f64,
    /// The intervals the statistics are over (arrivals − 1).
    pub window: usize,
    pub size_avg: f64,
    pub size_min: usize,
    pub size_max: usize,
}

impl Window {
    pub fn new(cap: usize) -> Window {
        Window {
            cap: cap.max(2),
            arrivals: VecDeque::new(),
        }
    }

    pub fn push(&mut self, at_ns: u64, size: usize) {
        if self.arrivals.len() == self.cap {
            self.arrivals.pop_front();
        }
        self.arrivals.push_back((at_ns, size));
    }

    /// The statistics, once two samples arrived.
    pub fn stats(&self) -> Option<Stats> {
        let n = self.arrivals.len();
        if n < 2 {
            return None;
        }
        let gaps: Vec<f64> = self
            .arrivals
            .iter()
            .zip(self.arrivals.iter().skip(1))
            .map(|(a, b)| b.0.saturating_sub(a.0) as f64 / 1e9)
            .collect();
        let mean = gaps.iter().sum::<f64>() / gaps.len() as f64;
        let var = gaps.iter().map(|g| (g - mean) * (g - mean)).sum::<f64>() / gaps.len() as f64;
        let sizes = self.arrivals.iter().map(|a| a.1);
        Some(Stats {
            rate_hz: if mean > 0.0 {
                1.0 / mean
            } else {
                f64::INFINITY
            },
            min_s: gaps.iter().copied().fold(f64::INFINITY, f64::min),
            max_s: gaps.iter().copied().fold(0.0, f64::max),
            std_dev_s: var.sqrt(),
            window: gaps.len(),
            size_avg: sizes.clone().sum::<usize>() as f64 / n as f64,
            size_min: sizes.clone().min().unwrap_or(0),
            size_max: sizes.max().unwrap_or(0),
        })
    }
}

impl Stats {
    pub fn text(&self) -> String {
        format!(
            "average rate: {:.3}\n\tmin: {:.6}s max: {:.6}s std dev: {:.6}s window: {}\n\t\
             size: average {:.0} B min {} B max {} B\n",
            self.rate_hz,
            self.min_s,
            self.max_s,
            self.std_dev_s,
            self.window,
            self.size_avg,
            self.size_min,
            self.size_max
        )
    }

    pub fn json(&self, topic: &str) -> serde_json::Value {
        json!({
            "topic": topic,
            "rate_hz": self.rate_hz,
            "min_s": self.min_s,
            "max_s": self.max_s,
            "std_dev_s": self.std_dev_s,
            "window": self.window,
            "size_avg": self.size_avg,
            "size_min": self.size_min,
            "size_max": self.size_max,
        })
    }
}

pub fn run(
    p: &DomainParticipant,
    snap: &Snapshot,
    o: &Options<'_>,
    stop: &Arc<AtomicBool>,
) -> Result<(), Failure> {
    let plan = subscribe::plan(snap, o.topic, o.domain)?;
    subscribe::warn_unmatched(&plan);
    let topic = p
        .create_serialized_topic(o.topic, &plan.type_name, plan.keyed)
        .map_err(Failure::dds)?;
    // Samples from now on: a writer's history for late joiners is no rate.
    let mut qos = plan.reader.clone();
    qos.durability = tachyon::qos::DurabilityKind::Volatile;
    let reader = subscribe::subscriber(p, &plan)?
        .create_datareader(&topic, qos)
        .map_err(Failure::dds)?;
    let mut window = Window::new(o.window);
    let end = o
        .duration
        .map(|d| Instant::now() + Duration::from_secs_f64(d));
    let mut next_report = Instant::now() + Duration::from_secs(1);
    let mut reports = 0u64;
    let mut samples = Vec::new();
    while !stop.load(Ordering::Relaxed) && !end.is_some_and(|e| Instant::now() >= e) {
        if o.count.is_some_and(|c| reports >= c) {
            break;
        }
        reader.wait_for_data(Duration::from_millis(50));
        reader.take_into(&mut samples, 1024).map_err(Failure::dds)?;
        for s in samples.iter().filter(|s| s.info.valid_data) {
            let size = s.data.as_ref().map_or(0, |d| d.bytes.len());
            window.push(s.info.reception_time.as_nanos(), size);
        }
        if Instant::now() < next_report {
            continue;
        }
        next_report += Duration::from_secs(1);
        let line = match (window.stats(), o.json) {
            (Some(s), false) => s.text(),
            (Some(s), true) => format!("{}\n", s.json(o.topic)),
            (None, false) => "no new messages\n".to_owned(),
            (None, true) => format!("{}\n", json!({ "topic": o.topic, "rate_hz": null })),
        };
        if !super::emit(&line) {
            return Ok(());
        }
        reports += 1;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steady_stream_has_its_rate_and_sizes() {
        let mut w = Window::new(100);
        assert_eq!(w.stats(), None);
        for i in 0..11u64 {
            w.push(i * 100_000_000, 64 + i as usize % 2);
        }
        let s = w.stats().expect("stats");
        assert!((s.rate_hz - 10.0).abs() < 1e-9, "{s:?}");
        assert!((s.min_s - 0.1).abs() < 1e-9 && (s.max_s - 0.1).abs() < 1e-9);
        assert!(s.std_dev_s < 1e-9);
        assert_eq!((s.window, s.size_min, s.size_max), (10, 64, 65));
        // The window slides: only the latest `cap` arrivals count.
        let mut w = Window::new(3);
        for t in [0, 1_000_000_000, 1_100_000_000, 1_200_000_000] {
            w.push(t, 1);
        }
        let s = w.stats().expect("stats");
        assert_eq!(s.window, 2);
        assert!((s.rate_hz - 10.0).abs() < 1e-6, "{s:?}");
    }
}
