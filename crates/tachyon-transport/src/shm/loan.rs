//! Loan areas: segments of sample slots a writer lends to its application, which writes a
//! sample in place; readers of other processes then read it in place too.
//!
//! ```text
//! 0       header   magic "TACHLON1", version, owner token, area id, numbers (below)
//! 4096    rows     `rows` × (reader token | `holds` hold entries): what each reader holds
//! ...     gens     `slots` × 64 bytes: the slot's generation
//! ...     slots    `slots` × `slot_size` bytes, page aligned
//! ```
//!
//! A writer participant owns one file per writer that loans, `tachyon-<token>-<area>`,
//! locked by it (`flock`) like its segment. A slot goes to the application
//! ([`LoanArea::loan`]), is published ([`LoanSlot::publish`]: the DATA then carries a
//! [reference](Published::reference) instead of the bytes), and comes back when the writer
//! drops the last payload referring to it — but is reused only once no reader holds it.
//!
//! A reader that resolves a reference ([`Loans::resolve`]) claims a **row** of the area
//! (compare-and-swap of its token into a free one), writes a **hold entry** (the slot and
//! its generation) into the row, and only then checks that the slot still has that
//! generation. The writer, to reuse a slot, first bumps its generation, then looks for hold
//! entries of the old one. Both sides use sequentially consistent operations, so at least
//! one sees the other: either the writer sees the hold and waits, or the reader sees the new
//! generation and lets go (the sample counts as not received, and is repaired by value).
//! The reader clears its entry when the last payload of the sample is dropped.
//!
//! # Crashes
//!
//! A reader killed while holding samples leaves entries behind: the writer, when an entry
//! keeps a slot from being reused, checks (at most every `LIVENESS_PERIOD`) whether the
//! row's reader still holds its segment's lock, and clears the row of a dead one. A writer
//! killed while the application held a loan or readers held samples leaves its area file:
//! readers keep their mapping (the bytes stay valid) and delete the file once its lock is
//! free ([`Loans::forget`], and the sweep of a new transport).
//!
//! # Trust
//!
//! The numbers of an area read from the file are checked once when it is opened; a
//! reference is checked against them (slot, offsets) before anything is read. The bytes of
//! a held sample are read in place: the writer's process could still change them (it owns
//! the memory), so they are handed only to decoders (bounds-checked) and to loaned reads of
//! types every bit pattern of which is a value.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::map::Mapping;
use super::segment::{self, PREFIX};
use crate::queue::lock;

/// "TACHLON1".
const MAGIC: u64 = u64::from_be_bytes(*b"TACHLON1");
pub(super) const VERSION: u32 = 1;

mod header {
    pub(super) const MAGIC: usize = 0;
    pub(super) const VERSION: usize = 8;
    pub(super) const TOKEN: usize = 16;
    pub(super) const ID: usize = 24;
    pub(super) const SLOTS: usize = 28;
    pub(super) const SLOT_SIZE: usize = 32;
    pub(super) const ROWS: usize = 36;
    pub(super) const HOLDS: usize = 40;
    pub(super) const TOTAL: usize = 48;
}

const LINE: usize = 64;
const PAGE: usize = 4096;
const ROWS_AT: usize = PAGE;

/// Readers (participants) that can hold samples of one area in place; more read copies.
pub const ROWS: u32 = 32;
/// Samples one reader participant can hold in place per area; more are copied.
pub const HOLDS: u32 = 64;

/// How often a row whose entries keep a slot from reuse is checked for a dead reader.
const LIVENESS_PERIOD: Duration = Duration::from_millis(100);

/// An area file younger than this whose lock is free may still be being created.
const YOUNG: Duration = Duration::from_secs(10);

mod limits {
    pub(super) const MAX_SLOTS: u32 = 4096;
    pub(super) const MAX_SLOT_SIZE: u32 = 1 << 30;
    pub(super) const MAX_ROWS: u32 = 1024;
    pub(super) const MAX_HOLDS: u32 = 4096;
    pub(super) const MAX_TOTAL: u64 = 16 << 30;
}

/// The numbers an area is made of, and where things lie.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Geometry {
    slots: u32,
    slot_size: usize,
    rows: u32,
    holds: u32,
    row_stride: usize,
    gens_at: usize,
    data_at: usize,
    total: usize,
}

fn round_up(n: usize, to: usize) -> Option<usize> {
    n.checked_add(to - 1).map(|n| n / to * to)
}

