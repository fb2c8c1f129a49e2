//! `storm`: a discovery storm. Announces `--participants` fake participants by SPDP, as if
//! that many had joined domain `--domain`: each has a GUID prefix of its own, a socket of its
//! own on 127.0.0.1 whose address it announces as its metatraffic (and default) unicast
//! locator, and the builtin endpoints of a full participant (`--fake-endpoints full`, the
//! default), so every real participant of the domain discovers it, matches its SEDP endpoints
//! with it and sends it what a new participant gets (`--fake-endpoints spdp`: SPDP only, so
//! nothing is matched). Every participant announces once per `--announce-period`, the announcements of all
//! of them spread evenly over the period, to where Tachyon's own discovery sends
//! announcements: the SPDP multicast group and port (unless `--unicast`) and the SPDP unicast
//! ports of participant indices `0..=--max-participant-index` on 127.0.0.1.
//!
//! Nothing answers what the real participants send back (no ACKNACK, no SEDP): the storm
//! reads it off each fake participant's socket once per period (when that participant is
//! announced) and counts it. It is silent for `--warmup` seconds, announces for `--duration`
//! seconds and stops (or at SIGINT/SIGTERM), then prints and writes (`--json`) what it sent.

use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;
use socket2::{Domain, Protocol, Socket, Type};
use tachyon_proto::discovery::{builtin_endpoints as be, ParticipantData};
use tachyon_transport::PortMapping;
use tachyon_wire::{
    DataSpec, EntityId, GuidPrefix, Header, InlineQos, Locator, MessageBuilder, PayloadKind,
    ProtocolVersion, SequenceNumber, Time, VendorId,
};

use super::options::{FakeEndpoints, PerfArgs};
use super::Failure;
use crate::stats::{ProcessSummary, Usage};

/// The SPDP multicast group (Tachyon's and the specification's default).
const SPDP_GROUP: Ipv4Addr = Ipv4Addr::new(239, 255, 0, 1);
/// Receive buffer of each fake participant's socket: what the real participants send it
/// between two reads; more is dropped by the kernel, as it would be for a slow peer.
const RECEIVE_BUFFER: usize = 64 * 1024;
/// Room for one announcement.
const MAX_MESSAGE: usize = 2048;

/// What a storm did (`bench/SCHEMA.md`, the `storm` record).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct StormSummary {
    pub domain: u32,
    pub participants: u32,
    pub announce_period_s: f64,
    pub lease_s: f64,
    /// The builtin endpoints announced: `full` or `spdp`.
    pub endpoints: String,
    /// Where every announcement went.
    pub destinations: Vec<String>,
    /// Announcements made (one per participant and period).
    pub announcements: u64,
    /// Datagrams sent: announcements × destinations, less `send_errors`.
    pub datagrams_sent: u64,
    pub send_errors: u64,
    /// Datagrams and octets the real participants sent to the fake ones, as read (a full
    /// socket buffer drops more, uncounted).
    pub received_datagrams: u64,
    pub received_bytes: u64,
    /// Seconds from the first announcement to the last.
    pub seconds: f64,
    pub announcements_per_s: f64,
}

/// The record `storm --json` writes.
#[derive(Clone, Debug, Serialize)]
pub struct StormRecord {
    pub schema: &'static str,
    pub implementation: &'static str,
    pub version: &'static str,
    pub role: &'static str,
    pub storm: StormSummary,
    pub process: ProcessSummary,
}

/// Where announcements go in `domain`: the SPDP multicast group's port unless `unicast`, then
/// the SPDP unicast port of every participant index up to `max_index` on 127.0.0.1.
pub fn destinations(
    domain: u32,
    unicast: bool,
    max_index: u32,
) -> Result<Vec<SocketAddrV4>, String> {
    let ports = PortMapping::default();
    let mut out = Vec::new();
    if !unicast {
        let port = ports.spdp_multicast(domain).map_err(|e| e.to_string())?;
        out.push(SocketAddrV4::new(SPDP_GROUP, port));
    }
    for i in 0..=max_index {
        let port = ports.spdp_unicast(domain, i).map_err(|e| e.to_string())?;
        out.push(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port));
    }
    Ok(out)
}

