//! `pong`: answer every ping with the same sample and the ping's timestamp, to the
//! participant that sent it (see [`super::node`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tachyon::prelude::*;
use tachyon::{InstanceStateMask, SampleStateMask, ViewStateMask};

use super::node::{Node, PongWriters};
use super::options::{Delivery, PerfArgs};
use super::types::PerfSample;
use super::Failure;

/// Takes into the same samples each time (`take_into`), as `ddsperf` takes into its loaned
/// ones.
struct PingListener<T> {
    pongs: Arc<PongWriters<T>>,
    samples: Mutex<Vec<Sample<T>>>,
}

impl<T: PerfSample> DataReaderListener<T> for PingListener<T> {
    fn on_data_available(&self, reader: &DataReader<T>) {
        let Ok(mut samples) = self.samples.lock() else {
            return;
        };
        if reader.take_into(&mut samples, usize::MAX).is_ok() {
            self.pongs.answer(&samples);
        }
    }
}

/// Answers pings until dropped.
pub struct Responder {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for Responder {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Starts answering the pings `node` receives: from a listener, or from a thread of its own
/// waiting on a WaitSet or polling.
pub fn start<T: PerfSample>(a: &PerfArgs, node: &Node<T>) -> Result<Responder, Failure> {
    let stop = Arc::new(AtomicBool::new(false));
    let thread = match a.delivery {
        Delivery::Listener => {
            node.ping_reader.set_listener(
                Some(Arc::new(PingListener {
                    pongs: Arc::clone(&node.pongs),
                    samples: Mutex::new(Vec::new()),
                })),
                StatusMask::DATA_AVAILABLE,
            );
            None
        }
        Delivery::Waitset => Some(spawn(a, node, &stop, |reader, pongs, stop| {
            let cond = reader.create_readcondition(
                SampleStateMask::NOT_READ,
                ViewStateMask::ANY,
                InstanceStateMask::ANY,
            );
            let mut ws = WaitSet::new();
            if ws.attach_condition(&cond).is_err() {
                return;
            }
            let mut samples = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                match ws.wait(Duration::from_millis(100)) {
                    Ok(_) => {
                        let taken = reader.take_w_condition_into(&cond, &mut samples, usize::MAX);
                        if taken.is_ok() {
                            pongs.answer(&samples);
                        }
                    }
                    Err(Error::Timeout) => {}
                    Err(_) => return,
                }
            }
        })?),
        Delivery::Poll => Some(spawn(a, node, &stop, |reader, pongs, stop| {
            let mut samples = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                if reader.take_into(&mut samples, usize::MAX).is_ok() && !samples.is_empty() {
                    pongs.answer(&samples);
                }
            }
        })?),
    };
    Ok(Responder { stop, thread })
}

/// The pong thread, pinned as `--cpu` and `--rt-priority` say, running `body` with the ping
/// reader, the pong writers and the stop flag.
fn spawn<T: PerfSample>(
    a: &PerfArgs,
    node: &Node<T>,
    stop: &Arc<AtomicBool>,
    body: impl FnOnce(DataReader<T>, Arc<PongWriters<T>>, Arc<AtomicBool>) + Send + 'static,
) -> Result<std::thread::JoinHandle<()>, Failure> {
    let (reader, pongs, stop) = (
        node.ping_reader.clone(),
        Arc::clone(&node.pongs),
        Arc::clone(stop),
    );
    let (cpu, prio) = (a.cpu, a.rt_priority);
    std::thread::Builder::new()
        .name("perf-pong".into())
        .spawn(move || {
            super::pin_this_thread(cpu, prio);
            body(reader, pongs, stop)
        })
        .map_err(|e| Failure::Other(format!("cannot start the pong thread: {e}")))
}

/// Runs the pong side for `--warmup` + `--duration` seconds.
pub fn run<T: PerfSample>(a: &PerfArgs, node: &Node<T>) -> Result<(), Failure> {
    let responder = start(a, node)?;
    if !a.quiet {
        eprintln!("pong: answering pings for {} s", a.warmup + a.duration);
    }
    let end = Instant::now() + Duration::from_secs_f64(a.warmup + a.duration);
    super::sleep_until_stopped(end);
    node.ping_reader.set_listener(None, StatusMask::NONE);
    drop(responder);
    node.check_transport(a).map_err(Failure::Other)?;
    Ok(())
}
