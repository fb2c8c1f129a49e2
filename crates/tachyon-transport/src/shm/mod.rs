//! The shared-memory transport: participants of one host exchange datagrams through
//! segments in `/dev/shm`, without a daemon, a socket or the kernel's network stack.
//!
//! # Segments
//!
//! Every participant owns one segment, `/dev/shm/tachyon-<token>` (a random 64-bit token),
//! created readable and writable by its user only (or by a configured group), every page
//! reserved when it is created so a full `/dev/shm` is an error then, not a crash later. It
//! holds (`layout.rs`):
//!
//! - **slots**, small (2 KiB) and large (one datagram of the largest size), which the owner
//!   writes datagrams of more than 240 bytes (`layout::entry::INLINE`) into: such a
//!   datagram to several readers of the host is written once;
//! - **channels**, one per (reader participant, port) the owner sends to: a single-producer
//!   single-consumer ring of entries (a stamp saying which ring index the entry holds, a
//!   length, and the datagram itself when it is small, else the number of its slot), written
//!   by the owner, and a `head` written by the reader;
//! - **doorbells**, one per port of the owner as a receiver: a futex word other
//!   participants bump after publishing, and a flag saying whether a thread sleeps on it;
//! - an **incoming table**: tokens of the segments that hold channels for the owner, which
//!   a writer enters itself into (one compare-and-swap) before its first datagram.
//!
//! # Loans
//!
//! Writers that loan samples ([`loan`]) have a *loan area* each, `tachyon-<token>-<n>`: slots
//! the application writes samples into in place, which readers of other participants then
//! hold and read in place (a reference to the slot goes in the DATA instead of the bytes).
//!
//! # Liveness and cleanup
//!
//! The owner holds an exclusive `flock` on its segment for as long as it lives; the kernel
//! drops it when the process dies, `SIGKILL` included. A peer that can take the lock knows
//! the owner is gone: the reader of a dead writer detaches and deletes its segment; the
//! writer of a dead reader frees the slots the reader held and deletes its segment; a new
//! transport deletes every segment of its user whose owner is gone. A participant that
//! closes marks its segment closed and deletes it; its peers detach when they next look.
//!
//! # Trust
//!
//! A segment can be written by any process of its user: everything read from another
//! participant's segment is checked (see `rx.rs` and `tx.rs`); a bad record is dropped and
//! counted in [`TransportStats::malformed`], never followed outside the segment.
//!
//! # Choosing it
//!
//! Its locators are of kind [`Locator::KIND_TACHYON_SHM`]; their address starts with a hash
//! of the boot, the `/dev/shm` mount and the user (or group), so [`Transport::reach`]
//! covers exactly the participants that can open each other's segments. Discovery prefers it
//! (preference 10) to UDP for them; discovery itself stays on UDP (and the in-process
//! transport, preferred to it, within a process).
//!
//! # Threads
//!
//! A port's receive source has no file descriptor: a thread of its own waits on the port's
//! doorbell in [`Transport::receive_wait`] (a futex, woken only when it sleeps; it first
//! watches the next entry of each of its rings, and the doorbell, for [`ShmConfig::spin`]
//! while that catches datagrams, `spin.rs`), or spins on [`Transport::receive`] (busy
//! polling), which looks at the rings' next entries at every try. A wait that is about to
//! sleep looks at the rings only when the doorbell moved since a look that emptied them (a
//! writer rings it after every datagram it stamps), which it finds out without taking the
//! port's lock. Watching the entries, not the doorbell, spares two cache-line transfers
//! before each datagram between two cores (`docs/hot-path.md`, twenty-sixth session).
//!
//! A datagram is sent with [`Transport::send`], after the sender released its own locks (it
//! may set up a channel, which opens a segment, and wakes readers: system calls); or, to one
//! reader already set up, published at once with [`Transport::publish`] under a lock of
//! the caller's (memory stores only), the reader woken by [`Transport::wake_published`] once
//! that lock is released.

pub(crate) mod layout;
#[allow(unsafe_code)]
pub mod loan;
#[allow(unsafe_code)]
mod map;
mod rx;
mod segment;
mod tx;

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tachyon_wire::Locator;

use crate::batch::RecvBatch;
use crate::error::TransportError;
use crate::queue::lock;
use crate::stats::{Counters, TransportStats};
use crate::transport::{Reach, RxSource, Traffic, Transport, TransportLocators, TxBuffer, TxPool};
use layout::{channel, entry, header, Params, INLINE_SLOT, STATE_CLOSED, WAITER_FUTEX};
use rx::{Rx, RxChannel};
use segment::{OpenError, Segment};
use tx::{Reclaim, Tx, TxChannel, LIVENESS_PERIOD};

thread_local! {
    /// The readers a send rings the doorbell of once its lock is released (`send`).
    static TO_WAKE: std::cell::RefCell<Vec<(Arc<Segment>, u32)>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// Port of user data.
pub const USER_PORT: u32 = 1;
/// Port of the critical lane.
pub const CRITICAL_PORT: u32 = 2;

/// [`ShmConfig::spin`]'s default: longer than a small sample's round trip between two
/// processes (about 7 µs here), far shorter than a sleeping thread's wake-up.
pub const DEFAULT_SPIN: Duration = Duration::from_micros(20);
/// How often the writers a reader receives from are checked to be alive: by its receive
/// thread while datagrams arrive, by the runtime's upkeep ([`Transport::upkeep`]) while it
/// sleeps (it sleeps without a timeout).
const IDLE_CHECK: Duration = Duration::from_secs(1);
/// How long a reader that could not be reached is left alone.
const RETRY: Duration = Duration::from_secs(1);
/// A segment still being set up by a process that is gone is deleted after this long.
const STALE_INIT: Duration = Duration::from_secs(10);

/// How a participant's segment is sized and who may open it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShmConfig {
    /// Where segments live. Default `/dev/shm`.
    pub dir: PathBuf,
    /// Slots of [`small_slot_size`](Self::small_slot_size) bytes, for datagrams of more
    /// than 240 bytes (a smaller one, such as a small sample's DATA, a HEARTBEAT or an
    /// ACKNACK, is held by its ring entry). Default 512.
    pub small_slots: u32,
    /// Bytes of a small slot. Default 2048.
    pub small_slot_size: u32,
    /// Slots of the largest datagram. Default 64.
    pub large_slots: u32,
    /// Readers (participant and port) this participant can send to. Default 128.
    pub channels: u32,
    /// Datagrams in flight to one reader; a power of two. Each takes a ring entry of 256
    /// bytes of the segment per reader. Default 256.
    pub ring: u32,
    /// Participants that can send to this one. Default 256.
    pub incoming: u32,
    /// A group whose members may open the segment too (mode 0660); `None`: its user only
    /// (0600). Only participants configured alike choose shared memory between them.
    pub group: Option<u32>,
    /// Bytes of `/dev/shm` a writer's loan area takes at most (its slots: this divided by
    /// a sample's size, 4 to 256). Default 64 MiB.
    pub loan_bytes: u64,
    /// How long a receive thread watches its rings (the next entry of each) and its doorbell
    /// before it sleeps on the futex
    /// ([`Transport::receive_wait`]): a datagram published meanwhile is taken without a
    /// wake-up (on this project's virtual machines about 35 µs each, a halted vCPU's). It
    /// yields its CPU as it watches, so a sender that shares the CPU still runs; a watch that
    /// saw nothing makes the next ones rarer (doubling, up to one wait in 64), so periodic
    /// traffic spaced wider than the window costs next to nothing. Zero: sleep at once.
    /// Default 20 µs.
    pub spin: Duration,
}

