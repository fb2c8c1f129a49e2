//! Polling a reader: `take_into` in a loop. A take of every sample that found the reader's
//! cache empty does not lock the participant again until something arrived for a reader of
//! its subscriber (its DATA_AVAILABLE count moved): these tests check that nothing is missed
//! and that every status a take resets is reset as before. (In process the sample is there
//! when `write` returns; `scripts/test.sh` runs this file again over shared memory and UDP,
//! where it arrives a moment later: the tests poll until a deadline.)

mod common;

use std::time::{Duration, Instant};

use common::{participants, wait_matched, PATIENCE};
use tachyon::prelude::*;

#[derive(DdsType, Debug, Clone, PartialEq, Default)]
#[dds(name = "test::Polled")]
struct Polled {
    #[key]
    id: u32,
    n: u64,
}

/// Polls `reader` with `take_into` until it returns samples (or PATIENCE passed).
fn poll(reader: &DataReader<Polled>, into: &mut Vec<Sample<Polled>>) -> usize {
    let deadline = Instant::now() + PATIENCE;
    loop {
        let n = reader.take_into(into, usize::MAX).expect("take");
        if n > 0 || Instant::now() >= deadline {
            return n;
        }
    }
}

/// Polls `reader` empty `times` times (each finds nothing).
fn poll_empty(reader: &DataReader<Polled>, into: &mut Vec<Sample<Polled>>, times: usize) {
    for _ in 0..times {
        assert_eq!(reader.take_into(into, usize::MAX).expect("take"), 0);
        assert!(into.is_empty());
    }
}

#[test]
fn a_polled_reader_gets_every_sample_and_every_instance_change() {
    let (a, b) = participants(141);
    let topic = a.create_topic::<Polled>("polled").expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&topic, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &b.create_topic::<Polled>("polled").expect("topic"),
            DataReaderQos::default().reliable().keep_all(),
        )
        .expect("reader");
    wait_matched(&w, &r);
    let mut got = Vec::new();
    poll_empty(&r, &mut got, 100);
    for n in 0..200u64 {
        w.write(&Polled { id: 1, n }).expect("write");
        let mut seen = Vec::new();
        while seen.is_empty() {
            assert!(poll(&r, &mut got) > 0, "sample {n} never came");
            seen.extend(got.iter().filter_map(|s| s.data.as_ref().map(|d| d.n)));
        }
        assert_eq!(seen, vec![n], "in order, once each");
        poll_empty(&r, &mut got, 10);
    }
    // A dispose brings no data, only the instance's new state: polled like a sample.
    w.dispose(&Polled { id: 1, n: 0 }).expect("dispose");
    assert_eq!(poll(&r, &mut got), 1, "the dispose never came");
    assert!(!got[0].info.valid_data);
    assert_eq!(got[0].info.instance_state, InstanceState::NotAliveDisposed);
    poll_empty(&r, &mut got, 10);
    // A take of no sample at all says nothing of the cache: the next one finds the sample.
    w.write(&Polled { id: 2, n: 7 }).expect("write");
    let deadline = Instant::now() + PATIENCE;
    while r.get_status_changes().is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(r.take_into(&mut got, 0).expect("take of none"), 0);
    assert_eq!(poll(&r, &mut got), 1);
    assert_eq!(got[0].data, Some(Polled { id: 2, n: 7 }));
}

/// A take on any reader of a subscriber resets the subscriber's DATA_ON_READERS, even one
/// that finds its own cache empty while the data went to another reader.
#[test]
fn an_empty_take_still_resets_its_subscribers_data_on_readers() {
    let (a, b) = participants(142);
    let publisher = a.create_publisher().expect("publisher");
    let subscriber = b.create_subscriber().expect("subscriber");
    let qos = || DataReaderQos::default().reliable().keep_all();
    let (wa, wb) = (
        publisher
            .create_datawriter(
                &a.create_topic::<Polled>("polled-a").expect("topic"),
                DataWriterQos::default().reliable().keep_all(),
            )
            .expect("writer a"),
        publisher
            .create_datawriter(
                &a.create_topic::<Polled>("polled-b").expect("topic"),
                DataWriterQos::default().reliable().keep_all(),
            )
            .expect("writer b"),
    );
    let ra = subscriber
        .create_datareader(&b.create_topic::<Polled>("polled-a").expect("topic"), qos())
        .expect("reader a");
    let rb = subscriber
        .create_datareader(&b.create_topic::<Polled>("polled-b").expect("topic"), qos())
        .expect("reader b");
    wait_matched(&wa, &ra);
    wait_matched(&wb, &rb);
    let mut got = Vec::new();
    poll_empty(&ra, &mut got, 10);
    for n in 0..20 {
        wb.write(&Polled { id: 3, n }).expect("write");
        common::wait_until("DATA_ON_READERS", || {
            subscriber
                .get_status_changes()
                .contains(StatusMask::DATA_ON_READERS)
        });
        // Reader a has nothing, and had nothing the last time it was taken from.
        poll_empty(&ra, &mut got, 1);
        assert!(
            !subscriber
                .get_status_changes()
                .contains(StatusMask::DATA_ON_READERS),
            "a take on reader a resets the subscriber's DATA_ON_READERS"
        );
        assert!(rb.get_status_changes().contains(StatusMask::DATA_AVAILABLE));
        assert_eq!(common::take_data(&rb), vec![Polled { id: 3, n }]);
        // And reader a still sees its own writer's next sample.
        wa.write(&Polled { id: 4, n }).expect("write");
        assert_eq!(poll(&ra, &mut got), 1, "reader a's sample {n}");
        poll_empty(&ra, &mut got, 1);
    }
}
