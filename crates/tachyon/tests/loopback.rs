//! Two participants of one process exchanging data: through the in-process transport by
//! default, and over real UDP sockets on loopback when `scripts/test.sh` runs this crate's
//! tests again with `[transports] intra = false` (inside the isolated network namespace it
//! provides).

mod common;

use std::time::Instant;

use common::{participants, wait_incompatible, wait_matched, wait_until, PATIENCE};
use tachyon::prelude::*;
use tachyon::InstanceState;

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Keyed")]
struct Keyed {
    #[key]
    id: u32,
    seq: u64,
    payload: Vec<u8>,
}

#[test]
fn reliable_keyed_topic_with_dispose_between_two_participants() {
    let (a, b) = participants(7);
    assert_ne!(a.participant_index(), b.participant_index());
    let (w, r) = common::reliable_pair::<Keyed>(&a, &b, "keyed");
    let started = Instant::now();
    wait_matched(&w, &r);
    eprintln!("matched both ways after {:?}", started.elapsed());
    let n = 200u64;
    for i in 0..n {
        let s = Keyed {
            id: (i % 4) as u32,
            seq: i,
            payload: vec![i as u8; 100 + (i as usize % 3000)],
        };
        w.write(&s).expect("write");
    }
    w.dispose(&Keyed {
        id: 1,
        seq: 0,
        payload: vec![],
    })
    .expect("dispose");
    w.wait_for_acknowledgments(PATIENCE).expect("acknowledged");
    let mut got = Vec::new();
    let mut disposed = false;
    wait_until("all samples", || {
        for s in r.take(usize::MAX).expect("take") {
            // The dispose shows as the instance state of its samples, or of an invalid-data
            // sample when none of the instance's samples is left.
            disposed |= s.info.instance_state == InstanceState::NotAliveDisposed;
            if let Some(k) = s.data {
                got.push(k);
            }
        }
        got.len() == n as usize && disposed
    });
    // Samples come grouped by instance; within an instance, in writing order.
    for id in 0..4u32 {
        let seqs: Vec<u64> = got.iter().filter(|k| k.id == id).map(|k| k.seq).collect();
        let want: Vec<u64> = (0..n).filter(|i| i % 4 == u64::from(id)).collect();
        assert_eq!(seqs, want, "instance {id}: every sample, in order");
    }
    for k in &got {
        assert_eq!(k.payload.len(), 100 + (k.seq as usize % 3000), "intact");
    }
    assert_eq!(r.decode_errors(), 0);
    let matched = w.get_publication_matched_status();
    assert_eq!(matched.current_count, 1);
    assert_eq!(matched.total_count, 1);
}

#[test]
fn incompatible_qos_is_reported_on_both_sides() {
    let (a, b) = participants(8);
    let ta = a.create_topic::<Keyed>("keyed").expect("topic");
    let tb = b.create_topic::<Keyed>("keyed").expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&ta, DataWriterQos::default().best_effort())
        .expect("writer");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tb, DataReaderQos::default().reliable())
        .expect("reader");
    let (offered, requested) = wait_incompatible(&w, &r);
    let policy = Some(tachyon::qos::QosPolicyId::Reliability);
    assert_eq!(offered.last_policy_id, policy);
    assert_eq!(requested.last_policy_id, policy);
    assert!(offered.total_count_change > 0 && requested.total_count_change > 0);
    assert_eq!(
        w.get_offered_incompatible_qos_status().total_count_change,
        0
    );
    assert!(w.matched_subscriptions().is_empty());
}

