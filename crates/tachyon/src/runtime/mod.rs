//! The runtime: one per participant. It owns the protocol state ([`Participant`]), the UDP
//! transport and the clock, and a driver thread that waits on the sockets and the next timer.
//!
//! User calls (`write`, `take`) lock the state briefly and send what became due straight from
//! the calling thread, so a write reaches the socket without a thread hop; the driver thread
//! handles what arrives and what a timer makes due. Shutdown is explicit: a mio waker, never
//! a datagram to oneself.

mod driver;
mod status;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration as StdDuration;

use tachyon_proto::{Instant, Participant, TxBuf};
use tachyon_transport::UdpTransport;

pub(crate) use status::Statuses;

use crate::error::Error;

/// Largest datagram the runtime builds and receives.
pub(crate) const MAX_DATAGRAM: usize = tachyon_proto::DEFAULT_MAX_DATAGRAM;

/// What the user threads and the driver thread share.
pub(crate) struct Shared {
    state: Mutex<State>,
    /// Signalled whenever events were processed (data, matches, acknowledgements).
    pub(crate) changed: Condvar,
    pub(crate) transport: UdpTransport,
    epoch: std::time::Instant,
    waker: mio::Waker,
    stop: AtomicBool,
}

/// The protocol state and what goes with it, behind one lock.
pub(crate) struct State {
    pub(crate) participant: Participant,
    txbuf: TxBuf,
    pub(crate) statuses: Statuses,
}

/// The handle the DCPS entities hold.
pub(crate) struct Runtime {
    pub(crate) shared: Arc<Shared>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Runtime {
    /// Starts the driver thread for `participant` on `transport`.
    pub(crate) fn start(
        participant: Participant,
        transport: UdpTransport,
        epoch: std::time::Instant,
    ) -> Result<Runtime, Error> {
        let poll = mio::Poll::new().map_err(Error::Thread)?;
        let waker = mio::Waker::new(poll.registry(), driver::WAKE).map_err(Error::Thread)?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                participant,
                txbuf: TxBuf::new(MAX_DATAGRAM),
                statuses: Statuses::default(),
            }),
            changed: Condvar::new(),
            transport,
            epoch,
            waker,
            stop: AtomicBool::new(false),
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("tachyon-driver".into())
            .spawn(move || driver::run(&s, poll))
            .map_err(Error::Thread)?;
        Ok(Runtime {
            shared,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// Stops the driver thread after announcing the participant's deletion.
    pub(crate) fn shutdown(&self) {
        if self.shared.stop.swap(true, Ordering::SeqCst) {
            return;
        }
        {
            let mut st = self.shared.lock();
            let now = self.shared.now();
            st.participant.shutdown(now);
            st.flush(&self.shared, now);
        }
        let _ = self.shared.waker.wake();
        let handle = self.thread.lock().ok().and_then(|mut t| t.take());
        if let Some(h) = handle {
            let _ = h.join();
        }
        self.shared.changed.notify_all();
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown();
    }
}

impl Shared {
    /// The protocol's clock: time since the runtime started.
    pub(crate) fn now(&self) -> Instant {
        let n = self.epoch.elapsed().as_nanos();
        Instant::from_nanos(u64::try_from(n).unwrap_or(u64::MAX))
    }

    /// Locks the state (a panic while holding it cannot leave it inconsistent for us: the
    /// protocol state is plain data, so a poisoned lock is taken over).
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits on `changed` for at most `timeout`.
    pub(crate) fn wait<'a>(
        &self,
        guard: MutexGuard<'a, State>,
        timeout: StdDuration,
    ) -> MutexGuard<'a, State> {
        match self.changed.wait_timeout(guard, timeout) {
            Ok((g, _)) => g,
            Err(p) => p.into_inner().0,
        }
    }

    /// Whether the runtime was shut down.
    pub(crate) fn stopped(&self) -> bool {
        self.stop.load(Ordering::SeqCst)
    }

    /// Tells the driver thread to recompute its timeout (a user call armed a timer).
    pub(crate) fn wake(&self) {
        let _ = self.waker.wake();
    }
}

impl State {
    /// Sends everything the protocol has due and processes its events.
    pub(crate) fn flush(&mut self, shared: &Shared, now: Instant) {
        while let Some(t) = self.participant.poll_transmit(now, &mut self.txbuf) {
            let bytes = self.txbuf.datagram(&t);
            let r = match &t.destination {
                tachyon_proto::Destination::Unicast(l)
                | tachyon_proto::Destination::Multicast(l) => {
                    shared.transport.send_to(l, bytes, t.priority)
                }
                tachyon_proto::Destination::Many(ls) => {
                    shared.transport.send_to_many(ls, bytes, t.priority)
                }
            };
            if let Err(e) = r {
                tracing::debug!(error = %e, "send failed");
            }
        }
        let mut any = false;
        while let Some(e) = self.participant.poll_event() {
            self.statuses.apply(&e);
            any = true;
        }
        if any {
            shared.changed.notify_all();
        }
    }
}
