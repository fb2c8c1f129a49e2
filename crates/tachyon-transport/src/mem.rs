//! An in-memory, fault-injecting network: the test transport that drives the real runtime
//! without sockets (smoltcp's `Loopback` plus its `FaultInjector`, in one).
//!
//! A [`MemNetwork`] is a set of nodes in one process; each [`MemTransport`] is one node, with
//! a metatraffic and a user-data queue. Datagrams are copied into the destination's queue
//! on [`send`](Transport::send), after the network's [`Faults`] decided whether to lose,
//! duplicate, hold back (reorder) or refuse (too large) each of them, from a seeded
//! generator so a failing run can be replayed. SPDP goes to every other node of the network.
//! Each queue has a readiness descriptor (one end of a Unix datagram socket pair) so the
//! runtime waits on it with the same `epoll` as on UDP sockets.
//!
//! Locators ([`Locator::KIND_TACHYON_MEM`]): address bytes 0..8 are the network's id, 8..16
//! the node's; port 0 is metatraffic, port 1 user data. A node reaches only its own
//! network.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tachyon_wire::Locator;

use crate::batch::RecvBatch;
use crate::queue::{lock, Queue};
use crate::stats::{Counters, TransportStats};
use crate::transport::{Reach, RxSource, Traffic, Transport, TransportLocators, TxBuffer, TxPool};

/// What the network does to datagrams (probabilities from 0 to 1).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Faults {
    /// A datagram is lost.
    pub loss: f64,
    /// A datagram is delivered twice.
    pub duplicate: f64,
    /// A datagram is held back and delivered after the next one to the same queue.
    pub reorder: f64,
}

/// Counters of what the network did, over all nodes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NetworkStats {
    /// Datagrams delivered to a queue (duplicates included).
    pub delivered: u64,
    /// Datagrams lost on purpose.
    pub lost: u64,
    /// Datagrams duplicated.
    pub duplicated: u64,
    /// Datagrams held back to be reordered.
    pub reordered: u64,
    /// Datagrams to a node that is gone.
    pub unreachable: u64,
}

/// The network: create it once per test, then one [`MemTransport`] per participant.
#[derive(Clone, Debug)]
pub struct MemNetwork(Arc<Net>);

#[derive(Debug)]
struct Net {
    id: u64,
    max_datagram: usize,
    next_node: AtomicU64,
    nodes: Mutex<HashMap<u64, Arc<Node>>>,
    dice: Mutex<Dice>,
    stats: Mutex<NetworkStats>,
}

#[derive(Debug)]
struct Dice {
    faults: Faults,
    rng: u64,
}

impl Dice {
    /// xorshift64*: deterministic for a seed, good enough to pick faults.
    fn roll(&mut self, p: f64) -> bool {
        if p <= 0.0 {
            return false;
        }
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        let x = self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11;
        (x as f64 / (1u64 << 53) as f64) < p
    }
}

/// Networks made so far in this process: each gets its own id, so locators of two networks
/// never reach each other.
static NETWORKS: AtomicU64 = AtomicU64::new(1);

/// The node id SPDP announcements go to: every node but the sender.
const ALL_NODES: u64 = u64::MAX;
/// Port of the metatraffic queue.
const META_PORT: u32 = 0;
/// Port of the user-data queue.
const USER_PORT: u32 = 1;

impl Default for MemNetwork {
    fn default() -> MemNetwork {
        MemNetwork::new(1)
    }
}

impl MemNetwork {
    /// A network without faults whose datagrams are at most 1472 bytes (an Ethernet MTU),
    /// faults drawn from `seed` once set.
    pub fn new(seed: u64) -> MemNetwork {
        MemNetwork::with_max_datagram(seed, 1472)
    }

