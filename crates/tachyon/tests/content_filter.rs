//! Content-filtered topics between Tachyon participants over real UDP sockets on loopback
//! (inside the network namespace `scripts/test.sh` provides): the DDS SQL filter on the
//! reader (before its cache), on the writer (samples no reader wants are not sent), and
//! parameters changed while running.

mod common;

use common::{participants, take_all_written, wait_until, PATIENCE};
use tachyon::prelude::*;
use tachyon::{BuiltinTopicKey, FilterError};

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "ShapeType", appendable)]
struct ShapeType {
    #[dds(key, bound = 128)]
    color: String,
    x: i32,
    y: i32,
    shapesize: i32,
    additional_payload_size: Vec<u8>,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Inner")]
struct Inner {
    level: u16,
    label: String,
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Outer")]
struct Outer {
    #[key]
    id: u32,
    inner: Inner,
}

fn shape(color: &str, x: i32, size: i32) -> ShapeType {
    ShapeType {
        color: color.into(),
        x,
        y: 0,
        shapesize: size,
        additional_payload_size: vec![],
    }
}

fn reliable() -> DataReaderQos {
    DataReaderQos::default().reliable().keep_all()
}

#[test]
fn color_parameter_filters_on_the_writer_and_dispose_passes() {
    let (a, b) = participants(61);
    let ta = a.create_topic::<ShapeType>("Square").unwrap();
    let tb = b.create_topic::<ShapeType>("Square").unwrap();
    let cft = b
        .create_contentfilteredtopic("RedSquares", &tb, "color = %0", &["'RED'"])
        .unwrap();
    assert_eq!(cft.get_name(), "RedSquares");
    assert_eq!(cft.get_type_name(), "ShapeType");
    assert_eq!(cft.get_filter_expression(), "color = %0");
    assert_eq!(cft.get_expression_parameters(), ["'RED'"]);
    assert_eq!(cft.get_related_topic().name(), "Square");
    let reader = b
        .create_subscriber()
        .unwrap()
        .create_datareader(&cft, reliable())
        .unwrap();
    let writer = a
        .create_publisher()
        .unwrap()
        .create_datawriter(&ta, DataWriterQos::default().reliable().keep_all())
        .unwrap();
    // The reader announces the related topic's name, so the writer of "Square" matches it.
    wait_until("the match", || {
        writer.get_publication_matched_status().current_count == 1
            && reader.get_subscription_matched_status().current_count == 1
    });
    for (i, color) in ["BLUE", "RED", "GREEN", "RED", "YELLOW"].iter().enumerate() {
        writer.write(&shape(color, i as i32, 30)).unwrap();
    }
    let got = take_all_written(&writer, &reader, 2);
    let xs: Vec<(String, i32)> = got.iter().map(|s| (s.color.clone(), s.x)).collect();
    assert_eq!(xs, [("RED".to_owned(), 1), ("RED".to_owned(), 3)]);
    // The writer evaluated the reader's announced filter: three samples never left it.
    assert_eq!(writer.filtered_sample_count(), 3);
    assert_eq!(reader.filtered_sample_count(), 0);
    assert!(writer.wait_for_acknowledgments(PATIENCE).is_ok());

    // A dispose carries no data: it passes every filter.
    writer.dispose(&shape("RED", 0, 0)).unwrap();
    wait_until("the dispose", || {
        reader
            .take(10)
            .unwrap()
            .iter()
            .any(|s| s.data.is_none() && s.info.instance_state == InstanceState::NotAliveDisposed)
    });
}

#[test]
fn size_between_like_and_nested_members_filter_on_the_reader() {
    let (a, b) = participants(62);
    let ta = a.create_topic::<ShapeType>("Circle").unwrap();
    let tb = b.create_topic::<ShapeType>("Circle").unwrap();
    let sub = b.create_subscriber().unwrap();
    let small = b
        .create_contentfilteredtopic("small", &tb, "shapesize <= 20", &[] as &[&str])
        .unwrap();
    let between = b
        .create_contentfilteredtopic("between", &tb, "x NOT BETWEEN %0 AND %1", &["10", "20"])
        .unwrap();
    let like = b
        .create_contentfilteredtopic(
            "like",
            &tb,
            "color LIKE 'B%' OR color MATCH 'G*N'",
            &[] as &[&str],
        )
        .unwrap();
    let r_small = sub.create_datareader(&small, reliable()).unwrap();
    let r_between = sub.create_datareader(&between, reliable()).unwrap();
    let r_like = sub.create_datareader(&like, reliable()).unwrap();
    let r_all = sub.create_datareader(&tb, reliable()).unwrap();
    let writer = a
        .create_publisher()
        .unwrap()
        .create_datawriter(&ta, DataWriterQos::default().reliable().keep_all())
        .unwrap();
    // Both sides: a reader that learns of the writer after its data arrived gets it repaired
    // (and refused samples as GAPs, which the writer counts as filtered).
    wait_until("the matches", || {
        writer.get_publication_matched_status().current_count == 4
            && [&r_small, &r_between, &r_like, &r_all]
                .iter()
                .all(|r| r.get_subscription_matched_status().current_count == 1)
    });
    let samples = [
        shape("BLUE", 5, 10),
        shape("RED", 15, 30),
        shape("GREEN", 25, 20),
        shape("BLACK", 12, 21),
        shape("GOLDEN", 30, 40),
    ];
    for s in &samples {
        writer.write(s).unwrap();
    }
    assert_eq!(take_all_written(&writer, &r_all, 5).len(), 5);
    // Samples come grouped by instance: compare sorted.
    let colors = |v: Vec<ShapeType>| {
        let mut c: Vec<String> = v.into_iter().map(|s| s.color).collect();
        c.sort();
        c
    };
    assert_eq!(
        colors(take_all_written(&writer, &r_small, 2)),
        ["BLUE", "GREEN"]
    );
    assert_eq!(
        colors(take_all_written(&writer, &r_between, 3)),
        ["BLUE", "GOLDEN", "GREEN"]
    );
    assert_eq!(
        colors(take_all_written(&writer, &r_like, 4)),
        ["BLACK", "BLUE", "GOLDEN", "GREEN"]
    );
    // A plain reader shares the destination: the writer sends everything, readers filter.
    assert_eq!(writer.filtered_sample_count(), 0);
    assert_eq!(r_small.filtered_sample_count(), 3);

    // Nested members.
    let to = a.create_topic::<Outer>("outer").unwrap();
    let tob = b.create_topic::<Outer>("outer").unwrap();
    let nested = b
        .create_contentfilteredtopic(
            "nested",
            &tob,
            "inner.level > %0 AND inner.label <> 'skip'",
            &["2"],
        )
        .unwrap();
    let r_nested = sub.create_datareader(&nested, reliable()).unwrap();
    let w_outer = a
        .create_publisher()
        .unwrap()
        .create_datawriter(&to, DataWriterQos::default().reliable())
        .unwrap();
    wait_until("the nested match", || {
        w_outer.get_publication_matched_status().current_count == 1
            && r_nested.get_subscription_matched_status().current_count == 1
    });
    for (id, level, label) in [(1, 1, "a"), (2, 3, "b"), (3, 5, "skip"), (4, 9, "c")] {
        let inner = Inner {
            level,
            label: label.into(),
        };
        w_outer.write(&Outer { id, inner }).unwrap();
    }
    let mut ids: Vec<u32> = take_all_written(&w_outer, &r_nested, 2)
        .into_iter()
        .map(|o| o.id)
        .collect();
    ids.sort();
    assert_eq!(ids, [2, 4]);
}

#[test]
fn new_parameters_change_what_arrives() {
    let (a, b) = participants(63);
    let ta = a.create_topic::<ShapeType>("Triangle").unwrap();
    let tb = b.create_topic::<ShapeType>("Triangle").unwrap();
    let cft = b
        .create_contentfilteredtopic("cft", &tb, "color = %0", &["RED"])
        .unwrap();
    let reader = b
        .create_subscriber()
        .unwrap()
        .create_datareader(&cft, reliable())
        .unwrap();
    let writer = a
        .create_publisher()
        .unwrap()
        .create_datawriter(&ta, DataWriterQos::default().reliable().keep_all())
        .unwrap();
    wait_until("the match", || {
        writer.get_publication_matched_status().current_count == 1
            && reader.get_subscription_matched_status().current_count == 1
    });
    // The writer's participant puts each announcement of the reader on its DCPSSubscription
    // reader once it applied it (filter parameters included): take the first one, so that
    // the next one is the re-announcement.
    let announcements = a.builtin_subscriptions_reader();
    let key = BuiltinTopicKey(reader.guid());
    let mut announced = || {
        announcements
            .take(usize::MAX)
            .unwrap()
            .iter()
            .any(|s| s.data.as_ref().is_some_and(|d| d.key == key))
    };
    wait_until("the reader's announcement", &mut announced);
    writer.write(&shape("RED", 1, 1)).unwrap();
    writer.write(&shape("BLUE", 2, 1)).unwrap();
    assert_eq!(take_all_written(&writer, &reader, 1), [shape("RED", 1, 1)]);

    // A parameter that does not fit is refused, and nothing changes.
    assert!(matches!(
        cft.set_expression_parameters(&[] as &[&str]),
        Err(Error::Filter(FilterError::MissingParameter {
            index: 0,
            ..
        }))
    ));
    assert_eq!(cft.get_expression_parameters(), ["RED"]);

    cft.set_expression_parameters(&["'BLUE'"]).unwrap();
    assert_eq!(cft.get_expression_parameters(), ["'BLUE'"]);
    // The reader applies the new parameters at once, the writer once the re-announcement
    // reached its participant.
    wait_until("the re-announcement with the new parameters", announced);
    writer.write(&shape("RED", 3, 1)).unwrap();
    writer.write(&shape("BLUE", 4, 1)).unwrap();
    assert_eq!(take_all_written(&writer, &reader, 1), [shape("BLUE", 4, 1)]);
}

#[test]
fn keep_last_one_keeps_the_last_matching_sample() {
    let (a, b) = participants(64);
    let c = DomainParticipant::new(64).unwrap();
    let ta = a.create_topic::<ShapeType>("Square").unwrap();
    let tb = b.create_topic::<ShapeType>("Square").unwrap();
    let tc = c.create_topic::<ShapeType>("Square").unwrap();
    let cft = b
        .create_contentfilteredtopic("small", &tb, "shapesize <= 20", &[] as &[&str])
        .unwrap();
    let reader = b
        .create_subscriber()
        .unwrap()
        .create_datareader(&cft, DataReaderQos::default().reliable().keep_last(1))
        .unwrap();
    // A reader without filter elsewhere: the writer sends everything, so the filtered
    // reader decides alone.
    let plain = c
        .create_subscriber()
        .unwrap()
        .create_datareader(&tc, reliable())
        .unwrap();
    let writer = a
        .create_publisher()
        .unwrap()
        .create_datawriter(&ta, DataWriterQos::default().reliable().keep_all())
        .unwrap();
    // Both sides: a filtered reader that learns of the writer late gets refused samples as
    // GAPs from the writer's repairs, never seeing (and counting) them itself.
    wait_until("the matches", || {
        writer.get_publication_matched_status().current_count == 2
            && reader.get_subscription_matched_status().current_count == 1
            && plain.get_subscription_matched_status().current_count == 1
    });
    for size in [10, 30, 15, 40, 50] {
        writer.write(&shape("RED", size, size)).unwrap();
    }
    assert_eq!(take_all_written(&writer, &plain, 5).len(), 5);
    // Every sample reached the filtered reader's cache or was refused: by the reader itself
    // (counted), or, for a sample its first DATA missed, by the writer's repair (a GAP, not
    // counted by the reader), which a loaded machine makes happen now and then.
    writer
        .wait_for_acknowledgments(PATIENCE)
        .expect("every reader acknowledged every sample");
    assert!(reader.filtered_sample_count() <= 3);
    let got: Vec<i32> = reader
        .read(10)
        .unwrap()
        .into_iter()
        .filter_map(|s| s.data.map(|d| d.shapesize))
        .collect();
    assert_eq!(
        got,
        [15],
        "the last sample that matched, not the last one written"
    );
}

#[test]
fn refused_expressions_name_the_column() {
    tachyon_transport::testing::require_isolated_network();
    let p = DomainParticipant::new(65).unwrap();
    let t = p.create_topic::<ShapeType>("Square").unwrap();
    let column =
        |expr: &str, params: &[&str]| match p.create_contentfilteredtopic("c", &t, expr, params) {
            Err(Error::Filter(e)) => (e.column(), e.to_string()),
            other => panic!("{expr}: {other:?}"),
        };
    let (col, msg) = column("color = = 'RED'", &[]);
    assert_eq!(col, Some(9));
    assert!(
        msg.contains("expected a member name, a value or a parameter"),
        "{msg}"
    );
    let (col, msg) = column("x > 1 AND colour = 'RED'", &[]);
    assert_eq!(col, Some(11));
    assert!(msg.contains("`colour` is not a member"), "{msg}");
    assert!(
        msg.contains("color, x, y, shapesize, additional_payload_size"),
        "{msg}"
    );
    let (col, msg) = column("shapesize < %1", &["1"]);
    assert_eq!(col, Some(13));
    assert!(msg.contains("%1"), "{msg}");
    let (col, _) = column("additional_payload_size = 1", &[]);
    assert_eq!(col, Some(1));
    let (col, _) = column("shapesize = 'big'", &[]);
    assert_eq!(col, Some(13));
    assert!(matches!(
        p.create_contentfilteredtopic("c", &t, "shapesize = %0", &["big"]),
        Err(Error::Filter(FilterError::BadParameter { index: 0, .. }))
    ));
}
