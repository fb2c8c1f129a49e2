//! `tachyon perf`: latency and throughput of Tachyon, compatible with Cyclone DDS's
//! `ddsperf` on the wire (see [`node`]): `tachyon perf ping` measures against `ddsperf pong`
//! and the other way round, and the same for `pub`/`sub`. Beyond ddsperf: `--critical`
//! writers, a bulk writer beside the pings (`ping --bulk-size`, [`bulk`]) and a discovery storm
//! (`storm`, [`storm`]).

mod bulk;
mod data;
mod join;
mod loan;
mod node;
mod options;
mod ping;
mod pong;
mod storm;
mod types;
mod write_take;

use std::fmt;
use std::time::Instant;

pub use options::PerfArgs;
use options::{Mode, TypeKind};
use types::{KeyedSeq, PerfComplex, PerfSample, UnkeyedSeq};

use crate::stats::{emit, RunResult};

/// Why a run failed, and its exit status.
#[derive(Debug)]
pub enum Failure {
    /// The peers did not show up in time (exit status 1).
    NoMatch(String),
    /// Options that do not go together (exit status 2, as clap's own usage errors).
    Usage(String),
    /// Anything else (exit status 3).
    Other(String),
}

impl Failure {
    pub fn dds(e: tachyon::Error) -> Failure {
        Failure::Other(e.to_string())
    }

    fn poisoned() -> Failure {
        Failure::Other("a benchmark thread panicked".into())
    }

    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::NoMatch(_) => 1,
            Failure::Usage(_) => 2,
            Failure::Other(_) => 3,
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::NoMatch(m) => write!(f, "no peer: {m}"),
            Failure::Usage(m) => f.write_str(m),
            Failure::Other(m) => f.write_str(m),
        }
    }
}

/// Pins the calling thread to `cpu`, with SCHED_FIFO `priority` if given; says so when the
/// system refuses, and goes on.
pub(crate) fn pin_this_thread(cpu: Option<u16>, priority: Option<u8>) {
    if let Some(cpu) = cpu {
        if let Err(e) = tachyon_transport::thread::set_affinity(&[cpu]) {
            eprintln!("perf: cannot pin this thread to CPU {cpu}: {e}");
        }
    }
    if let Some(p) = priority {
        if let Err(e) = tachyon_transport::thread::set_fifo_priority(p) {
            eprintln!("perf: cannot set SCHED_FIFO priority {p}: {e}");
        }
    }
}

/// Raised by SIGINT or SIGTERM: `pong` and `pub`, which a harness stops that way, then
/// return early and close their participants (which deletes their shared-memory segments).
static STOP: std::sync::OnceLock<std::sync::Arc<std::sync::atomic::AtomicBool>> =
    std::sync::OnceLock::new();

/// Whether SIGINT or SIGTERM arrived.
pub(crate) fn stop_requested() -> bool {
    STOP.get()
        .is_some_and(|s| s.load(std::sync::atomic::Ordering::Relaxed))
}

/// The read end of a pipe SIGINT and SIGTERM write a byte to (after raising [`STOP`]), for a
/// thread that waits for them without waking up to look: a busy-polling ping-pong's vCPUs
/// are not taken from it every few milliseconds by an idle main thread.
static STOP_PIPE: std::sync::OnceLock<std::sync::Mutex<std::os::unix::net::UnixStream>> =
    std::sync::OnceLock::new();

/// Raises [`STOP`] and writes to [`STOP_PIPE`] on SIGINT and SIGTERM.
fn handle_stop_signals() -> Result<(), Failure> {
    let stop = STOP.get_or_init(Default::default);
    let (read, write) = std::os::unix::net::UnixStream::pair()
        .map_err(|e| Failure::Other(format!("cannot create the signal pipe: {e}")))?;
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let failed =
            |e: std::io::Error| Failure::Other(format!("cannot handle signal {signal}: {e}"));
        signal_hook::flag::register(signal, std::sync::Arc::clone(stop)).map_err(failed)?;
        let write = write.try_clone().map_err(failed)?;
        signal_hook::low_level::pipe::register(signal, write).map_err(failed)?;
    }
    let _ = STOP_PIPE.set(std::sync::Mutex::new(read));
    Ok(())
}

