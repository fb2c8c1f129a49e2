//! The [`Transport`] trait: what the runtime needs of a way to move RTPS datagrams, whatever
//! carries them (kernel UDP sockets, the in-memory test network, later shared memory and
//! AF_XDP).
//!
//! # The shape
//!
//! - **Receive** through a batch the runtime lends ([`RecvBatch`], preallocated once):
//!   [`Transport::receive`] fills it from one of the transport's [`RxSource`]s without
//!   blocking, and the runtime hands each datagram to the protocol in place. Every source has
//!   a file descriptor that becomes readable when datagrams wait, so one `epoll` (mio) serves
//!   every transport of a participant, and a [`Traffic`] class that tells the executor where
//!   its work stands in the priority order. A thread that serves one source alone blocks in
//!   [`Transport::receive_wait`] instead (for UDP one `recvmmsg`, no `epoll`), and
//!   [`Transport::interrupt`] wakes it for good when the participant closes.
//! - **Transmit** through a buffer the transport lends ([`Transport::tx_buffer`], the smoltcp
//!   `TxToken` shape): the protocol writes its datagram into it in place, then
//!   [`Transport::send`] takes it back with the destinations. A transport whose frames live
//!   in special memory (an AF_XDP UMEM, a shared-memory slot) lends those, so nothing is
//!   copied on the way; a buffer lent by another transport is copied (it is plain memory).
//!   Buffers come from a bounded pool ([`TxPool`]) and go back to it when dropped: the
//!   steady state allocates nothing.
//! - **Addressing** by locator: each transport announces its [`TransportLocators`] (merged
//!   into the participant's SPDP data), says which remote locators it can reach
//!   ([`Transport::reach`]), and how much it is preferred. The participant keeps, for each
//!   matched remote endpoint, only the locators of the most preferred transport both sides
//!   have, so the choice is made per matched writer/reader pair. Locators of kinds a peer
//!   does not know are ignored by it (other vendors keep using UDPv4).
//!
//! Every method takes `&self`: one thread may receive while others send.

use std::fmt;
use std::io;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tachyon_wire::Locator;
pub use tachyon_wire::Reach;

use crate::batch::RecvBatch;
use crate::stats::TransportStats;

/// What arrives on a receive source, for the executor's priority order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Traffic {
    /// User data of critical endpoints (TRANSPORT_PRIORITY above the threshold).
    Critical,
    /// User data and its reliability traffic.
    UserData,
    /// Discovery (SPDP, SEDP) and the participant message topic.
    Discovery,
}

/// A source of received datagrams: one socket, one queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RxSource {
    /// The transport's own number for it (what [`Transport::receive`] takes); below
    /// [`MAX_SOURCES`].
    pub id: usize,
    /// Readable when datagrams wait (edge-triggered use is fine: [`RecvBatch::drained`]
    /// says when the source was emptied). `None` for a source without a descriptor (shared
    /// memory wakes its reader with a futex): only a thread of its own, blocked in
    /// [`Transport::receive_wait`], can serve it.
    pub fd: Option<RawFd>,
    /// What arrives there.
    pub traffic: Traffic,
}

/// The most receive sources one transport has.
pub const MAX_SOURCES: usize = 16;

/// The locators a transport announces in discovery, and where it sends SPDP.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TransportLocators {
    /// Metatraffic (SPDP/SEDP) unicast.
    pub metatraffic_unicast: Vec<Locator>,
    /// Metatraffic multicast.
    pub metatraffic_multicast: Vec<Locator>,
    /// User-data unicast.
    pub default_unicast: Vec<Locator>,
    /// User-data multicast.
    pub default_multicast: Vec<Locator>,
    /// Where SPDP announcements go.
    pub spdp_destinations: Vec<Locator>,
    /// Unicast locators of the critical lane (announced per critical writer and reader
    /// instead of the participant's defaults); empty without one.
    pub critical_unicast: Vec<Locator>,
}

