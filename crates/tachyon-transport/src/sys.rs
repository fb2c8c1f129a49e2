//! The only unsafe code of the crate: thin wrappers over `getifaddrs`, `recvmmsg`, `sendmmsg`,
//! `recvfrom`, `send`/`sendto`, integer `setsockopt`, and the thread scheduling calls
//! (`gettid`, `sched_{set,get}affinity`, `sched_setscheduler`,
//! `sched_getscheduler`/`sched_getparam`) and `clock_gettime`. Each function owns every pointer
//! it hands to the kernel for the duration of the call and returns plain Rust values; nothing
//! here keeps a pointer afterwards.
//!
//! The datagram calls are made as raw system calls ([`raw_result`]), not through glibc's
//! functions of the same names: glibc makes those cancellation points, and in a process of
//! more than one thread (every participant's) each call then turns the thread's
//! asynchronous cancellation on before the system call and off after it (two atomic
//! compare-and-swaps, `__pthread_enable_asynccancel` / `__pthread_disable_asynccancel`):
//! about 70 ns of each process's share of a 32 B round trip, measured with `perf record`.
//! Nothing in Tachyon (nor in Rust's standard library) cancels a thread.
use std::ffi::CStr;
use std::io;
use std::mem::{self, MaybeUninit};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::RawFd;
use std::ptr;

/// One entry of `getifaddrs`: an interface with one of its addresses (IPv4 or not).
#[derive(Clone, Debug)]
pub(crate) struct IfAddr {
    /// Interface name, e.g. "eth0".
    pub name: String,
    /// The IPv4 address of this entry; `None` for other families (IPv6, AF_PACKET).
    pub ipv4: Option<Ipv4Addr>,
    /// `IFF_*` flags.
    pub flags: u32,
}

/// All entries of `getifaddrs`, in the kernel's order.
pub(crate) fn getifaddrs() -> io::Result<Vec<IfAddr>> {
    let mut head: *mut libc::ifaddrs = ptr::null_mut();
    // SAFETY: `head` is a valid out-pointer; on success the kernel-side list is ours to read
    // and must be released with `freeifaddrs`, which happens below on every path.
    if unsafe { libc::getifaddrs(&mut head) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let mut out = Vec::new();
    let mut cur = head;
    while !cur.is_null() {
        // SAFETY: `cur` is a non-null node of the list returned by getifaddrs, not yet freed.
        let ifa = unsafe { &*cur };
        let name = if ifa.ifa_name.is_null() {
            String::new()
        } else {
            // SAFETY: `ifa_name` is a NUL-terminated string owned by the list.
            unsafe { CStr::from_ptr(ifa.ifa_name) }
                .to_string_lossy()
                .into_owned()
        };
        let ipv4 = if ifa.ifa_addr.is_null() {
            None
        } else {
            // SAFETY: `ifa_addr` is non-null and points at a sockaddr at least as large as
            // `sockaddr`; we read `sa_family` first and only reinterpret it as `sockaddr_in`
            // when the family says it is one.
            unsafe {
                if i32::from((*ifa.ifa_addr).sa_family) == libc::AF_INET {
                    let sin = &*(ifa.ifa_addr as *const libc::sockaddr_in);
                    Some(Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr)))
                } else {
                    None
                }
            }
        };
        out.push(IfAddr {
            name,
            ipv4,
            flags: ifa.ifa_flags,
        });
        cur = ifa.ifa_next;
    }
    // SAFETY: `head` came from a successful getifaddrs and is freed exactly once; no reference
    // into the list outlives this point (names were copied into owned Strings).
    unsafe { libc::freeifaddrs(head) };
    Ok(out)
}

