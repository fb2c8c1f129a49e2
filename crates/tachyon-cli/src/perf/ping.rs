//! `ping`: write a ping, wait for the pong of every expected peer, record the round trip on
//! this process's monotonic clock, repeat (or ping at a fixed `--rate`, whatever the
//! pongs do). Pongs are received by a listener or by this thread on a WaitSet.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tachyon::prelude::*;
use tachyon::{InstanceStateMask, SampleStateMask, ViewStateMask};

use super::bulk::{self, BulkLoad};
use super::node::{now_ns, system_time, Node};
use super::options::{Delivery, PerfArgs};
use super::types::PerfSample;
use super::Failure;
use crate::stats::{live_line, LatencyRecorder, RunResult, Usage};

/// Pings remembered for matching their pongs: more than can be in flight at any rate.
const RING: usize = 1 << 14;

/// What the ping side knows, shared by the pong receiver and the pacing thread.
struct PingState {
    /// The sequence number of the newest ping.
    seq: u32,
    /// When each recent ping was written, by `seq % RING`.
    sent: Vec<(u32, Option<Instant>)>,
    /// Pongs seen for the newest ping.
    seen: u32,
    /// When the newest ping was written.
    last_sent: Instant,
    recorder: LatencyRecorder,
    /// Past the warm-up: round trips are measured.
    measuring: bool,
    /// A ping was answered by every expected pong: the way there and back works.
    answered: bool,
    /// Pings written while measuring.
    sent_measured: u64,
    /// No more pings.
    finished: bool,
}

/// Sends pings and matches pongs.
struct Pinger<T> {
    state: Mutex<PingState>,
    /// The sample written (only the one sending holds it).
    sample: Mutex<T>,
    writer: Arc<DataWriter<T>>,
    /// Pongs per ping before the next (unlimited rate).
    expected: u32,
    /// Ping again as soon as every pong came (no `--rate`).
    back_to_back: bool,
    /// The wall clock (nanoseconds since the epoch) when the monotonic clock read `.0`: a
    /// ping's source timestamp is derived from the reading its round trip starts at, so no
    /// second clock is read within the round trip measured.
    wall_at: (Instant, u64),
}

impl<T: PerfSample> Pinger<T> {
    /// Writes the next ping. Called without the state lock held.
    fn send_next(&self) {
        let (seq, now) = {
            let Ok(mut st) = self.state.lock() else {
                return;
            };
            if st.finished {
                return;
            }
            st.seq = st.seq.wrapping_add(1);
            st.seen = 0;
            let now = Instant::now();
            st.last_sent = now;
            let seq = st.seq;
            st.sent[seq as usize % RING] = (seq, Some(now));
            if st.measuring {
                st.sent_measured += 1;
            }
            (seq, now)
        };
        let since = now.saturating_duration_since(self.wall_at.0).as_nanos() as u64;
        let wall = self.wall_at.1.saturating_add(since);
        let Ok(mut sample) = self.sample.lock() else {
            return;
        };
        sample.set_seq(seq);
        // ddsperf's convention: the lowest bit of the timestamp set means "a ping".
        let _ = self
            .writer
            .write_w_timestamp(&sample, system_time(wall | 1));
    }

    /// Records the round trips of `pongs`; pings again when all expected pongs are in.
    fn on_pongs(&self, pongs: &[Sample<T>]) {
        let now = Instant::now();
        let again = {
            let Ok(mut st) = self.state.lock() else {
                return;
            };
            let mut complete = false;
            for p in pongs {
                let Some(d) = &p.data else { continue };
                let seq = d.seq();
                let (s, at) = st.sent[seq as usize % RING];
                let Some(at) = at.filter(|_| s == seq) else {
                    continue;
                };
                st.recorder.record(now.duration_since(at).as_nanos() as u64);
                // Paced pings do not wait for their answers: any answer shows the way works.
                st.answered |= !self.back_to_back;
                if seq == st.seq {
                    st.seen += 1;
                    complete = st.seen >= self.expected;
                    st.answered |= complete;
                }
            }
            complete && self.back_to_back && !st.finished
        };
        if again {
            self.send_next();
        }
    }
}

/// Takes into the same samples each time (`take_into`), as `ddsperf` takes into its loaned
/// ones.
struct PongListener<T> {
    pinger: Arc<Pinger<T>>,
    samples: Mutex<Vec<Sample<T>>>,
}

impl<T: PerfSample> DataReaderListener<T> for PongListener<T> {
    fn on_data_available(&self, reader: &DataReader<T>) {
        let Ok(mut samples) = self.samples.lock() else {
            return;
        };
        if reader.take_into(&mut samples, usize::MAX).is_ok() {
            self.pinger.on_pongs(&samples);
        }
    }
}