/// `take_into` replaces the vector's contents with the taken samples, dispose included, and
/// decodes into the values it held: an octet buffer that fits is reused, not allocated anew.
#[test]
fn take_into_replaces_the_samples_and_reuses_their_buffers() {
    #[derive(DdsType, Debug, Clone, PartialEq)]
    #[dds(name = "test::Flat", final)]
    struct Flat {
        #[key]
        id: u32,
        payload: Vec<u8>,
    }
    let one = |id: u32, n| Flat {
        id,
        payload: vec![id as u8; n],
    };
    let (a, b) = participants(0);
    let (w, r) = common::reliable_pair::<Flat>(&a, &b, "take_into");
    wait_matched(&w, &r);
    // Written and acknowledged: in the reader's cache, so one take gets them all.
    let settle = || {
        w.wait_for_acknowledgments(common::PATIENCE)
            .expect("acknowledged")
    };
    w.write(&one(1, 4000)).expect("write");
    w.write(&one(2, 4000)).expect("write");
    settle();
    let mut samples = Vec::new();
    assert_eq!(r.take_into(&mut samples, usize::MAX).expect("take_into"), 2);
    let data = |s: &Vec<Sample<Flat>>| s.iter().map(|s| s.data.clone()).collect::<Vec<_>>();
    assert_eq!(data(&samples), vec![Some(one(1, 4000)), Some(one(2, 4000))]);
    let first = samples[0].data.as_ref().expect("data").payload.as_ptr();

    w.write(&one(3, 1000)).expect("write");
    settle();
    assert_eq!(r.take_into(&mut samples, usize::MAX).expect("take_into"), 1);
    assert_eq!(data(&samples), vec![Some(one(3, 1000))]);
    let reused = samples[0].data.as_ref().expect("data").payload.as_ptr();
    assert_eq!(
        reused, first,
        "decoded into the first take's 4000-octet buffer"
    );

    w.dispose(&one(2, 0)).expect("dispose");
    settle();
    assert_eq!(r.take_into(&mut samples, usize::MAX).expect("take_into"), 1);
    assert!(samples[0].data.is_none());
    assert_eq!(
        samples[0].info.instance_state,
        InstanceState::NotAliveDisposed
    );
    assert_eq!(r.take_into(&mut samples, usize::MAX).expect("take_into"), 0);
    assert!(samples.is_empty());
}

/// A RELIABLE KEEP_ALL reader whose RESOURCE_LIMITS hold 4 samples: the writer's 40 samples
/// stop at the full cache (held back, not acknowledged), and each take that makes room lets
/// the next ones in: every sample arrives once, in order.
#[test]
fn a_full_reader_cache_resumes_when_taken() {
    let (a, b) = participants(13);
    let ta = a.create_topic::<Keyed>("limited").expect("topic");
    let tb = b.create_topic::<Keyed>("limited").expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&ta, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    let r = common::limited_reader(&b, &tb, 4);
    wait_matched(&w, &r);
    let n = 40u64;
    for seq in 0..n {
        let s = Keyed {
            id: 1,
            seq,
            payload: vec![0; 16],
        };
        w.write(&s).expect("write");
    }
    let got = common::take_two_at_a_time(&r, n as usize, |k| k.seq);
    assert_eq!(got, (0..n).collect::<Vec<_>>());
    w.wait_for_acknowledgments(PATIENCE)
        .expect("all acknowledged");
}

