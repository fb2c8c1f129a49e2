//! OWNERSHIP EXCLUSIVE between participants of one process over real UDP on loopback
//! (inside the isolated network namespace `scripts/test.sh` provides): the strongest writer
//! owns each instance, weaker writers' samples are dropped, and the reader fails over to the
//! next writer when the owner is deleted, unregisters or misses its deadline. A SHARED reader
//! sees every writer.

mod common;

use common::{
    participants, take_at_least, take_data, wait_matched, wait_reader_matches, wait_until,
    wait_writer_matches, PATIENCE,
};
use tachyon::prelude::*;
use tachyon::qos::OwnershipKind;

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Owned")]
struct Owned {
    #[key]
    id: u32,
    from: String,
}

fn sample(id: u32, from: &str) -> Owned {
    Owned {
        id,
        from: from.to_owned(),
    }
}

/// Everything the reader holds now, as `(id, from)`.
fn take_all(r: &DataReader<Owned>) -> Vec<(u32, String)> {
    take_data(r).into_iter().map(|d| (d.id, d.from)).collect()
}

/// Writes `s` with `w` and waits until `r` received something after it; returns what it got
/// (a probe sample from `probe` follows each write so "nothing arrived" is observable).
fn exchange(
    w: &DataWriter<Owned>,
    s: &Owned,
    probe: &DataWriter<Owned>,
    r: &DataReader<Owned>,
) -> Vec<(u32, String)> {
    w.write(s).expect("write");
    w.wait_for_acknowledgments(PATIENCE).expect("acknowledged");
    let marker = sample(999, "probe");
    probe.write(&marker).expect("probe");
    let mut got = Vec::new();
    wait_until("the probe", || {
        got.extend(take_all(r));
        got.iter().any(|(id, _)| *id == 999)
    });
    got.retain(|(id, _)| *id != 999);
    got
}

struct Setup {
    _participants: Vec<DomainParticipant>,
    strong: DataWriter<Owned>,
    weak: DataWriter<Owned>,
    probe: DataWriter<Owned>,
    exclusive: DataReader<Owned>,
    shared: DataReader<Owned>,
}

fn setup(domain: u32, topic: &str, deadline: Option<Duration>) -> Setup {
    tachyon_transport::testing::require_isolated_network();
    let writer_qos = |strength: i32| {
        let q = DataWriterQos::default()
            .reliable()
            .keep_all()
            .ownership(OwnershipKind::Exclusive)
            .ownership_strength(strength);
        match deadline {
            Some(d) => q.deadline(d),
            None => q,
        }
    };
    let mut participants = Vec::new();
    let mut writer = |strength: i32| {
        let p = DomainParticipant::new(domain).expect("participant");
        let t = p.create_topic::<Owned>(topic).expect("topic");
        let w = p
            .create_publisher()
            .expect("publisher")
            .create_datawriter(&t, writer_qos(strength))
            .expect("writer");
        participants.push(p);
        w
    };
    let strong = writer(10);
    let weak = writer(1);
    // The probe owns its own instance (id 999) only.
    let probe = writer(5);

    let p = DomainParticipant::new(domain).expect("participant");
    let t = p.create_topic::<Owned>(topic).expect("topic");
    let sub = p.create_subscriber().expect("subscriber");
    let mut rq = DataReaderQos::default()
        .reliable()
        .keep_all()
        .ownership(OwnershipKind::Exclusive);
    if let Some(d) = deadline {
        rq = rq.deadline(d);
    }
    let exclusive = sub.create_datareader(&t, rq).expect("exclusive reader");
    participants.push(p);

    let p = DomainParticipant::new(domain).expect("participant");
    let t = p.create_topic::<Owned>(topic).expect("topic");
    // A SHARED reader does not match EXCLUSIVE writers (OWNERSHIP must be equal): it has
    // its own SHARED writer to show nothing is dropped there.
    let shared = p
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&t, DataReaderQos::default().reliable().keep_all())
        .expect("shared reader");
    participants.push(p);

    for w in [&strong, &weak, &probe] {
        wait_writer_matches(w, 1);
    }
    wait_reader_matches(&exclusive, 3);
    Setup {
        _participants: participants,
        strong,
        weak,
        probe,
        exclusive,
        shared,
    }
}