impl Geometry {
    fn new(slots: u32, slot_size: u32, rows: u32, holds: u32) -> Result<Geometry, String> {
        use limits::*;
        let check = |what: &str, v: u32, max: u32| {
            if v == 0 || v > max {
                Err(format!("{what} {v} outside 1..={max}"))
            } else {
                Ok(())
            }
        };
        check("slots", slots, MAX_SLOTS)?;
        check("slot size", slot_size, MAX_SLOT_SIZE)?;
        check("rows", rows, MAX_ROWS)?;
        check("holds", holds, MAX_HOLDS)?;
        if slot_size as usize % LINE != 0 {
            return Err(format!("slot size {slot_size} not a multiple of {LINE}"));
        }
        let row_stride = LINE + holds as usize * 8;
        let gens_at = ROWS_AT + rows as usize * row_stride;
        let data_at = round_up(gens_at + slots as usize * LINE, PAGE).ok_or("too large")?;
        let total = (slots as usize)
            .checked_mul(slot_size as usize)
            .and_then(|n| n.checked_add(data_at))
            .filter(|&t| t as u64 <= MAX_TOTAL)
            .ok_or_else(|| format!("{slots} slots of {slot_size} bytes: too large"))?;
        Ok(Geometry {
            slots,
            slot_size: slot_size as usize,
            rows,
            holds,
            row_stride,
            gens_at,
            data_at,
            total,
        })
    }

    fn row(&self, r: u32) -> usize {
        ROWS_AT + r as usize * self.row_stride
    }

    fn entry(&self, r: u32, e: u32) -> usize {
        self.row(r) + LINE + e as usize * 8
    }

    fn gen(&self, slot: u32) -> usize {
        self.gens_at + slot as usize * LINE
    }

    fn slot(&self, slot: u32) -> usize {
        self.data_at + slot as usize * self.slot_size
    }
}

/// A hold entry: the slot (plus one, so 0 is free) and the low 40 bits of its generation.
fn hold_word(slot: u32, gen: u64) -> u64 {
    (u64::from(slot) + 1) << 40 | (gen & ((1 << 40) - 1))
}

/// The file of area `id` of participant `token`.
pub(crate) fn path_of(dir: &Path, token: u64, id: u32) -> PathBuf {
    dir.join(format!("{PREFIX}{token:016x}-{id:08x}"))
}

/// The (token, area) a file name names, if it is an area's.
pub(crate) fn area_of(name: &str) -> Option<(u64, u32)> {
    let (token, id) = name.strip_prefix(PREFIX)?.split_once('-')?;
    if token.len() != 16 || id.len() != 8 {
        return None;
    }
    Some((
        u64::from_str_radix(token, 16).ok().filter(|&t| t != 0)?,
        u32::from_str_radix(id, 16).ok()?,
    ))
}

/// Whether the participant of `token` is gone: its segment is missing or unlocked.
fn participant_gone(dir: &Path, token: u64) -> bool {
    match Mapping::open(&segment::path_of(dir, token)) {
        Ok(m) => m.owner_gone().unwrap_or(false),
        Err(e) => e.kind() == io::ErrorKind::NotFound,
    }
}

/// Counters of a participant's loans (relaxed: statistics).
#[derive(Debug, Default)]
struct Counters {
    areas: AtomicU64,
    loans: AtomicU64,
    exhausted: AtomicU64,
    held: AtomicU64,
    copied: AtomicU64,
    missed: AtomicU64,
    malformed: AtomicU64,
    rows_reclaimed: AtomicU64,
}

/// A snapshot of a participant's loan counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LoanStats {
    /// Loan areas created (one per writer that loans).
    pub areas: u64,
    /// Slots lent to the application.
    pub loans: u64,
    /// Loans asked for when every slot was in use or held (the writer then loans heap
    /// memory).
    pub exhausted: u64,
    /// Samples of other participants resolved and held in place.
    pub held: u64,
    /// Samples resolved by copying (no hold entry free).
    pub copied: u64,
    /// References that could not be resolved (slot reused, area gone or unreadable).
    pub missed: u64,
    /// References or areas rejected as malformed.
    pub malformed: u64,
    /// Rows of dead readers cleared (their holds released).
    pub rows_reclaimed: u64,
}