impl Default for ShmConfig {
    fn default() -> ShmConfig {
        ShmConfig {
            dir: PathBuf::from("/dev/shm"),
            small_slots: 512,
            small_slot_size: 2048,
            large_slots: 64,
            channels: 128,
            ring: 256,
            incoming: 256,
            group: None,
            loan_bytes: 64 << 20,
            spin: DEFAULT_SPIN,
        }
    }
}

/// Datagrams and bytes received on one port, added to only under that port's receive lock.
#[derive(Default)]
struct Received {
    datagrams: AtomicU64,
    bytes: AtomicU64,
}

/// The index of port `port` in `ShmTransport::rx` and `ShmTransport::received`.
fn rx_index(port: u32) -> usize {
    usize::from(port == CRITICAL_PORT)
}

/// One participant's shared-memory transport: see the [module documentation](self).
pub struct ShmTransport {
    own: Arc<Segment>,
    dir: PathBuf,
    prefix: [u8; 8],
    locators: TransportLocators,
    max_datagram: usize,
    pool: TxPool,
    counters: Counters,
    /// Datagrams received on each port (as `rx`), counted under that port's lock; the rest
    /// of the counters are in `counters`.
    received: [Received; 2],
    tx: Mutex<Tx>,
    /// Segments of other participants we opened, by token.
    peers: Mutex<HashMap<u64, Arc<Segment>>>,
    /// Receiving state of the user-data and critical ports.
    rx: [Mutex<Rx>; 2],
    /// Per port (as `rx`): the doorbell's count when a look emptied every ring, tagged
    /// (`quiet_tag`), or 0. Until the count moves nothing new was published, which a wait
    /// about to sleep sees without taking the port's lock. Written under that lock.
    quiet: [AtomicU64; 2],
    /// Whether a wait sleeps at once (`ShmConfig::spin` zero): it has no watch to decide,
    /// under the lock, before sleeping.
    sleeps_at_once: bool,
    critical: bool,
    stopped: AtomicBool,
    /// Tokens already warned about (a peer that cannot be reached is logged once).
    warned: Mutex<HashSet<u64>>,
    /// Loan areas of our writers, and those of other participants we read from.
    loans: Arc<loan::Loans>,
}

impl fmt::Debug for ShmTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ShmTransport")
            .field("segment", &self.own.path)
            .finish_non_exhaustive()
    }
}

