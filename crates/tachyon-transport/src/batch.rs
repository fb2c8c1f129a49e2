//! Preallocated receive batches filled by `recvmmsg`.

use crate::stats::Counters;
use crate::sys;
use std::io;
use std::net::SocketAddr;
use std::os::fd::RawFd;
use tachyon_wire::Locator;

/// The largest UDP payload over IPv4 (65535 − 20 − 8): a slot this big never truncates.
pub const MAX_UDP_PAYLOAD: usize = 65_507;

/// Buffers for up to `slots` datagrams of up to `slot_size` bytes each, allocated once and
/// reused by every [`UdpTransport::recv_batch`](crate::UdpTransport::recv_batch).
///
/// Datagrams larger than a slot are counted as truncated and never handed out, so choose
/// `slot_size` at least as large as the biggest datagram peers send (Cyclone DDS's default
/// maximum is 14720 bytes; [`MAX_UDP_PAYLOAD`] is always enough).
#[derive(Debug)]
pub struct RecvBatch {
    buf: Vec<u8>,
    slot_size: usize,
    slots: usize,
    meta: Vec<sys::RecvMeta>,
    received: Vec<Received>,
    drained: bool,
    /// How many datagrams a blocking fill asks for first: what the last one found, doubled
    /// while each fills it (see [`fill`](Self::fill)).
    burst: usize,
    /// Blocking fills in a row that asked for one datagram and got it.
    singles: u8,
}

/// A blocking fill that asks for one datagram and gets it cannot tell a ping-pong from the
/// start of a burst; every this many such fills, the next asks for two.
const PROBE_AFTER_SINGLES: u8 = 8;

#[derive(Clone, Copy, Debug)]
struct Received {
    slot: usize,
    len: usize,
    source: Locator,
}

impl RecvBatch {
    /// Allocate `slots` buffers of `slot_size` bytes.
    ///
    /// # Panics
    /// If `slots` or `slot_size` is zero (a batch that can hold nothing is a bug).
    pub fn new(slots: usize, slot_size: usize) -> Self {
        assert!(slots > 0, "RecvBatch::new: slots must be at least 1");
        assert!(
            slot_size > 0,
            "RecvBatch::new: slot_size must be at least 1"
        );
        RecvBatch {
            buf: vec![0; slots * slot_size],
            slot_size,
            slots,
            meta: vec![sys::RecvMeta::default(); slots],
            received: Vec::with_capacity(slots),
            drained: false,
            burst: 1,
            singles: 0,
        }
    }

    /// How many datagrams the last receive produced.
    pub fn len(&self) -> usize {
        self.received.len()
    }

    /// True when the last receive produced nothing.
    pub fn is_empty(&self) -> bool {
        self.received.is_empty()
    }

    /// Datagram `i` of the last receive: its source and its bytes.
    ///
    /// # Panics
    /// If `i >= self.len()`.
    pub fn datagram(&self, i: usize) -> (&Locator, &[u8]) {
        let r = &self.received[i];
        let start = r.slot * self.slot_size;
        (&r.source, &self.buf[start..start + r.len])
    }

