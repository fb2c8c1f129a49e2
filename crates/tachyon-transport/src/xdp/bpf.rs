//! The `bpf(2)` calls the XDP transport needs: an XSKMAP, the program (verified by the
//! kernel, its log returned on refusal), the map entry of a socket, and a BPF link that
//! attaches the program to the interface for as long as its file descriptor is open (so a
//! process killed with SIGKILL leaves no program behind).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use super::program::Insn;

const BPF_MAP_CREATE: libc::c_long = 0;
const BPF_MAP_UPDATE_ELEM: libc::c_long = 2;
const BPF_MAP_DELETE_ELEM: libc::c_long = 3;
const BPF_PROG_LOAD: libc::c_long = 5;
const BPF_LINK_CREATE: libc::c_long = 28;

const BPF_MAP_TYPE_XSKMAP: u32 = 17;
const BPF_PROG_TYPE_XDP: u32 = 6;
const BPF_XDP: u32 = 37;

/// `XDP_FLAGS_SKB_MODE`: generic XDP, in the kernel's stack (every driver).
pub const XDP_FLAGS_SKB_MODE: u32 = 1 << 1;
/// `XDP_FLAGS_DRV_MODE`: native XDP, in the driver.
pub const XDP_FLAGS_DRV_MODE: u32 = 1 << 2;

/// `union bpf_attr`, large enough for every command used here and zeroed (the kernel
/// requires the bytes it does not read to be zero).
#[repr(C, align(8))]
struct Attr([u8; 128]);

impl Attr {
    fn new() -> Attr {
        Attr([0; 128])
    }
    fn u32(&mut self, at: usize, v: u32) -> &mut Self {
        self.0[at..at + 4].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn u64(&mut self, at: usize, v: u64) -> &mut Self {
        self.0[at..at + 8].copy_from_slice(&v.to_ne_bytes());
        self
    }
    fn bytes(&mut self, at: usize, v: &[u8]) -> &mut Self {
        self.0[at..at + v.len()].copy_from_slice(v);
        self
    }
}

fn bpf(cmd: libc::c_long, attr: &mut Attr) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is a valid, writable, 8-aligned buffer of the size passed, zeroed
    // beyond the fields set; every pointer stored in it (instructions, license, log, keys)
    // points to memory the caller keeps alive and sized for the duration of the call.
    let r = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            cmd,
            attr as *mut Attr as *mut libc::c_void,
            std::mem::size_of::<Attr>() as libc::c_uint,
        )
    };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn fd_of(r: libc::c_long) -> OwnedFd {
    // SAFETY: the commands used with this return a new file descriptor that nothing else
    // owns.
    unsafe { OwnedFd::from_raw_fd(r as RawFd) }
}

fn name16(name: &str) -> [u8; 16] {
    let mut n = [0u8; 16];
    for (d, s) in n.iter_mut().zip(name.bytes().take(15)) {
        *d = s;
    }
    n
}

/// A new XSKMAP of `entries` queues.
pub fn create_xskmap(entries: u32) -> io::Result<OwnedFd> {
    let mut a = Attr::new();
    a.u32(0, BPF_MAP_TYPE_XSKMAP)
        .u32(4, 4)
        .u32(8, 4)
        .u32(12, entries)
        .bytes(28, &name16("tachyon_xsks"));
    bpf(BPF_MAP_CREATE, &mut a).map(fd_of)
}

/// Sets `map[key] = value` (for an XSKMAP, the socket's descriptor).
pub fn map_update(map: &OwnedFd, key: u32, value: u32) -> io::Result<()> {
    let mut a = Attr::new();
    a.u32(0, map.as_raw_fd() as u32)
        .u64(8, &key as *const u32 as u64)
        .u64(16, &value as *const u32 as u64);
    bpf(BPF_MAP_UPDATE_ELEM, &mut a).map(drop)
}

/// Removes `map[key]`.
pub fn map_delete(map: &OwnedFd, key: u32) -> io::Result<()> {
    let mut a = Attr::new();
    a.u32(0, map.as_raw_fd() as u32)
        .u64(8, &key as *const u32 as u64);
    bpf(BPF_MAP_DELETE_ELEM, &mut a).map(drop)
}

/// Why the kernel refused the program: its error and the verifier's log.
#[derive(Debug)]
pub struct LoadError {
    /// The system call's error.
    pub error: io::Error,
    /// The verifier's explanation (empty when it gave none).
    pub log: String,
}

/// Loads `insns` as an XDP program (license `license`), verified by the kernel.
pub fn load_xdp(insns: &[Insn], license: &str) -> Result<OwnedFd, LoadError> {
    let code: Vec<u8> = insns.iter().flat_map(|i| i.to_bytes()).collect();
    let mut lic = license.as_bytes().to_vec();
    lic.push(0);
    let mut log = vec![0u8; 64 * 1024];
    let attempt = |log_level: u32, log: &mut [u8]| {
        let mut a = Attr::new();
        a.u32(0, BPF_PROG_TYPE_XDP)
            .u32(4, insns.len() as u32)
            .u64(8, code.as_ptr() as u64)
            .u64(16, lic.as_ptr() as u64)
            .u32(24, log_level)
            .u32(28, if log_level > 0 { log.len() as u32 } else { 0 })
            .u64(
                32,
                if log_level > 0 {
                    log.as_mut_ptr() as u64
                } else {
                    0
                },
            )
            .bytes(48, &name16("tachyon_rtps"))
            .u32(68, BPF_XDP);
        bpf(BPF_PROG_LOAD, &mut a)
    };
    match attempt(0, &mut log) {
        Ok(fd) => Ok(fd_of(fd)),
        Err(error) => {
            // Once more with the verifier's log, to say why.
            let _ = attempt(1, &mut log);
            let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
            Err(LoadError {
                error,
                log: String::from_utf8_lossy(&log[..end]).trim().to_owned(),
            })
        }
    }
}

/// Attaches `prog` to interface `ifindex` with `flags` (`XDP_FLAGS_*`) through a BPF link:
/// detached when the returned descriptor is closed, or its process dies.
pub fn attach_xdp(prog: &OwnedFd, ifindex: u32, flags: u32) -> io::Result<OwnedFd> {
    let mut a = Attr::new();
    a.u32(0, prog.as_raw_fd() as u32)
        .u32(4, ifindex)
        .u32(8, BPF_XDP)
        .u32(12, flags);
    bpf(BPF_LINK_CREATE, &mut a).map(fd_of)
}
