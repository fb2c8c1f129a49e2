//! A segment: a mapped file of `/dev/shm` with a validated [`Layout`], created by its owner
//! or opened (and checked) by a peer.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use super::layout::{self, header, Layout, Params};
use super::map::Mapping;

/// File names of segments start with this; the rest is the token in hex.
pub(crate) const PREFIX: &str = "tachyon-";

/// A mapped segment and its layout.
#[derive(Debug)]
pub(crate) struct Segment {
    pub map: Mapping,
    pub layout: Layout,
    pub token: u64,
    pub path: PathBuf,
}

/// The path of the segment of `token` in `dir`.
pub(crate) fn path_of(dir: &Path, token: u64) -> PathBuf {
    dir.join(format!("{PREFIX}{token:016x}"))
}

/// The token a file name names, if it is a segment's.
pub(crate) fn token_of(name: &str) -> Option<u64> {
    let hex = name.strip_prefix(PREFIX)?;
    if hex.len() != 16 {
        return None;
    }
    u64::from_str_radix(hex, 16).ok().filter(|&t| t != 0)
}

impl Segment {
    /// Creates this participant's segment.
    pub(crate) fn create(
        dir: &Path,
        token: u64,
        p: Params,
        mode: u32,
        gid: Option<u32>,
    ) -> io::Result<Segment> {
        let layout = Layout::new(p).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let path = path_of(dir, token);
        let map = Mapping::create(&path, layout.total, mode, gid)?;
        let s = Segment {
            map,
            layout,
            token,
            path,
        };
        // Fresh pages are zero: channels free, doorbells and the incoming table empty.
        let words = [
            (header::VERSION, layout::VERSION),
            (header::SMALL_COUNT, p.small_count),
            (header::SMALL_SIZE, p.small_size),
            (header::LARGE_COUNT, p.large_count),
            (header::LARGE_SIZE, p.large_size),
            (header::CHANNELS, p.channels),
            (header::RING, p.ring),
            (header::INCOMING, p.incoming),
            (header::PID, std::process::id()),
        ];
        for (at, v) in words {
            s.u32(at).store(v, Ordering::Relaxed);
        }
        s.u64(header::TOKEN).store(token, Ordering::Relaxed);
        s.u64(header::TOTAL)
            .store(layout.total as u64, Ordering::Relaxed);
        s.u64(header::MAGIC).store(layout::MAGIC, Ordering::Relaxed);
        s.u32(header::STATE)
            .store(layout::STATE_LIVE, Ordering::Release);
        Ok(s)
    }

    /// Opens the segment of `token` and checks it: magic, version, token, numbers within
    /// limits, and a file exactly as large as they say. `Err` says what is wrong.
    pub(crate) fn open(dir: &Path, token: u64) -> Result<Segment, OpenError> {
        let path = path_of(dir, token);
        let map = Mapping::open(&path).map_err(OpenError::Io)?;
        let bad = |what: String| Err(OpenError::Invalid(what));
        if map.len() < 256 {
            return bad(format!("{} bytes, shorter than a header", map.len()));
        }
        let u32_at = |at| map.u32_at(at).map_or(0, |w| w.load(Ordering::Acquire));
        let u64_at = |at| map.u64_at(at).map_or(0, |w| w.load(Ordering::Acquire));
        if u32_at(header::STATE) == layout::STATE_INIT {
            return Err(OpenError::NotReady);
        }
        if u64_at(header::MAGIC) != layout::MAGIC {
            return bad("not a Tachyon segment (magic)".into());
        }
        let version = u32_at(header::VERSION);
        if version != layout::VERSION {
            return bad(format!(
                "layout version {version}, this build speaks {}",
                layout::VERSION
            ));
        }
        if u64_at(header::TOKEN) != token {
            return bad("its token is not its name's".into());
        }
        let p = Params {
            small_count: u32_at(header::SMALL_COUNT),
            small_size: u32_at(header::SMALL_SIZE),
            large_count: u32_at(header::LARGE_COUNT),
            large_size: u32_at(header::LARGE_SIZE),
            channels: u32_at(header::CHANNELS),
            ring: u32_at(header::RING),
            incoming: u32_at(header::INCOMING),
        };
        let layout = match Layout::new(p) {
            Ok(l) => l,
            Err(e) => return bad(e),
        };
        if layout.total != map.len() || u64_at(header::TOTAL) != layout.total as u64 {
            return bad(format!(
                "{} bytes where its numbers make {}",
                map.len(),
                layout.total
            ));
        }
        Ok(Segment {
            map,
            layout,
            token,
            path,
        })
    }

