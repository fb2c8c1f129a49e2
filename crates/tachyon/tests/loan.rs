//! Loans (`tachyon::loan`): samples of a fixed-size type written in place in a writer's
//! loan area in `/dev/shm`, sent as a reference, and read in place by readers of other
//! participants — between participants of this process (the in-process transport off) and
//! between real processes, which are killed with SIGKILL while they hold loans.

mod common;

use std::collections::HashSet;
use std::io::BufRead;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use common::{wait_matched, wait_until, wait_until_within, Kid};
use tachyon::prelude::*;
use tachyon::zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout};
use tachyon::{LoanedSample, ParticipantSettings, TransportSettings};

/// 128 KiB: two datagrams' worth, which by value would be fragmented.
const BODY: usize = 128 * 1024;

#[derive(DdsType, FromBytes, IntoBytes, KnownLayout, Immutable)]
#[repr(C)]
#[dds(name = "test::Frame")]
struct Frame {
    seq: u64,
    pid: u32,
    /// Every byte of `body` is this.
    fill: u32,
    body: [u8; BODY],
}

const CHILD: &str = "TACHYON_LOAN_TEST_CHILD";

/// Shared memory on, the in-process transport off (participants of this process use shared
/// memory), loan areas of `loan_bytes`.
fn settings(loan_bytes: u64) -> ParticipantSettings {
    let mut s = ParticipantSettings {
        transports: TransportSettings {
            no_intra: true,
            ..TransportSettings::default()
        },
        ..ParticipantSettings::default()
    };
    s.shm.loan_bytes = loan_bytes;
    s
}

fn participant(domain: u32, loan_bytes: u64) -> DomainParticipant {
    tachyon_transport::testing::require_isolated_network();
    DomainParticipant::with_settings(domain, &settings(loan_bytes)).expect("participant")
}

fn writer(p: &DomainParticipant, qos: DataWriterQos) -> DataWriter<Frame> {
    let topic = p.create_topic::<Frame>("frames").expect("topic");
    p.create_publisher()
        .expect("publisher")
        .create_datawriter(&topic, qos)
        .expect("writer")
}

fn reader(p: &DomainParticipant) -> DataReader<Frame> {
    let topic = p.create_topic::<Frame>("frames").expect("topic");
    p.create_subscriber()
        .expect("subscriber")
        .create_datareader(&topic, DataReaderQos::default().reliable().keep_all())
        .expect("reader")
}

/// Writes frame `seq` through a loan; whether the loan was in shared memory.
fn write_loaned(w: &DataWriter<Frame>, seq: u64) -> bool {
    let mut loan = w.loan_sample().expect("loan");
    let shm = loan.is_shared_memory();
    loan.seq = seq;
    loan.pid = std::process::id();
    loan.fill = (seq % 251) as u32;
    loan.body.fill((seq % 251) as u8);
    w.write_loaned(loan).expect("write_loaned");
    shm
}

/// Checks a frame's contents; its sequence number.
fn check(s: &LoanedSample<Frame>) -> u64 {
    let f = s.data().expect("valid data");
    assert_eq!(f.fill, (f.seq % 251) as u32);
    assert!(
        f.body.iter().all(|&b| u32::from(b) == f.fill),
        "frame {} intact",
        f.seq
    );
    f.seq
}

/// Takes loaned samples until `n` arrived; they are checked and returned (held).
fn take_held(r: &DataReader<Frame>, n: usize) -> Vec<LoanedSample<Frame>> {
    let mut got = Vec::new();
    wait_until("every loaned sample", || {
        got.extend(r.take_loaned(usize::MAX).expect("take_loaned"));
        got.len() >= n
    });
    got
}

#[test]
fn loaned_samples_are_read_in_place_through_shared_memory_without_fragments() {
    let p = participant(90, 64 << 20);
    let q = participant(90, 64 << 20);
    let w = writer(&p, DataWriterQos::default().reliable().keep_all());
    let r = reader(&q);
    wait_matched(&w, &r);
    const N: u64 = 200;
    let mut in_shm = 0;
    let mut got = Vec::new();
    for seq in 0..N {
        in_shm += u64::from(write_loaned(&w, seq));
        // Taken as they come, and dropped: their slots go back to the writer.
        got.extend(r.take_loaned(8).expect("take").iter().map(|s| {
            assert!(s.is_in_place(), "read in the writer's slot");
            check(s)
        }));
    }
    for s in take_held(&r, (N as usize).saturating_sub(got.len())) {
        assert!(s.is_in_place());
        got.push(check(&s));
    }
    assert_eq!(got, (0..N).collect::<Vec<_>>(), "all, in order");
    assert_eq!(in_shm, N, "every loan a slot of the writer's area");
    let (ws, rs) = (p.statistics(), q.statistics());
    assert_eq!(ws.loans.areas, 1);
    assert!(ws.loans.loans >= N, "{:?}", ws.loans);
    assert!(rs.loans.held >= N, "held in place: {:?}", rs.loans);
    assert_eq!(rs.loans.copied + rs.loans.missed + rs.loans.malformed, 0);
    // References, not 128 KiB bodies cut into fragments, went through shared memory.
    assert!(
        ws.shm.bytes_sent < N * 2048,
        "{} bytes sent for {N} samples of {BODY} bytes",
        ws.shm.bytes_sent
    );
    assert_eq!(rs.readers.stats.malformed, 0);
}