impl ShmTransport {
    /// Creates this participant's segment (deleting those of dead participants of this user
    /// first), for datagrams of at most `max_datagram` bytes, with a critical port when
    /// `critical`.
    pub fn open(
        config: &ShmConfig,
        max_datagram: usize,
        critical: bool,
    ) -> Result<ShmTransport, TransportError> {
        let fail = |what: String, source: io::Error| TransportError::Socket { what, source };
        let prefix = host_prefix(&config.dir, config.group)
            .map_err(|e| fail(format!("use {} for shared memory", config.dir.display()), e))?;
        sweep(&config.dir);
        let large = u32::try_from(max_datagram)
            .ok()
            .and_then(|n| n.checked_add(63))
            .map(|n| n / 64 * 64)
            .unwrap_or(u32::MAX);
        let params = Params {
            small_count: config.small_slots,
            small_size: config.small_slot_size.min(large),
            large_count: config.large_slots,
            large_size: large,
            channels: config.channels,
            ring: config.ring,
            incoming: config.incoming,
        };
        layout::Layout::new(params).map_err(TransportError::ShmConfig)?;
        let mode = if config.group.is_some() { 0o660 } else { 0o600 };
        let mut last = None;
        // A token already taken (never in practice) is drawn again.
        for _ in 0..4 {
            let token = random_token().map_err(|e| fail("draw a segment token".into(), e))?;
            match Segment::create(&config.dir, token, params, mode, config.group) {
                Ok(own) => {
                    return Ok(ShmTransport::with(
                        own,
                        config,
                        prefix,
                        max_datagram,
                        critical,
                    ))
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => last = Some(e),
                Err(e) => {
                    let path = segment::path_of(&config.dir, token);
                    return Err(fail(create_advice(&path, &params, &e), e));
                }
            }
        }
        Err(fail(
            "create a shared-memory segment".into(),
            last.unwrap_or_else(|| io::Error::other("tokens exhausted")),
        ))
    }

    fn with(
        own: Segment,
        config: &ShmConfig,
        prefix: [u8; 8],
        max_datagram: usize,
        critical: bool,
    ) -> ShmTransport {
        let me = |port| locator(prefix, own.token, port);
        let locators = TransportLocators {
            default_unicast: vec![me(USER_PORT)],
            critical_unicast: if critical {
                vec![me(CRITICAL_PORT)]
            } else {
                Vec::new()
            },
            ..TransportLocators::default()
        };
        let tx = Mutex::new(Tx::new(&own));
        let mode = if config.group.is_some() { 0o660 } else { 0o600 };
        let loans = Arc::new(loan::Loans::new(&config.dir, own.token, mode, config.group));
        loans.set_budget(config.loan_bytes);
        ShmTransport {
            loans,
            own: Arc::new(own),
            dir: config.dir.clone(),
            prefix,
            locators,
            max_datagram,
            pool: TxPool::new(max_datagram, 64),
            counters: Counters::default(),
            received: Default::default(),
            tx,
            peers: Mutex::new(HashMap::new()),
            rx: [
                Mutex::new(Rx::new(config.spin)),
                Mutex::new(Rx::new(config.spin)),
            ],
            quiet: [AtomicU64::new(0), AtomicU64::new(0)],
            sleeps_at_once: config.spin.is_zero(),
            critical,
            stopped: AtomicBool::new(false),
            warned: Mutex::new(HashSet::new()),
        }
    }

    /// The path of this participant's segment.
    pub fn segment_path(&self) -> &Path {
        &self.own.path
    }

    /// This participant's loans: areas its writers lend samples from, and the resolution
    /// of other participants' references ([`loan`]).
    pub fn loans(&self) -> &Arc<loan::Loans> {
        &self.loans
    }

    /// Port `port`'s quiet mark (see `quiet`), as `rx_of` finds its state.
    fn quiet_of(&self, port: u32) -> &AtomicU64 {
        &self.quiet[rx_index(port)]
    }

    fn rx_of(&self, port: usize) -> io::Result<&Mutex<Rx>> {
        match port as u32 {
            USER_PORT => Ok(&self.rx[0]),
            CRITICAL_PORT if self.critical => Ok(&self.rx[1]),
            _ => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("shm: no source {port}"),
            )),
        }
    }

    /// The segment of `token`, opened once and kept.
    fn peer(&self, token: u64) -> Result<Arc<Segment>, OpenError> {
        if token == self.own.token {
            return Ok(Arc::clone(&self.own));
        }
        if let Some(p) = lock(&self.peers).get(&token) {
            return Ok(Arc::clone(p));
        }
        let seg = Arc::new(Segment::open(&self.dir, token)?);
        Ok(Arc::clone(lock(&self.peers).entry(token).or_insert(seg)))
    }

    /// Forgets `token`'s segment; deletes it when its owner is gone (and it is still the file
    /// of that name).
    fn forget_peer(&self, seg: &Segment) {
        lock(&self.peers).remove(&seg.token);
        if seg.token != self.own.token && seg.map.owner_gone().unwrap_or(false) {
            let same = std::fs::metadata(&seg.path)
                .map(|m| std::os::unix::fs::MetadataExt::ino(&m))
                .ok()
                == seg.map.inode().ok();
            if same && std::fs::remove_file(&seg.path).is_ok() {
                tracing::debug!(segment = %seg.path.display(),
                    "shm: deleted the segment of a participant that is gone");
            }
            self.loans.forget(seg.token);
        }
    }

    fn warn_once(&self, token: u64, what: &str, error: &dyn fmt::Display) {
        let path = segment::path_of(&self.dir, token);
        if lock(&self.warned).insert(token) {
            tracing::warn!(segment = %path.display(), error = %error,
                "shm: {what}; datagrams to this participant go the way it announced next (UDP), \
                 or are dropped if none, until shared memory reaches it");
        } else {
            tracing::debug!(segment = %path.display(), error = %error, "shm: {what}");
        }
    }

    /// Sets up a channel of our segment to `token`'s `port`.
    fn connect(&self, tx: &mut Tx, token: u64, port: u32) -> Option<u32> {
        if tx.failed.get(&token).is_some_and(|t| t.elapsed() < RETRY) {
            return None;
        }
        let failed = |tx: &mut Tx| {
            tx.failed.insert(token, Instant::now());
            None
        };
        let reader = match self.peer(token) {
            Ok(r) => r,
            Err(OpenError::Io(e)) if e.kind() == io::ErrorKind::PermissionDenied => {
                let hint = "it belongs to another user: run both as one user, or give both \
                            [shm] group";
                self.warn_once(
                    token,
                    &format!("cannot open a reader's segment ({hint})"),
                    &e,
                );
                return failed(tx);
            }
            Err(e) => {
                self.warn_once(token, "cannot use a reader's segment", &e);
                if matches!(e, OpenError::Invalid(_)) {
                    Counters::add(&self.counters.malformed, 1);
                }
                return failed(tx);
            }
        };
        if reader.state() == STATE_CLOSED {
            return failed(tx);
        }
        // Enter our token in its incoming table (once).
        let me = self.own.token;
        let entries = reader.layout.p.incoming;
        let known = (0..entries).any(|i| {
            reader
                .incoming(i)
                .is_some_and(|e| e.load(Ordering::Acquire) == me)
        });
        if !known {
            let entered = (0..entries).any(|i| {
                reader.incoming(i).is_some_and(|e| {
                    e.compare_exchange(0, me, Ordering::AcqRel, Ordering::Acquire)
                        .is_ok()
                })
            });
            if !entered {
                let e = io::Error::other("its incoming table is full");
                self.warn_once(token, "cannot send to a reader", &e);
                return failed(tx);
            }
        }
        let Some(c) = tx.channels.iter().position(Option::is_none) else {
            let e = io::Error::other(format!(
                "all {} channels of {} are in use: raise [shm] channels",
                self.own.layout.p.channels,
                self.own.path.display()
            ));
            self.warn_once(token, "cannot send to another reader", &e);
            return failed(tx);
        };
        let c = c as u32;
        let words = |f| self.own.channel_u32(c, f);
        if let (Some(p), Some(h), Some(ep), Some(r)) = (
            words(channel::PORT),
            words(channel::HEAD),
            words(channel::EPOCH),
            self.own.channel_reader(c),
        ) {
            p.store(port, Ordering::Relaxed);
            // Ring index 0 again: no entry may carry a stamp of this round yet.
            for i in 0..self.own.layout.p.ring {
                if let Some(e) = self.own.ring_entry(c, i) {
                    e.stamp.store(0, Ordering::Relaxed);
                }
            }
            h.store(0, Ordering::Relaxed);
            // Release: a reader that sees the new epoch sees the cleared stamps and head.
            ep.fetch_add(1, Ordering::Release);
            r.store(token, Ordering::Release);
        }
        tx.channels[c as usize] = Some(TxChannel {
            reader: Arc::clone(&reader),
            port,
            tail: 0,
            head: 0,
            entries: vec![0; self.own.layout.p.ring as usize],
            checked: (Instant::now(), 0),
        });
        tx.by_dest.insert((token, port), c);
        reader
            .u32(header::INCOMING_GEN)
            .fetch_add(1, Ordering::AcqRel);
        Some(c)
    }

    /// Closes channel `c` because its reader closed or died (deleting the reader's segment
    /// then), or misbehaved.
    fn close_channel(&self, tx: &mut Tx, c: u32) {
        let reader = tx
            .channels
            .get(c as usize)
            .and_then(Option::as_ref)
            .map(|ch| Arc::clone(&ch.reader));
        tx.close(&self.own, c);
        if let Some(r) = reader {
            let still_used = tx
                .channels
                .iter()
                .flatten()
                .any(|ch| ch.reader.token == r.token);
            if !still_used {
                self.forget_peer(&r);
            }
        }
    }

    /// Whether channel `c`'s reader is gone (checked at most every [`LIVENESS_PERIOD`]
    /// while it does not move); closes the channel when it is.
    fn reader_gone(&self, tx: &mut Tx, c: u32) -> bool {
        let Some(ch) = tx.channels.get_mut(c as usize).and_then(Option::as_mut) else {
            return true;
        };
        let closed = ch.reader.state() == STATE_CLOSED;
        let gone = closed || {
            let (at, head) = ch.checked;
            if head != ch.head || at.elapsed() < LIVENESS_PERIOD {
                if head != ch.head {
                    ch.checked = (Instant::now(), ch.head);
                }
                false
            } else {
                ch.checked = (Instant::now(), ch.head);
                ch.reader.token != self.own.token && ch.reader.map.owner_gone().unwrap_or(false)
            }
        };
        if gone {
            tracing::debug!(
                reader = format_args!("{:016x}", ch.reader.token),
                closed,
                "shm: reader gone, its channel closed and its slots freed"
            );
            self.close_channel(tx, c);
        }
        gone
    }

    /// Frees what every reader released; checks readers that hold slots without moving.
    fn sweep_channels(&self, tx: &mut Tx) {
        for c in 0..tx.channels.len() as u32 {
            if tx.channels[c as usize].is_none() {
                continue;
            }
            if tx.reclaim(&self.own, c) == Reclaim::Corrupt {
                self.corrupt_reader(tx, c);
                continue;
            }
            let pending = tx.channels[c as usize]
                .as_ref()
                .is_some_and(|ch| ch.head != ch.tail || ch.reader.state() == STATE_CLOSED);
            if pending {
                self.reader_gone(tx, c);
            }
        }
        tx.last_sweep = map::coarse_now();
    }

    fn corrupt_reader(&self, tx: &mut Tx, c: u32) {
        Counters::add(&self.counters.malformed, 1);
        if let Some(ch) = tx.channels[c as usize].as_ref() {
            tracing::warn!(
                reader = format_args!("{:016x}", ch.reader.token),
                "shm: a reader published a head it was never given; its channel is closed"
            );
        }
        self.close_channel(tx, c);
    }

    /// Publishes the first `len` bytes of `buf` to every reader of `dests` (one slot for
    /// all, or a copy in each ring entry when small) and rings their doorbells; the readers
    /// it cannot set a channel up for go in `refused`, and `buf` comes back if there are any.
    fn send_to(
        &self,
        buf: TxBuffer,
        len: usize,
        dests: &[Locator],
        refused: &mut Vec<Locator>,
    ) -> io::Result<Option<TxBuffer>> {
        let before = refused.len();
        let data = &buf[..len.min(buf.len())];
        // Doorbells to ring once the lock is released (each wake is a system call): the
        // sending thread's list, taken out and put back, so a warm thread allocates nothing.
        let mut wake = TO_WAKE.with(|w| std::mem::take(&mut *w.borrow_mut()));
        let mut tx = lock(&self.tx);
        if map::coarse_now().saturating_sub(tx.last_sweep) >= IDLE_CHECK {
            self.sweep_channels(&mut tx);
        }
        let mut slot = None;
        for d in dests {
            let Some((token, port)) = self.parse(d) else {
                Counters::add(&self.counters.skipped_locators, 1);
                continue;
            };
            let c = match tx.by_dest.get(&(token, port)) {
                Some(&c) => c,
                None => match self.connect(&mut tx, token, port) {
                    Some(c) => c,
                    None => {
                        // Out of reach after all: the caller's to send another way.
                        refused.push(*d);
                        continue;
                    }
                },
            };
            let stored = if data.len() <= entry::INLINE {
                // Into the ring entry itself: no slot.
                Stored::Inline(data)
            } else {
                if slot.is_none() {
                    let mut got = self.slot_with(&mut tx, data);
                    if got == Ok(None) {
                        self.sweep_channels(&mut tx);
                        got = self.slot_with(&mut tx, data);
                    }
                    match got {
                        Ok(Some(s)) => slot = Some(s),
                        Ok(None) => {
                            Counters::add(&self.counters.send_drops, 1);
                            continue;
                        }
                        Err(()) => break,
                    }
                }
                let Some(s) = slot else { continue };
                // One slot, shared by every reader it is published to.
                Stored::Slot(s, data.len() as u32)
            };
            if !self.push(&mut tx, c, stored) {
                Counters::add(&self.counters.send_drops, 1);
                continue;
            }
            self.published(&tx, c, port, data.len(), &mut wake);
        }
        if let Some(s) = slot {
            if tx.refs.get(s as usize) == Some(&0) {
                // Published to nobody: back to the free list.
                tx.refs[s as usize] = 1;
                tx.release(&self.own, s);
            }
        }
        drop(tx);
        ring_doorbells(&mut wake);
        TO_WAKE.with(|w| *w.borrow_mut() = wake);
        Ok((refused.len() > before).then_some(buf))
    }

    /// Publishes the datagram `stored` holds on channel `c`; `false` when its ring is full
    /// (or the entry could not be written).
    fn push(&self, tx: &mut Tx, c: u32, stored: Stored<'_>) -> bool {
        let closed = !tx.channels[c as usize]
            .as_ref()
            .is_some_and(|ch| ch.reader.state() != STATE_CLOSED);
        if closed {
            // One load per datagram: a reader that closed is dropped at once.
            self.reader_gone(tx, c);
            return false;
        }
        let ring = self.own.layout.p.ring;
        // The reader's head is a word it writes at every datagram it takes: reading it is a
        // cache miss on another core's line. It is read (and what the reader released freed)
        // only once the ring looks half full from here; a pool that runs dry sweeps every
        // channel (`sweep_channels`) and the periodic sweep finds the rest.
        let half_full = tx.channels[c as usize]
            .as_ref()
            .is_some_and(|ch| ch.tail.wrapping_sub(ch.head) >= (ring / 2).max(1));
        if half_full && tx.reclaim(&self.own, c) == Reclaim::Corrupt {
            self.corrupt_reader(tx, c);
            return false;
        }
        let full = tx.channels[c as usize]
            .as_ref()
            .is_some_and(|ch| ch.tail.wrapping_sub(ch.head) >= ring);
        if full {
            // A slow reader loses this one (reliability repairs); a dead one its channel.
            self.reader_gone(tx, c);
            return false;
        }
        let Some(ch) = tx.channels.get_mut(c as usize).and_then(Option::as_mut) else {
            return false;
        };
        let Some(entry) = self.own.ring_entry(c, ch.tail) else {
            return false;
        };
        let (slot, len) = match stored {
            Stored::Slot(s, len) => (s, len),
            Stored::Inline(data) => {
                if data.len() > entry::INLINE || !self.own.map.write(entry.data, data) {
                    return false;
                }
                (INLINE_SLOT, data.len() as u32)
            }
        };
        entry.slot.store(slot, Ordering::Relaxed);
        entry.len.store(len, Ordering::Relaxed);
        // The stamp last: a reader that sees it sees the slot, the length and the datagram.
        entry.stamp.store(layout::stamp(ch.tail), Ordering::Release);
        ch.entries[(ch.tail & (ring - 1)) as usize] = slot;
        ch.tail = ch.tail.wrapping_add(1);
        if let Some(r) = tx.refs.get_mut(slot as usize) {
            *r += 1;
        }
        true
    }

    /// Reads what waits on `port`'s channels into `batch`.
    fn fill(&self, port: u32, rx: &mut Rx, batch: &mut RecvBatch) -> usize {
        batch.begin();
        let generation = self.own.u32(header::INCOMING_GEN).load(Ordering::Acquire);
        if rx.generation != Some(generation) {
            rx.generation = Some(generation);
            self.attach(port, rx);
        }
        let n = rx.attached.len();
        let mut drained = true;
        let mut detach = false;
        for k in 0..n {
            let i = (rx.next + k) % n;
            let ch = &mut rx.attached[i];
            match self.read_channel(port, ch, batch) {
                Outcome::Drained => {}
                Outcome::More => {
                    drained = false;
                    break;
                }
                Outcome::Detach => detach = true,
            }
        }
        if n > 0 {
            rx.next = (rx.next + 1) % n;
        }
        if detach {
            self.detach_gone(port, rx);
            // A channel set up anew for us (another port, another index) is found again.
            rx.generation = None;
        }
        if drained {
            batch.set_drained();
        }
        batch.len()
    }

    /// Reads channel `ch` into `batch` until one of them is exhausted.
    fn read_channel(&self, port: u32, ch: &mut RxChannel, batch: &mut RecvBatch) -> Outcome {
        let w = &ch.writer;
        if w.state() == STATE_CLOSED {
            return Outcome::Detach;
        }
        let (Some(reader), Some(on), Some(epoch), Some(head)) = (
            w.channel_reader(ch.c),
            w.channel_u32(ch.c, channel::PORT),
            w.channel_u32(ch.c, channel::EPOCH),
            w.channel_u32(ch.c, channel::HEAD),
        ) else {
            return Outcome::Detach;
        };
        // Still ours, for this port (a writer may have given the channel to another reader,
        // or set it up anew for another port of ours).
        if reader.load(Ordering::Acquire) != self.own.token || on.load(Ordering::Relaxed) != port {
            return Outcome::Detach;
        }
        let e = epoch.load(Ordering::Acquire);
        if e != ch.epoch {
            // Set up anew by its writer: start where it says.
            ch.epoch = e;
            ch.head = head.load(Ordering::Acquire);
        }
        let ring = w.layout.p.ring;
        let source = locator(self.prefix, w.token, port);
        let start = ch.head;
        let mut result = Outcome::Drained;
        // At most a ring per call, whatever a writer keeps stamping meanwhile.
        for _ in 0..ring {
            let Some(entry) = w.ring_entry(ch.c, ch.head) else {
                return Outcome::Detach;
            };
            let stamp = entry.stamp.load(Ordering::Acquire);
            if stamp != layout::stamp(ch.head) {
                // Not written yet: the stamp of the round before, or none since set-up.
                if stamp == 0 || stamp == layout::stamp(ch.head.wrapping_sub(ring)) {
                    break;
                }
                Counters::add(&self.counters.malformed, 1);
                tracing::debug!(
                    writer = format_args!("{:016x}", w.token),
                    stamp,
                    head = ch.head,
                    "shm: a ring entry's stamp is no ring index of this channel; skipped"
                );
                ch.head = ch.head.wrapping_add(1);
                continue;
            }
            if batch.is_full() {
                result = Outcome::More;
                break;
            }
            let slot = entry.slot.load(Ordering::Relaxed);
            let len = entry.len.load(Ordering::Relaxed) as usize;
            let at = match slot {
                INLINE_SLOT => (len <= entry::INLINE).then_some(entry.data),
                _ => w
                    .layout
                    .slot(slot)
                    .filter(|&(_, cap)| len <= cap)
                    .map(|(at, _)| at),
            };
            match at {
                Some(at) => {
                    let before = batch.len();
                    batch.push_with(source, len, &self.counters, |dst| w.map.read(at, dst));
                    if batch.len() > before {
                        // Under the lock of this port's receive state (`receive`).
                        let counts = &self.received[rx_index(port)];
                        Counters::add_locked(&counts.datagrams, 1);
                        Counters::add_locked(&counts.bytes, len as u64);
                    }
                }
                None => {
                    Counters::add(&self.counters.malformed, 1);
                    tracing::debug!(
                        writer = format_args!("{:016x}", w.token),
                        slot,
                        len,
                        "shm: a ring entry names no slot, or a length beyond its slot or itself; dropped"
                    );
                }
            }
            ch.head = ch.head.wrapping_add(1);
        }
        if ch.head != start {
            head.store(ch.head, Ordering::Release);
        }
        result
    }

    /// Finds the channels for `port` that the writers in our incoming table hold.
    fn attach(&self, port: u32, rx: &mut Rx) {
        let me = self.own.token;
        for i in 0..self.own.layout.p.incoming {
            let Some(entry) = self.own.incoming(i) else {
                continue;
            };
            let token = entry.load(Ordering::Acquire);
            if token == 0 {
                continue;
            }
            let writer = match self.peer(token) {
                Ok(w) => w,
                Err(OpenError::NotReady) => {
                    rx.generation = None;
                    continue;
                }
                Err(e) => {
                    if matches!(e, OpenError::Invalid(_)) {
                        Counters::add(&self.counters.malformed, 1);
                    }
                    tracing::debug!(writer = format_args!("{token:016x}"), error = %e,
                        "shm: incoming entry names no usable segment; removed");
                    let _ = entry.compare_exchange(token, 0, Ordering::AcqRel, Ordering::Relaxed);
                    continue;
                }
            };
            if writer.state() == STATE_CLOSED {
                let _ = entry.compare_exchange(token, 0, Ordering::AcqRel, Ordering::Relaxed);
                self.forget_peer(&writer);
                continue;
            }
            for c in 0..writer.layout.p.channels {
                let ours = writer
                    .channel_reader(c)
                    .is_some_and(|r| r.load(Ordering::Acquire) == me)
                    && writer
                        .channel_u32(c, channel::PORT)
                        .is_some_and(|p| p.load(Ordering::Relaxed) == port);
                let known = rx
                    .attached
                    .iter()
                    .any(|a| a.writer.token == token && a.c == c);
                if ours && !known {
                    let word = |f| {
                        writer
                            .channel_u32(c, f)
                            .map_or(0, |w| w.load(Ordering::Acquire))
                    };
                    rx.attached.push(RxChannel {
                        writer: Arc::clone(&writer),
                        c,
                        epoch: word(channel::EPOCH),
                        head: word(channel::HEAD),
                    });
                }
            }
        }
    }

    /// Drops channels of `port` whose writer closed, died, or took them back.
    fn detach_gone(&self, port: u32, rx: &mut Rx) {
        let me = self.own.token;
        let mut gone = Vec::new();
        rx.attached.retain(|a| {
            let w = &a.writer;
            let ours = w
                .channel_reader(a.c)
                .is_some_and(|r| r.load(Ordering::Acquire) == me)
                && w.channel_u32(a.c, channel::PORT)
                    .is_some_and(|p| p.load(Ordering::Relaxed) == port);
            let keep = ours && w.state() != STATE_CLOSED;
            if !keep && w.state() == STATE_CLOSED {
                gone.push(Arc::clone(w));
            }
            keep
        });
        for w in gone {
            self.retire_writer(&w);
        }
        rx.next = 0;
    }

    /// Removes a closed or dead writer from our incoming table and forgets its segment.
    fn retire_writer(&self, w: &Segment) {
        for i in 0..self.own.layout.p.incoming {
            if let Some(e) = self.own.incoming(i) {
                let _ = e.compare_exchange(w.token, 0, Ordering::AcqRel, Ordering::Relaxed);
            }
        }
        self.forget_peer(w);
    }

    /// Checks that the writers of `rx` are alive; retires the dead.
    fn check_writers(&self, rx: &mut Rx) {
        rx.checked = map::coarse_now();
        let mut dead: Vec<Arc<Segment>> = Vec::new();
        for a in &rx.attached {
            let w = &a.writer;
            if w.token != self.own.token
                && !dead.iter().any(|d| d.token == w.token)
                && (w.state() == STATE_CLOSED || w.map.owner_gone().unwrap_or(false))
            {
                dead.push(Arc::clone(w));
            }
        }
        if dead.is_empty() {
            return;
        }
        rx.attached
            .retain(|a| !dead.iter().any(|d| d.token == a.writer.token));
        rx.next = 0;
        for w in &dead {
            tracing::debug!(
                writer = format_args!("{:016x}", w.token),
                "shm: writer gone; detached"
            );
            self.retire_writer(w);
        }
    }

    /// A slot of ours holding `data`: `Ok(None)` when none is free, `Err` when it could not
    /// be written (counted).
    fn slot_with(&self, tx: &mut Tx, data: &[u8]) -> Result<Option<u32>, ()> {
        let Some(s) = tx.alloc(&self.own, data.len()) else {
            return Ok(None);
        };
        let written = self
            .own
            .layout
            .slot(s)
            .is_some_and(|(at, _)| self.own.map.write(at, data));
        if !written {
            tx.refs[s as usize] = 1;
            tx.release(&self.own, s);
            Counters::add(&self.counters.send_errors, 1);
            return Err(());
        }
        Ok(Some(s))
    }

    /// A datagram of `len` bytes was pushed on channel `c` (for `port`): counted, and its
    /// reader's doorbell counted up; a reader asleep on it goes into `wake`.
    fn published(
        &self,
        tx: &Tx,
        c: u32,
        port: u32,
        len: usize,
        wake: &mut Vec<(Arc<Segment>, u32)>,
    ) {
        Counters::add_locked(&self.counters.datagrams_sent, 1);
        Counters::add_locked(&self.counters.bytes_sent, len as u64);
        let Some(reader) = tx.channels[c as usize].as_ref().map(|ch| &ch.reader) else {
            return;
        };
        if let Some((seq, waiters)) = reader.doorbell(port) {
            seq.fetch_add(1, Ordering::SeqCst);
            if waiters.load(Ordering::SeqCst) & WAITER_FUTEX != 0 {
                wake.push((Arc::clone(reader), port));
            }
        }
    }

    fn parse(&self, l: &Locator) -> Option<(u64, u32)> {
        if l.kind != Locator::KIND_TACHYON_SHM || l.address[..8] != self.prefix {
            return None;
        }
        let mut t = [0; 8];
        t.copy_from_slice(&l.address[8..]);
        let token = u64::from_be_bytes(t);
        (token != 0 && (l.port == USER_PORT || l.port == CRITICAL_PORT)).then_some((token, l.port))
    }
}

