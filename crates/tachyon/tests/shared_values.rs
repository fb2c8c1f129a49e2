//! Samples shared as values in process (`tachyon_cdr::share`, issue 15): a writer whose
//! matched readers are all in its process and read its Rust type keeps each sample as its
//! value instead of serializing it, and the readers take a clone of it (or the value itself
//! when no one else holds it) instead of decoding. Anyone who needs the bytes after all — a
//! reader of another type, or of a participant without the in-process transport, matched
//! later — has them serialized then, and gets the same samples.

mod common;

use common::{take_all_written, wait_matched, wait_until};
use tachyon::prelude::*;
use tachyon::{ParticipantSettings, TransportSettings};

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Note")]
struct Note {
    #[dds(key)]
    id: u32,
    n: u64,
    text: String,
}

/// The same IDL type, another Rust type: its readers cannot take `Note` values.
#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Note")]
struct OtherNote {
    #[dds(key)]
    id: u32,
    n: u64,
    text: String,
}

/// The same IDL type, not `Clone`: never shared.
#[derive(DdsType, Debug, PartialEq)]
#[dds(name = "test::Note")]
struct PlainNote {
    #[dds(key)]
    id: u32,
    n: u64,
    text: String,
}

fn note(n: u64) -> Note {
    Note {
        id: (n % 3) as u32,
        n,
        text: format!("note {n} {}", "x".repeat((n % 40) as usize)),
    }
}

/// Every sample `reader` gets of what `writer` wrote, `n` at least, in writing order (a take
/// groups samples by instance).
fn got<W: tachyon::Writable, T: tachyon::Readable, K: Ord>(
    w: &DataWriter<W>,
    r: &DataReader<T>,
    n: usize,
    order: impl FnMut(&T) -> K,
) -> Vec<T> {
    let mut v = take_all_written(w, r, n);
    v.sort_by_key(order);
    v
}

fn participant(domain: u32, intra: bool) -> DomainParticipant {
    let s = ParticipantSettings {
        transports: TransportSettings {
            no_intra: !intra,
            ..TransportSettings::default()
        },
        ..ParticipantSettings::default()
    };
    DomainParticipant::with_settings(domain, &s).expect("participant")
}

fn writer<T: DdsType + 'static>(p: &DomainParticipant, qos: DataWriterQos) -> DataWriter<T> {
    p.create_publisher()
        .expect("publisher")
        .create_datawriter(&p.create_topic::<T>("notes").expect("topic"), qos)
        .expect("writer")
}

fn reader<T: DdsType + for<'de> tachyon::Decode<'de> + 'static>(
    p: &DomainParticipant,
    qos: DataReaderQos,
) -> DataReader<T> {
    p.create_subscriber()
        .expect("subscriber")
        .create_datareader(&p.create_topic::<T>("notes").expect("topic"), qos)
        .expect("reader")
}

/// Readers of the writer's type in another participant and in its own get every sample,
/// none serialized nor decoded.
#[test]
fn readers_of_the_writers_type_take_its_values() {
    tachyon_transport::testing::require_isolated_network();
    let (a, b) = (participant(20, true), participant(20, true));
    let qos = || DataReaderQos::default().reliable().keep_all();
    let w = writer::<Note>(&a, DataWriterQos::default().reliable().keep_all());
    let other = reader::<Note>(&b, qos());
    let own = reader::<Note>(&a, qos());
    wait_matched(&w, &other);
    wait_matched(&w, &own);
    let all: Vec<Note> = (0..200).map(note).collect();
    for s in &all {
        w.write(s).expect("write");
    }
    assert_eq!(got(&w, &other, all.len(), |s| s.n), all);
    assert_eq!(got(&w, &own, all.len(), |s| s.n), all);
    assert_eq!(w.shared_samples_written(), 200);
    assert_eq!(w.late_serializations(), 0, "no one asked for bytes");
    assert_eq!(other.shared_samples_taken(), 200);
    assert_eq!(own.shared_samples_taken(), 200);
    assert_eq!(other.decode_errors() + own.decode_errors(), 0);
}

/// Instances and keep-last replacement work on shared samples as on serialized ones: the
/// newest value per instance, and a dispose's instance state.
#[test]
fn instances_of_shared_samples_keep_their_lifecycle() {
    tachyon_transport::testing::require_isolated_network();
    let (a, b) = (participant(21, true), participant(21, true));
    let w = writer::<Note>(&a, DataWriterQos::default().reliable().keep_all());
    let r = reader::<Note>(&b, DataReaderQos::default().reliable().keep_last(1));
    wait_matched(&w, &r);
    for n in 0..30 {
        w.write(&note(n)).expect("write");
    }
    w.dispose(&note(0)).expect("dispose"); // instance 0
    wait_until("every change arrived", || {
        w.wait_for_acknowledgments(std::time::Duration::from_millis(10))
            .is_ok()
    });
    let got = r.take(100).expect("take");
    let mut alive: Vec<Note> = got.iter().filter_map(|s| s.data.clone()).collect();
    alive.sort_by_key(|s| s.id);
    assert_eq!(
        alive,
        vec![note(27), note(28), note(29)],
        "the newest of each"
    );
    for s in &got {
        let disposed = s.info.instance_state == InstanceState::NotAliveDisposed;
        let of_0 = s.data.as_ref().map_or(true, |d| d.id == 0);
        assert_eq!(
            disposed, of_0,
            "instance 0 disposed, the others alive: {s:?}"
        );
    }
    assert!(w.shared_samples_written() >= 30);
    assert!(r.shared_samples_taken() >= 2);
}

