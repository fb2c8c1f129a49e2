//! [`XdpPort`]: UDP datagrams on some ports of one interface, through an AF_XDP socket and
//! the XDP program that feeds it. No DDS in it: the transport ([`super::XdpTransport`]) puts
//! RTPS on top, and `tachyon floor --xdp-interface` measures the raw floor with it.

use std::cell::Cell;
use std::io;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{bpf, frame, neigh, program, xsk, AttachMode, BindMode};
use crate::error::TransportError;
use crate::priority;
use crate::transport::{FrameLender, TxBuffer};

/// How to open an [`XdpPort`].
#[derive(Clone, Debug)]
pub struct PortConfig<'a> {
    /// The interface.
    pub interface: &'a str,
    /// Its IPv4 address (the source of what is sent).
    pub address: Ipv4Addr,
    /// The receive queue.
    pub queue: u32,
    /// The UDP ports whose datagrams the program takes (at most [`program::MAX_PORTS`]).
    pub ports: &'a [u16],
    /// Take only datagrams whose payload starts with these four octets (`RTPS`).
    pub magic: Option<[u8; 4]>,
    /// How the program is attached.
    pub attach: AttachMode,
    /// Copy or zero-copy.
    pub bind: BindMode,
    /// UMEM frames.
    pub frames: u32,
    /// Spin on the RX ring in [`XdpPort::wait`].
    pub busy_poll: bool,
    /// 802.1Q VLAN id of transmitted frames.
    pub vlan: Option<u16>,
}

/// What [`XdpPort::send`] did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortSend {
    /// Queued on the TX ring.
    Queued,
    /// The neighbour's MAC is not known yet: send it through the kernel (which resolves it).
    NoMac,
    /// Every transmit frame is in flight: dropped.
    Full,
    /// Too long for a frame.
    TooLong,
}

/// One datagram handed out by [`XdpPort::receive`].
#[derive(Debug)]
pub struct PortDatagram<'a> {
    /// The sender.
    pub from: SocketAddrV4,
    /// The destination port (one of the port's).
    pub dst_port: u16,
    /// The UDP payload.
    pub payload: &'a [u8],
}

/// An AF_XDP socket on one queue, with its program attached: see the
/// [module documentation](crate::xdp).
pub struct XdpPort {
    xsk: Arc<xsk::Xsk>,
    interrupt: xsk::Interrupt,
    stopped: AtomicBool,
    // Dropped after the socket: closing the link detaches the program.
    _link: OwnedFd,
    _prog: OwnedFd,
    map: OwnedFd,
    queue: u32,
    link: neigh::LinkInfo,
    address: Ipv4Addr,
    neighbours: neigh::Neighbours,
    busy_poll: bool,
    vlan: Option<u16>,
    native: bool,
}

thread_local! {
    /// The IPv4 identification of the next datagram this thread sends.
    static IP_ID: Cell<u16> = Cell::new(std::process::id() as u16);
}

/// The IPv4 identification of a datagram: a counter per sending thread. Every datagram is
/// sent with Don't Fragment set, so the field identifies no fragments and any value will do
/// (RFC 6864, 4.1); a counter shared by the threads cost an atomic read-modify-write per
/// datagram.
fn next_ip_id() -> u16 {
    IP_ID
        .try_with(|c| {
            let id = c.get();
            c.set(id.wrapping_add(1));
            id
        })
        .unwrap_or(0)
}

impl std::fmt::Debug for XdpPort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("XdpPort")
            .field("interface", &self.link.name)
            .field("queue", &self.queue)
            .field("native", &self.native)
            .field("xsk", &self.xsk)
            .finish()
    }
}

pub(super) fn xdp_error(key: &'static str, message: String) -> TransportError {
    TransportError::Xdp { key, message }
}

const PRIVILEGE_FIX: &str = "run as root, or grant CAP_NET_ADMIN, CAP_NET_RAW, CAP_BPF, \
    CAP_PERFMON and CAP_IPC_LOCK (e.g. `setcap cap_net_admin,cap_net_raw,cap_bpf,cap_perfmon,\
    cap_ipc_lock+ep <program>`), or set `xdp.fallback = true` to run on kernel UDP";

