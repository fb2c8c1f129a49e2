//! Discovery at scale: `N` participants of `M` endpoints each, started together on one
//! multicast-capable network, run until every endpoint is matched and then through a window
//! of steady state (issue 18, part 1).
//!
//! Participant `i` has `M/2` writers, on topics `t{i}_{k}`, and `M/2` readers, reader `k` on
//! the topic of writer `k` of participant `i + 1 + k mod (N−1)`: every topic has one writer and
//! one reader on different participants, so each endpoint expects exactly one match however
//! large `N` grows, while every participant still discovers all `N·M` endpoints (as a robot's
//! processes do: most topics are someone else's business). Writers and readers are reliable.
//!
//! [`run`] reports time to full discovery and to full match, traffic per participant during
//! the join and in steady state, handled messages (datagrams plus timer expiries, the
//! simulator's measure of CPU) and, when the simulator has a heap probe, the heap each
//! participant's own state grew by. [`memory`] derives the bytes per remote participant and
//! per remote endpoint from two runs (without and with endpoints).

use std::cell::Cell;
use std::rc::Rc;

use tachyon_proto::discovery::{
    fastdds_server_prefix, DiscoveryConfig, DiscoveryServer, PublicationData, SubscriptionData,
};
use tachyon_proto::qos::{DataReaderQos, DataWriterQos};
use tachyon_proto::{
    Duration, Event, Instant, Participant, ParticipantConfig, ReaderConfig, Reliability,
    WriterConfig,
};
use tachyon_wire::{Guid, GuidPrefix, Locator};

use crate::host::{App, Host};
use crate::link::LinkConfig;
use crate::node::{udp4, NodeId};
use crate::sim::{RunOutcome, Sim, SimConfig};
use crate::stats::Counters;

/// One scale scenario.
#[derive(Clone, Debug)]
pub struct ScaleConfig {
    /// Participants, each on its own simulated host (at most 2^24).
    pub participants: u32,
    /// Endpoints per participant, half writers and half readers (an odd count gets one more
    /// writer).
    pub endpoints: u32,
    /// Probability that a datagram copy (one IP fragment) is lost.
    pub loss: f64,
    /// One-way latency between any two hosts; each datagram gets up to as much again as jitter.
    pub latency: Duration,
    /// Seed of the network.
    pub seed: u64,
    /// Time left to pass after the last match before the steady window starts (the initial
    /// burst of SPDP announcements, 5 at 100 ms, and the last repairs are over by then).
    pub settle: Duration,
    /// Length of the steady-state window (a whole number of SPDP periods keeps the rate
    /// comparable between runs).
    pub steady: Duration,
    /// Virtual time after which a run that has not matched everything gives up.
    pub limit: Duration,
    /// The live heap bytes of the process (see [`SimConfig::heap_probe`]).
    pub heap_probe: Option<fn() -> usize>,
    /// Discovery through a discovery server (`discovery/server.rs`) on a host of its own,
    /// every participant its client, no multicast; `false`: simple discovery by multicast.
    pub server: bool,
}

impl ScaleConfig {
    /// `participants` × `endpoints`, no loss, 200 µs latency, a 30 s steady window.
    pub fn new(participants: u32, endpoints: u32) -> ScaleConfig {
        ScaleConfig {
            participants,
            endpoints,
            loss: 0.0,
            latency: Duration::from_micros(200),
            seed: 1,
            settle: Duration::from_secs(1),
            steady: Duration::from_secs(30),
            limit: Duration::from_secs(120),
            heap_probe: None,
            server: false,
        }
    }
}

/// Traffic and work per participant over a window: totals, or rates after
/// [`Traffic::per_second`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Traffic {
    /// Datagrams a participant sent (a multicast send counts once).
    pub sent: f64,
    /// Datagrams a participant received.
    pub received: f64,
    /// Bytes a participant received.
    pub bytes_received: f64,
    /// Datagrams plus timer expiries a participant handled.
    pub handled: f64,
}

impl Traffic {
    fn between(a: &Counters, b: &Counters, participants: u32) -> Traffic {
        let per = |x: u64, y: u64| y.saturating_sub(x) as f64 / f64::from(participants.max(1));
        Traffic {
            sent: per(a.transmits, b.transmits),
            received: per(a.delivered, b.delivered),
            bytes_received: per(a.bytes_delivered, b.bytes_delivered),
            handled: per(a.delivered + a.timeouts, b.delivered + b.timeouts),
        }
    }

    /// The totals divided by the window's length.
    pub fn per_second(self, window: Duration) -> Traffic {
        let secs = window.as_secs_f64().max(1e-9);
        Traffic {
            sent: self.sent / secs,
            received: self.received / secs,
            bytes_received: self.bytes_received / secs,
            handled: self.handled / secs,
        }
    }
}

