//! The in-process transport: participants of one process reach each other without a socket,
//! and user data is handled on the writing thread.
//!
//! Every participant gets one ([`IntraTransport`]), registered in a table of the process.
//! It announces locators of kind [`Locator::KIND_TACHYON_INTRA`] whose address says which
//! process (a random number drawn once per process, bytes 0..8), domain (8..12) and
//! participant (12..16) they belong to; port 0 is metatraffic, 1 user data, 2 the critical
//! lane. [`Transport::reach`] covers only this process's locators, so discovery chooses this
//! transport (preference 0, before shared memory and UDP) exactly for the pairs whose two
//! ends live in this process, whatever participant they belong to, and UDP for every other
//! pair of the same writer: another process of Tachyon sees a process number that is not its
//! own, another vendor a kind it does not know.
//!
//! # Delivery
//!
//! - **User data on the writer's thread.** A datagram to a user-data or critical locator is
//!   handed to the receiving participant's [`Sink`] on the sending thread: the protocol
//!   handles it under that participant's lane lock, as its receive thread would have, with
//!   no copy, no system call and no thread hop. The sink's listeners are called after the
//!   sender's outbox is drained ([`defer_listeners`]), so a listener never runs while the
//!   sending thread holds the order of its lane.
//! - **Queued when the thread is already delivering.** A datagram sent *while* a delivery
//!   runs on this thread (an ACKNACK the reader answers with, a listener that writes back)
//!   goes into the receiving participant's queue instead and is handled by its own threads:
//!   a ping-pong of listeners never recurses, and a `write` returns once its own delivery is
//!   done. A later send hands over on its thread whatever waits in that queue before its own
//!   datagram, in order, unless a thread of the receiving participant is handling a batch of
//!   it (`Queue::claim`): a receive thread that is not scheduled for a while (a loaded
//!   machine) holds up no delivery, and nothing is overtaken.
//! - **Discovery is always queued**, for the receiving participant's discovery thread, so
//!   announcing an endpoint never runs another participant's matching on a user thread.
//!   SPDP goes to every other participant of the same domain in the process.
//! - A queue holds at most [`QUEUE_MAX_DATAGRAMS`]; beyond, datagrams are dropped and
//!   counted (`send_drops`), as a full socket buffer would, and reliability repairs.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::fmt;
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock, RwLock, Weak};

use tachyon_wire::Locator;

use crate::batch::RecvBatch;
use crate::error::TransportError;
use crate::queue::{Claim, Queue};
use crate::stats::{Counters, TransportStats};
use crate::transport::{Reach, RxSource, Traffic, Transport, TransportLocators, TxBuffer, TxPool};

/// What a participant's runtime gives its in-process transport: how to handle a datagram on
/// the sending thread.
pub trait Sink: Send + Sync {
    /// Handles a datagram of `traffic` from `from` on the calling thread, or returns `false`
    /// when it cannot now (closing, or a thread model that handles everything on its own
    /// thread): the datagram is then queued for the participant's threads.
    fn deliver(&self, traffic: Traffic, from: &Locator, data: &[u8]) -> bool;

    /// Calls the listeners that deliveries of `traffic` gave news to (see
    /// [`defer_listeners`]).
    fn after_delivery(&self, traffic: Traffic);
}

/// Most datagrams waiting in one queue of a participant; more are dropped and counted.
pub const QUEUE_MAX_DATAGRAMS: usize = 1024;

/// Port of the metatraffic queue.
const META_PORT: u32 = 0;
/// Port of the user-data queue.
const USER_PORT: u32 = 1;
/// Port of the critical lane's queue.
const CRITICAL_PORT: u32 = 2;
/// The participant number SPDP announcements go to: every other one of the domain.
const ALL: u32 = u32::MAX;

/// One participant's end: its queues and, once its runtime runs, its sink.
struct Node {
    id: u32,
    domain: u32,
    meta: Queue,
    user: Queue,
    critical: Option<Queue>,
    sink: OnceLock<Weak<dyn Sink>>,
}

