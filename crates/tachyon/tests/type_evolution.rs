//! XTypes type discovery between two participants: types that differ but are assignable
//! match (the missing TypeObject fetched with TypeLookup) and exchange samples; types with the
//! same structure but different names match; types that are not assignable do not, and both
//! sides report TYPE_CONSISTENCY_ENFORCEMENT as incompatible QoS.

mod common;

use common::*;
use tachyon::prelude::*;
use tachyon::qos::{QosPolicyId, TypeConsistency};

mod v1 {
    use tachyon::prelude::*;
    /// The first version of a type.
    #[derive(DdsType, Debug, Clone, PartialEq)]
    #[dds(name = "Shapes::Shape", appendable)]
    pub struct Shape {
        #[dds(key, bound = 128)]
        pub color: String,
        pub x: i32,
        pub y: i32,
    }
}

mod v2 {
    use tachyon::prelude::*;
    /// The next version: a member appended.
    #[derive(DdsType, Debug, Clone, PartialEq)]
    #[dds(name = "Shapes::Shape", appendable)]
    pub struct Shape {
        #[dds(key, bound = 128)]
        pub color: String,
        pub x: i32,
        pub y: i32,
        pub shapesize: i32,
    }
}

mod renamed {
    use tachyon::prelude::*;
    /// The first version under another type name.
    #[derive(DdsType, Debug, Clone, PartialEq)]
    #[dds(name = "Other::Figure", appendable)]
    pub struct Shape {
        #[dds(key, bound = 128)]
        pub color: String,
        pub x: i32,
        pub y: i32,
    }
}

mod changed {
    use tachyon::prelude::*;
    /// A member's type changed: not assignable.
    #[derive(DdsType, Debug, Clone, PartialEq)]
    #[dds(name = "Shapes::Shape", appendable)]
    pub struct Shape {
        #[dds(key, bound = 128)]
        pub color: String,
        pub x: i64,
        pub y: i32,
    }
}

fn writer<T: DdsType>(p: &DomainParticipant, topic: &str) -> DataWriter<T> {
    let t = p.create_topic::<T>(topic).expect("topic");
    p.create_publisher()
        .expect("publisher")
        .create_datawriter(&t, DataWriterQos::default().reliable())
        .expect("writer")
}

fn reader<T: DdsType + for<'de> tachyon_cdr::Decode<'de>>(
    p: &DomainParticipant,
    topic: &str,
    qos: DataReaderQos,
) -> DataReader<T> {
    let t = p.create_topic::<T>(topic).expect("topic");
    p.create_subscriber()
        .expect("subscriber")
        .create_datareader(&t, qos)
        .expect("reader")
}

#[test]
fn an_appended_member_matches_through_type_lookup_and_samples_decode() {
    let (a, b) = participants(61);
    let w = writer::<v2::Shape>(&a, "evolving");
    let r = reader::<v1::Shape>(&b, "evolving", DataReaderQos::default().reliable());
    wait_matched(&w, &r);
    // The reader's participant asked for the writer's type, the writer's answered.
    let (sa, sb) = (a.statistics().types, b.statistics().types);
    assert!(sb.requests_sent >= 1 && sb.objects_received >= 1, "{sb:?}");
    assert!(sa.requests_answered >= 1, "{sa:?}");
    assert_eq!(sb.objects_refused + sb.malformed, 0, "{sb:?}");
    let s = v2::Shape {
        color: "BLUE".into(),
        x: 1,
        y: 2,
        shapesize: 30,
    };
    w.write(&s).expect("write");
    let mut got = Vec::new();
    wait_until("the sample", || {
        got.extend(r.take(16).expect("take").into_iter().filter_map(|s| s.data));
        !got.is_empty()
    });
    assert_eq!(
        got[0],
        v1::Shape {
            color: "BLUE".into(),
            x: 1,
            y: 2
        }
    );
    // And the other way: a v1 writer, a v2 reader (the missing member takes its default).
    let w1 = writer::<v1::Shape>(&b, "evolving2");
    let r2 = reader::<v2::Shape>(&a, "evolving2", DataReaderQos::default().reliable());
    wait_matched(&w1, &r2);
}

#[test]
fn the_same_structure_under_another_type_name_matches() {
    let (a, b) = participants(62);
    let w = writer::<v1::Shape>(&a, "figures");
    let tb = b.create_topic::<renamed::Shape>("figures").expect("topic");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tb, DataReaderQos::default().reliable())
        .expect("reader");
    wait_matched(&w, &r);
    // Equal minimal identifiers: nothing to ask for, and the topic is consistent although
    // the type names differ.
    assert_eq!(b.statistics().types.requests_sent, 0);
    assert_eq!(tb.get_inconsistent_topic_status().total_count, 0);
}

/// Waits for both sides' incompatible-QoS statuses and returns their last policies.
fn incompatible<W: DdsType, R: DdsType + for<'de> tachyon_cdr::Decode<'de>>(
    w: &DataWriter<W>,
    r: &DataReader<R>,
) -> (Option<QosPolicyId>, Option<QosPolicyId>) {
    let (offered, requested) = wait_incompatible(w, r);
    assert!(w.matched_subscriptions().is_empty());
    assert!(r.matched_publications().is_empty());
    (offered.last_policy_id, requested.last_policy_id)
}

#[test]
fn a_changed_member_type_does_not_match_and_both_sides_say_why() {
    let (a, b) = participants(63);
    let w = writer::<v1::Shape>(&a, "clash");
    let tb = b.create_topic::<changed::Shape>("clash").expect("topic");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tb, DataReaderQos::default().reliable())
        .expect("reader");
    let tce = Some(QosPolicyId::TypeConsistencyEnforcement);
    assert_eq!(incompatible(&w, &r), (tce, tce));
    // The topic is inconsistent too (same name, a type neither assignable to nor from).
    wait_until("INCONSISTENT_TOPIC", || {
        tb.get_inconsistent_topic_status().total_count >= 1
    });
}

#[test]
fn disallowing_type_coercion_refuses_another_version() {
    let (a, b) = participants(64);
    let w = writer::<v2::Shape>(&a, "strict");
    let mut qos = DataReaderQos::default().reliable();
    qos.type_consistency = TypeConsistency::disallow();
    let r = reader::<v1::Shape>(&b, "strict", qos);
    let tce = Some(QosPolicyId::TypeConsistencyEnforcement);
    assert_eq!(incompatible(&w, &r), (tce, tce));
}
