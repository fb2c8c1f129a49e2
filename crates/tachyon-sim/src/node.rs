//! What the simulator drives: anything that follows the sans-IO contract (DESIGN.md section 2).

use std::any::Any;
use std::fmt;
use std::net::{Ipv4Addr, SocketAddr};

use tachyon_proto::{Instant, Transmit, TxBuf};
use tachyon_wire::Locator;

/// A sans-IO protocol participant, seen from the network.
///
/// The simulator calls the inputs, then polls the outputs in this order until they are drained:
/// `poll_transmit` until `None`, then `poll_timeout`. `now` never goes backwards.
pub trait Node {
    /// A datagram from `source` arrived on `destination` (one of our unicast locators or a
    /// multicast group we joined).
    fn handle_datagram(
        &mut self,
        now: Instant,
        source: &Locator,
        destination: &Locator,
        data: &[u8],
    );

    /// The instant last returned by [`Node::poll_timeout`] has been reached.
    fn handle_timeout(&mut self, now: Instant);

    /// The next datagram to send, written into `buf`; `None` when there is nothing to send.
    fn poll_transmit(&mut self, now: Instant, buf: &mut TxBuf) -> Option<Transmit>;

    /// When [`Node::handle_timeout`] should next be called; `None` when no timer is armed.
    fn poll_timeout(&self) -> Option<Instant>;
}

/// A node owned by the simulator, with downcasting so tests get their concrete type back.
pub(crate) trait AnyNode: Node {
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<N: Node + 'static> AnyNode for N {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// The handle of a node inside one [`crate::Sim`], in the order nodes were added.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

impl NodeId {
    /// The index of this node in the simulator's tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

/// A UDPv4 locator, shorthand for building simulated networks.
pub fn udp4(addr: [u8; 4], port: u16) -> Locator {
    Locator::udp(SocketAddr::new(Ipv4Addr::from(addr).into(), port))
}
