//! LIFESPAN on the reader side and DESTINATION_ORDER, between participants of one process
//! over real UDP on loopback (inside the isolated network namespace `scripts/test.sh`
//! provides): a sample nobody took leaves the reader's cache when its writer's lifespan ends;
//! a write is timestamped with the wall clock when the protocol takes it, in write order;
//! a BY_SOURCE_TIMESTAMP reader drops a change older than what the instance already took,
//! a BY_RECEPTION_TIMESTAMP reader keeps everything.

mod common;

use std::time::SystemTime;

use common::{reliable_pair, take_at_least, take_data, wait_matched, wait_until, PATIENCE};
use tachyon::prelude::*;
use tachyon::qos::DestinationOrderKind;

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Stamped")]
struct Stamped {
    #[key]
    id: u32,
    value: u32,
}

fn values(r: &DataReader<Stamped>) -> Vec<u32> {
    take_data(r).into_iter().map(|d| d.value).collect()
}

#[test]
fn samples_leave_the_reader_cache_when_their_lifespan_ends() {
    tachyon_transport::testing::require_isolated_network();
    let p = DomainParticipant::new(56).expect("participant");
    let t = p.create_topic::<Stamped>("lifespan").expect("topic");
    let w = p
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &t,
            DataWriterQos::default()
                .reliable()
                .keep_all()
                .lifespan(Duration::from_millis(300)),
        )
        .expect("writer");
    let q = DomainParticipant::new(56).expect("participant");
    let tq = q.create_topic::<Stamped>("lifespan").expect("topic");
    let r = q
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tq, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    wait_matched(&w, &r);

    w.write(&Stamped { id: 1, value: 1 }).expect("write");
    w.wait_for_acknowledgments(PATIENCE).expect("acknowledged");
    // The behaviour under test: the sample's lifespan (300 ms) runs out in the reader's cache.
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(
        values(&r),
        Vec::<u32>::new(),
        "expired in the reader's cache"
    );

    w.write(&Stamped { id: 1, value: 2 }).expect("write");
    let got: Vec<u32> = take_at_least(&r, 1).iter().map(|d| d.value).collect();
    assert_eq!(got, [2], "a sample within its lifespan is delivered");
}

#[test]
fn by_source_timestamp_drops_older_changes_by_reception_keeps_them() {
    tachyon_transport::testing::require_isolated_network();
    let by_source = DataWriterQos::default()
        .reliable()
        .keep_all()
        .destination_order(DestinationOrderKind::BySourceTimestamp);
    let p = DomainParticipant::new(57).expect("participant");
    let t = p
        .create_topic::<Stamped>("destination_order")
        .expect("topic");
    let publisher = p.create_publisher().expect("publisher");
    let newer = publisher
        .create_datawriter(&t, by_source.clone())
        .expect("writer");
    let older = publisher.create_datawriter(&t, by_source).expect("writer");

    let q = DomainParticipant::new(57).expect("participant");
    let tq = q
        .create_topic::<Stamped>("destination_order")
        .expect("topic");
    let sub = q.create_subscriber().expect("subscriber");
    let rq = DataReaderQos::default().reliable().keep_all();
    let source = sub
        .create_datareader(
            &tq,
            rq.clone()
                .destination_order(DestinationOrderKind::BySourceTimestamp),
        )
        .expect("reader");
    let reception = sub.create_datareader(&tq, rq).expect("reader");
    // Both sides: a VOLATILE writer sends nothing to a reader it has not matched yet.
    wait_until("matching", || {
        source.matched_publications().len() == 2
            && reception.matched_publications().len() == 2
            && newer.matched_subscriptions().len() == 2
            && older.matched_subscriptions().len() == 2
    });

    let now = SystemTime::now();
    newer
        .write_w_timestamp(&Stamped { id: 1, value: 2 }, now)
        .expect("write");
    newer
        .wait_for_acknowledgments(PATIENCE)
        .expect("acknowledged");
    older
        .write_w_timestamp(&Stamped { id: 1, value: 1 }, now - Duration::from_secs(1))
        .expect("write");
    // Another instance is ordered on its own.
    older
        .write_w_timestamp(&Stamped { id: 2, value: 3 }, now - Duration::from_secs(1))
        .expect("write");
    older
        .wait_for_acknowledgments(PATIENCE)
        .expect("acknowledged");

    let mut by_reception = Vec::new();
    wait_until("every sample at the BY_RECEPTION reader", || {
        by_reception.extend(values(&reception));
        by_reception.len() == 3
    });
    by_reception.sort_unstable();
    assert_eq!(by_reception, [1, 2, 3]);
    let mut by_source = values(&source);
    by_source.sort_unstable();
    assert_eq!(
        by_source,
        [2, 3],
        "the older change of instance 1 was dropped"
    );
}

/// An RTPS timestamp in nanoseconds since 1970.
fn nanos_of(t: tachyon_wire::Time) -> u128 {
    u128::from(t.seconds.unsigned_abs()) * 1_000_000_000 + u128::from(t.nanos())
}

fn wall_nanos() -> u128 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .expect("after 1970")
        .as_nanos()
}

#[test]
fn a_write_is_timestamped_with_the_wall_clock_in_the_order_of_the_writes() {
    tachyon_transport::testing::require_isolated_network();
    let p = DomainParticipant::new(58).expect("participant");
    let (w, r) = reliable_pair::<Stamped>(&p, &p, "source_timestamps");
    wait_matched(&w, &r);
    let mut windows = Vec::new();
    for value in 0..20 {
        let before = wall_nanos();
        w.write(&Stamped { id: 1, value }).expect("write");
        windows.push((before, wall_nanos()));
        // Past the wall clock's refresh (10 ms) now and then.
        if value % 7 == 6 {
            std::thread::sleep(Duration::from_millis(11));
        }
    }
    // A dispose too (of an instance without samples: it comes as a sample of its own).
    let before = wall_nanos();
    w.dispose(&Stamped { id: 2, value: 0 }).expect("dispose");
    windows.push((before, wall_nanos()));
    let mut got = Vec::new();
    wait_until("every change", || {
        got.extend(r.take(usize::MAX).expect("take"));
        got.len() == windows.len()
    });
    // In the order written: instance 1's samples, then the dispose.
    got.sort_by_key(|s| s.data.as_ref().map_or(u32::MAX, |d| d.value));
    assert!(got[20].data.is_none(), "the dispose");
    let stamps: Vec<u128> = got
        .iter()
        .map(|s| nanos_of(s.info.source_timestamp))
        .collect();
    // Within the write call, give or take the derived clock's uncertainty (microseconds)
    // and the wire's resolution.
    let slack = 1_000_000;
    for (i, (&stamp, &(before, after))) in stamps.iter().zip(&windows).enumerate() {
        assert!(
            before - slack <= stamp && stamp <= after + slack,
            "change {i}: {before} <= {stamp} <= {after}"
        );
    }
    assert!(stamps.windows(2).all(|p| p[0] <= p[1]), "{stamps:?}");
}
