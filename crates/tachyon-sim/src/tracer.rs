//! A recording wrapper around any node: every datagram in and out, with its bytes.

use tachyon_proto::{Destination, Instant, Transmit, TxBuf};
use tachyon_wire::Locator;

use crate::node::Node;

/// One datagram seen by a [`Tracer`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Record {
    /// Handed to the wrapped node.
    In {
        /// When it arrived.
        time: Instant,
        /// The sender's locator.
        source: Locator,
        /// The locator it arrived on.
        destination: Locator,
        /// Its bytes.
        data: Vec<u8>,
    },
    /// Sent by the wrapped node.
    Out {
        /// When it was polled.
        time: Instant,
        /// Where it was sent.
        destination: Destination,
        /// Its bytes.
        data: Vec<u8>,
    },
}

/// A [`Node`] that passes everything through to the node it wraps and records every datagram.
pub struct Tracer<N> {
    inner: N,
    records: Vec<Record>,
}

impl<N: Node> Tracer<N> {
    /// Wraps `inner` with an empty record.
    pub fn new(inner: N) -> Self {
        Tracer {
            inner,
            records: Vec::new(),
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

    /// Everything recorded so far, in order.
    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// Takes the records, leaving the list empty.
    pub fn take_records(&mut self) -> Vec<Record> {
        std::mem::take(&mut self.records)
    }
}

impl<N: Node> Node for Tracer<N> {
    fn handle_datagram(
        &mut self,
        now: Instant,
        source: &Locator,
        destination: &Locator,
        data: &[u8],
    ) {
        self.records.push(Record::In {
            time: now,
            source: *source,
            destination: *destination,
            data: data.to_vec(),
        });
        self.inner.handle_datagram(now, source, destination, data);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.inner.handle_timeout(now);
    }

    fn poll_transmit(&mut self, now: Instant, buf: &mut TxBuf) -> Option<Transmit> {
        let t = self.inner.poll_transmit(now, buf)?;
        self.records.push(Record::Out {
            time: now,
            destination: t.destination.clone(),
            data: buf.datagram(&t).to_vec(),
        });
        Some(t)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.inner.poll_timeout()
    }
}
