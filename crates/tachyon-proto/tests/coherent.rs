//! Coherent sets between two sans-IO participants, datagram by datagram: what goes on the
//! wire (PID_COHERENT_SET, the end marker), a set held back until it ends, a set with a
//! sample the writer could no longer repair dropped whole, a publisher-wide set assembled
//! across two readers of one subscriber, and sets held while the subscriber's access is open.

use tachyon_cdr::KeyHash;
use tachyon_proto::history::coherent::{PID_COHERENT_SET, PID_TACHYON_COHERENT_GROUP};
use tachyon_proto::history::{
    Durability, History, Payload, Query, ReaderHistoryConfig, Sample, WriterHistoryConfig,
};
use tachyon_proto::qos::{AccessScope, Presentation};
use tachyon_proto::{
    Duration, Instant, Liveliness, Participant, ParticipantConfig, ReaderConfig, Reliability,
    RemoteReader, RemoteWriter, TxBuf, WriteRequest, WriterConfig,
};
use tachyon_wire::{
    EntityId, GuidPrefix, Locator, MessageView, SequenceNumber, SubmessageView, Time,
};

const PUBLISHER: EntityId = EntityId([0, 0, 0x40, 0x08]);
const SUBSCRIBER: EntityId = EntityId([0, 0, 0x41, 0x09]);

fn loc(n: u8) -> Locator {
    Locator::udp(([10, 0, 0, n], 7411).into())
}

fn key(k: u8) -> KeyHash {
    KeyHash([k; 16])
}

struct Net {
    a: Participant,
    b: Participant,
    writers: Vec<EntityId>,
    readers: Vec<EntityId>,
    now: Instant,
    buf: TxBuf,
}

/// Participant `a` has `n` writers in one publisher (writer `i` on topic `i`), `b` one
/// reader per writer in one coherent subscriber.
fn net(n: usize, scope: AccessScope, writer_history: History) -> Net {
    let mut a = Participant::new(GuidPrefix([1; 12]), ParticipantConfig::default());
    let mut b = Participant::new(GuidPrefix([2; 12]), ParticipantConfig::default());
    let presentation = Presentation {
        access_scope: scope,
        coherent_access: true,
        ordered_access: false,
    };
    let mut writers = Vec::new();
    let mut readers = Vec::new();
    for _ in 0..n {
        let w = a
            .create_writer(WriterConfig {
                keyed: true,
                history: WriterHistoryConfig {
                    history: writer_history,
                    durability: Durability::Volatile,
                    ..WriterHistoryConfig::default()
                },
                heartbeat_period: Duration::from_millis(10),
                coherent_sets: true,
                fragment_size: 1300,
                ..WriterConfig::default()
            })
            .expect("writer");
        let r = b
            .create_reader(ReaderConfig {
                reliability: Reliability::Reliable,
                keyed: true,
                history: ReaderHistoryConfig {
                    history: History::KeepAll,
                    ..ReaderHistoryConfig::default()
                },
                presentation,
                subscriber: SUBSCRIBER,
                ..ReaderConfig::default()
            })
            .expect("reader");
        let now = Instant::ZERO;
        a.match_reader(
            now,
            w,
            RemoteReader {
                guid: b.guid(r),
                unicast_locators: vec![loc(2)],
                multicast_locators: vec![],
                reliability: Reliability::Reliable,
                durability: Durability::Volatile,
            },
        )
        .expect("match reader");
        b.match_writer(
            now,
            r,
            RemoteWriter {
                guid: a.guid(w),
                unicast_locators: vec![loc(1)],
                reliability: Reliability::Reliable,
                durability: Durability::Volatile,
                liveliness: Liveliness::default(),
                ownership_strength: 0,
                lifespan: None,
                group: Some(PUBLISHER),
                vendor: tachyon_wire::VendorId::UNKNOWN,
            },
        )
        .expect("match writer");
        writers.push(w);
        readers.push(r);
    }
    let mut net = Net {
        a,
        b,
        writers,
        readers,
        now: Instant::ZERO,
        buf: TxBuf::new(65536),
    };
    // Let the readers' pre-emptive ACKNACKs and the writers' heartbeats settle.
    net.run(|_| true);
    net
}

