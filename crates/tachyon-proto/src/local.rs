//! Samples handed by reference between a writer and readers of this process.
//!
//! When every destination of a DATA is an in-process locator (the in-process transport,
//! [`Locator::KIND_TACHYON_INTRA`](tachyon_wire::Locator::KIND_TACHYON_INTRA)) and the
//! sample is large enough for a copy to cost more than a lookup ([`BY_REFERENCE_MIN`]), the
//! writer does not put the serialized sample in the datagram: it keeps the sample's
//! [`Payload`] (a reference-counted buffer) in its `LocalSamples`, and the DATA carries
//! [`PID_TACHYON_LOCAL_SAMPLE`] and no payload. A reader of this process that receives such a
//! DATA *through the in-process transport* looks the sample up by writer and sequence number
//! and keeps the same buffer in its cache: no copy into the datagram, none out of it, and no
//! fragmentation (the DATA is small whatever the sample's size).
//!
//! The writer keeps its last [`MAX_SAMPLES`] such samples, at most [`MAX_BYTES`] of them,
//! and of those every reader it sent them to looked up, the newest [`MAX_LOOKED_UP`]. A
//! DATA whose sample is no longer kept (its datagram waited in a queue behind more) is
//! treated as not received: a reliable reader asks again and the writer repairs it (by
//! reference again, or with a GAP once its history dropped it); a best-effort reader has lost
//! it, as from a full socket buffer. The parameter from anywhere else (another process, a
//! socket) is malformed: a reference means nothing outside this process.
//!
//! Samples held as their value (`tachyon_cdr::share`) always go by reference: a writer
//! shares its samples as values while every reader it matched is in this process and reads
//! its Rust type, which each reader registers here (`ReaderType`).

use std::any::TypeId;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

use tachyon_wire::{Guid, SequenceNumber};

use crate::history::Payload;
use crate::maps::HashMap;

/// Vendor-specific inline QoS parameter of a DATA whose sample is handed by reference (its
/// value: four zero octets).
pub const PID_TACHYON_LOCAL_SAMPLE: u16 = 0x8002;

/// Serialized samples smaller than this go in the datagram (a copy of a few hundred bytes
/// costs less than the lookup's locks).
pub const BY_REFERENCE_MIN: usize = 4096;

/// Most samples a writer keeps for readers to look up.
pub const MAX_SAMPLES: usize = 256;

/// Most bytes of samples a writer keeps for readers to look up (at least one sample is kept).
pub const MAX_BYTES: usize = 16 << 20;

/// Most samples kept that every reader they went to looked up already (the oldest go
/// first): kept a little longer for a reader the writer did not count (one it has not
/// matched yet that has matched it), few enough that the payloads a writer cycles through
/// stay warm in the cache.
pub const MAX_LOOKED_UP: usize = 32;

/// Most bytes of such samples kept (at least the newest): large samples cycle through
/// fewer payloads.
pub const MAX_LOOKED_UP_BYTES: usize = 1 << 20;

/// A writer's samples handed by reference, newest last.
#[derive(Debug)]
pub(crate) struct LocalSamples {
    writer: Guid,
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    /// Sample, payload, and how many readers are still to look it up.
    samples: VecDeque<(SequenceNumber, Payload, u32)>,
    bytes: usize,
    /// Samples every reader looked up (none left to), and their bytes.
    looked: usize,
    looked_bytes: usize,
}

impl Kept {
    /// Removes sample `at`.
    fn remove(&mut self, at: usize) {
        if let Some((_, old, left)) = self.samples.remove(at) {
            self.bytes -= old.len();
            if left == 0 {
                self.looked -= 1;
                self.looked_bytes -= old.len();
            }
        }
    }
}

/// Every writer's [`LocalSamples`] in this process.
fn registry() -> &'static RwLock<HashMap<Guid, Weak<LocalSamples>>> {
    static REGISTRY: OnceLock<RwLock<HashMap<Guid, Weak<LocalSamples>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| RwLock::new(HashMap::default()))
}

