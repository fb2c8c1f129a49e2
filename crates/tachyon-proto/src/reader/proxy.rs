//! [`WriterProxy`]: what a reader remembers about one matched writer — the next sequence number
//! to deliver, samples that arrived early, what to acknowledge, and the writer's liveliness.

use std::collections::BTreeMap;

use tachyon_cdr::KeyHash;
use tachyon_wire::{Locator, SequenceNumber, Time};

use super::coherent::SetAssembly;
use super::frag_asks::FragAsks;
use crate::endpoint::{Reliability, RemoteWriter};
use crate::history::{ChangeKind, Payload, PublisherSet};
use crate::time::Instant;

/// Sequence numbers above this are refused as implausible (2^62: a writer at a billion
/// samples a second takes 146 years to get there), so arithmetic on them never overflows.
pub(crate) const MAX_SN: i64 = 1 << 62;

/// A change received from a writer, decoded and ready for the reader's cache.
#[derive(Clone, Debug)]
pub(crate) struct Received {
    pub kind: ChangeKind,
    pub instance: KeyHash,
    pub source_timestamp: Time,
    pub payload: Payload,
    /// The writer's coherent set it belongs to (PID_COHERENT_SET), if any.
    pub set: Option<SequenceNumber>,
}

/// A sequence number that arrived ahead of the next one to deliver.
#[derive(Clone, Debug)]
pub(crate) enum Pending {
    /// The change itself.
    Change(Received),
    /// The writer said it is irrelevant (GAP), or it could not be used (malformed, too large).
    Gap,
    /// A coherent set's end marker, with Tachyon's group parameter if sent.
    End(Option<(PublisherSet, Option<SequenceNumber>)>),
}

impl Pending {
    /// Payload bytes it holds.
    pub fn bytes(&self) -> usize {
        match self {
            Pending::Change(c) => c.payload.len(),
            Pending::Gap | Pending::End(_) => 0,
        }
    }
}

/// Inline QoS of the first fragment of a sample, kept until the sample is complete.
#[derive(Clone, Copy, Debug)]
pub(crate) struct FragMeta {
    pub sn: SequenceNumber,
    pub key_hash: Option<KeyHash>,
    pub status: u32,
    /// PID_COHERENT_SET of the sample.
    pub set: Option<SequenceNumber>,
}

/// The reader's state for one matched writer.
#[derive(Debug)]
pub(crate) struct WriterProxy {
    pub remote: RemoteWriter,
    /// Where ACKNACK and NACK_FRAG go.
    pub dest: Option<Locator>,
    /// Both sides reliable: samples are delivered in order, without holes, and repaired.
    pub reliable: bool,
    /// Reliable: the next sequence number to deliver. Best effort: one past the last delivered.
    pub expected: SequenceNumber,
    /// Whether `expected` is established (a best-effort reader, or a volatile reader of a
    /// transient-local writer, starts wherever the writer is when first heard).
    pub synced: bool,
    /// The highest sequence number the writer announced or sent.
    pub highest_known: SequenceNumber,
    /// Changes and gaps received ahead of `expected`, bounded by `max_out_of_order`.
    pub pending: BTreeMap<SequenceNumber, Pending>,
    /// When the next ACKNACK (and NACK_FRAGs) go out; changed only through
    /// `Reader::set_ack_at`, which keeps the reader's timer set in step.
    pub ack_at: Option<Instant>,
    /// Why the ACKNACK due at `ack_at` goes out.
    pub ack_for: AckFor,
    /// When it was matched: pre-emptive ACKNACKs repeat, less and less often, until its
    /// first HEARTBEAT.
    pub matched_at: Instant,
    pub last_heartbeat: Option<i32>,
    pub last_heartbeat_frag: Option<i32>,
    pub acknack_count: i32,
    pub nack_frag_count: i32,
    /// Inline QoS of samples being reassembled.
    pub frag_meta: Vec<FragMeta>,
    /// From HEARTBEAT_FRAG: fragments up to this one of this sample were sent.
    pub frag_hint: Option<(SequenceNumber, u32)>,
    /// The NACK_FRAGs sent to it whose repairs may still come.
    pub frag_asks: FragAsks,
    /// Liveliness as this reader sees it.
    pub alive: bool,
    pub lease_expiry: Option<Instant>,
    /// The writer's coherent set being received (readers with coherent access).
    pub sets: SetAssembly,
    /// The samples the writer hands by reference in this process (`crate::local`), found
    /// at the first such DATA: later ones skip the process-wide look-up. (Held while the
    /// writer is matched, a little past its deletion: what it holds then is only what the
    /// reader could still have asked for.)
    pub local: Option<std::sync::Arc<crate::local::LocalSamples>>,
}

