//! PRESENTATION between participants of one process over real UDP on loopback (inside the
//! isolated network namespace `scripts/test.sh` provides), as the OMG DDS-RTPS suite's
//! OrderedAccess_* and CoherentSets_* cases use it: `take()` order with ordered access
//! (TOPIC: as written across instances; INSTANCE: instance by instance), coherent sets of
//! three writers never seen partially under `begin_access`/`end_access` (scopes TOPIC and
//! GROUP), a transient-local late joiner that gets whole sets only, and incompatible
//! PRESENTATION reported on both sides.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
mod common;

use std::time::Instant;

use common::{take_all_written, wait_matched, wait_until, PATIENCE};
use tachyon::prelude::*;
use tachyon::qos::{AccessScope, Presentation, PublisherQos, QosPolicyId, SubscriberQos};

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Shape")]
struct Shape {
    #[key]
    color: String,
    x: i32,
}

const COLORS: [&str; 4] = ["BLUE", "GREEN", "ORANGE", "RED"];

fn presentation(scope: AccessScope, coherent: bool, ordered: bool) -> Presentation {
    Presentation {
        access_scope: scope,
        coherent_access: coherent,
        ordered_access: ordered,
    }
}

fn shape(color: &str, x: i32) -> Shape {
    Shape {
        color: color.to_owned(),
        x,
    }
}