/// Where a datagram being published is.
#[derive(Clone, Copy)]
enum Stored<'a> {
    /// In a slot of ours (the slot, the datagram's length).
    Slot(u32, u32),
    /// Not yet anywhere: small enough for the ring entry itself ([`entry::INLINE`]).
    Inline(&'a [u8]),
}

/// What reading a channel ended with.
enum Outcome {
    /// It is empty.
    Drained,
    /// The batch is full; more waits.
    More,
    /// The channel is no longer ours.
    Detach,
}

impl Drop for ShmTransport {
    fn drop(&mut self) {
        self.own
            .u32(header::STATE)
            .store(STATE_CLOSED, Ordering::Release);
        // Leave the incoming tables of the readers we sent to, and wake them to notice.
        let me = self.own.token;
        let tx = lock(&self.tx);
        for ch in tx.channels.iter().flatten() {
            let r = &ch.reader;
            for i in 0..r.layout.p.incoming {
                if let Some(e) = r.incoming(i) {
                    let _ = e.compare_exchange(me, 0, Ordering::AcqRel, Ordering::Relaxed);
                }
            }
            r.u32(header::INCOMING_GEN).fetch_add(1, Ordering::AcqRel);
        }
        drop(tx);
        if let Err(e) = std::fs::remove_file(&self.own.path) {
            tracing::debug!(segment = %self.own.path.display(), error = %e,
                "shm: could not delete the segment");
        }
    }
}

