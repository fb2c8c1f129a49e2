//! [`UdpTransport`] as a [`Transport`]: its four sockets are the receive sources, the
//! user-data unicast socket sends everything, and it lends heap buffers from its pool.

use std::io;

use tachyon_wire::Locator;

use super::{SocketId, UdpTransport};
use crate::batch::RecvBatch;
use crate::interface::SelectedInterface;
use crate::stats::TransportStats;
use crate::transport::{Reach, RxSource, Traffic, Transport, TransportLocators, TxBuffer};

/// Free transmit buffers a UDP transport keeps (a burst of a 64 KiB sample on an Ethernet
/// link takes about fifty; more are allocated while lent and freed when returned).
pub(super) const POOL_KEEP: usize = 64;

/// The largest datagram sent on `interface`: a whole Ethernet MTU on a link
/// (1500 − IP − UDP), nearly a whole UDP payload on loopback, whose MTU (65536) needs no IP
/// fragmentation below the UDP limit (a 64 KiB sample goes in two datagrams, not fifty).
pub(super) fn max_datagram(interface: &SelectedInterface) -> usize {
    if interface.loopback {
        LOOPBACK_MAX_DATAGRAM
    } else {
        ETHERNET_MAX_DATAGRAM
    }
}

/// The largest datagram sent on an Ethernet link: its MTU (1500) less the IPv4 and UDP
/// headers.
pub const ETHERNET_MAX_DATAGRAM: usize = 1472;
/// The largest datagram sent on loopback, whose MTU (65536) needs no IP fragmentation below
/// the UDP limit (a 64 KiB sample goes in two datagrams, not fifty).
pub const LOOPBACK_MAX_DATAGRAM: usize = 65_000;

fn socket_id(source: usize) -> io::Result<SocketId> {
    SocketId::from_index(source)
        .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("udp: no source {source}")))
}

impl Transport for UdpTransport {
    fn name(&self) -> &'static str {
        "udp"
    }

    fn locators(&self) -> &TransportLocators {
        &self.announced
    }

    fn reach(&self) -> Reach {
        Reach::kind(Locator::KIND_UDPV4)
    }

    fn preference(&self) -> u8 {
        30
    }

    fn max_datagram(&self) -> usize {
        self.pool.buffer_size()
    }

    fn sources(&self) -> Vec<RxSource> {
        SocketId::ALL
            .iter()
            .filter_map(|&id| {
                let traffic = match id {
                    SocketId::MetaUnicast | SocketId::MetaMulticast => Traffic::Discovery,
                    SocketId::UserUnicast | SocketId::UserMulticast => Traffic::UserData,
                    SocketId::CriticalUnicast => Traffic::Critical,
                };
                self.socket_fd(id).map(|fd| RxSource {
                    id: id.index(),
                    fd: Some(fd),
                    traffic,
                })
            })
            .collect()
    }

    fn receive(&self, source: usize, batch: &mut RecvBatch) -> io::Result<usize> {
        self.recv_batch(socket_id(source)?, batch)
    }

    fn receive_wait(&self, source: usize, batch: &mut RecvBatch) -> io::Result<usize> {
        self.recv_batch_wait(socket_id(source)?, batch)
    }

    fn interrupt(&self) {
        self.interrupt_receivers();
    }

    fn tx_buffer(&self) -> TxBuffer {
        self.pool.take()
    }

    fn send(&self, buf: TxBuffer, len: usize, dests: &[Locator], priority: i32) -> io::Result<()> {
        let data = &buf[..len.min(buf.len())];
        match dests {
            [one] => self.send_to(one, data, priority),
            many => self.send_to_many(many, data, priority),
        }
    }

    fn stats(&self) -> TransportStats {
        UdpTransport::stats(self)
    }
}
