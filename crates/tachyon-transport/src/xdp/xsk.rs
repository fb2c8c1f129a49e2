//! An AF_XDP socket on one queue of an interface: a UMEM of preallocated frames and its four
//! rings (fill and RX for receiving, TX and completion for transmitting), each a
//! single-producer single-consumer queue shared with the kernel through `mmap`.
//!
//! The receive side (RX, fill) belongs to the one thread that receives; the transmit side
//! (TX, completion, the free frames) is taken by a sender for the few stores of one frame,
//! never across a system call: the `sendto` that tells the kernel to transmit is made after
//! the lock is released.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Mutex;

/// How the socket binds to the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Copy {
    /// Let the kernel choose (zero-copy where the driver has it).
    Auto,
    /// Frames copied between the driver's buffers and the UMEM (every driver).
    Copy,
    /// The driver DMAs into the UMEM (drivers with AF_XDP zero-copy support).
    ZeroCopy,
}

/// The UMEM's layout: `frames` frames of `frame_size` bytes, the first half lent to the
/// kernel for receiving, the second half for transmitting.
#[derive(Clone, Copy, Debug)]
pub struct Geometry {
    /// Frames in all (a power of two, at least 4).
    pub frames: u32,
    /// Bytes per frame: 2048 or 4096.
    pub frame_size: u32,
}

/// Octets in front of the payload of a frame lent as a `TxBuffer`: room for Ethernet, 802.1Q,
/// IPv4 and UDP headers, written there when it is sent.
pub const HEADROOM: usize = 64;

/// What [`Xsk::send`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sent {
    /// Queued for transmission.
    Queued,
    /// No free frame: every transmit frame waits for the kernel (a counted drop).
    Full,
    /// The frame could not be built (too long).
    Refused,
}