impl Transport for ShmTransport {
    fn name(&self) -> &'static str {
        "shm"
    }

    fn locators(&self) -> &TransportLocators {
        &self.locators
    }

    fn reach(&self) -> Reach {
        Reach {
            kind: Locator::KIND_TACHYON_SHM,
            address_prefix: self.prefix.to_vec(),
            multicast: false,
        }
    }

    fn preference(&self) -> u8 {
        10
    }

    fn max_datagram(&self) -> usize {
        self.max_datagram
    }

    fn sources(&self) -> Vec<RxSource> {
        let mut s = vec![RxSource {
            id: USER_PORT as usize,
            fd: None,
            traffic: Traffic::UserData,
        }];
        if self.critical {
            s.push(RxSource {
                id: CRITICAL_PORT as usize,
                fd: None,
                traffic: Traffic::Critical,
            });
        }
        s
    }

    fn receive(&self, source: usize, batch: &mut RecvBatch) -> io::Result<usize> {
        let port = source as u32;
        let rx = self.rx_of(source)?;
        // A busy-polling thread asks again and again: it looks at each ring's next entry
        // itself, the line its writer stamps, not at the doorbell. A doorbell watched
        // between two vCPUs put two more cache-line transfers before every datagram: the
        // writer's count (a locked add, which waits for the entry's line first) moving the
        // doorbell's line away from the watcher, then the entry's line fetched after it. The
        // quiet mark is left as it is: it holds a doorbell count only a look that emptied the
        // rings saw, and anything published since moved the count past it.
        let mut rx = lock(rx);
        Ok(self.fill(port, &mut rx, batch))
    }

    fn watches_before_blocking(&self) -> bool {
        true
    }

    fn receive_wait(&self, source: usize, batch: &mut RecvBatch) -> io::Result<usize> {
        let port = source as u32;
        let rx = self.rx_of(source)?;
        let (seq, waiters) = self
            .own
            .doorbell(port)
            .ok_or_else(|| io::Error::other("shm: no doorbell"))?;
        let quiet = self.quiet_of(port);
        // Whether this call watched the doorbell already (or has no watch to make), and
        // what it saw.
        let mut watched = self.sleeps_at_once;
        let mut saw = None;
        loop {
            if self.stopped.load(Ordering::Acquire) {
                batch.begin();
                return Ok(0);
            }
            let seen = seq.load(Ordering::SeqCst);
            if watched && saw.is_none() && quiet.load(Ordering::Relaxed) == quiet_tag(seen) {
                // Nothing new since a look that emptied every ring, no watch to decide or to
                // note: to sleep without the port's lock (a ping-pong's every other pass).
                waiters.fetch_or(WAITER_FUTEX, Ordering::SeqCst);
                if seq.load(Ordering::SeqCst) == seen && !self.stopped.load(Ordering::Acquire) {
                    map::futex_wait(seq, seen);
                }
                waiters.fetch_and(!WAITER_FUTEX, Ordering::SeqCst);
                continue;
            }
            let mut state = lock(rx);
            match saw.take() {
                Some(Some(how)) => state.spin.caught(how),
                Some(None) => state.spin.record(false),
                None => {}
            }
            if map::coarse_now().saturating_sub(state.checked) >= IDLE_CHECK {
                self.check_writers(&mut state);
            }
            // A writer bumps `seq` after it published: when `seq` has not moved since a
            // look that emptied every ring, there is nothing to look at (what a writer
            // published meanwhile without bumping yet, its bump brings: the futex returns at
            // once). A look that found datagrams and emptied the rings counts too: the next
            // call then sleeps without looking again (a ping-pong's every other look).
            if quiet.load(Ordering::Relaxed) != quiet_tag(seen) {
                let n = self.fill(port, &mut state, batch);
                let mark = if batch.drained() { quiet_tag(seen) } else { 0 };
                quiet.store(mark, Ordering::Relaxed);
                if n > 0 {
                    return Ok(n);
                }
            }
            if !watched {
                // Once per call: watch a moment before sleeping, if that pays.
                watched = true;
                if let Some(window) = state.spin.due() {
                    // Each ring's next entry, the line its writer stamps, is watched itself
                    // (as a busy-polling `receive` looks at it), with the port's lock held;
                    // the doorbell only for what no attached ring shows (a new channel).
                    // Between two vCPUs a watched doorbell put two more cache-line transfers
                    // before the datagram: the writer's count moving the doorbell's line
                    // away, then the entry's line fetched only after it.
                    let rings = &state.attached;
                    let arrived = || any_stamped(rings) || seq.load(Ordering::Acquire) != seen;
                    saw = Some(crate::spin::watch(arrived, window, &self.stopped));
                    drop(state);
                    continue;
                }
            }
            // Say we sleep, then look at `seq` once more: a writer that published before
            // it saw the flag bumped it after we read it (and the futex would return at once).
            waiters.fetch_or(WAITER_FUTEX, Ordering::SeqCst);
            drop(state);
            if seq.load(Ordering::SeqCst) != seen {
                waiters.fetch_and(!WAITER_FUTEX, Ordering::SeqCst);
                continue;
            }
            if !self.stopped.load(Ordering::Acquire) {
                map::futex_wait(seq, seen);
            }
            waiters.fetch_and(!WAITER_FUTEX, Ordering::SeqCst);
        }
    }

    fn upkeep_interval(&self) -> Option<Duration> {
        Some(IDLE_CHECK)
    }

    fn upkeep(&self) {
        for rx in &self.rx {
            self.check_writers(&mut lock(rx));
        }
    }

    fn interrupt(&self) {
        self.stopped.store(true, Ordering::Release);
        for port in [USER_PORT, CRITICAL_PORT] {
            if let Some((seq, _)) = self.own.doorbell(port) {
                seq.fetch_add(1, Ordering::SeqCst);
                map::futex_wake(seq);
            }
        }
    }

    fn tx_buffer(&self) -> TxBuffer {
        self.pool.take()
    }

    fn send(&self, buf: TxBuffer, len: usize, dests: &[Locator], _priority: i32) -> io::Result<()> {
        let mut refused = Vec::new();
        self.send_to(buf, len, dests, &mut refused)?;
        // Nobody to send them another way: dropped.
        Counters::add(&self.counters.send_drops, refused.len() as u64);
        Ok(())
    }

    fn send_or_refuse(
        &self,
        buf: TxBuffer,
        len: usize,
        dests: &[Locator],
        _priority: i32,
        refused: &mut Vec<Locator>,
    ) -> io::Result<Option<TxBuffer>> {
        let before = refused.len();
        let back = self.send_to(buf, len, dests, refused)?;
        Counters::add(&self.counters.refused, (refused.len() - before) as u64);
        Ok(back)
    }

    fn publishes(&self) -> Option<i32> {
        Some(Locator::KIND_TACHYON_SHM)
    }

    /// The datagram into a slot, its entry stamped on the reader's ring and the doorbell
    /// counted up, nothing logged. `false` — and [`Transport::send`] does it all — when there
    /// is no channel to that reader yet (setting one up opens its segment), the sending state
    /// is locked by another thread, a sweep or a reclaim is due, no slot is free, or the ring
    /// is closed or full.
    fn publish(&self, dest: &Locator, data: &[u8]) -> bool {
        let Some(key) = self.parse(dest) else {
            return false;
        };
        // Not waited for: another thread's send may hold it while it sets up a channel.
        let mut tx = match self.tx.try_lock() {
            Ok(tx) => tx,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return false,
        };
        if map::coarse_now().saturating_sub(tx.last_sweep) >= IDLE_CHECK {
            return false;
        }
        let Some(&c) = tx.by_dest.get(&key) else {
            return false;
        };
        let ring = self.own.layout.p.ring;
        let room = tx.channels[c as usize].as_ref().is_some_and(|ch| {
            ch.reader.state() != STATE_CLOSED && ch.tail.wrapping_sub(ch.head) < (ring / 2).max(1)
        });
        if !room {
            return false;
        }
        let stored = match data.len() <= entry::INLINE {
            // Into the ring entry itself: no slot.
            true => Stored::Inline(data),
            false => match self.slot_with(&mut tx, data) {
                Ok(Some(s)) => Stored::Slot(s, data.len() as u32),
                _ => return false,
            },
        };
        if !self.push(&mut tx, c, stored) {
            // Not expected after the checks above; a slot goes back.
            if let Stored::Slot(s, _) = stored {
                tx.refs[s as usize] = 1;
                tx.release(&self.own, s);
            }
            return false;
        }
        TO_WAKE.with(|w| self.published(&tx, c, key.1, data.len(), &mut w.borrow_mut()));
        true
    }

    fn wake_published(&self) {
        TO_WAKE.with(|w| ring_doorbells(&mut w.borrow_mut()));
    }

    fn stats(&self) -> TransportStats {
        let mut s = self.counters.snapshot();
        for r in &self.received {
            s.datagrams_received += r.datagrams.load(Ordering::Relaxed);
            s.bytes_received += r.bytes.load(Ordering::Relaxed);
        }
        s
    }
}

