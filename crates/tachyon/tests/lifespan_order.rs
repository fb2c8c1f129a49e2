//! LIFESPAN on the reader side and DESTINATION_ORDER, between participants of one process
//! over real UDP on loopback (inside the isolated network namespace `scripts/test.sh`
//! provides): a sample nobody took leaves the reader's cache when its writer's lifespan ends;
//! a BY_SOURCE_TIMESTAMP reader drops a change older than what the instance already took,
//! a BY_RECEPTION_TIMESTAMP reader keeps everything.

mod common;

use std::time::SystemTime;

use common::{take_at_least, take_data, wait_matched, wait_until, PATIENCE};
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
