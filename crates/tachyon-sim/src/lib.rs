//! A deterministic, seeded, virtual-time network simulator that drives sans-IO protocol nodes.
//!
//! Nodes implement [`Node`] (the inputs and outputs of the sans-IO contract, DESIGN.md section 2).
//! A [`Sim`] owns them, the virtual clock, a seeded PRNG and an event queue of datagrams in
//! flight and node timers; it routes what nodes send over [`LinkConfig`] links (latency, jitter,
//! loss per IP fragment, duplication, reordering, bandwidth, queue limit, multicast). Nothing
//! reads a clock or the OS's randomness, so the same seed gives the same run, event for event.
//! Events at the same instant run in the order they were scheduled. One PRNG serves the whole
//! network, so adding a node or changing a link changes the random draws of everything after it;
//! [`FaultInjector`]s draw from their own.
//!
//! ```
//! use tachyon_proto::{Duration, Instant, Transmit, TxBuf};
//! use tachyon_sim::{udp4, LinkConfig, Node, RunOutcome, Sim};
//! use tachyon_wire::Locator;
//!
//! #[derive(Default)]
//! struct Sink(u64);
//! impl Node for Sink {
//!     fn handle_datagram(&mut self, _: Instant, _: &Locator, _: &Locator, _: &[u8]) { self.0 += 1 }
//!     fn handle_timeout(&mut self, _: Instant) {}
//!     fn poll_transmit(&mut self, _: Instant, _: &mut TxBuf) -> Option<Transmit> { None }
//!     fn poll_timeout(&self) -> Option<Instant> { None }
//! }
//!
//! let mut sim = Sim::new(42);
//! sim.set_default_link(LinkConfig::ideal(Duration::from_millis(5)).loss(0.1));
//! let a = sim.add_node(Sink::default(), [udp4([10, 0, 0, 1], 7410)]).unwrap();
//! let b = sim.add_node(Sink::default(), [udp4([10, 0, 0, 2], 7410)]).unwrap();
//! assert_eq!(sim.run_until_idle(Instant::from_nanos(1_000_000_000)), RunOutcome::Idle);
//! assert_eq!(sim.node::<Sink>(b).unwrap().0, 0);
//! assert_eq!(sim.node_stats(a).unwrap().sent, 0);
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod fault;
pub mod host;
pub mod link;
pub mod node;
pub mod rng;
pub mod scale;
pub mod sim;
pub mod snapshot;
pub mod stats;
pub mod trace;
pub mod tracer;

pub use fault::{FaultInjector, FaultStats, Faults};
pub use host::{App, Host, Idle};
pub use link::LinkConfig;
pub use node::{udp4, Node, NodeId};
pub use rng::Rng;
pub use sim::{RunOutcome, Sim, SimConfig, SimError};
pub use snapshot::{assert_snapshot, check_snapshot, SnapshotError, SnapshotOutcome, Table};
pub use stats::Counters;
pub use trace::{short_hash, trace_digest, DropReason, TraceEvent, TraceKind};
pub use tracer::{Record, Tracer};