/// Whether the next entry of one of `rings` is stamped: a datagram to read (an entry with any
/// other stamp is left to [`ShmTransport::fill`], which checks and counts it).
fn any_stamped(rings: &[RxChannel]) -> bool {
    rings.iter().any(|ch| {
        ch.writer
            .ring_entry(ch.c, ch.head)
            .is_some_and(|e| e.stamp.load(Ordering::Acquire) == layout::stamp(ch.head))
    })
}

/// Wakes the readers in `wake` (a system call each), emptying it.
fn ring_doorbells(wake: &mut Vec<(Arc<Segment>, u32)>) {
    for (reader, port) in wake.drain(..) {
        if let Some((seq, _)) = reader.doorbell(port) {
            map::futex_wake(seq);
        }
    }
}

/// A doorbell count as a port's quiet mark (never 0, which says "look").
fn quiet_tag(seen: u32) -> u64 {
    1 << 32 | u64::from(seen)
}

/// The locator of `token`'s port `port`.
fn locator(prefix: [u8; 8], token: u64, port: u32) -> Locator {
    let mut address = [0; 16];
    address[..8].copy_from_slice(&prefix);
    address[8..].copy_from_slice(&token.to_be_bytes());
    Locator {
        kind: Locator::KIND_TACHYON_SHM,
        port,
        address,
    }
}

