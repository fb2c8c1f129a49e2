//! Toy sans-IO nodes shared by the simulator's tests.
#![allow(dead_code)] // each test binary uses a different subset

use std::collections::VecDeque;

use tachyon_proto::{Destination, Duration, Instant, Transmit, TxBuf};
use tachyon_sim::{udp4, Node};
use tachyon_wire::Locator;

/// The unicast locator of toy host `n`.
pub fn host(n: u8) -> Locator {
    udp4([10, 0, 0, n], 7410)
}

/// A multicast group locator.
pub fn group(n: u8) -> Locator {
    udp4([239, 255, 0, n], 7400)
}

pub fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

pub fn at_ms(n: u64) -> Instant {
    Instant::ZERO + ms(n)
}

/// Writes `seq` followed by a payload derived from it, so receivers can check the bytes.
fn write_numbered(buf: &mut TxBuf, seq: u32, len: usize) -> usize {
    let out = buf.as_mut_slice();
    let len = len.max(4).min(out.len());
    out[..4].copy_from_slice(&seq.to_be_bytes());
    for (i, b) in out[4..len].iter_mut().enumerate() {
        *b = (seq as usize + i) as u8;
    }
    len
}

/// The sequence number of a numbered datagram, if it is long enough.
pub fn seq_of(data: &[u8]) -> Option<u32> {
    Some(u32::from_be_bytes(data.get(..4)?.try_into().ok()?))
}

/// The bytes a numbered datagram of this length carries.
pub fn numbered(seq: u32, len: usize) -> Vec<u8> {
    let mut buf = TxBuf::new(len.max(4));
    let n = write_numbered(&mut buf, seq, len);
    buf.as_mut_slice()[..n].to_vec()
}

/// Sends `count` numbered datagrams of `size` bytes to `to`, one per `period` from `start`
/// (all at `start` when `period` is zero).
pub struct Pinger {
    to: Destination,
    count: u32,
    size: usize,
    period: Duration,
    next: Option<Instant>,
    sent: u32,
    due: u32,
}

impl Pinger {
    pub fn new(to: Destination, count: u32, size: usize, period: Duration) -> Pinger {
        Pinger {
            to,
            count,
            size,
            period,
            next: Some(Instant::ZERO),
            sent: 0,
            due: 0,
        }
    }

    pub fn to(locator: Locator, count: u32, size: usize, period: Duration) -> Pinger {
        Pinger::new(Destination::Unicast(locator), count, size, period)
    }

    pub fn sent(&self) -> u32 {
        self.sent
    }
}

impl Node for Pinger {
    fn handle_datagram(&mut self, _: Instant, _: &Locator, _: &Locator, _: &[u8]) {}

    fn handle_timeout(&mut self, now: Instant) {
        if self.next.map_or(true, |t| now < t) {
            return;
        }
        let left = self.count.saturating_sub(self.sent + self.due);
        if left == 0 {
            self.next = None;
        } else if self.period.is_zero() {
            self.due += left;
            self.next = None;
        } else {
            self.due += 1;
            self.next = (left > 1).then(|| now + self.period);
        }
    }

    fn poll_transmit(&mut self, _: Instant, buf: &mut TxBuf) -> Option<Transmit> {
        if self.due == 0 {
            return None;
        }
        self.due -= 1;
        let len = write_numbered(buf, self.sent, self.size);
        self.sent += 1;
        Some(Transmit {
            destination: self.to.clone(),
            len,
            priority: 0,
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.next
    }
}

/// One datagram a [`Sink`] received.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    pub time: Instant,
    pub source: Locator,
    pub destination: Locator,
    pub data: Vec<u8>,
}

/// Records everything it receives; never sends.
#[derive(Default)]
pub struct Sink {
    pub received: Vec<Received>,
}

impl Sink {
    pub fn seqs(&self) -> Vec<u32> {
        self.received
            .iter()
            .filter_map(|r| seq_of(&r.data))
            .collect()
    }

