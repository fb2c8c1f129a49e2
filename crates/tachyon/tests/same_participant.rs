//! A writer and readers of one participant: the participant hands each new sample to its own
//! readers directly, as it is written (`tachyon_proto` `writer/direct.rs`), with no DATA built
//! or parsed. The QoS must behave as on the network: these tests put the cases where the
//! direct path must fall back on the protocol (a full reader cache, a late joiner, a reader
//! of another participant at the same time) and the reader's own timers (a deadline started
//! by a handed-over sample) through it. (Every other test file with a writer and a reader of
//! one participant runs over it too.)

mod common;

use std::time::{Duration, Instant};

use common::{take_at_least, wait_matched, wait_until, PATIENCE};
use tachyon::prelude::*;

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Direct")]
struct Direct {
    #[dds(key)]
    id: u32,
    seq: u64,
}

fn one(domain: u32) -> DomainParticipant {
    tachyon_transport::testing::require_isolated_network();
    DomainParticipant::new(domain).expect("participant")
}

fn sample(seq: u64) -> Direct {
    Direct { id: 1, seq }
}

/// A reliable KEEP_ALL reader of the writer's participant whose cache holds 4 samples: it
/// refuses what does not fit (not acknowledged), the writer repairs it once takes make room
/// (a DATA through the participant's own locator), and every one of 40 samples arrives once,
/// in order, all acknowledged. The 40 were handed over directly at least once each.
#[test]
fn a_full_cache_of_a_reader_served_directly_is_repaired() {
    let p = one(90);
    let topic = p.create_topic::<Direct>("full").expect("topic");
    let w = p
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&topic, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    let r = common::limited_reader(&p, &topic, 4);
    wait_matched(&w, &r);
    let n = 40u64;
    for seq in 0..n {
        w.write(&sample(seq)).expect("write");
    }
    assert_eq!(
        w.direct_deliveries(),
        n,
        "each handed over as it was written"
    );
    let got = common::take_two_at_a_time(&r, n as usize, |d| d.seq);
    assert_eq!(got, (0..n).collect::<Vec<_>>());
    w.wait_for_acknowledgments(PATIENCE)
        .expect("all acknowledged");
}

/// A requested deadline starts with the first sample handed over: with nothing written after
/// it, the reader reports the missed deadline within a few periods.
#[test]
fn a_deadline_started_by_a_sample_served_directly_is_missed_on_time() {
    let p = one(91);
    let topic = p.create_topic::<Direct>("deadline").expect("topic");
    let period = Duration::from_millis(50);
    let w = p
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&topic, DataWriterQos::default().reliable().deadline(period))
        .expect("writer");
    let r = p
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&topic, DataReaderQos::default().reliable().deadline(period))
        .expect("reader");
    wait_matched(&w, &r);
    // The reader follows no instance yet: nothing can be missed before the write.
    let written = Instant::now();
    w.write(&sample(0)).expect("write");
    wait_until("the requested deadline missed", || {
        r.get_requested_deadline_missed_status().total_count > 0
    });
    // A period is 50 ms; the driver's other timers (announcements, leases) are seconds
    // apart, so a reader timer nobody armed would show up as a second or more.
    let took = written.elapsed();
    assert!(
        took < Duration::from_millis(900),
        "the missed deadline was reported {took:?} after the write"
    );
}

/// A transient-local writer's history reaches a reader of its participant created after the
/// samples were written (through the protocol: heartbeat, request, repairs), and the samples
/// written after that are handed over directly; all in order, once.
#[test]
fn a_late_reader_of_the_participant_gets_the_history_then_direct_samples() {
    let p = one(92);
    let topic = p.create_topic::<Direct>("late").expect("topic");
    let w = p
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &topic,
            DataWriterQos::default()
                .reliable()
                .keep_all()
                .transient_local(),
        )
        .expect("writer");
    for seq in 0..10 {
        w.write(&sample(seq)).expect("write");
    }
    let r = p
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &topic,
            DataReaderQos::default()
                .reliable()
                .keep_all()
                .transient_local(),
        )
        .expect("reader");
    wait_matched(&w, &r);
    for seq in 10..20 {
        w.write(&sample(seq)).expect("write");
    }
    let got: Vec<u64> = take_at_least(&r, 20).into_iter().map(|d| d.seq).collect();
    assert_eq!(got, (0..20).collect::<Vec<_>>());
    assert_eq!(
        w.direct_deliveries(),
        10,
        "only those written after the match"
    );
    w.wait_for_acknowledgments(PATIENCE)
        .expect("all acknowledged");
}

