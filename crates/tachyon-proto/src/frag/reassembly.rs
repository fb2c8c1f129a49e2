//! Reassembly of DATA_FRAG fragments into whole samples, within resource limits.

use std::collections::BTreeMap;

use tachyon_wire::{FragmentNumber, FragmentNumberSet, Guid, SequenceNumber};

use crate::history::{Payload, PayloadPool};
use crate::time::{Duration, Instant};

/// Storage grows in chunks of this many bytes, allocated when a fragment lands in them.
const CHUNK: usize = 64 * 1024;

/// Whole chunks kept for the next samples once theirs completed (1 MiB): a stream of large
/// samples then allocates nothing per sample. (Allocating and freeing 64 KiB blocks per
/// sample made glibc's heap grow by gigabytes in a 5 Gbit/s stream, `docs/runtime.md`.)
const SPARE_CHUNKS: usize = 16;

/// Bounds on what reassembly may hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReassemblyLimits {
    /// Largest sample accepted; bigger announcements are rejected outright.
    pub max_sample_size: u32,
    /// Bytes all partial samples together may hold: fragment storage plus their bookkeeping
    /// (a bitmap bit per fragment and a table entry per 64 KiB of the announced size).
    pub max_total_bytes: usize,
    /// Partial samples held at once.
    pub max_in_progress: usize,
}

impl Default for ReassemblyLimits {
    fn default() -> Self {
        ReassemblyLimits {
            max_sample_size: 256 * 1024 * 1024,
            max_total_bytes: 64 * 1024 * 1024,
            max_in_progress: 64,
        }
    }
}

/// One DATA_FRAG's fragment fields.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FragmentInfo {
    /// Number of the first fragment carried (1-based).
    pub starting_num: u32,
    /// Fragments carried.
    pub count: u16,
    /// Size of every fragment but the last.
    pub fragment_size: u16,
    /// Size of the whole sample.
    pub sample_size: u32,
}

/// Why a fragment was not taken.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReassemblyError {
    /// fragmentSize, sampleSize or fragmentStartingNum is zero, or the fragments run past the
    /// sample's end.
    Malformed {
        /// What is wrong.
        reason: &'static str,
    },
    /// Fewer bytes than the fragments announced.
    Truncated {
        /// Bytes the fragments need.
        needed: usize,
        /// Bytes present.
        available: usize,
    },
    /// Sample or fragment size differs from earlier fragments of the same sample.
    Inconsistent,
    /// The announced sample exceeds [`ReassemblyLimits::max_sample_size`].
    SampleTooLarge {
        /// Announced size.
        size: u32,
        /// The limit.
        limit: u32,
    },
    /// [`ReassemblyLimits::max_in_progress`] partial samples are already held.
    TooManyInProgress,
    /// Storing the fragment would exceed [`ReassemblyLimits::max_total_bytes`].
    OutOfBudget,
}

impl core::fmt::Display for ReassemblyError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            ReassemblyError::Malformed { reason } => write!(f, "malformed DATA_FRAG: {reason}"),
            ReassemblyError::Truncated { needed, available } => write!(
                f,
                "DATA_FRAG carries {available} bytes, its fragments need {needed}"
            ),
            ReassemblyError::Inconsistent => {
                f.write_str("fragment or sample size differs from earlier fragments")
            }
            ReassemblyError::SampleTooLarge { size, limit } => {
                write!(f, "sample of {size} bytes exceeds the limit of {limit}")
            }
            ReassemblyError::TooManyInProgress => {
                f.write_str("too many samples are being reassembled")
            }
            ReassemblyError::OutOfBudget => f.write_str("reassembly byte budget exhausted"),
        }
    }
}

impl std::error::Error for ReassemblyError {}

/// What happened to a fragment.
#[derive(Debug, PartialEq, Eq)]
pub enum ReassemblyOutcome {
    /// Stored; the sample is not complete yet.
    Incomplete,
    /// Every fragment was already there (a duplicate).
    Duplicate,
    /// The sample is complete: here it is (in a buffer of the reassembler's pool, which it
    /// goes back to when the last clone is dropped), and its storage is released.
    Complete(Payload),
}

