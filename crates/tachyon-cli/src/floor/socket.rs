//! The floor's sockets: plain kernel UDP with 4 MiB buffers (what Tachyon asks for), and the
//! two ways to wait for a datagram the DDS runtimes use: a blocking `recv`, or spinning on a
//! non-blocking one.

use std::cell::Cell;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use super::Wake;

/// A UDP socket and its wake-up method.
pub struct Endpoint {
    socket: UdpSocket,
    wake: Wake,
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
            timeout: Cell::new(Duration::ZERO),
        })
    }

    /// Another handle on the same socket (for a thread that sends while this one receives).
    pub fn try_clone(&self) -> io::Result<Endpoint> {
        Ok(Endpoint {
            socket: self.socket.try_clone()?,
            wake: self.wake,
            timeout: Cell::new(self.timeout.get()),
        })
    }

    pub fn send_to(&self, buf: &[u8], to: SocketAddr) -> io::Result<()> {
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
                    if self.wake == Wake::BusyPoll {
                        std::hint::spin_loop();
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}