/// Answers nothing: it only owns a writer of the reader's participant (as a pong's listener
/// does).
struct OwnsWriter(#[allow(dead_code)] DataWriter<Keyed>);

impl tachyon::DataReaderListener<Keyed> for OwnsWriter {}

/// Deleting a reader (or replacing its listener) drops a listener that owns a writer of the
/// same participant; that writer's deletion locks the participant's state, so the listener is
/// dropped after the state's lock is released (it deadlocked before).
#[test]
fn a_listener_owning_a_writer_of_its_participant_can_be_dropped() {
    let (a, _b) = participants(12);
    let topic = a.create_topic::<Keyed>("owned").expect("topic");
    let publisher = a.create_publisher().expect("publisher");
    let subscriber = a.create_subscriber().expect("subscriber");
    let listener = |w| Some(std::sync::Arc::new(OwnsWriter(w)) as std::sync::Arc<_>);
    let r = subscriber
        .create_datareader(&topic, DataReaderQos::default())
        .expect("reader");
    let w1 = publisher
        .create_datawriter(&topic, DataWriterQos::default())
        .expect("writer");
    r.set_listener(listener(w1), tachyon::StatusMask::DATA_AVAILABLE);
    let w2 = publisher
        .create_datawriter(&topic, DataWriterQos::default())
        .expect("writer");
    // Replacing the listener drops the first one, and its writer.
    r.set_listener(listener(w2), tachyon::StatusMask::DATA_AVAILABLE);
    // Deleting the reader drops the second.
    drop(r);
    let w3 = publisher
        .create_datawriter(&topic, DataWriterQos::default())
        .expect("the participant still serves");
    w3.write(&Keyed {
        id: 0,
        seq: 0,
        payload: Vec::new(),
    })
    .expect("write");
}

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Counted")]
struct Counted {
    seq: u64,
    text: String,
}

/// Samples whose data does not decode as the reader's type (here: DATA sent in the name of
/// the matched writer, carrying a CDR header and one byte where a `Counted` needs at least
/// twelve) are counted and passed over: `take_next_sample` returns the next sample that
/// decodes, and a take of every sample returns only those.
#[test]
fn samples_that_do_not_decode_are_counted_and_passed_over() {
    use std::net::{Ipv4Addr, SocketAddr, UdpSocket};
    use tachyon_transport::PortMapping;
    use tachyon_wire::{
        DataSpec, EntityId, Header, MessageBuilder, PayloadKind, ProtocolVersion, SequenceNumber,
        VendorId,
    };

    const DOMAIN: u32 = 14;
    let (a, b) = participants(DOMAIN);
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &a.create_topic::<Counted>("counted").expect("topic"),
            DataWriterQos::default().best_effort().keep_all(),
        )
        .expect("writer");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &b.create_topic::<Counted>("counted").expect("topic"),
            DataReaderQos::default().best_effort().keep_all(),
        )
        .expect("reader");
    wait_matched(&w, &r);

    // Sequence numbers 1 and 2 of the writer, before it writes: its own 1 and 2 then come
    // too late for a best-effort reader, its 3 and on are taken.
    let writer = w.guid();
    let mut buf = vec![0u8; 1024];
    let header = Header {
        protocol_version: ProtocolVersion::V2_5,
        vendor_id: VendorId([0x01, 0x99]),
        guid_prefix: writer.prefix,
    };
    let mut mb = MessageBuilder::new(&mut buf, &header).expect("header fits");
    for sn in [1, 2] {
        mb.data(&DataSpec {
            reader_id: EntityId::UNKNOWN,
            writer_id: writer.entity_id,
            writer_sn: SequenceNumber(sn),
            inline_qos: None,
            kind: PayloadKind::Data,
            payload: &[0x00, 0x01, 0x00, 0x00, 0x2a],
        })
        .expect("DATA fits");
    }
    let n = mb.finish();
    let index = b.participant_index().expect("an indexed participant");
    let port = PortMapping::default()
        .user_unicast(DOMAIN, index)
        .expect("port");
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).expect("socket");
    socket
        .send_to(&buf[..n], SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
        .expect("sent");
    wait_until("the undecodable samples arrived", || {
        r.get_status_changes().contains(StatusMask::DATA_AVAILABLE)
    });

    for seq in 0..5 {
        w.write(&Counted {
            seq,
            text: format!("sample {seq}"),
        })
        .expect("write");
    }
    let mut value = Counted {
        seq: 99,
        text: String::new(),
    };
    let mut taken = Vec::new();
    wait_until("the writer's last three samples", || {
        while let Some(info) = r.take_next_sample(&mut value).expect("take") {
            assert!(info.valid_data);
            taken.push(value.seq);
        }
        taken.len() >= 3
    });
    assert_eq!(taken, [2, 3, 4]);
    assert_eq!(value.text, "sample 4");
    assert_eq!(r.decode_errors(), 2, "both undecodable samples counted");
    assert!(r.take(10).expect("take").is_empty());
}