/// Counters for diagnostics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReassemblyStats {
    /// Samples completed.
    pub completed: u64,
    /// Fragments rejected (any [`ReassemblyError`]).
    pub rejected: u64,
    /// Partial samples dropped (by `discard_*` or `expire`).
    pub abandoned: u64,
}

#[derive(Debug)]
struct Partial {
    info: FragmentInfo,
    total: u32,
    received: Vec<u64>,
    received_count: u32,
    /// The highest fragment number received: the writer sent every one before it.
    highest: u32,
    chunks: Vec<Option<Box<[u8]>>>,
    allocated: usize,
    started: Instant,
}

impl Partial {
    fn has(&self, n: u32) -> bool {
        let i = (n - 1) as usize;
        self.received
            .get(i / 64)
            .is_some_and(|w| w & (1 << (i % 64)) != 0)
    }

    fn mark(&mut self, n: u32) {
        self.highest = self.highest.max(n);
        let i = (n - 1) as usize;
        if let Some(w) = self.received.get_mut(i / 64) {
            *w |= 1 << (i % 64);
        }
    }
}

/// Reassembles samples from DATA_FRAG fragments, per (writer, sequence number).
#[derive(Debug)]
pub struct Reassembler {
    limits: ReassemblyLimits,
    partials: BTreeMap<(Guid, SequenceNumber), Partial>,
    allocated: usize,
    stats: ReassemblyStats,
    /// Where completed samples are written.
    pool: PayloadPool,
    /// Whole chunks of completed samples, for the next ones (at most [`SPARE_CHUNKS`]).
    spare: Vec<Box<[u8]>>,
}

impl Reassembler {
    /// An empty reassembler with `limits`.
    pub fn new(limits: ReassemblyLimits) -> Reassembler {
        Reassembler {
            limits,
            partials: BTreeMap::new(),
            allocated: 0,
            stats: ReassemblyStats::default(),
            pool: PayloadPool::new(),
            spare: Vec::new(),
        }
    }

    /// Takes the fragments of one DATA_FRAG. `data` holds them back to back (bytes beyond the
    /// announced fragments, such as submessage padding, are ignored).
    pub fn handle_fragment(
        &mut self,
        now: Instant,
        writer: Guid,
        sn: SequenceNumber,
        info: FragmentInfo,
        data: &[u8],
    ) -> Result<ReassemblyOutcome, ReassemblyError> {
        let r = self.handle(now, writer, sn, info, data);
        match &r {
            Err(_) => self.stats.rejected += 1,
            Ok(ReassemblyOutcome::Complete(_)) => self.stats.completed += 1,
            Ok(_) => {}
        }
        r
    }