/// The GUID prefix of fake participant `index`: Tachyon's vendor id, `ST`, a per-process part
/// and the index, so two storms (and real participants) never collide.
pub fn fake_prefix(salt: u32, index: u32) -> GuidPrefix {
    let VendorId(v) = VendorId::TACHYON;
    let s = salt.to_be_bytes();
    let i = index.to_be_bytes();
    GuidPrefix([
        v[0], v[1], b'S', b'T', s[0], s[1], s[2], s[3], i[0], i[1], i[2], i[3],
    ])
}

/// What fake participant `index` announces: a participant of `domain` reachable at `locator`
/// with the builtin endpoints `endpoints` says.
pub fn fake_participant(
    prefix: GuidPrefix,
    index: u32,
    domain: u32,
    locator: SocketAddrV4,
    lease: Duration,
    endpoints: FakeEndpoints,
) -> ParticipantData {
    let mut d = ParticipantData::new(prefix, VendorId::TACHYON);
    d.domain_id = Some(domain);
    let l = Locator::udp(SocketAddr::V4(locator));
    d.metatraffic_unicast = vec![l];
    d.default_unicast = vec![l];
    d.builtin_endpoints = be::PARTICIPANT_ANNOUNCER | be::PARTICIPANT_DETECTOR;
    if endpoints == FakeEndpoints::Full {
        d.builtin_endpoints |= be::PUBLICATIONS_ANNOUNCER
            | be::PUBLICATIONS_DETECTOR
            | be::SUBSCRIPTIONS_ANNOUNCER
            | be::SUBSCRIPTIONS_DETECTOR
            | be::PARTICIPANT_MESSAGE_WRITER
            | be::PARTICIPANT_MESSAGE_READER;
    }
    d.lease_duration = Some(lease);
    d.entity_name = Some(format!("tachyon perf storm {index}"));
    d
}

/// An RTPS timestamp of `t`.
fn wire_time(t: SystemTime) -> Time {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    Time {
        seconds: i32::try_from(d.as_secs()).unwrap_or(i32::MAX),
        fraction: ((u64::from(d.subsec_nanos()) << 32) / 1_000_000_000) as u32,
    }
}

/// One SPDP announcement of the participant `prefix` with sequence number `sn`, as Tachyon's
/// own (INFO_TS, DATA from the SPDP writer with the key hash inline): its length in `buf`.
pub fn announcement(
    buf: &mut [u8],
    prefix: GuidPrefix,
    sn: i64,
    payload: &[u8],
    now: SystemTime,
) -> Option<usize> {
    let header = Header {
        protocol_version: ProtocolVersion::V2_5,
        vendor_id: VendorId::TACHYON,
        guid_prefix: prefix,
    };
    let mut key = [0u8; 16];
    key[..12].copy_from_slice(&prefix.0);
    key[12..].copy_from_slice(&EntityId::PARTICIPANT.0);
    let qos = InlineQos::new(Some(key), None);
    let mut mb = MessageBuilder::new(buf, &header).ok()?;
    mb.info_ts(Some(wire_time(now))).ok()?;
    mb.data(&DataSpec {
        reader_id: EntityId::SPDP_READER,
        writer_id: EntityId::SPDP_WRITER,
        writer_sn: SequenceNumber(sn),
        inline_qos: Some(qos.as_bytes()),
        kind: PayloadKind::Data,
        payload,
    })
    .ok()?;
    Some(mb.finish())
}

/// A fake participant: its socket and what it announces.
struct Fake {
    prefix: GuidPrefix,
    socket: UdpSocket,
    payload: Vec<u8>,
    sn: i64,
}

fn bind() -> std::io::Result<UdpSocket> {
    let s = Socket::new(Domain::IPV4, Type::DGRAM, Some(Protocol::UDP))?;
    s.set_recv_buffer_size(RECEIVE_BUFFER)?;
    s.set_multicast_loop_v4(true)?;
    s.set_nonblocking(true)?;
    s.bind(&SocketAddr::V4(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).into())?;
    Ok(s.into())
}