    /// A network carrying datagrams of at most `max_datagram` bytes.
    pub fn with_max_datagram(seed: u64, max_datagram: usize) -> MemNetwork {
        MemNetwork(Arc::new(Net {
            id: NETWORKS.fetch_add(1, Ordering::Relaxed),
            max_datagram,
            next_node: AtomicU64::new(1),
            nodes: Mutex::new(HashMap::new()),
            dice: Mutex::new(Dice {
                faults: Faults::default(),
                // xorshift must not start at 0.
                rng: seed | 1,
            }),
            stats: Mutex::new(NetworkStats::default()),
        }))
    }

    /// Sets what the network does to datagrams from now on.
    pub fn set_faults(&self, faults: Faults) {
        lock(&self.0.dice).faults = faults;
    }

    /// What the network did so far.
    pub fn stats(&self) -> NetworkStats {
        *lock(&self.0.stats)
    }

    /// A new node on this network.
    pub fn transport(&self) -> io::Result<MemTransport> {
        let id = self.0.next_node.fetch_add(1, Ordering::Relaxed);
        let node = Arc::new(Node::new()?);
        lock(&self.0.nodes).insert(id, Arc::clone(&node));
        let me = |port| self.locator(id, port);
        let locators = TransportLocators {
            metatraffic_unicast: vec![me(META_PORT)],
            metatraffic_multicast: Vec::new(),
            default_unicast: vec![me(USER_PORT)],
            default_multicast: Vec::new(),
            spdp_destinations: vec![self.locator(ALL_NODES, META_PORT)],
            critical_unicast: Vec::new(),
        };
        Ok(MemTransport {
            net: self.clone(),
            id,
            node,
            locators,
            pool: TxPool::new(self.0.max_datagram, 64),
            counters: Counters::default(),
        })
    }

    fn locator(&self, node: u64, port: u32) -> Locator {
        let mut address = [0; 16];
        address[..8].copy_from_slice(&self.0.id.to_be_bytes());
        address[8..].copy_from_slice(&node.to_be_bytes());
        Locator {
            kind: Locator::KIND_TACHYON_MEM,
            port,
            address,
        }
    }

    /// Delivers `data` from node `from` to the queue `dest` names, through the faults.
    fn deliver(&self, from: u64, dest: &Locator, data: &[u8]) -> bool {
        let Some((node, port)) = self.parse(dest) else {
            return false;
        };
        let source = self.locator(from, port);
        let targets: Vec<Arc<Node>> = {
            let nodes = lock(&self.0.nodes);
            if node == ALL_NODES {
                nodes
                    .iter()
                    .filter(|(id, _)| **id != from)
                    .map(|(_, n)| Arc::clone(n))
                    .collect()
            } else {
                nodes.get(&node).cloned().into_iter().collect()
            }
        };
        if targets.is_empty() && node != ALL_NODES {
            lock(&self.0.stats).unreachable += 1;
        }
        for target in targets {
            let (lost, dup, hold) = {
                let mut d = lock(&self.0.dice);
                let f = d.faults;
                (d.roll(f.loss), d.roll(f.duplicate), d.roll(f.reorder))
            };
            let mut stats = lock(&self.0.stats);
            if lost {
                stats.lost += 1;
                continue;
            }
            let copies = if dup { 2 } else { 1 };
            stats.duplicated += u64::from(dup);
            stats.reordered += u64::from(hold);
            stats.delivered += copies;
            drop(stats);
            target
                .queue(port)
                .push(source, data, copies, hold, usize::MAX);
        }
        true
    }

    /// The node and port of a locator of this network.
    fn parse(&self, l: &Locator) -> Option<(u64, u32)> {
        let mut net = [0; 8];
        let mut node = [0; 8];
        net.copy_from_slice(&l.address[..8]);
        node.copy_from_slice(&l.address[8..]);
        (l.kind == Locator::KIND_TACHYON_MEM
            && u64::from_be_bytes(net) == self.0.id
            && (l.port == META_PORT || l.port == USER_PORT))
            .then_some((u64::from_be_bytes(node), l.port))
    }
}

/// One node's two queues.
#[derive(Debug)]
struct Node {
    meta: Queue,
    user: Queue,
}