#[test]
fn without_free_slots_loans_come_from_the_heap_and_everything_still_arrives() {
    // Four slots (the least): a reader holding four samples in place takes them all.
    let p = participant(91, 1);
    let q = participant(91, 1);
    let w = writer(&p, DataWriterQos::default().reliable().keep_all());
    let r = reader(&q);
    wait_matched(&w, &r);
    let mut held = Vec::new();
    let mut shm = 0;
    for seq in 0..4 {
        shm += u64::from(write_loaned(&w, seq));
        held.extend(take_held(&r, 1));
    }
    assert_eq!(shm, 4);
    assert!(held.iter().all(LoanedSample::is_in_place));
    // Every slot is held: more loans are heap memory, sent by value.
    wait_until("the writer's history released its slots", || {
        w.wait_for_acknowledgments(Duration::from_secs(1)).is_ok()
    });
    for seq in 4..20 {
        assert!(!write_loaned(&w, seq), "loan {seq} from the heap");
    }
    let more = take_held(&r, 16);
    assert_eq!(
        more.iter().map(check).collect::<Vec<_>>(),
        (4..20).collect::<Vec<_>>()
    );
    assert!(p.statistics().loans.exhausted >= 16);
    // Released, the slots are lent again.
    drop(held);
    assert!(write_loaned(&w, 20), "slots back once the reader let go");
    assert_eq!(check(&take_held(&r, 1)[0]), 20);
}

#[test]
fn a_loan_can_be_dropped_unwritten_and_a_udp_reader_gets_the_bytes() {
    // A reader with shared memory off: the loaned samples go to it by value, while the
    // shared-memory reader of the same writer keeps reading them in place.
    let p = participant(92, 64 << 20);
    let q = participant(92, 64 << 20);
    let mut udp_settings = settings(64 << 20);
    udp_settings.transports.no_shm = true;
    let u = DomainParticipant::with_settings(92, &udp_settings).expect("participant");
    let w = writer(&p, DataWriterQos::default().reliable().keep_all());
    let r = reader(&q);
    let ru = reader(&u);
    wait_matched(&w, &r);
    wait_matched(&w, &ru);
    drop(w.loan_sample().expect("a loan")); // never written: nothing is sent
    for seq in 0..30 {
        write_loaned(&w, seq);
    }
    for (rd, in_place) in [(&r, true), (&ru, false)] {
        let got = take_held(rd, 30);
        assert_eq!(
            got.iter().map(check).collect::<Vec<_>>(),
            (0..30).collect::<Vec<_>>()
        );
        assert!(got.iter().all(|s| s.is_in_place() == in_place));
    }
    assert_eq!(u.statistics().shm.datagrams_received, 0, "over UDP");
    assert!(
        q.statistics().loans.held >= 30,
        "{:?}",
        q.statistics().loans
    );
}

