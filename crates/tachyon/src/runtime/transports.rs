//! The transports of one participant, behind the [`Transport`] trait: what they announce
//! together, which one a destination goes through, and their receive sources for the
//! driver.
//!
//! Which transport carries a matched pair is decided in discovery, from the locators both
//! sides announce (`DiscoveryConfig::reach`, most preferred transport first): the protocol
//! then only ever names locators of the chosen transport for that pair, and [`route`]
//! finds it again when sending.
//!
//! [`route`]: Transports::route

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tachyon_proto::discovery::LocatorAlternates;
use tachyon_proto::maps::HashMap;

use tachyon_proto::Destination;
use tachyon_transport::intra::IntraTransport;
use tachyon_transport::shm::ShmTransport;
use tachyon_transport::xdp::XdpTransport;
use tachyon_transport::{
    RxSource, Transport, TransportLocators, TransportStats, TxBuffer, TxPool, UdpTransport,
};
use tachyon_wire::{GuidPrefix, Locator, Reach};

/// A participant's transports, most preferred first.
#[derive(Debug)]
pub(crate) struct Transports {
    list: Vec<Arc<dyn Transport>>,
    /// What each one reaches (`list` order).
    reach: Vec<Reach>,
    /// The UDP transport, for what only it has (participant index, multicast).
    udp: Option<Arc<UdpTransport>>,
    /// The in-process transport, which the runtime gives its sink.
    intra: Option<Arc<IntraTransport>>,
    /// The shared-memory transport, for its statistics.
    shm: Option<Arc<ShmTransport>>,
    /// The AF_XDP transport, for its statistics.
    xdp: Option<Arc<XdpTransport>>,
    /// The transport that publishes without a system call (`Transport::publishes`), and
    /// the kind of locator it takes: the first such, if any.
    publisher: Option<(usize, i32)>,
    /// What the participant announces: every transport's locators, most preferred first.
    locators: TransportLocators,
    /// Destinations no transport reaches (dropped).
    unroutable: AtomicU64,
    /// Where a datagram goes instead when the transport of a locator refuses it
    /// ([`Transport::send_or_refuse`]): the locators its participant announced next
    /// (discovery's [`LocatorAlternates`]), and whose they are.
    alternates: Mutex<HashMap<Locator, (GuidPrefix, Vec<Locator>)>>,
    /// Buffers of [`SMALL_DATAGRAM`] bytes that small datagrams are moved into while they wait
    /// in the outbox, so a burst of thousands of heartbeats or ACKNACKs (a discovery storm)
    /// holds thousands of small buffers, not thousands of 64 KiB ones.
    small: TxPool,
}

thread_local! {
    /// The destinations a transport refused for the datagram this thread sends
    /// ([`Transports::send_via`]).
    static REFUSED: Cell<Vec<Locator>> = const { Cell::new(Vec::new()) };
    /// Where it goes instead ([`Transports::send_instead`]).
    static INSTEAD: Cell<Vec<Locator>> = const { Cell::new(Vec::new()) };
}

/// Datagrams up to this size wait in the outbox in a small buffer (heartbeats, ACKNACKs,
/// GAPs, small samples).
pub(crate) const SMALL_DATAGRAM: usize = 1024;

impl Transports {
    /// `udp`, `xdp`, `intra`, `shm` (those given) and `others`, ordered by preference. `None`
    /// when there is none.
    pub(crate) fn new(
        udp: Option<Arc<UdpTransport>>,
        xdp: Option<XdpTransport>,
        intra: Option<IntraTransport>,
        shm: Option<ShmTransport>,
        others: Vec<Arc<dyn Transport>>,
    ) -> Option<Transports> {
        let intra = intra.map(Arc::new);
        let shm = shm.map(Arc::new);
        let xdp = xdp.map(Arc::new);
        let mut list = others;
        if let Some(x) = &xdp {
            list.push(Arc::clone(x) as Arc<dyn Transport>);
        }
        if let Some(i) = &intra {
            list.push(Arc::clone(i) as Arc<dyn Transport>);
        }
        if let Some(s) = &shm {
            list.push(Arc::clone(s) as Arc<dyn Transport>);
        }
        if let Some(u) = &udp {
            list.push(Arc::clone(u) as Arc<dyn Transport>);
        }
        if list.is_empty() {
            return None;
        }
        // Stable: equal preferences keep the order given.
        list.sort_by_key(|t| t.preference());
        let mut locators = TransportLocators::default();
        for t in &list {
            locators.append(t.locators());
        }
        let reach = list.iter().map(|t| t.reach()).collect();
        let publisher = list
            .iter()
            .enumerate()
            .find_map(|(i, t)| Some((i, t.publishes()?)));
        Some(Transports {
            list,
            reach,
            publisher,
            udp,
            intra,
            shm,
            xdp,
            locators,
            unroutable: AtomicU64::new(0),
            alternates: Mutex::new(HashMap::default()),
            small: TxPool::new(SMALL_DATAGRAM, 4096),
        })
    }