impl Node {
    fn new() -> io::Result<Node> {
        Ok(Node {
            meta: Queue::new()?,
            user: Queue::new()?,
        })
    }

    fn queue(&self, port: u32) -> &Queue {
        if port == META_PORT {
            &self.meta
        } else {
            &self.user
        }
    }
}

/// One node of a [`MemNetwork`]: a [`Transport`] for one participant.
#[derive(Debug)]
pub struct MemTransport {
    net: MemNetwork,
    id: u64,
    node: Arc<Node>,
    locators: TransportLocators,
    pool: TxPool,
    counters: Counters,
}

impl MemTransport {
    fn queue_of(&self, source: usize) -> io::Result<&Queue> {
        match source {
            0 => Ok(&self.node.meta),
            1 => Ok(&self.node.user),
            _ => Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("mem: no source {source}"),
            )),
        }
    }
}

impl Drop for MemTransport {
    fn drop(&mut self) {
        lock(&self.net.0.nodes).remove(&self.id);
    }
}

impl Transport for MemTransport {
    fn name(&self) -> &'static str {
        "mem"
    }

    fn locators(&self) -> &TransportLocators {
        &self.locators
    }

    fn reach(&self) -> Reach {
        Reach {
            kind: Locator::KIND_TACHYON_MEM,
            address_prefix: self.net.0.id.to_be_bytes().to_vec(),
            multicast: false,
        }
    }

    fn preference(&self) -> u8 {
        // Preferred over UDP, so a test shows which pairs chose it.
        5
    }

    fn max_datagram(&self) -> usize {
        self.net.0.max_datagram
    }

    fn sources(&self) -> Vec<RxSource> {
        vec![
            RxSource {
                id: 0,
                fd: Some(self.node.meta.fd()),
                traffic: Traffic::Discovery,
            },
            RxSource {
                id: 1,
                fd: Some(self.node.user.fd()),
                traffic: Traffic::UserData,
            },
        ]
    }

    fn receive(&self, source: usize, batch: &mut RecvBatch) -> io::Result<usize> {
        Ok(self.queue_of(source)?.pop_into(batch, &self.counters))
    }

    fn receive_wait(&self, source: usize, batch: &mut RecvBatch) -> io::Result<usize> {
        self.queue_of(source)?.wait_into(batch, &self.counters)
    }

    fn interrupt(&self) {
        for q in [&self.node.meta, &self.node.user] {
            q.interrupt();
        }
    }

    fn tx_buffer(&self) -> TxBuffer {
        self.pool.take()
    }

    fn send(&self, buf: TxBuffer, len: usize, dests: &[Locator], _priority: i32) -> io::Result<()> {
        let data = &buf[..len.min(buf.len())];
        if data.len() > self.net.0.max_datagram {
            Counters::add(&self.counters.send_errors, 1);
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "mem: a datagram of {} bytes exceeds the network's {}",
                    data.len(),
                    self.net.0.max_datagram
                ),
            ));
        }
        for d in dests {
            if self.net.deliver(self.id, d, data) {
                Counters::add(&self.counters.datagrams_sent, 1);
                Counters::add(&self.counters.bytes_sent, data.len() as u64);
            } else {
                Counters::add(&self.counters.skipped_locators, 1);
            }
        }
        Ok(())
    }

    fn stats(&self) -> TransportStats {
        self.counters.snapshot()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn send(t: &MemTransport, to: &Locator, bytes: &[u8]) {
        let mut buf = t.tx_buffer();
        buf[..bytes.len()].copy_from_slice(bytes);
        t.send(buf, bytes.len(), std::slice::from_ref(to), 0)
            .expect("send");
    }

    fn received(t: &MemTransport, source: usize) -> Vec<Vec<u8>> {
        let mut batch = RecvBatch::new(8, 2048);
        t.receive(source, &mut batch).expect("receive");
        batch.iter().map(|(_, b)| b.to_vec()).collect()
    }

    fn readable(t: &MemTransport, source: usize) -> bool {
        match source {
            0 => t.node.meta.readable(),
            _ => t.node.user.readable(),
        }
    }

    #[test]
    fn unicast_and_spdp_reach_the_right_queues_and_signal_readiness() {
        let net = MemNetwork::new(1);
        let (a, b, c) = (
            net.transport().expect("a"),
            net.transport().expect("b"),
            net.transport().expect("c"),
        );
        assert!(!readable(&b, 1));
        send(&a, &b.locators().default_unicast[0], b"user");
        assert!(readable(&b, 1));
        assert!(!readable(&c, 1), "unicast reaches one node");
        assert_eq!(received(&b, 1), vec![b"user".to_vec()]);
        assert!(!readable(&b, 1), "the signal was consumed");
        send(&a, &a.locators().spdp_destinations[0], b"spdp");
        assert_eq!(received(&b, 0), vec![b"spdp".to_vec()]);
        assert_eq!(received(&c, 0), vec![b"spdp".to_vec()]);
        assert!(received(&a, 0).is_empty(), "not to the sender");
        assert!(a.reach().covers(&b.locators().default_unicast[0]));
        let other = MemNetwork::new(1).transport().expect("other");
        assert!(!a.reach().covers(&other.locators().default_unicast[0]));
    }

    #[test]
    fn faults_lose_duplicate_and_reorder_reproducibly() {
        let run = |faults: Faults| {
            let net = MemNetwork::new(42);
            net.set_faults(faults);
            let (a, b) = (net.transport().expect("a"), net.transport().expect("b"));
            let to = b.locators().default_unicast[0];
            let mut got = Vec::new();
            for i in 0..200u8 {
                send(&a, &to, &[i]);
                got.extend(received(&b, 1).into_iter().map(|d| d[0]));
            }
            (got, net.stats())
        };
        let (lossy, stats) = run(Faults {
            loss: 0.2,
            ..Faults::default()
        });
        assert!((20..60).contains(&stats.lost), "{stats:?}");
        assert_eq!(lossy.len() as u64, 200 - stats.lost);
        assert_eq!(
            run(Faults {
                loss: 0.2,
                ..Faults::default()
            })
            .0,
            lossy,
            "seeded"
        );
        let (dup, stats) = run(Faults {
            duplicate: 0.1,
            ..Faults::default()
        });
        assert_eq!(dup.len() as u64, 200 + stats.duplicated);
        let (reordered, stats) = run(Faults {
            reorder: 0.1,
            ..Faults::default()
        });
        assert!(stats.reordered > 0);
        assert!(reordered.windows(2).any(|w| w[0] > w[1]), "some came late");
    }

    #[test]
    fn a_waiting_receiver_wakes_for_data_and_for_good_on_interrupt() {
        let net = MemNetwork::new(1);
        let a = net.transport().expect("a");
        let b = Arc::new(net.transport().expect("b"));
        let rx = Arc::clone(&b);
        let t = std::thread::spawn(move || {
            let mut batch = RecvBatch::new(8, 2048);
            let first = rx.receive_wait(1, &mut batch).expect("wait");
            let second = rx.receive_wait(1, &mut batch).expect("wait");
            (first, second)
        });
        std::thread::sleep(std::time::Duration::from_millis(20));
        send(&a, &b.locators().default_unicast[0], b"x");
        std::thread::sleep(std::time::Duration::from_millis(20));
        b.interrupt();
        assert_eq!(t.join().expect("join"), (1, 0));
    }

    #[test]
    fn a_gone_node_is_unreachable_and_oversized_datagrams_are_refused() {
        let net = MemNetwork::with_max_datagram(1, 100);
        let a = net.transport().expect("a");
        let to = {
            let b = net.transport().expect("b");
            b.locators().default_unicast[0]
        };
        send(&a, &to, b"x");
        assert_eq!(net.stats().unreachable, 1);
        let buf = TxBuffer::unpooled(200);
        assert!(a.send(buf, 200, &[to], 0).is_err());
    }
}
