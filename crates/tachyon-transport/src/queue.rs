//! A queue of datagrams in memory with a readiness descriptor: what the in-memory transports
//! ([`mem`](crate::mem), [`intra`](crate::intra)) receive from. A sender copies a datagram
//! in; the descriptor (one end of a Unix socket pair) becomes readable when the queue goes
//! from empty to not empty, so the runtime waits on it with the same `epoll` as on UDP
//! sockets. A thread that serves the queue alone blocks in a read of it instead
//! ([`Queue::wait_into`]), and then a push signals only when that thread sleeps: a queue
//! fed while its thread is busy costs no system call on either side.

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
    /// A thread takes from this queue in [`wait_into`](Self::wait_into) (it is its only
    /// reader): a push signals only when that thread sleeps, not on every push to the empty
    /// queue (an `epoll` reader needs the signal whenever the queue fills).
    blocking: AtomicBool,
    /// That thread is about to sleep, or sleeps, in its read of the signal.
    sleeping: AtomicBool,
}

#[derive(Debug, Default)]
struct Pending {
    queue: VecDeque<(Locator, Vec<u8>)>,
    /// A datagram held back, delivered after the next one.
    held: Option<(Locator, Vec<u8>)>,
    /// A sender took the waiting datagrams out to hand them over itself ([`Queue::claim`]):
    /// readers take nothing until it [releases](Queue::release) the queue.
    claimed: bool,
}

/// The datagrams waiting in a queue, in order.
pub(crate) type Waiting = VecDeque<(Locator, Vec<u8>)>;

