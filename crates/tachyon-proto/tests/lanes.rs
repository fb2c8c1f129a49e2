//! Lanes: a participant whose critical endpoints live in a second protocol state (a lane,
//! `Participant::new_lane`) while discovery stays in the main one. Discovery announces and
//! matches the lane's endpoints through queued commands; datagrams reach whichever state they
//! arrive at first and are handed to the other when they concern it too. Against a remote
//! participant that knows nothing of it: a lane writer's samples arrive, reliably, beside a
//! main writer's; a lane reader gets a remote writer's samples; deleting a lane writer
//! withdraws it.

#[path = "common/discovering.rs"]
mod discovering;

use discovering::{locator, participant, prefix};
use tachyon_proto::discovery::{PublicationData, SubscriptionData};
use tachyon_proto::history::{Payload, Query, Sample};
use tachyon_proto::{
    Duration, Event, Instant, Participant, ParticipantConfig, ReaderConfig, Reliability, TxBuf,
    WriteRequest, WriterConfig,
};
use tachyon_wire::{EntityKind, Guid};

/// Participant 1: its main state (discovery) and its lane.
struct Local {
    main: Participant,
    lane: Participant,
    events: Vec<Event>,
    commands: usize,
}

impl Local {
    fn new() -> Local {
        Local {
            main: participant(1),
            lane: Participant::new_lane(prefix(1), ParticipantConfig::default()),
            events: Vec::new(),
            commands: 0,
        }
    }

    /// What the runtime does after the main state changed: discovery's commands and the
    /// activity the lane's readers follow go to the lane.
    fn settle(&mut self, now: Instant) {
        while let Some(c) = self.main.poll_lane_command() {
            self.commands += 1;
            self.lane.apply_lane_command(now, c).expect("lane endpoint");
        }
        while let Some(p) = self.main.poll_participant_activity() {
            self.lane.handle_participant_activity(now, p);
        }
        self.events
            .extend(std::iter::from_fn(|| self.main.poll_event()));
        self.events
            .extend(std::iter::from_fn(|| self.lane.poll_event()));
    }

    /// A datagram for participant 1, arriving at the lane first (its own socket) or at the
    /// main state; handed to the other when it concerns it too.
    fn receive(&mut self, now: Instant, data: &[u8], at_lane: bool) {
        let (first, second) = match at_lane {
            true => (&mut self.lane, &mut self.main),
            false => (&mut self.main, &mut self.lane),
        };
        first.handle_datagram(now, &locator(2), data);
        if first.take_forward() {
            second.handle_datagram(now, &locator(2), data);
            second.take_forward();
        }
        self.settle(now);
    }
}

/// Runs `rounds` rounds of 20 ms: timers, then every datagram of each side to the other
/// (participant 1's alternately arriving at its lane and its main state).
fn exchange(a: &mut Local, b: &mut Participant, now: &mut Instant, rounds: u32) -> Vec<Event> {
    let mut buf = TxBuf::new(tachyon_proto::DEFAULT_MAX_DATAGRAM);
    let mut eb = Vec::new();
    for round in 0..rounds {
        a.main.handle_timeout(*now);
        a.lane.handle_timeout(*now);
        a.settle(*now);
        b.handle_timeout(*now);
        let mut from_a = Vec::new();
        for p in [&mut a.main, &mut a.lane] {
            while let Some(t) = p.poll_transmit(*now, &mut buf) {
                from_a.push(buf.datagram(&t).to_vec());
            }
        }
        for d in &from_a {
            b.handle_datagram(*now, &locator(1), d);
        }
        let mut from_b = Vec::new();
        while let Some(t) = b.poll_transmit(*now, &mut buf) {
            from_b.push(buf.datagram(&t).to_vec());
        }
        for (i, d) in from_b.iter().enumerate() {
            a.receive(*now, d, (round as usize + i) % 2 == 0);
        }
        eb.extend(std::iter::from_fn(|| b.poll_event()));
        *now += Duration::from_millis(20);
    }
    eb
}

fn reliable_writer() -> WriterConfig {
    WriterConfig {
        reliability: Reliability::Reliable,
        history: tachyon_proto::history::WriterHistoryConfig {
            history: tachyon_proto::history::History::KeepAll,
            ..Default::default()
        },
        ..WriterConfig::default()
    }
}

fn reliable_reader() -> ReaderConfig {
    ReaderConfig {
        reliability: Reliability::Reliable,
        history: tachyon_proto::history::ReaderHistoryConfig {
            history: tachyon_proto::history::History::KeepAll,
            ..Default::default()
        },
        ..ReaderConfig::default()
    }
}

fn sample(i: u8) -> WriteRequest {
    WriteRequest::data(
        tachyon_cdr::KeyHash([0; 16]),
        tachyon_wire::Time::default(),
        Payload::copy_from_slice(&[0, 1, 0, 0, i, 0, 0, 0]),
    )
}

fn payload_bytes(p: &mut Participant, now: Instant, reader: tachyon_wire::EntityId) -> Vec<u8> {
    let mut out: Vec<Sample> = Vec::new();
    p.take(now, reader, &Query::ANY, &mut out).expect("take");
    out.iter()
        .filter_map(|s| s.data.as_ref().map(|p| p.as_bytes()[4]))
        .collect()
}