struct Mmap {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: a mapping is plain memory; which parts each thread touches is governed by the
// ring protocol and the locks of `Xsk`.
unsafe impl Send for Mmap {}
// SAFETY: as above.
unsafe impl Sync for Mmap {}

impl Mmap {
    fn new(fd: Option<RawFd>, len: usize, offset: libc::off_t) -> io::Result<Mmap> {
        let (flags, fd) = match fd {
            Some(fd) => (libc::MAP_SHARED | libc::MAP_POPULATE, fd),
            None => (
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_POPULATE,
                -1,
            ),
        };
        // SAFETY: a fresh mapping at an address the kernel chooses; nothing aliases it.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                flags,
                fd,
                offset,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        NonNull::new(p.cast::<u8>())
            .map(|ptr| Mmap { ptr, len })
            .ok_or_else(|| io::Error::other("mmap returned null"))
    }
}

impl Drop for Mmap {
    fn drop(&mut self) {
        // SAFETY: the mapping was made by `Mmap::new` with this length and is unmapped once.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

/// One ring: its producer and consumer words, its flags and its entries, in a mapping of
/// the socket.
struct Ring {
    map: Mmap,
    producer: usize,
    consumer: usize,
    flags: usize,
    desc: usize,
    size: u32,
    entry: usize,
}

impl Ring {
    fn map(
        fd: RawFd,
        off: &libc::xdp_ring_offset,
        size: u32,
        entry: usize,
        pgoff: libc::off_t,
    ) -> io::Result<Ring> {
        let len = off.desc as usize + size as usize * entry;
        let map = Mmap::new(Some(fd), len, pgoff)?;
        Ok(Ring {
            map,
            producer: off.producer as usize,
            consumer: off.consumer as usize,
            flags: off.flags as usize,
            desc: off.desc as usize,
            size,
            entry,
        })
    }

    fn word(&self, at: usize) -> &AtomicU32 {
        // SAFETY: `at` is an offset the kernel gave for a 4-aligned u32 inside the mapping,
        // which lives as long as `self`; the kernel and this process access it atomically.
        unsafe { &*self.map.ptr.as_ptr().add(at).cast::<AtomicU32>() }
    }
    fn producer(&self) -> &AtomicU32 {
        self.word(self.producer)
    }
    fn consumer(&self) -> &AtomicU32 {
        self.word(self.consumer)
    }
    fn needs_wakeup(&self) -> bool {
        self.word(self.flags).load(Ordering::Relaxed) & libc::XDP_RING_NEED_WAKEUP != 0
    }
    /// The entry at `index` (modulo the size).
    fn slot(&self, index: u32) -> *mut u8 {
        let i = (index & (self.size - 1)) as usize;
        // SAFETY: `i < size`, so the entry lies inside the mapping (`desc + size * entry`).
        unsafe { self.map.ptr.as_ptr().add(self.desc + i * self.entry) }
    }
    fn write_addr(&self, index: u32, addr: u64) {
        // SAFETY: an 8-byte entry of a fill ring, owned by the producer (this process)
        // until the producer word is published.
        unsafe { self.slot(index).cast::<u64>().write_volatile(addr) }
    }
    fn read_addr(&self, index: u32) -> u64 {
        // SAFETY: an 8-byte entry of a completion ring the kernel published (acquire load
        // of the producer word before).
        unsafe { self.slot(index).cast::<u64>().read_volatile() }
    }
    fn write_desc(&self, index: u32, d: libc::xdp_desc) {
        // SAFETY: a 16-byte `xdp_desc` entry of the TX ring, owned by this process until
        // the producer word is published.
        unsafe { self.slot(index).cast::<libc::xdp_desc>().write_volatile(d) }
    }
    fn read_desc(&self, index: u32) -> libc::xdp_desc {
        // SAFETY: an `xdp_desc` entry of the RX ring the kernel published.
        unsafe { self.slot(index).cast::<libc::xdp_desc>().read_volatile() }
    }
}

/// What a receiver holds the lock for: the fill ring (frames given back to the kernel).
struct RxSide {
    fill: Ring,
}

struct TxSide {
    tx: Ring,
    comp: Ring,
    free: Vec<u64>,
}

/// An AF_XDP socket bound to one queue: see the [module documentation](self).
pub struct Xsk {
    // Field order: the rings are unmapped before the socket closes, the UMEM last.
    /// The RX ring. Its indices are atomics in the mapping, so whether frames wait is read
    /// without a lock (a spinning receiver asks that most of the time); taking frames from
    /// it is done holding `rx`.
    rx_ring: Ring,
    rx: Mutex<RxSide>,
    tx: Mutex<TxSide>,
    fd: OwnedFd,
    umem: Mmap,
    geometry: Geometry,
    zero_copy: bool,
}

impl std::fmt::Debug for Xsk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Xsk")
            .field("fd", &self.fd.as_raw_fd())
            .field("geometry", &self.geometry)
            .field("zero_copy", &self.zero_copy)
            .finish()
    }
}

fn check(r: libc::c_int) -> io::Result<()> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

fn setsockopt<T>(fd: RawFd, name: libc::c_int, v: &T) -> io::Result<()> {
    // SAFETY: `v` points to a live value of the size passed.
    check(unsafe {
        libc::setsockopt(
            fd,
            libc::SOL_XDP,
            name,
            (v as *const T).cast(),
            std::mem::size_of::<T>() as libc::socklen_t,
        )
    })
}

/// What failed while opening, for the transport's error message.
#[derive(Debug)]
pub struct OpenError {
    /// The step: "socket", "UMEM registration", "ring mapping", "bind".
    pub step: &'static str,
    /// The kernel's error.
    pub error: io::Error,
}

impl Xsk {
    /// Opens a socket bound to queue `queue` of interface `ifindex`.
    pub fn open(
        ifindex: u32,
        queue: u32,
        geometry: Geometry,
        copy: Copy,
    ) -> Result<Xsk, OpenError> {
        let at = |step: &'static str| move |error: io::Error| OpenError { step, error };
        if !geometry.frame_size.is_power_of_two() {
            // The kernel refuses it too (aligned UMEM); the masks below rely on it.
            return Err(OpenError {
                step: "UMEM geometry",
                error: io::Error::from(io::ErrorKind::InvalidInput),
            });
        }
        // SAFETY: a plain socket(2) call; the descriptor is owned at once.
        let raw = unsafe { libc::socket(libc::AF_XDP, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) };
        if raw < 0 {
            return Err(OpenError {
                step: "socket",
                error: io::Error::last_os_error(),
            });
        }
        // SAFETY: `raw` is a new descriptor nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        let len = geometry.frames as usize * geometry.frame_size as usize;
        let umem = Mmap::new(None, len, 0).map_err(at("UMEM allocation"))?;
        let reg = libc::xdp_umem_reg {
            addr: umem.ptr.as_ptr() as u64,
            len: len as u64,
            chunk_size: geometry.frame_size,
            headroom: 0,
            flags: 0,
            tx_metadata_len: 0,
        };
        setsockopt(raw, libc::XDP_UMEM_REG, &reg).map_err(at("UMEM registration"))?;
        let half = geometry.frames / 2;
        for ring in [
            libc::XDP_UMEM_FILL_RING,
            libc::XDP_UMEM_COMPLETION_RING,
            libc::XDP_RX_RING,
            libc::XDP_TX_RING,
        ] {
            setsockopt(raw, ring, &half).map_err(at("ring sizes"))?;
        }
        // SAFETY: zeroed plain-data struct.
        let mut off: libc::xdp_mmap_offsets = unsafe { std::mem::zeroed() };
        let mut optlen = std::mem::size_of::<libc::xdp_mmap_offsets>() as libc::socklen_t;
        // SAFETY: `off` is writable for `optlen` bytes.
        check(unsafe {
            libc::getsockopt(
                raw,
                libc::SOL_XDP,
                libc::XDP_MMAP_OFFSETS,
                (&mut off as *mut libc::xdp_mmap_offsets).cast(),
                &mut optlen,
            )
        })
        .map_err(at("ring offsets"))?;
        let desc = std::mem::size_of::<libc::xdp_desc>();
        let rx = Ring::map(raw, &off.rx, half, desc, libc::XDP_PGOFF_RX_RING)
            .map_err(at("ring mapping"))?;
        let tx = Ring::map(raw, &off.tx, half, desc, libc::XDP_PGOFF_TX_RING)
            .map_err(at("ring mapping"))?;
        let fill = Ring::map(
            raw,
            &off.fr,
            half,
            8,
            libc::XDP_UMEM_PGOFF_FILL_RING as libc::off_t,
        )
        .map_err(at("ring mapping"))?;
        let comp = Ring::map(
            raw,
            &off.cr,
            half,
            8,
            libc::XDP_UMEM_PGOFF_COMPLETION_RING as libc::off_t,
        )
        .map_err(at("ring mapping"))?;
        // The receive half goes to the kernel at once.
        let fs = u64::from(geometry.frame_size);
        let base = fill.producer().load(Ordering::Relaxed);
        for i in 0..half {
            fill.write_addr(base.wrapping_add(i), u64::from(i) * fs);
        }
        fill.producer()
            .store(base.wrapping_add(half), Ordering::Release);
        let free = (half..geometry.frames).map(|i| u64::from(i) * fs).collect();
        let mut flags = libc::XDP_USE_NEED_WAKEUP;
        flags |= match copy {
            Copy::Auto => 0,
            Copy::Copy => libc::XDP_COPY,
            Copy::ZeroCopy => libc::XDP_ZEROCOPY,
        };
        let sa = libc::sockaddr_xdp {
            sxdp_family: libc::AF_XDP as u16,
            sxdp_flags: flags,
            sxdp_ifindex: ifindex,
            sxdp_queue_id: queue,
            sxdp_shared_umem_fd: 0,
        };
        // SAFETY: `sa` is a valid sockaddr_xdp of the size passed.
        check(unsafe {
            libc::bind(
                raw,
                (&sa as *const libc::sockaddr_xdp).cast(),
                std::mem::size_of::<libc::sockaddr_xdp>() as libc::socklen_t,
            )
        })
        .map_err(at("bind"))?;
        let zero_copy = options_zero_copy(raw);
        Ok(Xsk {
            rx_ring: rx,
            rx: Mutex::new(RxSide { fill }),
            tx: Mutex::new(TxSide { tx, comp, free }),
            fd,
            umem,
            geometry,
            zero_copy,
        })
    }

