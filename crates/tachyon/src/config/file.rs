//! The configuration file's shape, as serde reads it: every entry optional, unknown keys
//! refused. Applying a section onto [`ParticipantSettings`] overrides only what it sets, so
//! the top level and then a `[domain.N]` section apply in turn over the defaults.

use std::collections::BTreeMap;

use serde::{Deserialize, Deserializer};

use super::threads::{ThreadMode, ThreadRoles, ThreadSettings};
use super::value::{
    CpuValue, GroupValue, IndexValue, LeaseValue, MulticastValue, PeerValue, PeriodValue,
    PriorityValue, ServersValue, SizeValue, SpinValue, UnixGroupValue,
};
use crate::domain::ParticipantSettings;
use tachyon_transport::xdp::{AttachMode, BindMode, XdpConfig, XdpTraffic};

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of configuration sections")]
pub(super) struct FileRepr {
    #[serde(default)]
    pub(super) log: LogRepr,
    #[serde(default)]
    udp: UdpRepr,
    #[serde(default)]
    discovery: DiscoveryRepr,
    #[serde(default)]
    limits: LimitsRepr,
    #[serde(default)]
    threads: ThreadsRepr,
    #[serde(default)]
    transports: TransportsRepr,
    #[serde(default)]
    shm: ShmRepr,
    #[serde(default)]
    xdp: XdpRepr,
    /// Per-domain overrides, keyed by domain id (TOML keys are strings).
    #[serde(default)]
    pub(super) domain: BTreeMap<String, SectionRepr>,
}

impl FileRepr {
    /// The top-level settings as a section.
    pub(super) fn top_level(&self) -> SectionRepr {
        SectionRepr {
            udp: self.udp.clone(),
            discovery: self.discovery.clone(),
            limits: self.limits.clone(),
            threads: self.threads.clone(),
            transports: self.transports.clone(),
            shm: self.shm.clone(),
            xdp: self.xdp.clone(),
        }
    }
}

/// `[log]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a [log] table")]
pub(super) struct LogRepr {
    #[serde(default, deserialize_with = "log_filter")]
    pub(super) filter: Option<String>,
}

/// What one domain's participants use: the top level, or a `[domain.N]` section.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table of [udp], [discovery], [limits], [threads], [transports], [shm] and [xdp] sections"
)]
pub(super) struct SectionRepr {
    #[serde(default)]
    udp: UdpRepr,
    #[serde(default)]
    discovery: DiscoveryRepr,
    #[serde(default)]
    limits: LimitsRepr,
    #[serde(default)]
    threads: ThreadsRepr,
    #[serde(default)]
    transports: TransportsRepr,
    #[serde(default)]
    shm: ShmRepr,
    #[serde(default)]
    xdp: XdpRepr,
}

impl SectionRepr {
    /// Overrides what this section sets.
    pub(super) fn apply(&self, s: &mut ParticipantSettings) {
        self.udp.apply(s);
        self.discovery.apply(s);
        self.limits.apply(s);
        self.threads.apply(&mut s.threads);
        self.transports.apply(s);
        self.shm.apply(s);
        self.xdp.apply(s);
    }
}

/// `[transports]`: which transports besides UDP a participant uses.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of transport settings")]
struct TransportsRepr {
    /// The in-process transport (default on).
    intra: Option<bool>,
    /// Shared memory between processes of the host (default on).
    shm: Option<bool>,
}

impl TransportsRepr {
    fn apply(&self, s: &mut ParticipantSettings) {
        if let Some(on) = self.intra {
            s.transports.no_intra = !on;
        }
        if let Some(on) = self.shm {
            s.transports.no_shm = !on;
        }
    }
}

/// `[shm]`: the shared-memory segment of each participant.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of shared-memory settings")]
struct ShmRepr {
    dir: Option<std::path::PathBuf>,
    small_slots: Option<u32>,
    small_slot_size: Option<SizeValue>,
    large_slots: Option<u32>,
    channels: Option<u32>,
    ring: Option<u32>,
    incoming: Option<u32>,
    group: Option<UnixGroupValue>,
    loan_bytes: Option<SizeValue>,
    spin: Option<SpinValue>,
}