/// What [`Queue::claim`] found.
#[derive(Debug)]
pub(crate) enum Claim {
    /// Nothing waits and nothing taken out is being handled: a datagram handed over now
    /// overtakes nothing.
    Idle,
    /// Another thread handles datagrams taken out of the queue (or one is held back): a
    /// datagram handed over now could overtake them, so it is queued behind them.
    Busy,
    /// The waiting datagrams, taken out for the caller, who hands them over in order before
    /// its own, then calls [`Queue::release`].
    Taken(Waiting),
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
            blocking: AtomicBool::new(false),
            sleeping: AtomicBool::new(false),
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
        let filled = was_empty && !p.queue.is_empty();
        drop(p);
        // After the push (under the lock): a reader that marked itself sleeping before it
        // found the queue empty is seen here, one that looks after the push finds it.
        let wake = match self.blocking.load(Ordering::SeqCst) {
            true => self.sleeping.load(Ordering::SeqCst),
            false => filled,
        };
        if wake {
            // A full signal pipe already says "ready"; nothing else can fail here.
            let _ = (&self.signal).write(&[1]);
        }
        true
    }

    /// Moves what fits into `batch`; the signal is consumed first, so a datagram pushed
    /// while the batch fills signals again.
    pub(crate) fn pop_into(&self, batch: &mut RecvBatch, counters: &Counters) -> usize {
        if !self.blocking.load(Ordering::SeqCst) {
            self.drain_signal();
        }
        batch.begin();
        let mut p = lock(&self.items);
        if p.claimed {
            // A sender hands the waiting datagrams over; it signals when it is done.
            return 0;
        }
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
        if !self.blocking.swap(true, Ordering::SeqCst) {
            // Signals written for an `epoll` reader before: not needed from now on.
            self.drain_signal();
        }
        loop {
            let n = self.pop_into(batch, counters);
            if n > 0 {
                return Ok(n);
            }
            // Say so, then look once more: a push from now on signals.
            self.sleeping.store(true, Ordering::SeqCst);
            let waiting = {
                let p = lock(&self.items);
                !p.queue.is_empty() && !p.claimed
            };
            if waiting {
                self.sleeping.store(false, Ordering::SeqCst);
                continue;
            }
            // Sleep until a signal or the end of the stream (`interrupt`); signals of pushes
            // that found this thread already awake are read here too, and cost one more
            // look at the queue.
            let mut bytes = [0u8; 64];
            let got = (&self.ready).read(&mut bytes);
            self.sleeping.store(false, Ordering::SeqCst);
            match got {
                Ok(0) => return Ok(0),
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Reads every unread signal, without blocking.
    fn drain_signal(&self) {
        let mut sink = [std::mem::MaybeUninit::new(0u8); 64];
        let ready = socket2::SockRef::from(&self.ready);
        while matches!(ready.recv_with_flags(&mut sink, libc::MSG_DONTWAIT), Ok(n) if n > 0) {}
    }

    /// The datagrams taken out last were handled.
    pub(crate) fn handled(&self) {
        self.in_flight.store(false, Ordering::SeqCst);
    }

    /// For a sender about to hand a datagram over on its own thread: whether it can, and the
    /// datagrams waiting before it when no thread handles this queue's datagrams now. Those
    /// the sender then hands over first (a receive thread that is not scheduled holds
    /// nothing up), and readers take nothing until [`release`](Self::release).
    pub(crate) fn claim(&self) -> Claim {
        let mut p = lock(&self.items);
        if p.claimed || p.held.is_some() || self.in_flight.load(Ordering::SeqCst) {
            return Claim::Busy;
        }
        if p.queue.is_empty() {
            return Claim::Idle;
        }
        p.claimed = true;
        Claim::Taken(std::mem::take(&mut p.queue))
    }

    /// Ends a [`claim`](Self::claim): `rest`, what the sender could not hand over, goes back
    /// to the front of the queue, and a reader is signalled when datagrams wait.
    pub(crate) fn release(&self, rest: Waiting) {
        let mut p = lock(&self.items);
        for item in rest.into_iter().rev() {
            p.queue.push_front(item);
        }
        p.claimed = false;
        let waiting = !p.queue.is_empty();
        drop(p);
        if waiting {
            // A reader that found the queue claimed, asleep or waiting for an edge, looks
            // again (an awake one reads this signal later, and looks once more).
            let _ = (&self.signal).write(&[1]);
        }
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

/// Locks `m`, whatever a panicking holder left (every state here stays consistent).
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn locator() -> Locator {
        Locator::udp("127.0.0.1:7400".parse().expect("address"))
    }

    #[test]
    fn a_blocked_reader_is_woken_and_a_busy_one_is_not_signalled() {
        let q = Arc::new(Queue::new().expect("queue"));
        let counters = Counters::default();
        // Not blocking yet (an epoll reader): filling the queue signals.
        assert!(q.push(locator(), b"one", 1, false, 8));
        assert!(q.readable());
        let mut batch = RecvBatch::new(4, 64);
        assert_eq!(q.wait_into(&mut batch, &counters).expect("wait"), 1);
        // Its thread now blocks to read: while it is awake, pushes write no signal.
        q.handled();
        assert!(q.push(locator(), b"two", 1, false, 8));
        assert!(!q.readable(), "no signal for a reader that is not asleep");
        assert_eq!(q.wait_into(&mut batch, &counters).expect("wait"), 1);
        // Asleep: a push wakes it.
        let reader = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || {
                let mut batch = RecvBatch::new(4, 64);
                let n = q.wait_into(&mut batch, &Counters::default()).expect("wait");
                (n, batch.iter().map(|(_, b)| b.to_vec()).collect::<Vec<_>>())
            })
        };
        while !q.sleeping.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        assert!(q.push(locator(), b"three", 1, false, 8));
        assert_eq!(reader.join().expect("reader"), (1, vec![b"three".to_vec()]));
        // Interrupting ends a wait for good.
        q.interrupt();
        assert_eq!(q.wait_into(&mut batch, &counters).expect("wait"), 0);
    }

    #[test]
    fn a_claiming_sender_takes_what_waits_and_readers_wait_for_its_release() {
        let q = Queue::new().expect("queue");
        let counters = Counters::default();
        let mut batch = RecvBatch::new(4, 64);
        let taken = |c: Claim| match c {
            Claim::Taken(w) => w.into_iter().map(|(_, d)| d).collect::<Vec<_>>(),
            other => panic!("not taken: {other:?}"),
        };
        assert!(matches!(q.claim(), Claim::Idle), "nothing waits");
        assert!(q.push(locator(), b"one", 1, false, 8));
        assert!(q.push(locator(), b"two", 1, false, 8));
        assert_eq!(taken(q.claim()), vec![b"one".to_vec(), b"two".to_vec()]);
        // Claimed: another sender queues, a reader takes nothing.
        assert!(matches!(q.claim(), Claim::Busy));
        assert!(q.push(locator(), b"three", 1, false, 8));
        assert_eq!(q.pop_into(&mut batch, &counters), 0);
        // What the sender could not hand over goes back before what came meanwhile, and the
        // reader is signalled.
        let mut rest = VecDeque::new();
        rest.push_back((locator(), b"two".to_vec()));
        q.release(rest);
        assert!(q.readable(), "signalled at release");
        assert_eq!(q.pop_into(&mut batch, &counters), 2);
        let got: Vec<_> = batch.iter().map(|(_, b)| b.to_vec()).collect();
        assert_eq!(got, vec![b"two".to_vec(), b"three".to_vec()]);
        // A batch taken out by the reader and not handled yet: nothing to claim.
        assert!(q.push(locator(), b"four", 1, false, 8));
        assert!(matches!(q.claim(), Claim::Busy), "in flight");
        q.handled();
        assert_eq!(taken(q.claim()), vec![b"four".to_vec()]);
        q.release(VecDeque::new());
        assert!(matches!(q.claim(), Claim::Idle));
    }

    #[test]
    fn a_blocked_reader_sleeps_through_a_claim_and_wakes_at_its_release() {
        let q = Arc::new(Queue::new().expect("queue"));
        assert!(q.push(locator(), b"one", 1, false, 8));
        assert!(matches!(q.claim(), Claim::Taken(_)));
        assert!(q.push(locator(), b"two", 1, false, 8));
        let reader = {
            let q = Arc::clone(&q);
            std::thread::spawn(move || {
                let mut batch = RecvBatch::new(4, 64);
                let n = q.wait_into(&mut batch, &Counters::default()).expect("wait");
                (n, batch.iter().map(|(_, b)| b.to_vec()).collect::<Vec<_>>())
            })
        };
        while !q.sleeping.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        q.release(VecDeque::new());
        assert_eq!(reader.join().expect("reader"), (1, vec![b"two".to_vec()]));
    }
}