/// Sleeps until `end`, or until SIGINT or SIGTERM arrived (at once if one had).
pub(crate) fn sleep_until_stopped(end: Instant) {
    use std::io::Read;
    while !stop_requested() {
        let left = end.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return;
        }
        let Some(Ok(mut pipe)) = STOP_PIPE.get().map(|p| p.lock()) else {
            std::thread::sleep(left);
            return;
        };
        // A byte: a signal (the flag is raised before it is written); a timeout: `end`.
        if pipe.set_read_timeout(Some(left)).is_err() {
            drop(pipe);
            std::thread::sleep(left);
            return;
        }
        let _ = pipe.read(&mut [0u8; 16]);
    }
}

/// Runs `tachyon perf` as the arguments say.
pub fn run(a: &PerfArgs) -> Result<(), Failure> {
    a.validate().map_err(Failure::Usage)?;
    if a.mode == Mode::Storm {
        return storm::run(a);
    }
    if matches!(a.mode, Mode::Pong | Mode::Pub | Mode::Join) {
        handle_stop_signals()?;
    }
    if a.mode == Mode::Join {
        return join::run(a);
    }
    let result = match a.type_kind {
        TypeKind::Fixed => loan::run(a)?,
        TypeKind::Simple => run_with::<KeyedSeq>(a)?,
        TypeKind::Complex => run_with::<PerfComplex>(a)?,
        TypeKind::Unkeyed => run_with::<UnkeyedSeq>(a)?,
    };
    if let Some(r) = result {
        emit(&r, a.json.as_deref()).map_err(Failure::Other)?;
    }
    Ok(())
}

fn run_with<T: PerfSample>(a: &PerfArgs) -> Result<Option<RunResult>, Failure> {
    let node = |data_reader| {
        node::Node::<T>::new(a, data_reader).map_err(|e| Failure::Other(e.to_string()))
    };
    let data_node = |topic: &str, reader| {
        node::DataNode::<T>::new(a, topic, reader).map_err(|e| Failure::Other(e.to_string()))
    };
    let missing = || Failure::Other("no data endpoint".into());
    match (a.mode, a.topic.as_deref()) {
        (Mode::Ping, _) => Ok(Some(ping::run(a, &node(false)?, "ping")?)),
        (Mode::Pong, _) => pong::run(a, &node(false)?).map(|()| None),
        (Mode::Pub, None) => {
            let n = node(false)?;
            data::publish(a, &n.data_writer)?;
            n.check_transport(a).map_err(Failure::Other)?;
            Ok(None)
        }
        (Mode::Pub, Some(topic)) => {
            let n = data_node(topic, false)?;
            data::publish(a, n.writer.as_ref().ok_or_else(missing)?).map(|()| None)
        }
        (Mode::Sub, None) => {
            let n = node(true)?;
            let reader = n.data_reader.as_ref().ok_or_else(missing)?;
            let result = data::subscribe(a, reader, n.created)?;
            n.check_transport(a).map_err(Failure::Other)?;
            Ok(Some(result))
        }
        (Mode::Sub, Some(topic)) => {
            let n = data_node(topic, true)?;
            let reader = n.reader.as_ref().ok_or_else(missing)?;
            Ok(Some(data::subscribe(a, reader, n.created)?))
        }
        (Mode::Intra, _) => {
            let ponger = node(false)?;
            let _responder = pong::start(a, &ponger)?;
            Ok(Some(ping::run(a, &node(false)?, "intra")?))
        }
        (Mode::WriteTake, _) if a.same_participant => {
            let topic = types::topic_name::<T>("Data", a.reliable());
            let n =
                node::DataNode::<T>::pair(a, &topic).map_err(|e| Failure::Other(e.to_string()))?;
            let (w, r) = n
                .writer
                .as_ref()
                .zip(n.reader.as_ref())
                .ok_or_else(missing)?;
            Ok(Some(write_take::run(a, w, r)?))
        }
        (Mode::WriteTake, _) => {
            let writer = node(false)?;
            let reader = node(true)?;
            let r = reader.data_reader.as_ref().ok_or_else(missing)?;
            Ok(Some(write_take::run(a, &writer.data_writer, r)?))
        }
        (Mode::Storm | Mode::Join, _) => Ok(None),
    }
}