/// `setsockopt(fd, level, name, &value, sizeof(int))`.
pub(crate) fn set_int_option(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: the option value is a live local `c_int` and the length passed is its size.
    let rc = unsafe {
        libc::setsockopt(
            fd,
            level,
            name,
            ptr::addr_of!(value).cast(),
            mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Datagrams one `recvmmsg` call can take (headers live on the stack).
pub(crate) const RECV_CHUNK: usize = 32;
/// Destinations one `sendmmsg` call can take (headers live on the stack).
pub(crate) const SEND_CHUNK: usize = 64;

/// What `recvmmsg` says about one received datagram.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RecvMeta {
    /// The datagram's full length (may exceed the slot when `truncated`).
    pub len: usize,
    /// The sender, if it is an IPv4 address.
    pub source: Option<SocketAddrV4>,
    /// The datagram did not fit its slot (MSG_TRUNC).
    pub truncated: bool,
}

impl RecvMeta {
    /// What a receive returns once the socket is shut down for reading ([`shutdown_read`]):
    /// an empty message without a sender.
    pub(crate) fn shutdown(&self) -> bool {
        self.len == 0 && self.source.is_none()
    }
}

/// One `recvmmsg` into consecutive `slot_size` slots of `buf`: non-blocking, or, with `wait`,
/// blocking until the first datagram arrives (`MSG_WAITFORONE`; the socket must be in
/// blocking mode, as the transport's are, every other call passing `MSG_DONTWAIT`).
///
/// Receives at most `min(meta.len(), buf.len() / slot_size, RECV_CHUNK)` datagrams and returns
/// how many; `WouldBlock` when none is queued (without `wait`); 0 once the socket was shut
/// down for reading ([`shutdown_read`]). When one datagram is asked for, one `recvfrom`
/// ([`recv_one`]).
pub(crate) fn recvmmsg(
    fd: RawFd,
    buf: &mut [u8],
    slot_size: usize,
    meta: &mut [RecvMeta],
    wait: bool,
) -> io::Result<usize> {
    if slot_size == 0 {
        return Ok(0);
    }
    let n = meta.len().min(buf.len() / slot_size).min(RECV_CHUNK);
    if n == 0 {
        return Ok(0);
    }
    if n == 1 {
        meta[0] = recv_one(fd, &mut buf[..slot_size], wait)?;
        return Ok(1);
    }
    // Only the first `n` entries are set up (and read back).
    let mut addrs = [const { MaybeUninit::<libc::sockaddr_in>::uninit() }; RECV_CHUNK];
    let mut hdrs = [const { MaybeUninit::<libc::mmsghdr>::uninit() }; RECV_CHUNK];
    let mut iovs = [const { MaybeUninit::<libc::iovec>::uninit() }; RECV_CHUNK];
    for (i, slot) in buf.chunks_exact_mut(slot_size).take(n).enumerate() {
        let iov = iovs[i].write(libc::iovec {
            iov_base: slot.as_mut_ptr().cast(),
            iov_len: slot_size,
        });
        // SAFETY: all-zero is a valid value of these plain C structs (null pointers, zero
        // lengths).
        let addr = addrs[i].write(unsafe { mem::zeroed() });
        // SAFETY: as above.
        let hdr = hdrs[i].write(unsafe { mem::zeroed() });
        let h = &mut hdr.msg_hdr;
        h.msg_name = ptr::addr_of_mut!(*addr).cast();
        h.msg_namelen = mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        h.msg_iov = ptr::addr_of_mut!(*iov);
        h.msg_iovlen = 1;
    }
    let block = if wait {
        libc::MSG_WAITFORONE
    } else {
        libc::MSG_DONTWAIT
    };
    // SAFETY: the first `n` headers point at `n` distinct, live, writable slots of `buf`
    // (each `slot_size` bytes, as the iovecs say) and at `n` live `sockaddr_in`s with
    // their true size; all of them outlive the call (which may block, with `wait`: the
    // buffers are borrowed for all of it). MSG_TRUNC makes `msg_len` the datagram's real
    // length.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_recvmmsg,
            libc::c_long::from(fd),
            hdrs.as_mut_ptr().cast::<libc::mmsghdr>(),
            n as libc::c_long,
            libc::c_long::from(block | libc::MSG_TRUNC),
            ptr::null_mut::<libc::timespec>(),
        )
    };
    let got = raw_result(rc)?;
    for i in 0..got.min(n) {
        // SAFETY: entries below `n` were initialized above (and filled in by the kernel).
        let (h, a) = unsafe { (hdrs[i].assume_init_ref(), addrs[i].assume_init_ref()) };
        meta[i] = RecvMeta {
            len: h.msg_len as usize,
            source: sender(a, h.msg_hdr.msg_namelen),
            truncated: h.msg_hdr.msg_flags & libc::MSG_TRUNC != 0 || h.msg_len as usize > slot_size,
        };
    }
    Ok(got)
}

/// One datagram into `slot` (a ping-pong's receive): a `recvfrom`, which the kernel serves
/// with less work than a `recvmsg` (no message header or iovec to copy in and check: about
/// 0.25 µs less per call measured here, 3.34 against 3.61 µs per send and receive) and a
/// `recvmmsg` of one. `MSG_WAITFORONE` means nothing to it: blocking is the socket's mode.
fn recv_one(fd: RawFd, slot: &mut [u8], wait: bool) -> io::Result<RecvMeta> {
    let flags = if wait { 0 } else { libc::MSG_DONTWAIT };
    // SAFETY: all-zero is a valid `sockaddr_in` (family 0: no sender, as after a shutdown).
    let mut addr: libc::sockaddr_in = unsafe { mem::zeroed() };
    let mut addr_len = mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
    // SAFETY: `slot` is live and writable for its whole length, `addr` a live `sockaddr_in`
    // of the size `addr_len` says; both are borrowed for the whole call (which blocks, with
    // `wait`). MSG_TRUNC makes the result the datagram's real length.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_recvfrom,
            libc::c_long::from(fd),
            slot.as_mut_ptr(),
            slot.len(),
            libc::c_long::from(flags | libc::MSG_TRUNC),
            ptr::addr_of_mut!(addr),
            ptr::addr_of_mut!(addr_len),
        )
    };
    let len = raw_result(rc)?;
    Ok(RecvMeta {
        len,
        source: sender(&addr, addr_len),
        truncated: len > slot.len(),
    })
}