#[test]
fn ordered_access_topic_returns_the_written_order_and_instance_groups_instances() {
    tachyon_transport::testing::require_isolated_network();
    let domain = 61;
    let p = DomainParticipant::new(domain).expect("participant");
    let t = p.create_topic::<Shape>("OrderedSquare").expect("topic");
    let publisher = p
        .create_publisher_with_qos(PublisherQos::default().presentation(presentation(
            AccessScope::Topic,
            false,
            true,
        )))
        .expect("publisher");
    let w = publisher
        .create_datawriter(&t, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    let reader = |scope| {
        let q = SubscriberQos::default().presentation(presentation(scope, false, true));
        let s = p.create_subscriber_with_qos(q).expect("subscriber");
        let r = s
            .create_datareader(&t, DataReaderQos::default().reliable().keep_all())
            .expect("reader");
        (s, r)
    };
    let (_si, by_instance) = reader(AccessScope::Instance);
    let (_st, by_topic) = reader(AccessScope::Topic);
    wait_matched(&w, &by_instance);
    wait_matched(&w, &by_topic);
    for x in 0..5 {
        for c in COLORS {
            w.write(&shape(c, x)).expect("write");
        }
    }
    w.wait_for_acknowledgments(PATIENCE).expect("acknowledged");
    let colors = |r: &DataReader<Shape>| -> Vec<String> {
        r.take(usize::MAX)
            .expect("take")
            .into_iter()
            .filter_map(|s| s.data)
            .map(|d| d.color)
            .collect()
    };
    let topic = colors(&by_topic);
    let instance = colors(&by_instance);
    assert_eq!(topic.len(), 20);
    assert_eq!(instance.len(), 20);
    let expected: Vec<String> = (0..5)
        .flat_map(|_| COLORS.iter().map(|c| c.to_string()))
        .collect();
    assert_eq!(topic, expected, "TOPIC scope: in the order written");
    let changes = instance.windows(2).filter(|w| w[0] != w[1]).count();
    assert_eq!(
        changes, 3,
        "INSTANCE scope: instance by instance: {instance:?}"
    );
}

/// Three writers (topics) of one coherent publisher write sets of 3 samples per instance
/// for 4 instances while a reader thread takes from the three readers of one coherent
/// subscriber under `begin_access`/`end_access` in a tight loop: every access sees whole
/// sets (multiples of 36 samples, 3 consecutive per instance and topic) and all arrive.
fn coherent_sets_are_never_seen_partially(domain: u32, scope: AccessScope) {
    tachyon_transport::testing::require_isolated_network();
    const SETS: usize = 12;
    let pp = DomainParticipant::new(domain).expect("participant");
    let sp = DomainParticipant::new(domain).expect("participant");
    let pres = presentation(scope, true, false);
    let publisher = pp
        .create_publisher_with_qos(PublisherQos::default().presentation(pres))
        .expect("publisher");
    let subscriber = sp
        .create_subscriber_with_qos(SubscriberQos::default().presentation(pres))
        .expect("subscriber");
    let mut writers = Vec::new();
    let mut readers = Vec::new();
    for topic in ["Square", "Circle", "Triangle"] {
        let t = pp.create_topic::<Shape>(topic).expect("topic");
        writers.push(
            publisher
                .create_datawriter(&t, DataWriterQos::default().reliable().keep_all())
                .expect("writer"),
        );
        let t = sp.create_topic::<Shape>(topic).expect("topic");
        readers.push(
            subscriber
                .create_datareader(&t, DataReaderQos::default().reliable().keep_all())
                .expect("reader"),
        );
    }
    for (w, r) in writers.iter().zip(&readers) {
        wait_matched(w, r);
    }

    let stop = Arc::new(AtomicBool::new(false));
    let reading = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut total = 0;
            let mut accesses = 0;
            let end = Instant::now() + PATIENCE;
            while total < SETS * 36 && Instant::now() < end {
                subscriber.begin_access().expect("begin_access");
                let mut got = 0;
                for r in &readers {
                    let samples = r.take(usize::MAX).expect("take");
                    // Each instance's samples come together, a multiple of 3.
                    let mut run = 0;
                    let mut last: Option<String> = None;
                    for s in samples.iter().filter_map(|s| s.data.as_ref()) {
                        if last.as_deref() == Some(&s.color) {
                            run += 1;
                        } else {
                            assert_eq!(run % 3, 0, "a partial instance run");
                            run = 1;
                            last = Some(s.color.clone());
                        }
                    }
                    assert_eq!(run % 3, 0, "a partial instance run");
                    got += samples.len();
                }
                subscriber.end_access().expect("end_access");
                assert_eq!(got % 36, 0, "an access saw {got} samples: a partial set");
                if got > 0 {
                    accesses += 1;
                }
                total += got;
                if stop.load(Ordering::Relaxed) && got == 0 {
                    // Everything is written: poll for the rest without spinning.
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
            (total, accesses)
        })
    };
    for set in 0..SETS {
        publisher.begin_coherent_changes().expect("begin");
        for n in 0..3 {
            for w in &writers {
                for c in COLORS {
                    w.write(&shape(c, (set * 3 + n) as i32)).expect("write");
                }
            }
            // Part of the test: a set spread over time, which the reader's tight loop would
            // catch half-written if sets were not held back until they end.
            std::thread::sleep(Duration::from_millis(2));
        }
        publisher.end_coherent_changes().expect("end");
    }
    stop.store(true, Ordering::Relaxed);
    let (total, accesses) = reading.join().expect("reader thread");
    assert_eq!(total, SETS * 36, "every set arrives");
    assert!(accesses >= 1);
    assert!(publisher.end_coherent_changes().is_err(), "unbalanced end");
}

#[test]
fn coherent_sets_topic_scope_are_never_seen_partially() {
    coherent_sets_are_never_seen_partially(62, AccessScope::Topic);
}

#[test]
fn coherent_sets_group_scope_are_never_seen_partially() {
    coherent_sets_are_never_seen_partially(63, AccessScope::Group);
}

#[test]
fn a_transient_local_late_joiner_gets_whole_sets_only() {
    tachyon_transport::testing::require_isolated_network();
    let domain = 64;
    let pres = presentation(AccessScope::Topic, true, false);
    let pp = DomainParticipant::new(domain).expect("participant");
    let t = pp.create_topic::<Shape>("LateSquare").expect("topic");
    let publisher = pp
        .create_publisher_with_qos(PublisherQos::default().presentation(pres))
        .expect("publisher");
    let w = publisher
        .create_datawriter(
            &t,
            DataWriterQos::default()
                .reliable()
                .keep_all()
                .transient_local(),
        )
        .expect("writer");
    for set in 0..2 {
        publisher.begin_coherent_changes().expect("begin");
        for c in COLORS {
            w.write(&shape(c, set)).expect("write");
        }
        publisher.end_coherent_changes().expect("end");
    }
    // A set still open when the reader joins: it must not show until it ends.
    publisher.begin_coherent_changes().expect("begin");
    w.write(&shape("BLUE", 9)).expect("write");

    let sp = DomainParticipant::new(domain).expect("participant");
    let t = sp.create_topic::<Shape>("LateSquare").expect("topic");
    let subscriber = sp
        .create_subscriber_with_qos(SubscriberQos::default().presentation(pres))
        .expect("subscriber");
    let r = subscriber
        .create_datareader(
            &t,
            DataReaderQos::default()
                .reliable()
                .keep_all()
                .transient_local(),
        )
        .expect("reader");
    // The two whole sets; then the acknowledgement shows that the open set's first sample
    // reached the reader too.
    let mut got = take_all_written(&w, &r, 8);
    assert_eq!(got.len(), 8, "the open set stays hidden: {got:?}");
    w.write(&shape("GREEN", 9)).expect("write");
    publisher.end_coherent_changes().expect("end");
    got.extend(take_all_written(&w, &r, 2));
    assert_eq!(got.len(), 10, "the third set: {got:?}");
}