impl ShmRepr {
    fn apply(&self, s: &mut ParticipantSettings) {
        let c = &mut s.shm;
        set(&mut c.dir, self.dir.clone());
        set(&mut c.small_slots, self.small_slots);
        set(
            &mut c.small_slot_size,
            self.small_slot_size
                .map(|v| u32::try_from(v.0).unwrap_or(u32::MAX)),
        );
        set(&mut c.large_slots, self.large_slots);
        set(&mut c.channels, self.channels);
        set(&mut c.ring, self.ring);
        set(&mut c.incoming, self.incoming);
        set(&mut c.group, self.group.map(|g| Some(g.0)));
        set(&mut c.loan_bytes, self.loan_bytes.map(|v| v.0 as u64));
        set(&mut c.spin, self.spin.map(|v| v.0));
    }
}

/// `[xdp]`: the AF_XDP transport (off unless `interface` is set).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of AF_XDP settings")]
struct XdpRepr {
    interface: Option<String>,
    queue: Option<u32>,
    #[serde(default, deserialize_with = "xdp_traffic")]
    traffic: Option<XdpTraffic>,
    #[serde(default, deserialize_with = "xdp_attach")]
    attach: Option<AttachMode>,
    #[serde(default, deserialize_with = "xdp_bind")]
    bind: Option<BindMode>,
    busy_poll: Option<bool>,
    vlan: Option<u16>,
    frames: Option<u32>,
    fallback: Option<bool>,
    multicast: Option<bool>,
}

impl XdpRepr {
    fn apply(&self, s: &mut ParticipantSettings) {
        let touched = self.interface.is_some()
            || self.queue.is_some()
            || self.traffic.is_some()
            || self.attach.is_some()
            || self.bind.is_some()
            || self.busy_poll.is_some()
            || self.vlan.is_some()
            || self.frames.is_some()
            || self.fallback.is_some()
            || self.multicast.is_some();
        if !touched {
            return;
        }
        let c = s.xdp.get_or_insert_with(XdpConfig::default);
        // "auto": the UDP transport's interface (the one it chose, or [udp] interface).
        set(
            &mut c.interface,
            self.interface
                .clone()
                .map(|i| if i.trim() == "auto" { String::new() } else { i }),
        );
        set(&mut c.queue, self.queue);
        set(&mut c.traffic, self.traffic);
        set(&mut c.attach, self.attach);
        set(&mut c.bind, self.bind);
        set(&mut c.busy_poll, self.busy_poll);
        set(&mut c.vlan, self.vlan.map(Some));
        set(&mut c.frames, self.frames);
        set(&mut c.fallback, self.fallback);
        set(&mut c.multicast, self.multicast);
    }
}

/// One of `choices` (the TOML string), or an error that lists them.
fn choice<'de, D: Deserializer<'de>, T: Copy>(
    d: D,
    key: &str,
    choices: &[(&str, T)],
) -> Result<Option<T>, D::Error> {
    let s = String::deserialize(d)?;
    choices
        .iter()
        .find(|(name, _)| *name == s.trim())
        .map(|&(_, v)| Some(v))
        .ok_or_else(|| {
            let names: Vec<String> = choices.iter().map(|(n, _)| format!("{n:?}")).collect();
            serde::de::Error::custom(format!(
                "xdp.{key}: expected one of {}, found {s:?}",
                names.join(", ")
            ))
        })
}

fn xdp_traffic<'de, D: Deserializer<'de>>(d: D) -> Result<Option<XdpTraffic>, D::Error> {
    choice(
        d,
        "traffic",
        &[
            ("critical", XdpTraffic::Critical),
            ("user", XdpTraffic::UserData),
        ],
    )
}

fn xdp_attach<'de, D: Deserializer<'de>>(d: D) -> Result<Option<AttachMode>, D::Error> {
    choice(
        d,
        "attach",
        &[
            ("auto", AttachMode::Auto),
            ("native", AttachMode::Native),
            ("generic", AttachMode::Generic),
        ],
    )
}

fn xdp_bind<'de, D: Deserializer<'de>>(d: D) -> Result<Option<BindMode>, D::Error> {
    choice(
        d,
        "bind",
        &[
            ("auto", BindMode::Auto),
            ("copy", BindMode::Copy),
            ("zero-copy", BindMode::ZeroCopy),
        ],
    )
}

/// `[udp]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of udp settings")]
struct UdpRepr {
    #[serde(default, deserialize_with = "interface")]
    interface: Option<Option<String>>,
    multicast: Option<MulticastValue>,
    spdp_multicast_group: Option<GroupValue>,
    peers: Option<Vec<PeerValue>>,
    participant_index: Option<IndexValue>,
    max_auto_participant_index: Option<u32>,
    #[serde(default)]
    ports: PortsRepr,
    receive_buffer_size: Option<SizeValue>,
    send_buffer_size: Option<SizeValue>,
    multicast_ttl: Option<u8>,
    multicast_loopback: Option<bool>,
    connected_destinations: Option<usize>,
}