#[test]
fn the_strongest_writer_owns_the_instance_and_the_reader_fails_over() {
    let s = setup(53, "ownership_failover", None);
    let r = &s.exclusive;
    assert!(
        s.shared.matched_publications().is_empty(),
        "SHARED and EXCLUSIVE do not match"
    );

    // No owner yet: the weak writer's sample is taken, and makes it the owner.
    assert_eq!(
        exchange(&s.weak, &sample(1, "weak"), &s.probe, r),
        [(1, "weak".into())]
    );
    // The strong writer takes the instance over; the weak one is dropped from then on.
    assert_eq!(
        exchange(&s.strong, &sample(1, "strong"), &s.probe, r),
        [(1, "strong".into())]
    );
    assert_eq!(exchange(&s.weak, &sample(1, "weak"), &s.probe, r), []);
    // Ownership is per instance: the weak writer owns instance 2.
    assert_eq!(
        exchange(&s.weak, &sample(2, "weak"), &s.probe, r),
        [(2, "weak".into())]
    );

    // The owner unregisters instance 1: the weak writer's next sample is taken.
    s.strong
        .unregister_instance(&sample(1, ""))
        .expect("unregister");
    s.strong
        .wait_for_acknowledgments(PATIENCE)
        .expect("acknowledged");
    let got = exchange(&s.weak, &sample(1, "weak again"), &s.probe, r);
    assert_eq!(got, [(1, "weak again".into())]);

    // The strong writer comes back and owns it again; then it is deleted, and the weak
    // writer takes over.
    assert_eq!(
        exchange(&s.strong, &sample(1, "strong"), &s.probe, r),
        [(1, "strong".into())]
    );
    assert_eq!(exchange(&s.weak, &sample(1, "weak"), &s.probe, r), []);
    let Setup {
        strong,
        weak,
        probe,
        exclusive,
        ..
    } = s;
    drop(strong);
    wait_reader_matches(&exclusive, 2);
    assert_eq!(
        exchange(&weak, &sample(1, "after failover"), &probe, &exclusive),
        [(1, "after failover".into())]
    );
}

#[test]
fn an_owner_that_misses_its_deadline_loses_the_instance() {
    let s = setup(54, "ownership_deadline", Some(Duration::from_millis(300)));
    let r = &s.exclusive;
    assert_eq!(
        exchange(&s.strong, &sample(1, "strong"), &s.probe, r),
        [(1, "strong".into())]
    );
    assert_eq!(exchange(&s.weak, &sample(1, "weak"), &s.probe, r), []);
    // The behaviour under test: the strong writer stays silent for longer than its deadline
    // (300 ms).
    std::thread::sleep(Duration::from_millis(600));
    assert_eq!(
        exchange(&s.weak, &sample(1, "weak"), &s.probe, r),
        [(1, "weak".into())],
        "the weak writer took over after the owner's deadline"
    );
}

#[test]
fn a_shared_reader_takes_every_writer() {
    let (p, q) = participants(55);
    let t = p.create_topic::<Owned>("ownership_shared").expect("topic");
    let publisher = p.create_publisher().expect("publisher");
    let qos = DataWriterQos::default().reliable().keep_all();
    let a = publisher
        .create_datawriter(&t, qos.clone().ownership_strength(10))
        .expect("a");
    let b = publisher
        .create_datawriter(&t, qos.ownership_strength(1))
        .expect("b");
    let tq = q.create_topic::<Owned>("ownership_shared").expect("topic");
    let r = q
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tq, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    wait_matched(&a, &r);
    wait_matched(&b, &r);
    a.write(&sample(1, "a")).expect("write");
    b.write(&sample(1, "b")).expect("write");
    let mut got: Vec<(u32, String)> = take_at_least(&r, 2)
        .into_iter()
        .map(|d| (d.id, d.from))
        .collect();
    got.sort();
    assert_eq!(got, [(1, "a".into()), (1, "b".into())]);
}
