//! `set_qos` on writers, readers, publishers, subscribers and topics: immutable policies are
//! refused, changeable ones take effect and are re-announced, and matching follows them —
//! between two participants of one process over real UDP sockets on loopback (inside the
//! isolated network namespace `scripts/test.sh` provides).

mod common;

use common::{participants, take_all_written, take_at_least, wait_matched, wait_until};
use tachyon::prelude::*;
use tachyon::qos::{AccessScope, InconsistentQos, Presentation, QosPolicyId};

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Tagged")]
struct Tagged {
    #[key]
    id: u32,
    from: String,
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn immutable_policies_are_refused_and_leave_the_qos_unchanged() {
    tachyon_transport::testing::require_isolated_network();
    let p = DomainParticipant::new(50).expect("participant");
    let topic = p.create_topic::<Tagged>("immutable").expect("topic");
    let publisher = p.create_publisher().expect("publisher");
    let w = publisher
        .create_datawriter(&topic, DataWriterQos::default().reliable())
        .expect("writer");
    let before = w.get_qos();

    let err = w.set_qos(before.clone().best_effort().deadline(ms(10)));
    assert!(
        matches!(err, Err(Error::ImmutablePolicy(QosPolicyId::Reliability))),
        "{err:?}"
    );
    assert_eq!(
        w.get_qos(),
        before,
        "nothing changed, not even the deadline"
    );
    let err = w.set_qos(before.clone().keep_all());
    assert!(matches!(
        err,
        Err(Error::ImmutablePolicy(QosPolicyId::History))
    ));

    // Changeable policies change; an empty DATA_REPRESENTATION keeps the one chosen.
    let changed = DataWriterQos::default()
        .reliable()
        .deadline(ms(250))
        .lifespan(ms(5000))
        .transport_priority(7)
        .ownership_strength(3)
        .autodispose_unregistered_instances(false);
    w.set_qos(changed.clone()).expect("changeable");
    let now = w.get_qos();
    assert_eq!(now.deadline, Some(ms(250)));
    assert_eq!(now.lifespan, Some(ms(5000)));
    assert_eq!(now.transport_priority, 7);
    assert_eq!(now.ownership_strength, 3);
    assert!(!now.autodispose_unregistered_instances);
    assert_eq!(now.representation, before.representation);

    let sub = p.create_subscriber().expect("subscriber");
    let r = sub
        .create_datareader(&topic, DataReaderQos::default().deadline(ms(100)))
        .expect("reader");
    let before = r.get_qos();
    let err = r.set_qos(before.clone().transient_local());
    assert!(matches!(
        err,
        Err(Error::ImmutablePolicy(QosPolicyId::Durability))
    ));
    // TIME_BASED_FILTER longer than DEADLINE is inconsistent: nothing changes.
    let err = r.set_qos(before.clone().time_based_filter(ms(200)));
    assert!(
        matches!(
            err,
            Err(Error::InconsistentQos(
                InconsistentQos::TimeBasedFilterExceedsDeadline
            ))
        ),
        "{err:?}"
    );
    assert_eq!(r.get_qos(), before);
    r.set_qos(before.clone().time_based_filter(ms(50)))
        .expect("filter within the deadline");
    assert_eq!(r.get_qos().time_based_filter, ms(50));

    let scope = Presentation {
        access_scope: AccessScope::Topic,
        ..Presentation::default()
    };
    let err = publisher.set_qos(PublisherQos::default().presentation(scope));
    assert!(matches!(
        err,
        Err(Error::ImmutablePolicy(QosPolicyId::Presentation))
    ));
    assert_eq!(publisher.get_qos(), PublisherQos::default());
    let err = sub.set_qos(SubscriberQos::default().partition(&["bad\0name"]));
    assert!(matches!(err, Err(Error::InconsistentQos(_))));
    assert_eq!(sub.get_qos(), SubscriberQos::default());

    let tq = topic.get_qos();
    let err = topic.set_qos(TopicQos {
        durability: DurabilityKind::TransientLocal,
        ..tq.clone()
    });
    assert!(matches!(
        err,
        Err(Error::ImmutablePolicy(QosPolicyId::Durability))
    ));
    assert_eq!(topic.get_qos(), tq);
}

#[test]
fn a_subscriber_partition_change_moves_its_reader_from_one_writer_to_another() {
    let (a, b) = participants(51);
    let ta = a.create_topic::<Tagged>("partitioned").expect("topic");
    let tb = b.create_topic::<Tagged>("partitioned").expect("topic");
    let wqos = DataWriterQos::default().reliable().keep_all();
    let pa = a
        .create_publisher_with_qos(PublisherQos::default().partition(&["a"]))
        .expect("publisher a");
    let pb = a
        .create_publisher_with_qos(PublisherQos::default().partition(&["b"]))
        .expect("publisher b");
    let wa = pa.create_datawriter(&ta, wqos.clone()).expect("writer a");
    let wb = pb.create_datawriter(&ta, wqos).expect("writer b");
    let sub = b
        .create_subscriber_with_qos(SubscriberQos::default().partition(&["a"]))
        .expect("subscriber");
    let r = sub
        .create_datareader(&tb, DataReaderQos::default().reliable().keep_all())
        .expect("reader");

    wait_until("the reader matching writer a", || {
        r.matched_publications() == vec![wa.guid()] && wa.matched_subscriptions() == vec![r.guid()]
    });
    assert!(wb.matched_subscriptions().is_empty());
    // Sample `n` from each of `writers`, the one the reader matches last: once its sample is
    // acknowledged, the other one would have arrived as well. Returns what the reader got.
    let send = |n: u32, writers: [(&DataWriter<Tagged>, &str); 2]| {
        for (w, from) in writers {
            w.write(&Tagged {
                id: n,
                from: from.into(),
            })
            .expect("write");
        }
        take_all_written(writers[1].0, &r, 1)
    };
    let got = send(1, [(&wb, "b"), (&wa, "a")]);
    assert_eq!(
        got,
        vec![Tagged {
            id: 1,
            from: "a".into()
        }]
    );

    sub.set_qos(SubscriberQos::default().partition(&["b"]))
        .expect("partition change");
    assert_eq!(sub.get_qos().partition, vec!["b".to_string()]);
    wait_until("the reader moving to writer b", || {
        r.matched_publications() == vec![wb.guid()]
            && wb.matched_subscriptions() == vec![r.guid()]
            && wa.matched_subscriptions().is_empty()
    });
    let m = wa.get_publication_matched_status();
    assert_eq!(m.current_count, 0);
    assert_eq!(m.total_count, 1);
    let m = r.get_subscription_matched_status();
    assert_eq!((m.current_count, m.total_count), (1, 2));

    let _ = r.take(usize::MAX).expect("take");
    let got = send(2, [(&wa, "a"), (&wb, "b")]);
    assert_eq!(
        got,
        vec![Tagged {
            id: 2,
            from: "b".into()
        }]
    );
}

#[test]
fn a_deadline_loosened_beyond_the_request_unmatches_and_tightening_it_rematches() {
    let (a, b) = participants(52);
    let ta = a.create_topic::<Tagged>("deadlines").expect("topic");
    let tb = b.create_topic::<Tagged>("deadlines").expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&ta, DataWriterQos::default().deadline(ms(1000)))
        .expect("writer");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tb, DataReaderQos::default().deadline(ms(2000)))
        .expect("reader");
    wait_matched(&w, &r);

    w.set_qos(w.get_qos().deadline(ms(3000)))
        .expect("looser deadline");
    assert_eq!(w.get_qos().deadline, Some(ms(3000)));
    wait_until("unmatching with incompatible QoS on both sides", || {
        w.matched_subscriptions().is_empty() && r.matched_publications().is_empty()
    });
    wait_until("OFFERED_INCOMPATIBLE_QOS", || {
        w.get_status_changes()
            .contains(StatusMask::OFFERED_INCOMPATIBLE_QOS)
    });
    let s = w.get_offered_incompatible_qos_status();
    assert!(s.total_count >= 1);
    assert_eq!(s.last_policy_id, Some(QosPolicyId::Deadline));
    wait_until("REQUESTED_INCOMPATIBLE_QOS", || {
        r.get_status_changes()
            .contains(StatusMask::REQUESTED_INCOMPATIBLE_QOS)
    });
    let s = r.get_requested_incompatible_qos_status();
    assert!(s.total_count >= 1);
    assert_eq!(s.last_policy_id, Some(QosPolicyId::Deadline));

    w.set_qos(w.get_qos().deadline(ms(500)))
        .expect("tighter deadline");
    wait_until("matching again", || {
        w.matched_subscriptions() == vec![r.guid()] && r.matched_publications() == vec![w.guid()]
    });
    w.write(&Tagged {
        id: 9,
        from: "again".into(),
    })
    .expect("write");
    let got = take_at_least(&r, 1);
    assert_eq!(got[0].id, 9);
}