impl UdpRepr {
    fn apply(&self, s: &mut ParticipantSettings) {
        let u = &mut s.udp;
        set(&mut u.interface, self.interface.clone());
        set(&mut u.multicast, self.multicast.map(|m| m.0));
        set(
            &mut u.spdp_multicast_group,
            self.spdp_multicast_group.map(|g| g.0),
        );
        set(
            &mut u.peers,
            self.peers.as_ref().map(|p| p.iter().map(|p| p.0).collect()),
        );
        set(
            &mut u.participant_index,
            self.participant_index.map(|i| i.0),
        );
        set(
            &mut u.max_auto_participant_index,
            self.max_auto_participant_index,
        );
        set(
            &mut u.receive_buffer_size,
            self.receive_buffer_size.map(|b| Some(b.0)),
        );
        set(
            &mut u.send_buffer_size,
            self.send_buffer_size.map(|b| Some(b.0)),
        );
        set(&mut u.multicast_ttl, self.multicast_ttl.map(u32::from));
        set(&mut u.multicast_loopback, self.multicast_loopback);
        set(&mut u.connected_destinations, self.connected_destinations);
        let p = &mut u.ports;
        let r = &self.ports;
        set(&mut p.base, r.base);
        set(&mut p.domain_gain, r.domain_gain);
        set(&mut p.participant_gain, r.participant_gain);
        set(&mut p.d0, r.d0);
        set(&mut p.d1, r.d1);
        set(&mut p.d2, r.d2);
        set(&mut p.d3, r.d3);
    }
}

/// `[udp.ports]`: the RTPS port mapping.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of port mapping settings")]
struct PortsRepr {
    base: Option<u32>,
    domain_gain: Option<u32>,
    participant_gain: Option<u32>,
    d0: Option<u32>,
    d1: Option<u32>,
    d2: Option<u32>,
    d3: Option<u32>,
}

/// `[discovery]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of discovery settings")]
struct DiscoveryRepr {
    servers: Option<ServersValue>,
    server: Option<ServerRepr>,
    lease_duration: Option<LeaseValue>,
    announce_period: Option<PeriodValue>,
    max_participants: Option<usize>,
    max_remote_endpoints: Option<usize>,
}

impl DiscoveryRepr {
    fn apply(&self, s: &mut ParticipantSettings) {
        set(
            &mut s.discovery_servers,
            self.servers.as_ref().map(|v| v.0.clone()),
        );
        if let Some(server) = &self.server {
            let d = crate::ServerRole::default();
            s.discovery_server = Some(crate::ServerRole {
                id: server.id.unwrap_or(d.id),
                port: server.port.map_or(d.port, u16::from),
            });
        }
        set(
            &mut s.lease_duration,
            self.lease_duration.map(|d| Some(d.0)),
        );
        set(
            &mut s.announce_period,
            self.announce_period.map(|d| Some(d.0)),
        );
        set(&mut s.max_participants, self.max_participants.map(Some));
        set(
            &mut s.max_remote_endpoints,
            self.max_remote_endpoints.map(Some),
        );
    }
}

/// `[discovery.server]`: this participant is a discovery server.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with the server's id and port"
)]
struct ServerRepr {
    id: Option<u8>,
    port: Option<std::num::NonZeroU16>,
}

/// `[limits]`: what each DataReader may hold of undelivered data.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, expecting = "a table of resource limits")]
struct LimitsRepr {
    max_reassembly_bytes: Option<SizeValue>,
    max_samples_in_reassembly: Option<usize>,
    max_sample_size: Option<SizeValue>,
    max_pending_bytes: Option<SizeValue>,
}

impl LimitsRepr {
    fn apply(&self, s: &mut ParticipantSettings) {
        if self.max_reassembly_bytes.is_some()
            || self.max_samples_in_reassembly.is_some()
            || self.max_sample_size.is_some()
        {
            let mut r = s.reassembly.unwrap_or_default();
            if let Some(v) = self.max_reassembly_bytes {
                r.max_total_bytes = v.0;
            }
            if let Some(v) = self.max_samples_in_reassembly {
                r.max_in_progress = v;
            }
            if let Some(v) = self.max_sample_size {
                // SizeValue is at most i32::MAX.
                r.max_sample_size = u32::try_from(v.0).unwrap_or(u32::MAX);
            }
            s.reassembly = Some(r);
        }
        set(
            &mut s.max_pending_bytes,
            self.max_pending_bytes.map(|v| Some(v.0)),
        );
    }
}