/// Eight bytes that two participants share exactly when they can open each other's
/// segments: a hash (FNV-1a) of the boot id, the device and inode of `dir` (another mount of
/// `/dev/shm`, in another container, differs), the user, or `group` when one is set, and the
/// versions of the segment and loan-area layouts (two builds of different layouts on one
/// host reach each other over UDP, not through segments neither could read).
fn host_prefix(dir: &Path, group: Option<u32>) -> io::Result<[u8; 8]> {
    use std::os::unix::fs::MetadataExt;
    let meta = std::fs::metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a directory",
        ));
    }
    let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").unwrap_or_default();
    let who = match group {
        Some(g) => format!("g{g}"),
        None => format!(
            "u{}",
            std::fs::metadata("/proc/self")
                .map(|m| m.uid())
                .unwrap_or(0)
        ),
    };
    let place = format!("{}|{}|{}|{who}", boot.trim(), meta.dev(), meta.ino());
    Ok(prefix_of(&place, [layout::VERSION, loan::VERSION]))
}

/// The FNV-1a hash of where segments are (`place`) and the versions of their layouts.
fn prefix_of(place: &str, versions: [u32; 2]) -> [u8; 8] {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let [segment, loans] = versions;
    for b in format!("{place}|v{segment}.{loans}").bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h.to_be_bytes()
}