impl TransportLocators {
    /// Adds `other`'s locators after these (a participant announces every transport's, most
    /// preferred first).
    pub fn append(&mut self, other: &TransportLocators) {
        let lists = [
            (&mut self.metatraffic_unicast, &other.metatraffic_unicast),
            (
                &mut self.metatraffic_multicast,
                &other.metatraffic_multicast,
            ),
            (&mut self.default_unicast, &other.default_unicast),
            (&mut self.default_multicast, &other.default_multicast),
            (&mut self.spdp_destinations, &other.spdp_destinations),
            (&mut self.critical_unicast, &other.critical_unicast),
        ];
        for (to, from) in lists {
            to.extend_from_slice(from);
        }
    }
}

/// A way to move RTPS datagrams: see the crate's documentation and `transport.rs`.
pub trait Transport: Send + Sync + fmt::Debug {
    /// A short name for logs and statistics (`"udp"`, `"mem"`).
    fn name(&self) -> &'static str;

    /// What the transport announces.
    fn locators(&self) -> &TransportLocators;

    /// The remote locators it can send to.
    fn reach(&self) -> Reach;

    /// Lower is preferred when a remote endpoint is reachable by several transports
    /// (in-process 0, shared memory 10, AF_XDP 20, UDP 30).
    fn preference(&self) -> u8;

    /// The largest datagram it carries.
    fn max_datagram(&self) -> usize;

    /// Its receive sources.
    fn sources(&self) -> Vec<RxSource>;

    /// Fills `batch` from source `source` without blocking; returns how many datagrams it
    /// holds (0 when none waited).
    fn receive(&self, source: usize, batch: &mut RecvBatch) -> io::Result<usize>;

    /// Like [`receive`](Self::receive), but blocks until a datagram waits on `source`: for a
    /// thread that serves this source alone (one system call per wake-up where the transport
    /// can). Returns 0 once [`interrupt`](Self::interrupt) was called.
    fn receive_wait(&self, source: usize, batch: &mut RecvBatch) -> io::Result<usize>;

    /// Whether [`receive_wait`](Self::receive_wait) itself watches its sources a moment
    /// before it blocks (shared memory's doorbell, `[shm] spin`): the runtime's receive
    /// threads then do not watch them again (`[threads.receive] spin`, [`crate::spin`]).
    fn watches_before_blocking(&self) -> bool {
        false
    }

    /// The runtime handled the batch it last received from `source` (the protocol has seen
    /// every datagram of it). The in-process transport hands datagrams over on the sending
    /// thread only when none of an earlier batch is still on its way, so they keep their
    /// order; other transports ignore it.
    fn handled(&self, _source: usize) {}

    /// How often the transport needs [`upkeep`](Self::upkeep) (`None`: never). Its receive
    /// threads then block without a timeout: the runtime's driver does the periodic work.
    fn upkeep_interval(&self) -> Option<Duration> {
        None
    }

    /// Periodic work the transport does whether or not datagrams arrive, every
    /// [`upkeep_interval`](Self::upkeep_interval) or so, on the runtime's driver (or timers)
    /// thread: shared memory notices writers that are gone, so a reader that no longer
    /// receives still deletes a killed peer's segment.
    fn upkeep(&self) {}

    /// Wakes every thread blocked in [`receive_wait`](Self::receive_wait), for good (the
    /// participant is closing); sending still works.
    fn interrupt(&self);

    /// Lends a buffer of [`max_datagram`](Self::max_datagram) bytes to write a datagram
    /// into.
    fn tx_buffer(&self) -> TxBuffer;

    /// Sends the first `len` bytes of `buf` to every destination it reaches (others are
    /// counted as skipped), tagged with TRANSPORT_PRIORITY `priority`. A full queue is a
    /// counted drop, not an error: reliability repairs.
    fn send(&self, buf: TxBuffer, len: usize, dests: &[Locator], priority: i32) -> io::Result<()>;

    /// [`send`](Self::send), except that the destinations this transport finds it cannot
    /// reach at all, though they are of its kind and in its reach (shared memory: no channel
    /// left for the reader, its table of incoming segments full, its segment not openable),
    /// are not dropped: they are put in
    /// `refused` and the buffer is given back, so that the caller sends the datagram there
    /// another way (their announced alternates). The default never refuses.
    fn send_or_refuse(
        &self,
        buf: TxBuffer,
        len: usize,
        dests: &[Locator],
        priority: i32,
        refused: &mut Vec<Locator>,
    ) -> io::Result<Option<TxBuffer>> {
        let _ = refused;
        self.send(buf, len, dests, priority).map(|()| None)
    }

