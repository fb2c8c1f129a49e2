//! Counters of what the network did, kept globally, per node and per directed link.

/// What happened to datagrams. Send-side fields count copies a node sent (one per receiving
/// node), `delivered` and `bytes_delivered` count copies handed to a node.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Counters {
    /// `Transmit`s polled from nodes (one multicast send counts once).
    pub transmits: u64,
    /// Copies entering a link, one per receiving node.
    pub sent: u64,
    /// Payload bytes of `sent`.
    pub bytes_sent: u64,
    /// Copies handed to a node's `handle_datagram`.
    pub delivered: u64,
    /// Payload bytes of `delivered`.
    pub bytes_delivered: u64,
    /// Single-fragment datagrams lost on the wire.
    pub lost: u64,
    /// Multi-fragment datagrams lost because at least one fragment was lost.
    pub lost_fragment: u64,
    /// Datagrams above the link's `max_datagram`, dropped at the sender.
    pub oversize: u64,
    /// Datagrams tail-dropped because the link's queue was full.
    pub queue_full: u64,
    /// Transmits to a locator no node owns (counted once per unknown locator).
    pub no_route: u64,
    /// Extra copies created by link duplication.
    pub duplicated: u64,
    /// Datagrams held back by the reordering delay.
    pub reordered: u64,
    /// `handle_timeout` calls.
    pub timeouts: u64,
}

impl Counters {
    /// All datagrams the network dropped, whatever the reason.
    pub fn dropped(&self) -> u64 {
        self.lost + self.lost_fragment + self.oversize + self.queue_full + self.no_route
    }
}
