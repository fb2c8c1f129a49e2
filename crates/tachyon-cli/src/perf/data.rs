//! `pub` and `sub`: throughput. The publisher writes as fast as flow control lets it (or at
//! `--rate`, in bursts of `--burst`), cycling through `--keys` instances; the subscriber
//! counts samples and payload bytes and finds losses from the sequence numbers, per writer
//! and key, as `ddsperf` does.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tachyon::prelude::*;
use tachyon::{InstanceStateMask, SampleStateMask, ViewStateMask};
use tachyon_wire::Guid;

use super::node::{now_ns, system_time};
use super::options::{Delivery, PerfArgs};
use super::types::PerfSample;
use super::Failure;
use crate::stats::{live_line, RunResult, ThroughputCounter, Usage};

/// Runs the publisher (the data writer of a [`Node`](super::node::Node), or of a
/// [`DataNode`](super::node::DataNode) with `--topic`) for `--warmup` + `--duration` seconds
/// once `--subscribers` readers matched.
pub fn publish<T: PerfSample>(a: &PerfArgs, writer: &DataWriter<T>) -> Result<(), Failure> {
    let deadline = Instant::now() + Duration::from_secs_f64(a.match_timeout);
    while writer.get_publication_matched_status().current_count < a.subscribers {
        if Instant::now() >= deadline {
            return Err(Failure::NoMatch(format!(
                "the data writer matched {} of {} readers in {} s",
                writer.get_publication_matched_status().current_count,
                a.subscribers,
                a.match_timeout
            )));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    super::pin_this_thread(a.cpu, a.rt_priority);
    let mut sample = T::with_size(a.size);
    let start = Instant::now();
    let end = start + Duration::from_secs_f64(a.warmup + a.duration);
    let period = a
        .rate
        .map(|r| Duration::from_secs_f64(f64::from(a.burst) / r));
    let mut next = start;
    let (mut written, mut blocked) = (0u64, 0u64);
    let mut seq = 0u32;
    let mut clock = SparseClock::new();
    let end_ns = clock.now() + (end - start).as_nanos() as u64;
    while clock.now() < end_ns && !super::stop_requested() {
        for _ in 0..a.burst {
            sample.set_seq(seq);
            sample.set_keyval(seq % a.keys);
            match writer.write_w_timestamp(&sample, system_time(clock.now() & !1)) {
                Ok(()) => {
                    seq = seq.wrapping_add(1);
                    written += 1;
                }
                // KEEP_ALL: the readers' acknowledgements did not come within
                // max_blocking_time; try the same sample again.
                Err(Error::Timeout) => blocked += 1,
                Err(e) => return Err(Failure::dds(e)),
            }
            clock.tick();
        }
        if let Some(p) = period {
            // The end of a burst: what batching holds goes now.
            writer.flush().map_err(Failure::dds)?;
            next += p;
            let now = Instant::now();
            if next > now {
                std::thread::sleep(next - now);
            } else if now - next > Duration::from_millis(100) {
                // Fell behind (scheduling): do not try to catch up in one burst.
                next = now;
            }
            clock.refresh();
        }
    }
    writer.flush().map_err(Failure::dds)?;
    if !a.quiet {
        let secs = start.elapsed().as_secs_f64();
        eprintln!(
            "pub: wrote {written} samples in {secs:.1} s ({:.0}/s), {blocked} writes timed out",
            written as f64 / secs
        );
    }
    Ok(())
}

/// The publisher's clock (nanoseconds since the epoch: the samples' source timestamps and
/// the end of the run), read only every few samples, as `ddsperf pub` reads its own: at full
/// rate one read per sample was 7 % of the publisher's CPU (`perf record`, 32 B). The
/// interval adapts to keep reads 1–5 µs apart, at most every 10th sample, and drops back to
/// every sample when writes take long (a slow reader's flow control, pacing); a timestamp
/// is then up to about 5 µs old, which `perf sub` does not use.
struct SparseClock {
    now_ns: u64,
    interval: u32,
    countdown: u32,
}

impl SparseClock {
    fn new() -> SparseClock {
        SparseClock {
            now_ns: now_ns(),
            interval: 1,
            countdown: 1,
        }
    }

    /// The last reading.
    fn now(&self) -> u64 {
        self.now_ns
    }

    /// After a sample: reads the clock when its turn has come.
    fn tick(&mut self) {
        self.countdown -= 1;
        if self.countdown > 0 {
            return;
        }
        let t = now_ns();
        let since = t.saturating_sub(self.now_ns);
        self.now_ns = t;
        if since < 5_000 && self.interval < 10 {
            self.interval += 1;
        } else if since > 1_000 && self.interval > 1 {
            self.interval = if since > 10_000 { 1 } else { self.interval - 1 };
        }
        self.countdown = self.interval;
    }

    /// After a pause (a paced burst's sleep): read now, and every sample until it is quick.
    fn refresh(&mut self) {
        self.now_ns = now_ns();
        self.interval = 1;
        self.countdown = 1;
    }
}

/// What the subscriber counts, shared with its listener.
struct Counting {
    counter: ThroughputCounter<Guid>,
    first: Option<Instant>,
    keys: u32,
}

impl Counting {
    fn count<T: PerfSample>(&mut self, samples: &[Sample<T>]) {
        for s in samples {
            let Some(d) = &s.data else { continue };
            self.first.get_or_insert_with(Instant::now);
            self.counter.record(
                s.info.publication_handle,
                d.keyval(),
                d.seq(),
                self.keys,
                d.payload_bytes(),
            );
        }
    }
}

/// Takes into the same samples each time (`take_into`), as `ddsperf` takes into its loaned
/// ones: a large sample's octets are decoded into the buffer of an earlier one.
struct DataListener<T> {
    counting: Arc<Mutex<Counting>>,
    samples: Mutex<Vec<Sample<T>>>,
}

impl<T: PerfSample> DataReaderListener<T> for DataListener<T> {
    fn on_data_available(&self, reader: &DataReader<T>) {
        let Ok(mut samples) = self.samples.lock() else {
            return;
        };
        if reader.take_into(&mut samples, usize::MAX).is_ok() {
            if let Ok(mut c) = self.counting.lock() {
                c.count(&samples);
            }
        }
    }
}

/// Runs the subscriber on `reader`, whose participant was created at `created`: from the
/// first sample, `--warmup` seconds not counted, then `--duration` seconds (or `--count`
/// samples) measured.
pub fn subscribe<T: PerfSample>(
    a: &PerfArgs,
    reader: &DataReader<T>,
    created: Instant,
) -> Result<RunResult, Failure> {
    let counting = Arc::new(Mutex::new(Counting {
        counter: ThroughputCounter::new(),
        first: None,
        keys: a.keys,
    }));
    let sample = T::with_size(a.size);
    let mut result = RunResult::new("tachyon", "sub", a.run_config(sample.payload_bytes()));
    let waitset = match a.delivery {
        Delivery::Listener => {
            reader.set_listener(
                Some(Arc::new(DataListener {
                    counting: Arc::clone(&counting),
                    samples: Mutex::new(Vec::new()),
                })),
                StatusMask::DATA_AVAILABLE,
            );
            None
        }
        Delivery::Waitset => {
            let cond = reader.create_readcondition(
                SampleStateMask::NOT_READ,
                ViewStateMask::ANY,
                InstanceStateMask::ANY,
            );
            let mut ws = WaitSet::new();
            ws.attach_condition(&cond).map_err(Failure::dds)?;
            Some((ws, cond))
        }
        Delivery::Poll => None,
    };
    let poll = a.delivery == Delivery::Poll;
    super::pin_this_thread(a.cpu, a.rt_priority);
    let no_data_by = Instant::now() + Duration::from_secs_f64(a.match_timeout);
    let lock = || counting.lock().map_err(|_| Failure::poisoned());
    let mut samples = Vec::new();
    let mut measured_from: Option<(Instant, Usage)> = None;
    let mut last_tick = Instant::now();
    let mut next_tick = last_tick;
    loop {
        match &waitset {
            Some((ws, cond)) => {
                match ws.wait(Duration::from_millis(10)) {
                    Ok(_) | Err(Error::Timeout) => {}
                    Err(e) => return Err(Failure::dds(e)),
                }
                if reader
                    .take_w_condition_into(cond, &mut samples, usize::MAX)
                    .is_ok()
                {
                    lock()?.count(&samples);
                }
            }
            None if poll => {
                let until = Instant::now() + Duration::from_millis(10);
                while Instant::now() < until {
                    if reader.take_into(&mut samples, usize::MAX).is_ok() && !samples.is_empty() {
                        lock()?.count(&samples);
                    }
                }
            }
            None => std::thread::sleep(Duration::from_millis(10)),
        }
        let now = Instant::now();
        let first = lock()?.first;
        let Some(first) = first else {
            if now >= no_data_by {
                return Err(Failure::NoMatch(format!(
                    "no data within {} s (matched writers: {})",
                    a.match_timeout,
                    reader.get_subscription_matched_status().current_count
                )));
            }
            continue;
        };
        if result.discovery_ns.is_none() {
            result.discovery_ns = Some(first.duration_since(created).as_nanos() as u64);
        }
        let Some((from, _)) = measured_from else {
            if now >= first + Duration::from_secs_f64(a.warmup) {
                lock()?.counter.reset();
                measured_from = Some((now, Usage::now()));
                last_tick = now;
                next_tick = now + Duration::from_secs(1);
            }
            continue;
        };
        let done_count = a
            .count
            .is_some_and(|c| lock().is_ok_and(|l| l.counter.samples() >= c));
        let done = done_count || now >= from + Duration::from_secs_f64(a.duration);
        if now >= next_tick || done {
            let t = now.duration_since(from).as_secs_f64();
            let secs = now.duration_since(last_tick).as_secs_f64();
            let i = lock()?.counter.end_interval(t, secs);
            if !a.quiet {
                eprintln!("{}", live_line("sub", &i));
            }
            result.timeline.push(i);
            last_tick = now;
            next_tick += Duration::from_secs(1);
        }
        if done {
            let (from, usage) = (from, measured_from.map(|m| m.1).unwrap_or_else(Usage::now));
            let secs = from.elapsed().as_secs_f64();
            result.process = usage.since();
            result.config.duration_s = secs;
            result.throughput = Some(lock()?.counter.summary(secs));
            reader.set_listener(None, StatusMask::NONE);
            return Ok(result);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SparseClock;

    #[test]
    fn the_clock_is_read_every_few_samples_at_most_every_tenth() {
        let mut c = SparseClock::new();
        let mut reads = 0;
        let mut last = c.now();
        for _ in 0..10_000 {
            c.tick();
            if c.now() != last {
                reads += 1;
                last = c.now();
            }
            assert!((1..=10).contains(&c.interval));
        }
        // Ticks without work between them are far quicker than 1 µs apart: the interval
        // grows to its bound of 10 (a read may see an unchanged clock: at least 1 in 10).
        assert_eq!(c.interval, 10);
        assert!(reads <= 10_000 / 9, "{reads} reads");
        // Slow samples: back to a read per sample.
        std::thread::sleep(std::time::Duration::from_micros(20));
        for _ in 0..10 {
            c.tick();
        }
        assert!(c.interval < 10);
        c.refresh();
        assert_eq!((c.interval, c.countdown), (1, 1));
    }
}
