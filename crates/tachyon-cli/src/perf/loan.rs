//! `ping --loan` and `pong --loan` (`--type fixed`): a round trip of loaned samples
//! (`tachyon::loan`), written in place in the writer's loan area and read in place by the
//! other process through shared memory. Neither side touches the body of a sample (as
//! iceoryx2's benchmark does not): what is measured is the cost of moving a sample of that
//! size, which with loans does not depend on the size.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tachyon::prelude::*;
use tachyon::zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
use tachyon::Loanable;

use super::node::{participant_settings, EndpointQos};
use super::options::{Delivery, Mode, PerfArgs};
use super::Failure;
use crate::stats::{live_line, LatencyRecorder, RunResult, Usage};

/// A fixed-size sample: what the benchmark reads and writes of it.
pub trait FixedSample: Loanable {
    const SIZE: u32;
    fn seq(&self) -> u32;
    fn set_seq(&mut self, seq: u32);
}

macro_rules! fixed_types {
    ($($(#[$doc:meta])* $name:ident $dds:literal $size:expr;)*) => {$(
        $(#[$doc])*
        #[derive(DdsType, FromBytes, IntoBytes, KnownLayout, Immutable)]
        #[repr(C)]
        #[zerocopy(crate = "tachyon::zerocopy")]
        #[dds(name = $dds, final)]
        pub struct $name {
            pub seq: u32,
            pub keyval: u32,
            pub body: [u8; $size - 8],
        }

        impl FixedSample for $name {
            const SIZE: u32 = $size;
            fn seq(&self) -> u32 {
                self.seq
            }
            fn set_seq(&mut self, seq: u32) {
                self.seq = seq;
            }
        }
    )*};
}

fixed_types! {
    /// 32 bytes.
    Fixed32 "PerfFixed32" 32;
    /// 1 KiB.
    Fixed1K "PerfFixed1K" 1024;
    /// 64 KiB.
    Fixed64K "PerfFixed64K" 65536;
    /// 1 MiB.
    Fixed1M "PerfFixed1M" 1_048_576;
    /// 4 MiB.
    Fixed4M "PerfFixed4M" 4_194_304;
}

/// The sizes `--type fixed` has.
pub const SIZES: [u32; 5] = [32, 1024, 65536, 1 << 20, 4 << 20];

/// Runs `ping --loan` or `pong --loan` with the fixed type of `--size`.
pub fn run(a: &PerfArgs) -> Result<Option<RunResult>, Failure> {
    match a.size {
        32 => run_with::<Fixed32>(a),
        1024 => run_with::<Fixed1K>(a),
        65536 => run_with::<Fixed64K>(a),
        0x10_0000 => run_with::<Fixed1M>(a),
        0x40_0000 => run_with::<Fixed4M>(a),
        s => Err(Failure::Usage(format!(
            "--type fixed --size {s}: the fixed types are of {SIZES:?} bytes"
        ))),
    }
}

/// A participant with the ping and pong topics of `F`: this side's writer and reader.
struct Ends<F: FixedSample> {
    participant: DomainParticipant,
    writer: Arc<DataWriter<F>>,
    reader: DataReader<F>,
}

impl<F: FixedSample> Ends<F> {
    fn new(a: &PerfArgs) -> Result<Ends<F>, Box<dyn std::error::Error>> {
        let (settings, _) = participant_settings(a, Vec::new())?;
        let participant = DomainParticipant::with_settings(a.domain, &settings)?;
        let qos = EndpointQos::from_args(a);
        let ping = participant.create_topic::<F>(&format!("TachyonPerfLoanPing{}", F::SIZE))?;
        let pong = participant.create_topic::<F>(&format!("TachyonPerfLoanPong{}", F::SIZE))?;
        let (out, back) = if a.mode == Mode::Ping {
            (ping, pong)
        } else {
            (pong, ping)
        };
        let writer = participant
            .create_publisher()?
            .create_datawriter(&out, qos.ping_writer)?;
        let reader = participant
            .create_subscriber()?
            .create_datareader(&back, qos.ping_reader)?;
        Ok(Ends {
            participant,
            writer: Arc::new(writer),
            reader,
        })
    }

    fn wait_matched(&self, timeout: f64) -> Result<(), Failure> {
        let deadline = Instant::now() + Duration::from_secs_f64(timeout);
        while self.writer.get_publication_matched_status().current_count < 1
            || self.reader.get_subscription_matched_status().current_count < 1
        {
            if Instant::now() >= deadline || super::stop_requested() {
                return Err(Failure::NoMatch(format!(
                    "no loaned {}-byte peer within {timeout} s",
                    F::SIZE
                )));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    /// Whether every loan of this side so far was in shared memory and every sample
    /// received was read in place: else the figures are not of loans.
    fn check(&self) -> Result<(), Failure> {
        let s = self.participant.statistics().loans;
        if s.exhausted > 0 || s.copied > 0 || s.missed > 0 || s.held == 0 {
            return Err(Failure::Other(format!(
                "loans did not all go in place through shared memory ({s:?}): the peer must \
                 run on this host, as this user, with --transport shm"
            )));
        }
        Ok(())
    }
}

/// The pinging state: the ping in flight and the round trips so far.
struct Pinger<F: FixedSample> {
    writer: Arc<DataWriter<F>>,
    state: Mutex<PingState>,
}

struct PingState {
    seq: u32,
    sent_at: Instant,
    recorder: LatencyRecorder,
}

impl<F: FixedSample> Pinger<F> {
    /// Records the pong of the ping in flight, if `seqs` has it, and sends the next ping.
    fn answered(&self, seqs: &[u32]) -> Result<bool, Failure> {
        let mut st = self.state.lock().map_err(|_| Failure::poisoned())?;
        if !seqs.contains(&st.seq) {
            return Ok(false);
        }
        let ns = u64::try_from(st.sent_at.elapsed().as_nanos()).unwrap_or(u64::MAX);
        st.recorder.record(ns);
        self.send_next(&mut st)?;
        Ok(true)
    }

    fn send_next(&self, st: &mut PingState) -> Result<(), Failure> {
        st.seq = st.seq.wrapping_add(1);
        st.sent_at = Instant::now();
        send(&self.writer, st.seq)
    }
}

/// Writes a loaned sample of sequence number `seq` (its body left as the slot holds it).
fn send<F: FixedSample>(writer: &DataWriter<F>, seq: u32) -> Result<(), Failure> {
    let mut loan = writer.loan_sample().map_err(Failure::dds)?;
    loan.set_seq(seq);
    writer.write_loaned(loan).map_err(Failure::dds)
}

/// The sequence numbers of what `reader` holds, taken in place.
fn take_seqs<F: FixedSample>(reader: &DataReader<F>, seqs: &mut Vec<u32>) -> Result<(), Failure> {
    seqs.clear();
    for s in reader.take_loaned(usize::MAX).map_err(Failure::dds)? {
        seqs.extend(s.data().map(FixedSample::seq));
    }
    Ok(())
}

/// `--delivery listener`: the pong answers, and the ping records and sends the next, from
/// the reader's listener (on the receiving thread, as `ping` and `pong` do).
enum Role<F: FixedSample> {
    Pong(Arc<DataWriter<F>>),
    Ping(Arc<Pinger<F>>),
}

struct Listener<F: FixedSample> {
    role: Role<F>,
    seqs: Mutex<Vec<u32>>,
}

impl<F: FixedSample> DataReaderListener<F> for Listener<F> {
    fn on_data_available(&self, reader: &DataReader<F>) {
        let Ok(mut seqs) = self.seqs.lock() else {
            return;
        };
        if take_seqs(reader, &mut seqs).is_err() {
            return;
        }
        match &self.role {
            Role::Pong(w) => {
                for &seq in seqs.iter() {
                    let _ = send(w, seq);
                }
            }
            Role::Ping(p) => {
                let _ = p.answered(&seqs);
            }
        }
    }
}

fn run_with<F: FixedSample>(a: &PerfArgs) -> Result<Option<RunResult>, Failure> {
    let ends = Ends::<F>::new(a).map_err(|e| Failure::Other(e.to_string()))?;
    ends.wait_matched(a.match_timeout)?;
    super::pin_this_thread(a.cpu, a.rt_priority);
    let listener = a.delivery == Delivery::Listener;
    if a.mode == Mode::Pong {
        let end = Instant::now() + Duration::from_secs_f64(a.warmup + a.duration);
        if listener {
            ends.reader.set_listener(
                Some(Arc::new(Listener {
                    role: Role::Pong(Arc::clone(&ends.writer)),
                    seqs: Mutex::new(Vec::new()),
                })),
                StatusMask::DATA_AVAILABLE,
            );
        }
        if listener {
            super::sleep_until_stopped(end);
        }
        let mut seqs = Vec::new();
        while !listener && Instant::now() < end && !super::stop_requested() {
            take_seqs(&ends.reader, &mut seqs)?;
            for &seq in &seqs {
                send(&ends.writer, seq)?;
            }
        }
        ends.reader.set_listener(None, StatusMask::NONE);
        return Ok(None);
    }
    let mut result = RunResult::new("tachyon", "ping", a.run_config(u64::from(F::SIZE)));
    result.config.type_ = "fixed-loaned".into();
    let pinger = Arc::new(Pinger {
        writer: Arc::clone(&ends.writer),
        state: Mutex::new(PingState {
            seq: 0,
            sent_at: Instant::now(),
            recorder: LatencyRecorder::new(),
        }),
    });
    if listener {
        ends.reader.set_listener(
            Some(Arc::new(Listener {
                role: Role::Ping(Arc::clone(&pinger)),
                seqs: Mutex::new(Vec::new()),
            })),
            StatusMask::DATA_AVAILABLE,
        );
    }
    let lock = || pinger.state.lock().map_err(|_| Failure::poisoned());
    let start = Instant::now();
    let warmup = Duration::from_secs_f64(a.warmup);
    let measure = Duration::from_secs_f64(a.duration);
    let mut measured_from: Option<(Instant, Usage)> = None;
    let mut next_tick = start + warmup + Duration::from_secs(1);
    let mut last_tick = start + warmup;
    let mut seqs = Vec::new();
    let give_up = a.lost_after();
    pinger.send_next(&mut *lock()?)?;
    loop {
        if listener {
            std::thread::sleep(Duration::from_millis(1));
        } else {
            take_seqs(&ends.reader, &mut seqs)?;
            if !seqs.is_empty() {
                pinger.answered(&seqs)?;
            }
        }
        let now = Instant::now();
        {
            // A ping nobody answered is lost: the next goes.
            let mut st = lock()?;
            if now.duration_since(st.sent_at) >= give_up {
                st.recorder.lost(1);
                pinger.send_next(&mut st)?;
            }
        }
        if measured_from.is_none() && now >= start + warmup {
            lock()?.recorder.reset();
            measured_from = Some((now, Usage::now()));
        }
        if let Some((from, _)) = measured_from {
            let mut st = lock()?;
            let done = now >= from + measure
                || a.count.is_some_and(|c| st.recorder.count() >= c)
                || super::stop_requested();
            if now >= next_tick || done {
                let secs = now.duration_since(last_tick).as_secs_f64();
                let interval = st
                    .recorder
                    .end_interval(now.duration_since(from).as_secs_f64(), secs);
                if !a.quiet {
                    eprintln!("{}", live_line("ping", &interval));
                }
                result.timeline.push(interval);
                last_tick = now;
                next_tick += Duration::from_secs(1);
            }
            if done {
                break;
            }
        }
    }
    ends.reader.set_listener(None, StatusMask::NONE);
    ends.check()?;
    let (from, usage) = measured_from.ok_or_else(Failure::poisoned)?;
    result.process = usage.since();
    result.config.duration_s = from.elapsed().as_secs_f64();
    let st = lock()?;
    result.latency = Some(st.recorder.summary());
    result.histogram = st.recorder.buckets();
    Ok(Some(result))
}
