//! The link model: what happens to a datagram between two nodes.

use tachyon_proto::{Duration, Instant};

/// How one direction of the path between two nodes behaves (netem-like).
///
/// Delay of a datagram = serialization wait (if `bandwidth` is set) + `latency` + a uniform
/// sample of `[0, jitter]` + (with probability `reorder`) a uniform sample of `[0, reorder_delay]`.
#[derive(Clone, Debug, PartialEq)]
pub struct LinkConfig {
    /// Fixed one-way propagation delay.
    pub latency: Duration,
    /// Upper bound of the uniform extra delay added to each datagram.
    pub jitter: Duration,
    /// Probability that one IP fragment (a whole datagram when it fits the MTU) is lost.
    pub loss: f64,
    /// Probability that a datagram that got through is delivered a second time (the copy gets
    /// its own delay and bypasses the queue limit).
    pub duplicate: f64,
    /// Probability that a datagram is held back by an extra delay (so later ones overtake it).
    pub reorder: f64,
    /// Upper bound of the extra delay of a held-back datagram.
    pub reorder_delay: Duration,
    /// Largest UDP payload carried in one IP fragment (1472 models IPv4 on 1500-byte Ethernet);
    /// a larger datagram is `ceil(len / mtu)` fragments and is lost if any fragment is lost.
    /// `None`: never fragmented.
    pub mtu: Option<usize>,
    /// Datagrams longer than this are dropped at the sender (counted as `oversize`).
    pub max_datagram: Option<usize>,
    /// Link rate in payload bytes per second: datagrams are serialized one after the other.
    /// `None`: infinitely fast.
    pub bandwidth: Option<u64>,
    /// Tail-drop threshold: bytes accepted by the link and not yet delivered or lost.
    pub queue_limit: Option<usize>,
}

impl Default for LinkConfig {
    /// A perfect link with 1 ms latency.
    fn default() -> Self {
        LinkConfig::ideal(Duration::from_millis(1))
    }
}

impl LinkConfig {
    /// A link that delays every datagram by exactly `latency` and never loses one.
    pub fn ideal(latency: Duration) -> LinkConfig {
        LinkConfig {
            latency,
            jitter: Duration::ZERO,
            loss: 0.0,
            duplicate: 0.0,
            reorder: 0.0,
            reorder_delay: Duration::ZERO,
            mtu: None,
            max_datagram: None,
            bandwidth: None,
            queue_limit: None,
        }
    }

    /// Sets the one-way latency.
    pub fn latency(mut self, latency: Duration) -> Self {
        self.latency = latency;
        self
    }

    /// Sets the uniform jitter bound.
    pub fn jitter(mut self, jitter: Duration) -> Self {
        self.jitter = jitter;
        self
    }

    /// Sets the per-fragment loss probability.
    pub fn loss(mut self, p: f64) -> Self {
        self.loss = p;
        self
    }

    /// Sets the duplication probability.
    pub fn duplicate(mut self, p: f64) -> Self {
        self.duplicate = p;
        self
    }

    /// Sets the reordering probability and the bound of the extra delay.
    pub fn reorder(mut self, p: f64, extra_delay: Duration) -> Self {
        self.reorder = p;
        self.reorder_delay = extra_delay;
        self
    }

    /// Sets the fragment payload size.
    pub fn mtu(mut self, mtu: usize) -> Self {
        self.mtu = Some(mtu);
        self
    }

    /// Sets the largest datagram the link carries at all.
    pub fn max_datagram(mut self, max: usize) -> Self {
        self.max_datagram = Some(max);
        self
    }

    /// Sets the rate in bytes per second.
    pub fn bandwidth(mut self, bytes_per_sec: u64) -> Self {
        self.bandwidth = Some(bytes_per_sec);
        self
    }

    /// Sets the tail-drop threshold in bytes.
    pub fn queue_limit(mut self, bytes: usize) -> Self {
        self.queue_limit = Some(bytes);
        self
    }

    /// How many IP fragments carry a datagram of `len` bytes (at least one).
    pub fn fragments(&self, len: usize) -> usize {
        match self.mtu {
            Some(mtu) if mtu > 0 => len.div_ceil(mtu).max(1),
            _ => 1,
        }
    }

    /// Time to put `len` bytes on the wire at `bandwidth` (zero when unlimited).
    pub fn serialization_time(&self, len: usize) -> Duration {
        match self.bandwidth {
            Some(bps) if bps > 0 => {
                let nanos = (len as u128 * 1_000_000_000).div_ceil(u128::from(bps));
                Duration::from_nanos(u64::try_from(nanos).unwrap_or(u64::MAX))
            }
            _ => Duration::ZERO,
        }
    }
}

/// The mutable state of one directed link.
#[derive(Clone, Debug, Default)]
pub(crate) struct LinkState {
    /// When the transmitter finishes serializing what it has already accepted.
    pub busy_until: Instant,
    /// Bytes accepted and not yet delivered or lost (checked against `queue_limit`).
    pub in_flight_bytes: usize,
}