fn is_privilege(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM) | Some(libc::EACCES))
}

fn bpf_error(what: &str, e: &io::Error) -> TransportError {
    let fix = if is_privilege(e) {
        PRIVILEGE_FIX
    } else {
        "see the kernel's error"
    };
    xdp_error("interface", format!("{what}: {e}; {fix}"))
}

impl XdpPort {
    /// Reads the interface, loads and attaches the program, binds the socket and registers it.
    /// Every failure names the `[xdp]` key concerned and the fix; nothing stays attached.
    pub fn open(c: &PortConfig<'_>) -> Result<XdpPort, TransportError> {
        let name = c.interface;
        let link = neigh::link_info(name)
            .map_err(|e| xdp_error("interface", format!("cannot read interface {name:?}: {e}")))?;
        if !c.frames.is_power_of_two() || !(64..=65536).contains(&c.frames) {
            return Err(xdp_error(
                "frames",
                format!("{} is not a power of two in 64..=65536", c.frames),
            ));
        }
        // A received frame starts XDP_PACKET_HEADROOM (256) octets into its UMEM frame.
        let room = |frame: usize| frame - 256 - 18;
        let frame_size: u32 = if link.mtu <= room(2048) { 2048 } else { 4096 };
        if link.mtu > room(frame_size as usize) {
            return Err(xdp_error(
                "interface",
                format!(
                    "{name}'s MTU {} is larger than one 4 KiB frame holds (multi-buffer XDP is \
                     not supported): lower it to {} at most",
                    link.mtu,
                    room(4096)
                ),
            ));
        }
        if c.ports.is_empty() || c.ports.len() > program::MAX_PORTS {
            return Err(xdp_error(
                "traffic",
                format!(
                    "{} ports to take: from 1 to {}",
                    c.ports.len(),
                    program::MAX_PORTS
                ),
            ));
        }
        let map = bpf::create_xskmap((c.queue + 1).max(64))
            .map_err(|e| bpf_error("cannot create the XSKMAP", &e))?;
        let insns = program::build(map.as_raw_fd(), c.ports, c.magic);
        let prog = bpf::load_xdp(&insns, "Dual MIT/GPL").map_err(|e| {
            if is_privilege(&e.error) {
                bpf_error("cannot load the XDP program", &e.error)
            } else {
                xdp_error(
                    "interface",
                    format!(
                        "the kernel refused the XDP program: {}; verifier: {}",
                        e.error, e.log
                    ),
                )
            }
        })?;
        let (link_fd, native) = attach(&prog, &link, c.attach)?;
        let geometry = xsk::Geometry {
            frames: c.frames,
            frame_size,
        };
        let sock = while_busy(
            || xsk::Xsk::open(link.ifindex, c.queue, geometry, c.bind),
            |e| e.step == "bind" && e.error.raw_os_error() == Some(libc::EBUSY),
        )
        .map_err(|e| open_error(&e, c, frame_size))?;
        bpf::map_update(&map, c.queue, sock.fd() as u32)
            .map_err(|e| bpf_error("cannot register the socket in the XSKMAP", &e))?;
        let interrupt = xsk::Interrupt::new()
            .map_err(|e| xdp_error("interface", format!("cannot create an eventfd: {e}")))?;
        Ok(XdpPort {
            xsk: Arc::new(sock),
            interrupt,
            stopped: AtomicBool::new(false),
            _link: link_fd,
            _prog: prog,
            map,
            queue: c.queue,
            address: c.address,
            neighbours: neigh::Neighbours::new(name),
            link,
            busy_poll: c.busy_poll,
            vlan: c.vlan,
            native,
        })
    }

    /// The interface as the kernel describes it.
    pub fn link(&self) -> &neigh::LinkInfo {
        &self.link
    }

    /// Whether the program runs in the driver (native) rather than generic mode.
    pub fn native(&self) -> bool {
        self.native
    }

    /// Whether the socket is bound in zero-copy mode.
    pub fn zero_copy(&self) -> bool {
        self.xsk.zero_copy()
    }

