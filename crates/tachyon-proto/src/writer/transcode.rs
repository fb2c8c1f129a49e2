//! Samples in another representation for the readers that need it: a matched reader that reads
//! only XCDR1 and announces no DATA_REPRESENTATION (Fast DDS up to 2.x,
//! [`crate::qos::compat::Unannounced`]) gets a writer's XCDR2 samples converted. Such readers
//! are left out of the writer's fan-out and served through its directed path (the one repairs
//! take), each sample converted once per reader and kept until the next.

use std::sync::Arc;

use tachyon_wire::SequenceNumber;

use super::Writer;
use crate::history::{CacheChange, ChangeKind, Payload};
use crate::qos::DataRepresentation;
use crate::time::Instant;

/// Converts a serialized sample (encapsulation header included) into `to` for matched reader
/// `reader`, or `None` when it does not decode. Given by the typed API, which knows the type
/// ([`crate::Participant::set_writer_transcoder`]); discovery's SEDP writers have one that
/// depends on the reader (`discovery/older_types.rs`).
pub type Transcoder =
    Arc<dyn Fn(&[u8], DataRepresentation, &tachyon_wire::Guid) -> Option<Vec<u8>> + Send + Sync>;

/// A [`Transcoder`] held by a writer (prints as its name only).
#[derive(Clone)]
pub(crate) struct TranscodeHook(pub(crate) Transcoder);

impl std::fmt::Debug for TranscodeHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Transcoder")
    }
}

impl Writer {
    /// Sets (or removes) how this writer converts samples for readers of another
    /// representation.
    pub(crate) fn set_transcoder(&mut self, transcoder: Option<Transcoder>) {
        self.touch();
        self.transcoder = transcoder.map(TranscodeHook);
    }

    /// Matched reader `reader` reads `to` instead of what this writer writes (`None`: what
    /// the writer writes). Such a reader leaves the fan-out: every change is queued for it
    /// alone, converted.
    pub(crate) fn set_reader_representation(
        &mut self,
        now: Instant,
        reader: &tachyon_wire::Guid,
        to: Option<DataRepresentation>,
    ) {
        self.touch();
        let (last, next_new) = (self.history.last_sn(), self.next_new);
        let Some(i) = self.proxy_index(reader) else {
            return;
        };
        let p = &mut self.proxies[i];
        if p.transcode == to {
            return;
        }
        p.transcode = to;
        p.transcoded = None;
        let no_locator = p.dest.is_none();
        if to.is_some() {
            // What the fan-out has not sent yet will not reach this reader through it.
            let from = next_new.max(p.first_relevant);
            let mut sn = from;
            while sn <= last {
                p.requested.insert(sn);
                sn = SequenceNumber(sn.0 + 1);
            }
            if from <= last {
                p.repair_at = Some(now);
            }
            if self.transcoder.is_none() {
                tracing::warn!(writer = %self.guid, %reader, representation = ?to,
                    "a matched reader reads another representation and this writer cannot \
                     convert its samples: it gets GAPs instead of data");
            }
            if no_locator {
                tracing::warn!(writer = %self.guid, %reader, representation = ?to,
                    "a matched reader reads another representation and announced no unicast \
                     locator to send it converted samples to: it gets nothing");
            }
        }
        self.flag_proxy(i);
        self.recount();
        self.refresh_fanout();
        if self.fanout.is_none() {
            self.fanout_emptied();
        }
        self.release();
    }

    /// `change` as proxy `i` gets it: unchanged for a reader of the writer's representation;
    /// for another reader, data converted (`None` when it cannot be: the reader gets a GAP)
    /// and a dispose or unregister with the key hash alone (an XCDR1-only Fast DDS reader
    /// reads a serialized key through its type's full deserializer and fails on it).
    pub(crate) fn for_reader(&mut self, i: usize, mut change: CacheChange) -> Option<CacheChange> {
        let p = self.proxies.get_mut(i)?;
        let Some(to) = p.transcode else {
            return Some(change);
        };
        if change.kind != ChangeKind::Alive {
            change.payload = Payload::default();
            return Some(change);
        }
        if change.payload.is_empty() {
            // A coherent set's end marker: nothing to convert.
            return Some(change);
        }
        if let Some((sn, payload)) = &p.transcoded {
            if *sn == change.sn {
                change.payload = payload.clone();
                return Some(change);
            }
        }
        let converted = self
            .transcoder
            .as_ref()
            .and_then(|t| (t.0)(change.payload.as_bytes(), to, &p.remote.guid));
        let Some(bytes) = converted else {
            self.stats.transcode_failures += 1;
            return None;
        };
        let payload = Payload::from(bytes);
        self.stats.transcoded += 1;
        let p = self.proxies.get_mut(i)?;
        p.transcoded = Some((change.sn, payload.clone()));
        change.payload = payload;
        Some(change)
    }
}