/// The writer's side of an area.
#[derive(Debug)]
struct Area {
    map: Mapping,
    path: PathBuf,
    dir: PathBuf,
    geo: Geometry,
    reference_head: [u8; 12],
    state: Mutex<AreaState>,
    counters: Arc<Counters>,
}

#[derive(Debug)]
struct AreaState {
    free: Vec<u32>,
    /// Slots back from the application or the writer, maybe still held by readers.
    pending: Vec<Pending>,
    /// Each slot's generation (the one in shared memory is only ever written from here).
    gens: Vec<u64>,
    /// When each row's reader was last checked for liveness.
    checked: Vec<Option<Instant>>,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    slot: u32,
    /// The generation readers may hold it under.
    gen: u64,
    bumped: bool,
}

/// A writer's loan area (one file of `/dev/shm`).
#[derive(Clone, Debug)]
pub struct LoanArea(Arc<Area>);

impl LoanArea {
    /// Bytes a slot holds.
    pub fn slot_size(&self) -> usize {
        self.0.geo.slot_size
    }

    /// Its file.
    pub fn path(&self) -> &Path {
        &self.0.path
    }

    /// A free slot, or `None` when every slot is in use or held by a reader.
    pub fn loan(&self) -> Option<LoanSlot> {
        let a = &self.0;
        let mut st = lock(&a.state);
        if st.free.is_empty() {
            a.reclaim(&mut st);
        }
        let Some(slot) = st.free.pop() else {
            a.counters.exhausted.fetch_add(1, Ordering::Relaxed);
            return None;
        };
        let gen = st.gens.get(slot as usize).copied().unwrap_or(0);
        a.counters.loans.fetch_add(1, Ordering::Relaxed);
        Some(LoanSlot {
            area: self.0.clone(),
            slot,
            gen,
        })
    }
}

impl Area {
    fn u64(&self, at: usize) -> &AtomicU64 {
        self.map.u64_at(at).unwrap_or_else(|| unreachable_word())
    }

    /// Makes free the pending slots no reader holds.
    fn reclaim(&self, st: &mut AreaState) {
        let mut pending = std::mem::take(&mut st.pending);
        for p in &mut pending {
            if !p.bumped {
                let next = p.gen + 1;
                if let Some(g) = st.gens.get_mut(p.slot as usize) {
                    *g = next;
                }
                self.u64(self.geo.gen(p.slot)).store(next, Ordering::SeqCst);
                p.bumped = true;
            }
        }
        pending.retain(|p| {
            if self.held(st, p.slot, p.gen) {
                true
            } else {
                st.free.push(p.slot);
                false
            }
        });
        st.pending = pending;
    }

    /// Whether a live reader holds `slot` of generation `gen`.
    fn held(&self, st: &mut AreaState, slot: u32, gen: u64) -> bool {
        let word = hold_word(slot, gen);
        for r in 0..self.geo.rows {
            let token = self.u64(self.geo.row(r)).load(Ordering::SeqCst);
            if token == 0 {
                continue;
            }
            let found = (0..self.geo.holds)
                .any(|e| self.u64(self.geo.entry(r, e)).load(Ordering::SeqCst) == word);
            if !found {
                continue;
            }
            let last = st.checked.get(r as usize).copied().flatten();
            let due = last.map_or(true, |t| t.elapsed() >= LIVENESS_PERIOD);
            if due {
                if let Some(c) = st.checked.get_mut(r as usize) {
                    *c = Some(Instant::now());
                }
                if participant_gone(&self.dir, token) {
                    self.clear_row(r, token);
                    continue;
                }
            }
            return true;
        }
        false
    }

    /// Releases every hold of row `r`, whose reader `token` is gone.
    fn clear_row(&self, r: u32, token: u64) {
        for e in 0..self.geo.holds {
            self.u64(self.geo.entry(r, e)).store(0, Ordering::SeqCst);
        }
        let _ = self.u64(self.geo.row(r)).compare_exchange(
            token,
            0,
            Ordering::SeqCst,
            Ordering::Relaxed,
        );
        self.counters.rows_reclaimed.fetch_add(1, Ordering::Relaxed);
        tracing::info!(area = %self.path.display(), reader = format_args!("{token:016x}"),
            "shm: released the samples a reader that is gone held");
    }
}