impl Net {
    /// Moves datagrams both ways until both sides are quiet; `deliver` decides for each
    /// datagram from `a` whether it arrives.
    fn run(&mut self, mut deliver: impl FnMut(&[u8]) -> bool) {
        for _ in 0..1000 {
            let mut moved = false;
            while let Some(t) = self.a.poll_transmit(self.now, &mut self.buf) {
                moved = true;
                let bytes = self.buf.datagram(&t).to_vec();
                if deliver(&bytes) {
                    self.b.handle_datagram(self.now, &loc(1), &bytes);
                }
            }
            while let Some(t) = self.b.poll_transmit(self.now, &mut self.buf) {
                moved = true;
                let bytes = self.buf.datagram(&t).to_vec();
                self.a.handle_datagram(self.now, &loc(2), &bytes);
            }
            while self.a.poll_event().is_some() || self.b.poll_event().is_some() {}
            if !moved {
                let next = [self.a.poll_timeout(), self.b.poll_timeout()]
                    .into_iter()
                    .flatten()
                    .min();
                match next {
                    Some(t) if t <= self.now + Duration::from_millis(50) => {
                        self.now = self.now.max(t);
                        self.a.handle_timeout(self.now);
                        self.b.handle_timeout(self.now);
                    }
                    _ => return,
                }
            }
        }
        panic!("the network never went quiet");
    }

    /// Sends what `a` has due now, once, without timers; `deliver` decides what arrives.
    fn send_once(&mut self, mut deliver: impl FnMut(&[u8]) -> bool) {
        while let Some(t) = self.a.poll_transmit(self.now, &mut self.buf) {
            let bytes = self.buf.datagram(&t).to_vec();
            if deliver(&bytes) {
                self.b.handle_datagram(self.now, &loc(1), &bytes);
            }
        }
    }

    fn write(&mut self, w: usize, k: u8, v: u8) {
        let req = WriteRequest::data(key(k), Time::ZERO, Payload::from(vec![0, 1, 0, 0, v]));
        self.a.write(self.now, self.writers[w], req).expect("write");
    }

    fn begin(&mut self, group: bool) {
        let writers = self.writers.clone();
        self.a
            .begin_coherent_set(PUBLISHER, &writers, group)
            .expect("begin");
    }

    fn end(&mut self) {
        self.a.end_coherent_set(self.now, PUBLISHER).expect("end");
    }

    fn take(&mut self, r: usize) -> Vec<Sample> {
        let mut out = Vec::new();
        self.b
            .take(self.now, self.readers[r], &Query::ANY, &mut out)
            .expect("take");
        out
    }

    fn take_all(&mut self) -> usize {
        (0..self.readers.len()).map(|r| self.take(r).len()).sum()
    }
}

/// The writer's PID_COHERENT_SET values in a datagram, in order (`None` for a DATA without).
fn coherent_params(bytes: &[u8]) -> Vec<(SequenceNumber, Option<Vec<u8>>, bool)> {
    let msg = MessageView::new_checked(bytes).expect("message");
    msg.submessages()
        .filter_map(|s| match s.expect("submessage") {
            SubmessageView::Data(d) => {
                let q = d.inline_qos()?;
                let v = q.get(PID_COHERENT_SET)?.to_vec();
                let vendor = q.get(PID_TACHYON_COHERENT_GROUP).is_some();
                Some((d.writer_sn(), Some(v), vendor))
            }
            _ => None,
        })
        .collect()
}

#[test]
fn samples_carry_the_set_and_the_set_shows_only_once_ended() {
    let mut n = net(1, AccessScope::Topic, History::KeepAll);
    let mut seen = Vec::new();
    n.begin(false);
    for v in 0..3 {
        n.write(0, v, v);
    }
    n.run(|b| {
        seen.extend(coherent_params(b));
        true
    });
    assert_eq!(n.take_all(), 0, "nothing shows before the set ends");
    n.end();
    n.run(|b| {
        seen.extend(coherent_params(b));
        true
    });
    let first = [0u8, 0, 0, 0, 1, 0, 0, 0]; // SequenceNumber 1, little-endian
    let unknown = [0xffu8, 0xff, 0xff, 0xff, 0, 0, 0, 0];
    assert_eq!(seen.len(), 4, "{seen:?}");
    for (i, (sn, v, vendor)) in seen.iter().take(3).enumerate() {
        assert_eq!(sn.0, i as i64 + 1);
        assert_eq!(v.as_deref(), Some(&first[..]));
        assert!(!vendor);
    }
    assert_eq!(seen[3].0, SequenceNumber(4));
    assert_eq!(seen[3].1.as_deref(), Some(&unknown[..]));
    assert!(
        seen[3].2,
        "the end marker carries Tachyon's group parameter"
    );
    assert_eq!(n.take_all(), 3);
    let stats = n.b.reader_stats(n.readers[0]).expect("stats");
    assert_eq!(stats.coherent_sets, 1);
    assert_eq!(stats.malformed, 0);
}