/// Not a test of its own: the body of the processes the tests start (it does nothing when
/// run by the test harness).
#[test]
fn child() {
    let Ok(role) = std::env::var(CHILD) else {
        return;
    };
    let (role, domain) = role.split_once(':').expect("role:domain");
    let domain: u32 = domain.parse().expect("domain");
    let p = participant(domain, 1);
    match role {
        "writer" => {
            let w = writer(&p, DataWriterQos::default().reliable().keep_last(2));
            common::wait_writer_matches(&w, 1);
            println!("matched");
            // Loaning and writing until it is killed: the kill lands mid-write, or while it
            // holds a loan.
            for seq in 0.. {
                let mut loan = w.loan_sample().expect("loan");
                loan.seq = seq;
                loan.pid = std::process::id();
                loan.fill = (seq % 251) as u32;
                loan.body.fill((seq % 251) as u8);
                std::thread::sleep(Duration::from_micros(300));
                w.write_loaned(loan).expect("write_loaned");
            }
        }
        "holder" => {
            let r = reader(&p);
            common::wait_reader_matches(&r, 1);
            println!("matched");
            // Takes and holds every sample, in place, until it is killed.
            let mut held = Vec::new();
            let mut told = 0;
            loop {
                held.extend(r.take_loaned(usize::MAX).expect("take"));
                let in_place = held.iter().filter(|s| s.is_in_place()).count();
                if in_place > told {
                    println!("holding {in_place}");
                    told = in_place;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        other => panic!("unknown role {other}"),
    }
}

/// A child process of `role` in `domain`, once it printed that it matched, and its further
/// lines (read by a thread of their own, so a test waits for one with a time limit).
fn spawn(role: &str, domain: u32) -> (Kid, Receiver<String>) {
    let (child, out) = common::spawn_child(CHILD, role, domain);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in out.lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Waits (at most [`common::PATIENCE`]) for a line of the child for which `f` holds.
fn expect_line(lines: &Receiver<String>, f: impl Fn(&str) -> bool) {
    let deadline = std::time::Instant::now() + common::PATIENCE;
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match lines.recv_timeout(left) {
            Ok(l) if f(l.trim_end()) => return,
            Ok(_) => {}
            Err(e) => panic!("no such line from the child: {e}"),
        }
    }
}

/// The files of `/dev/shm` whose names start with `prefix`.
fn files(prefix: &str) -> HashSet<String> {
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with(prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// The `tachyon-<token>` prefix of the files of process `pid`: its segment's name (the
/// segment's header names its owner's process id at offset 64).
fn prefix_of(pid: u32) -> String {
    let seg = files("tachyon-").into_iter().find(|n| {
        n.len() == "tachyon-".len() + 16
            && std::fs::read(format!("/dev/shm/{n}")).is_ok_and(|b| {
                b.len() >= 68 && u32::from_ne_bytes([b[64], b[65], b[66], b[67]]) == pid
            })
    });
    seg.expect("the child's segment")
}

#[test]
fn a_reader_killed_holding_loaned_samples_gives_its_slots_back() {
    let p = participant(93, 1); // four slots
    let w = writer(&p, DataWriterQos::default().reliable().keep_last(1));
    let (child, lines) = spawn("holder", 93);
    let child_prefix = prefix_of(child.0.id());
    common::wait_writer_matches(&w, 1);
    // The child holds every slot...
    for seq in 0..4 {
        assert!(write_loaned(&w, seq), "slots free");
    }
    expect_line(&lines, |l| l.ends_with("holding 4"));
    let mut seq = 4;
    std::thread::sleep(Duration::from_millis(50));
    assert!(!write_loaned(&w, seq), "every slot held by the child");
    seq += 1;
    // ...and is killed holding them: they come back.
    let mut child = child;
    child.0.kill().expect("SIGKILL");
    child.0.wait().expect("reaped");
    wait_until_within(
        "the slots of the killed reader back",
        Duration::from_secs(15),
        || {
            let shm = write_loaned(&w, seq);
            seq += 1;
            shm
        },
    );
    assert!(p.statistics().loans.rows_reclaimed >= 1);
    wait_until_within(
        "the killed reader's segment deleted",
        Duration::from_secs(15),
        || files(&child_prefix).is_empty(),
    );
}

#[test]
fn a_writer_killed_while_it_loans_never_blocks_its_reader_and_leaves_nothing() {
    let p = participant(94, 64 << 20);
    let r = reader(&p);
    let (child, _out) = spawn("writer", 94);
    let child_prefix = prefix_of(child.0.id());
    let mut got = Vec::new();
    wait_until("samples of the child", || {
        got.extend(r.take_loaned(usize::MAX).expect("take").iter().map(check));
        got.len() >= 50
    });
    assert!(
        files(&child_prefix).len() >= 2,
        "the child's segment and loan area: {:?}",
        files(&child_prefix)
    );
    let mut child = child;
    child.0.kill().expect("SIGKILL");
    child.0.wait().expect("reaped");
    wait_until_within(
        "the killed writer's files deleted",
        Duration::from_secs(15),
        || {
            got.extend(r.take_loaned(usize::MAX).expect("take").iter().map(check));
            files(&child_prefix).is_empty()
        },
    );
    // In order; KEEP_LAST(2) may skip, never reorder.
    assert!(got.windows(2).all(|p| p[0] < p[1]), "in order");
    // The reader is still fine: a new writer's samples arrive.
    let p2 = participant(94, 64 << 20);
    let w2 = writer(&p2, DataWriterQos::default().reliable().keep_all());
    wait_matched(&w2, &r);
    write_loaned(&w2, 1_000_000);
    assert_eq!(check(&take_held(&r, 1)[0]), 1_000_000);
}
