//! The simulator: nodes, virtual time, an event queue of datagrams in flight and node timers.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap, HashMap};
use std::fmt;

use tachyon_proto::{Destination, Duration, Instant, TxBuf};
use tachyon_wire::Locator;

use crate::link::{LinkConfig, LinkState};
use crate::node::{AnyNode, Node, NodeId};
use crate::rng::Rng;
use crate::stats::Counters;
use crate::trace::{short_hash, DropReason, TraceEvent, TraceKind};

/// Settings fixed when a [`Sim`] is built.
#[derive(Clone, Debug)]
pub struct SimConfig {
    /// Seed of the network's PRNG: the same seed and the same nodes give the same run.
    pub seed: u64,
    /// The link used between two nodes unless [`Sim::set_link`] overrides it.
    pub default_link: LinkConfig,
    /// Capacity of the transmit buffer handed to `poll_transmit` (largest datagram).
    pub max_datagram: usize,
    /// Record a [`TraceEvent`] for every network event.
    pub trace: bool,
    /// Events allowed at one instant before a run reports [`RunOutcome::Stalled`] (livelock guard).
    pub max_events_per_instant: u64,
    /// `poll_transmit` calls per node and event before the simulator stops draining it.
    pub max_transmits_per_poll: usize,
    /// The process's live heap bytes (from an instrumented global allocator), read around
    /// every call into a node so [`Sim::node_heap`] tells how much each node's own state grew.
    /// Only meaningful while no other thread allocates.
    pub heap_probe: Option<fn() -> usize>,
}

impl Default for SimConfig {
    fn default() -> Self {
        SimConfig {
            seed: 0,
            default_link: LinkConfig::default(),
            max_datagram: 65_536,
            trace: false,
            max_events_per_instant: 1_000_000,
            max_transmits_per_poll: 1_000_000,
            heap_probe: None,
        }
    }
}

/// Why a `run_*` call returned.
#[must_use]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunOutcome {
    /// No datagram in flight and no timer before the limit.
    Idle,
    /// The time limit was reached with work left.
    Deadline,
    /// More than `max_events_per_instant` events happened without time advancing.
    Stalled,
}

/// A mistake in building the simulated network.
#[non_exhaustive]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// No node has this id.
    UnknownNode(NodeId),
    /// Another node already owns this unicast locator, or it is a multicast group.
    LocatorInUse(Locator),
    /// A node needs at least one unicast locator (its first one is the source of its sends).
    NoLocator,
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::UnknownNode(id) => write!(f, "no node {id}"),
            SimError::LocatorInUse(l) => write!(f, "locator {l} is already in use"),
            SimError::NoLocator => f.write_str("a node needs at least one unicast locator"),
        }
    }
}

impl std::error::Error for SimError {}

/// A deterministic, seeded, virtual-time network of sans-IO [`Node`]s.
///
/// Build it, add nodes with their locators, configure links, then drive it with [`Sim::step`],
/// [`Sim::run_until`] or [`Sim::run_until_idle`]. After every event the touched node is drained:
/// `poll_transmit` until `None` (each datagram is routed over its link), then `poll_timeout`.
pub struct Sim {
    config: SimConfig,
    now: Instant,
    rng: Rng,
    nodes: Vec<Slot>,
    unicast: HashMap<Locator, NodeId>,
    groups: HashMap<Locator, BTreeSet<NodeId>>,
    links: BTreeMap<(NodeId, NodeId), Link>,
    queue: BinaryHeap<Reverse<Scheduled>>,
    next_seq: u64,
    in_flight: usize,
    touched: BTreeSet<NodeId>,
    txbuf: TxBuf,
    stats: Counters,
    trace: Vec<TraceEvent>,
    events_at_now: u64,
}

struct Slot {
    node: Box<dyn AnyNode>,
    locators: Vec<Locator>,
    timer: Option<Instant>,
    timer_gen: u64,
    stats: Counters,
    /// Net heap bytes allocated inside this node's calls (with a `heap_probe`).
    heap: i64,
}

#[derive(Default)]
struct Link {
    config: Option<LinkConfig>,
    state: LinkState,
    stats: Counters,
}

/// A queued event; ordered by time, then by the order it was scheduled (fixed tie-break).
struct Scheduled {
    at: Instant,
    seq: u64,
    event: Event,
}

enum Event {
    Deliver(Datagram),
    Timer { node: NodeId, generation: u64 },
}

struct Datagram {
    from: NodeId,
    to: NodeId,
    destination: Locator,
    data: Vec<u8>,
}