    fn handle(
        &mut self,
        now: Instant,
        writer: Guid,
        sn: SequenceNumber,
        info: FragmentInfo,
        data: &[u8],
    ) -> Result<ReassemblyOutcome, ReassemblyError> {
        let (total, needed) = validate(&info, data)?;
        let data = &data[..needed];
        if info.sample_size > self.limits.max_sample_size {
            return Err(ReassemblyError::SampleTooLarge {
                size: info.sample_size,
                limit: self.limits.max_sample_size,
            });
        }
        let key = (writer, sn);
        if !self.partials.contains_key(&key) {
            if self.partials.len() >= self.limits.max_in_progress {
                return Err(ReassemblyError::TooManyInProgress);
            }
            let sample = info.sample_size as usize;
            let words = (total as usize).div_ceil(64);
            let chunks = sample.div_ceil(CHUNK);
            // The bookkeeping is sized by the announced sample, not by what arrived: it counts
            // against the budget too, or tiny fragments of a huge sample would allocate
            // megabytes of bitmap per partial outside the limit.
            let meta = bookkeeping_bytes(words, chunks);
            if self.allocated + meta > self.limits.max_total_bytes {
                return Err(ReassemblyError::OutOfBudget);
            }
            self.allocated += meta;
            self.partials.insert(
                key,
                Partial {
                    info,
                    total,
                    received: vec![0; words],
                    received_count: 0,
                    highest: 0,
                    chunks: (0..chunks).map(|_| None).collect(),
                    allocated: meta,
                    started: now,
                },
            );
        }
        let budget = self.limits.max_total_bytes;
        let Some(p) = self.partials.get_mut(&key) else {
            return Err(ReassemblyError::Inconsistent);
        };
        if p.info.sample_size != info.sample_size || p.info.fragment_size != info.fragment_size {
            return Err(ReassemblyError::Inconsistent);
        }
        let size = usize::from(info.fragment_size);
        let first = info.starting_num;
        let last = first + u32::from(info.count) - 1;
        if (first..=last).all(|n| p.has(n)) {
            return Ok(ReassemblyOutcome::Duplicate);
        }
        // Allocate the chunks these bytes land in, within the budget, before copying anything.
        let start = (first as usize - 1) * size;
        let end = start + data.len();
        let sample = info.sample_size as usize;
        let mut extra = 0;
        for c in start / CHUNK..=(end - 1) / CHUNK {
            if p.chunks.get(c).is_some_and(Option::is_none) {
                extra += chunk_len(c, sample);
            }
        }
        if self.allocated + extra > budget {
            return Err(ReassemblyError::OutOfBudget);
        }
        for c in start / CHUNK..=(end - 1) / CHUNK {
            if let Some(slot @ None) = p.chunks.get_mut(c) {
                let len = chunk_len(c, sample);
                // A spare chunk may hold another sample's bytes: only bytes fragments were
                // copied over are ever read (the sample completes when every fragment came).
                let chunk = match len == CHUNK {
                    true => self.spare.pop(),
                    false => None,
                };
                *slot = Some(chunk.unwrap_or_else(|| vec![0u8; len].into_boxed_slice()));
            }
        }
        p.allocated += extra;
        self.allocated += extra;
        copy_into_chunks(&mut p.chunks, start, data);
        for n in first..=last {
            if !p.has(n) {
                p.mark(n);
                p.received_count += 1;
            }
        }
        if p.received_count < p.total {
            return Ok(ReassemblyOutcome::Incomplete);
        }
        let Some(p) = self.partials.remove(&key) else {
            return Ok(ReassemblyOutcome::Incomplete);
        };
        self.allocated -= p.allocated;
        let mut out = self.pool.alloc(sample);
        let mut at = 0;
        for chunk in p.chunks.into_iter().flatten() {
            let n = chunk.len().min(sample.saturating_sub(at));
            if let Some(dst) = out.as_mut_slice().get_mut(at..at + n) {
                dst.copy_from_slice(&chunk[..n]);
            }
            at += n;
            if chunk.len() == CHUNK && self.spare.len() < SPARE_CHUNKS {
                self.spare.push(chunk);
            }
        }
        Ok(ReassemblyOutcome::Complete(out.freeze()))
    }

    /// The fragments of `(writer, sn)` still missing, as a NACK_FRAG set (at most 256 from the
    /// first missing one); `None` when nothing of that sample is held.
    pub fn missing(&self, writer: Guid, sn: SequenceNumber) -> Option<FragmentNumberSet> {
        self.missing_from(writer, sn, 1, u32::MAX, |_| false)
    }

    /// The missing fragments of `writer`'s `sn` from `from` to `upto` (or to the highest
    /// received, if higher) that `skip` does not
    /// reject, as the first set of them (a set spans at most 256 fragments from its first);
    /// `None` when there are none (or the sample is not being reassembled).
    pub fn missing_from(
        &self,
        writer: Guid,
        sn: SequenceNumber,
        from: u32,
        upto: u32,
        mut skip: impl FnMut(u32) -> bool,
    ) -> Option<FragmentNumberSet> {
        let p = self.partials.get(&(writer, sn))?;
        // Fragments arrive in the order they were sent: below the highest received, every
        // one was sent, announced or not.
        let upto = upto.max(p.highest).min(p.total);
        let first = (from.max(1)..=upto).find(|&n| !p.has(n) && !skip(n))?;
        let mut set = FragmentNumberSet::empty(FragmentNumber(first));
        for n in first..=upto.min(first.saturating_add(255)) {
            if !p.has(n) && !skip(n) {
                set.insert(FragmentNumber(n));
            }
        }
        Some(set)
    }