impl fmt::Debug for Node {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Node")
            .field("id", &self.id)
            .field("domain", &self.domain)
            .finish_non_exhaustive()
    }
}

impl Node {
    fn queue(&self, port: u32) -> Option<&Queue> {
        match port {
            META_PORT => Some(&self.meta),
            USER_PORT => Some(&self.user),
            CRITICAL_PORT => self.critical.as_ref(),
            _ => None,
        }
    }
}

/// The participants of this process, by number.
fn nodes() -> &'static RwLock<HashMap<u32, Weak<Node>>> {
    static NODES: OnceLock<RwLock<HashMap<u32, Weak<Node>>>> = OnceLock::new();
    NODES.get_or_init(|| RwLock::new(HashMap::new()))
}

/// This process's number: random, drawn once (the standard library's hasher keys are).
pub fn process_number() -> u64 {
    static NUMBER: OnceLock<u64> = OnceLock::new();
    *NUMBER.get_or_init(|| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.finish()
    })
}

thread_local! {
    /// Deliveries running on this thread (a send made while one runs is queued).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// Open [`ListenerScope`]s on this thread.
    static SCOPES: Cell<u32> = const { Cell::new(0) };
    /// Sinks whose listeners wait for the outermost scope to close.
    static DUE: RefCell<Vec<(Arc<dyn Sink>, Traffic)>> = const { RefCell::new(Vec::new()) };
}

/// Counts a delivery running on this thread while it lives.
struct Delivering;

impl Delivering {
    fn enter() -> Delivering {
        DEPTH.with(|d| d.set(d.get() + 1));
        Delivering
    }
}

impl Drop for Delivering {
    fn drop(&mut self) {
        DEPTH.with(|d| d.set(d.get().saturating_sub(1)));
    }
}

/// While it lives, listeners of participants that datagrams sent on this thread were
/// delivered to wait; dropping the outermost one calls them. The runtime holds one while it
/// drains its outbox, so a delivery's listeners never run while the thread holds the order of
/// its lane.
#[derive(Debug)]
pub struct ListenerScope(());

/// Opens a [`ListenerScope`] on this thread.
pub fn defer_listeners() -> ListenerScope {
    SCOPES.with(|s| s.set(s.get() + 1));
    ListenerScope(())
}

impl Drop for ListenerScope {
    fn drop(&mut self) {
        let open = SCOPES.with(|s| {
            let n = s.get().saturating_sub(1);
            s.set(n);
            n
        });
        if open > 0 || DEPTH.with(Cell::get) > 0 {
            return;
        }
        // One at a time, the list not borrowed during the call.
        while let Some((sink, traffic)) = DUE.with(|d| d.borrow_mut().pop()) {
            let _delivering = Delivering::enter();
            sink.after_delivery(traffic);
        }
    }
}

/// One participant's in-process transport: see the [module documentation](self).
pub struct IntraTransport {
    node: Arc<Node>,
    locators: TransportLocators,
    max_datagram: usize,
    pool: TxPool,
    counters: Counters,
}

impl fmt::Debug for IntraTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IntraTransport")
            .field("node", &self.node)
            .finish_non_exhaustive()
    }
}