impl PartialEq for Scheduled {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Scheduled {}
impl PartialOrd for Scheduled {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Scheduled {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.at, self.seq).cmp(&(other.at, other.seq))
    }
}

impl Sim {
    /// A network with default settings and this seed.
    pub fn new(seed: u64) -> Sim {
        Sim::with_config(SimConfig {
            seed,
            ..SimConfig::default()
        })
    }

    /// A network with these settings. From now on the protocol's maps use a fixed hash
    /// seed ([`tachyon_proto::maps::fix_hash_seed`]): build participants after the
    /// simulator for runs that repeat exactly.
    pub fn with_config(config: SimConfig) -> Sim {
        tachyon_proto::maps::fix_hash_seed();
        Sim {
            rng: Rng::new(config.seed),
            txbuf: TxBuf::new(config.max_datagram),
            config,
            now: Instant::ZERO,
            nodes: Vec::new(),
            unicast: HashMap::new(),
            groups: HashMap::new(),
            links: BTreeMap::new(),
            queue: BinaryHeap::new(),
            next_seq: 0,
            in_flight: 0,
            touched: BTreeSet::new(),
            stats: Counters::default(),
            trace: Vec::new(),
            events_at_now: 0,
        }
    }

    // ----- building the network -----

    /// Attaches `node` with its unicast `locators` (the first is the source of its sends).
    pub fn add_node<N: Node + 'static>(
        &mut self,
        node: N,
        locators: impl IntoIterator<Item = Locator>,
    ) -> Result<NodeId, SimError> {
        let locators: Vec<Locator> = locators.into_iter().collect();
        if locators.is_empty() {
            return Err(SimError::NoLocator);
        }
        for (i, l) in locators.iter().enumerate() {
            if self.unicast.contains_key(l)
                || self.groups.contains_key(l)
                || locators[..i].contains(l)
            {
                return Err(SimError::LocatorInUse(*l));
            }
        }
        let id = NodeId(u32::try_from(self.nodes.len()).unwrap_or(u32::MAX));
        for l in &locators {
            self.unicast.insert(*l, id);
        }
        self.nodes.push(Slot {
            node: Box::new(node),
            locators,
            timer: None,
            timer_gen: 0,
            stats: Counters::default(),
            heap: 0,
        });
        // The node may want to send or arm a timer right away.
        self.touched.insert(id);
        Ok(id)
    }

    /// Makes `node` a member of the multicast `group`.
    pub fn join(&mut self, node: NodeId, group: Locator) -> Result<(), SimError> {
        self.slot(node)?;
        if self.unicast.contains_key(&group) {
            return Err(SimError::LocatorInUse(group));
        }
        self.groups.entry(group).or_default().insert(node);
        Ok(())
    }

    /// Removes `node` from the multicast `group` (nothing happens if it was not a member).
    pub fn leave(&mut self, node: NodeId, group: Locator) -> Result<(), SimError> {
        self.slot(node)?;
        if let Some(members) = self.groups.get_mut(&group) {
            members.remove(&node);
        }
        Ok(())
    }

    /// Replaces the link used between pairs without their own configuration.
    pub fn set_default_link(&mut self, config: LinkConfig) {
        self.config.default_link = config;
    }

    /// Configures the directed link `from` → `to`.
    pub fn set_link(
        &mut self,
        from: NodeId,
        to: NodeId,
        config: LinkConfig,
    ) -> Result<(), SimError> {
        self.slot(from)?;
        self.slot(to)?;
        self.links.entry((from, to)).or_default().config = Some(config);
        Ok(())
    }

    /// Configures both directions between `a` and `b` alike.
    pub fn set_link_symmetric(
        &mut self,
        a: NodeId,
        b: NodeId,
        config: LinkConfig,
    ) -> Result<(), SimError> {
        self.set_link(a, b, config.clone())?;
        self.set_link(b, a, config)
    }

    /// The configuration in force on the directed link `from` → `to`.
    pub fn link_config(&self, from: NodeId, to: NodeId) -> &LinkConfig {
        self.links
            .get(&(from, to))
            .and_then(|l| l.config.as_ref())
            .unwrap_or(&self.config.default_link)
    }

    /// Turns the event trace on or off (what was recorded is kept).
    pub fn set_tracing(&mut self, on: bool) {
        self.config.trace = on;
    }

    // ----- driving -----

    /// Processes the next event (jumping virtual time to it); `None` when nothing is scheduled.
    pub fn step(&mut self) -> Option<Instant> {
        self.flush_touched();
        let Reverse(s) = self.pop_live()?;
        if s.at > self.now {
            self.now = s.at;
            self.events_at_now = 0;
        }
        self.events_at_now += 1;
        let node = match s.event {
            Event::Deliver(d) => self.deliver(d),
            Event::Timer { node, .. } => self.fire_timer(node),
        };
        self.flush(node);
        Some(self.now)
    }

    /// Processes every event up to and including `deadline`, then sets the clock to it.
    pub fn run_until(&mut self, deadline: Instant) -> RunOutcome {
        loop {
            self.flush_touched();
            match self.peek_time() {
                Some(at) if at <= deadline => {
                    self.step();
                    if self.stalled() {
                        return RunOutcome::Stalled;
                    }
                }
                next => {
                    self.now = self.now.max(deadline);
                    return if next.is_none() {
                        RunOutcome::Idle
                    } else {
                        RunOutcome::Deadline
                    };
                }
            }
        }
    }

    /// [`Sim::run_until`] `now + d`.
    pub fn run_for(&mut self, d: Duration) -> RunOutcome {
        self.run_until(self.now + d)
    }

    /// Runs until no datagram is in flight and no timer is armed before `limit`, or until the
    /// next event is past `limit`. The clock stays at the last event processed.
    pub fn run_until_idle(&mut self, limit: Instant) -> RunOutcome {
        loop {
            self.flush_touched();
            let next_timer = self.nodes.iter().filter_map(|s| s.timer).min();
            if self.in_flight == 0 && next_timer.map_or(true, |t| t >= limit) {
                return RunOutcome::Idle;
            }
            match self.peek_time() {
                Some(at) if at <= limit => {
                    self.step();
                    if self.stalled() {
                        return RunOutcome::Stalled;
                    }
                }
                _ => return RunOutcome::Deadline,
            }
        }
    }

    // ----- getters -----

    /// The current virtual time.
    pub fn now(&self) -> Instant {
        self.now
    }

    /// The node `id` as its concrete type, if it is a `T`.
    pub fn node<T: Node + 'static>(&self, id: NodeId) -> Option<&T> {
        self.nodes.get(id.index())?.node.as_any().downcast_ref()
    }

    /// The node `id` as its concrete type, to issue commands; it is drained before the next event.
    pub fn node_mut<T: Node + 'static>(&mut self, id: NodeId) -> Option<&mut T> {
        let slot = self.nodes.get_mut(id.index())?;
        self.touched.insert(id);
        slot.node.as_any_mut().downcast_mut()
    }

    /// The unicast locators of node `id` (the first is its source locator).
    pub fn locators(&self, id: NodeId) -> &[Locator] {
        self.nodes.get(id.index()).map_or(&[], |s| &s.locators)
    }

    /// Number of nodes.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// Counters over the whole network.
    pub fn stats(&self) -> &Counters {
        &self.stats
    }

    /// Counters of one node: sends attributed to the sender, deliveries to the receiver.
    pub fn node_stats(&self, id: NodeId) -> Option<&Counters> {
        self.nodes.get(id.index()).map(|s| &s.stats)
    }

    /// How many heap bytes node `id`'s calls allocated and did not free (its state's growth
    /// since it was added); `None` without a [`SimConfig::heap_probe`] or for an unknown node.
    pub fn node_heap(&self, id: NodeId) -> Option<i64> {
        self.config.heap_probe?;
        self.nodes.get(id.index()).map(|s| s.heap)
    }

    /// Counters of the directed link `from` → `to` (zero if it never carried anything);
    /// `transmits` and `timeouts` belong to nodes and stay zero here.
    pub fn link_stats(&self, from: NodeId, to: NodeId) -> Counters {
        self.links
            .get(&(from, to))
            .map(|l| l.stats)
            .unwrap_or_default()
    }

    /// Datagram copies scheduled for delivery and not yet delivered.
    pub fn in_flight(&self) -> usize {
        self.in_flight
    }

    /// The recorded trace (empty unless tracing is on).
    pub fn trace(&self) -> &[TraceEvent] {
        &self.trace
    }

    /// Takes the recorded trace, leaving it empty.
    pub fn take_trace(&mut self) -> Vec<TraceEvent> {
        std::mem::take(&mut self.trace)
    }

    // ----- internals: events -----

    fn slot(&self, id: NodeId) -> Result<&Slot, SimError> {
        self.nodes.get(id.index()).ok_or(SimError::UnknownNode(id))
    }

    fn stalled(&self) -> bool {
        self.events_at_now > self.config.max_events_per_instant
    }

    fn schedule(&mut self, at: Instant, event: Event) {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.queue.push(Reverse(Scheduled { at, seq, event }));
    }

    fn is_live(&self, s: &Scheduled) -> bool {
        match s.event {
            Event::Deliver(_) => true,
            Event::Timer { node, generation } => self
                .nodes
                .get(node.index())
                .is_some_and(|slot| slot.timer_gen == generation && slot.timer.is_some()),
        }
    }

    /// Drops superseded timer entries from the head of the queue.
    fn discard_stale(&mut self) {
        while let Some(Reverse(head)) = self.queue.peek() {
            if self.is_live(head) {
                return;
            }
            self.queue.pop();
        }
    }

    fn peek_time(&mut self) -> Option<Instant> {
        self.discard_stale();
        self.queue.peek().map(|Reverse(s)| s.at)
    }

    fn pop_live(&mut self) -> Option<Reverse<Scheduled>> {
        self.discard_stale();
        self.queue.pop()
    }

    fn deliver(&mut self, d: Datagram) -> NodeId {
        self.in_flight = self.in_flight.saturating_sub(1);
        let len = d.data.len();
        let link = self.links.entry((d.from, d.to)).or_default();
        link.state.in_flight_bytes = link.state.in_flight_bytes.saturating_sub(len);
        link.stats.delivered += 1;
        link.stats.bytes_delivered += len as u64;
        self.stats.delivered += 1;
        self.stats.bytes_delivered += len as u64;
        self.record(TraceKind::Deliver, d.from, Some(d.to), &d.data);
        let now = self.now;
        // Datagrams are only scheduled between nodes that exist and nodes are never removed, so
        // both lookups succeed; a node always has at least one locator (checked in `add_node`).
        let source = self
            .nodes
            .get(d.from.index())
            .and_then(|s| s.locators.first().copied())
            .unwrap_or(Locator::INVALID);
        let Some(slot) = self.nodes.get_mut(d.to.index()) else {
            return d.to;
        };
        slot.stats.delivered += 1;
        slot.stats.bytes_delivered += len as u64;
        let before = heap(self.config.heap_probe);
        slot.node
            .handle_datagram(now, &source, &d.destination, &d.data);
        slot.heap += heap(self.config.heap_probe) - before;
        d.to
    }

    fn fire_timer(&mut self, id: NodeId) -> NodeId {
        let now = self.now;
        self.stats.timeouts += 1;
        self.record(TraceKind::Timeout, id, None, &[]);
        if let Some(slot) = self.nodes.get_mut(id.index()) {
            slot.timer = None;
            slot.stats.timeouts += 1;
            let before = heap(self.config.heap_probe);
            slot.node.handle_timeout(now);
            slot.heap += heap(self.config.heap_probe) - before;
        }
        id
    }

    fn flush_touched(&mut self) {
        while let Some(id) = self.touched.pop_first() {
            self.flush(id);
        }
    }

    /// Drains `id`'s transmits into the network, then re-reads its timer.
    fn flush(&mut self, id: NodeId) {
        let now = self.now;
        let mut out = Vec::new();
        let Some(slot) = self.nodes.get_mut(id.index()) else {
            return;
        };
        for _ in 0..self.config.max_transmits_per_poll {
            let before = heap(self.config.heap_probe);
            let t = slot.node.poll_transmit(now, &mut self.txbuf);
            slot.heap += heap(self.config.heap_probe) - before;
            let Some(t) = t else {
                break;
            };
            out.push((t.destination.clone(), self.txbuf.datagram(&t).to_vec()));
        }
        let timer = slot.node.poll_timeout();
        if timer != slot.timer {
            slot.timer = timer;
            slot.timer_gen += 1;
            if let Some(at) = timer {
                let generation = slot.timer_gen;
                self.schedule(
                    at.max(now),
                    Event::Timer {
                        node: id,
                        generation,
                    },
                );
            }
        }
        for (destination, data) in out {
            self.route(id, destination, data);
        }
    }

    // ----- internals: the network -----

    fn route(&mut self, from: NodeId, destination: Destination, data: Vec<u8>) {
        self.stats.transmits += 1;
        if let Some(slot) = self.nodes.get_mut(from.index()) {
            slot.stats.transmits += 1;
        }
        let locators = match destination {
            Destination::Unicast(l) | Destination::Multicast(l) => vec![l],
            Destination::Many(ls) => ls.to_vec(),
        };
        for locator in locators {
            if let Some(&to) = self.unicast.get(&locator) {
                self.send(from, to, locator, &data);
            } else if let Some(members) = self.groups.get(&locator) {
                let members: Vec<NodeId> = members.iter().copied().filter(|&m| m != from).collect();
                for to in members {
                    self.send(from, to, locator, &data);
                }
            } else {
                self.count(from, None, |c| c.no_route += 1);
                self.record(TraceKind::Drop(DropReason::NoRoute), from, None, &data);
            }
        }
    }

    /// Puts one copy of `data` on the link `from` → `to`.
    fn send(&mut self, from: NodeId, to: NodeId, destination: Locator, data: &[u8]) {
        let len = data.len();
        self.count(from, Some(to), |c| {
            c.sent += 1;
            c.bytes_sent += len as u64;
        });
        self.record(TraceKind::Send, from, Some(to), data);
        let config = self.link_config(from, to).clone();
        let now = self.now;

        if config.max_datagram.is_some_and(|max| len > max) {
            return self.drop_copy(from, to, data, DropReason::Oversize);
        }
        let link = self.links.entry((from, to)).or_default();
        if config
            .queue_limit
            .is_some_and(|q| link.state.in_flight_bytes + len > q)
        {
            return self.drop_copy(from, to, data, DropReason::QueueFull);
        }
        // The transmitter serializes datagrams one after the other; a lost one still used the wire.
        let departure = link.state.busy_until.max(now) + config.serialization_time(len);
        link.state.busy_until = departure;

        let fragments = config.fragments(len);
        if (0..fragments).any(|_| self.rng.chance(config.loss)) {
            let reason = if fragments > 1 {
                DropReason::FragmentLoss
            } else {
                DropReason::Loss
            };
            return self.drop_copy(from, to, data, reason);
        }
        let at = departure + self.delay(&config, from, to);
        self.enqueue(from, to, destination, data, at);
        if self.rng.chance(config.duplicate) {
            self.count(from, Some(to), |c| c.duplicated += 1);
            self.record(TraceKind::Duplicate, from, Some(to), data);
            let at = departure + self.delay(&config, from, to);
            self.enqueue(from, to, destination, data, at);
        }
    }

    /// Propagation delay of one copy: latency, jitter and the occasional reordering delay.
    fn delay(&mut self, config: &LinkConfig, from: NodeId, to: NodeId) -> Duration {
        let jitter = self.rng.up_to(nanos(config.jitter));
        let mut delay = config.latency + Duration::from_nanos(jitter);
        if self.rng.chance(config.reorder) {
            self.count(from, Some(to), |c| c.reordered += 1);
            delay += Duration::from_nanos(self.rng.up_to(nanos(config.reorder_delay)));
        }
        delay
    }

    fn enqueue(
        &mut self,
        from: NodeId,
        to: NodeId,
        destination: Locator,
        data: &[u8],
        at: Instant,
    ) {
        self.links
            .entry((from, to))
            .or_default()
            .state
            .in_flight_bytes += data.len();
        self.in_flight += 1;
        let d = Datagram {
            from,
            to,
            destination,
            data: data.to_vec(),
        };
        self.schedule(at, Event::Deliver(d));
    }

    fn drop_copy(&mut self, from: NodeId, to: NodeId, data: &[u8], reason: DropReason) {
        self.count(from, Some(to), |c| match reason {
            DropReason::Loss => c.lost += 1,
            DropReason::FragmentLoss => c.lost_fragment += 1,
            DropReason::Oversize => c.oversize += 1,
            DropReason::QueueFull => c.queue_full += 1,
            DropReason::NoRoute => c.no_route += 1,
        });
        self.record(TraceKind::Drop(reason), from, Some(to), data);
    }

    /// Applies `f` to the global, sender and (when there is one) link counters.
    fn count(&mut self, from: NodeId, to: Option<NodeId>, f: impl Fn(&mut Counters)) {
        f(&mut self.stats);
        if let Some(slot) = self.nodes.get_mut(from.index()) {
            f(&mut slot.stats);
        }
        if let Some(to) = to {
            f(&mut self.links.entry((from, to)).or_default().stats);
        }
    }

    fn record(&mut self, kind: TraceKind, from: NodeId, to: Option<NodeId>, data: &[u8]) {
        if self.config.trace {
            self.trace.push(TraceEvent {
                time: self.now,
                kind,
                from,
                to,
                len: data.len(),
                hash: if data.is_empty() { 0 } else { short_hash(data) },
            });
        }
    }
}

/// The live heap bytes the probe reads (0 without one).
fn heap(probe: Option<fn() -> usize>) -> i64 {
    probe.map_or(0, |p| i64::try_from(p()).unwrap_or(i64::MAX))
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}
