//! A queue of datagrams in memory with a readiness descriptor: what the in-memory transports
//! ([`mem`](crate::mem), [`intra`](crate::intra)) receive from. A sender copies a datagram
//! in; the descriptor (one end of a Unix socket pair) becomes readable when the queue goes
//! from empty to not empty, so the runtime waits on it with the same `epoll` as on UDP
//! sockets, or blocks in a read of it.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};

use tachyon_wire::Locator;

use crate::batch::RecvBatch;
use crate::stats::Counters;

/// A queue of datagrams with a readiness descriptor.
#[derive(Debug)]
pub(crate) struct Queue {
    items: Mutex<Pending>,
    /// Written (one byte) when the queue goes from empty to not empty.
    signal: UnixStream,
    /// Readable while a signal is unread: what the runtime waits on.
    ready: UnixStream,
    /// Datagrams were taken out and are not yet handled ([`handled`](Self::handled)).
    in_flight: AtomicBool,
}

#[derive(Debug, Default)]
struct Pending {
    queue: VecDeque<(Locator, Vec<u8>)>,
    /// A datagram held back, delivered after the next one.
    held: Option<(Locator, Vec<u8>)>,
}

impl Queue {
    pub(crate) fn new() -> io::Result<Queue> {
        let (signal, ready) = UnixStream::pair()?;
        signal.set_nonblocking(true)?;
        // Blocking, for `wait_into`; every other read passes MSG_DONTWAIT.
        ready.set_nonblocking(false)?;
        Ok(Queue {
            items: Mutex::new(Pending::default()),
            signal,
            ready,
            in_flight: AtomicBool::new(false),
        })
    }

    /// The descriptor that is readable while datagrams wait.
    pub(crate) fn fd(&self) -> RawFd {
        self.ready.as_raw_fd()
    }

    /// Queues `copies` copies of `data` from `source` (or holds it back, with `hold`, to
    /// come after the next one: a reordering), unless `max` datagrams wait already: then
    /// nothing is queued and `false` returned.
    pub(crate) fn push(
        &self,
        source: Locator,
        data: &[u8],
        copies: u64,
        hold: bool,
        max: usize,
    ) -> bool {
        let mut p = lock(&self.items);
        if p.queue.len() >= max {
            return false;
        }
        let was_empty = p.queue.is_empty();
        let held = p.held.take();
        if hold && held.is_none() {
            p.held = Some((source, data.to_vec()));
        } else {
            for _ in 0..copies {
                p.queue.push_back((source, data.to_vec()));
            }
        }
        if let Some(h) = held {
            p.queue.push_back(h);
        }
        if was_empty && !p.queue.is_empty() {
            // A full signal pipe already says "ready"; nothing else can fail here.
            let _ = (&self.signal).write(&[1]);
        }
        true
    }

    /// Moves what fits into `batch`; the signal is consumed first, so a datagram pushed
    /// while the batch fills signals again.
    pub(crate) fn pop_into(&self, batch: &mut RecvBatch, counters: &Counters) -> usize {
        let mut sink = [std::mem::MaybeUninit::new(0u8); 64];
        let ready = socket2::SockRef::from(&self.ready);
        while matches!(ready.recv_with_flags(&mut sink, libc::MSG_DONTWAIT), Ok(n) if n > 0) {}
        batch.begin();
        let mut p = lock(&self.items);
        // Set under the items' lock: a sender that finds the queue empty finds this set.
        self.in_flight.store(!p.queue.is_empty(), Ordering::SeqCst);
        while !batch.is_full() {
            let Some((source, bytes)) = p.queue.pop_front() else {
                batch.set_drained();
                break;
            };
            batch.push(source, &bytes, counters);
        }
        batch.len()
    }

    /// Like [`pop_into`](Self::pop_into), but sleeps until a datagram waits; 0 once
    /// [`interrupt`](Self::interrupt) was called.
    pub(crate) fn wait_into(
        &self,
        batch: &mut RecvBatch,
        counters: &Counters,
    ) -> io::Result<usize> {
        loop {
            let n = self.pop_into(batch, counters);
            if n > 0 {
                return Ok(n);
            }
            // Sleep until a signal (a push to the empty queue) or the end of the stream
            // (`interrupt`).
            let mut byte = [0u8; 1];
            match (&self.ready).read(&mut byte) {
                Ok(0) => return Ok(0),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The datagrams taken out last were handled.
    pub(crate) fn handled(&self) {
        self.in_flight.store(false, Ordering::SeqCst);
    }

    /// Whether datagrams wait in the queue or were taken out and are not handled yet: a
    /// datagram handed over past them would overtake them.
    pub(crate) fn busy(&self) -> bool {
        let p = lock(&self.items);
        !p.queue.is_empty() || p.held.is_some() || self.in_flight.load(Ordering::SeqCst)
    }

    /// Wakes the threads blocked in [`wait_into`](Self::wait_into), for good.
    pub(crate) fn interrupt(&self) {
        let _ = self.signal.shutdown(std::net::Shutdown::Write);
    }

    /// Whether a signal is unread (tests).
    #[cfg(test)]
    pub(crate) fn readable(&self) -> bool {
        let mut b = [std::mem::MaybeUninit::new(0u8)];
        let flags = libc::MSG_PEEK | libc::MSG_DONTWAIT;
        matches!(
            socket2::SockRef::from(&self.ready).recv_with_flags(&mut b, flags),
            Ok(1)
        )
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
