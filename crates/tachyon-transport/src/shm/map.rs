//! The unsafe part of the shared-memory transport: mapping a segment file, the atomics and
//! bytes inside it, `flock` as the owner's liveness, and futex wait/wake.
//!
//! Everything else reaches shared memory through [`Mapping`]'s checked accessors: an offset
//! outside the mapping, or misaligned, gives `None`; nothing outside this file ever holds a
//! raw pointer into a segment. Datagrams are copied in and out with `copy_nonoverlapping`
//! only (another process may change those bytes at any time); the one place a slice into
//! shared memory is formed is a loan area's slot (`super::loan`), through the `unsafe`
//! [`Mapping::bytes`] and [`Mapping::bytes_mut`], whose callers own the slot or hold it.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicU64};
use std::time::Duration;

/// A segment file mapped shared and read-write, with the file kept open (its `flock`).
#[derive(Debug)]
pub(crate) struct Mapping {
    ptr: NonNull<u8>,
    len: usize,
    file: File,
}

// SAFETY: the mapping is plain shared memory; every access through it is either atomic or a
// bounds-checked copy, and the pointer stays valid until `Drop` unmaps it.
unsafe impl Send for Mapping {}
// SAFETY: as above: `&Mapping` only hands out atomics and copies.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Creates `path` (it must not exist) of `len` bytes with permission bits `mode`, owned
    /// by group `gid` when given, with every page reserved (`fallocate`: a full `/dev/shm`
    /// is an error now, not a `SIGBUS` later), locked exclusively by this process (its
    /// liveness: the lock goes when the process does), and mapped.
    pub(crate) fn create(
        path: &Path,
        len: usize,
        mode: u32,
        gid: Option<u32>,
    ) -> io::Result<Mapping> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(mode)
            .custom_flags(libc::O_CLOEXEC)
            .open(path)?;
        let fd = file.as_raw_fd();
        let result = (|| {
            // SAFETY: `fd` is an open descriptor owned by `file`.
            if unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                return Err(io::Error::last_os_error());
            }
            // The umask may have removed bits of `mode`: set them exactly.
            // SAFETY: as above.
            if unsafe { libc::fchmod(fd, mode) } != 0 {
                return Err(io::Error::last_os_error());
            }
            if let Some(gid) = gid {
                // SAFETY: as above; `u32::MAX` (-1) keeps the owner.
                if unsafe { libc::fchown(fd, u32::MAX, gid) } != 0 {
                    return Err(io::Error::last_os_error());
                }
            }
            let size = libc::off_t::try_from(len)
                .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "segment too large"))?;
            // SAFETY: as above.
            let rc = unsafe { libc::fallocate(fd, 0, 0, size) };
            if rc != 0 {
                return Err(io::Error::last_os_error());
            }
            Mapping::map(file, len)
        })();
        if result.is_err() {
            let _ = std::fs::remove_file(path);
        }
        result
    }

    /// Opens and maps an existing segment, whatever its size (the caller validates it).
    pub(crate) fn open(path: &Path) -> io::Result<Mapping> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "not a regular file",
            ));
        }
        let len = usize::try_from(meta.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "segment too large"))?;
        Mapping::map(file, len)
    }

    fn map(file: File, len: usize) -> io::Result<Mapping> {
        if len == 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "empty segment"));
        }
        // SAFETY: a fresh shared mapping of `len` bytes of an open file: no Rust object
        // aliases it; the kernel picks the address.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = NonNull::new(ptr.cast::<u8>())
            .ok_or_else(|| io::Error::other("mmap returned a null mapping"))?;
        Ok(Mapping { ptr, len, file })
    }

    /// Its length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The file's inode number (to tell a file from another of the same name).
    pub(crate) fn inode(&self) -> io::Result<u64> {
        use std::os::unix::fs::MetadataExt;
        Ok(self.file.metadata()?.ino())
    }

    fn check(&self, offset: usize, size: usize, align: usize) -> Option<*mut u8> {
        let end = offset.checked_add(size)?;
        if end > self.len || offset % align != 0 {
            return None;
        }
        // SAFETY: `offset + size <= len`, so the pointer stays inside the mapping.
        Some(unsafe { self.ptr.as_ptr().add(offset) })
    }

    /// The `u32` at `offset`, if it lies inside and is aligned.
    pub(crate) fn u32_at(&self, offset: usize) -> Option<&AtomicU32> {
        let p = self.check(offset, 4, 4)?;
        // SAFETY: in bounds and aligned (checked), valid while `self` is mapped (the borrow
        // ties it to `self`); an atomic may be changed concurrently by anyone.
        Some(unsafe { &*p.cast::<AtomicU32>() })
    }

    /// The `u64` at `offset`, if it lies inside and is aligned.
    pub(crate) fn u64_at(&self, offset: usize) -> Option<&AtomicU64> {
        let p = self.check(offset, 8, 8)?;
        // SAFETY: as in `u32_at`.
        Some(unsafe { &*p.cast::<AtomicU64>() })
    }

    /// Copies `src` to `offset`; `false` (nothing written) when it does not fit.
    pub(crate) fn write(&self, offset: usize, src: &[u8]) -> bool {
        let Some(p) = self.check(offset, src.len(), 1) else {
            return false;
        };
        // SAFETY: the destination range is inside the mapping (checked) and cannot overlap
        // `src`, a Rust slice outside it... unless `src` was itself read from this mapping,
        // which no caller does (they copy out first).
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), p, src.len()) };
        true
    }

    /// Copies `dst.len()` bytes from `offset` into `dst`; `false` (nothing read) when they
    /// do not lie inside. The bytes may be changing while they are copied (a hostile
    /// writer): the copy is then garbage, never out of bounds.
    pub(crate) fn read(&self, offset: usize, dst: &mut [u8]) -> bool {
        let Some(p) = self.check(offset, dst.len(), 1) else {
            return false;
        };
        // SAFETY: the source range is inside the mapping (checked); `dst` is private memory.
        unsafe { std::ptr::copy_nonoverlapping(p.cast_const(), dst.as_mut_ptr(), dst.len()) };
        true
    }

    /// The bytes at `offset..offset + len`, if they lie inside.
    ///
    /// # Safety
    ///
    /// While the slice lives, nothing in this process writes those bytes (no slice of
    /// [`bytes_mut`](Self::bytes_mut) overlaps them). Another process may still write them:
    /// callers hand them only to code for which any bytes are valid and whose indexing is
    /// bounds-checked (a decoder, a type every bit pattern of which is a value).
    pub(crate) unsafe fn bytes(&self, offset: usize, len: usize) -> Option<&[u8]> {
        let p = self.check(offset, len, 1)?;
        // SAFETY: in bounds (checked), valid while `self` is mapped (the borrow ties it to
        // `self`); the caller keeps this process from writing it meanwhile.
        Some(unsafe { std::slice::from_raw_parts(p.cast_const(), len) })
    }

    /// The bytes at `offset..offset + len`, writable, if they lie inside.
    ///
    /// # Safety
    ///
    /// While the slice lives, nothing else in this process reads or writes those bytes (the
    /// caller owns them exclusively, as a writer owns a slot it lent out).
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn bytes_mut(&self, offset: usize, len: usize) -> Option<&mut [u8]> {
        let p = self.check(offset, len, 1)?;
        // SAFETY: in bounds (checked), valid while `self` is mapped; exclusive by the
        // caller's contract.
        Some(unsafe { std::slice::from_raw_parts_mut(p, len) })
    }

    /// Whether the segment's owner is gone: takes a shared `flock` without waiting, which
    /// succeeds only when no process holds the owner's exclusive one (it died, or closed).
    /// The lock taken is released at once.
    pub(crate) fn owner_gone(&self) -> io::Result<bool> {
        unlocked(&self.file)
    }
}