impl Drop for Area {
    fn drop(&mut self) {
        let same = std::fs::metadata(&self.path)
            .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
            .ok()
            == self.map.inode().ok();
        if same {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// A slot lent to the application: written in place, then [published](Self::publish).
/// Dropped unpublished, it simply goes back.
#[derive(Debug)]
pub struct LoanSlot {
    area: Arc<Area>,
    slot: u32,
    gen: u64,
}

impl LoanSlot {
    /// The slot's bytes (64-byte aligned), to write the sample into. They hold what an
    /// earlier sample left.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        let a = &self.area;
        // SAFETY: the slot is this LoanSlot's alone: it left the free list for it and goes
        // back only when it is dropped; readers do not hold it (their holds of earlier
        // generations were waited out) and only ever read it.
        unsafe { a.map.bytes_mut(a.geo.slot(self.slot), a.geo.slot_size) }.unwrap_or_default()
    }

    /// The slot's bytes, as [`bytes_mut`](Self::bytes_mut) left them.
    pub fn bytes(&self) -> &[u8] {
        let a = &self.area;
        // SAFETY: as in `bytes_mut`; the borrow of `self` keeps any `&mut` away meanwhile.
        unsafe { a.map.bytes(a.geo.slot(self.slot), a.geo.slot_size) }.unwrap_or_default()
    }

    /// The sample, bytes `start..start + len` of the slot, published: from now on read
    /// only. `None` when that range is not inside the slot.
    pub fn publish(self, start: usize, len: usize) -> Option<Published> {
        let end = start.checked_add(len)?;
        if end > self.area.geo.slot_size {
            return None;
        }
        let mut reference = [0u8; REFERENCE_LEN];
        reference[..12].copy_from_slice(&self.area.reference_head);
        reference[12..16].copy_from_slice(&self.slot.to_le_bytes());
        reference[16..24].copy_from_slice(&self.gen.to_le_bytes());
        reference[24..28].copy_from_slice(&(start as u32).to_le_bytes());
        reference[28..32].copy_from_slice(&(len as u32).to_le_bytes());
        Some(Published {
            slot: Some(self),
            start,
            len,
            reference,
        })
    }
}

impl Drop for LoanSlot {
    fn drop(&mut self) {
        lock(&self.area.state).pending.push(Pending {
            slot: self.slot,
            gen: self.gen,
            bumped: false,
        });
    }
}

/// Bytes of a reference: token, area, slot, generation, start, length.
pub const REFERENCE_LEN: usize = 32;

/// A published sample in a slot of the writer's area (until [released](Self::release)).
#[derive(Debug)]
pub struct Published {
    slot: Option<LoanSlot>,
    start: usize,
    len: usize,
    reference: [u8; REFERENCE_LEN],
}

impl Published {
    /// The sample's bytes (none once released).
    pub fn bytes(&self) -> &[u8] {
        let Some(slot) = &self.slot else {
            return &[];
        };
        let a = &slot.area;
        // SAFETY: published, the slot is only read in this process (the `LoanSlot` inside
        // gives no more writable access); it stays out of the free list while this lives.
        unsafe { a.map.bytes(a.geo.slot(slot.slot) + self.start, self.len) }.unwrap_or_default()
    }

    /// Gives the slot back to its area (to be reused once no reader holds it).
    pub fn release(&mut self) {
        self.slot = None;
    }

    /// What a reader of this host resolves ([`Loans::resolve`]) to the same bytes.
    pub fn reference(&self) -> &[u8] {
        &self.reference
    }
}

/// An area of another participant, opened to read samples in place.
#[derive(Debug)]
struct Opened {
    map: Mapping,
    geo: Geometry,
    path: PathBuf,
    /// Our row in it, and our token there; `None`: none was free (samples are copied).
    row: Option<(u32, u64)>,
}

impl Opened {
    fn u64(&self, at: usize) -> &AtomicU64 {
        self.map.u64_at(at).unwrap_or_else(|| unreachable_word())
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        // Every hold of ours is gone (each held an Arc of this): give the row back.
        if let Some((r, token)) = self.row {
            let _ = self.u64(self.geo.row(r)).compare_exchange(
                token,
                0,
                Ordering::SeqCst,
                Ordering::Relaxed,
            );
        }
    }
}

/// A sample of another participant's area held in place; [releasing](Self::release) or
/// dropping it releases the hold.
#[derive(Debug)]
pub struct Held {
    area: Option<Arc<Opened>>,
    entry: usize,
    at: usize,
    len: usize,
}

impl Held {
    /// The sample's bytes (none once released).
    pub fn bytes(&self) -> &[u8] {
        let Some(area) = &self.area else {
            return &[];
        };
        // SAFETY: nothing in this process writes another participant's area (we only ever
        // write our hold entries and row, apart from this range); the writer does not
        // reuse the slot while our hold entry names it. A writer breaking that makes the
        // bytes change under us: readers get garbage values of types every bit pattern of
        // which is valid, never bytes outside the slot (the range was checked).
        unsafe { area.map.bytes(self.at, self.len) }.unwrap_or_default()
    }

    /// Releases the hold (the writer may reuse the slot) and the area.
    pub fn release(&mut self) {
        if let Some(area) = self.area.take() {
            area.u64(self.entry).store(0, Ordering::SeqCst);
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        self.release();
    }
}

/// A resolved reference.
#[derive(Debug)]
pub enum Resolved {
    /// Held in place.
    Held(Held),
    /// Copied out (no hold entry was free).
    Copied(Vec<u8>),
}

/// A participant's loans: the areas of its writers, and the areas of other participants it
/// read samples from.
#[derive(Debug)]
pub struct Loans {
    dir: PathBuf,
    token: u64,
    mode: u32,
    group: Option<u32>,
    next_id: AtomicU32,
    budget: AtomicU64,
    opened: Mutex<HashMap<(u64, u32), Arc<Opened>>>,
    counters: Arc<Counters>,
}

impl Loans {
    pub(crate) fn new(dir: &Path, token: u64, mode: u32, group: Option<u32>) -> Loans {
        Loans {
            dir: dir.to_path_buf(),
            token,
            mode,
            group,
            next_id: AtomicU32::new(0),
            budget: AtomicU64::new(64 << 20),
            opened: Mutex::new(HashMap::new()),
            counters: Arc::default(),
        }
    }

    /// Sets the bytes a writer's area takes at most ([`slots_for`](Self::slots_for)).
    pub(crate) fn set_budget(&self, bytes: u64) {
        self.budget.store(bytes, Ordering::Relaxed);
    }

    /// How many slots of `slot_bytes` bytes an area has: as many as the configured budget
    /// holds, at least 4 (the application writing one, a reader holding one, two in
    /// flight), at most 256.
    pub fn slots_for(&self, slot_bytes: usize) -> u32 {
        let n = self.budget.load(Ordering::Relaxed) / (slot_bytes.max(1) as u64);
        n.clamp(4, 256) as u32
    }

    /// Creates an area of `slots` slots of at least `slot_bytes` bytes each; the error says
    /// which file and what to do.
    pub fn create_area(&self, slot_bytes: usize, slots: u32) -> Result<LoanArea, String> {
        let slot_size = round_up(
            slot_bytes.max(1),
            if slot_bytes >= PAGE { PAGE } else { LINE },
        )
        .and_then(|s| u32::try_from(s).ok())
        .ok_or_else(|| format!("a loan slot of {slot_bytes} bytes is too large"))?;
        let geo = Geometry::new(slots, slot_size, ROWS, HOLDS)
            .map_err(|e| format!("a loan area for samples of {slot_bytes} bytes: {e}"))?;
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let path = path_of(&self.dir, self.token, id);
        let map = Mapping::create(&path, geo.total, self.mode, self.group).map_err(|e| {
            let mib = geo.total as f64 / f64::from(1 << 20);
            format!(
                "create the loan area {} ({mib:.1} MiB): {e}; free or enlarge {} \
                 (df -h), lower [shm] loan_bytes, or turn shared memory off \
                 ([transports] shm = false)",
                path.display(),
                self.dir.display()
            )
        })?;
        let w32 = |at: usize, v: u32| {
            if let Some(w) = map.u32_at(at) {
                w.store(v, Ordering::Relaxed);
            }
        };
        let w64 = |at: usize, v: u64| {
            if let Some(w) = map.u64_at(at) {
                w.store(v, Ordering::Relaxed);
            }
        };
        w32(header::VERSION, VERSION);
        w64(header::TOKEN, self.token);
        w32(header::ID, id);
        w32(header::SLOTS, slots);
        w32(header::SLOT_SIZE, slot_size);
        w32(header::ROWS, ROWS);
        w32(header::HOLDS, HOLDS);
        w64(header::TOTAL, geo.total as u64);
        for s in 0..slots {
            w64(geo.gen(s), 1);
        }
        if let Some(m) = map.u64_at(header::MAGIC) {
            m.store(MAGIC, Ordering::Release);
        }
        let mut reference_head = [0u8; 12];
        reference_head[..8].copy_from_slice(&self.token.to_le_bytes());
        reference_head[8..].copy_from_slice(&id.to_le_bytes());
        self.counters.areas.fetch_add(1, Ordering::Relaxed);
        Ok(LoanArea(Arc::new(Area {
            map,
            path,
            dir: self.dir.clone(),
            geo,
            reference_head,
            state: Mutex::new(AreaState {
                free: (0..slots).rev().collect(),
                pending: Vec::new(),
                gens: vec![1; slots as usize],
                checked: vec![None; ROWS as usize],
            }),
            counters: self.counters.clone(),
        })))
    }

    /// The sample `reference` ([`Published::reference`]) names, held until the result is
    /// dropped; or why not.
    pub fn resolve(&self, reference: &[u8]) -> Result<Resolved, &'static str> {
        let result = self.resolve_inner(reference);
        let c = &self.counters;
        match &result {
            Ok(Resolved::Held(_)) => c.held.fetch_add(1, Ordering::Relaxed),
            Ok(Resolved::Copied(_)) => c.copied.fetch_add(1, Ordering::Relaxed),
            Err(Miss::Malformed(_)) => c.malformed.fetch_add(1, Ordering::Relaxed),
            Err(Miss::Missed(_)) => c.missed.fetch_add(1, Ordering::Relaxed),
        };
        result.map_err(|m| match m {
            Miss::Malformed(why) | Miss::Missed(why) => why,
        })
    }

    fn resolve_inner(&self, reference: &[u8]) -> Result<Resolved, Miss> {
        let r: &[u8; REFERENCE_LEN] = reference
            .get(..REFERENCE_LEN)
            .and_then(|r| r.try_into().ok())
            .ok_or(Miss::Malformed("a loan reference too short"))?;
        let u32_at = |i: usize| u32::from_le_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]);
        let u64_at = |i: usize| u64::from(u32_at(i)) | u64::from(u32_at(i + 4)) << 32;
        let (token, id, slot, gen) = (u64_at(0), u32_at(8), u32_at(12), u64_at(16));
        let (start, len) = (u32_at(24) as usize, u32_at(28) as usize);
        if token == 0 {
            return Err(Miss::Malformed("a loan reference of token 0"));
        }
        let area = self.open(token, id)?;
        let geo = &area.geo;
        if slot >= geo.slots || start.saturating_add(len) > geo.slot_size {
            return Err(Miss::Malformed("a loan reference outside its area"));
        }
        let at = geo.slot(slot) + start;
        let gen_word = area.u64(geo.gen(slot));
        if let Some((row, _)) = area.row {
            let word = hold_word(slot, gen);
            for e in 0..geo.holds {
                let entry = geo.entry(row, e);
                if area
                    .u64(entry)
                    .compare_exchange(0, word, Ordering::SeqCst, Ordering::Relaxed)
                    .is_err()
                {
                    continue;
                }
                if gen_word.load(Ordering::SeqCst) != gen {
                    area.u64(entry).store(0, Ordering::SeqCst);
                    return Err(Miss::Missed("the writer reused the slot"));
                }
                return Ok(Resolved::Held(Held {
                    area: Some(area),
                    entry,
                    at,
                    len,
                }));
            }
        }
        // No entry free: a copy, valid if the slot kept its generation throughout.
        if gen_word.load(Ordering::SeqCst) != gen {
            return Err(Miss::Missed("the writer reused the slot"));
        }
        let mut copy = vec![0; len];
        if !area.map.read(at, &mut copy) {
            return Err(Miss::Malformed("a loan reference outside its area"));
        }
        std::sync::atomic::fence(Ordering::SeqCst);
        if gen_word.load(Ordering::SeqCst) != gen {
            return Err(Miss::Missed("the writer reused the slot"));
        }
        Ok(Resolved::Copied(copy))
    }