impl IntraTransport {
    /// A participant's end in domain `domain`, carrying datagrams of at most `max_datagram`
    /// bytes, with a queue for the critical lane when `critical`.
    pub fn new(
        domain: u32,
        max_datagram: usize,
        critical: bool,
    ) -> Result<IntraTransport, TransportError> {
        static NEXT: AtomicU32 = AtomicU32::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let failed = |source| TransportError::Socket {
            what: "create the in-process transport's wake-up socket pairs".into(),
            source,
        };
        if id == ALL {
            let e = io::Error::other("participant numbers exhausted");
            return Err(failed(e));
        }
        let queue = || Queue::new().map_err(failed);
        let node = Arc::new(Node {
            id,
            domain,
            meta: queue()?,
            user: queue()?,
            critical: if critical { Some(queue()?) } else { None },
            sink: OnceLock::new(),
        });
        write_nodes().insert(id, Arc::downgrade(&node));
        let me = |port| locator(domain, id, port);
        let locators = TransportLocators {
            metatraffic_unicast: vec![me(META_PORT)],
            metatraffic_multicast: Vec::new(),
            default_unicast: vec![me(USER_PORT)],
            default_multicast: Vec::new(),
            spdp_destinations: vec![locator(domain, ALL, META_PORT)],
            critical_unicast: if critical {
                vec![me(CRITICAL_PORT)]
            } else {
                Vec::new()
            },
        };
        Ok(IntraTransport {
            node,
            locators,
            max_datagram,
            pool: TxPool::new(max_datagram, 64),
            counters: Counters::default(),
        })
    }

    /// Gives the transport the runtime that handles what it receives on the sending thread
    /// (set once; without one every datagram is queued).
    pub fn set_sink(&self, sink: Weak<dyn Sink>) {
        let _ = self.node.sink.set(sink);
    }

    fn queue_of(&self, source: usize) -> io::Result<&Queue> {
        let port = u32::try_from(source).unwrap_or(u32::MAX);
        self.node.queue(port).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                format!("intra: no source {source}"),
            )
        })
    }

    /// Hands `data` to participant `target`'s port `port`: on this thread when it can,
    /// else through its queue.
    fn deliver(&self, target: &Node, port: u32, data: &[u8]) {
        let source = locator(self.node.domain, self.node.id, port);
        let traffic = match port {
            META_PORT => Traffic::Discovery,
            CRITICAL_PORT => Traffic::Critical,
            _ => Traffic::UserData,
        };
        let Some(queue) = target.queue(port) else {
            Counters::add(&self.counters.skipped_locators, 1);
            return;
        };
        if port != META_PORT && DEPTH.with(Cell::get) == 0 {
            if let Some(sink) = target.sink.get().and_then(Weak::upgrade) {
                // Not past datagrams of an earlier send still queued or being handled there:
                // they would be overtaken (a best-effort reader drops an older sample after a
                // newer one). Queued ones nobody handles yet this thread hands over first.
                let handled = match queue.claim() {
                    Claim::Busy => false,
                    Claim::Idle => hand_over(&sink, traffic, &source, data),
                    Claim::Taken(mut earlier) => {
                        while let Some((from, bytes)) = earlier.front() {
                            if !hand_over(&sink, traffic, from, bytes) {
                                break;
                            }
                            earlier.pop_front();
                        }
                        let all = earlier.is_empty() && hand_over(&sink, traffic, &source, data);
                        queue.release(earlier);
                        all
                    }
                };
                if handled {
                    self.count_sent(data.len());
                    return;
                }
            }
        }
        if queue.push(source, data, 1, false, QUEUE_MAX_DATAGRAMS) {
            self.count_sent(data.len());
        } else {
            Counters::add(&self.counters.send_drops, 1);
        }
    }

    fn count_sent(&self, len: usize) {
        Counters::add(&self.counters.datagrams_sent, 1);
        Counters::add(&self.counters.bytes_sent, len as u64);
    }
}

/// Has `sink` handle a datagram of `traffic` from `from` on this thread, its listeners then
/// called, or left to the outermost [`ListenerScope`]; `false` when the sink cannot now.
fn hand_over(sink: &Arc<dyn Sink>, traffic: Traffic, from: &Locator, data: &[u8]) -> bool {
    let handled = {
        let _delivering = Delivering::enter();
        sink.deliver(traffic, from, data)
    };
    if !handled {
        return false;
    }
    if SCOPES.with(Cell::get) > 0 {
        DUE.with(|d| {
            let mut d = d.borrow_mut();
            let known = d.iter().any(|(s, t)| *t == traffic && Arc::ptr_eq(s, sink));
            if !known {
                d.push((Arc::clone(sink), traffic));
            }
        });
    } else {
        let _delivering = Delivering::enter();
        sink.after_delivery(traffic);
    }
    true
}

