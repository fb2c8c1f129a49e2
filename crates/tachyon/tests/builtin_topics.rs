//! The builtin topics (DCPSParticipant, DCPSPublication, DCPSSubscription) between two
//! participants of one process over real UDP sockets on loopback (inside the isolated
//! network namespace `scripts/test.sh` provides).

mod common;

use std::time::Instant;

use common::{wait_matched, wait_until, PATIENCE};
use tachyon::prelude::*;
use tachyon::qos::LivelinessKind;
use tachyon::{BuiltinTopicKey, ParticipantSettings, SampleState, ViewState};

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Telemetry")]
struct Telemetry {
    #[key]
    unit: u32,
    value: f64,
}

fn participant(domain: u32, user_data: &[u8], name: &str) -> DomainParticipant {
    let settings = ParticipantSettings {
        user_data: user_data.to_vec(),
        entity_name: Some(name.into()),
        ..ParticipantSettings::default()
    };
    DomainParticipant::with_settings(domain, &settings).expect("participant")
}

/// Takes from `reader` (waiting on a WaitSet with a ReadCondition of NOT_READ samples) until
/// `done` says what was taken so far is enough.
fn take_until<T: tachyon::Readable>(
    reader: &DataReader<T>,
    what: &str,
    mut done: impl FnMut(&[Sample<T>]) -> bool,
) -> Vec<Sample<T>> {
    let cond = reader.create_readcondition(
        SampleStateMask::NOT_READ,
        ViewStateMask::ANY,
        InstanceStateMask::ANY,
    );
    let mut ws = WaitSet::new();
    ws.attach_condition(&cond).expect("attach");
    let end = Instant::now() + PATIENCE;
    let mut got = Vec::new();
    loop {
        got.extend(reader.take_w_condition(&cond, usize::MAX).expect("take"));
        if done(&got) {
            return got;
        }
        let left = end.saturating_duration_since(Instant::now());
        if ws.wait(left).is_err() {
            panic!("timed out waiting for {what}; got {} samples", got.len());
        }
    }
}

