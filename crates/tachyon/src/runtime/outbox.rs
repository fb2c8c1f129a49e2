//! The outbox: datagrams the protocol wrote under the state lock, sent after it is released,
//! so no system call ever runs while another endpoint's thread may be waiting for the lock.
//!
//! # Why not a send in place
//!
//! A thread that flushes the protocol state writes each datagram into a buffer a transport
//! lent and keeps it in the state, still under the state lock (a push onto a vector, no
//! system call). When the lock is released ([`StateGuard`](super::StateGuard)'s drop) the
//! thread sends. Two threads may do so at once (a user thread writing while the driver
//! answers an ACKNACK); sending in the order the datagrams were written keeps DATA ahead of
//! the HEARTBEAT that announces it and a best-effort writer's samples in sequence order. So
//! each lane has one sender at a time, and a thread that finds the lane busy leaves its
//! datagrams to it in the lane's queue instead of waiting (a combining queue): no thread ever
//! blocks on another's system call.
//!
//! # The hand-over
//!
//! Still under the state lock, the releasing thread claims the lane ([`Outbox::hand_over`]).
//! Claimed with nothing queued (the usual case: one thread sends at a time), it keeps its
//! datagrams and sends them once the lock is released, without touching the queue: two
//! atomic read-modify-writes per release (the claim and giving the lane up), where going
//! through the queue cost nine per datagram. Otherwise its datagrams join the queue behind
//! the ones already there, and the lane's holder (itself, or the thread that held it) sends
//! them in order. Claiming under the state lock keeps the order: a later flush of the same
//! endpoints takes that lock after, and finds the lane held or the queue holding what was
//! before it. Giving the lane up and queueing pair like Dekker's: the holder says the lane is
//! free, then looks at the queue; a thread that queued then tries to claim the lane. One of
//! the two sees the other, so nothing is left behind.
//!
//! # Lanes
//!
//! Datagrams of critical writers (TRANSPORT_PRIORITY above `threads.critical_priority`) go
//! in their own lane, never behind a bulk writer's burst or discovery. A thread drains only
//! the lanes it queued into: a critical writer's thread never ends up sending another
//! thread's 64 KiB bulk datagrams.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use tachyon_proto::Destination;
use tachyon_transport::TxBuffer;

use super::transports::Transports;

/// A datagram waiting to be sent.
pub(crate) struct Outgoing {
    /// The lent buffer it was written into.
    pub(crate) buf: TxBuffer,
    /// Its length.
    pub(crate) len: usize,
    /// Where it goes.
    pub(crate) dest: Destination,
    /// TRANSPORT_PRIORITY of its data.
    pub(crate) priority: i32,
}

/// The lanes of one participant.
#[derive(Default)]
pub(crate) struct Outbox {
    lanes: [Lane; LANES],
}

/// A lane: its queue, how many datagrams wait in it, and whether a thread holds the lane
/// (sends from it).
#[derive(Default)]
struct Lane {
    queue: Mutex<VecDeque<Outgoing>>,
    queued: AtomicUsize,
    sending: AtomicBool,
}

/// How many lanes.
pub(crate) const LANES: usize = 2;
/// The critical lane's index (drained first).
const CRITICAL: usize = 0;
/// The other lane's index.
const OTHER: usize = 1;

/// The lane of a datagram: the critical one for critical traffic.
pub(crate) fn lane_of(critical: bool) -> usize {
    if critical {
        CRITICAL
    } else {
        OTHER
    }
}

thread_local! {
    /// Datagram lists a releasing thread keeps while it sends, reused (no allocation per
    /// sample); a stack, since a send to an in-process participant releases that one's
    /// lock inside this one's sends.
    static SPARE_LISTS: RefCell<Vec<Vec<Outgoing>>> = const { RefCell::new(Vec::new()) };
}

/// Most lists kept per thread, and most datagrams a kept list may have room for.
const SPARE_LISTS_MAX: usize = 8;
const SPARE_LIST_MAX_LEN: usize = 256;

/// The datagrams of each lane a releasing thread holds (`None`: a lane it does not hold),
/// to send once the state lock is released ([`Outbox::send_held`]).
pub(crate) type Held = [Option<Vec<Outgoing>>; LANES];

/// An empty list to take a lane's datagrams into.
fn spare_list() -> Vec<Outgoing> {
    SPARE_LISTS
        .try_with(|s| s.try_borrow_mut().ok()?.pop())
        .ok()
        .flatten()
        .unwrap_or_default()
}

/// Gives a list back for reuse (emptied).
fn give_back(mut list: Vec<Outgoing>) {
    list.clear();
    if list.capacity() == 0 || list.capacity() > SPARE_LIST_MAX_LEN {
        return;
    }
    let _ = SPARE_LISTS.try_with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            if s.len() < SPARE_LISTS_MAX {
                s.push(list);
            }
        }
    });
}

impl Outbox {
    /// Under the state lock, releasing it: hands `out` (the holder's datagrams by lane,
    /// emptied) over, lane by lane ([`hand_over`](Self::hand_over)).
    pub(crate) fn hand_over_all(&self, out: &mut [Vec<Outgoing>; LANES]) -> Held {
        let mut held = Held::default();
        for (lane, local) in out.iter_mut().enumerate() {
            if local.is_empty() {
                continue;
            }
            let mut direct = spare_list();
            if self.hand_over(lane, local, &mut direct) {
                held[lane] = Some(direct);
            } else {
                give_back(direct);
            }
        }
        held
    }

    /// Without the state lock: sends the datagrams of the lanes `held` says this thread
    /// holds, critical lane first, then what waits in them ([`send_and_drain`](Self::send_and_drain)).
    pub(crate) fn send_held(&self, held: Held, transports: &Transports) {
        for (lane, direct) in held.into_iter().enumerate() {
            if let Some(mut direct) = direct {
                self.send_and_drain(lane, &mut direct, transports);
                give_back(direct);
            }
        }
    }