    /// Area `id` of participant `token`, opened (and checked) once.
    fn open(&self, token: u64, id: u32) -> Result<Arc<Opened>, Miss> {
        let mut opened = lock(&self.opened);
        if let Some(a) = opened.get(&(token, id)) {
            return Ok(a.clone());
        }
        let path = path_of(&self.dir, token, id);
        let map = Mapping::open(&path).map_err(|e| {
            tracing::debug!(area = %path.display(), error = %e, "shm: cannot open a loan area");
            Miss::Missed("the loan area cannot be opened")
        })?;
        let r32 = |at| map.u32_at(at).map_or(0, |w| w.load(Ordering::Relaxed));
        let r64 = |at| map.u64_at(at).map_or(0, |w| w.load(Ordering::Relaxed));
        if map.u64_at(header::MAGIC).map(|m| m.load(Ordering::Acquire)) != Some(MAGIC)
            || r32(header::VERSION) != VERSION
            || r64(header::TOKEN) != token
            || r32(header::ID) != id
        {
            return Err(Miss::Malformed("not a loan area of that participant"));
        }
        let geo = Geometry::new(
            r32(header::SLOTS),
            r32(header::SLOT_SIZE),
            r32(header::ROWS),
            r32(header::HOLDS),
        )
        .map_err(|_| Miss::Malformed("a loan area of bad numbers"))?;
        if geo.total as u64 != r64(header::TOTAL) || geo.total != map.len() {
            return Err(Miss::Malformed("a loan area of the wrong size"));
        }
        let row = (0..geo.rows).find_map(|r| {
            let w = map.u64_at(geo.row(r))?;
            w.compare_exchange(0, self.token, Ordering::SeqCst, Ordering::Relaxed)
                .is_ok()
                .then_some((r, self.token))
        });
        if row.is_none() {
            tracing::debug!(area = %path.display(), "shm: no row free in a loan area; its samples are copied");
        }
        let a = Arc::new(Opened {
            map,
            geo,
            path,
            row,
        });
        opened.insert((token, id), a.clone());
        Ok(a)
    }