impl LocalSamples {
    /// Writer `writer`'s, registered so readers of this process find its samples.
    pub(crate) fn register(writer: Guid) -> Arc<LocalSamples> {
        let me = Arc::new(LocalSamples {
            writer,
            kept: Mutex::new(Kept::default()),
        });
        if let Ok(mut r) = registry().write() {
            r.insert(writer, Arc::downgrade(&me));
        }
        me
    }

    /// Keeps `payload` as sample `sn` (again, for a repair) for `readers` readers to look
    /// up. Once they all did, it is among the first to go ([`MAX_LOOKED_UP`]), so a writer
    /// cycles through a few payloads (warm in the cache) rather than [`MAX_SAMPLES`]; one
    /// not looked up by all (a reader that ignores the DATA, a duplicate, or one whose DATA
    /// waits in a queue) stays until newer samples push it out.
    pub(crate) fn keep(&self, sn: SequenceNumber, payload: &Payload, readers: u32) {
        let Ok(mut k) = self.kept.lock() else {
            return;
        };
        // A new sample comes after every kept one; only a repair may be kept already.
        let again = k.samples.back().is_some_and(|(last, _, _)| *last >= sn);
        if let Some(at) = again
            .then(|| k.samples.iter().rposition(|(s, _, _)| *s == sn))
            .flatten()
        {
            if let Some((_, p, left)) = k.samples.get_mut(at) {
                let was_looked = *left == 0;
                *left = left.saturating_add(readers);
                if was_looked && *left > 0 {
                    let len = p.len();
                    k.looked -= 1;
                    k.looked_bytes -= len;
                }
            }
            return;
        }
        k.bytes += payload.len();
        k.samples.push_back((sn, payload.clone(), readers.max(1)));
        while k.samples.len() > MAX_SAMPLES || (k.bytes > MAX_BYTES && k.samples.len() > 1) {
            k.remove(0);
        }
        // The oldest looked up (the front, unless a sample not looked up sits there).
        while k.looked > MAX_LOOKED_UP || (k.looked > 1 && k.looked_bytes > MAX_LOOKED_UP_BYTES) {
            match k.samples.iter().position(|(_, _, left)| *left == 0) {
                Some(at) => k.remove(at),
                None => break,
            }
        }
    }

    /// Writer `writer`'s samples, while it lives.
    pub(crate) fn of(writer: &Guid) -> Option<Arc<LocalSamples>> {
        registry().read().ok()?.get(writer)?.upgrade()
    }

    /// Sample `sn`, if still kept (counted as looked up once more).
    pub(crate) fn get(&self, sn: SequenceNumber) -> Option<Payload> {
        let mut k = self.kept.lock().ok()?;
        let (_, p, left) = k.samples.iter_mut().rev().find(|(s, _, _)| *s == sn)?;
        let was = *left;
        *left = left.saturating_sub(1);
        let p = p.clone();
        if was == 1 {
            k.looked += 1;
            k.looked_bytes += p.len();
        }
        Some(p)
    }
}

/// Every reader of this process that reads a Rust type it can share samples of, by GUID.
fn reader_types() -> &'static RwLock<HashMap<Guid, TypeId>> {
    static TYPES: OnceLock<RwLock<HashMap<Guid, TypeId>>> = OnceLock::new();
    TYPES.get_or_init(|| RwLock::new(HashMap::default()))
}

/// A reader's entry in the registry of the types readers of this process read (removed
/// when dropped, with its reader).
#[derive(Debug)]
pub(crate) struct ReaderType {
    reader: Guid,
}

impl ReaderType {
    /// Reader `reader` reads Rust type `ty`.
    pub(crate) fn register(reader: Guid, ty: TypeId) -> ReaderType {
        if let Ok(mut r) = reader_types().write() {
            r.insert(reader, ty);
        }
        ReaderType { reader }
    }

    /// The Rust type reader `reader` of this process reads, if it registered one.
    pub(crate) fn of(reader: &Guid) -> Option<TypeId> {
        reader_types().read().ok()?.get(reader).copied()
    }
}

impl Drop for ReaderType {
    fn drop(&mut self) {
        if let Ok(mut r) = reader_types().write() {
            r.remove(&self.reader);
        }
    }
}