/// What one run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct ScaleReport {
    /// The scenario.
    pub participants: u32,
    /// Endpoints per participant.
    pub endpoints: u32,
    /// Loss probability.
    pub loss: f64,
    /// Discovery went through a discovery server (counted among the participants' averages).
    pub server: bool,
    /// When the last participant knew all others (`None`: not within the limit).
    pub discovered_at: Option<Duration>,
    /// When the last endpoint was matched (`None`: not within the limit); equal to
    /// `discovered_at` without endpoints.
    pub matched_at: Option<Duration>,
    /// Totals per participant from the start to the last match (with no model of CPU time,
    /// the join takes milliseconds of virtual time: rates over it would mean little).
    pub join: Traffic,
    /// Rates per participant over the steady window after the last match.
    pub steady: Traffic,
    /// Average growth of a participant's heap over the run (with a heap probe).
    pub heap_per_participant: Option<f64>,
    /// Remote participants and endpoints refused by discovery's limits, over all participants
    /// (a scale run must refuse none).
    pub refused: u64,
    /// Events handled: datagram deliveries plus timer expiries over the whole run.
    pub handled: u64,
}

/// Memory of discovery state, measured by two runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Memory {
    /// Heap bytes a participant holds per remote participant it knows.
    pub per_remote_participant: f64,
    /// Heap bytes a participant holds per remote endpoint it knows (including its share of
    /// the matched pairs).
    pub per_remote_endpoint: f64,
}

/// Runs one scenario.
pub fn run(config: &ScaleConfig) -> ScaleReport {
    let n = config.participants.max(2);
    let mut sim = Sim::with_config(SimConfig {
        seed: config.seed,
        default_link: LinkConfig::ideal(config.latency)
            .jitter(config.latency)
            .loss(config.loss),
        max_events_per_instant: u64::MAX,
        heap_probe: config.heap_probe,
        ..SimConfig::default()
    });
    let done = Progress::default();
    let server = config.server.then(|| DiscoveryServer {
        prefix: fastdds_server_prefix(0),
        locators: vec![server_locator()],
    });
    let mut ids: Vec<NodeId> = (0..n)
        .map(|i| {
            let (participant, app) = host(i, n, config.endpoints, &done, server.as_ref());
            let id = sim
                .add_node(Host::new(participant, app), [locator(i)])
                .expect("distinct locators");
            if server.is_none() {
                sim.join(id, spdp_group()).expect("a known node");
            }
            id
        })
        .collect();
    // The server knows every client when it is done.
    let mut total = n as usize;
    if let Some(server) = &server {
        let discovery = DiscoveryConfig {
            metatraffic_unicast: server.locators.clone(),
            default_unicast: server.locators.clone(),
            max_participants: n as usize,
            server: true,
            ..DiscoveryConfig::default()
        };
        let p = Participant::with_discovery(server.prefix, ParticipantConfig::default(), discovery);
        let app = ScaleApp::new(n as usize, 0, &done);
        let id = sim
            .add_node(Host::new(p, app), [server_locator()])
            .expect("distinct locators");
        ids.push(id);
        total += 1;
    }

    let start = *sim.stats();
    let limit = Instant::ZERO + config.limit;
    let step = Duration::from_millis(10);
    while done.matched.get() < total && sim.now() < limit {
        if sim.run_for(step) == RunOutcome::Stalled {
            break;
        }
    }
    let joined = *sim.stats();
    let apps = || ids.iter().filter_map(|&id| sim.node::<Host<ScaleApp>>(id));
    let latest = |f: fn(&ScaleApp) -> Option<Instant>| -> Option<Duration> {
        apps()
            .map(|h| f(&h.app))
            .try_fold(Instant::ZERO, |m, t| t.map(|t| m.max(t)))
            .map(|t| t - Instant::ZERO)
    };
    let discovered_at = latest(|a| a.discovered_at);
    let matched_at = latest(|a| a.matched_at);
    // Per participant: the server, when there is one, is one of them.
    let nodes = u32::try_from(total).unwrap_or(u32::MAX);
    let join = Traffic::between(&start, &joined, nodes);

    // Steady state: after the settling time.
    let _ = sim.run_for(config.settle);
    let before = *sim.stats();
    let _ = sim.run_for(config.steady);
    let after = *sim.stats();
    let steady = Traffic::between(&before, &after, nodes).per_second(config.steady);

    let heap_per_participant = config.heap_probe.map(|_| {
        let total: i64 = ids.iter().filter_map(|&id| sim.node_heap(id)).sum();
        total as f64 / f64::from(n)
    });
    let refused = ids
        .iter()
        .filter_map(|&id| sim.node::<Host<ScaleApp>>(id))
        .map(|h| {
            let s = h.participant.discovery_stats();
            s.participants_refused + s.endpoints_refused
        })
        .sum();
    ScaleReport {
        participants: n,
        endpoints: config.endpoints,
        loss: config.loss,
        server: config.server,
        discovered_at,
        matched_at,
        join,
        steady,
        heap_per_participant,
        refused,
        handled: after.delivered + after.timeouts,
    }
}