    /// The socket's descriptor (readable when frames wait).
    pub fn fd(&self) -> std::os::fd::RawFd {
        self.xsk.fd()
    }

    /// Frames the kernel dropped or refused on the socket.
    pub fn kernel_drops(&self) -> u64 {
        self.xsk.kernel_drops()
    }

    /// The largest UDP payload of one frame (MTU − IPv4 − UDP).
    pub fn max_payload(&self) -> usize {
        self.link.mtu - frame::IPV4_LEN - frame::UDP_LEN
    }

    /// The link-layer addresses and tag for `to` (`None`: its MAC is not known yet).
    fn link_for(&self, to: SocketAddrV4, priority: i32) -> Option<frame::Link> {
        let dst = if to.ip().is_multicast() {
            frame::multicast_mac(*to.ip())
        } else {
            self.neighbours.lookup(*to.ip())?
        };
        Some(frame::Link {
            dst,
            src: self.link.mac,
            vlan: self
                .vlan
                .map(|vid| (vid, priority::so_priority(priority).clamp(0, 7) as u8)),
        })
    }

    /// Sends `data` from `from_port` to `to` through the ring (copied into a frame), tagged
    /// with TRANSPORT_PRIORITY `priority` (DSCP, and the VLAN PCP).
    pub fn send(&self, data: &[u8], from_port: u16, to: SocketAddrV4, priority: i32) -> PortSend {
        self.send_then(data, from_port, to, priority, || {})
    }

    /// [`send`](Self::send), calling `queued` under the transmit lock once the frame is
    /// queued (`Xsk::submit`).
    pub(crate) fn send_then(
        &self,
        data: &[u8],
        from_port: u16,
        to: SocketAddrV4,
        priority: i32,
        queued: impl FnOnce(),
    ) -> PortSend {
        if data.len() > self.max_payload() {
            return PortSend::TooLong;
        }
        let Some(link) = self.link_for(to, priority) else {
            return PortSend::NoMac;
        };
        let from = SocketAddrV4::new(self.address, from_port);
        let id = next_ip_id();
        let dscp = priority::dscp(priority);
        let hdr = link.header_len();
        let build = |f: &mut [u8]| {
            f.get_mut(hdr..hdr + data.len())?.copy_from_slice(data);
            frame::write_headers(f, &link, from, to, id, dscp, data.len())
        };
        match self.xsk.send(build, queued) {
            xsk::Sent::Queued => PortSend::Queued,
            xsk::Sent::Full => PortSend::Full,
            xsk::Sent::Refused => PortSend::TooLong,
        }
    }

    /// A transmit buffer of `len` bytes inside a UMEM frame, which [`send_buffer`]
    /// transmits without a copy; `None` when every frame is in flight or `len` does not fit
    /// one behind the headers.
    ///
    /// [`send_buffer`]: Self::send_buffer
    pub fn lend(&self, len: usize) -> Option<TxBuffer> {
        if xsk::HEADROOM + len > self.xsk.frame_size() {
            return None;
        }
        let addr = self.xsk.lend()?;
        let lender: Arc<dyn FrameLender> = Arc::clone(&self.xsk) as Arc<dyn FrameLender>;
        Some(TxBuffer::lent_frame(lender, addr, len))
    }