    /// The kind of locator [`publish`](Self::publish) takes, for a transport that can put a
    /// datagram where its reader finds it without a system call (shared memory); `None`, the
    /// default, for one whose sending is a system call.
    fn publishes(&self) -> Option<i32> {
        None
    }

    /// Puts datagram `data` for the one reader at `dest` where that reader finds it, at once
    /// and with no system call: for a caller holding a lock no system call may be made under
    /// (a write publishing its own DATA). `false` when it cannot be done so, or not now: the
    /// datagram then goes through [`send`](Self::send). A reader that sleeps is woken by
    /// [`wake_published`](Self::wake_published), which the same thread calls once that lock
    /// is released.
    fn publish(&self, _dest: &Locator, _data: &[u8]) -> bool {
        false
    }

    /// Wakes the readers [`publish`](Self::publish) left asleep on the calling thread.
    fn wake_published(&self) {}

    /// Its counters.
    fn stats(&self) -> TransportStats;
}

/// A transmit buffer lent by a transport ([`Transport::tx_buffer`]): heap memory from a pool,
/// or a frame of special memory the transport sends in place (an AF_XDP UMEM frame). It goes
/// back to where it came from when dropped.
pub struct TxBuffer {
    bytes: Vec<u8>,
    pool: Option<Arc<PoolInner>>,
    frame: Option<LentFrame>,
}

/// A frame of a [`FrameLender`]: its id and the length lent.
struct LentFrame {
    lender: Arc<dyn FrameLender>,
    id: u64,
    len: usize,
}

/// Memory whose frames a transport lends as [`TxBuffer`]s, to send them without a copy
/// (the AF_XDP transport's UMEM). Crate-private: only a [`TxBuffer`] holding frame `id`
/// calls [`frame_mut`](Self::frame_mut) for it, which is what makes the `&mut` exclusive.
pub(crate) trait FrameLender: Send + Sync + fmt::Debug {
    /// The bytes of lent frame `id`, `len` of them.
    fn frame(&self, id: u64, len: usize) -> &[u8];
    /// The same, writable: called only by the one [`TxBuffer`] holding `id`.
    #[allow(clippy::mut_from_ref)]
    fn frame_mut(&self, id: u64, len: usize) -> &mut [u8];
    /// Frame `id` comes back unsent.
    fn release(&self, id: u64);
}

impl TxBuffer {
    /// A buffer of `len` bytes owned by no pool (tests, one-off sends).
    pub fn unpooled(len: usize) -> TxBuffer {
        TxBuffer {
            bytes: vec![0; len],
            pool: None,
            frame: None,
        }
    }

    /// Frame `id` of `lender`, `len` bytes of it lent.
    pub(crate) fn lent_frame(lender: Arc<dyn FrameLender>, id: u64, len: usize) -> TxBuffer {
        TxBuffer {
            bytes: Vec::new(),
            pool: None,
            frame: Some(LentFrame { lender, id, len }),
        }
    }

    /// Its capacity in bytes.
    pub fn capacity(&self) -> usize {
        match &self.frame {
            Some(f) => f.len,
            None => self.bytes.len(),
        }
    }

    /// Whether it is a frame lent in place (not heap memory).
    pub fn is_frame(&self) -> bool {
        self.frame.is_some()
    }

    /// The frame's id when it is one of `lender`'s, consumed without going back: the caller
    /// hands the frame on (to the kernel). Otherwise the buffer, unchanged.
    pub(crate) fn into_frame_of(mut self, lender: &dyn FrameLender) -> Result<u64, TxBuffer> {
        let ours = self.frame.as_ref().is_some_and(|f| {
            std::ptr::addr_eq(Arc::as_ptr(&f.lender), lender as *const dyn FrameLender)
        });
        if !ours {
            return Err(self);
        }
        match self.frame.take() {
            Some(f) => Ok(f.id),
            None => Err(self),
        }
    }
}