/// Heap bytes per remote participant and per remote endpoint: the heap growth of a run
/// without endpoints divided by the remote participants each knows, and the extra growth of
/// the run with `config.endpoints` divided by the remote endpoints each knows. `None` without
/// a heap probe, or when a run did not complete.
pub fn memory(config: &ScaleConfig) -> Option<(Memory, ScaleReport, ScaleReport)> {
    let bare = run(&ScaleConfig {
        endpoints: 0,
        ..config.clone()
    });
    let full = run(config);
    let n = f64::from(full.participants);
    let (Some(h0), Some(h1)) = (bare.heap_per_participant, full.heap_per_participant) else {
        return None;
    };
    bare.matched_at?;
    full.matched_at?;
    let remote_endpoints = (n - 1.0) * f64::from(config.endpoints.max(1));
    let m = Memory {
        per_remote_participant: h0 / (n - 1.0),
        per_remote_endpoint: (h1 - h0) / remote_endpoints,
    };
    Some((m, bare, full))
}

/// Counts participants that are done, shared by every application of one run.
#[derive(Clone, Default)]
struct Progress {
    matched: Rc<Cell<usize>>,
}

/// The application of one participant: records when it knew every other participant and when
/// each of its endpoints was matched.
struct ScaleApp {
    others: usize,
    expected_matches: usize,
    known: usize,
    matches: usize,
    discovered_at: Option<Instant>,
    matched_at: Option<Instant>,
    progress: Progress,
}

impl ScaleApp {
    fn new(others: usize, expected_matches: usize, progress: &Progress) -> ScaleApp {
        ScaleApp {
            others,
            expected_matches,
            known: 0,
            matches: 0,
            discovered_at: None,
            matched_at: None,
            progress: progress.clone(),
        }
    }
}

impl App for ScaleApp {
    fn on_event(&mut self, now: Instant, _: &mut Participant, event: Event) {
        match event {
            Event::ParticipantDiscovered { .. } => self.known += 1,
            Event::ParticipantLost { .. } => self.known = self.known.saturating_sub(1),
            Event::PublicationMatched { matched, .. }
            | Event::SubscriptionMatched { matched, .. } => {
                if matched {
                    self.matches += 1;
                } else {
                    self.matches = self.matches.saturating_sub(1);
                }
            }
            _ => {}
        }
        if self.discovered_at.is_none() && self.known >= self.others {
            self.discovered_at = Some(now);
        }
        if self.matched_at.is_none()
            && self.discovered_at.is_some()
            && self.matches >= self.expected_matches
        {
            self.matched_at = Some(now);
            self.progress.matched.set(self.progress.matched.get() + 1);
        }
    }
}

/// The SPDP multicast group and port of domain 0.
fn spdp_group() -> Locator {
    udp4([239, 255, 0, 1], 7400)
}

/// The discovery server's host and port.
fn server_locator() -> Locator {
    udp4([10, 255, 255, 254], 11811)
}

/// Host `i`'s unicast locator, 10.0.0.1 on.
fn locator(i: u32) -> Locator {
    let [_, a, b, c] = (i + 1).to_be_bytes();
    udp4([10, a, b, c], 7410)
}

fn prefix(i: u32) -> GuidPrefix {
    let mut p = [0u8; 12];
    p[0] = 0x01;
    p[1] = 0xf0;
    p[8..].copy_from_slice(&i.to_be_bytes());
    GuidPrefix(p)
}

fn host(
    i: u32,
    n: u32,
    endpoints: u32,
    progress: &Progress,
    server: Option<&DiscoveryServer>,
) -> (Participant, ScaleApp) {
    let discovery = DiscoveryConfig {
        spdp_destinations: if server.is_some() {
            Vec::new()
        } else {
            vec![spdp_group()]
        },
        metatraffic_unicast: vec![locator(i)],
        default_unicast: vec![locator(i)],
        max_participants: n as usize + 1,
        servers: server.into_iter().cloned().collect(),
        ..DiscoveryConfig::default()
    };
    let mut p = Participant::with_discovery(prefix(i), ParticipantConfig::default(), discovery);
    let writers = endpoints.div_ceil(2);
    let readers = endpoints / 2;
    for k in 0..writers {
        let w = p
            .create_writer(WriterConfig {
                reliability: Reliability::Reliable,
                ..WriterConfig::default()
            })
            .expect("a valid writer configuration");
        let qos = DataWriterQos::default();
        let mut data = PublicationData::new(Guid::UNKNOWN, &format!("t{i}_{k}"), "Payload");
        data.qos = qos.into();
        p.announce_writer(Instant::ZERO, w, data)
            .expect("a fresh writer");
    }
    for k in 0..readers {
        let r = p
            .create_reader(ReaderConfig {
                reliability: Reliability::Reliable,
                ..ReaderConfig::default()
            })
            .expect("a valid reader configuration");
        let owner = (i + 1 + k % (n - 1)) % n;
        let mut data = SubscriptionData::new(Guid::UNKNOWN, &format!("t{owner}_{k}"), "Payload");
        data.qos = DataReaderQos::default().reliable().into();
        p.announce_reader(Instant::ZERO, r, data)
            .expect("a fresh reader");
    }
    // Each reader matches one writer; writer k is read only when readers have a reader k.
    let expected_matches = 2 * readers as usize;
    // A client knows the server too.
    let others = n as usize - 1 + usize::from(server.is_some());
    (p, ScaleApp::new(others, expected_matches, progress))
}