    /// How many times a datagram arrived with a lower number than the one before it.
    pub fn inversions(&self) -> usize {
        self.seqs().windows(2).filter(|w| w[1] < w[0]).count()
    }
}

impl Node for Sink {
    fn handle_datagram(
        &mut self,
        now: Instant,
        source: &Locator,
        destination: &Locator,
        data: &[u8],
    ) {
        self.received.push(Received {
            time: now,
            source: *source,
            destination: *destination,
            data: data.to_vec(),
        });
    }
    fn handle_timeout(&mut self, _: Instant) {}
    fn poll_transmit(&mut self, _: Instant, _: &mut TxBuf) -> Option<Transmit> {
        None
    }
    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}

/// A go-back-N sender: `total` numbered datagrams of `size` bytes, a window of `window`, a
/// cumulative ACK carrying the next expected number, retransmission of the window on timeout.
pub struct GbnSender {
    peer: Locator,
    total: u32,
    size: usize,
    window: u32,
    rto: Duration,
    base: u32,
    next: u32,
    queue: VecDeque<u32>,
    timer: Option<Instant>,
    pub transmissions: u64,
    pub retransmissions: u64,
    pub done_at: Option<Instant>,
}

impl GbnSender {
    pub fn new(peer: Locator, total: u32, size: usize, window: u32, rto: Duration) -> GbnSender {
        let mut s = GbnSender {
            peer,
            total,
            size,
            window,
            rto,
            base: 0,
            next: 0,
            queue: VecDeque::new(),
            timer: None,
            transmissions: 0,
            retransmissions: 0,
            done_at: None,
        };
        s.fill_window();
        s
    }

    fn fill_window(&mut self) {
        while self.next < self.total && self.next < self.base + self.window {
            self.queue.push_back(self.next);
            self.next += 1;
        }
    }
}

impl Node for GbnSender {
    fn handle_datagram(&mut self, now: Instant, _: &Locator, _: &Locator, data: &[u8]) {
        let Some(ack) = seq_of(data) else { return };
        if ack <= self.base || ack > self.next {
            return;
        }
        self.base = ack;
        if self.base == self.total {
            self.done_at = Some(now);
            self.timer = None;
        } else {
            self.timer = Some(now + self.rto);
        }
        self.fill_window();
    }

    fn handle_timeout(&mut self, now: Instant) {
        if self.timer.map_or(true, |t| now < t) {
            return;
        }
        self.queue.clear();
        self.queue.extend(self.base..self.next);
        self.retransmissions += u64::from(self.next - self.base);
        self.timer = Some(now + self.rto);
    }

    fn poll_transmit(&mut self, now: Instant, buf: &mut TxBuf) -> Option<Transmit> {
        let seq = self.queue.pop_front()?;
        self.timer.get_or_insert(now + self.rto);
        self.transmissions += 1;
        let len = write_numbered(buf, seq, self.size);
        Some(Transmit {
            destination: Destination::Unicast(self.peer),
            len,
            priority: 0,
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.timer
    }
}

/// The go-back-N receiver: accepts only the next number (checking its bytes) and ACKs every
/// datagram with the next number it expects.
#[derive(Default)]
pub struct GbnReceiver {
    pub expected: u32,
    pub corrupt: u64,
    pub discarded: u64,
    ack_to: Option<Locator>,
}

impl Node for GbnReceiver {
    fn handle_datagram(&mut self, _: Instant, source: &Locator, _: &Locator, data: &[u8]) {
        match seq_of(data) {
            Some(seq) if data != numbered(seq, data.len()) => self.corrupt += 1,
            Some(seq) if seq == self.expected => self.expected += 1,
            _ => self.discarded += 1,
        }
        self.ack_to = Some(*source);
    }

    fn handle_timeout(&mut self, _: Instant) {}

    fn poll_transmit(&mut self, _: Instant, buf: &mut TxBuf) -> Option<Transmit> {
        let to = self.ack_to.take()?;
        let len = write_numbered(buf, self.expected, 4);
        Some(Transmit {
            destination: Destination::Unicast(to),
            len,
            priority: 0,
        })
    }

    fn poll_timeout(&self) -> Option<Instant> {
        None
    }
}