    /// The transport that publishes a datagram without a system call
    /// ([`Transport::publish`]), and the kind of locator it takes.
    pub(crate) fn publisher(&self) -> Option<(&dyn Transport, i32)> {
        let (i, kind) = self.publisher?;
        Some((self.list.get(i)?.as_ref(), kind))
    }

    /// Every transport, most preferred first.
    pub(crate) fn all(&self) -> &[Arc<dyn Transport>] {
        &self.list
    }

    /// What the transports reach, most preferred first (for discovery's choice).
    pub(crate) fn reach(&self) -> Vec<Reach> {
        self.reach.clone()
    }

    /// Every transport's locators, most preferred first.
    pub(crate) fn locators(&self) -> &TransportLocators {
        &self.locators
    }

    /// The UDP transport, if the participant has one.
    pub(crate) fn udp(&self) -> Option<&UdpTransport> {
        self.udp.as_deref()
    }

    /// The largest datagram every transport carries (a writer's datagrams may go through
    /// any of them).
    pub(crate) fn max_datagram(&self) -> usize {
        self.list
            .iter()
            .map(|t| t.max_datagram())
            .min()
            .unwrap_or(tachyon_proto::DEFAULT_MAX_DATAGRAM)
    }

    /// A buffer to write the next datagram into, lent by the most preferred transport.
    pub(crate) fn lend(&self) -> TxBuffer {
        match self.list.first() {
            Some(t) => t.tx_buffer(),
            None => TxBuffer::unpooled(tachyon_proto::DEFAULT_MAX_DATAGRAM),
        }
    }

    /// `buf` (holding a datagram of `len` bytes) to keep in the outbox: the same buffer, or,
    /// for a small datagram, a small copy (and `buf` goes back to be written into again).
    pub(crate) fn shrink(&self, buf: TxBuffer, len: usize) -> (TxBuffer, Option<TxBuffer>) {
        // A frame lent in place (AF_XDP) is sent as it is: copying it would be the copy it
        // exists to save, and frames are few and small.
        if len > SMALL_DATAGRAM || buf.len() <= SMALL_DATAGRAM || buf.is_frame() {
            return (buf, None);
        }
        let mut small = self.small.take();
        small[..len].copy_from_slice(&buf[..len]);
        (small, Some(buf))
    }

    /// The in-process transport, if the participant has one.
    pub(crate) fn intra(&self) -> Option<&IntraTransport> {
        self.intra.as_deref()
    }

    /// The shared-memory transport, if the participant has one.
    pub(crate) fn shm(&self) -> Option<&ShmTransport> {
        self.shm.as_deref()
    }

    /// The AF_XDP transport, if the participant has one.
    pub(crate) fn xdp(&self) -> Option<&XdpTransport> {
        self.xdp.as_deref()
    }

    /// The transport that reaches `locator`, if one does.
    pub(crate) fn route(&self, locator: &Locator) -> Option<usize> {
        self.reach.iter().position(|r| r.covers(locator))
    }

    /// Every receive source, with the index of its transport.
    pub(crate) fn sources(&self) -> Vec<(usize, RxSource)> {
        self.list
            .iter()
            .enumerate()
            .flat_map(|(i, t)| t.sources().into_iter().map(move |s| (i, s)))
            .collect()
    }

    /// Sends the first `len` bytes of `buf` to `dest`, through the transport of each
    /// locator. Failures are logged at debug and counted by the transports: UDP is lossy,
    /// reliability repairs.
    pub(crate) fn send(&self, buf: TxBuffer, len: usize, dest: &Destination, priority: i32) {
        let dests: &[Locator] = match dest {
            Destination::Unicast(l) | Destination::Multicast(l) => std::slice::from_ref(l),
            Destination::Many(ls) => ls,
        };
        let Some(first) = dests.first().and_then(|l| self.route(l)) else {
            return self.send_split(buf, len, dests, priority);
        };
        if dests[1..].iter().all(|l| self.route(l) == Some(first)) {
            self.send_via(first, buf, len, dests, priority);
        } else {
            self.send_split(buf, len, dests, priority);
        }
    }

