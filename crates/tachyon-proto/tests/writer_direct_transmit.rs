//! `Participant::poll_writer_transmit`: a write's own datagram taken at once, before the
//! transmit scan (what the runtime publishes into a shared-memory ring under its lock, or
//! queues for its outbox whatever the transport), is the datagram the scan would have sent,
//! byte for byte, whatever the kind of the one locator it goes to; what follows it (the rest
//! of a fragmented sample, heartbeats, repairs) still goes through the scan, in the same
//! order. A writer whose new data do not all go to one accepted locator builds nothing.

use tachyon_cdr::KeyHash;
use tachyon_proto::history::{Durability, History, Payload, WriterHistoryConfig};
use tachyon_proto::{
    Duration, Instant, Participant, ParticipantConfig, Reliability, RemoteReader, Transmit,
    WriteRequest, WriterConfig,
};
use tachyon_wire::{EntityId, Guid, GuidPrefix, Locator, Time};

fn shm(n: u8) -> Locator {
    Locator {
        kind: Locator::KIND_TACHYON_SHM,
        port: 1,
        address: [n; 16],
    }
}

fn reader(n: u8, at: Locator, reliability: Reliability) -> RemoteReader {
    RemoteReader {
        guid: Guid::new(GuidPrefix([n; 12]), EntityId([0, 0, 1, 7])),
        unicast_locators: vec![at],
        multicast_locators: vec![],
        reliability,
        durability: Durability::Volatile,
    }
}

fn writer(reliability: Reliability, readers: &[RemoteReader]) -> (Participant, EntityId) {
    let mut p = Participant::new(GuidPrefix([1; 12]), ParticipantConfig::default());
    let w = p
        .create_writer(WriterConfig {
            reliability,
            history: WriterHistoryConfig {
                history: History::KeepLast(4),
                ..WriterHistoryConfig::default()
            },
            ..WriterConfig::default()
        })
        .expect("writer");
    for r in readers {
        p.match_reader(Instant::ZERO, w, r.clone()).expect("match");
    }
    (p, w)
}

type Sent = Vec<(Transmit, Vec<u8>)>;

/// Everything the scan sends at `now`.
fn scan(p: &mut Participant, now: Instant, out: &mut Sent) {
    let mut buf = vec![0u8; 65_536];
    while let Some(t) = p.poll_transmit_into(now, &mut buf) {
        out.push((t.clone(), buf[..t.len].to_vec()));
    }
}

/// Writes samples of `sizes` bytes at 1 ms steps, taking each write's own datagram at once
/// when `direct`, then whatever the scan has; advances past a heartbeat period at the end.
fn run(
    reliability: Reliability,
    readers: &[RemoteReader],
    sizes: &[usize],
    direct: Option<i32>,
) -> (Sent, usize) {
    let (mut p, w) = writer(reliability, readers);
    let mut out = Vec::new();
    let mut taken = 0;
    scan(&mut p, Instant::ZERO, &mut out);
    let mut now = Instant::ZERO;
    for (k, &size) in sizes.iter().enumerate() {
        now += Duration::from_millis(1);
        let mut payload = vec![0, 1, 0, 0];
        payload.resize(4 + size, k as u8);
        let req = WriteRequest::data(
            KeyHash::default(),
            Time::ZERO,
            Payload::copy_from_slice(&payload),
        );
        p.write(now, w, req).expect("write");
        if let Some(kind) = direct {
            let mut buf = vec![0u8; 65_536];
            let alone = p.writer_sole_destination(w).is_some_and(|l| l.kind == kind);
            if let Some(t) = alone
                .then(|| p.poll_writer_transmit(now, w, &mut buf))
                .flatten()
            {
                out.push((t.clone(), buf[..t.len].to_vec()));
                taken += 1;
            }
        }
        scan(&mut p, now, &mut out);
    }
    scan(&mut p, now + Duration::from_secs(5), &mut out);
    (out, taken)
}

#[test]
fn a_writes_own_datagram_taken_at_once_is_the_one_the_scan_sends() {
    // Small samples, and one fragmented across several datagrams.
    let sizes = [32, 32, 1000, 200_000, 32, 64];
    let intra = Locator {
        kind: Locator::KIND_TACHYON_INTRA,
        port: 1,
        address: [7; 16],
    };
    let udp = Locator::udp(([127, 0, 0, 1], 7400).into());
    for at in [shm(2), udp, intra] {
        for reliability in [Reliability::Reliable, Reliability::BestEffort] {
            let readers = [reader(2, at, reliability)];
            let (p, w) = writer(reliability, &readers);
            assert_eq!(p.writer_sole_destination(w), Some(&at));
            let (scanned, none) = run(reliability, &readers, &sizes, None);
            let (direct, taken) = run(reliability, &readers, &sizes, Some(at.kind));
            assert_eq!(none, 0);
            assert_eq!(
                taken,
                sizes.len(),
                "{reliability:?} to {at:?}: each write's first datagram"
            );
            // In process a large sample goes by reference, in one DATA.
            let more = match at.kind {
                Locator::KIND_TACHYON_INTRA => 0,
                _ => 3,
            };
            assert!(
                scanned.len() >= sizes.len() + more,
                "{reliability:?} to {at:?}: fragments and heartbeats too"
            );
            assert_eq!(direct.len(), scanned.len(), "{reliability:?} to {at:?}");
            for (i, (d, s)) in direct.iter().zip(&scanned).enumerate() {
                assert_eq!(d, s, "{reliability:?} to {at:?}: datagram {i}");
            }
        }
    }
}

#[test]
fn nothing_is_built_for_a_writer_whose_data_go_elsewhere_or_to_several() {
    let udp = Locator::udp(([127, 0, 0, 1], 7400).into());
    for readers in [
        vec![reader(2, udp, Reliability::Reliable)],
        vec![
            reader(2, shm(2), Reliability::Reliable),
            reader(3, shm(3), Reliability::Reliable),
        ],
    ] {
        let (mut p, w) = writer(Reliability::Reliable, &readers);
        let sole = p.writer_sole_destination(w).copied();
        assert!(!sole.is_some_and(|l| l.kind == Locator::KIND_TACHYON_SHM));
        if sole.is_none() {
            // Several destinations: nothing is built, whoever asks.
            let mut buf = vec![0u8; 65_536];
            p.write(
                Instant::ZERO,
                w,
                WriteRequest::data(
                    KeyHash::default(),
                    Time::ZERO,
                    Payload::copy_from_slice(&[0, 1, 0, 0, 1]),
                ),
            )
            .expect("write");
            assert!(p.poll_writer_transmit(Instant::ZERO, w, &mut buf).is_none());
        }
        let shm_kind = Some(Locator::KIND_TACHYON_SHM);
        let (direct, taken) = run(Reliability::Reliable, &readers, &[32, 32], shm_kind);
        let (scanned, _) = run(Reliability::Reliable, &readers, &[32, 32], None);
        assert_eq!(taken, 0);
        assert_eq!(direct, scanned);
    }
}