    /// The socket's descriptor (readable when received frames wait; for `poll` and the
    /// XSKMAP).
    pub fn fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }

    /// Whether the kernel bound it in zero-copy mode.
    pub fn zero_copy(&self) -> bool {
        self.zero_copy
    }

    /// Hands up to `max` received frames to `each`, in order, and gives their memory back to
    /// the kernel. Returns how many it took from the ring (frames whose descriptor lies
    /// outside the UMEM are not handed out, and counted in the second number).
    pub fn receive(&self, max: u32, mut each: impl FnMut(&[u8])) -> (u32, u32) {
        let ring = &self.rx_ring;
        if ring.producer().load(Ordering::Acquire) == ring.consumer().load(Ordering::Relaxed) {
            // Nothing waits: said without the lock.
            return (0, 0);
        }
        let side = self.rx.lock().unwrap_or_else(|p| p.into_inner());
        let cons = ring.consumer().load(Ordering::Relaxed);
        let avail = ring.producer().load(Ordering::Acquire).wrapping_sub(cons);
        let n = avail.min(max);
        if n == 0 {
            drop(side);
            return (0, 0);
        }
        let fill_at = side.fill.producer().load(Ordering::Relaxed);
        let mask = !(u64::from(self.geometry.frame_size) - 1);
        let mut bad = 0;
        for i in 0..n {
            let d = ring.read_desc(cons.wrapping_add(i));
            let end = d.addr.checked_add(u64::from(d.len));
            match end {
                Some(end) if end <= self.umem.len as u64 => {
                    // SAFETY: the frame lies inside the UMEM (checked) and belongs to this
                    // process until its address goes back on the fill ring below.
                    let frame = unsafe {
                        std::slice::from_raw_parts(
                            self.umem.ptr.as_ptr().add(d.addr as usize),
                            d.len as usize,
                        )
                    };
                    each(frame);
                }
                _ => bad += 1,
            }
            side.fill.write_addr(
                fill_at.wrapping_add(i),
                (d.addr & mask).min(self.last_frame()),
            );
        }
        ring.consumer()
            .store(cons.wrapping_add(n), Ordering::Release);
        side.fill
            .producer()
            .store(fill_at.wrapping_add(n), Ordering::Release);
        let kick = side.fill.needs_wakeup();
        drop(side);
        if kick {
            self.kick_rx();
        }
        (n, bad)
    }

