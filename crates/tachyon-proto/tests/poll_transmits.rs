//! `Participant::poll_transmits` (the runtime's flush) sends what polling
//! `poll_transmit_into` until `None` sends, datagram for datagram, while asking an endpoint
//! with nothing to send only once: a reader matched with a thousand writers (a discovery storm)
//! owes each a pre-emptive ACKNACK, and each goes out exactly once.

use tachyon_proto::history::Durability;
use tachyon_proto::{
    Instant, Liveliness, Participant, ParticipantConfig, ReaderConfig, Reliability, RemoteWriter,
    Transmit,
};
use tachyon_wire::{EntityId, Guid, GuidPrefix, Locator, VendorId};

/// A participant with two reliable readers matched with `n` remote writers each.
fn participant(n: u16) -> Participant {
    let mut p = Participant::new(GuidPrefix([1; 12]), ParticipantConfig::default());
    for _ in 0..2 {
        let r = p
            .create_reader(ReaderConfig {
                reliability: Reliability::Reliable,
                ..ReaderConfig::default()
            })
            .expect("reader");
        for k in 0..n {
            let [a, b] = k.to_be_bytes();
            p.match_writer(
                Instant::ZERO,
                r,
                RemoteWriter {
                    guid: Guid::new(
                        GuidPrefix([2, a, b, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
                        EntityId([0, 0, 1, 2]),
                    ),
                    unicast_locators: vec![Locator::udp(([127, 0, 0, 1], 7000 + k).into())],
                    reliability: Reliability::Reliable,
                    durability: Durability::Volatile,
                    liveliness: Liveliness::default(),
                    ownership_strength: 0,
                    lifespan: None,
                    group: None,
                    vendor: VendorId::TACHYON,
                },
            )
            .expect("match");
        }
    }
    p
}

fn one_by_one(p: &mut Participant, now: Instant) -> Vec<(Transmit, Vec<u8>)> {
    let mut buf = vec![0u8; 1500];
    let mut out = Vec::new();
    while let Some(t) = p.poll_transmit_into(now, &mut buf) {
        out.push((t.clone(), buf[..t.len].to_vec()));
    }
    out
}

fn batched(p: &mut Participant, now: Instant) -> Vec<(Transmit, Vec<u8>)> {
    let mut out = Vec::new();
    let unused = p.poll_transmits(
        now,
        || vec![0u8; 1500],
        |buf, t| out.push((t.clone(), buf[..t.len].to_vec())),
    );
    assert_eq!(unused.len(), 1500, "the last buffer lent comes back");
    out
}

#[test]
fn a_burst_goes_out_the_same_either_way_and_once() {
    let n = 1000;
    let (mut a, mut b) = (participant(n), participant(n));
    let (one, all) = (
        one_by_one(&mut a, Instant::ZERO),
        batched(&mut b, Instant::ZERO),
    );
    assert_eq!(
        one.len(),
        2 * usize::from(n),
        "a pre-emptive ACKNACK per matched writer"
    );
    assert_eq!(one, all);
    // Nothing is left, and a later flush finds nothing new before the next repeat is due.
    assert!(batched(&mut b, Instant::ZERO).is_empty());
    let later = Instant::from_nanos(500_000_000);
    assert!(batched(&mut b, later).is_empty());
    let repeat = Instant::from_nanos(1_000_000_001);
    let (one, all) = (one_by_one(&mut a, repeat), batched(&mut b, repeat));
    assert_eq!(one.len(), 2 * usize::from(n), "repeated a second later");
    assert_eq!(one, all);
}