    /// The rare case: destinations of several transports (or none) in one datagram.
    fn send_split(&self, buf: TxBuffer, len: usize, dests: &[Locator], priority: i32) {
        let mut by: Vec<Vec<Locator>> = vec![Vec::new(); self.list.len()];
        for l in dests {
            match self.route(l) {
                Some(i) => by[i].push(*l),
                None => {
                    self.unroutable.fetch_add(1, Ordering::Relaxed);
                    tracing::trace!(dest = %l, "no transport reaches this locator");
                }
            }
        }
        for (i, ls) in by.iter().enumerate().filter(|(_, ls)| !ls.is_empty()) {
            let mut copy = self.list[i].tx_buffer();
            let n = len.min(copy.len()).min(buf.len());
            copy[..n].copy_from_slice(&buf[..n]);
            self.send_via(i, copy, n, ls, priority);
        }
    }

    fn send_via(&self, i: usize, buf: TxBuffer, len: usize, dests: &[Locator], priority: i32) {
        let t = &self.list[i];
        // The sending thread's list, taken out and put back (a datagram sent instead comes
        // through here again, and finds it empty): a warm thread allocates nothing.
        let mut refused = REFUSED.take();
        refused.clear();
        match t.send_or_refuse(buf, len, dests, priority, &mut refused) {
            Ok(None) => {}
            Ok(Some(buf)) => self.send_instead(i, buf, len, &refused, priority),
            Err(e) => tracing::debug!(transport = t.name(), error = %e, "send failed"),
        }
        REFUSED.set(refused);
    }

    /// Sends a datagram the transport `refused_by` refused for `refused` to their
    /// alternates, through a transport less preferred than it; what has none is dropped.
    #[cold]
    fn send_instead(
        &self,
        refused_by: usize,
        buf: TxBuffer,
        len: usize,
        refused: &[Locator],
        priority: i32,
    ) {
        let mut instead = INSTEAD.take();
        instead.clear();
        {
            let alternates = self.alternates.lock().unwrap_or_else(|p| p.into_inner());
            for l in refused {
                match alternates.get(l) {
                    Some((_, alt)) => instead.extend(alt.iter().copied()),
                    None => {
                        self.unroutable.fetch_add(1, Ordering::Relaxed);
                        tracing::debug!(dest = %l, "refused by its transport, and no other way announced");
                    }
                }
            }
        }
        instead.sort_unstable_by_key(|l| (l.kind, l.port, l.address));
        instead.dedup();
        // Only to transports after the refusing one: the alternates are of those, and no
        // datagram goes round in a circle.
        instead.retain(|l| self.route(l).is_some_and(|i| i > refused_by));
        match instead.first().and_then(|l| self.route(l)) {
            // One transport (UDP, as a rule): the same buffer, no copy.
            Some(first) if instead[1..].iter().all(|l| self.route(l) == Some(first)) => {
                self.send_via(first, buf, len, &instead, priority);
            }
            Some(_) => self.send_split(buf, len, &instead, priority),
            None => {}
        }
        INSTEAD.set(instead);
    }

    /// Takes in what discovery learnt of other ways to remote locators
    /// ([`LocatorAlternates`]).
    pub(crate) fn learn_alternates(&self, a: LocatorAlternates) {
        let mut alternates = self.alternates.lock().unwrap_or_else(|p| p.into_inner());
        alternates.insert(a.locator, (a.participant, a.alternates));
    }

    /// Forgets the alternates of a participant that is gone.
    pub(crate) fn forget_alternates(&self, participant: GuidPrefix) {
        let mut alternates = self.alternates.lock().unwrap_or_else(|p| p.into_inner());
        if !alternates.is_empty() {
            alternates.retain(|_, (p, _)| *p != participant);
        }
    }

    /// How often the transports need their upkeep ([`Transport::upkeep`]): the shortest
    /// interval any asks for.
    pub(crate) fn upkeep_interval(&self) -> Option<std::time::Duration> {
        self.list.iter().filter_map(|t| t.upkeep_interval()).min()
    }

    /// Every transport's periodic work ([`Transport::upkeep`]).
    pub(crate) fn upkeep(&self) {
        for t in &self.list {
            t.upkeep();
        }
    }

    /// The counters of every transport, added up.
    pub(crate) fn stats(&self) -> TransportStats {
        let mut sum = TransportStats {
            skipped_locators: self.unroutable.load(Ordering::Relaxed),
            ..TransportStats::default()
        };
        for t in &self.list {
            let s = t.stats();
            sum.datagrams_received += s.datagrams_received;
            sum.bytes_received += s.bytes_received;
            sum.datagrams_sent += s.datagrams_sent;
            sum.bytes_sent += s.bytes_sent;
            sum.truncated += s.truncated;
            sum.send_drops += s.send_drops;
            sum.skipped_locators += s.skipped_locators;
            sum.send_errors += s.send_errors;
            sum.malformed += s.malformed;
            sum.refused += s.refused;
        }
        sum
    }
}
