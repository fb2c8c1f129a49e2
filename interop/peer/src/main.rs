//! Tachyon's side of the interop matrix: `tachyon_peer pub|sub [options]`, with the options and
//! the output lines of the Cyclone DDS and Fast DDS peers (`interop/peers/peer_options.h`), so
//! `interop/matrix.py` drives any pair of implementations the same way.

mod options;
mod types;

use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use tachyon::prelude::*;
use tachyon::qos::{AccessScope, DataRepresentation, LivelinessKind, OwnershipKind, Presentation};
use tachyon::InstanceState;
use tachyon_cdr::Decode;

use options::Evolved;
use options::Options;
use types::{
    AppendableShape, AppendableShape5, AppendableShapeX64, LargeData, PeerType, ShapeType,
    SuiteShape,
};

/// Raised by SIGINT or SIGTERM (the matrix stops peers that way): the peer then returns from
/// what it is doing and closes its participant, which deletes its shared-memory segment.
static STOP: std::sync::OnceLock<std::sync::Arc<std::sync::atomic::AtomicBool>> =
    std::sync::OnceLock::new();

fn stopping() -> bool {
    STOP.get()
        .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    let stop = STOP.get_or_init(Default::default);
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        if let Err(e) = signal_hook::flag::register(signal, std::sync::Arc::clone(stop)) {
            eprintln!("tachyon_peer: cannot handle signal {signal}: {e}");
            return ExitCode::from(1);
        }
    }
    let opts = match Options::parse(std::env::args().skip(1)) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("tachyon_peer: {e}\n{}", options::USAGE);
            return ExitCode::from(1);
        }
    };
    let r = if opts.large {
        run::<LargeData>(&opts)
    } else if opts.evolved == Some(Evolved::Appended) {
        run::<AppendableShape5>(&opts)
    } else if opts.evolved == Some(Evolved::Changed) {
        run::<AppendableShapeX64>(&opts)
    } else if opts.evolved == Some(Evolved::Suite) {
        run::<SuiteShape>(&opts)
    } else if opts.appendable {
        run::<AppendableShape>(&opts)
    } else {
        run::<ShapeType>(&opts)
    };
    match r {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("tachyon_peer: {e}");
            ExitCode::from(1)
        }
    }
}

/// Prints a line and flushes it: the driver reads the output as it comes.
macro_rules! say {
    ($($t:tt)*) => {{
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, $($t)*);
        let _ = out.flush();
    }};
}

fn run<T>(o: &Options) -> Result<u8, Error>
where
    T: PeerType + DdsType + for<'de> Decode<'de>,
{
    let participant = DomainParticipant::new(o.domain)?;
    let topic = participant.create_topic::<T>(&o.topic)?;
    if o.publish {
        let mut qos = PublisherQos::default().presentation(presentation(o));
        qos.partition.extend(o.partition.iter().cloned());
        let publisher = participant.create_publisher_with_qos(qos)?;
        let writer = publisher.create_datawriter(&topic, writer_qos(o))?;
        // `--local-reader`: a reader in a second participant of this process.
        let local = match o.local_reader {
            true => {
                let p = DomainParticipant::new(o.domain)?;
                let t = p.create_topic::<T>(&o.topic)?;
                let r = p
                    .create_subscriber()?
                    .create_datareader(&t, reader_qos(o))?;
                Some((p, r))
            }
            false => None,
        };
        let code = publish(o, &writer)?;
        if let Some((_p, r)) = &local {
            report_local(o, r);
            let s = participant.statistics();
            say!(
                "PATHS intra={} shm={} other={}",
                s.intra.datagrams_sent,
                s.shm.datagrams_sent,
                s.transport.datagrams_sent - s.intra.datagrams_sent - s.shm.datagrams_sent
            );
        }
        report_xdp(&participant);
        Ok(code)
    } else {
        let mut qos = SubscriberQos::default().presentation(presentation(o));
        qos.partition.extend(o.partition.iter().cloned());
        let subscriber = participant.create_subscriber_with_qos(qos)?;
        let reader = match &o.filter {
            Some(expr) => {
                let name = format!("{}_filtered", o.topic);
                let cft = participant.create_contentfilteredtopic(
                    &name,
                    &topic,
                    expr,
                    &o.filter_params,
                )?;
                subscriber.create_datareader(&cft, reader_qos(o))?
            }
            None => subscriber.create_datareader(&topic, reader_qos(o))?,
        };
        let code = subscribe(o, &reader);
        report_xdp(&participant);
        code
    }
}

