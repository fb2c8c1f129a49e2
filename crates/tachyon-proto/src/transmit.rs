//! What a state machine hands out to be sent: a [`Transmit`] describing where, with the bytes
//! written into a caller-owned [`TxBuf`] so no datagram is allocated per send.

use std::sync::Arc;

use tachyon_wire::Locator;

/// Where a datagram goes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Destination {
    /// One unicast locator.
    Unicast(Locator),
    /// A multicast group locator (one send reaches every member).
    Multicast(Locator),
    /// The same datagram to each of these locators (readers without a shared multicast group).
    /// Shared: a writer hands the same list with every datagram (a clone is a reference
    /// count, not an allocation).
    Many(Arc<[Locator]>),
}

/// One datagram to send: its destination and its length in the [`TxBuf`] it was written into.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transmit {
    /// Where it goes.
    pub destination: Destination,
    /// Its length: the first `len` bytes of the `TxBuf`.
    pub len: usize,
    /// TRANSPORT_PRIORITY of the data, for the transport to map onto DSCP/VLAN PCP.
    pub priority: i32,
}

/// A reusable transmit buffer with a fixed capacity (the largest datagram allowed).
#[derive(Clone, Debug)]
pub struct TxBuf {
    buf: Vec<u8>,
}

impl TxBuf {
    /// A buffer for datagrams of at most `max_datagram` bytes (allocated once).
    pub fn new(max_datagram: usize) -> TxBuf {
        TxBuf {
            buf: vec![0; max_datagram],
        }
    }

    /// The largest datagram this buffer holds.
    pub fn capacity(&self) -> usize {
        self.buf.len()
    }

    /// The whole buffer, to write a datagram into.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        &mut self.buf
    }

    /// The first `len` bytes: the datagram described by a [`Transmit`].
    pub fn datagram(&self, t: &Transmit) -> &[u8] {
        &self.buf[..t.len.min(self.buf.len())]
    }
}