#[test]
fn remote_participants_writers_and_readers_come_and_go_on_the_builtin_readers() {
    tachyon_transport::testing::require_isolated_network();
    let a = participant(41, b"alpha-user-data", "alpha");
    let b = participant(41, b"bravo", "bravo");
    let a_key = BuiltinTopicKey::from_instance_handle(a.get_instance_handle());

    // DCPSParticipant on b: a, with its user data and name, as a NEW alive instance. The
    // StatusCondition of the builtin reader reports DATA_AVAILABLE like any reader's.
    let parts = b.builtin_participants_reader();
    let status = parts.get_statuscondition();
    status.set_enabled_statuses(StatusMask::DATA_AVAILABLE);
    let mut ws = WaitSet::new();
    ws.attach_condition(&status).expect("attach");
    ws.wait(PATIENCE)
        .expect("DATA_AVAILABLE on the participants reader");
    let got = take_until(&parts, "participant a", |s| {
        s.iter()
            .any(|s| s.data.as_ref().is_some_and(|d| d.key == a_key))
    });
    let s = got
        .iter()
        .find(|s| s.data.as_ref().is_some_and(|d| d.key == a_key))
        .expect("a's sample");
    let d = s.data.as_ref().expect("valid");
    assert_eq!(d.user_data, b"alpha-user-data");
    assert_eq!(d.entity_name.as_deref(), Some("alpha"));
    assert_eq!(d.domain_id, Some(41));
    assert!(!d.metatraffic_unicast_locators.is_empty());
    assert_eq!(s.info.view_state, ViewState::New);
    assert_eq!(s.info.instance_state, InstanceState::Alive);
    assert_eq!(s.info.instance_handle, a_key.instance_handle());
    // Only remote participants: b does not list itself.
    let b_key = BuiltinTopicKey::from_instance_handle(b.get_instance_handle());
    assert!(got
        .iter()
        .all(|s| s.data.as_ref().map(|d| d.key) != Some(b_key)));
    // The snapshot API agrees.
    assert!(b.discovered_participants().iter().any(|p| p.key == a_key));
    let by_handle = b
        .get_discovered_participant_data(a_key.instance_handle())
        .expect("a is known");
    assert_eq!(by_handle.user_data, b"alpha-user-data");
    assert!(b
        .get_discovered_participants()
        .contains(&a_key.instance_handle()));
    assert!(matches!(
        b.get_discovered_participant_data(b_key.instance_handle()),
        Err(Error::BadInstance)
    ));

    // A writer on a, a reader on b, with distinctive QoS.
    let publisher = a
        .create_publisher_with_qos(PublisherQos {
            partition: vec!["plant-7".into()],
            ..PublisherQos::default()
        })
        .expect("publisher");
    let mut wqos = DataWriterQos::default().reliable().keep_last(5).liveliness(
        LivelinessKind::ManualByParticipant,
        Some(Duration::from_secs(30)),
    );
    wqos.user_data = b"writer-ud".to_vec();
    wqos.durability = DurabilityKind::TransientLocal;
    let writer = publisher
        .create_datawriter(
            &a.create_topic::<Telemetry>("telemetry").expect("topic"),
            wqos,
        )
        .expect("writer");
    let mut rqos = DataReaderQos::default().best_effort();
    rqos.user_data = b"reader-ud".to_vec();
    let subscriber = b
        .create_subscriber_with_qos(SubscriberQos {
            partition: vec!["plant-7".into()],
            ..SubscriberQos::default()
        })
        .expect("subscriber");
    let reader = subscriber
        .create_datareader(
            &b.create_topic::<Telemetry>("telemetry").expect("topic"),
            rqos,
        )
        .expect("reader");

    // DCPSPublication on b: a's writer with topic, type, QoS and partition.
    let pubs = b.builtin_publications_reader();
    let w_key = BuiltinTopicKey(writer.guid());
    let got = take_until(&pubs, "a's writer", |s| {
        s.iter()
            .any(|s| s.data.as_ref().is_some_and(|d| d.key == w_key))
    });
    let p = got
        .iter()
        .find_map(|s| s.data.as_ref().filter(|d| d.key == w_key))
        .expect("writer data");
    assert_eq!(p.participant_key, a_key);
    assert_eq!(p.topic_name, "telemetry");
    assert_eq!(p.type_name, "test::Telemetry");
    assert_eq!(p.partition, vec!["plant-7".to_string()]);
    assert_eq!(p.qos.user_data, b"writer-ud");
    assert_eq!(p.qos.durability, DurabilityKind::TransientLocal);
    assert_eq!(p.qos.reliability.kind, writer.qos().reliability.kind);
    assert_eq!(p.qos.liveliness.kind, LivelinessKind::ManualByParticipant);
    // b's own reader is not on b's DCPSSubscription reader (remote entities only).
    let own = b
        .builtin_subscriptions_reader()
        .read(usize::MAX)
        .expect("read");
    assert!(own
        .iter()
        .all(|s| s.data.as_ref().map(|d| d.key.guid()) != Some(reader.guid())));

    // DCPSSubscription on a: b's reader.
    let subs = a.builtin_subscriptions_reader();
    let r_key = BuiltinTopicKey(reader.guid());
    let got = take_until(&subs, "b's reader", |s| {
        s.iter()
            .any(|s| s.data.as_ref().is_some_and(|d| d.key == r_key))
    });
    let r = got
        .iter()
        .find_map(|s| s.data.as_ref().filter(|d| d.key == r_key))
        .expect("reader data");
    assert_eq!(r.topic_name, "telemetry");
    assert_eq!(r.type_name, "test::Telemetry");
    assert_eq!(r.qos.user_data, b"reader-ud");
    assert_eq!(r.qos.reliability.kind, reader.qos().reliability.kind);
    assert!(a.discovered_subscriptions().iter().any(|s| s.key == r_key));
    assert!(a
        .get_discovered_subscription_data(r_key.instance_handle())
        .is_ok());

    // A user sample's publication_handle leads to the writer's announcement.
    wait_matched(&writer, &reader);
    writer
        .write(&Telemetry {
            unit: 3,
            value: 1.5,
        })
        .expect("write");
    let got = take_until(&reader, "a sample", |s| !s.is_empty());
    let handle = BuiltinTopicKey(got[0].info.publication_handle).instance_handle();
    let announced = b
        .get_discovered_publication_data(handle)
        .expect("known writer");
    assert_eq!(announced.key, w_key);

    // Deleting the writer disposes its DCPSPublication instance on b.
    drop(writer);
    let got = take_until(&pubs, "the writer's disposal", |s| {
        s.iter().any(|s| {
            s.info.instance_handle == w_key.instance_handle()
                && s.info.instance_state == InstanceState::NotAliveDisposed
        })
    });
    assert!(got
        .iter()
        .all(|s| s.info.sample_state == SampleState::NotRead));
    assert!(b
        .get_discovered_publication_data(w_key.instance_handle())
        .is_err());

    // Closing a disposes it on b's DCPSParticipant reader; nothing of a is left.
    a.close();
    let got = take_until(&parts, "a's disposal", |s| {
        s.iter().any(|s| {
            s.info.instance_handle == a_key.instance_handle()
                && s.info.instance_state == InstanceState::NotAliveDisposed
        })
    });
    assert!(!got
        .iter()
        .any(|s| s.info.instance_state == InstanceState::Alive
            && s.info.instance_handle == a_key.instance_handle()));
    assert!(b.discovered_participants().iter().all(|p| p.key != a_key));
    assert!(b.discovered_publications().is_empty());
}

#[test]
fn a_reader_created_late_finds_the_participants_discovered_before_and_reads_keep_them() {
    tachyon_transport::testing::require_isolated_network();
    let a = participant(42, b"", "a");
    let b = participant(42, b"", "b");
    let a_key = BuiltinTopicKey::from_instance_handle(a.get_instance_handle());
    wait_until("discovery", || !b.discovered_participants().is_empty());
    // The reader existed all along: what discovery found is there, unread.
    let parts = b.builtin_participants_reader();
    assert!(parts.wait_for_data(PATIENCE));
    let first = parts.read(usize::MAX).expect("read");
    assert!(first
        .iter()
        .any(|s| s.data.as_ref().map(|d| d.key) == Some(a_key)));
    assert!(first.iter().all(
        |s| s.info.sample_state == SampleState::NotRead && s.info.view_state == ViewState::New
    ));
    // `read` keeps them, marked READ and NOT_NEW.
    let again = b
        .builtin_participants_reader()
        .read(usize::MAX)
        .expect("read");
    assert_eq!(again.len(), first.len());
    assert!(again.iter().all(
        |s| s.info.sample_state == SampleState::Read && s.info.view_state == ViewState::NotNew
    ));
    // A read of a specific instance works with the key's handle.
    let one = parts
        .read_instance(a_key.instance_handle(), usize::MAX)
        .expect("read_instance");
    assert_eq!(one.len(), 1);
    // Dropping the participant (not only closing it) is announced as well.
    drop(a);
    let got = take_until(&parts, "a's disposal", |s| {
        s.iter()
            .any(|s| s.info.instance_state == InstanceState::NotAliveDisposed)
    });
    assert!(got
        .iter()
        .any(|s| s.info.instance_handle == a_key.instance_handle()));
}