#[test]
fn incompatible_presentation_is_reported_on_both_sides() {
    tachyon_transport::testing::require_isolated_network();
    let domain = 65;
    let p = DomainParticipant::new(domain).expect("participant");
    let t = p.create_topic::<Shape>("Mismatch").expect("topic");
    let w = p
        .create_publisher_with_qos(PublisherQos::default().presentation(presentation(
            AccessScope::Instance,
            true,
            false,
        )))
        .expect("publisher")
        .create_datawriter(&t, DataWriterQos::default().reliable())
        .expect("writer");
    let r = p
        .create_subscriber_with_qos(SubscriberQos::default().presentation(presentation(
            AccessScope::Topic,
            true,
            false,
        )))
        .expect("subscriber")
        .create_datareader(&t, DataReaderQos::default().reliable())
        .expect("reader");
    wait_until("both sides to report", || {
        w.get_offered_incompatible_qos_status()
            .last_policy_id
            .is_some()
            && r.get_requested_incompatible_qos_status()
                .last_policy_id
                .is_some()
    });
    // Statuses reset their change counts only: the policy stays.
    assert_eq!(
        w.get_offered_incompatible_qos_status().last_policy_id,
        Some(QosPolicyId::Presentation)
    );
    assert_eq!(
        r.get_requested_incompatible_qos_status().last_policy_id,
        Some(QosPolicyId::Presentation)
    );
    assert!(w.matched_subscriptions().is_empty());
}

#[test]
fn a_content_filtered_coherent_reader_gets_the_matching_part_of_every_set() {
    // A filtered sample inside a coherent set is neither sent as a GAP by the writer nor
    // turned into a hole by the reader (either would discard the whole set): the reader gets
    // every set, minus what its filter refuses.
    tachyon_transport::testing::require_isolated_network();
    let domain = 66;
    let pres = presentation(AccessScope::Topic, true, false);
    let pp = DomainParticipant::new(domain).expect("participant");
    let t = pp.create_topic::<Shape>("FilteredSets").expect("topic");
    let publisher = pp
        .create_publisher_with_qos(PublisherQos::default().presentation(pres))
        .expect("publisher");
    let w = publisher
        .create_datawriter(&t, DataWriterQos::default().reliable().keep_all())
        .expect("writer");

    let sp = DomainParticipant::new(domain).expect("participant");
    let st = sp.create_topic::<Shape>("FilteredSets").expect("topic");
    let cft = sp
        .create_contentfilteredtopic("FilteredSets_filtered", &st, "color = %0", &["'RED'"])
        .expect("filter");
    let subscriber = sp
        .create_subscriber_with_qos(SubscriberQos::default().presentation(pres))
        .expect("subscriber");
    let r = subscriber
        .create_datareader(&cft, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    wait_matched(&w, &r);

    for set in 0..5 {
        publisher.begin_coherent_changes().expect("begin");
        for c in COLORS {
            w.write(&shape(c, set)).expect("write");
        }
        publisher.end_coherent_changes().expect("end");
    }
    let got = take_all_written(&w, &r, 5);
    assert!(got.iter().all(|s| s.color == "RED"), "{got:?}");
    assert_eq!(got.iter().map(|s| s.x).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
}
