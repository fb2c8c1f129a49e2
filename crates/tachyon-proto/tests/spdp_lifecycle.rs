//! The SPDP events the builtin topics are built on, with datagrams handed over by hand: a
//! participant is discovered, a changed announcement is reported as an update (an identical
//! one is not), and after an announced deletion an older announcement arriving late does
//! not bring the participant back (until the quarantine is over).

#[path = "common/discovering.rs"]
mod discovering;

use discovering::{discovery_config, locator, prefix, with_config};
use tachyon_proto::discovery::{DiscoveryConfig, ParticipantLostReason};
use tachyon_proto::{Duration, Event, Instant, Participant, TxBuf};

fn participant(n: u8, user_data: &[u8]) -> Participant {
    let config = DiscoveryConfig {
        user_data: user_data.to_vec(),
        ..discovery_config(n)
    };
    with_config(n, config)
}

/// Every datagram `p` has due at `now`.
fn datagrams(p: &mut Participant, now: Instant) -> Vec<Vec<u8>> {
    let mut buf = TxBuf::new(tachyon_proto::DEFAULT_MAX_DATAGRAM);
    let mut out = Vec::new();
    while let Some(t) = p.poll_transmit(now, &mut buf) {
        out.push(buf.datagram(&t).to_vec());
    }
    out
}

fn events(p: &mut Participant) -> Vec<Event> {
    std::iter::from_fn(|| p.poll_event()).collect()
}

fn deliver(to: &mut Participant, now: Instant, datagrams: &[Vec<u8>]) {
    for d in datagrams {
        to.handle_datagram(now, &locator(1), d);
    }
}

#[test]
fn discovery_updates_and_a_late_announcement_after_deletion() {
    let t0 = Instant::ZERO;
    let mut a = participant(1, b"one");
    let mut b = participant(2, b"");
    let announcement = datagrams(&mut a, t0);
    assert!(!announcement.is_empty());

    deliver(&mut b, t0, &announcement);
    let e = events(&mut b);
    assert!(e.contains(&Event::ParticipantDiscovered {
        participant: prefix(1)
    }));
    // The same announcement again (a periodic one) changes nothing.
    deliver(&mut b, t0, &announcement);
    assert!(events(&mut b).is_empty());

    // The same participant announcing other user data is an update.
    let mut a2 = participant(1, b"two");
    let changed = datagrams(&mut a2, t0);
    deliver(&mut b, t0, &changed);
    assert_eq!(
        events(&mut b),
        vec![Event::ParticipantUpdated {
            participant: prefix(1)
        }]
    );
    let known = b.discovered_participant(&prefix(1)).expect("known");
    assert_eq!(known.data.user_data, b"two");

    // Deleted: removed at once …
    a.shutdown(t0);
    let dispose = datagrams(&mut a, t0);
    let t1 = t0 + Duration::from_millis(10);
    deliver(&mut b, t1, &dispose);
    assert!(events(&mut b).contains(&Event::ParticipantLost {
        participant: prefix(1),
        reason: ParticipantLostReason::Deleted,
    }));
    // … and an announcement sent before the dispose, arriving after it, is ignored.
    deliver(&mut b, t1, &announcement);
    assert!(events(&mut b).is_empty());
    assert!(b.discovered_participant(&prefix(1)).is_none());

    // Long after, the same GUID announcing itself is a participant again.
    let t2 = t1 + Duration::from_secs(6);
    deliver(&mut b, t2, &announcement);
    assert!(events(&mut b).contains(&Event::ParticipantDiscovered {
        participant: prefix(1)
    }));
}