    /// The header word at `at` (a constant of [`header`], always inside).
    pub(crate) fn u32(&self, at: usize) -> &AtomicU32 {
        self.map.u32_at(at).unwrap_or_else(|| unreachable_word())
    }

    /// The header word at `at`.
    pub(crate) fn u64(&self, at: usize) -> &AtomicU64 {
        self.map.u64_at(at).unwrap_or_else(|| unreachable_word())
    }

    /// The segment's state word.
    pub(crate) fn state(&self) -> u32 {
        self.u32(header::STATE).load(Ordering::Acquire)
    }

    /// Port `port`'s doorbell: `seq` and `waiters`.
    pub(crate) fn doorbell(&self, port: u32) -> Option<(&AtomicU32, &AtomicU32)> {
        let at = Layout::doorbell(port)?;
        Some((self.map.u32_at(at)?, self.map.u32_at(at + 4)?))
    }

    /// Channel `c`'s word at `field` (a constant of [`layout::channel`]).
    pub(crate) fn channel_u32(&self, c: u32, field: usize) -> Option<&AtomicU32> {
        self.map.u32_at(self.layout.channel(c)? + field)
    }

    /// Channel `c`'s reader token.
    pub(crate) fn channel_reader(&self, c: u32) -> Option<&AtomicU64> {
        self.map
            .u64_at(self.layout.channel(c)? + layout::channel::READER)
    }

    /// Ring entry `i` of channel `c`: its stamp, slot and length words, and where it holds
    /// a datagram itself.
    pub(crate) fn ring_entry(&self, c: u32, i: u32) -> Option<Entry<'_>> {
        let at = self.layout.ring_entry(self.layout.channel(c)?, i);
        Some(Entry {
            stamp: self.map.u32_at(at + layout::entry::STAMP)?,
            slot: self.map.u32_at(at + layout::entry::SLOT)?,
            len: self.map.u32_at(at + layout::entry::LEN)?,
            data: at + layout::entry::DATA,
        })
    }

    /// Incoming entry `i`.
    pub(crate) fn incoming(&self, i: u32) -> Option<&AtomicU64> {
        self.map.u64_at(self.layout.incoming(i)?)
    }
}

/// A ring entry's words ([`layout::entry`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Entry<'a> {
    pub stamp: &'a AtomicU32,
    pub slot: &'a AtomicU32,
    pub len: &'a AtomicU32,
    /// The offset, in the segment, of the [`layout::entry::INLINE`] bytes where the entry
    /// holds a datagram itself.
    pub data: usize,
}

/// Header words are constants below 256 and every segment has at least 256 bytes (checked on
/// open, and a created one is larger): this is never reached.
#[cold]
fn unreachable_word() -> ! {
    unreachable!("a header word outside a validated segment")
}

/// Why a peer's segment could not be used.
#[derive(Debug)]
pub(crate) enum OpenError {
    /// The file could not be opened or mapped.
    Io(io::Error),
    /// Its owner is still setting it up.
    NotReady,
    /// It is not a segment this build can use.
    Invalid(String),
}

impl std::fmt::Display for OpenError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OpenError::Io(e) => write!(f, "{e}"),
            OpenError::NotReady => write!(f, "still being set up"),
            OpenError::Invalid(what) => write!(f, "rejected: {what}"),
        }
    }
}
