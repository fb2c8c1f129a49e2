//! INCONSISTENT_TOPIC: a remote writer or reader on the name of a local topic with another
//! type name is reported once per remote endpoint, on both sides, for local topics added
//! before or after it was discovered, and the two never match.

#[path = "common/discovering.rs"]
mod discovering;

use discovering::{locator, participant};
use tachyon_proto::discovery::{PublicationData, SubscriptionData};
use tachyon_proto::{Duration, Event, Instant, Participant, TxBuf};
use tachyon_wire::Guid;

/// Hands every datagram of each participant to the other (whatever its destination) for
/// `rounds` rounds of 20 ms, running their timers; returns the events of each.
fn exchange(
    a: &mut Participant,
    b: &mut Participant,
    now: &mut Instant,
    rounds: u32,
) -> (Vec<Event>, Vec<Event>) {
    let mut buf = TxBuf::new(tachyon_proto::DEFAULT_MAX_DATAGRAM);
    let (mut ea, mut eb) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        pass(a, b, 1, *now, &mut buf);
        pass(b, a, 2, *now, &mut buf);
        ea.extend(std::iter::from_fn(|| a.poll_event()));
        eb.extend(std::iter::from_fn(|| b.poll_event()));
        *now += Duration::from_millis(20);
    }
    (ea, eb)
}

/// Runs `from`'s timers and hands what it sends to `to`.
fn pass(from: &mut Participant, to: &mut Participant, src: u8, now: Instant, buf: &mut TxBuf) {
    from.handle_timeout(now);
    let mut out = Vec::new();
    while let Some(t) = from.poll_transmit(now, buf) {
        out.push(buf.datagram(&t).to_vec());
    }
    for d in &out {
        to.handle_datagram(now, &locator(src), d);
    }
}

fn inconsistent(events: &[Event]) -> Vec<(String, String, Guid)> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::InconsistentTopic {
                topic,
                type_name,
                remote,
            } => Some((topic.clone(), type_name.clone(), *remote)),
            _ => None,
        })
        .collect()
}

fn matched(events: &[Event]) -> bool {
    events.iter().any(|e| {
        matches!(
            e,
            Event::PublicationMatched { .. } | Event::SubscriptionMatched { .. }
        )
    })
}

#[test]
fn same_topic_name_with_another_type_is_inconsistent_on_both_sides() {
    let mut now = Instant::ZERO;
    let mut a = participant(1);
    let mut b = participant(2);
    a.add_local_topic("t", "A");
    b.add_local_topic("t", "B");
    let w = a
        .create_writer(tachyon_proto::WriterConfig::default())
        .expect("writer");
    a.announce_writer(now, w, PublicationData::new(Guid::UNKNOWN, "t", "A"))
        .expect("announce");
    let r = b
        .create_reader(tachyon_proto::ReaderConfig::default())
        .expect("reader");
    b.announce_reader(now, r, SubscriptionData::new(Guid::UNKNOWN, "t", "B"))
        .expect("announce");
    let (ea, eb) = exchange(&mut a, &mut b, &mut now, 50);
    let (wg, rg) = (a.guid(w), b.guid(r));
    assert_eq!(inconsistent(&ea), [("t".into(), "A".into(), rg)]);
    assert_eq!(inconsistent(&eb), [("t".into(), "B".into(), wg)]);
    assert!(!matched(&ea) && !matched(&eb), "{ea:?} {eb:?}");

    // Announcements repeated or unchanged raise nothing more.
    let (ea, eb) = exchange(&mut a, &mut b, &mut now, 200);
    assert!(inconsistent(&ea).is_empty() && inconsistent(&eb).is_empty());

    // A local topic added later learns of the endpoints already discovered; one of the
    // same type does not.
    a.add_local_topic("t", "C");
    a.add_local_topic("t", "B");
    let ea: Vec<Event> = std::iter::from_fn(|| a.poll_event()).collect();
    assert_eq!(inconsistent(&ea), [("t".into(), "C".into(), rg)]);

    // Removed topics no longer count; another topic name never does.
    a.remove_local_topic("t", "A");
    a.remove_local_topic("t", "C");
    let r2 = b
        .create_reader(tachyon_proto::ReaderConfig::default())
        .expect("reader");
    b.announce_reader(now, r2, SubscriptionData::new(Guid::UNKNOWN, "u", "B"))
        .expect("announce");
    let r3 = b
        .create_reader(tachyon_proto::ReaderConfig::default())
        .expect("reader");
    b.announce_reader(now, r3, SubscriptionData::new(Guid::UNKNOWN, "t", "Z"))
        .expect("announce");
    let (ea, _) = exchange(&mut a, &mut b, &mut now, 50);
    assert_eq!(inconsistent(&ea), [("t".into(), "B".into(), b.guid(r3))]);
}