/// With an AF_XDP transport (`[xdp]` in TACHYON_CONFIG), what went through it: `XDP sent N
/// received M kernel K` (the veth matrix checks that its socket carried the case's traffic).
fn report_xdp(participant: &DomainParticipant) {
    let x = participant.statistics().xdp;
    if x != Default::default() {
        say!(
            "XDP sent {} received {} kernel {}",
            x.sent,
            x.received,
            x.via_kernel
        );
    }
}

/// What the `--local-reader` got: its samples as `LOCAL key seq len ok|bad` lines, taken
/// until it has `--count` of them (or 5 s passed).
fn report_local<T>(o: &Options, reader: &DataReader<T>)
where
    T: PeerType + DdsType + for<'de> Decode<'de>,
{
    let end = Instant::now() + Duration::from_secs(5);
    let mut got = 0u64;
    while got < o.count && Instant::now() < end {
        for s in reader.take(usize::MAX).unwrap_or_default() {
            if let Some(d) = &s.data {
                let (key, seq, len, ok) = d.describe(o);
                say!("LOCAL {key} {seq} {len} {}", if ok { "ok" } else { "bad" });
                got += 1;
            }
        }
        reader.wait_for_data(Duration::from_millis(10));
    }
}

/// PRESENTATION of `--ordered`.
fn presentation(o: &Options) -> Presentation {
    let mut p = Presentation::default();
    if o.ordered {
        p.access_scope = AccessScope::Topic;
        p.ordered_access = true;
    }
    p
}

macro_rules! endpoint_qos {
    ($o:expr, $qos:expr) => {{
        let o = $o;
        let mut q = if o.reliable {
            $qos.reliable()
        } else {
            $qos.best_effort()
        };
        q = if o.depth > 0 {
            q.keep_last(o.depth)
        } else {
            q.keep_all()
        };
        if o.transient_local {
            q = q.transient_local();
        }
        if let Some(lease) = o.lease {
            q = q.liveliness(LivelinessKind::Automatic, Some(lease));
        }
        if let Some(d) = o.deadline {
            q = q.deadline(d);
        }
        if o.strength.is_some() || o.exclusive {
            q = q.ownership(OwnershipKind::Exclusive);
        }
        match o.representation {
            Some(1) => q.representation(&[DataRepresentation::Xcdr1]),
            Some(_) => q.representation(&[DataRepresentation::Xcdr2]),
            None => q,
        }
    }};
}

fn writer_qos(o: &Options) -> DataWriterQos {
    let q = endpoint_qos!(o, DataWriterQos::default());
    match o.strength {
        Some(s) => q.ownership_strength(s),
        None => q,
    }
}

fn reader_qos(o: &Options) -> DataReaderQos {
    endpoint_qos!(o, DataReaderQos::default())
}

/// What the driver has been told about statuses, to print only changes.
#[derive(Default)]
struct Seen {
    matched: u32,
    incompatible: u32,
    deadline_missed: u32,
    alive: u32,
    not_alive: u32,
    was_alive: bool,
    lost: bool,
}

impl Seen {
    /// Prints what changed in a writer's statuses.
    fn writer<T: DdsType>(&mut self, w: &DataWriter<T>) {
        self.matched(w.get_publication_matched_status().current_count);
        self.incompatible(&w.get_offered_incompatible_qos_status());
        self.deadline(w.get_offered_deadline_missed_status().total_count);
    }

    /// Prints what changed in a reader's statuses.
    fn reader<T>(&mut self, r: &DataReader<T>)
    where
        T: DdsType + for<'de> Decode<'de>,
    {
        self.matched(r.get_subscription_matched_status().current_count);
        self.incompatible(&r.get_requested_incompatible_qos_status());
        self.deadline(r.get_requested_deadline_missed_status().total_count);
        let l = r.get_liveliness_changed_status();
        if l.alive_count != self.alive || l.not_alive_count != self.not_alive {
            self.alive = l.alive_count;
            self.not_alive = l.not_alive_count;
            say!("LIVELINESS {} {}", self.alive, self.not_alive);
        }
        self.was_alive |= self.alive > 0;
        self.lost |= self.was_alive && self.alive == 0;
    }

    fn deadline(&mut self, total: u32) {
        if total != self.deadline_missed {
            self.deadline_missed = total;
            say!("DEADLINE_MISSED {total}");
        }
    }

    fn matched(&mut self, current: u32) {
        if current != self.matched {
            self.matched = current;
            say!("MATCHED {current}");
        }
    }

