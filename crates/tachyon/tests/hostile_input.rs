//! Malformed and hostile input on a running participant's sockets: truncated messages, wrong
//! submessage lengths, bogus ParameterLists, a flood of 10,000 fake participants and fragments
//! of a sample that never completes. They are dropped and counted, memory stays within the
//! configured limits, and a reliable stream between two real participants keeps flowing.

mod common;

use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{wait_matched, wait_until_within};
use tachyon::prelude::*;
use tachyon::statistics::{ParticipantStatistics, ReassemblyLimits};
use tachyon::ParticipantSettings;
use tachyon_proto::discovery::ParticipantData;
use tachyon_transport::PortMapping;
use tachyon_wire::{
    DataFragSpec, DataSpec, EntityId, EntityKind, GuidPrefix, Header, MessageBuilder, PayloadKind,
    ProtocolVersion, SequenceNumber, VendorId,
};

const DOMAIN: u32 = 13;
const MAX_PARTICIPANTS: usize = 64;
const REASSEMBLY_BYTES: usize = 2 * 1024 * 1024;
const FAKE_PARTICIPANTS: u32 = 10_000;
const RSS_GROWTH_LIMIT: u64 = 64 * 1024 * 1024;

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Hostile")]
struct Keyed {
    #[key]
    id: u32,
    seq: u64,
    payload: Vec<u8>,
}

/// A small deterministic generator (xorshift64*), so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

fn header(prefix: GuidPrefix) -> Header {
    Header {
        protocol_version: ProtocolVersion::V2_5,
        vendor_id: VendorId([0x01, 0x99]),
        guid_prefix: prefix,
    }
}