    /// Sends the first `len` bytes of `buf` like [`send`](Self::send): in place, the headers
    /// written in front of it, when `buf` is one of this port's frames ([`lend`](Self::lend)),
    /// else copied. With [`PortSend::NoMac`] the buffer comes back, for the caller to send
    /// through the kernel. `queued` is called under the transmit lock once the frame is
    /// queued (`Xsk::submit`).
    pub fn send_buffer(
        &self,
        buf: TxBuffer,
        len: usize,
        from_port: u16,
        to: SocketAddrV4,
        priority: i32,
        queued: impl FnOnce(),
    ) -> (PortSend, Option<TxBuffer>) {
        let len = len.min(buf.len());
        if len > self.max_payload() {
            return (PortSend::TooLong, Some(buf));
        }
        let Some(link) = self.link_for(to, priority) else {
            return (PortSend::NoMac, Some(buf));
        };
        let addr = match buf.into_frame_of(&*self.xsk as &dyn FrameLender) {
            Ok(addr) => addr,
            Err(buf) => {
                let r = self.send_then(&buf[..len], from_port, to, priority, queued);
                return (r, None);
            }
        };
        let from = SocketAddrV4::new(self.address, from_port);
        let id = next_ip_id();
        let hdr = link.header_len();
        let start = xsk::HEADROOM - hdr;
        let f = self.xsk.whole_frame_mut(addr);
        let written = f.get_mut(start..).and_then(|f| {
            frame::write_headers(f, &link, from, to, id, priority::dscp(priority), len)
        });
        let Some(total) = written else {
            self.xsk.release_frame(addr);
            return (PortSend::TooLong, None);
        };
        let r = match self.xsk.submit(addr, start, total, queued) {
            xsk::Sent::Queued => PortSend::Queued,
            xsk::Sent::Full => PortSend::Full,
            xsk::Sent::Refused => PortSend::TooLong,
        };
        (r, None)
    }

    /// Hands up to `max` received datagrams to `each` without blocking; returns how many
    /// frames it took and how many of them were malformed (counted, not handed out).
    pub fn receive(&self, max: u32, mut each: impl FnMut(PortDatagram<'_>)) -> (u32, u64) {
        let mut refused = 0u64;
        let (taken, bad) = self.xsk.receive(max, |f| match frame::parse(f) {
            Ok(p) => each(PortDatagram {
                from: p.from,
                dst_port: p.dst_port,
                payload: &f[p.payload_start..p.payload_start + p.payload_len],
            }),
            Err(_) => refused += 1,
        });
        (taken, refused + u64::from(bad))
    }

    /// Waits until frames wait (`poll()`), or spins until then in busy-poll mode; returns
    /// `false` once [`interrupt`](Self::interrupt) was called.
    pub fn wait(&self) -> io::Result<bool> {
        self.wait_up_to(None)
    }

    /// Like [`wait`](Self::wait), for at most `limit` (rounded up to a millisecond).
    pub fn wait_up_to(&self, limit: Option<std::time::Duration>) -> io::Result<bool> {
        if self.stopped.load(Ordering::Relaxed) {
            return Ok(false);
        }
        if self.busy_poll {
            // Busy polling looks again at once: no PAUSE, which a frame arriving during it
            // would wait for (23 ns on the AMD EPYC the benchmarks run on).
        } else {
            let ms = limit.map_or(-1, |d| d.as_micros().div_ceil(1000).min(60_000) as i32);
            self.xsk.wait_readable(self.interrupt.fd(), ms)?;
        }
        Ok(!self.stopped.load(Ordering::Relaxed))
    }

    /// Wakes [`wait`](Self::wait) for good.
    pub fn interrupt(&self) {
        self.stopped.store(true, Ordering::Relaxed);
        self.interrupt.signal();
    }
}

impl Drop for XdpPort {
    fn drop(&mut self) {
        let _ = bpf::map_delete(&self.map, self.queue);
    }
}

fn open_error(e: &xsk::OpenError, c: &PortConfig<'_>, frame_size: u32) -> TransportError {
    let name = c.interface;
    let q = c.queue;
    let fix = match (e.step, e.error.raw_os_error()) {
        (_, Some(libc::EPERM)) | (_, Some(libc::EACCES)) => PRIVILEGE_FIX.to_owned(),
        ("socket", Some(libc::EAFNOSUPPORT)) => {
            "the kernel has no AF_XDP sockets (CONFIG_XDP_SOCKETS)".to_owned()
        }
        ("UMEM registration", Some(libc::ENOMEM)) => format!(
            "the locked-memory limit is below the UMEM's {} KiB: raise it (`ulimit -l`), grant \
             CAP_IPC_LOCK, or lower xdp.frames",
            c.frames * frame_size / 1024
        ),
        ("bind", Some(libc::EOPNOTSUPP)) | ("bind", Some(libc::EINVAL))
            if c.bind == BindMode::ZeroCopy =>
        {
            format!(
                "{name}'s driver cannot bind AF_XDP in zero-copy mode: set xdp.bind = \"copy\" \
                 or \"auto\""
            )
        }
        ("bind", Some(libc::EINVAL)) => format!(
            "does {name} have a queue {q}? (`ethtool -l {name}`; add queues with `ethtool -L \
             {name} rx {} tx {}`)",
            q + 1,
            q + 1
        ),
        ("bind", Some(libc::EBUSY)) => format!(
            "queue {q} of {name} already has an AF_XDP socket (another process): choose \
             another xdp.queue"
        ),
        _ => "see the kernel's error".to_owned(),
    };
    let key = if e.step == "bind" {
        if matches!(
            e.error.raw_os_error(),
            Some(libc::EINVAL) | Some(libc::EBUSY)
        ) && c.bind != BindMode::ZeroCopy
        {
            "queue"
        } else {
            "bind"
        }
    } else {
        "interface"
    };
    xdp_error(
        key,
        format!(
            "cannot set up the AF_XDP socket ({}): {}; {fix}",
            e.step, e.error
        ),
    )
}

/// How long an interface or queue found busy is tried again before that is an error. A
/// process that has just exited (or was killed) may still hold them for a moment: the kernel
/// releases a BPF link and an AF_XDP socket's binding after the process is gone, so a
/// participant restarted at once would otherwise find its own predecessor's program there.
const BUSY_GRACE: Duration = Duration::from_millis(1000);

/// `step()`, tried again every 10 ms while `busy` says its error is a busy resource, for
/// [`BUSY_GRACE`] at most; the last error is returned.
fn while_busy<T, E>(
    mut step: impl FnMut() -> Result<T, E>,
    busy: impl Fn(&E) -> bool,
) -> Result<T, E> {
    let deadline = Instant::now() + BUSY_GRACE;
    loop {
        match step() {
            Err(e) if busy(&e) && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(10));
            }
            r => return r,
        }
    }
}