    fn last_frame(&self) -> u64 {
        u64::from(self.geometry.frames - 1) * u64::from(self.geometry.frame_size)
    }

    /// Builds one frame with `build` (given the whole frame; it returns the length used, or
    /// `None` to give up) and queues it for transmission.
    /// `queued` is called under the transmit lock once the frame is queued
    /// ([`submit`](Self::submit)).
    pub fn send(
        &self,
        build: impl FnOnce(&mut [u8]) -> Option<usize>,
        queued: impl FnOnce(),
    ) -> Sent {
        let Some(addr) = self.lend() else {
            self.kick_tx();
            return Sent::Full;
        };
        let fs = self.geometry.frame_size as usize;
        let Some(len) = build(self.whole_frame_mut(addr)).filter(|&l| l <= fs) else {
            self.release_frame(addr);
            return Sent::Refused;
        };
        self.submit(addr, 0, len, queued)
    }

    /// A free transmit frame (its UMEM address), now the caller's until it is submitted or
    /// released; `None` when every one is in flight.
    pub fn lend(&self) -> Option<u64> {
        let mut side = self.tx.lock().unwrap_or_else(|p| p.into_inner());
        // Frames the kernel has sent come back first.
        let cons = side.comp.consumer().load(Ordering::Relaxed);
        let done = side
            .comp
            .producer()
            .load(Ordering::Acquire)
            .wrapping_sub(cons);
        let base = !(u64::from(self.geometry.frame_size) - 1);
        for i in 0..done {
            // The descriptor's address: its frame's, plus where the datagram started in it.
            let a = side.comp.read_addr(cons.wrapping_add(i)) & base;
            // A completion that is not a transmit frame (never from a sound kernel) is
            // dropped rather than lent twice.
            if self.is_tx_frame(a) {
                side.free.push(a);
            }
        }
        if done > 0 {
            side.comp
                .consumer()
                .store(cons.wrapping_add(done), Ordering::Release);
        }
        side.free.pop()
    }

    /// Gives back a lent frame unsent.
    pub fn release_frame(&self, addr: u64) {
        if self.is_tx_frame(addr) {
            let mut side = self.tx.lock().unwrap_or_else(|p| p.into_inner());
            side.free.push(addr);
        }
    }

    /// Whether `addr` is the start of a transmit frame (the UMEM's second half). The frame
    /// size is a power of two (2048 or 4096, as the kernel's aligned UMEM requires), so the
    /// alignment is a mask, not a division: this runs at every access to a lent frame.
    fn is_tx_frame(&self, addr: u64) -> bool {
        let fs = u64::from(self.geometry.frame_size);
        let first = u64::from(self.geometry.frames / 2) * fs;
        addr & (fs - 1) == 0 && addr >= first && addr + fs <= self.umem.len as u64
    }

    /// Bytes per frame.
    pub fn frame_size(&self) -> usize {
        self.geometry.frame_size as usize
    }