impl std::ops::Deref for TxBuffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.frame {
            Some(f) => f.lender.frame(f.id, f.len),
            None => &self.bytes,
        }
    }
}

impl std::ops::DerefMut for TxBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        match &self.frame {
            Some(f) => f.lender.frame_mut(f.id, f.len),
            None => &mut self.bytes,
        }
    }
}

impl AsMut<[u8]> for TxBuffer {
    fn as_mut(&mut self) -> &mut [u8] {
        self
    }
}

impl fmt::Debug for TxBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TxBuffer")
            .field("capacity", &self.capacity())
            .field("frame", &self.is_frame())
            .finish()
    }
}

impl Drop for TxBuffer {
    fn drop(&mut self) {
        if let Some(f) = self.frame.take() {
            f.lender.release(f.id);
        }
        if let Some(pool) = self.pool.take() {
            let bytes = std::mem::take(&mut self.bytes);
            if bytes.len() == pool.size {
                if let Some((pool, bytes)) = aside::keep(pool, bytes) {
                    pool.put(bytes);
                }
            }
        }
    }
}

/// Each thread keeps the last few transmit buffers it gave back aside, with their pool, for
/// the next it takes: a pool's lock and reference count cost six atomic read-modify-writes
/// per datagram sent, which a thread that sends and frees on its own does without.
mod aside {
    use std::cell::RefCell;
    use std::sync::Arc;

    use super::PoolInner;

    /// Most buffers a thread keeps aside (the oldest goes back to its pool for a newer).
    pub(super) const MAX: usize = 2;

    type Entry = (Arc<PoolInner>, Vec<u8>);

    thread_local! {
        static ASIDE: RefCell<Vec<Entry>> = const { RefCell::new(Vec::new()) };
    }

    /// Keeps `bytes` of `pool` aside on this thread; what cannot be kept (or is evicted)
    /// is given back to be returned to its pool.
    pub(super) fn keep(pool: Arc<PoolInner>, bytes: Vec<u8>) -> Option<Entry> {
        let mut entry = Some((pool, bytes));
        let evicted = ASIDE.try_with(|a| {
            let mut a = a.try_borrow_mut().ok()?;
            let evicted = (a.len() >= MAX).then(|| a.remove(0));
            a.extend(entry.take());
            evicted
        });
        entry.or(evicted.ok().flatten())
    }

    /// A buffer of `pool` this thread keeps aside, with the pool's reference.
    pub(super) fn take(pool: &Arc<PoolInner>) -> Option<Entry> {
        ASIDE
            .try_with(|a| {
                let mut a = a.try_borrow_mut().ok()?;
                let i = a.iter().rposition(|(p, _)| Arc::ptr_eq(p, pool))?;
                Some(a.remove(i))
            })
            .ok()
            .flatten()
    }

    /// How many buffers of `pool` this thread keeps aside.
    pub(super) fn count(pool: &Arc<PoolInner>) -> usize {
        ASIDE
            .try_with(|a| {
                a.try_borrow().map_or(0, |a| {
                    a.iter().filter(|(p, _)| Arc::ptr_eq(p, pool)).count()
                })
            })
            .unwrap_or(0)
    }
}

/// A bounded pool of heap transmit buffers of one size: what UDP and the in-memory network
/// lend. Taking and returning a buffer locks the pool for a push or a pop, never longer.
#[derive(Clone, Debug)]
pub struct TxPool(Arc<PoolInner>);

#[derive(Debug)]
struct PoolInner {
    size: usize,
    keep: usize,
    free: Mutex<Vec<Vec<u8>>>,
}

impl PoolInner {
    fn put(&self, bytes: Vec<u8>) {
        if bytes.len() != self.size {
            return;
        }
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        if free.len() < self.keep {
            free.push(bytes);
        }
    }
}

impl TxPool {
    /// A pool of buffers of `size` bytes that keeps at most `keep` free ones (more are
    /// allocated when all are lent, and freed when returned to a full pool).
    pub fn new(size: usize, keep: usize) -> TxPool {
        TxPool(Arc::new(PoolInner {
            size,
            keep,
            free: Mutex::new(Vec::new()),
        }))
    }