#[test]
fn a_set_missing_a_sample_is_dropped_whole() {
    // KEEP_LAST(1): the lost first sample of instance 1 is replaced before it is repaired,
    // so the reader gets a GAP inside the set.
    let mut n = net(1, AccessScope::Topic, History::KeepLast(1));
    n.begin(false);
    n.write(0, 1, 1);
    n.send_once(|_| false);
    n.write(0, 1, 2);
    n.write(0, 2, 3);
    n.end();
    n.run(|_| true);
    assert_eq!(
        n.take_all(),
        0,
        "the set lost a sample: nothing of it shows"
    );
    let stats = n.b.reader_stats(n.readers[0]).expect("stats");
    assert_eq!(stats.coherent_sets_discarded, 1);

    n.begin(false);
    n.write(0, 3, 4);
    n.write(0, 4, 5);
    n.end();
    n.run(|_| true);
    assert_eq!(n.take_all(), 2, "the next set is whole");
}

#[test]
fn a_publisher_set_shows_in_every_reader_at_once() {
    let mut n = net(2, AccessScope::Group, History::KeepAll);
    n.begin(true);
    for w in 0..2 {
        for k in 0..2 {
            n.write(w, k, k);
        }
    }
    n.end();
    // Only the first writer's datagrams arrive: its part is whole, the set is not.
    let second = n.a.guid(n.writers[1]).entity_id;
    let is_second = |b: &[u8]| {
        MessageView::new_checked(b)
            .expect("message")
            .submessages()
            .any(|s| matches!(s, Ok(SubmessageView::Data(d)) if d.writer_id() == second))
    };
    n.send_once(|b| !is_second(b));
    assert_eq!(n.take(0).len(), 0, "the first part waits for the second");
    // Heartbeats make the second writer resend what was lost.
    n.now += Duration::from_millis(20);
    n.a.handle_timeout(n.now);
    n.run(|_| true);
    assert_eq!(n.take(0).len(), 2);
    assert_eq!(n.take(1).len(), 2);
}

#[test]
fn sets_wait_while_the_subscriber_access_is_open() {
    let mut n = net(2, AccessScope::Topic, History::KeepAll);
    n.b.set_subscriber_access(n.now, SUBSCRIBER, true);
    n.begin(false);
    n.write(0, 1, 1);
    n.write(1, 1, 1);
    n.end();
    n.run(|_| true);
    assert_eq!(n.take_all(), 0, "held while the access is open");
    n.b.set_subscriber_access(n.now, SUBSCRIBER, false);
    assert_eq!(n.take_all(), 2);
}

#[test]
fn an_unbalanced_end_and_an_empty_set_are_harmless() {
    let mut n = net(1, AccessScope::Topic, History::KeepAll);
    assert!(n.a.end_coherent_set(n.now, PUBLISHER).is_err());
    n.begin(false);
    n.end();
    assert_eq!(
        n.a.writer_history(n.writers[0]).expect("history").last_sn(),
        SequenceNumber::ZERO,
        "an empty set sends nothing"
    );
}

#[test]
fn a_malformed_coherent_set_parameter_is_counted_and_drops_the_set() {
    let mut n = net(1, AccessScope::Topic, History::KeepAll);
    n.begin(false);
    n.write(0, 1, 1);
    n.write(0, 2, 2);
    n.end();
    // Sequence number 1 in PID_COHERENT_SET becomes 0, which no set can have.
    let pid = PID_COHERENT_SET.to_le_bytes();
    let needle = [pid[0], pid[1], 8, 0, 0, 0, 0, 0, 1, 0, 0, 0];
    while let Some(t) = n.a.poll_transmit(n.now, &mut n.buf) {
        let mut bytes = n.buf.datagram(&t).to_vec();
        if let Some(at) = bytes.windows(12).position(|w| w == needle) {
            bytes[at + 8] = 0;
        }
        n.b.handle_datagram(n.now, &loc(1), &bytes);
    }
    n.run(|_| true);
    let stats = n.b.reader_stats(n.readers[0]).expect("stats");
    assert!(stats.malformed >= 1);
    assert_eq!(stats.coherent_sets_discarded, 1);
    assert_eq!(n.take_all(), 0);
}