impl WriterProxy {
    pub fn new(
        now: Instant,
        remote: RemoteWriter,
        reader_reliability: Reliability,
        synced: bool,
    ) -> WriterProxy {
        let lease_expiry = remote.liveliness.lease_duration.map(|d| now + d);
        WriterProxy {
            dest: remote.unicast_locators.first().copied(),
            reliable: reader_reliability == Reliability::Reliable
                && remote.reliability == Reliability::Reliable,
            remote,
            expected: SequenceNumber(1),
            synced,
            highest_known: SequenceNumber::ZERO,
            pending: BTreeMap::new(),
            ack_at: None,
            ack_for: AckFor::Preemptive,
            matched_at: now,
            last_heartbeat: None,
            last_heartbeat_frag: None,
            acknack_count: 0,
            nack_frag_count: 0,
            frag_meta: Vec::new(),
            frag_hint: None,
            frag_asks: FragAsks::default(),
            alive: true,
            lease_expiry,
            sets: SetAssembly::default(),
            local: None,
        }
    }

    /// When the next pre-emptive ACKNACK goes out after one sent at `now`, while no HEARTBEAT
    /// was heard: every second for the first 10 s after matching, then every 2 s up to a
    /// minute, every 5 s up to two, every 10 s up to five, then never (Cyclone DDS's
    /// schedule). A writer lost on the way (its DATA(w) missed, our ACKNACK arriving before
    /// it knew us) is so found within a second instead of its next periodic HEARTBEAT.
    pub fn next_preemptive_ack(&self, now: Instant) -> Option<Instant> {
        if !self.reliable || self.last_heartbeat.is_some() {
            return None;
        }
        let age = now.saturating_duration_since(self.matched_at).as_secs();
        let every = match age {
            0..10 => 1,
            10..60 => 2,
            60..120 => 5,
            120..300 => 10,
            _ => return None,
        };
        Some(now.saturating_add(crate::time::Duration::from_secs(every)))
    }

    /// Whether a change with `sn` is still wanted (not delivered, not held, within the window).
    pub fn wants(&self, sn: SequenceNumber, window: usize) -> bool {
        if sn.0 <= 0 || sn.0 > MAX_SN {
            return false;
        }
        if !self.synced {
            return true;
        }
        if sn < self.expected {
            return false;
        }
        if !self.reliable {
            return true;
        }
        let ahead = u64::try_from(sn.0 - self.expected.0).unwrap_or(u64::MAX);
        ahead < window as u64 && !self.pending.contains_key(&sn)
    }

    /// Keeps the inline QoS of a fragment of `sn` (bounded: the oldest entry goes first).
    pub fn remember_meta(&mut self, meta: FragMeta, max: usize) {
        if self.frag_meta.iter().any(|m| m.sn == meta.sn) {
            return;
        }
        if self.frag_meta.len() >= max.max(1) {
            self.frag_meta.remove(0);
        }
        self.frag_meta.push(meta);
    }

    /// Takes the inline QoS kept for `sn`.
    pub fn take_meta(&mut self, sn: SequenceNumber) -> Option<FragMeta> {
        let i = self.frag_meta.iter().position(|m| m.sn == sn)?;
        Some(self.frag_meta.swap_remove(i))
    }

    /// Drops everything kept for sequence numbers below `expected`.
    pub fn forget_delivered(&mut self) {
        let expected = self.expected;
        self.frag_meta.retain(|m| m.sn >= expected);
        if self.frag_hint.is_some_and(|(sn, _)| sn < expected) {
            self.frag_hint = None;
        }
    }
}

/// Why a writer's next ACKNACK is due.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AckFor {
    /// A HEARTBEAT asked for it, or fragments are to be asked for again: it goes out.
    Asked,
    /// The pre-emptive ACKNACK of a match, repeated until the writer's first HEARTBEAT:
    /// moot once one came.
    Preemptive,
    /// Only a hole a later sample showed (`Reader::ask_for_hole`): not sent if the hole
    /// filled meanwhile.
    Hole,
}