impl Drop for IntraTransport {
    fn drop(&mut self) {
        write_nodes().remove(&self.node.id);
    }
}

impl Transport for IntraTransport {
    fn name(&self) -> &'static str {
        "intra"
    }

    fn locators(&self) -> &TransportLocators {
        &self.locators
    }

    fn reach(&self) -> Reach {
        Reach {
            kind: Locator::KIND_TACHYON_INTRA,
            address_prefix: process_number().to_be_bytes().to_vec(),
            multicast: false,
        }
    }

    fn preference(&self) -> u8 {
        0
    }

    fn max_datagram(&self) -> usize {
        self.max_datagram
    }

    fn sources(&self) -> Vec<RxSource> {
        let mut s = vec![
            RxSource {
                id: META_PORT as usize,
                fd: Some(self.node.meta.fd()),
                traffic: Traffic::Discovery,
            },
            RxSource {
                id: USER_PORT as usize,
                fd: Some(self.node.user.fd()),
                traffic: Traffic::UserData,
            },
        ];
        if let Some(q) = &self.node.critical {
            s.push(RxSource {
                id: CRITICAL_PORT as usize,
                fd: Some(q.fd()),
                traffic: Traffic::Critical,
            });
        }
        s
    }

    fn receive(&self, source: usize, batch: &mut RecvBatch) -> io::Result<usize> {
        Ok(self.queue_of(source)?.pop_into(batch, &self.counters))
    }

    fn receive_wait(&self, source: usize, batch: &mut RecvBatch) -> io::Result<usize> {
        self.queue_of(source)?.wait_into(batch, &self.counters)
    }

    fn handled(&self, source: usize) {
        if let Ok(q) = self.queue_of(source) {
            q.handled();
        }
    }

    fn interrupt(&self) {
        let n = &self.node;
        for q in [Some(&n.meta), Some(&n.user), n.critical.as_ref()]
            .into_iter()
            .flatten()
        {
            q.interrupt();
        }
    }

    fn tx_buffer(&self) -> TxBuffer {
        self.pool.take()
    }

    fn send(&self, buf: TxBuffer, len: usize, dests: &[Locator], _priority: i32) -> io::Result<()> {
        let data = &buf[..len.min(buf.len())];
        for d in dests {
            let Some((domain, id, port)) = parse(d) else {
                Counters::add(&self.counters.skipped_locators, 1);
                continue;
            };
            if id == ALL {
                for target in read_nodes(|n| n.domain == domain && n.id != self.node.id) {
                    self.deliver(&target, port, data);
                }
                continue;
            }
            let target = nodes()
                .read()
                .unwrap_or_else(|p| p.into_inner())
                .get(&id)
                .and_then(Weak::upgrade);
            match target {
                Some(t) if t.domain == domain => self.deliver(&t, port, data),
                // A participant that closed: as a datagram to a closed port.
                _ => Counters::add(&self.counters.skipped_locators, 1),
            }
        }
        Ok(())
    }

    fn stats(&self) -> TransportStats {
        self.counters.snapshot()
    }
}

fn write_nodes() -> std::sync::RwLockWriteGuard<'static, HashMap<u32, Weak<Node>>> {
    nodes().write().unwrap_or_else(|p| p.into_inner())
}

/// The live participants that `keep` selects.
fn read_nodes(keep: impl Fn(&Node) -> bool) -> Vec<Arc<Node>> {
    nodes()
        .read()
        .unwrap_or_else(|p| p.into_inner())
        .values()
        .filter_map(Weak::upgrade)
        .filter(|n| keep(n))
        .collect()
}

/// The locator of participant `id`'s port `port` in domain `domain` of this process.
fn locator(domain: u32, id: u32, port: u32) -> Locator {
    let mut address = [0; 16];
    address[..8].copy_from_slice(&process_number().to_be_bytes());
    address[8..12].copy_from_slice(&domain.to_be_bytes());
    address[12..].copy_from_slice(&id.to_be_bytes());
    Locator {
        kind: Locator::KIND_TACHYON_INTRA,
        port,
        address,
    }
}