/// Reads what waits on `socket`: (datagrams, octets).
fn drain(socket: &UdpSocket, buf: &mut [u8]) -> (u64, u64) {
    let (mut n, mut bytes) = (0, 0);
    while let Ok(len) = socket.recv(buf) {
        n += 1;
        bytes += len as u64;
    }
    (n, bytes)
}

/// Sleeps until `t` or until `stop` is set; false when stopped.
fn sleep_until(t: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::Relaxed) {
            return false;
        }
        let now = Instant::now();
        if now >= t {
            return true;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(50)));
    }
}

/// Runs the storm as the arguments say.
pub fn run(a: &PerfArgs) -> Result<(), Failure> {
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .map_err(|e| Failure::Other(format!("cannot handle signal {signal}: {e}")))?;
    }
    super::pin_this_thread(a.cpu, a.rt_priority);
    let dests =
        destinations(a.domain, a.unicast, a.max_participant_index).map_err(Failure::Usage)?;
    let lease = Duration::from_secs_f64(a.lease);
    let salt = std::process::id();
    let mut fakes = Vec::with_capacity(a.participants as usize);
    for i in 0..a.participants {
        let socket = bind().map_err(|e| {
            Failure::Other(format!(
                "cannot open the socket of fake participant {i}: {e}"
            ))
        })?;
        let local = match socket.local_addr() {
            Ok(SocketAddr::V4(l)) => l,
            other => {
                return Err(Failure::Other(format!(
                    "unexpected local address {other:?}"
                )))
            }
        };
        let prefix = fake_prefix(salt, i);
        let payload =
            fake_participant(prefix, i, a.domain, local, lease, a.fake_endpoints).to_payload();
        fakes.push(Fake {
            prefix,
            socket,
            payload,
            sn: 0,
        });
    }
    let mut summary = StormSummary {
        domain: a.domain,
        participants: a.participants,
        announce_period_s: a.announce_period,
        lease_s: a.lease,
        endpoints: match a.fake_endpoints {
            FakeEndpoints::Full => "full",
            FakeEndpoints::Spdp => "spdp",
        }
        .to_owned(),
        destinations: dests.iter().map(ToString::to_string).collect(),
        ..StormSummary::default()
    };
    if !a.quiet {
        eprintln!(
            "storm: {} participants, each every {} s to {} destinations, from {} s for {} s",
            a.participants,
            a.announce_period,
            dests.len(),
            a.warmup,
            a.duration
        );
    }
    let usage = Usage::now();
    let start = Instant::now() + Duration::from_secs_f64(a.warmup);
    let end = start + Duration::from_secs_f64(a.duration);
    let gap = a.announce_period / f64::from(a.participants);
    let mut buf = vec![0u8; MAX_MESSAGE];
    let mut rx = vec![0u8; 65_536];
    let mut next_line = start + Duration::from_secs(1);
    let mut k: u64 = 0;
    let mut last = start;
    loop {
        let due = start + Duration::from_secs_f64(gap * k as f64);
        if due >= end || !sleep_until(due, &stop) {
            break;
        }
        let fake = &mut fakes[(k % u64::from(a.participants)) as usize];
        let (n, bytes) = drain(&fake.socket, &mut rx);
        summary.received_datagrams += n;
        summary.received_bytes += bytes;
        fake.sn += 1;
        let now = SystemTime::now();
        let len = announcement(&mut buf, fake.prefix, fake.sn, &fake.payload, now)
            .ok_or_else(|| Failure::Other("an announcement does not fit its buffer".into()))?;
        for d in &dests {
            match fake.socket.send_to(&buf[..len], d) {
                Ok(_) => summary.datagrams_sent += 1,
                Err(_) => summary.send_errors += 1,
            }
        }
        summary.announcements += 1;
        k += 1;
        last = Instant::now();
        if !a.quiet && last >= next_line {
            eprintln!(
                "storm {:6.1}s  {:>8} announcements  {:>9} datagrams sent  {:>8} received",
                last.duration_since(start).as_secs_f64(),
                summary.announcements,
                summary.datagrams_sent,
                summary.received_datagrams
            );
            next_line += Duration::from_secs(1);
        }
    }
    summary.seconds = last.saturating_duration_since(start).as_secs_f64();
    if summary.seconds > 0.0 {
        summary.announcements_per_s = summary.announcements as f64 / summary.seconds;
    }
    let record = StormRecord {
        schema: "tachyon-perf/1",
        implementation: "tachyon",
        version: env!("CARGO_PKG_VERSION"),
        role: "storm",
        storm: summary,
        process: usage.since(),
    };
    let s = &record.storm;
    eprintln!(
        "storm: {} announcements of {} participants in {:.1} s ({:.0}/s), {} datagrams sent ({} errors), {} received ({} octets)",
        s.announcements,
        s.participants,
        s.seconds,
        s.announcements_per_s,
        s.datagrams_sent,
        s.send_errors,
        s.received_datagrams,
        s.received_bytes
    );
    if let Some(path) = &a.json {
        let text =
            serde_json::to_string_pretty(&record).map_err(|e| Failure::Other(e.to_string()))?;
        if path == "-" {
            println!("{text}");
        } else {
            std::fs::write(path, text + "\n")
                .map_err(|e| Failure::Other(format!("cannot write {path}: {e}")))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use tachyon_wire::{MessageView, SubmessageView};

    #[test]
    fn announcements_go_to_the_spdp_ports_of_the_domain() {
        let d = destinations(3, false, 2).unwrap();
        let d: Vec<String> = d.iter().map(ToString::to_string).collect();
        // 7400 + 250 × 3 = 8150; unicast 8150 + 10 + 2i.
        assert_eq!(
            d,
            [
                "239.255.0.1:8150",
                "127.0.0.1:8160",
                "127.0.0.1:8162",
                "127.0.0.1:8164"
            ]
        );
        assert_eq!(destinations(3, true, 0).unwrap().len(), 1);
        assert!(destinations(300, false, 9).is_err());
    }

    #[test]
    fn prefixes_are_distinct_and_marked() {
        let a = fake_prefix(7, 0);
        let b = fake_prefix(7, 1);
        let c = fake_prefix(8, 0);
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert_eq!(&a.0[..4], &[0x01, 0xf0, b'S', b'T']);
    }

    #[test]
    fn an_announcement_is_a_valid_spdp_data_of_the_fake_participant() {
        let prefix = fake_prefix(42, 999);
        let at = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 40_000);
        let data = fake_participant(
            prefix,
            999,
            5,
            at,
            Duration::from_secs(10),
            FakeEndpoints::Full,
        );
        let payload = data.to_payload();
        let mut buf = vec![0u8; MAX_MESSAGE];
        let len = announcement(&mut buf, prefix, 3, &payload, SystemTime::now()).unwrap();
        let msg = MessageView::new_checked(&buf[..len]).unwrap();
        assert_eq!(msg.header().guid_prefix(), prefix);
        let mut found = false;
        for sub in msg.submessages() {
            if let SubmessageView::Data(d) = sub.unwrap() {
                assert_eq!(d.writer_id(), EntityId::SPDP_WRITER);
                assert_eq!(d.reader_id(), EntityId::SPDP_READER);
                assert_eq!(d.writer_sn(), SequenceNumber(3));
                let parsed =
                    ParticipantData::from_payload(d.serialized_payload().unwrap()).unwrap();
                assert_eq!(parsed.guid_prefix, prefix);
                assert_eq!(parsed.domain_id, Some(5));
                assert_eq!(
                    parsed.metatraffic_unicast,
                    vec![Locator::udp(SocketAddr::V4(at))]
                );
                assert_eq!(parsed.lease_duration, Some(Duration::from_secs(10)));
                assert_ne!(parsed.builtin_endpoints & be::PUBLICATIONS_DETECTOR, 0);
                found = true;
            }
        }
        assert!(found, "no DATA submessage");
        let spdp = fake_participant(
            prefix,
            1,
            5,
            at,
            Duration::from_secs(1),
            FakeEndpoints::Spdp,
        );
        assert_eq!(
            spdp.builtin_endpoints,
            be::PARTICIPANT_ANNOUNCER | be::PARTICIPANT_DETECTOR
        );
    }
}
