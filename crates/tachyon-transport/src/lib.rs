//! Transports of Tachyon DDS (DESIGN.md section 4): the [`Transport`] trait (start there: its
//! module says how buffers are lent and how a transport is chosen per matched pair), UDPv4
//! ([`UdpTransport`]), the in-process transport between participants of one process
//! ([`intra`]), shared memory between participants of one host ([`shm`]), AF_XDP past the
//! kernel's network stack ([`xdp`], beside UDP) and an in-memory, fault-injecting network for
//! tests ([`mem`]).
//!
//! Sans-async: nothing here spawns a thread or blocks. [`UdpTransport::open`] selects the
//! network interface ([`choose_interface`]), allocates the participant index by the RTPS port
//! mapping ([`PortMapping`]) and binds non-blocking sockets; the runtime registers
//! [`UdpTransport::sockets`] with epoll/mio, drains readable ones with
//! [`UdpTransport::recv_batch`] into a preallocated [`RecvBatch`] (`recvmmsg`), and sends with
//! [`UdpTransport::send_to`] / [`UdpTransport::send_to_many`] (`sendmmsg`, one datagram to many
//! destinations without copying it). TRANSPORT_PRIORITY maps to `SO_PRIORITY` and DSCP as
//! [`priority`] documents.
//!
//! Linux only (`recvmmsg`, `sendmmsg`, `SO_PRIORITY`, `sched_setaffinity`, futexes). The
//! unsafe code is confined to the private `sys` module, for shared memory to `shm::map`, and for AF_XDP to `xdp`'s `bpf` and `xsk` modules; [`thread`] is the safe wrapper the runtime uses to
//! pin its threads and give them `SCHED_FIFO` priority.
//!
//! ```no_run
//! use tachyon_transport::{RecvBatch, SocketId, UdpConfig, UdpTransport};
//! let transport = UdpTransport::open(0, &UdpConfig::default())?;
//! let mut batch = RecvBatch::new(32, tachyon_transport::MAX_UDP_PAYLOAD);
//! transport.send_meta_to_many(transport.spdp_destinations(), b"RTPS...", 0)?;
//! if transport.recv_batch(SocketId::MetaUnicast, &mut batch)? > 0 {
//!     for (source, bytes) in batch.iter() {
//!         println!("{} bytes from {source}", bytes.len());
//!     }
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
#![deny(unsafe_code)]
#![warn(missing_docs)]

mod batch;
pub mod clock;
mod config;
mod error;
mod interface;
pub mod intra;
pub mod mem;
mod ports;
pub mod priority;
mod queue;
pub mod shm;
pub mod spin;
mod stats;
#[allow(unsafe_code)]
mod sys;
pub mod testing;
pub mod thread;
mod transport;
mod udp;
pub mod xdp;

pub use batch::{RecvBatch, MAX_UDP_PAYLOAD};
pub use config::{MulticastMode, Peer, PeerIndices, UdpConfig};
pub use error::TransportError;
pub use interface::{
    choose_interface, list_interfaces, select_interface, InterfaceFlags, InterfaceInfo,
    SelectedInterface, SelectionReason,
};
pub use ports::{PortKind, PortMapping};
pub use stats::TransportStats;
pub use transport::{
    Reach, RxSource, Traffic, Transport, TransportLocators, TxBuffer, TxPool, MAX_SOURCES,
};
pub use udp::{SocketId, UdpTransport, ETHERNET_MAX_DATAGRAM, LOOPBACK_MAX_DATAGRAM};
