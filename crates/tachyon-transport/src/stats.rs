//! Counters of a transport.

use std::sync::atomic::{AtomicU64, Ordering};

/// A snapshot of the transport's counters since it was opened.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct TransportStats {
    /// Datagrams received and handed out.
    pub datagrams_received: u64,
    /// Bytes of the datagrams handed out.
    pub bytes_received: u64,
    /// Datagrams handed to the kernel for sending (one per destination).
    pub datagrams_sent: u64,
    /// Bytes handed to the kernel for sending.
    pub bytes_sent: u64,
    /// Received datagrams larger than a batch slot, dropped.
    pub truncated: u64,
    /// Sends the kernel refused for lack of buffer space (EAGAIN/ENOBUFS), dropped.
    pub send_drops: u64,
    /// Destinations skipped because they are not usable UDPv4 locators.
    pub skipped_locators: u64,
    /// Sends that failed with another error (returned to the caller).
    pub send_errors: u64,
    /// Records of a peer rejected as malformed: out-of-range indices, lengths or offsets
    /// read from a shared-memory segment (a corrupt or hostile process), each dropped.
    pub malformed: u64,
    /// Datagrams to destinations the transport could not reach at all, given back to be
    /// sent another way (shared memory: no channel left for the reader, or its segment
    /// cannot be opened; the runtime then sends them to the locators the reader's
    /// participant announced next, UDP). One per destination.
    pub refused: u64,
}

/// The live counters (relaxed atomics: they are statistics, not synchronisation).
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub datagrams_received: AtomicU64,
    pub bytes_received: AtomicU64,
    pub datagrams_sent: AtomicU64,
    pub bytes_sent: AtomicU64,
    pub truncated: AtomicU64,
    pub send_drops: AtomicU64,
    pub skipped_locators: AtomicU64,
    pub send_errors: AtomicU64,
    pub malformed: AtomicU64,
    pub refused: AtomicU64,
}

impl Counters {
    /// Adds `n` to a counter only one thread at a time adds to (under a lock all its adders
    /// take): a load and a store, no read-modify-write. On the path of every datagram a
    /// locked read-modify-write also waits for the stores before it to reach the cache (the
    /// datagram just written to shared memory, lines the other process's core holds):
    /// shared memory's two counters per send made that way cost a busy-polling 32 B round
    /// trip 2.5 % (2026-11-28).
    pub(crate) fn add_locked(counter: &AtomicU64, n: u64) {
        counter.store(
            counter.load(Ordering::Relaxed).wrapping_add(n),
            Ordering::Relaxed,
        );
    }

    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        if n != 0 {
            counter.fetch_add(n, Ordering::Relaxed);
        }
    }

    pub(crate) fn snapshot(&self) -> TransportStats {
        let ld = |c: &AtomicU64| c.load(Ordering::Relaxed);
        TransportStats {
            datagrams_received: ld(&self.datagrams_received),
            bytes_received: ld(&self.bytes_received),
            datagrams_sent: ld(&self.datagrams_sent),
            bytes_sent: ld(&self.bytes_sent),
            truncated: ld(&self.truncated),
            send_drops: ld(&self.send_drops),
            skipped_locators: ld(&self.skipped_locators),
            send_errors: ld(&self.send_errors),
            malformed: ld(&self.malformed),
            refused: ld(&self.refused),
        }
    }
}