/// [`bpf::attach_xdp`], tried again while the interface is busy (see [`BUSY_GRACE`]).
fn attach_xdp(prog: &OwnedFd, ifindex: u32, flags: u32) -> io::Result<OwnedFd> {
    while_busy(
        || bpf::attach_xdp(prog, ifindex, flags),
        |e: &io::Error| e.raw_os_error() == Some(libc::EBUSY),
    )
}

/// Attaches the program as `mode` says: native first in `Auto`, generic when the driver
/// refuses. Returns the link and whether it is native.
fn attach(
    prog: &OwnedFd,
    link: &neigh::LinkInfo,
    mode: AttachMode,
) -> Result<(OwnedFd, bool), TransportError> {
    let name = &link.name;
    let busy = |e: &io::Error| {
        xdp_error(
            "interface",
            format!(
                "cannot attach the XDP program to {name}: {e}; another XDP program is attached \
                 (another Tachyon process with [xdp] on {name}, or `ip link show {name}` names \
                 it): one process per interface"
            ),
        )
    };
    if mode != AttachMode::Generic {
        match attach_xdp(prog, link.ifindex, bpf::XDP_FLAGS_DRV_MODE) {
            Ok(l) => return Ok((l, true)),
            Err(e) if e.raw_os_error() == Some(libc::EBUSY) => return Err(busy(&e)),
            Err(e) if is_privilege(&e) => {
                return Err(bpf_error("cannot attach the XDP program", &e))
            }
            Err(e) if mode == AttachMode::Native => {
                return Err(xdp_error(
                    "attach",
                    format!(
                        "{name}'s driver cannot run XDP natively: {e}; set xdp.attach = \
                         \"generic\" or \"auto\""
                    ),
                ))
            }
            // Auto: generic, below.
            Err(_) => {}
        }
    }
    match attach_xdp(prog, link.ifindex, bpf::XDP_FLAGS_SKB_MODE) {
        Ok(l) => Ok((l, false)),
        Err(e) if e.raw_os_error() == Some(libc::EBUSY) => Err(busy(&e)),
        Err(e) => Err(bpf_error(
            "cannot attach the XDP program (generic mode)",
            &e,
        )),
    }
}