/// Domain, participant and port of a locator of this process.
fn parse(l: &Locator) -> Option<(u32, u32, u32)> {
    let word = |r: std::ops::Range<usize>| {
        let mut b = [0; 4];
        b.copy_from_slice(&l.address[r]);
        u32::from_be_bytes(b)
    };
    let ours = l.kind == Locator::KIND_TACHYON_INTRA
        && l.address[..8] == process_number().to_be_bytes()
        && l.port <= CRITICAL_PORT;
    ours.then(|| (word(8..12), word(12..16), l.port))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Records what it is given; delivers on the calling thread unless `refuse`.
    #[derive(Default)]
    struct Recorder {
        refuse: bool,
        got: Mutex<Vec<(Traffic, Vec<u8>, u32)>>,
        after: Mutex<Vec<Traffic>>,
    }

    impl Sink for Recorder {
        fn deliver(&self, traffic: Traffic, _from: &Locator, data: &[u8]) -> bool {
            let depth = DEPTH.with(Cell::get);
            self.got
                .lock()
                .expect("got")
                .push((traffic, data.to_vec(), depth));
            !self.refuse
        }
        fn after_delivery(&self, traffic: Traffic) {
            self.after.lock().expect("after").push(traffic);
        }
    }

    fn send(from: &IntraTransport, to: &Locator, bytes: &[u8]) {
        let mut buf = from.tx_buffer();
        buf[..bytes.len()].copy_from_slice(bytes);
        from.send(buf, bytes.len(), std::slice::from_ref(to), 0)
            .expect("send");
    }

    fn queued(t: &IntraTransport, source: usize) -> Vec<Vec<u8>> {
        let mut batch = RecvBatch::new(8, 2048);
        t.receive(source, &mut batch).expect("receive");
        batch.iter().map(|(_, b)| b.to_vec()).collect()
    }

    #[test]
    fn user_data_is_delivered_on_the_sending_thread_and_discovery_queued() {
        let a = IntraTransport::new(7, 1472, false).expect("a");
        let b = IntraTransport::new(7, 1472, true).expect("b");
        let sink = Arc::new(Recorder::default());
        let weak: Weak<dyn Sink> = Arc::downgrade(&(Arc::clone(&sink) as Arc<dyn Sink>));
        b.set_sink(weak);
        send(&a, &b.locators().default_unicast[0], b"user");
        send(&a, &b.locators().critical_unicast[0], b"critical");
        let got = sink.got.lock().expect("got").clone();
        assert_eq!(
            got,
            vec![
                (Traffic::UserData, b"user".to_vec(), 1),
                (Traffic::Critical, b"critical".to_vec(), 1)
            ],
            "handled on this thread, counted as a delivery while it ran"
        );
        assert_eq!(
            *sink.after.lock().expect("after"),
            vec![Traffic::UserData, Traffic::Critical],
            "without a scope the listeners are called at once"
        );
        assert!(queued(&b, USER_PORT as usize).is_empty(), "nothing queued");
        send(&a, &b.locators().metatraffic_unicast[0], b"sedp");
        assert_eq!(queued(&b, META_PORT as usize), vec![b"sedp".to_vec()]);
        assert_eq!(
            sink.got.lock().expect("got").len(),
            2,
            "discovery is not handled inline"
        );
        assert_eq!(a.stats().datagrams_sent, 3);
    }

    #[test]
    fn listeners_wait_for_the_outermost_scope_and_nested_sends_are_queued() {
        let a = IntraTransport::new(8, 1472, false).expect("a");
        let b = IntraTransport::new(8, 1472, false).expect("b");
        let sink = Arc::new(Recorder::default());
        b.set_sink(Arc::downgrade(&(Arc::clone(&sink) as Arc<dyn Sink>)));
        {
            let _outer = defer_listeners();
            {
                let _inner = defer_listeners();
                send(&a, &b.locators().default_unicast[0], b"one");
                send(&a, &b.locators().default_unicast[0], b"two");
            }
            assert!(
                sink.after.lock().expect("after").is_empty(),
                "an inner scope closed"
            );
        }
        assert_eq!(
            *sink.after.lock().expect("after"),
            vec![Traffic::UserData],
            "called once for both deliveries, when the outer scope closed"
        );
        // A send while a delivery runs on this thread is queued.
        let to = &b.locators().default_unicast[0];
        {
            let _delivering = Delivering::enter();
            send(&a, to, b"nested");
        }
        let got = |from: usize| -> Vec<Vec<u8>> {
            let got = sink.got.lock().expect("got");
            got[from..].iter().map(|(_, d, _)| d.clone()).collect()
        };
        assert_eq!(got(2), Vec::<Vec<u8>>::new(), "queued, not handed over");
        // The next send on a thread that is not delivering hands it over first, then its own.
        send(&a, to, b"behind");
        assert_eq!(got(2), vec![b"nested".to_vec(), b"behind".to_vec()]);
        assert!(queued(&b, USER_PORT as usize).is_empty(), "nothing left");
        // While a batch taken out by the participant's thread is being handled, a send
        // queues behind it rather than overtake it.
        {
            let _delivering = Delivering::enter();
            send(&a, to, b"in a batch");
        }
        assert_eq!(queued(&b, USER_PORT as usize), vec![b"in a batch".to_vec()]);
        send(&a, to, b"while handled");
        assert_eq!(
            got(4),
            Vec::<Vec<u8>>::new(),
            "the batch is not handled yet"
        );
        b.handled(USER_PORT as usize);
        send(&a, to, b"after");
        assert_eq!(
            got(4),
            vec![b"while handled".to_vec(), b"after".to_vec()],
            "once it is, the next send hands over what waits, then its own"
        );
    }

    #[test]
    fn a_refusing_sink_gets_the_queue_and_a_full_queue_drops_and_counts() {
        let a = IntraTransport::new(9, 1472, false).expect("a");
        let b = IntraTransport::new(9, 1472, false).expect("b");
        let sink = Arc::new(Recorder {
            refuse: true,
            ..Recorder::default()
        });
        b.set_sink(Arc::downgrade(&(Arc::clone(&sink) as Arc<dyn Sink>)));
        let to = b.locators().default_unicast[0];
        for _ in 0..QUEUE_MAX_DATAGRAMS + 5 {
            send(&a, &to, b"x");
        }
        let s = a.stats();
        assert_eq!(s.datagrams_sent, QUEUE_MAX_DATAGRAMS as u64);
        assert_eq!(s.send_drops, 5);
        assert!(sink.after.lock().expect("after").is_empty());
    }

    #[test]
    fn spdp_reaches_the_domain_only_and_reach_is_this_process() {
        let a = IntraTransport::new(11, 1472, false).expect("a");
        let b = IntraTransport::new(11, 1472, false).expect("b");
        let other_domain = IntraTransport::new(12, 1472, false).expect("c");
        send(&a, &a.locators().spdp_destinations[0], b"spdp");
        assert_eq!(queued(&b, 0), vec![b"spdp".to_vec()]);
        assert!(queued(&a, 0).is_empty(), "not to the sender");
        assert!(queued(&other_domain, 0).is_empty(), "not to another domain");
        assert!(a.reach().covers(&b.locators().default_unicast[0]));
        let mut elsewhere = b.locators().default_unicast[0];
        elsewhere.address[0] ^= 0xff;
        assert!(!a.reach().covers(&elsewhere), "another process's locator");
        // A participant that closed is skipped, not an error.
        let gone = b.locators().default_unicast[0];
        drop(b);
        send(&a, &gone, b"late");
        assert_eq!(a.stats().skipped_locators, 1);
    }
}