/// Whether no process holds an exclusive `flock` on `file`: takes a shared one without
/// waiting and releases it at once.
fn unlocked(file: &File) -> io::Result<bool> {
    let fd = file.as_raw_fd();
    // SAFETY: `fd` is an open descriptor owned by `file`.
    if unsafe { libc::flock(fd, libc::LOCK_SH | libc::LOCK_NB) } == 0 {
        // SAFETY: as above.
        unsafe { libc::flock(fd, libc::LOCK_UN) };
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EWOULDBLOCK) => Ok(false),
        _ => Err(e),
    }
}

/// Whether `path` is an empty file at least `min_age` old that no process locks: what a
/// creator killed between creating the file and sizing it leaves (`create` locks it right
/// after creating it, so a live creator is never mistaken for a dead one). `Mapping::open`
/// refuses empty files, so the sweepers ask this first.
pub(crate) fn abandoned_empty(path: &Path, min_age: Duration) -> bool {
    let Ok(file) = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(path)
    else {
        return false;
    };
    let Ok(meta) = file.metadata() else {
        return false;
    };
    let old = meta
        .modified()
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age >= min_age);
    meta.is_file() && meta.len() == 0 && old && unlocked(&file).unwrap_or(false)
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly what `map` mapped; no reference into it outlives `self`
        // (every accessor borrows `self`).
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// Sleeps while `word` holds `expected` (a shared futex: the word may live in memory another
/// process maps), without a timeout: a timed wait arms a kernel timer and cancels it on every
/// wake-up, which cost 0.43 µs per round trip of two such waits here (`futex_floor.c` with a
/// one-second timeout, one vCPU, 2026-11-28). Returns on a wake-up, a signal, or at once when
/// the word already differs.
pub(crate) fn futex_wait(word: &AtomicU32, expected: u32) {
    // SAFETY: `word` is a valid, aligned u32 for the duration of the call; the kernel only
    // reads it (no timeout is passed).
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// The coarse monotonic clock (`CLOCK_MONOTONIC_COARSE`, a few milliseconds' resolution,
/// [`crate::clock::coarse_nanos`]) as time since boot: for the once-a-second checks of the
/// send and receive paths.
pub(crate) fn coarse_now() -> Duration {
    Duration::from_nanos(crate::clock::coarse_nanos())
}

/// Wakes every thread sleeping on `word` in [`futex_wait`], in any process.
pub(crate) fn futex_wake(word: &AtomicU32) {
    // SAFETY: `word` is a valid, aligned u32; FUTEX_WAKE does not dereference anything else.
    unsafe {
        libc::syscall(libc::SYS_futex, word.as_ptr(), libc::FUTEX_WAKE, i32::MAX);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_unlocked_file_is_abandoned_a_locked_or_sized_one_is_not() {
        let dir = std::env::temp_dir().join(format!("tachyon-map-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let path = dir.join("empty");
        let file = File::create(&path).expect("create");
        // Left by a creator killed before sizing it: abandoned (any age here).
        assert!(abandoned_empty(&path, Duration::ZERO));
        // Not yet old enough.
        assert!(!abandoned_empty(&path, Duration::from_secs(3600)));
        // A live creator holds its lock.
        // SAFETY: `file` owns its open descriptor.
        assert_eq!(
            unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
            0
        );
        assert!(!abandoned_empty(&path, Duration::ZERO));
        drop(file);
        // A sized file is not this case (the owner check of a mapping decides it).
        std::fs::write(&path, [0u8; 8]).expect("write");
        assert!(!abandoned_empty(&path, Duration::ZERO));
        assert!(!abandoned_empty(&dir.join("missing"), Duration::ZERO));
        std::fs::remove_dir_all(&dir).expect("cleanup");
    }
}