    fn incompatible(&mut self, s: &tachyon::status::IncompatibleQosStatus) {
        if s.total_count != self.incompatible {
            self.incompatible = s.total_count;
            say!("INCOMPATIBLE {}", s.last_policy_id.map_or(0, |p| p.id()));
        }
    }
}

fn publish<T: PeerType + DdsType>(o: &Options, writer: &DataWriter<T>) -> Result<u8, Error> {
    let end = Instant::now() + o.timeout;
    let mut seen = Seen::default();
    if o.expect_incompatible {
        while seen.incompatible == 0 {
            seen.writer(writer);
            if Instant::now() > end {
                say!("TIMEOUT incompatible");
                return Ok(2);
            }
            std::thread::sleep(Duration::from_millis(10));
            if stopping() {
                return Ok(3);
            }
        }
        std::thread::sleep(o.linger);
        say!("DONE");
        return Ok(0);
    }
    while seen.matched < o.wait_match {
        seen.writer(writer);
        if Instant::now() > end {
            say!("TIMEOUT match");
            return Ok(2);
        }
        std::thread::sleep(Duration::from_millis(10));
        if stopping() {
            return Ok(3);
        }
    }
    if o.wait_go {
        // The driver answers once the subscriber has matched too.
        say!("READY");
        let mut line = String::new();
        let _ = std::io::stdin().read_line(&mut line);
    }
    for i in 0..o.count {
        writer.write(&T::make(i, o))?;
        if !o.period.is_zero() {
            std::thread::sleep(o.period);
        }
        if stopping() {
            return Ok(3);
        }
    }
    if o.dispose {
        writer.dispose(&T::make(0, o))?;
    }
    say!("WRITTEN {}", o.count);
    if o.reliable && o.wait_match > 0 {
        match writer.wait_for_acknowledgments(o.timeout) {
            Ok(()) => say!("ACKED"),
            Err(_) => say!("TIMEOUT acks"),
        }
    }
    let filtered = writer.filtered_sample_count();
    if filtered > 0 {
        say!("FILTERED {filtered}");
    }
    let linger_end = Instant::now() + o.linger;
    while Instant::now() < linger_end && !stopping() {
        seen.writer(writer);
        std::thread::sleep(Duration::from_millis(10));
    }
    say!("DONE");
    Ok(0)
}

fn subscribe<T>(o: &Options, reader: &DataReader<T>) -> Result<u8, Error>
where
    T: PeerType + DdsType + for<'de> Decode<'de>,
{
    let end = Instant::now() + o.timeout;
    let mut seen = Seen::default();
    let mut got = 0u64;
    let mut disposed = false;
    // Keys of the instances seen, for dispose notifications without data.
    let mut keys = HashMap::new();
    let take = |keys: &mut HashMap<_, _>| -> Result<(usize, u64, bool), Error> {
        let samples = reader.take(usize::MAX)?;
        let (mut valid, mut disposed) = (0u64, false);
        for s in &samples {
            if let Some(d) = &s.data {
                let (key, seq, len, ok) = d.describe(o);
                say!("SAMPLE {key} {seq} {len} {}", if ok { "ok" } else { "bad" });
                keys.insert(s.info.instance_handle, key);
                valid += 1;
            }
            if s.info.instance_state == InstanceState::NotAliveDisposed {
                let key = keys
                    .get(&s.info.instance_handle)
                    .map_or("?", String::as_str);
                say!("DISPOSED {key}");
                disposed = true;
            }
        }
        Ok((samples.len(), valid, disposed))
    };
    loop {
        seen.reader(reader);
        let (n, valid, d) = take(&mut keys)?;
        got += valid;
        disposed |= d;
        let done = got >= o.expect
            && (!o.expect_dispose || disposed)
            && (!o.expect_incompatible || seen.incompatible > 0)
            && (!o.expect_not_alive || seen.lost);
        if done {
            break;
        }
        if Instant::now() > end {
            say!("TIMEOUT got {got}");
            return Ok(2);
        }
        if stopping() {
            return Ok(3);
        }
        if !o.read_period.is_zero() {
            std::thread::sleep(o.read_period);
        } else if n == 0 {
            reader.wait_for_data(Duration::from_millis(5));
        }
    }
    // Statuses keep being reported while lingering: a deadline missed after the last sample
    // (every sample may arrive at once, repaired after a loss) shows only here.
    let linger_end = Instant::now() + o.linger;
    while Instant::now() < linger_end && !stopping() {
        seen.reader(reader);
        take(&mut keys)?;
        reader.wait_for_data(Duration::from_millis(10));
    }
    seen.reader(reader);
    say!("DONE");
    Ok(0)
}
