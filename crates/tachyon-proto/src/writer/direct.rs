//! Readers of the writer's own participant, served directly.
//!
//! A writer and a reader of one participant share its protocol state (and its lock), so a
//! new change needs no DATA to reach the reader: as the change is written, the participant
//! hands it to the reader (`Participant::write`, `Reader::handle_local`), which takes it
//! through the very steps a received DATA takes after parsing — the writer's proxy admits it
//! by sequence number, the reader's content filter, ordering, ownership, history and
//! statuses, `accept` and `deliver` — so every QoS behaves as on the network. Nothing is
//! built, parsed, queued or looked up, and the reader shares the writer's payload (a value
//! of the writer's Rust type, or its bytes).
//!
//! Such a reader is outside the fan-out (as a reader of another representation is,
//! `transcode`): DATA to the fan-out leave it out, and it hears the heartbeats addressed to
//! it — the periodic one while it lags, one after the changes handed to it asking for an
//! acknowledgement now and then (as the fan-out's piggybacked heartbeat asks), one to an
//! unsynchronized reader — through the participant's own in-process locator. A change it
//! refused (a full KEEP_ALL cache) or missed is repaired as any reader's is, and a late
//! joiner of a transient-local writer gets the history the same way.
//!
//! Writers whose DATA carry more than the change (coherent-set parameters, a sample
//! identity) and writers that batch keep sending DATA to every reader.

use tachyon_wire::{EntityId, Guid};

use super::{readers, Writer};
use crate::history::CacheChange;
use crate::time::Instant;

/// A reader served directly, as the participant finds it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct DirectReader {
    pub id: EntityId,
    /// Its slot among the participant's readers (checked against `id` before use: a slot
    /// is reused after a deletion).
    pub slot: usize,
    pub reliable: bool,
}

impl Writer {
    /// Whether this writer may hand its changes to readers directly: a user writer whose
    /// DATA carry nothing but the change, and that does not batch.
    fn may_serve_directly(&self) -> bool {
        !self.guid.entity_id.kind().is_builtin()
            && !self.config.coherent_sets
            && !self.config.sample_identity
            && self.config.batch_delay.is_none()
    }

    /// Matched reader `reader` belongs to this writer's participant, in slot `slot` of its
    /// readers: from now on it is handed every new change directly (when this writer may),
    /// outside the fan-out.
    pub(crate) fn set_reader_direct(&mut self, reader: &Guid, slot: usize) {
        if !self.may_serve_directly() {
            return;
        }
        let Some(i) = self.proxy_index(reader) else {
            return;
        };
        if self.proxies[i].direct == Some(slot) {
            return;
        }
        self.touch();
        self.proxies[i].direct = Some(slot);
        self.recount();
        self.refresh_fanout();
        if self.fanout.is_none() {
            self.fanout_emptied();
        }
    }

    /// The readers served directly.
    pub(crate) fn direct_readers(&self) -> &[DirectReader] {
        &self.direct
    }

    /// The change written last, for the readers served directly (once).
    pub(crate) fn take_direct_change(&mut self) -> Option<CacheChange> {
        self.direct_out.take()
    }

    /// The participant handed a change to the readers served directly: the reliable ones are
    /// asked to acknowledge now and then (a heartbeat of their own), as the fan-out's
    /// piggybacked heartbeat asks its readers. Whether it now has such a heartbeat to send.
    pub(crate) fn served_directly(&mut self, now: Instant) -> bool {
        self.stats.changes_direct += self.direct.len() as u64;
        if !self.direct.iter().any(|d| d.reliable)
            || !self.ack_wanted_since(self.direct_ack_requested_at, now)
        {
            return false;
        }
        self.direct_ack_requested_at = Some(now);
        self.touch();
        let attention = &mut self.attention;
        for (i, p) in self.proxies.iter_mut().enumerate() {
            if p.served_directly() && p.is_reliable() {
                p.needs_heartbeat = true;
                readers::flag(attention, p, i);
            }
        }
        true
    }
}