    /// The whole of lent frame `addr` (for its one holder).
    #[allow(clippy::mut_from_ref)]
    pub(super) fn whole_frame_mut(&self, addr: u64) -> &mut [u8] {
        if !self.is_tx_frame(addr) {
            return &mut [];
        }
        // SAFETY: `addr` starts a transmit frame inside the UMEM (checked); it was lent to
        // exactly one caller (popped from the free list under the lock), who alone asks for
        // it until it submits or releases it; the kernel does not touch a frame that is not
        // on its TX ring.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.umem.ptr.as_ptr().add(addr as usize),
                self.geometry.frame_size as usize,
            )
        }
    }

    /// The whole of lent frame `addr`, to read.
    fn whole_frame(&self, addr: u64) -> &[u8] {
        if !self.is_tx_frame(addr) {
            return &[];
        }
        // SAFETY: as in `whole_frame_mut`; only its one holder reads it, and never while
        // holding the `&mut` of `whole_frame_mut` (the TxBuffer's borrows say so).
        unsafe {
            std::slice::from_raw_parts(
                self.umem.ptr.as_ptr().add(addr as usize),
                self.geometry.frame_size as usize,
            )
        }
    }

    /// Queues `len` bytes at `offset` of lent frame `addr` for transmission, and calls
    /// `queued` under the transmit lock once it is: what only one thread at a time may do,
    /// such as adding to counters only senders through this socket add to, with a load and
    /// a store instead of an atomic read-modify-write (`Counters::add_locked`).
    pub fn submit(&self, addr: u64, offset: usize, len: usize, queued: impl FnOnce()) -> Sent {
        let fs = self.geometry.frame_size as usize;
        if !self.is_tx_frame(addr) || offset.checked_add(len).map_or(true, |e| e > fs) {
            self.release_frame(addr);
            return Sent::Refused;
        }
        let side = self.tx.lock().unwrap_or_else(|p| p.into_inner());
        let prod = side.tx.producer().load(Ordering::Relaxed);
        side.tx.write_desc(
            prod,
            libc::xdp_desc {
                addr: addr + offset as u64,
                len: len as u32,
                options: 0,
            },
        );
        side.tx
            .producer()
            .store(prod.wrapping_add(1), Ordering::Release);
        queued();
        let kick = side.tx.needs_wakeup() || !self.zero_copy;
        drop(side);
        if kick {
            self.kick_tx();
        }
        Sent::Queued
    }

    /// Tells the kernel the TX ring has frames (copy mode transmits in this call). A raw
    /// system call, not glibc's `sendto`, whose cancellation-point bookkeeping costs two
    /// atomic operations per call in a threaded process (`crate::sys`).
    fn kick_tx(&self) {
        // SAFETY: sendto with no data and no address on our own socket: no memory is passed.
        unsafe {
            libc::syscall(
                libc::SYS_sendto,
                libc::c_long::from(self.fd()),
                std::ptr::null::<u8>(),
                0 as libc::c_long,
                libc::c_long::from(libc::MSG_DONTWAIT),
                std::ptr::null::<libc::sockaddr>(),
                0 as libc::c_long,
            );
        }
    }

    fn kick_rx(&self) {
        // SAFETY: recvfrom with no buffer and no address on our own socket (it only wakes the
        // driver): no memory is passed.
        unsafe {
            libc::syscall(
                libc::SYS_recvfrom,
                libc::c_long::from(self.fd()),
                std::ptr::null_mut::<u8>(),
                0 as libc::c_long,
                libc::c_long::from(libc::MSG_DONTWAIT),
                std::ptr::null_mut::<libc::sockaddr>(),
                std::ptr::null_mut::<libc::socklen_t>(),
            );
        }
    }

    /// Waits until received frames wait, `other` (an eventfd) is readable or `timeout_ms`
    /// passed (-1: no limit); `Ok(true)` when frames wait.
    pub fn wait_readable(&self, other: RawFd, timeout_ms: i32) -> io::Result<bool> {
        let mut fds = [
            libc::pollfd {
                fd: self.fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: other,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        // SAFETY: `fds` is a valid array of two pollfd.
        let r = unsafe { libc::poll(fds.as_mut_ptr(), 2, timeout_ms) };
        if r < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(false)
            } else {
                Err(e)
            };
        }
        Ok(fds[0].revents & libc::POLLIN != 0)
    }

    /// Drops and counts of the kernel side (`XDP_STATISTICS`): frames dropped for want of
    /// fill entries or RX room, and invalid descriptors.
    pub fn kernel_drops(&self) -> u64 {
        // SAFETY: zeroed plain-data struct.
        let mut s: libc::xdp_statistics = unsafe { std::mem::zeroed() };
        let mut len = std::mem::size_of::<libc::xdp_statistics>() as libc::socklen_t;
        // SAFETY: `s` is writable for `len` bytes.
        let r = unsafe {
            libc::getsockopt(
                self.fd(),
                libc::SOL_XDP,
                libc::XDP_STATISTICS,
                (&mut s as *mut libc::xdp_statistics).cast(),
                &mut len,
            )
        };
        if r < 0 {
            return 0;
        }
        s.rx_dropped + s.rx_ring_full + s.rx_invalid_descs + s.tx_invalid_descs
    }
}