/// How often the pinging loop looks for a lost ping (at most) when nothing else is due.
const LOOK_EVERY: Duration = Duration::from_millis(100);

/// Waits until the ping writer and the pong reader each matched `n` peers.
pub fn wait_matched<T: PerfSample>(node: &Node<T>, n: u32, timeout: f64) -> Result<u64, Failure> {
    let deadline = Instant::now() + Duration::from_secs_f64(timeout);
    loop {
        let w = node
            .ping_writer
            .get_publication_matched_status()
            .current_count;
        let r = node
            .pong_reader
            .get_subscription_matched_status()
            .current_count;
        if w >= n && r >= n {
            return Ok(node.created.elapsed().as_nanos() as u64);
        }
        if Instant::now() >= deadline {
            return Err(Failure::NoMatch(format!(
                "after {timeout} s the ping writer matched {w} and the pong reader {r} of {n} expected peers"
            )));
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Runs the ping side against `--subscribers` pong processes; `role` names it in the result.
pub fn run<T: PerfSample>(a: &PerfArgs, node: &Node<T>, role: &str) -> Result<RunResult, Failure> {
    let discovery_ns = wait_matched(node, a.subscribers, a.match_timeout)?;
    let sample = T::with_size(a.size);
    let mut result = RunResult::new("tachyon", role, a.run_config(sample.payload_bytes()));
    result.discovery_ns = Some(discovery_ns);
    if let Some(c) = node.critical {
        result.config.critical_priority = Some(c.threshold);
        result.config.transport_priority = Some(c.transport_priority);
    }
    // The bulk load runs from before the warm-up, so the measured part has it throughout.
    let bulk = match &node.bulk_writer {
        Some((writer, topic)) => {
            bulk::wait_matched(writer, topic, a.match_timeout)?;
            let size = a.bulk_size.unwrap_or(0);
            Some(BulkLoad::start(Arc::clone(writer), topic, size)?)
        }
        None => None,
    };
    let mut bulk_from = None;
    let wall_at = (Instant::now(), now_ns());
    let pinger = Arc::new(Pinger {
        wall_at,
        state: Mutex::new(PingState {
            seq: 0,
            sent: vec![(0, None); RING],
            seen: 0,
            last_sent: Instant::now(),
            recorder: LatencyRecorder::new(),
            measuring: false,
            answered: false,
            sent_measured: 0,
            finished: false,
        }),
        sample: Mutex::new(sample),
        writer: Arc::clone(&node.ping_writer),
        expected: a.subscribers,
        back_to_back: a.rate.is_none(),
    });
    // The WaitSet delivery takes into the same samples each time, as the listener does.
    let mut pongs = Vec::new();
    let waitset = match a.delivery {
        Delivery::Listener => {
            node.pong_reader.set_listener(
                Some(Arc::new(PongListener {
                    pinger: Arc::clone(&pinger),
                    samples: Mutex::new(Vec::new()),
                })),
                StatusMask::DATA_AVAILABLE,
            );
            None
        }
        Delivery::Waitset => {
            let cond = node.pong_reader.create_readcondition(
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

    let start = Instant::now();
    let warmup = Duration::from_secs_f64(a.warmup);
    let measure = Duration::from_secs_f64(a.duration);
    let period = a.rate.map(|r| Duration::from_secs_f64(1.0 / r));
    let mut next_send = start;
    let mut next_tick = start + warmup + Duration::from_secs(1);
    let mut measured_from: Option<(Instant, Usage)> = None;
    let mut last_tick = start + warmup;
    // Measuring starts after the warm-up and once a ping was answered: matching says each
    // side found the other's endpoints, not that the pong's writer found our reader yet (a
    // VOLATILE answer written before that reaches nobody). Until then an unanswered ping is
    // written again after 100 ms, then after twice as long each time (a large sample being
    // repaired through loss is not replaced by the next one), for up to `--match-timeout`.
    let mut retry = Duration::from_millis(100);
    pinger.send_next();
    next_send += period.unwrap_or_default();
    loop {
        let now = Instant::now();
        let answered = pinger
            .state
            .lock()
            .map_err(|_| Failure::poisoned())?
            .answered;
        // Pace: at a fixed rate, or resend a ping nobody answered (lost).
        match period {
            Some(p) => {
                while next_send <= now {
                    pinger.send_next();
                    next_send += p;
                }
            }
            None => {
                let timeout = if measured_from.is_some() {
                    a.lost_after()
                } else {
                    retry
                };
                let stale = {
                    let st = pinger.state.lock().map_err(|_| Failure::poisoned())?;
                    now.duration_since(st.last_sent) >= timeout
                };
                if stale {
                    pinger.send_next();
                    if !answered {
                        retry = (retry * 2).min(a.lost_after().max(Duration::from_millis(100)));
                    }
                }
            }
        }
        if !answered && now >= start + warmup + Duration::from_secs_f64(a.match_timeout) {
            return Err(Failure::NoMatch(format!(
                "matched, but no ping was answered by {} pong(s) within {} s (--match-timeout)",
                a.subscribers, a.match_timeout
            )));
        }
        // End of the warm-up (and the first answer), live line, end of the run.
        if measured_from.is_none() && now >= start + warmup && answered {
            if let Ok(mut st) = pinger.state.lock() {
                st.recorder.reset();
                st.measuring = true;
            }
            measured_from = Some((now, Usage::now()));
            bulk_from = bulk.as_ref().map(BulkLoad::mark);
            last_tick = now;
            next_tick = now + Duration::from_secs(1);
        }
        let done_count = {
            let st = pinger.state.lock().map_err(|_| Failure::poisoned())?;
            a.count
                .is_some_and(|c| st.measuring && st.recorder.count() >= c)
        };
        if let Some((from, _)) = measured_from {
            if now >= next_tick || done_count || now >= from + measure {
                let secs = now.duration_since(last_tick).as_secs_f64();
                let t = now.duration_since(from).as_secs_f64();
                let interval = {
                    let mut st = pinger.state.lock().map_err(|_| Failure::poisoned())?;
                    st.recorder.end_interval(t, secs)
                };
                if !a.quiet {
                    eprintln!("{}", live_line(role, &interval));
                }
                result.timeline.push(interval);
                last_tick = now;
                next_tick += Duration::from_secs(1);
            }
            if done_count || now >= from + measure {
                break;
            }
        }
        // Wait for pongs (WaitSet) or sleep until something is due: the next second's line,
        // the warm-up's or the run's end, the next paced ping, a look for a lost ping or, with
        // `--count`, for the count reached. Looking every 10 ms made 100 wake-ups a second, in
        // a one-vCPU ping-pong's tail (the Cyclone DDS ping of `bench/peers` waits the same).
        let look = match a.count {
            Some(_) => Duration::from_millis(10),
            None => LOOK_EVERY,
        };
        let mut due = next_tick.min(now + look);
        due = due.min(match measured_from {
            Some((from, _)) => from + measure,
            // Past the warm-up, waiting for a first answer: look again soon.
            None if now >= start + warmup => now + Duration::from_millis(10),
            None => start + warmup,
        });
        if period.is_some() {
            due = due.min(next_send);
        }
        let wait = due.saturating_duration_since(Instant::now());
        match &waitset {
            Some((ws, cond)) => {
                match ws.wait(wait) {
                    Ok(_) | Err(Error::Timeout) => {}
                    Err(e) => return Err(Failure::dds(e)),
                }
                let taken = node
                    .pong_reader
                    .take_w_condition_into(cond, &mut pongs, usize::MAX);
                if taken.is_ok() {
                    pinger.on_pongs(&pongs);
                }
            }
            None if poll => {
                // Take until something is due, never sleeping.
                let until = Instant::now() + wait;
                loop {
                    if node.pong_reader.take_into(&mut pongs, usize::MAX).is_ok()
                        && !pongs.is_empty()
                    {
                        pinger.on_pongs(&pongs);
                    }
                    if Instant::now() >= until {
                        break;
                    }
                }
            }
            None => std::thread::sleep(wait),
        }
    }
    if let (Some(b), Some(from)) = (bulk, bulk_from) {
        result.bulk = Some(b.finish(from)?);
    }
    let (from, usage) = measured_from.ok_or_else(Failure::poisoned)?;
    let mut st = pinger.state.lock().map_err(|_| Failure::poisoned())?;
    st.finished = true;
    // Every measured ping should have brought one pong per peer; the newest may still
    // be on its way.
    let expected = st.sent_measured * u64::from(a.subscribers);
    let in_flight = u64::from(a.subscribers.saturating_sub(st.seen));
    let lost = expected.saturating_sub(st.recorder.count() + in_flight);
    st.recorder.lost(lost);
    result.process = usage.since();
    result.config.duration_s = from.elapsed().as_secs_f64();
    result.latency = Some(st.recorder.summary());
    result.histogram = st.recorder.buckets();
    drop(st);
    node.pong_reader.set_listener(None, StatusMask::NONE);
    node.check_transport(a).map_err(Failure::Other)?;
    Ok(result)
}