/// An id the main state allocates for itself.
fn mw_id_placeholder() -> tachyon_wire::EntityId {
    let mut p = Participant::new(prefix(9), ParticipantConfig::default());
    p.create_writer(WriterConfig::default()).expect("writer")
}

fn matched_in(events: &[Event], writer: tachyon_wire::EntityId) -> bool {
    events.iter().any(
        |e| matches!(e, Event::PublicationMatched { writer: w, matched: true, .. } if *w == writer),
    )
}

#[test]
fn a_lane_writer_is_announced_matched_and_heard_beside_a_main_one() {
    let mut now = Instant::ZERO;
    let mut a = Local::new();
    let mut b = participant(2);

    // A critical writer in the lane, an ordinary one in the main state.
    let lw = a
        .main
        .reserve_lane_endpoint(EntityKind::USER_WRITER_NO_KEY)
        .expect("id");
    a.lane
        .create_writer_with_id(lw, reliable_writer())
        .expect("lane writer");
    assert!(a.main.in_lane(lw) && !a.lane.in_lane(lw));
    assert!(tachyon_proto::participant::lanes::is_lane_id(lw));
    assert!(!tachyon_proto::participant::lanes::is_lane_id(
        mw_id_placeholder()
    ));
    a.main
        .announce_writer(
            now,
            lw,
            PublicationData::new(Guid::UNKNOWN, "critical", "T"),
        )
        .expect("announce a lane writer");
    let mw = a
        .main
        .create_writer(reliable_writer())
        .expect("main writer");
    a.main
        .announce_writer(now, mw, PublicationData::new(Guid::UNKNOWN, "bulk", "T"))
        .expect("announce");
    let rc = b.create_reader(reliable_reader()).expect("reader");
    b.announce_reader(
        now,
        rc,
        SubscriptionData::new(Guid::UNKNOWN, "critical", "T"),
    )
    .expect("announce");
    let rb = b.create_reader(reliable_reader()).expect("reader");
    b.announce_reader(now, rb, SubscriptionData::new(Guid::UNKNOWN, "bulk", "T"))
        .expect("announce");

    exchange(&mut a, &mut b, &mut now, 50);
    assert!(
        a.commands > 0,
        "discovery matched the lane writer through commands"
    );
    assert!(
        matched_in(&a.events, lw),
        "the lane reports its writer matched"
    );
    assert!(matched_in(&a.events, mw));
    assert_eq!(a.lane.matched_readers(lw), vec![b.guid(rc)]);
    assert!(
        a.main.matched_readers(lw).is_empty(),
        "the main state keeps none of it"
    );

    for i in 0..5 {
        a.lane.write(now, lw, sample(i)).expect("lane write");
        a.main.write(now, mw, sample(10 + i)).expect("main write");
    }
    exchange(&mut a, &mut b, &mut now, 20);
    assert_eq!(payload_bytes(&mut b, now, rc), [0, 1, 2, 3, 4]);
    assert_eq!(payload_bytes(&mut b, now, rb), [10, 11, 12, 13, 14]);
    // The remote reader's acknowledgements reached the lane writer (some arrived at the
    // main state first and were handed on).
    assert_eq!(a.lane.all_acknowledged(lw), Some(true));
    assert_eq!(
        a.main.stats().unknown_destination,
        0,
        "forwarded, not dropped"
    );

    // Deleted in the lane and withdrawn by discovery: the remote reader loses it.
    a.lane.delete_writer(now, lw).expect("delete in lane");
    a.main.delete_writer(now, lw).expect("withdraw");
    assert!(!a.main.in_lane(lw));
    let eb = exchange(&mut a, &mut b, &mut now, 20);
    assert!(
        eb.iter().any(|e| matches!(e,
            Event::SubscriptionMatched { reader, matched: false, .. } if *reader == rc)),
        "{eb:?}"
    );
}

#[test]
fn a_lane_reader_gets_a_remote_writers_samples_wherever_they_arrive() {
    let mut now = Instant::ZERO;
    let mut a = Local::new();
    let mut b = participant(2);
    let lr = a
        .main
        .reserve_lane_endpoint(EntityKind::USER_READER_NO_KEY)
        .expect("id");
    a.lane
        .create_reader_with_id(lr, reliable_reader())
        .expect("lane reader");
    a.main
        .announce_reader(
            now,
            lr,
            SubscriptionData::new(Guid::UNKNOWN, "critical", "T"),
        )
        .expect("announce a lane reader");
    let w = b.create_writer(reliable_writer()).expect("writer");
    b.announce_writer(now, w, PublicationData::new(Guid::UNKNOWN, "critical", "T"))
        .expect("announce");
    exchange(&mut a, &mut b, &mut now, 50);
    assert_eq!(a.lane.matched_writers(lr), vec![b.guid(w)]);
    for i in 0..6 {
        b.write(now, w, sample(i)).expect("write");
        exchange(&mut a, &mut b, &mut now, 1);
    }
    exchange(&mut a, &mut b, &mut now, 10);
    assert_eq!(payload_bytes(&mut a.lane, now, lr), [0, 1, 2, 3, 4, 5]);
    assert_eq!(
        b.all_acknowledged(w),
        Some(true),
        "the lane reader acknowledged"
    );
    assert_eq!(a.main.stats().unknown_destination, 0);
    assert_eq!(a.lane.stats().unknown_destination, 0);
}
