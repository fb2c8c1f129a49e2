//! The floor's sockets: plain kernel UDP with 4 MiB buffers (what Tachyon asks for), and the
//! two ways to wait for a datagram the DDS runtimes use: a blocking `recv`, or spinning on a
//! non-blocking one.

use std::cell::Cell;
use std::io;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tachyon_transport::xdp::{AttachMode, BindMode, PortConfig, PortSend, XdpPort};

use socket2::{Domain, Protocol, Socket, Type};

use super::Wake;

/// A UDP socket and its wake-up method; with `--xdp-interface`, its datagrams go through an
/// AF_XDP socket on that interface instead (the kernel socket holds the port and carries
/// what the ring cannot: the first datagram to a neighbour whose MAC is unknown).
pub struct Endpoint {
    socket: UdpSocket,
    wake: Wake,
    xdp: Option<(Arc<XdpPort>, u16)>,
    /// The blocking socket's read timeout now: changed only when a wait must be at least 10 %
    /// shorter, so steady waits cost no `setsockopt` (a wait may overrun by up to 10 %).
    timeout: Cell<Duration>,
}

impl Endpoint {
    /// Binds `addr` (port 0: any).
    pub fn bind(addr: SocketAddr, wake: Wake) -> io::Result<Endpoint> {
        let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
        // As Tachyon's transport: ask for 4 MiB, take what net.core.*mem_max allows.
        let _ = s.set_recv_buffer_size(4 << 20);
        let _ = s.set_send_buffer_size(4 << 20);
        s.bind(&addr.into())?;
        let socket: UdpSocket = s.into();
        socket.set_nonblocking(wake == Wake::BusyPoll)?;
        Ok(Endpoint {
            socket,
            wake,
            xdp: None,
            timeout: Cell::new(Duration::ZERO),
        })
    }

    /// Like [`bind`](Self::bind), the datagrams to its port taken off `interface` by an XDP
    /// program and received, and sent, through an AF_XDP socket on queue 0.
    pub fn bind_xdp(addr: SocketAddr, wake: Wake, interface: &str) -> Result<Endpoint, String> {
        let mut ep = Endpoint::bind(addr, wake).map_err(|e| format!("bind {addr}: {e}"))?;
        let local = ep.socket.local_addr().map_err(|e| e.to_string())?.port();
        let address = tachyon_transport::list_interfaces()
            .map_err(|e| e.to_string())?
            .into_iter()
            .find(|i| i.name == interface)
            .and_then(|i| i.address)
            .ok_or_else(|| format!("{interface}: no such interface with an IPv4 address"))?;
        if let IpAddr::V4(a) = addr.ip() {
            if !a.is_unspecified() && a != address {
                return Err(format!("{addr} is not {interface}'s address {address}"));
            }
        }
        let port = XdpPort::open(&PortConfig {
            interface,
            address,
            queue: 0,
            ports: &[local],
            magic: None,
            attach: AttachMode::Auto,
            bind: BindMode::Auto,
            frames: 4096,
            busy_poll: wake == Wake::BusyPoll,
            vlan: None,
        })
        .map_err(|e| e.to_string())?;
        ep.xdp = Some((Arc::new(port), local));
        Ok(ep)
    }

    /// Another handle on the same socket (for a thread that sends while this one receives).
    pub fn try_clone(&self) -> io::Result<Endpoint> {
        Ok(Endpoint {
            socket: self.socket.try_clone()?,
            wake: self.wake,
            xdp: self.xdp.clone(),
            timeout: Cell::new(self.timeout.get()),
        })
    }

    pub fn send_to(&self, buf: &[u8], to: SocketAddr) -> io::Result<()> {
        if let (Some((port, local)), SocketAddr::V4(v4)) = (&self.xdp, to) {
            loop {
                match port.send(buf, *local, v4, 0) {
                    PortSend::Queued => return Ok(()),
                    // Every frame in flight: wait for the kernel, as a full socket does.
                    PortSend::Full => std::hint::spin_loop(),
                    PortSend::NoMac | PortSend::TooLong => break,
                }
            }
        }
        loop {
            match self.socket.send_to(buf, to) {
                Ok(_) => return Ok(()),
                // A non-blocking socket whose send buffer is full: spin, as a busy sender does.
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => std::hint::spin_loop(),
                Err(e) => return Err(e),
            }
        }
    }

    /// The next datagram, or `None` when `deadline` passes first.
    pub fn recv_until(
        &self,
        buf: &mut [u8],
        deadline: Instant,
    ) -> io::Result<Option<(usize, SocketAddr)>> {
        if let Some((port, _)) = &self.xdp {
            return recv_xdp(port, buf, deadline);
        }
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            if self.wake == Wake::Blocking {
                let want = deadline - now;
                let have = self.timeout.get();
                if have.is_zero() || want < have.mul_f64(0.9) || want > have * 10 {
                    self.socket
                        .set_read_timeout(Some(want.max(Duration::from_micros(1))))?;
                    self.timeout.set(want);
                }
            }
            match self.socket.recv_from(buf) {
                Ok(got) => return Ok(Some(got)),
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    // Busy polling tries again at once (no PAUSE: a datagram arriving
                    // during one waits for it, 23 ns here), as Tachyon's receive threads do.
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

/// The next datagram of the AF_XDP socket, or `None` when `deadline` passes first.
fn recv_xdp(
    port: &XdpPort,
    buf: &mut [u8],
    deadline: Instant,
) -> io::Result<Option<(usize, SocketAddr)>> {
    loop {
        let mut got = None;
        port.receive(1, |d| {
            let n = d.payload.len().min(buf.len());
            buf[..n].copy_from_slice(&d.payload[..n]);
            got = Some((n, SocketAddr::V4(d.from)));
        });
        if got.is_some() {
            return Ok(got);
        }
        let now = Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        port.wait_up_to(Some(deadline - now))?;
    }
}