/// One writer, a reader of its participant (handed over directly) and one of another
/// participant (DATA through a transport), both reliable: each gets everything, each
/// instance in order, disposes included, and the writer's samples are all acknowledged.
#[test]
fn readers_served_directly_and_over_a_transport_at_once() {
    let (a, b) = common::participants(93);
    let ta = a.create_topic::<Direct>("mixed").expect("topic");
    let tb = b.create_topic::<Direct>("mixed").expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&ta, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    let rqos = || DataReaderQos::default().reliable().keep_all();
    let local = a
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&ta, rqos())
        .expect("local reader");
    let remote = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tb, rqos())
        .expect("remote reader");
    wait_matched(&w, &local);
    wait_matched(&w, &remote);
    let n = 100u64;
    for seq in 0..n {
        w.write(&Direct {
            id: (seq % 3) as u32,
            seq,
        })
        .expect("write");
    }
    w.dispose(&Direct { id: 2, seq: 0 }).expect("dispose");
    for r in [&local, &remote] {
        let (mut got, mut disposed) = (Vec::new(), false);
        let done = common::poll_until(PATIENCE, || {
            for s in r.take(usize::MAX).expect("take") {
                // The instance's samples still unread when the dispose came carry its state
                // (or, with none left, a sample without data does).
                disposed |= s.info.instance_state == InstanceState::NotAliveDisposed;
                got.extend(s.data);
            }
            got.len() >= n as usize && disposed
        });
        assert!(done, "{} of {n} samples, disposed: {disposed}", got.len());
        // A take returns instance by instance: each instance's samples in order.
        for id in 0..3u32 {
            let of: Vec<u64> = got.iter().filter(|d| d.id == id).map(|d| d.seq).collect();
            let want: Vec<u64> = (0..n).filter(|s| s % 3 == u64::from(id)).collect();
            assert_eq!(of, want, "instance {id}");
        }
        assert_eq!(got.len(), n as usize);
    }
    w.wait_for_acknowledgments(PATIENCE)
        .expect("all acknowledged");
    assert_eq!(
        w.direct_deliveries(),
        n + 1,
        "the samples and the dispose, once each"
    );
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Block")]
struct Block {
    seq: u64,
    data: Vec<u8>,
}

/// Flow control with readers served directly: a reliable KEEP_ALL writer that writes 8 MiB
/// in 4 KiB samples waits for acknowledgements past 2 MiB unacknowledged
/// (`MAX_UNACKNOWLEDGED_BYTES`); the reader of its participant, taken from on another thread,
/// acknowledges through the heartbeats the writer asks with, and every sample arrives.
#[test]
fn flow_control_waits_for_the_acknowledgements_of_a_reader_served_directly() {
    let p = one(94);
    let topic = p.create_topic::<Block>("flow").expect("topic");
    let w = p
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&topic, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    let r = p
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&topic, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    wait_matched(&w, &r);
    let n = 2048u64;
    let taker = std::thread::scope(|s| {
        let taker = s.spawn(|| {
            let mut seqs = Vec::new();
            let end = Instant::now() + PATIENCE * 3;
            while seqs.len() < n as usize && Instant::now() < end {
                let taken = r.take(usize::MAX).expect("take");
                if taken.is_empty() {
                    std::thread::sleep(Duration::from_millis(1));
                }
                seqs.extend(taken.into_iter().filter_map(|s| s.data.map(|b| b.seq)));
            }
            seqs
        });
        for seq in 0..n {
            w.write(&Block {
                seq,
                data: vec![seq as u8; 4096],
            })
            .expect("write (blocked longer than max_blocking_time?)");
        }
        taker.join().expect("taker")
    });
    assert_eq!(taker, (0..n).collect::<Vec<_>>());
    w.wait_for_acknowledgments(PATIENCE)
        .expect("all acknowledged");
}