    /// Under the state lock, releasing it: hands over `local`, this holder's datagrams of
    /// `lane` in the order written (emptied). Returns whether this thread now holds the
    /// lane: it then sends `direct` (which it gets `local`'s datagrams in, when the lane was
    /// free and nothing queued; `direct` comes empty) and drains the lane with
    /// [`send_and_drain`](Self::send_and_drain) once the lock is released. Otherwise the
    /// datagrams wait in the lane's queue for the thread that holds it.
    fn hand_over(
        &self,
        lane: usize,
        local: &mut Vec<Outgoing>,
        direct: &mut Vec<Outgoing>,
    ) -> bool {
        let Some(l) = self.lanes.get(lane) else {
            local.clear();
            return false;
        };
        if !l.sending.swap(true, Ordering::SeqCst) {
            if l.queued.load(Ordering::SeqCst) == 0 {
                std::mem::swap(local, direct);
            } else {
                // Behind what the last holder left: sent after it.
                l.enqueue(local);
            }
            return true;
        }
        l.enqueue(local);
        // The holder may have given the lane up before it saw them: then they are ours.
        !l.sending.swap(true, Ordering::SeqCst)
    }

    /// Without the state lock, holding `lane` ([`hand_over`](Self::hand_over) said so):
    /// sends `direct` (emptied), then what waits in the queue, and gives the lane up.
    fn send_and_drain(&self, lane: usize, direct: &mut Vec<Outgoing>, transports: &Transports) {
        self.drain_with(lane, direct, |d| {
            transports.send(d.buf, d.len, &d.dest, d.priority)
        });
    }

    /// [`send_and_drain`](Self::send_and_drain), each datagram given to `send`.
    fn drain_with(&self, lane: usize, direct: &mut Vec<Outgoing>, mut send: impl FnMut(Outgoing)) {
        let Some(l) = self.lanes.get(lane) else {
            return;
        };
        for d in direct.drain(..) {
            send(d);
        }
        loop {
            while l.queued.load(Ordering::SeqCst) > 0 {
                // One datagram per look, so none waits behind a send for the queue's lock.
                let next = lock(&l.queue).pop_front();
                let Some(d) = next else { break };
                l.queued.fetch_sub(1, Ordering::SeqCst);
                send(d);
            }
            l.sending.store(false, Ordering::SeqCst);
            // Queued after the last look but before the lane was free: its thread saw the
            // lane held. Taken back, unless that thread took the lane itself.
            if l.queued.load(Ordering::SeqCst) == 0 || l.sending.swap(true, Ordering::SeqCst) {
                return;
            }
        }
    }
}

impl Lane {
    /// Appends `local` (emptied) to the queue.
    fn enqueue(&self, local: &mut Vec<Outgoing>) {
        let n = local.len();
        lock(&self.queue).extend(local.drain(..));
        self.queued.fetch_add(n, Ordering::SeqCst);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    use tachyon_wire::Locator;

    /// A datagram that says who wrote it and in which order: thread in the priority, its
    /// sequence number in the length.
    fn datagram(thread: usize, seq: usize) -> Outgoing {
        Outgoing {
            buf: TxBuffer::unpooled(1),
            len: seq,
            dest: Destination::Unicast(Locator::INVALID),
            priority: thread as i32,
        }
    }

    /// Threads flushing and releasing at once, each under its own state lock (its own
    /// endpoints): every datagram is sent exactly once, one thread sends from a lane at a
    /// time, and each thread's datagrams leave in the order it wrote them.
    #[test]
    fn every_datagram_is_sent_once_in_its_writers_order() {
        const THREADS: usize = 4;
        const ROUNDS: usize = 20_000;
        let outbox = Arc::new(Outbox::default());
        let sent = Arc::new(Mutex::new(Vec::new()));
        let sending = Arc::new(AtomicBool::new(false));
        let start = Arc::new(std::sync::Barrier::new(THREADS));
        let handles: Vec<_> = (0..THREADS)
            .map(|t| {
                let (outbox, sent, sending) = (outbox.clone(), sent.clone(), sending.clone());
                let start = start.clone();
                std::thread::spawn(move || {
                    start.wait();
                    let mut seq = 0;
                    let mut local = Vec::new();
                    for round in 0..ROUNDS {
                        for _ in 0..1 + round % 3 {
                            local.push(datagram(t, seq));
                            seq += 1;
                        }
                        let mut direct = Vec::new();
                        if outbox.hand_over(OTHER, &mut local, &mut direct) {
                            outbox.drain_with(OTHER, &mut direct, |d| {
                                assert!(!sending.swap(true, Ordering::SeqCst), "two senders");
                                lock(&sent).push((d.priority as usize, d.len));
                                // A send takes a while: others flush meanwhile.
                                if d.len % 7 == 0 {
                                    std::thread::yield_now();
                                }
                                sending.store(false, Ordering::SeqCst);
                            });
                        }
                        assert!(local.is_empty());
                    }
                    seq
                })
            })
            .collect();
        let written: Vec<usize> = handles
            .into_iter()
            .map(|h| h.join().expect("join"))
            .collect();
        let sent = lock(&sent);
        let mut next = vec![0; THREADS];
        for &(t, seq) in sent.iter() {
            assert_eq!(seq, next[t], "thread {t}'s datagrams out of order");
            next[t] += 1;
        }
        assert_eq!(next, written, "datagrams lost");
        assert_eq!(outbox.lanes[OTHER].queued.load(Ordering::SeqCst), 0);
        assert!(!outbox.lanes[OTHER].sending.load(Ordering::SeqCst));
    }
}
