//! Subscriber, Publisher, Topic and DomainParticipant statuses over real UDP sockets on
//! loopback: DATA_ON_READERS and its precedence over DATA_AVAILABLE, the listener cascade
//! from an endpoint to its group and to the participant, the Subscriber's StatusCondition in
//! a WaitSet, and INCONSISTENT_TOPIC between participants that give one topic name two types.

mod common;

use std::sync::{Arc, Mutex};

use common::{participants, wait_matched, wait_until, PATIENCE};
use tachyon::prelude::*;
use tachyon::status::{
    InconsistentTopicStatus, PublicationMatchedStatus, SubscriptionMatchedStatus,
};

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Reading")]
struct Reading {
    #[key]
    id: u32,
    value: u64,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Other")]
struct Other {
    #[key]
    id: u32,
    text: String,
}

/// Records every callback as a line: who was called, for what, with which endpoint GUID.
#[derive(Default)]
struct Log(Mutex<Vec<String>>);

impl Log {
    fn push(&self, s: String) {
        self.0.lock().expect("log").push(s);
    }

    fn lines(&self) -> Vec<String> {
        self.0.lock().expect("log").clone()
    }

    fn has(&self, s: &str) -> bool {
        self.lines().iter().any(|l| l == s)
    }

    fn count(&self, prefix: &str) -> usize {
        self.lines()
            .iter()
            .filter(|l| l.starts_with(prefix))
            .count()
    }
}

/// A listener of every kind, logging as `<name> <callback> <guid>`.
struct Recorder {
    name: &'static str,
    log: Arc<Log>,
}

impl Recorder {
    fn new(name: &'static str, log: &Arc<Log>) -> Arc<Recorder> {
        Arc::new(Recorder {
            name,
            log: Arc::clone(log),
        })
    }
}

impl DataReaderListener<Reading> for Recorder {
    fn on_data_available(&self, reader: &DataReader<Reading>) {
        self.log
            .push(format!("{} data_available {:?}", self.name, reader.guid()));
    }
}

impl SubscriberListener for Recorder {
    fn on_data_on_readers(&self, readers: &[AnyDataReader]) {
        for r in readers {
            self.log
                .push(format!("{} data_on_readers {:?}", self.name, r.guid()));
        }
    }
    fn on_data_available(&self, reader: &AnyDataReader) {
        self.log
            .push(format!("{} data_available {:?}", self.name, reader.guid()));
    }
    fn on_subscription_matched(&self, reader: &AnyDataReader, s: SubscriptionMatchedStatus) {
        self.log.push(format!(
            "{} subscription_matched {:?} {}",
            self.name,
            reader.guid(),
            s.current_count
        ));
    }
}

impl PublisherListener for Recorder {
    fn on_publication_matched(&self, writer: &AnyDataWriter, s: PublicationMatchedStatus) {
        self.log.push(format!(
            "{} publication_matched {:?} {}",
            self.name,
            writer.guid(),
            s.current_count
        ));
    }
}

impl TopicListener for Recorder {
    fn on_inconsistent_topic(&self, topic: &AnyTopic, s: InconsistentTopicStatus) {
        self.log.push(format!(
            "{} inconsistent_topic {} {} {}",
            self.name,
            topic.name(),
            topic.type_name(),
            s.total_count
        ));
    }
}

impl DomainParticipantListener for Recorder {}

fn reading(id: u32, value: u64) -> Reading {
    Reading { id, value }
}

#[test]
fn data_on_readers_is_called_instead_of_data_available() {
    let log = Arc::new(Log::default());
    let (a, b) = participants(41);
    let ta = a.create_topic::<Reading>("readings").expect("topic");
    let tb = b.create_topic::<Reading>("readings").expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&ta, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    let sub = b
        .create_subscriber_with_listener(
            SubscriberQos::default(),
            Recorder::new("sub", &log),
            StatusMask::DATA_ON_READERS,
        )
        .expect("subscriber");
    let r = sub
        .create_datareader_with_listener(
            &tb,
            DataReaderQos::default().reliable().keep_all(),
            Recorder::new("reader", &log),
            StatusMask::DATA_AVAILABLE,
        )
        .expect("reader");
    wait_matched(&w, &r);
    w.write(&reading(1, 1)).expect("write");
    let expected = format!("sub data_on_readers {:?}", r.guid());
    wait_until("on_data_on_readers", || log.has(&expected));
    assert_eq!(r.take(usize::MAX).expect("take").len(), 1);
    // Once the subscriber's listener no longer wants DATA_ON_READERS, the reader's own
    // listener gets DATA_AVAILABLE again.
    sub.set_listener(None, StatusMask::NONE);
    w.write(&reading(1, 2)).expect("write");
    let own = format!("reader data_available {:?}", r.guid());
    wait_until("on_data_available", || log.has(&own));
    assert_eq!(
        log.count("reader data_available"),
        1,
        "DATA_ON_READERS took precedence: {:?}",
        log.lines()
    );
}

#[test]
fn reader_and_writer_statuses_cascade_to_the_group_then_the_participant() {
    let log = Arc::new(Log::default());
    let (a, b) = participants(42);
    let ta = a.create_topic::<Reading>("cascade").expect("topic");
    let tb = b.create_topic::<Reading>("cascade").expect("topic");
    let publisher = a
        .create_publisher_with_listener(
            PublisherQos::default(),
            Recorder::new("pub", &log),
            StatusMask::PUBLICATION_MATCHED,
        )
        .expect("publisher");
    let sub = b
        .create_subscriber_with_listener(
            SubscriberQos::default(),
            Recorder::new("sub", &log),
            StatusMask::DATA_AVAILABLE | StatusMask::SUBSCRIPTION_MATCHED,
        )
        .expect("subscriber");
    // Every status but DATA_ON_READERS, which would take DATA_AVAILABLE's place.
    b.set_listener(
        Some(Recorder::new("part", &log)),
        StatusMask::ALL & !StatusMask::DATA_ON_READERS,
    );
    let w = publisher
        .create_datawriter(&ta, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    // No listener of its own: everything goes to the subscriber's.
    let r = sub
        .create_datareader(&tb, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    let matched = format!("sub subscription_matched {:?} 1", r.guid());
    let pub_matched = format!("pub publication_matched {:?} 1", w.guid());
    wait_until("the group listeners' matches", || {
        log.has(&matched) && log.has(&pub_matched)
    });
    w.write(&reading(1, 1)).expect("write");
    let data = format!("sub data_available {:?}", r.guid());
    wait_until("subscriber on_data_available", || log.has(&data));
    assert_eq!(r.take(usize::MAX).expect("take").len(), 1);
    // The listener read the status: nothing left for a StatusCondition.
    assert!(!r
        .get_status_changes()
        .intersects(StatusMask::SUBSCRIPTION_MATCHED | StatusMask::DATA_AVAILABLE));

    // Without the subscriber's listener, the participant's takes over.
    sub.set_listener(None, StatusMask::NONE);
    w.write(&reading(1, 2)).expect("write");
    let data = format!("part data_available {:?}", r.guid());
    wait_until("participant on_data_available", || log.has(&data));
    let r2 = sub
        .create_datareader(&tb, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    let matched = format!("part subscription_matched {:?} 1", r2.guid());
    wait_until("participant on_subscription_matched", || log.has(&matched));
    assert_eq!(log.count("part data_on_readers"), 0, "{:?}", log.lines());
    assert_eq!(log.count("sub data_available"), 1, "{:?}", log.lines());

    // The participant's listener with DATA_ON_READERS takes precedence too.
    b.set_listener(
        Some(Recorder::new("part", &log)),
        StatusMask::DATA_ON_READERS,
    );
    w.write(&reading(1, 3)).expect("write");
    let dor = format!("part data_on_readers {:?}", r.guid());
    wait_until("participant on_data_on_readers", || log.has(&dor));
}

#[test]
fn subscriber_status_condition_wakes_a_waitset_on_data() {
    let (a, b) = participants(43);
    let ta = a.create_topic::<Reading>("waitset").expect("topic");
    let tb = b.create_topic::<Reading>("waitset").expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&ta, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    let sub = b.create_subscriber().expect("subscriber");
    let r = sub
        .create_datareader(&tb, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    let cond = sub.get_statuscondition();
    cond.set_enabled_statuses(StatusMask::DATA_ON_READERS);
    let mut ws = WaitSet::new();
    ws.attach_condition(&cond).expect("attach");
    wait_matched(&w, &r);
    assert!(matches!(
        ws.wait(Duration::from_millis(50)),
        Err(Error::Timeout)
    ));
    let writer = std::thread::spawn(move || {
        // Later, so that the WaitSet is blocked in wait() when the data comes.
        std::thread::sleep(Duration::from_millis(50));
        w.write(&reading(7, 7)).expect("write");
        w
    });
    let woke = ws.wait(PATIENCE).expect("woken by data");
    assert_eq!(woke, [Condition::from(&cond)]);
    assert!(sub
        .get_status_changes()
        .contains(StatusMask::DATA_ON_READERS));
    let _w = writer.join().expect("writer thread");
    assert_eq!(r.take(usize::MAX).expect("take").len(), 1);
    // A take on one of its readers resets DATA_ON_READERS.
    assert_eq!(sub.get_status_changes(), StatusMask::NONE);
    assert!(!cond.trigger_value());
    // Publishers and participants have no status of their own: their conditions exist
    // and stay untriggered.
    assert!(!a
        .create_publisher()
        .expect("publisher")
        .get_statuscondition()
        .trigger_value());
    assert!(!b.get_statuscondition().trigger_value());
}

#[test]
fn one_topic_name_with_two_types_is_inconsistent_on_both_sides() {
    let log = Arc::new(Log::default());
    let (a, b) = participants(44);
    // Side a: the topic's own listener; side b: the participant's, by the cascade.
    let ta = a
        .create_topic_with_listener::<Reading>(
            "t",
            TopicQos::default(),
            Recorder::new("topic_a", &log),
            StatusMask::INCONSISTENT_TOPIC,
        )
        .expect("topic");
    b.set_listener(
        Some(Recorder::new("part_b", &log)),
        StatusMask::INCONSISTENT_TOPIC,
    );
    let tb = b.create_topic::<Other>("t").expect("topic");
    let cond = tb.get_statuscondition();
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&ta, DataWriterQos::default().reliable())
        .expect("writer");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tb, DataReaderQos::default().reliable())
        .expect("reader");
    wait_until("INCONSISTENT_TOPIC on both sides", || {
        log.has("topic_a inconsistent_topic t test::Reading 1")
            && log.has("part_b inconsistent_topic t test::Other 1")
    });
    let sa = ta.get_inconsistent_topic_status();
    let sb = tb.get_inconsistent_topic_status();
    assert_eq!((sa.total_count, sa.total_count_change), (1, 0));
    assert_eq!((sb.total_count, sb.total_count_change), (1, 0));
    assert!(!cond.trigger_value(), "the listener read the status");

    // Without a listener, the status is left for the StatusCondition and the getter.
    b.set_listener(None, StatusMask::NONE);
    let r2 = a
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&ta, DataReaderQos::default())
        .expect("reader");
    wait_until("a second inconsistent endpoint", || cond.trigger_value());
    assert!(tb
        .get_status_changes()
        .contains(StatusMask::INCONSISTENT_TOPIC));
    let sb = tb.get_inconsistent_topic_status();
    assert_eq!((sb.total_count, sb.total_count_change), (2, 1));
    assert!(!cond.trigger_value());

    // They never match: each side decides on a match as it takes in the other's announcement,
    // the same step that reported INCONSISTENT_TOPIC above.
    assert!(w.matched_subscriptions().iter().all(|g| *g != r.guid()));
    assert!(r.matched_publications().is_empty());
    drop(r2);
}