    /// A buffer of the pool's size.
    pub fn take(&self) -> TxBuffer {
        if let Some((pool, bytes)) = aside::take(&self.0) {
            return TxBuffer {
                bytes,
                pool: Some(pool),
                frame: None,
            };
        }
        let recycled = self.0.free.lock().unwrap_or_else(|p| p.into_inner()).pop();
        TxBuffer {
            bytes: recycled.unwrap_or_else(|| vec![0; self.0.size]),
            pool: Some(Arc::clone(&self.0)),
            frame: None,
        }
    }

    /// The size of its buffers.
    pub fn buffer_size(&self) -> usize {
        self.0.size
    }

    /// How many free buffers it holds, with those the calling thread keeps aside for it.
    pub fn free(&self) -> usize {
        self.0.free.lock().map_or(0, |f| f.len()) + aside::count(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_return_to_their_pool_and_the_pool_stays_bounded() {
        let pool = TxPool::new(64, 2);
        let lent: Vec<TxBuffer> = (0..2 + aside::MAX + 1).map(|_| pool.take()).collect();
        assert_eq!(lent[0].capacity(), 64);
        assert_eq!(pool.free(), 0);
        drop(lent);
        assert_eq!(
            pool.free(),
            2 + aside::MAX,
            "two kept by the pool, the last ones aside by this thread; the one more is freed"
        );
        let d = pool.take();
        assert_eq!(
            pool.free(),
            1 + aside::MAX,
            "a recycled buffer is lent first"
        );
        drop(d);
        assert_eq!(pool.free(), 2 + aside::MAX);
        // Another thread's buffers go back to the pool (beyond what that thread keeps).
        let other = pool.clone();
        std::thread::spawn(move || {
            let lent: Vec<TxBuffer> = (0..aside::MAX + 1).map(|_| other.take()).collect();
            drop(lent);
            // The pool's two lent again, and one more: kept aside here but one, which
            // goes back to the pool.
            assert_eq!(other.free(), 1 + aside::MAX);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn reach_matches_kind_and_address_prefix() {
        let mut l = Locator {
            kind: Locator::KIND_TACHYON_MEM,
            port: 0,
            address: [0; 16],
        };
        l.address[..8].copy_from_slice(&7u64.to_be_bytes());
        let r = Reach {
            kind: Locator::KIND_TACHYON_MEM,
            address_prefix: 7u64.to_be_bytes().to_vec(),
            multicast: false,
        };
        assert!(r.covers(&l));
        l.address[7] = 8;
        assert!(!r.covers(&l), "another network");
        let udp = Reach::kind(Locator::KIND_UDPV4);
        assert!(!udp.covers(&l));
        assert!(udp.covers(&Locator::udp("127.0.0.1:7400".parse().expect("addr"))));
        // A whole address is a prefix of itself; a longer "prefix" covers nothing.
        let whole = Reach {
            kind: Locator::KIND_TACHYON_MEM,
            address_prefix: l.address.to_vec(),
            multicast: false,
        };
        assert!(whole.covers(&l));
        let longer = Reach {
            address_prefix: [&l.address[..], &[0]].concat(),
            ..whole
        };
        assert!(!longer.covers(&l));
    }

    #[test]
    fn a_link_reach_covers_multicast_groups_only_when_it_says_so() {
        let loc = |a: &str| Locator::udp(a.parse().expect("addr"));
        let mut link = Reach {
            kind: Locator::KIND_UDPV4,
            address_prefix: [&[0u8; 12][..], &[10, 9]].concat(),
            multicast: false,
        };
        assert!(link.covers(&loc("10.9.0.2:7411")));
        assert!(!link.covers(&loc("239.255.0.1:7401")));
        link.multicast = true;
        assert!(link.covers(&loc("239.255.0.1:7401")));
        assert!(link.covers(&loc("224.0.0.1:7401")));
        assert!(!link.covers(&loc("10.8.0.2:7411")), "another subnet");
        assert!(!link.covers(&loc("240.0.0.1:7401")), "not a group");
    }
}