/// One message built with `f`.
fn message(prefix: GuidPrefix, f: impl FnOnce(&mut MessageBuilder<'_>)) -> Vec<u8> {
    let mut buf = vec![0u8; 65_000];
    let mut mb = MessageBuilder::new(&mut buf, &header(prefix)).expect("header fits");
    f(&mut mb);
    let n = mb.finish();
    buf.truncate(n);
    buf
}

/// An SPDP DATA carrying `payload` (a serialized ParameterList, valid or not).
fn spdp(prefix: GuidPrefix, payload: &[u8]) -> Vec<u8> {
    message(prefix, |mb| {
        mb.data(&DataSpec {
            reader_id: EntityId::SPDP_READER,
            writer_id: EntityId::SPDP_WRITER,
            writer_sn: SequenceNumber(1),
            inline_qos: None,
            kind: PayloadKind::Data,
            payload,
        })
        .expect("DATA fits");
    })
}

/// A PL_CDR_LE payload of raw parameters `(pid, value)`, with or without the sentinel.
fn parameter_list(params: &[(u16, u16, &[u8])], sentinel: bool) -> Vec<u8> {
    let mut v = vec![0x00, 0x03, 0x00, 0x00];
    for &(pid, len, value) in params {
        v.extend_from_slice(&pid.to_le_bytes());
        v.extend_from_slice(&len.to_le_bytes());
        v.extend_from_slice(value);
    }
    if sentinel {
        v.extend_from_slice(&[0x01, 0x00, 0x00, 0x00]);
    }
    v
}

const PID_PARTICIPANT_GUID: u16 = 0x0050;
const PID_DOMAIN_ID: u16 = 0x000f;
const PID_METATRAFFIC_UNICAST_LOCATOR: u16 = 0x0032;

fn guid_value(prefix: [u8; 12]) -> Vec<u8> {
    let mut v = prefix.to_vec();
    v.extend_from_slice(&[0, 0, 1, 0xc1]);
    v
}

fn locator_value(port: u32) -> Vec<u8> {
    let mut v = 1i32.to_le_bytes().to_vec();
    v.extend_from_slice(&port.to_le_bytes());
    v.extend_from_slice(&[0; 12]);
    v.extend_from_slice(&[127, 0, 0, 1]);
    v
}

/// (a) Truncated RTPS headers and random bytes.
fn garbage(rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut out = vec![
        Vec::new(),
        b"R".to_vec(),
        b"RTP".to_vec(),
        b"RTPS".to_vec(),
        b"RTPS\x02\x05".to_vec(),
        b"RTPX\x02\x05\x01\x99aaaaaaaaaaaa".to_vec(),
    ];
    // A valid header cut anywhere in its 20 bytes.
    let h = message(GuidPrefix([0x66; 12]), |_| {});
    for n in 0..h.len() {
        out.push(h[..n].to_vec());
    }
    for _ in 0..200 {
        let n = rng.below(1400) as usize;
        out.push(rng.bytes(n));
    }
    // "RTPS" and a plausible header, then noise where the submessages should be.
    for _ in 0..200 {
        let mut m = h.clone();
        let n = rng.below(600) as usize;
        m.extend(rng.bytes(n));
        out.push(m);
    }
    out
}

/// (b) Valid headers with submessages whose length fields are wrong.
fn bad_lengths(rng: &mut Rng, prefix: GuidPrefix) -> Vec<Vec<u8>> {
    let payload = [0u8, 1, 0, 0, 1, 2, 3, 4];
    let data = message(prefix, |mb| {
        mb.data(&DataSpec {
            reader_id: EntityId::UNKNOWN,
            writer_id: EntityId::new([0, 0, 9], EntityKind::USER_WRITER_WITH_KEY),
            writer_sn: SequenceNumber(1),
            inline_qos: None,
            kind: PayloadKind::Data,
            payload: &payload,
        })
        .expect("DATA fits");
        mb.heartbeat(
            EntityId::UNKNOWN,
            EntityId::new([0, 0, 9], EntityKind::USER_WRITER_WITH_KEY),
            SequenceNumber(1),
            SequenceNumber(1),
            tachyon_wire::Count(1),
            false,
            false,
        )
        .expect("HEARTBEAT fits");
    });
    // The first submessage header is at 20: id, flags, octetsToNextHeader (little endian).
    let set_len = |len: u16| {
        let mut m = data.clone();
        m[22..24].copy_from_slice(&len.to_le_bytes());
        m
    };
    let mut out = vec![
        set_len(0xffff),
        set_len(0),
        set_len(4),
        set_len(3),
        set_len((data.len() - 24 + 1) as u16),
    ];
    // The second submessage cut short, or its length past the end.
    for cut in [data.len() - 1, data.len() - 5, 25, 23] {
        out.push(data[..cut].to_vec());
    }
    for _ in 0..200 {
        let mut m = set_len(rng.next() as u16);
        if rng.below(2) == 0 {
            let at = 20 + rng.below((m.len() - 20) as u64) as usize;
            m[at] = rng.next() as u8;
        }
        out.push(m);
    }
    out
}

/// (c) SPDP DATA with bogus ParameterLists.
fn bogus_parameter_lists(rng: &mut Rng) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    let fake = |i: u32| {
        let mut p = [0xbb; 12];
        p[..4].copy_from_slice(&i.to_be_bytes());
        p
    };
    let domain = DOMAIN.to_le_bytes();
    for i in 0..20u32 {
        let prefix = fake(i);
        let guid = guid_value(prefix);
        let lists: Vec<Vec<u8>> = vec![
            // A parameter length running past the end.
            parameter_list(&[(PID_PARTICIPANT_GUID, 0xfff0, &guid)], true),
            // No sentinel.
            parameter_list(
                &[
                    (PID_PARTICIPANT_GUID, 16, &guid),
                    (PID_DOMAIN_ID, 4, &domain),
                ],
                false,
            ),
            // Odd lengths.
            parameter_list(
                &[
                    (PID_PARTICIPANT_GUID, 16, &guid),
                    (PID_DOMAIN_ID, 3, &domain[..3]),
                ],
                true,
            ),
            parameter_list(&[(PID_PARTICIPANT_GUID, 15, &guid[..15])], true),
            // An unknown parameter that must be understood.
            parameter_list(
                &[
                    (PID_PARTICIPANT_GUID, 16, &guid),
                    (0x4000 | 0x3abc, 4, &[1, 2, 3, 4]),
                ],
                true,
            ),
            // A locator of the wrong length.
            parameter_list(
                &[
                    (PID_PARTICIPANT_GUID, 16, &guid),
                    (
                        PID_METATRAFFIC_UNICAST_LOCATOR,
                        20,
                        &locator_value(7777)[..20],
                    ),
                ],
                true,
            ),
            // No GUID at all; an empty list; no encapsulation header.
            parameter_list(&[(PID_DOMAIN_ID, 4, &domain)], true),
            parameter_list(&[], false),
            vec![0x00],
            // Random parameters.
            {
                let mut v = vec![0x00, 0x03, 0x00, 0x00];
                let n = 64 + rng.below(400) as usize;
                v.extend(rng.bytes(n));
                v
            },
        ];
        for l in lists {
            out.push(spdp(GuidPrefix(prefix), &l));
        }
    }
    // Absurd locator counts in otherwise valid announcements: 2,000 locators each.
    for i in 100..104u32 {
        let prefix = fake(i);
        let guid = guid_value(prefix);
        let loc = locator_value(9);
        let mut params: Vec<(u16, u16, &[u8])> = vec![
            (PID_PARTICIPANT_GUID, 16, &guid),
            (PID_DOMAIN_ID, 4, &domain),
        ];
        params.extend((0..2000).map(|_| (PID_METATRAFFIC_UNICAST_LOCATOR, 24, &loc[..])));
        out.push(spdp(GuidPrefix(prefix), &parameter_list(&params, true)));
    }
    out
}