fn options_zero_copy(fd: RawFd) -> bool {
    let mut opts = 0u32;
    let mut len = std::mem::size_of::<u32>() as libc::socklen_t;
    // SAFETY: `opts` is writable for `len` bytes.
    let r = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_XDP,
            libc::XDP_OPTIONS,
            (&mut opts as *mut u32).cast(),
            &mut len,
        )
    };
    r == 0 && opts & libc::XDP_OPTIONS_ZEROCOPY != 0
}

/// An eventfd that wakes [`Xsk::wait_readable`] for good.
#[derive(Debug)]
pub struct Interrupt(OwnedFd);

impl Interrupt {
    /// A new one, not yet signalled.
    pub fn new() -> io::Result<Interrupt> {
        // SAFETY: a plain eventfd(2) call; the descriptor is owned at once.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a new descriptor nothing else owns.
        Ok(Interrupt(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Its descriptor.
    pub fn fd(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// Signals it (it stays readable: never read).
    pub fn signal(&self) {
        let one = 1u64;
        // SAFETY: writes 8 bytes from a live u64 to our eventfd.
        unsafe {
            libc::write(self.fd(), (&one as *const u64).cast(), 8);
        }
    }
}

/// Index, MAC and MTU of interface `name` in the calling thread's network namespace (ioctls
/// on a UDP socket; `/sys/class/net` shows the namespace sysfs was mounted in, which is not
/// always this one).
pub fn interface_facts(name: &str) -> io::Result<(u32, [u8; 6], usize)> {
    const SIOCGIFMTU: libc::c_ulong = 0x8921;
    const SIOCGIFHWADDR: libc::c_ulong = 0x8927;
    const SIOCGIFINDEX: libc::c_ulong = 0x8933;
    if name.is_empty() || name.len() >= libc::IFNAMSIZ || name.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not an interface name",
        ));
    }
    // SAFETY: a plain socket(2) call; the descriptor is owned at once.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: a new descriptor nothing else owns.
    let sock = unsafe { OwnedFd::from_raw_fd(raw) };
    let request = |op: libc::c_ulong| -> io::Result<libc::ifreq> {
        // SAFETY: `ifreq` is plain data; all zeroes is a valid value.
        let mut r: libc::ifreq = unsafe { std::mem::zeroed() };
        for (d, s) in r.ifr_name.iter_mut().zip(name.bytes()) {
            *d = s as libc::c_char;
        }
        // SAFETY: `r` is a valid ifreq for these three requests, which only write into it.
        check(unsafe { libc::ioctl(sock.as_raw_fd(), op as _, &mut r) })?;
        Ok(r)
    };
    let index = request(SIOCGIFINDEX)?;
    let hw = request(SIOCGIFHWADDR)?;
    let mtu = request(SIOCGIFMTU)?;
    // SAFETY: each request filled the union member read here.
    let (index, data, mtu) = unsafe {
        (
            index.ifr_ifru.ifru_ifindex,
            hw.ifr_ifru.ifru_hwaddr.sa_data,
            mtu.ifr_ifru.ifru_mtu,
        )
    };
    let mut mac = [0u8; 6];
    for (d, s) in mac.iter_mut().zip(data.iter()) {
        *d = *s as u8;
    }
    Ok((index as u32, mac, mtu.max(0) as usize))
}

impl crate::transport::FrameLender for Xsk {
    fn frame(&self, id: u64, len: usize) -> &[u8] {
        let f = self.whole_frame(id);
        let end = (HEADROOM + len).min(f.len());
        &f[HEADROOM.min(end)..end]
    }

    fn frame_mut(&self, id: u64, len: usize) -> &mut [u8] {
        let f = self.whole_frame_mut(id);
        let end = (HEADROOM + len).min(f.len());
        &mut f[HEADROOM.min(end)..end]
    }

    fn release(&self, id: u64) {
        self.release_frame(id);
    }
}
