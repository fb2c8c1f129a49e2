//! The event trace of a run: what two runs with the same seed must agree on.

use std::fmt;

use tachyon_proto::Instant;

use crate::node::NodeId;

/// One thing that happened in the simulated network.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TraceEvent {
    /// Virtual time of the event.
    pub time: Instant,
    /// What happened.
    pub kind: TraceKind,
    /// The sending node (the node itself for a timeout).
    pub from: NodeId,
    /// The receiving node, when there is one.
    pub to: Option<NodeId>,
    /// Datagram length in bytes (0 for a timeout).
    pub len: usize,
    /// [`short_hash`] of the datagram bytes (0 when there are none, as for a timeout).
    pub hash: u32,
}

/// The kind of a [`TraceEvent`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TraceKind {
    /// A copy entered the link towards `to`.
    Send,
    /// A copy was handed to `to`.
    Deliver,
    /// The link made an extra copy.
    Duplicate,
    /// A copy was dropped.
    Drop(DropReason),
    /// The node's timer fired.
    Timeout,
}

/// Why a datagram was dropped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DropReason {
    /// Lost on the wire (single fragment).
    Loss,
    /// One of its IP fragments was lost.
    FragmentLoss,
    /// Larger than the link's `max_datagram`.
    Oversize,
    /// The link's queue was full.
    QueueFull,
    /// No node owns the destination locator.
    NoRoute,
}

impl fmt::Display for TraceEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.kind {
            TraceKind::Send => "send",
            TraceKind::Deliver => "deliver",
            TraceKind::Duplicate => "dup",
            TraceKind::Drop(DropReason::Loss) => "drop:loss",
            TraceKind::Drop(DropReason::FragmentLoss) => "drop:frag",
            TraceKind::Drop(DropReason::Oversize) => "drop:size",
            TraceKind::Drop(DropReason::QueueFull) => "drop:queue",
            TraceKind::Drop(DropReason::NoRoute) => "drop:route",
            TraceKind::Timeout => "timeout",
        };
        write!(f, "{} {kind:<10} {}", self.time, self.from)?;
        if let Some(to) = self.to {
            write!(f, "->{to}")?;
        }
        write!(f, " len={} #{:08x}", self.len, self.hash)
    }
}

/// FNV-1a (32-bit) of `data`: enough to tell datagrams apart in a trace.
pub fn short_hash(data: &[u8]) -> u32 {
    data.iter().fold(0x811c_9dc5_u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// A 64-bit FNV-1a digest of a whole trace, to compare long runs compactly.
pub fn trace_digest(trace: &[TraceEvent]) -> u64 {
    let mut h = 0xcbf2_9ce4_8422_2325_u64;
    let mut eat = |x: u64| {
        for b in x.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    for e in trace {
        eat(e.time.as_nanos());
        eat(match e.kind {
            TraceKind::Send => 1,
            TraceKind::Deliver => 2,
            TraceKind::Duplicate => 3,
            TraceKind::Drop(r) => 16 + r as u64,
            TraceKind::Timeout => 4,
        });
        eat(u64::from(e.from.0));
        eat(e.to.map_or(u64::MAX, |n| u64::from(n.0)));
        eat(e.len as u64);
        eat(u64::from(e.hash));
    }
    h
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_reference() {
        assert_eq!(short_hash(b""), 0x811c_9dc5);
        assert_eq!(short_hash(b"a"), 0xe40c_292c);
    }

    #[test]
    fn display_is_one_line() {
        let e = TraceEvent {
            time: Instant::from_nanos(1_000_000),
            kind: TraceKind::Drop(DropReason::Loss),
            from: NodeId(0),
            to: Some(NodeId(1)),
            len: 3,
            hash: 0xab,
        };
        assert_eq!(
            e.to_string(),
            "0.001000000s drop:loss  n0->n1 len=3 #000000ab"
        );
    }
}