/// (d) Announcements of `n` participants with distinct GUID prefixes (one template, its prefix
/// patched).
fn fake_participants(n: u32) -> impl Iterator<Item = Vec<u8>> {
    let template_prefix = [0xfa, 0xce, 0xfa, 0xce, 0, 0, 0, 0, 0x5a, 0x5a, 0x5a, 0x5a];
    let mut d = ParticipantData::new(GuidPrefix(template_prefix), VendorId([0x01, 0x99]));
    d.domain_id = Some(DOMAIN);
    d.lease_duration = Some(tachyon_proto::Duration::from_secs(100));
    let template = spdp(GuidPrefix(template_prefix), &d.to_payload());
    let at: Vec<usize> = template
        .windows(12)
        .enumerate()
        .filter(|(_, w)| *w == template_prefix)
        .map(|(i, _)| i)
        .collect();
    assert!(
        at.len() >= 2,
        "prefix in the header and in PID_PARTICIPANT_GUID"
    );
    (0..n).map(move |i| {
        let mut m = template.clone();
        for &a in &at {
            m[a + 4..a + 8].copy_from_slice(&i.to_be_bytes());
        }
        m
    })
}

/// (e) DATA_FRAGs of a 4 MiB sample, every fragment but the last, from `prefix`/`writer`.
fn never_completing(prefix: GuidPrefix, writer: EntityId, sn: i64) -> Vec<Vec<u8>> {
    const SAMPLE: u32 = 4 * 1024 * 1024;
    const FRAGMENT: u16 = 16 * 1024;
    let fragment = vec![0x42u8; usize::from(FRAGMENT)];
    let total = SAMPLE / u32::from(FRAGMENT);
    (1..total)
        .map(|n| {
            message(prefix, |mb| {
                mb.data_frag(&DataFragSpec {
                    reader_id: EntityId::UNKNOWN,
                    writer_id: writer,
                    writer_sn: SequenceNumber(sn),
                    fragment_starting_num: n,
                    fragment_size: FRAGMENT,
                    sample_size: SAMPLE,
                    inline_qos: None,
                    key: false,
                    fragments: &fragment,
                })
                .expect("DATA_FRAG fits");
            })
        })
        .collect()
}

fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS");
    kib * 1024
}

/// Sends datagrams to every destination, pausing now and then so the receiver's socket buffer
/// is not the bottleneck (kernel drops would count nowhere).
struct Sender {
    socket: UdpSocket,
    sent: u64,
    /// Bytes sent since the last pause.
    burst: usize,
}

impl Sender {
    fn send(&mut self, bytes: &[u8], to: &[SocketAddr]) {
        for a in to {
            // Errors (no multicast route, a too large datagram) do not matter here.
            let _ = self.socket.send_to(bytes, a);
            self.sent += 1;
            // The kernel accounts about 1 KiB per small datagram: pause every 64 datagrams or
            // 64 KiB, well inside a default receive buffer.
            self.burst += bytes.len().max(1024);
            if self.burst >= 64 * 1024 {
                self.burst = 0;
                std::thread::sleep(Duration::from_millis(2));
            }
        }
    }
}

fn print(name: &str, s: &ParticipantStatistics) {
    eprintln!(
        "{name}: received {} datagrams; malformed: {} datagrams, {} submessages, {} discovery, \
         {} reader; unknown destination {}; participants {} (max {}), refused {}; \
         reassembly: {} in progress, {} bytes, {} rejected, {} abandoned; pending {} B; \
         endpoints {}",
        s.receive.datagrams_received,
        s.receive.malformed_datagrams,
        s.receive.malformed_submessages,
        s.discovery.malformed,
        s.readers.stats.malformed,
        s.receive.unknown_destination,
        s.remote_participants,
        s.max_participants,
        s.discovery.participants_refused,
        s.readers.reassembly_in_progress,
        s.readers.reassembly_bytes,
        s.readers.reassembly.rejected,
        s.readers.reassembly.abandoned,
        s.readers.pending_bytes,
        s.remote_endpoints,
    );
}