/// `[threads]`: the mode, strictness and critical threshold, and one table per role.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table of thread settings and roles"
)]
struct ThreadsRepr {
    #[serde(default, deserialize_with = "thread_mode")]
    mode: Option<ThreadMode>,
    strict: Option<bool>,
    critical_priority: Option<i32>,
    #[serde(default)]
    driver: ThreadRepr,
    #[serde(default)]
    receive: ThreadRepr,
    #[serde(default)]
    timers: ThreadRepr,
    #[serde(default)]
    critical: ThreadRepr,
}

impl ThreadsRepr {
    fn apply(&self, t: &mut ThreadRoles) {
        set(&mut t.mode, self.mode);
        set(&mut t.strict, self.strict);
        set(&mut t.critical_priority, self.critical_priority.map(Some));
        self.driver.apply(&mut t.driver);
        self.receive.apply(&mut t.receive);
        self.timers.apply(&mut t.timers);
        self.critical.apply(&mut t.critical);
    }
}

/// `[threads.ROLE]`.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "a table with cpus, priority, busy_poll and spin"
)]
struct ThreadRepr {
    cpus: Option<Vec<CpuValue>>,
    priority: Option<PriorityValue>,
    busy_poll: Option<PeriodValue>,
    spin: Option<SpinValue>,
}

impl ThreadRepr {
    fn apply(&self, t: &mut ThreadSettings) {
        if let Some(cpus) = &self.cpus {
            t.cpus = cpus.iter().map(|c| c.0).collect();
            t.cpus.sort_unstable();
            t.cpus.dedup();
        }
        set(&mut t.priority, self.priority.map(|p| Some(p.0)));
        set(&mut t.busy_poll, self.busy_poll.map(|d| Some(d.0)));
        set(&mut t.spin, self.spin.map(|d| Some(d.0)));
    }
}

/// Overrides `slot` when the file set a value.
fn set<T>(slot: &mut T, value: Option<T>) {
    if let Some(v) = value {
        *slot = v;
    }
}

/// `threads.mode`: `"driver"`, `"threads"` or `"single"`.
fn thread_mode<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ThreadMode>, D::Error> {
    let s = String::deserialize(d)?;
    match s.trim() {
        "driver" => Ok(Some(ThreadMode::Driver)),
        "threads" => Ok(Some(ThreadMode::Threads)),
        "single" => Ok(Some(ThreadMode::Single)),
        other => Err(serde::de::Error::custom(format!(
            "expected \"driver\" (a driver thread per participant), \"threads\" (receive \
             threads and a timers thread) or \"single\" (the application drives it), found \
             \"{other}\""
        ))),
    }
}

/// `interface`: a name or an address, or `"auto"` (`Some(None)`).
fn interface<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<String>>, D::Error> {
    let s = String::deserialize(d)?;
    match s.trim() {
        "" => Err(serde::de::Error::custom(
            "expected an interface name (\"eth0\"), an IPv4 address or \"auto\", found \"\"",
        )),
        "auto" => Ok(Some(None)),
        name => Ok(Some(Some(name.to_owned()))),
    }
}

/// `log.filter`: `tracing` directives like `"info"` or `"warn,tachyon=debug"`; the level of
/// each directive is checked (a bare word must be a level, a target needs `target=level`) so
/// a typo is an error, not a silently different filter.
fn log_filter<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    const LEVELS: [&str; 6] = ["trace", "debug", "info", "warn", "error", "off"];
    let s = String::deserialize(d)?;
    for directive in s.split(',').map(str::trim) {
        if directive.is_empty() || directive.contains('[') {
            continue;
        }
        // A bare word is a level here: `tracing` would read "verbose" as a target, silently.
        let level = directive.rsplit_once('=').map_or(directive, |(_, l)| l);
        if !LEVELS.contains(&level.to_ascii_lowercase().as_str()) {
            return Err(serde::de::Error::custom(format!(
                "unknown level \"{level}\" in \"{s}\" (expected trace, debug, info, warn, error \
                 or off)"
            )));
        }
    }
    Ok(Some(s))
}