/// A reader of another Rust type (same IDL type) makes the writer serialize from then on;
/// when it goes, sharing resumes. Both readers get everything.
#[test]
fn a_reader_of_another_rust_type_gets_serialized_samples() {
    tachyon_transport::testing::require_isolated_network();
    let (a, b) = (participant(22, true), participant(22, true));
    let qos = || DataReaderQos::default().reliable().keep_all();
    let w = writer::<Note>(&a, DataWriterQos::default().reliable().keep_all());
    let same = reader::<Note>(&b, qos());
    wait_matched(&w, &same);
    let first: Vec<Note> = (0..20).map(note).collect();
    for s in &first {
        w.write(s).expect("write");
    }
    assert_eq!(got(&w, &same, 20, |s| s.n), first);
    assert_eq!(w.shared_samples_written(), 20);

    let other = reader::<OtherNote>(&b, qos());
    let plain = reader::<PlainNote>(&b, qos());
    wait_matched(&w, &other);
    wait_matched(&w, &plain);
    let second: Vec<Note> = (20..60).map(note).collect();
    for s in &second {
        w.write(s).expect("write");
    }
    assert_eq!(got(&w, &same, 40, |s| s.n), second);
    let as_other: Vec<Note> = got(&w, &other, 40, |s| s.n)
        .into_iter()
        .map(|o| Note {
            id: o.id,
            n: o.n,
            text: o.text,
        })
        .collect();
    assert_eq!(as_other, second);
    assert_eq!(got(&w, &plain, 40, |s| s.n).len(), 40);
    assert_eq!(
        w.shared_samples_written(),
        20,
        "serialized while they were matched"
    );
    assert_eq!(other.shared_samples_taken(), 0);

    drop(other);
    drop(plain);
    wait_until("the others unmatched", || {
        w.matched_subscriptions() == vec![same.guid()]
    });
    for s in (60..70).map(note) {
        w.write(&s).expect("write");
    }
    assert_eq!(
        got(&w, &same, 10, |s| s.n),
        (60..70).map(note).collect::<Vec<_>>()
    );
    assert_eq!(w.shared_samples_written(), 30, "shared again");
}

/// A transient-local writer shares its samples while its only reader is in process; a
/// reader of a participant without the in-process transport (UDP) that joins later gets the
/// history, serialized then, identical.
#[test]
fn a_late_reader_over_udp_gets_the_shared_history_serialized() {
    tachyon_transport::testing::require_isolated_network();
    let (a, b) = (participant(23, true), participant(23, true));
    let wqos = DataWriterQos::default()
        .reliable()
        .keep_all()
        .transient_local();
    let rqos = || {
        DataReaderQos::default()
            .reliable()
            .keep_all()
            .transient_local()
    };
    let w = writer::<Note>(&a, wqos);
    let near = reader::<Note>(&b, rqos());
    wait_matched(&w, &near);
    let all: Vec<Note> = (0..50).map(note).collect();
    for s in &all {
        w.write(s).expect("write");
    }
    assert_eq!(got(&w, &near, 50, |s| s.n), all);
    assert_eq!(
        (w.shared_samples_written(), w.late_serializations()),
        (50, 0)
    );

    let c = participant(23, false);
    let far = reader::<Note>(&c, rqos());
    wait_matched(&w, &far);
    assert_eq!(got(&w, &far, 50, |s| s.n), all, "the history, in order");
    assert!(
        w.late_serializations() >= 50,
        "serialized for the UDP reader"
    );
    assert_eq!(far.shared_samples_taken(), 0);
    // New samples go serialized to both while the UDP reader is matched.
    w.write(&note(50)).expect("write");
    assert_eq!(got(&w, &near, 1, |s| s.n), vec![note(50)]);
    assert_eq!(got(&w, &far, 1, |s| s.n), vec![note(50)]);
    assert_eq!(w.shared_samples_written(), 50);
}

/// A content-filtered reader of the writer's type reads the writer's values as they are:
/// the filter (evaluated by the writer for the reader, and by the reader) serializes
/// nothing, and the reader gets exactly what passes.
#[test]
fn content_filters_read_shared_values_without_serializing() {
    tachyon_transport::testing::require_isolated_network();
    let (a, b) = (participant(24, true), participant(24, true));
    let w = writer::<Note>(&a, DataWriterQos::default().reliable().keep_all());
    let topic = b.create_topic::<Note>("notes").expect("topic");
    let cft = b
        .create_contentfilteredtopic("some notes", &topic, "id = 1 AND n < %0", &["90"])
        .expect("filtered topic");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&cft, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    wait_matched(&w, &r);
    for n in 0..120 {
        w.write(&note(n)).expect("write");
    }
    let want: Vec<Note> = (0..120)
        .map(note)
        .filter(|s| s.id == 1 && s.n < 90)
        .collect();
    assert_eq!(got(&w, &r, want.len(), |s| s.n), want);
    assert_eq!(w.shared_samples_written(), 120);
    assert_eq!(w.late_serializations(), 0, "the filters read the values");
    assert_eq!(r.shared_samples_taken(), want.len() as u64);
}