    /// Every datagram of the last receive, in arrival order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&Locator, &[u8])> + '_ {
        (0..self.len()).map(move |i| self.datagram(i))
    }

    /// The number of slots.
    pub fn slots(&self) -> usize {
        self.slots
    }

    /// The size of each slot in bytes.
    pub fn slot_size(&self) -> usize {
        self.slot_size
    }

    /// Whether the last receive emptied the socket's queue (it asked for more than was
    /// queued). With edge-triggered readiness, the socket needs no further receive until it
    /// is reported readable again; a full batch may leave more behind.
    pub fn drained(&self) -> bool {
        self.drained
    }

    /// Forget the datagrams of the last receive.
    pub fn clear(&mut self) {
        self.received.clear();
    }

    /// Start a fill by copying (transports without `recvmmsg`): forgets the last receive.
    pub(crate) fn begin(&mut self) {
        self.received.clear();
        self.drained = false;
    }

    /// Copies one datagram into the next free slot; `false` when every slot is taken. A
    /// datagram larger than a slot is counted in `truncated` and skipped (`true`: it was
    /// consumed).
    pub(crate) fn push(&mut self, source: Locator, bytes: &[u8], counters: &Counters) -> bool {
        self.push_counting(source, bytes, counters, Counters::add)
    }

    /// [`push`](Self::push) for a caller that holds a lock every adder of `counters`'
    /// received datagrams and bytes takes (AF_XDP's RX ring lock): counted with a load and
    /// a store ([`Counters::add_locked`]), not an atomic read-modify-write.
    pub(crate) fn push_locked(
        &mut self,
        source: Locator,
        bytes: &[u8],
        counters: &Counters,
    ) -> bool {
        self.push_counting(source, bytes, counters, Counters::add_locked)
    }

    fn push_counting(
        &mut self,
        source: Locator,
        bytes: &[u8],
        counters: &Counters,
        add: fn(&std::sync::atomic::AtomicU64, u64),
    ) -> bool {
        let slot = self.received.len();
        if slot >= self.slots {
            return false;
        }
        if bytes.len() > self.slot_size {
            Counters::add(&counters.truncated, 1);
            return true;
        }
        let start = slot * self.slot_size;
        self.buf[start..start + bytes.len()].copy_from_slice(bytes);
        self.received.push(Received {
            slot,
            len: bytes.len(),
            source,
        });
        add(&counters.datagrams_received, 1);
        add(&counters.bytes_received, bytes.len() as u64);
        true
    }

    /// Like [`push`](Self::push), for a datagram of `len` bytes that `fill` copies into the
    /// slot it is given (from shared memory, where no slice may be formed); `fill` returning
    /// `false` (the bytes could not be read) records nothing. The datagram is not counted
    /// as received: the caller counts what it adds (`datagrams_received` under its own lock).
    pub(crate) fn push_with(
        &mut self,
        source: Locator,
        len: usize,
        counters: &Counters,
        fill: impl FnOnce(&mut [u8]) -> bool,
    ) -> bool {
        let slot = self.received.len();
        if slot >= self.slots {
            return false;
        }
        if len > self.slot_size {
            Counters::add(&counters.truncated, 1);
            return true;
        }
        let start = slot * self.slot_size;
        if !fill(&mut self.buf[start..start + len]) {
            return true;
        }
        self.received.push(Received { slot, len, source });
        true
    }

    /// Whether every slot is taken.
    pub(crate) fn is_full(&self) -> bool {
        self.received.len() >= self.slots
    }

    /// Records that the source was emptied by this fill.
    pub(crate) fn set_drained(&mut self) {
        self.drained = true;
    }

    /// Fill the batch from `fd` with as many `recvmmsg` calls as it takes to fill every slot or
    /// drain the socket; with `wait`, the first call blocks until a datagram arrives (or the
    /// socket is shut down: then the batch is empty). Returns the number of datagrams handed
    /// out.
    ///
    /// A blocking fill asks for as many datagrams as the last one found (doubling while each
    /// gets all it asked for) and returns after that call. A `recvmmsg` that already has a
    /// datagram tries the queue once more for the next one before it returns; in a ping-pong
    /// that look finds nothing every time, and asking for one datagram skips it (with the
    /// setup of 31 unused headers): that is one `recvfrom`. A fill that asked for one and got
    /// it stays at one, except every [`PROBE_AFTER_SINGLES`]th, which asks for two: a
    /// ping-pong makes eight of nine receives the cheap kind (it alternated before), and a
    /// burst is then received in 2, 4 … 32 datagrams per call.
    pub(crate) fn fill(&mut self, fd: RawFd, counters: &Counters, wait: bool) -> io::Result<usize> {
        self.received.clear();
        self.drained = false;
        let mut next = 0;
        while next < self.slots {
            let mut asked = (self.slots - next).min(sys::RECV_CHUNK);
            if wait {
                asked = asked.min(self.burst.max(1));
            }
            let buf = &mut self.buf[next * self.slot_size..];
            let block = wait && next == 0;
            let got = match sys::recvmmsg(fd, buf, self.slot_size, &mut self.meta[..asked], block) {
                // Shut down for reading: the kernel reports an empty message without a
                // sender (a real empty datagram has one), blocking or not. Nothing more
                // will come.
                Ok(got) if next == 0 && (got == 0 || self.meta[0].shutdown()) => {
                    self.drained = true;
                    break;
                }
                Ok(got) => got,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.drained = true;
                    break;
                }
                // Hand out what was received; a persistent error shows up on the next call.
                Err(_) if next > 0 => break,
                Err(e) => return Err(e),
            };
            for (j, m) in self.meta[..got].iter().enumerate() {
                if m.truncated {
                    Counters::add(&counters.truncated, 1);
                    tracing::debug!(
                        len = m.len,
                        slot_size = self.slot_size,
                        source = ?m.source,
                        "udp: dropped a datagram larger than the receive slot"
                    );
                    continue;
                }
                let source = m
                    .source
                    .map_or(Locator::INVALID, |s| Locator::udp(SocketAddr::V4(s)));
                self.received.push(Received {
                    slot: next + j,
                    len: m.len,
                    source,
                });
                Counters::add(&counters.datagrams_received, 1);
                Counters::add(&counters.bytes_received, m.len as u64);
            }
            next += got;
            if wait {
                // Blocking fills adapt and return after one call (see above).
                let most = self.slots.min(sys::RECV_CHUNK);
                self.burst = if got < asked {
                    got.max(1)
                } else if asked == 1 && self.singles + 1 < PROBE_AFTER_SINGLES {
                    self.singles += 1;
                    1
                } else {
                    (asked * 2).min(most)
                };
                if self.burst > 1 {
                    self.singles = 0;
                }
                self.drained = got < asked;
                break;
            }
            if got < asked {
                self.drained = true;
                break; // the socket is drained
            }
        }
        Ok(self.received.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsRawFd;

    /// A blocked receive returns, with nothing, once the socket is shut down for reading; no
    /// datagram is sent to wake it (nothing leaves the socket: no network namespace needed).
    #[test]
    fn a_blocked_receive_returns_empty_on_shutdown() {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
        let fd = s.as_raw_fd();
        let t = std::thread::spawn(move || {
            let mut b = RecvBatch::new(4, 64);
            let got = b.fill(fd, &Counters::default(), true);
            (got.map_err(|e| e.to_string()), b.drained(), b.len())
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        sys::shutdown_read(fd);
        let (got, drained, len) = t.join().expect("join");
        assert_eq!(got, Ok(0));
        assert!(drained);
        assert_eq!(len, 0);
        drop(s);
    }

    /// A ping-pong (one datagram waiting at each fill) asks for one datagram at a time,
    /// except one fill in nine that asks for two; a burst then grows the ask. Loopback only:
    /// the socket sends to itself.
    #[test]
    fn one_datagram_at_a_time_asks_for_one() {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").expect("bind");
        let me = s.local_addr().expect("address");
        let fd = s.as_raw_fd();
        let counters = Counters::default();
        let mut b = RecvBatch::new(32, 64);
        let mut asked = Vec::new();
        for i in 0..27u8 {
            s.send_to(&[i], me).expect("send");
            asked.push(b.burst);
            assert_eq!(b.fill(fd, &counters, true).expect("fill"), 1);
            assert_eq!(
                b.iter().map(|(_, d)| d.to_vec()).collect::<Vec<_>>(),
                [vec![i]]
            );
        }
        assert_eq!(asked.iter().filter(|&&a| a == 2).count(), 3, "{asked:?}");
        assert!(asked.iter().all(|&a| a <= 2), "{asked:?}");
        // A burst of 40: received in fewer fills than datagrams, the ask doubling.
        for i in 0..40u8 {
            s.send_to(&[i], me).expect("send");
        }
        let (mut got, mut fills) = (0, 0);
        while got < 40 {
            got += b.fill(fd, &counters, true).expect("fill");
            fills += 1;
        }
        assert_eq!(got, 40);
        assert!(fills < 20, "{fills} fills for 40 datagrams");
    }
}