/// The sender the kernel wrote into `addr` (`len` octets of it), if an IPv4 one.
fn sender(addr: &libc::sockaddr_in, len: libc::socklen_t) -> Option<SocketAddrV4> {
    (len as usize >= mem::size_of::<libc::sockaddr_in>()
        && i32::from(addr.sin_family) == libc::AF_INET)
        .then(|| {
            SocketAddrV4::new(
                Ipv4Addr::from(u32::from_be(addr.sin_addr.s_addr)),
                u16::from_be(addr.sin_port),
            )
        })
}

/// Shuts `fd` down for reading: a thread blocked in [`recvmmsg`] on it returns (Linux wakes
/// the waiters of a UDP socket on `shutdown` even when it is not connected, which it reports
/// as `ENOTCONN`; that error is expected and ignored).
pub(crate) fn shutdown_read(fd: RawFd) {
    // SAFETY: plain system call on a descriptor we own; no memory is passed.
    let _ = unsafe { libc::shutdown(fd, libc::SHUT_RD) };
}

/// One non-blocking `sendmmsg` of the same `data` to the first `min(dests.len(), SEND_CHUNK)`
/// destinations. All messages share one iovec, so the datagram is never copied in user space.
///
/// Returns how many were sent; fewer than asked means the next one failed (call again from
/// there to learn why).
pub(crate) fn sendmmsg(fd: RawFd, data: &[u8], dests: &[SocketAddrV4]) -> io::Result<usize> {
    let n = dests.len().min(SEND_CHUNK);
    if n == 0 {
        return Ok(0);
    }
    // The kernel only reads through this iovec; the cast to *mut is what the C type demands.
    let mut iov = libc::iovec {
        iov_base: data.as_ptr() as *mut libc::c_void,
        iov_len: data.len(),
    };
    // SAFETY: all-zero is a valid value of these plain C structs.
    let mut addrs: [libc::sockaddr_in; SEND_CHUNK] = unsafe { mem::zeroed() };
    // SAFETY: as above.
    let mut hdrs: [libc::mmsghdr; SEND_CHUNK] = unsafe { mem::zeroed() };
    for (i, d) in dests.iter().take(n).enumerate() {
        addrs[i].sin_family = libc::AF_INET as libc::sa_family_t;
        addrs[i].sin_port = d.port().to_be();
        addrs[i].sin_addr.s_addr = u32::from(*d.ip()).to_be();
        let h = &mut hdrs[i].msg_hdr;
        h.msg_name = ptr::addr_of_mut!(addrs[i]).cast();
        h.msg_namelen = mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        h.msg_iov = ptr::addr_of_mut!(iov);
        h.msg_iovlen = 1;
    }
    // SAFETY: the first `n` headers point at live `sockaddr_in`s of the size given and at one
    // live iovec describing `data`, which the kernel only reads; all outlive the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sendmmsg,
            libc::c_long::from(fd),
            hdrs.as_mut_ptr(),
            n as libc::c_long,
            libc::c_long::from(libc::MSG_DONTWAIT),
        )
    };
    raw_result(rc)
}

/// One datagram of `data` on the connected socket `fd` (`send`), with `flags`.
pub(crate) fn send(fd: RawFd, data: &[u8], flags: libc::c_int) -> io::Result<usize> {
    sendto_raw(fd, data, flags, None)
}

/// One datagram of `data` from socket `fd` to `to` (`sendto`), with `flags`.
pub(crate) fn send_to(
    fd: RawFd,
    data: &[u8],
    flags: libc::c_int,
    to: SocketAddrV4,
) -> io::Result<usize> {
    // SAFETY: all-zero is a valid `sockaddr_in`.
    let mut addr: libc::sockaddr_in = unsafe { mem::zeroed() };
    addr.sin_family = libc::AF_INET as libc::sa_family_t;
    addr.sin_port = to.port().to_be();
    addr.sin_addr.s_addr = u32::from(*to.ip()).to_be();
    sendto_raw(fd, data, flags, Some(&addr))
}