#[test]
fn user_topic_and_group_data_changes_reach_the_remote_builtin_topics() {
    let (a, b) = participants(53);
    let topic = a.create_topic::<Tagged>("described").expect("topic");
    let publisher = a.create_publisher().expect("publisher");
    let w = publisher
        .create_datawriter(&topic, DataWriterQos::default().user_data(b"v1"))
        .expect("writer");
    let key = tachyon::BuiltinTopicKey(w.guid());
    let remote = |f: &dyn Fn(&PublicationBuiltinTopicData) -> bool| {
        b.discovered_publications()
            .iter()
            .any(|p| p.key == key && f(p))
    };
    wait_until("the writer discovered with v1", || {
        remote(&|p| p.qos.user_data == b"v1")
    });
    let builtin = b.builtin_publications_reader();

    w.set_qos(w.get_qos().user_data(b"v2")).expect("user data");
    assert_eq!(w.get_qos().user_data, b"v2");
    assert!(matches!(
        builtin.set_qos(builtin.get_qos().time_based_filter(ms(1))),
        Err(Error::Unsupported(_))
    ));
    wait_until("USER_DATA v2 seen remotely", || {
        remote(&|p| p.qos.user_data == b"v2")
    });
    let mut seen = false;
    wait_until("USER_DATA v2 on the builtin publication reader", || {
        for s in builtin.take(usize::MAX).expect("take") {
            seen |= s
                .data
                .is_some_and(|p| p.key == key && p.qos.user_data == b"v2");
        }
        seen
    });

    topic
        .set_qos(TopicQos {
            topic_data: b"t2".to_vec(),
            ..topic.get_qos()
        })
        .expect("topic data");
    assert_eq!(topic.get_qos().topic_data, b"t2");
    wait_until("TOPIC_DATA seen remotely", || {
        remote(&|p| p.topic_data == b"t2")
    });

    let mut pq = publisher.get_qos();
    pq.group_data = b"g2".to_vec();
    publisher.set_qos(pq).expect("group data");
    wait_until("GROUP_DATA seen remotely", || {
        remote(&|p| p.group_data == b"g2")
    });
    // The earlier changes stay announced.
    assert!(remote(
        &|p| p.qos.user_data == b"v2" && p.topic_data == b"t2"
    ));
}

#[test]
fn participant_user_data_change_reaches_the_remote_participant_reader() {
    let (a, b) = participants(54);
    let key = tachyon::BuiltinTopicKey::from_instance_handle(a.get_instance_handle());
    let remote = |ud: &[u8]| {
        b.discovered_participants()
            .iter()
            .any(|p| p.key == key && p.user_data == ud)
    };
    wait_until("a discovered by b", || remote(b""));
    let mut q = a.get_qos();
    q.user_data = b"hello".to_vec();
    a.set_qos(q).expect("set_qos");
    assert_eq!(a.get_qos().user_data, b"hello");
    wait_until("USER_DATA seen by b", || remote(b"hello"));
    let reader = b.builtin_participants_reader();
    let mut seen = false;
    wait_until("USER_DATA on the builtin participant reader", || {
        for s in reader.take(usize::MAX).expect("take") {
            seen |= s
                .data
                .is_some_and(|p| p.key == key && p.user_data == b"hello");
        }
        seen
    });
}