impl Drop for LocalSamples {
    fn drop(&mut self) {
        if let Ok(mut r) = registry().write() {
            // Unless a writer of the same GUID registered since (never in practice).
            if r.get(&self.writer).is_some_and(|w| w.strong_count() == 0) {
                r.remove(&self.writer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tachyon_wire::{EntityId, EntityKind, GuidPrefix};

    /// Sample `sn` of writer `writer`, if it still keeps it (as a reader looks it up).
    fn find(writer: &Guid, sn: SequenceNumber) -> Option<Payload> {
        LocalSamples::of(writer)?.get(sn)
    }

    fn guid(n: u8) -> Guid {
        Guid::new(
            GuidPrefix([n; 12]),
            EntityId::new([0, 0, 1], EntityKind::USER_WRITER_WITH_KEY),
        )
    }

    #[test]
    fn a_writer_keeps_its_newest_samples_until_it_goes() {
        let w = LocalSamples::register(guid(1));
        for n in 1..=(MAX_SAMPLES as i64 + 10) {
            w.keep(SequenceNumber(n), &Payload::from(vec![n as u8; 4]), 9);
        }
        assert!(find(&guid(1), SequenceNumber(10)).is_none(), "evicted");
        let last = SequenceNumber(MAX_SAMPLES as i64 + 10);
        assert_eq!(
            find(&guid(1), last).map(|p| p.as_bytes().to_vec()),
            Some(vec![last.0 as u8; 4])
        );
        // Kept again (a repair): found again.
        let sn = SequenceNumber(MAX_SAMPLES as i64);
        w.keep(sn, &Payload::from(vec![9; 4]), 1);
        assert!(find(&guid(1), sn).is_some());
        assert!(find(&guid(2), last).is_none(), "another writer");
        drop(w);
        assert!(find(&guid(1), last).is_none(), "gone with its writer");
    }

    #[test]
    fn samples_all_readers_looked_up_go_first() {
        let w = LocalSamples::register(guid(4));
        let p = Payload::from(vec![1; 4]);
        let kept = |w: &LocalSamples| w.kept.lock().map(|k| k.samples.len()).unwrap_or(0);
        // Each looked up by its two readers as it comes: only the newest few stay.
        for n in 1..=100 {
            w.keep(SequenceNumber(n), &p, 2);
            assert!(w.get(SequenceNumber(n)).is_some());
            assert!(w.get(SequenceNumber(n)).is_some());
        }
        // (The last one looked up goes at the next sample.)
        assert_eq!(kept(&w), MAX_LOOKED_UP + 1);
        // Looked up, still found (a reader the writer did not count) while among them.
        assert!(w.get(SequenceNumber(100)).is_some());
        assert!(w.get(SequenceNumber(100 - MAX_LOOKED_UP as i64)).is_some());
        assert!(w.get(SequenceNumber(99 - MAX_LOOKED_UP as i64)).is_none());
        // One a reader has not looked up yet stays, behind it the others come and go.
        w.keep(SequenceNumber(101), &p, 1);
        for n in 102..=200 {
            w.keep(SequenceNumber(n), &p, 1);
            assert!(w.get(SequenceNumber(n)).is_some());
        }
        assert!(w.get(SequenceNumber(101)).is_some(), "still kept");
        assert_eq!(kept(&w), MAX_LOOKED_UP + 2, "the newest looked up, and 101");
    }

    #[test]
    fn at_most_max_bytes_but_always_the_newest() {
        let w = LocalSamples::register(guid(3));
        let big = Payload::from(vec![0; MAX_BYTES / 2 + 1]);
        w.keep(SequenceNumber(1), &big, 9);
        w.keep(SequenceNumber(2), &big, 9);
        assert!(find(&guid(3), SequenceNumber(1)).is_none());
        assert!(find(&guid(3), SequenceNumber(2)).is_some());
        let huge = Payload::from(vec![0; MAX_BYTES + 1]);
        w.keep(SequenceNumber(3), &huge, 9);
        assert!(find(&guid(3), SequenceNumber(3)).is_some());
    }
}