    /// Participant `token` is gone: its areas are closed here (held samples stay readable)
    /// and deleted once nothing holds their lock.
    pub fn forget(&self, token: u64) {
        let gone: Vec<Arc<Opened>> = {
            let mut opened = lock(&self.opened);
            let keys: Vec<_> = opened.keys().filter(|k| k.0 == token).copied().collect();
            keys.iter().filter_map(|k| opened.remove(k)).collect()
        };
        for a in gone {
            if a.map.owner_gone().unwrap_or(false) {
                let _ = std::fs::remove_file(&a.path);
            }
        }
        delete_dead_areas(&self.dir, Some(token));
    }

    /// The counters so far.
    pub fn stats(&self) -> LoanStats {
        let c = &self.counters;
        let ld = |a: &AtomicU64| a.load(Ordering::Relaxed);
        LoanStats {
            areas: ld(&c.areas),
            loans: ld(&c.loans),
            exhausted: ld(&c.exhausted),
            held: ld(&c.held),
            copied: ld(&c.copied),
            missed: ld(&c.missed),
            malformed: ld(&c.malformed),
            rows_reclaimed: ld(&c.rows_reclaimed),
        }
    }
}

enum Miss {
    Malformed(&'static str),
    Missed(&'static str),
}

/// Deletes the area files in `dir` (of participant `only`, or of anyone) of this user whose
/// owner is gone.
pub(crate) fn delete_dead_areas(dir: &Path, only: Option<u64>) {
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some((token, id)) = name.to_str().and_then(area_of) else {
            continue;
        };
        if only.is_some_and(|t| t != token) {
            continue;
        }
        let path = path_of(dir, token, id);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() || Some(meta.uid()) != uid {
            continue;
        }
        if meta.len() == 0 {
            if super::map::abandoned_empty(&path, YOUNG) && std::fs::remove_file(&path).is_ok() {
                tracing::info!(area = %path.display(),
                    "shm: deleted an empty loan area whose creator died before sizing it");
            }
            continue;
        }
        let young = meta
            .modified()
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < YOUNG);
        let Ok(m) = Mapping::open(&path) else {
            continue;
        };
        if m.owner_gone().unwrap_or(false)
            && (!young || participant_gone(dir, token))
            && std::fs::remove_file(&path).is_ok()
        {
            tracing::info!(area = %path.display(),
                "shm: deleted a loan area left by a participant that is gone");
        }
    }
}

/// A word the layout guarantees (offsets computed from checked numbers) was not there.
fn unreachable_word() -> ! {
    unreachable!("a loan area word outside the checked layout")
}

#[cfg(test)]
mod tests;