fn random_token() -> io::Result<u64> {
    let mut b = [0; 8];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom")?, &mut b)?;
    let t = u64::from_ne_bytes(b);
    Ok(if t == 0 { 1 } else { t })
}

/// Deletes the segments and loan areas in `dir` of this user whose owner is gone.
fn sweep(dir: &Path) {
    loan::delete_dead_areas(dir, None);
    use std::os::unix::fs::MetadataExt;
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(token) = name.to_str().and_then(segment::token_of) else {
            continue;
        };
        let path = segment::path_of(dir, token);
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        if !meta.is_file() || Some(meta.uid()) != uid {
            continue;
        }
        if meta.len() == 0 {
            if map::abandoned_empty(&path, STALE_INIT) && std::fs::remove_file(&path).is_ok() {
                tracing::info!(segment = %path.display(),
                    "shm: deleted an empty segment whose creator died before sizing it");
            }
            continue;
        }
        let Ok(m) = map::Mapping::open(&path) else {
            continue;
        };
        if !m.owner_gone().unwrap_or(false) {
            continue;
        }
        let young = meta
            .modified()
            .ok()
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age < STALE_INIT);
        let initialising = m
            .u32_at(header::STATE)
            .is_some_and(|s| s.load(Ordering::Acquire) == layout::STATE_INIT);
        if initialising && young {
            continue;
        }
        if std::fs::remove_file(&path).is_ok() {
            tracing::info!(segment = %path.display(),
                "shm: deleted a segment left by a participant that is gone");
        }
    }
}

/// What to say when our segment cannot be created.
fn create_advice(path: &Path, p: &Params, e: &io::Error) -> String {
    let size = layout::Layout::new(*p).map_or(0, |l| l.total);
    let mib = size as f64 / f64::from(1 << 20);
    let fix = match e.raw_os_error() {
        Some(libc::ENOSPC) | Some(libc::ENOMEM) | Some(libc::EFBIG) => format!(
            "{} has no room for {mib:.1} MiB: free it (df -h {}), enlarge it (mount -o \
             remount,size=... or docker --shm-size), lower [shm] large_slots or \
             small_slots, or turn shared memory off ([transports] shm = false)",
            path.parent()
                .map_or("/dev/shm".into(), |d| d.display().to_string()),
            path.parent()
                .map_or("/dev/shm".into(), |d| d.display().to_string()),
        ),
        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => format!(
            "no permission to create files in {}: set [shm] dir to a writable \
             tmpfs, or turn shared memory off ([transports] shm = false)",
            path.parent()
                .map_or("/dev/shm".into(), |d| d.display().to_string()),
        ),
        _ => "turn shared memory off ([transports] shm = false) if this persists".into(),
    };
    format!(
        "create the shared-memory segment {} ({mib:.1} MiB): {fix}",
        path.display()
    )
}

#[cfg(test)]
mod tests;
