//! The outbox: datagrams the protocol wrote under the state lock, sent after it is released,
//! so no system call ever runs while another endpoint's thread may be waiting for the lock.
//!
//! # Why a queue and not a send in place
//!
//! A thread that flushes the protocol state writes each datagram into a buffer a transport
//! lent and queues it here, still under the state lock (a push, no system call). When the
//! lock is released ([`StateGuard`](super::StateGuard)'s drop) the thread sends. Two threads
//! may do so at once (a user thread writing while the driver answers an ACKNACK); sending in
//! the order the datagrams were written keeps DATA ahead of the HEARTBEAT that announces it
//! and a best-effort writer's samples in sequence order. So each lane has one sender at a
//! time, and a thread that finds the lane busy leaves its datagrams to it instead of waiting
//! (a combining queue): no thread ever blocks on another's system call.
//!
//! # Lanes
//!
//! Datagrams of critical writers (TRANSPORT_PRIORITY above `threads.critical_priority`) go
//! in their own lane, never behind a bulk writer's burst or discovery. A thread drains only
//! the lanes it queued into: a critical writer's thread never ends up sending another
//! thread's 64 KiB bulk datagrams.

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
    lanes: [Lane; 2],
    /// Datagrams queued in every lane, so a guard without any skips the drain.
    queued: AtomicUsize,
}

/// A lane: its queue and whether a thread is sending from it.
#[derive(Default)]
struct Lane {
    queue: Mutex<VecDeque<Outgoing>>,
    sending: AtomicBool,
}

/// The critical lane's index.
const CRITICAL: usize = 0;
/// The other lane's index.
const OTHER: usize = 1;

impl Outbox {
    /// Queues `d` (under the state lock): in the critical lane when `critical`. Returns the
    /// lane's bit, for [`drain`](Self::drain).
    pub(crate) fn push(&self, d: Outgoing, critical: bool) -> u8 {
        let i = if critical { CRITICAL } else { OTHER };
        lock(&self.lanes[i].queue).push_back(d);
        self.queued.fetch_add(1, Ordering::SeqCst);
        1 << i
    }

    /// Whether datagrams wait.
    pub(crate) fn has_queued(&self) -> bool {
        self.queued.load(Ordering::SeqCst) > 0
    }

    /// Sends what waits in the lanes of `lanes` (bits from [`push`](Self::push)), critical
    /// lane first, unless another thread is sending from a lane already (it sends what was
    /// queued here too). Call without holding the state lock.
    pub(crate) fn drain(&self, lanes: u8, transports: &Transports) {
        let mine = self
            .lanes
            .iter()
            .enumerate()
            .filter(|(i, _)| lanes & (1 << i) != 0);
        for (_, lane) in mine {
            if lane.sending.swap(true, Ordering::AcqRel) {
                // Its sender sends what we queued: it pushed before its last look.
                continue;
            }
            loop {
                // The lane is given up in the look that finds the queue empty, under the
                // queue's lock: a datagram queued after it finds the lane free and is sent
                // by its own thread; one queued before it is in this look. (One lock per
                // datagram, not three: each is an atomic read-modify-write or two.)
                let next = {
                    let mut queue = lock(&lane.queue);
                    let next = queue.pop_front();
                    if next.is_none() {
                        lane.sending.store(false, Ordering::Release);
                    }
                    next
                };
                let Some(d) = next else { break };
                self.queued.fetch_sub(1, Ordering::SeqCst);
                transports.send(d.buf, d.len, &d.dest, d.priority);
            }
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
