//! The builtin participant-message topic (RTPS 2.5 8.4.13): this participant asserts the
//! liveliness of its AUTOMATIC writers periodically (a third of their shortest lease) and of
//! its MANUAL_BY_PARTICIPANT writers when the application asserts it; messages received renew
//! the sender's writers at our readers (any message of a participant does, see the reader).

use tachyon_cdr::KeyHash;
use tachyon_wire::{EntityId, GuidPrefix};

use super::data::ParticipantMessage;
use super::Discovery;
use crate::endpoint::LivelinessKind;
use crate::history::{ChangeKind, Payload, Query, Sample};
use crate::time::{Duration, Instant};
use crate::writer::WriteRequest;
use crate::Participant;

/// Automatic assertions are sent this many times per shortest lease.
const ASSERTIONS_PER_LEASE: u32 = 3;

/// When the next automatic assertion is due.
#[derive(Debug, Default)]
pub(super) struct State {
    next: Option<Instant>,
    /// Assert at the next timeout (a participant was discovered).
    soon: bool,
}

impl State {
    pub(super) fn next_due(&self) -> Option<Instant> {
        if self.soon {
            return Some(Instant::ZERO);
        }
        self.next
    }

    pub(super) fn assert_automatic_soon(&mut self) {
        self.soon = true;
    }
}

/// Key hash of a participant message: participant prefix plus kind.
pub(super) fn message_key(payload: &[u8], _is_key: bool) -> Option<KeyHash> {
    let m = ParticipantMessage::from_payload(payload).ok()?;
    Some(key(&m.guid_prefix, m.kind))
}

fn key(prefix: &GuidPrefix, kind: [u8; 4]) -> KeyHash {
    let mut k = [0u8; 16];
    k[..12].copy_from_slice(&prefix.0);
    k[12..].copy_from_slice(&kind);
    KeyHash(k)
}

impl Participant {
    /// Sends a MANUAL_BY_PARTICIPANT assertion (from `assert_liveliness`).
    pub(crate) fn send_manual_assertion(&mut self, now: Instant) {
        if self.discovery.is_some() {
            self.write_participant_message(now, ParticipantMessage::MANUAL);
        }
    }

    pub(super) fn liveliness_timeout(&mut self, now: Instant, d: &mut Discovery) {
        let lease = d
            .local_publications
            .values()
            .filter(|p| p.qos.liveliness.kind == LivelinessKind::Automatic)
            .filter_map(|p| p.qos.liveliness.lease_duration)
            .min();
        let Some(lease) = lease else {
            d.liveliness.next = None;
            d.liveliness.soon = false;
            return;
        };
        let period = (lease / ASSERTIONS_PER_LEASE).max(Duration::from_millis(1));
        let due = d.liveliness.soon || d.liveliness.next.map_or(true, |t| t <= now);
        if due {
            d.liveliness.soon = false;
            d.liveliness.next = now.checked_add(period);
            let prefix = self.prefix;
            let m = ParticipantMessage {
                guid_prefix: prefix,
                kind: ParticipantMessage::AUTOMATIC,
                data: Vec::new(),
            };
            let req = WriteRequest {
                kind: ChangeKind::Alive,
                instance: key(&prefix, m.kind),
                source_timestamp: Participant::discovery_time(d, now),
                payload: Payload::from(m.to_payload()),
            };
            let _ = self.write(now, EntityId::PARTICIPANT_MESSAGE_WRITER, req);
        } else if d.liveliness.next.is_none() {
            d.liveliness.next = now.checked_add(period);
        }
    }

    fn write_participant_message(&mut self, now: Instant, kind: [u8; 4]) {
        let prefix = self.prefix;
        let t = self
            .discovery
            .as_ref()
            .map(|d| Participant::discovery_time(d, now))
            .unwrap_or_default();
        let m = ParticipantMessage {
            guid_prefix: prefix,
            kind,
            data: Vec::new(),
        };
        let req = WriteRequest {
            kind: ChangeKind::Alive,
            instance: key(&prefix, kind),
            source_timestamp: t,
            payload: Payload::from(m.to_payload()),
        };
        let _ = self.write(now, EntityId::PARTICIPANT_MESSAGE_WRITER, req);
    }

    /// Participant messages received: the datagram already renewed the sender's writers;
    /// the samples are taken so the reader's cache stays empty.
    pub(super) fn drain_liveliness(&mut self, now: Instant, _d: &mut Discovery) {
        let mut samples: Vec<Sample> = Vec::new();
        let _ = self.take(
            now,
            EntityId::PARTICIPANT_MESSAGE_READER,
            &Query::ANY,
            &mut samples,
        );
    }
}