    /// The samples of `writer` being reassembled, ascending by sequence number, with the
    /// number of fragments each needs in total.
    pub fn in_progress(&self, writer: Guid) -> impl Iterator<Item = (SequenceNumber, u32)> + '_ {
        self.partials
            .range((writer, SequenceNumber::ZERO)..)
            .take_while(move |((w, _), _)| *w == writer)
            .map(|((_, sn), p)| (*sn, p.total))
    }

    /// Drops every partial sample of `writer` (unmatched, or its liveliness was lost).
    pub fn discard_writer(&mut self, writer: Guid) {
        self.retain(|(w, _), _| *w != writer);
    }

    /// Drops the partial samples of `writer` below `sn` (a GAP or HEARTBEAT made them
    /// irrelevant).
    pub fn discard_below(&mut self, writer: Guid, sn: SequenceNumber) {
        self.retain(|(w, s), _| *w != writer || *s >= sn);
    }

    /// Drops partial samples started more than `max_age` before `now`.
    pub fn expire(&mut self, now: Instant, max_age: Duration) {
        self.retain(|_, p| now.saturating_duration_since(p.started) <= max_age);
    }

    /// When the oldest partial sample becomes older than `max_age` (`expire` drops it then);
    /// `None` when nothing is held.
    pub fn next_expiry(&self, max_age: Duration) -> Option<Instant> {
        let oldest = self.partials.values().map(|p| p.started).min()?;
        oldest.checked_add(max_age)
    }

    /// Bytes held now: fragment storage plus the bookkeeping of every partial sample.
    pub fn allocated_bytes(&self) -> usize {
        self.allocated
    }

    /// Partial samples held now.
    pub fn len(&self) -> usize {
        self.partials.len()
    }

    /// True when nothing is being reassembled.
    pub fn is_empty(&self) -> bool {
        self.partials.is_empty()
    }

    /// Counters.
    pub fn stats(&self) -> ReassemblyStats {
        self.stats
    }

    fn retain(&mut self, mut keep: impl FnMut(&(Guid, SequenceNumber), &Partial) -> bool) {
        let mut freed = 0;
        let mut dropped = 0;
        self.partials.retain(|k, p| {
            let k2 = keep(k, p);
            if !k2 {
                freed += p.allocated;
                dropped += 1;
            }
            k2
        });
        self.allocated -= freed;
        self.stats.abandoned += dropped;
    }
}

/// Checks the fragment fields against themselves and the data; returns the sample's fragment
/// count and the bytes the carried fragments occupy.
fn validate(info: &FragmentInfo, data: &[u8]) -> Result<(u32, usize), ReassemblyError> {
    let malformed = |reason| Err(ReassemblyError::Malformed { reason });
    if info.fragment_size == 0 {
        return malformed("fragmentSize is 0");
    }
    if info.sample_size == 0 {
        return malformed("sampleSize is 0");
    }
    if info.starting_num == 0 || info.count == 0 {
        return malformed("no fragment (starting number or count is 0)");
    }
    let size = u64::from(info.fragment_size);
    let total = u64::from(info.sample_size).div_ceil(size);
    let last = u64::from(info.starting_num) + u64::from(info.count) - 1;
    if last > total {
        return malformed("fragments run past the end of the sample");
    }
    let start = (u64::from(info.starting_num) - 1) * size;
    let end = (last * size).min(u64::from(info.sample_size));
    let needed = (end - start) as usize;
    if data.len() < needed {
        return Err(ReassemblyError::Truncated {
            needed,
            available: data.len(),
        });
    }
    Ok((total as u32, needed))
}

/// Bytes of a partial sample's received-fragment bitmap (`words` of 64 bits) and chunk table.
fn bookkeeping_bytes(words: usize, chunks: usize) -> usize {
    words * std::mem::size_of::<u64>() + chunks * std::mem::size_of::<Option<Box<[u8]>>>()
}

fn chunk_len(chunk: usize, sample: usize) -> usize {
    CHUNK.min(sample - chunk * CHUNK)
}

fn copy_into_chunks(chunks: &mut [Option<Box<[u8]>>], mut at: usize, mut data: &[u8]) {
    while !data.is_empty() {
        let (c, off) = (at / CHUNK, at % CHUNK);
        let Some(Some(chunk)) = chunks.get_mut(c) else {
            return;
        };
        let n = data.len().min(chunk.len() - off);
        chunk[off..off + n].copy_from_slice(&data[..n]);
        data = &data[n..];
        at += n;
    }
}
