//! A fault-injecting wrapper around any node, in the manner of smoltcp's `FaultInjector` device.

use std::collections::VecDeque;

use tachyon_proto::{Instant, Transmit, TxBuf};
use tachyon_wire::Locator;

use crate::node::Node;
use crate::rng::Rng;

/// Probabilities of the faults applied to datagrams in one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Faults {
    /// Probability of dropping a datagram.
    pub drop: f64,
    /// Probability of passing a datagram twice.
    pub duplicate: f64,
    /// Probability of flipping one random bit of a datagram.
    pub corrupt: f64,
    /// Probability of cutting a datagram to a random shorter length.
    pub truncate: f64,
}

/// What a [`FaultInjector`] did, per direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FaultStats {
    /// Datagrams dropped.
    pub dropped: u64,
    /// Extra copies made.
    pub duplicated: u64,
    /// Datagrams with a bit flipped.
    pub corrupted: u64,
    /// Datagrams shortened.
    pub truncated: u64,
}

/// A [`Node`] that damages the datagrams going into and out of the node it wraps, using its own
/// seeded PRNG (so it does not disturb the network's random stream).
pub struct FaultInjector<N> {
    inner: N,
    rx: Faults,
    tx: Faults,
    rng: Rng,
    rx_stats: FaultStats,
    tx_stats: FaultStats,
    scratch: Vec<u8>,
    duplicates: VecDeque<(Transmit, Vec<u8>)>,
}

impl<N: Node> FaultInjector<N> {
    /// Wraps `inner`, applying `rx` to incoming and `tx` to outgoing datagrams.
    pub fn new(inner: N, seed: u64, rx: Faults, tx: Faults) -> Self {
        FaultInjector {
            inner,
            rx,
            tx,
            rng: Rng::new(seed),
            rx_stats: FaultStats::default(),
            tx_stats: FaultStats::default(),
            scratch: Vec::new(),
            duplicates: VecDeque::new(),
        }
    }

    /// The wrapped node.
    pub fn inner(&self) -> &N {
        &self.inner
    }

    /// The wrapped node, mutably (to issue commands).
    pub fn inner_mut(&mut self) -> &mut N {
        &mut self.inner
    }

    /// Unwraps the node.
    pub fn into_inner(self) -> N {
        self.inner
    }

    /// Faults applied to incoming datagrams so far.
    pub fn rx_stats(&self) -> FaultStats {
        self.rx_stats
    }

    /// Faults applied to outgoing datagrams so far.
    pub fn tx_stats(&self) -> FaultStats {
        self.tx_stats
    }
}

/// Flips a bit and/or truncates `data` in place per `faults`; returns the new length.
fn damage(rng: &mut Rng, faults: &Faults, stats: &mut FaultStats, data: &mut [u8]) -> usize {
    let mut len = data.len();
    if len > 0 && rng.chance(faults.corrupt) {
        let bit = rng.below(len as u64 * 8);
        if let Some(byte) = data.get_mut((bit / 8) as usize) {
            *byte ^= 1 << (bit % 8);
        }
        stats.corrupted += 1;
    }
    if len > 0 && rng.chance(faults.truncate) {
        len = rng.below(len as u64) as usize;
        stats.truncated += 1;
    }
    len
}

impl<N: Node> Node for FaultInjector<N> {
    fn handle_datagram(
        &mut self,
        now: Instant,
        source: &Locator,
        destination: &Locator,
        data: &[u8],
    ) {
        if self.rng.chance(self.rx.drop) {
            self.rx_stats.dropped += 1;
            return;
        }
        let copies = if self.rng.chance(self.rx.duplicate) {
            self.rx_stats.duplicated += 1;
            2
        } else {
            1
        };
        for _ in 0..copies {
            self.scratch.clear();
            self.scratch.extend_from_slice(data);
            let len = damage(
                &mut self.rng,
                &self.rx,
                &mut self.rx_stats,
                &mut self.scratch,
            );
            let bytes = self.scratch.get(..len).unwrap_or_default();
            self.inner.handle_datagram(now, source, destination, bytes);
        }
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.inner.handle_timeout(now);
    }

    fn poll_transmit(&mut self, now: Instant, buf: &mut TxBuf) -> Option<Transmit> {
        if let Some((t, data)) = self.duplicates.pop_front() {
            let out = buf.as_mut_slice();
            let len = data.len().min(out.len());
            out[..len].copy_from_slice(&data[..len]);
            return Some(Transmit { len, ..t });
        }
        loop {
            let mut t = self.inner.poll_transmit(now, buf)?;
            if self.rng.chance(self.tx.drop) {
                self.tx_stats.dropped += 1;
                continue;
            }
            t.len = t.len.min(buf.capacity());
            let datagram = buf.as_mut_slice().get_mut(..t.len).unwrap_or_default();
            t.len = damage(&mut self.rng, &self.tx, &mut self.tx_stats, datagram);
            if self.rng.chance(self.tx.duplicate) {
                self.tx_stats.duplicated += 1;
                self.duplicates
                    .push_back((t.clone(), buf.datagram(&t).to_vec()));
            }
            return Some(t);
        }
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.inner.poll_timeout()
    }
}