/// `sendto(fd, data, flags, to)` as a raw system call; no address on a connected socket.
fn sendto_raw(
    fd: RawFd,
    data: &[u8],
    flags: libc::c_int,
    to: Option<&libc::sockaddr_in>,
) -> io::Result<usize> {
    let (addr, len) = match to {
        Some(a) => (ptr::from_ref(a), mem::size_of::<libc::sockaddr_in>()),
        None => (ptr::null(), 0),
    };
    // SAFETY: `data` is live and readable for its whole length, `addr` null or a live
    // `sockaddr_in` of the size passed; the kernel only reads both, during the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_sendto,
            libc::c_long::from(fd),
            data.as_ptr(),
            data.len(),
            libc::c_long::from(flags),
            addr,
            len as libc::c_long,
        )
    };
    raw_result(rc)
}

/// The result of a raw system call (`libc::syscall`: -1 and `errno` on failure) as a
/// count.
fn raw_result(rc: libc::c_long) -> io::Result<usize> {
    usize::try_from(rc).map_err(|_| io::Error::last_os_error())
}

/// `getsockopt(fd, level, name)` of an `int` option (tests read back what was set).
#[cfg(test)]
pub(crate) fn get_int_option(
    fd: RawFd,
    level: libc::c_int,
    name: libc::c_int,
) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: value and len are live locals; len holds value's size, as getsockopt requires.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            level,
            name,
            ptr::addr_of_mut!(value).cast(),
            ptr::addr_of_mut!(len),
        )
    };
    if rc == 0 {
        Ok(value)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The kernel's id of the calling thread (`gettid`).
pub(crate) fn gettid() -> libc::pid_t {
    // SAFETY: gettid takes no argument, touches no memory and cannot fail.
    unsafe { libc::gettid() }
}

/// `sched_setaffinity(tid, cpus)`; `tid` 0 is the calling thread. A CPU number at or above
/// `CPU_SETSIZE` is `EINVAL`, as the kernel says for a CPU that does not exist.
pub(crate) fn sched_setaffinity(tid: libc::pid_t, cpus: &[u16]) -> io::Result<()> {
    // SAFETY: all-zero is a valid (empty) `cpu_set_t`, a plain bit array.
    let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
    for &cpu in cpus {
        if usize::from(cpu) >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // SAFETY: `cpu` is below CPU_SETSIZE (checked above), so the bit is inside `set`.
        unsafe { libc::CPU_SET(usize::from(cpu), &mut set) };
    }
    // SAFETY: `set` is a live local and the size passed is its size; the kernel only reads it.
    let rc = unsafe { libc::sched_setaffinity(tid, mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `sched_getaffinity(tid)` as a sorted list of CPU numbers; `tid` 0 is the calling thread.
pub(crate) fn sched_getaffinity(tid: libc::pid_t) -> io::Result<Vec<u16>> {
    // SAFETY: all-zero is a valid (empty) `cpu_set_t`.
    let mut set: libc::cpu_set_t = unsafe { mem::zeroed() };
    // SAFETY: `set` is a live, writable local and the size passed is its size.
    let rc = unsafe { libc::sched_getaffinity(tid, mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    let n = (libc::CPU_SETSIZE as usize).min(usize::from(u16::MAX));
    Ok((0..n)
        // SAFETY: `c` is below CPU_SETSIZE, so the bit read is inside `set`.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .filter_map(|c| u16::try_from(c).ok())
        .collect())
}

/// `sched_setscheduler(tid, policy, priority)`; `tid` 0 is the calling thread.
pub(crate) fn sched_setscheduler(
    tid: libc::pid_t,
    policy: libc::c_int,
    priority: libc::c_int,
) -> io::Result<()> {
    let param = libc::sched_param {
        sched_priority: priority,
    };
    // SAFETY: `param` is a live local the kernel only reads.
    let rc = unsafe { libc::sched_setscheduler(tid, policy, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `sched_getscheduler(tid)` and the priority of `sched_getparam(tid)`.
pub(crate) fn sched_getscheduler(tid: libc::pid_t) -> io::Result<(libc::c_int, libc::c_int)> {
    // SAFETY: no memory is passed.
    let policy = unsafe { libc::sched_getscheduler(tid) };
    if policy < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `param` is a live, writable local of the type the call fills.
    if unsafe { libc::sched_getparam(tid, &mut param) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((policy, param.sched_priority))
}

/// `clock_gettime(clock)` in nanoseconds, `None` if the clock cannot be read.
pub(crate) fn clock_nanos(clock: libc::clockid_t) -> Option<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec on this stack frame, and the kernel (or the
    // vDSO) writes nothing else.
    if unsafe { libc::clock_gettime(clock, &mut ts) } != 0 {
        return None;
    }
    let secs = u64::try_from(ts.tv_sec).ok()?;
    let nanos = u64::try_from(ts.tv_nsec).ok()?;
    secs.checked_mul(1_000_000_000)?.checked_add(nanos)
}