#[test]
fn hostile_input_is_dropped_counted_and_bounded_while_data_flows() {
    tachyon_transport::testing::require_isolated_network();
    // RUST_LOG=tachyon_proto=debug shows every drop.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_test_writer()
        .try_init();
    let started = Instant::now();
    let settings = ParticipantSettings {
        max_participants: Some(MAX_PARTICIPANTS),
        reassembly: Some(ReassemblyLimits {
            max_sample_size: 8 * 1024 * 1024,
            max_total_bytes: REASSEMBLY_BYTES,
            max_in_progress: 8,
        }),
        // Room for the flood in the socket (the kernel caps it at net.core.rmem_max): what
        // the kernel drops never reaches the counters.
        udp: tachyon::UdpConfig {
            receive_buffer_size: Some(4 << 20),
            ..tachyon::UdpConfig::default()
        },
        ..ParticipantSettings::default()
    };
    let a = DomainParticipant::with_settings(DOMAIN, &settings).expect("participant a");
    let b = DomainParticipant::with_settings(DOMAIN, &settings).expect("participant b");
    let (w, r) = common::reliable_pair::<Keyed>(&a, &b, "hostile");
    wait_matched(&w, &r);
    eprintln!("matched after {:?}", started.elapsed());

    // Where the reader's participant listens.
    let ports = PortMapping::default();
    let index = b.participant_index().expect("an indexed participant");
    let host = Ipv4Addr::LOCALHOST;
    let meta = SocketAddr::from((host, ports.spdp_unicast(DOMAIN, index).expect("port")));
    let user = SocketAddr::from((host, ports.user_unicast(DOMAIN, index).expect("port")));
    let multicast = SocketAddr::from((
        Ipv4Addr::new(239, 255, 0, 1),
        ports.spdp_multicast(DOMAIN).expect("port"),
    ));
    let both = [meta, user];
    let discovery = if b.uses_multicast() {
        vec![meta, multicast]
    } else {
        vec![meta]
    };
    let socket = UdpSocket::bind((host, 0)).expect("raw socket");
    let _ = socket.set_multicast_loop_v4(true);
    let mut tx = Sender {
        socket,
        sent: 0,
        burst: 0,
    };

    // The writer keeps writing through the flood; the reader takes everything.
    let n_during = 300u64;
    let n_after = 50u64;
    let flooding = Arc::new(AtomicBool::new(true));
    let writer = {
        let flooding = Arc::clone(&flooding);
        std::thread::spawn(move || {
            let mut i = 0u64;
            while i < n_during {
                let s = Keyed {
                    id: (i % 8) as u32,
                    seq: i,
                    payload: vec![i as u8; 64 + (i as usize % 500)],
                };
                w.write(&s).expect("write during the flood");
                i += 1;
                if flooding.load(Ordering::Relaxed) {
                    // Spread over the whole flood.
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
            w
        })
    };

    print("writer's participant before the flood", &a.statistics());
    print("reader's participant before the flood", &b.statistics());
    let rss_before = rss_bytes();
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let flood_started = Instant::now();
    let garbage = garbage(&mut rng);
    for m in &garbage {
        tx.send(m, &both);
    }
    let bad_lengths = bad_lengths(&mut rng, GuidPrefix([0x77; 12]));
    for m in &bad_lengths {
        tx.send(m, &both);
    }
    let bogus = bogus_parameter_lists(&mut rng);
    for m in &bogus {
        tx.send(m, &discovery);
    }
    for (i, m) in fake_participants(FAKE_PARTICIPANTS).enumerate() {
        tx.send(&m, &discovery);
        if i % 500 == 499 {
            // Paced, so a loaded machine's kernel does not drop most of it.
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    // Fragments from a writer nobody is matched with, then from one that looks like the
    // matched writer (its participant's prefix and entity id), of samples that never complete.
    let unmatched = never_completing(
        GuidPrefix([0x99; 12]),
        EntityId::new([0, 0, 7], EntityKind::USER_WRITER_WITH_KEY),
        1,
    );
    for m in &unmatched {
        tx.send(m, &[user]);
    }
    let real_writer = {
        let wguid = r.matched_publications()[0];
        (wguid.prefix, wguid.entity_id)
    };
    for sn in [1000, 1001] {
        for m in never_completing(real_writer.0, real_writer.1, sn) {
            tx.send(&m, &[user]);
        }
    }
    let flood_time = flood_started.elapsed();
    flooding.store(false, Ordering::Relaxed);
    eprintln!(
        "flood: {} datagrams sent in {flood_time:?} ({} garbage, {} bad lengths, {} bogus \
         parameter lists, {FAKE_PARTICIPANTS} fake participants, {} + 2×{} fragments)",
        tx.sent,
        garbage.len(),
        bad_lengths.len(),
        bogus.len(),
        unmatched.len(),
        unmatched.len(),
    );

    // Every sample written during and after the flood arrives.
    let w = writer.join().expect("writer thread");
    for i in n_during..n_during + n_after {
        let s = Keyed {
            id: (i % 8) as u32,
            seq: i,
            payload: vec![i as u8; 64],
        };
        w.write(&s).expect("write after the flood");
    }
    let mut got = Vec::new();
    wait_until_within("every sample", Duration::from_secs(15), || {
        got.extend(
            r.take(usize::MAX)
                .expect("take")
                .into_iter()
                .filter_map(|s| s.data),
        );
        got.len() >= (n_during + n_after) as usize
    });
    let mut seqs: Vec<u64> = got.iter().map(|k| k.seq).collect();
    seqs.sort_unstable();
    assert_eq!(
        seqs,
        (0..n_during + n_after).collect::<Vec<_>>(),
        "each sample once"
    );
    assert_eq!(r.decode_errors(), 0);

    let sa = a.statistics();
    let sb = b.statistics();
    print("writer's participant", &sa);
    print("reader's participant", &sb);
    let rss_after = rss_bytes();
    let growth = rss_after.saturating_sub(rss_before);
    eprintln!(
        "RSS {} MiB before the flood, {} MiB after (+{} KiB); {:?} in all",
        rss_before >> 20,
        rss_after >> 20,
        growth >> 10,
        started.elapsed()
    );

    // Dropped and counted, in the order of magnitude sent. Not all of it: the kernel drops
    // part of a burst when the socket's receive buffer is full (more so on a loaded machine),
    // and those never reach the participant.
    let garbage_sent = (garbage.len() * 2) as u64;
    assert!(
        sb.receive.malformed_datagrams >= garbage_sent / 10,
        "{} malformed datagrams of {garbage_sent} sent",
        sb.receive.malformed_datagrams
    );
    assert!(sb.receive.malformed_datagrams + sb.receive.malformed_submessages >= garbage_sent / 10);
    assert!(sb.discovery.malformed >= 100, "{}", sb.discovery.malformed);
    assert!(
        sb.discovery.participants_refused >= u64::from(FAKE_PARTICIPANTS) / 10,
        "{} refused",
        sb.discovery.participants_refused
    );
    assert!(
        sb.receive.unknown_destination >= unmatched.len() as u64 / 10,
        "{} unknown destination",
        sb.receive.unknown_destination
    );
    assert!(
        sb.readers.reassembly.rejected > 0,
        "the budget refused fragments"
    );
    // Bounded by the configured limits.
    for s in [&sa, &sb] {
        assert_eq!(s.max_participants, MAX_PARTICIPANTS);
        assert!(
            s.remote_participants <= MAX_PARTICIPANTS,
            "{}",
            s.remote_participants
        );
        assert!(
            s.readers.reassembly_bytes <= REASSEMBLY_BYTES,
            "{}",
            s.readers.reassembly_bytes
        );
    }
    assert!(
        sb.readers.reassembly_bytes > 0,
        "the matched-looking writer's fragments were held"
    );
    // The real peers still know each other.
    let known = |p: &DomainParticipant, other: &DomainParticipant| {
        p.discovered_participants()
            .iter()
            .any(|d| d.key.guid().prefix == other.guid_prefix())
    };
    assert!(known(&a, &b) && known(&b, &a));
    assert!(
        growth < RSS_GROWTH_LIMIT,
        "RSS grew by {} MiB over the flood",
        growth >> 20
    );
    assert!(started.elapsed() < Duration::from_secs(60));
}
