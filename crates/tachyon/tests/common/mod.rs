//! Helpers shared by the integration tests of the `tachyon` crate; each test file includes
//! them with `mod common;` (so each uses only some of them: hence `dead_code` below).
//!
//! Tests wait for the event that proves what they need — both sides matched, a sample
//! arrived, the writer's samples were acknowledged — bounded by a deadline, never for a
//! guessed time: a fixed sleep is too short on a loaded machine and wasted on an idle one. A
//! test that must show that something does *not* arrive first waits for an event after which
//! it would have arrived (an acknowledgement, a later sample), then looks. Sleeps that are the
//! behaviour under test (a deadline, a lifespan or a lease running out; a thread that must be
//! blocked before it is woken) stay in the tests, each with its reason.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use tachyon::prelude::*;
use tachyon::{Readable, Writable};

/// How long a test waits for what takes well under a second even on a loaded 2-core machine
/// (discovery, delivery, acknowledgement) before it fails.
pub const PATIENCE: Duration = Duration::from_secs(10);

/// The pause between two checks of a polled condition.
const POLL_INTERVAL: Duration = Duration::from_millis(5);

/// Waits until `condition` holds; fails the test, naming `what`, after [`PATIENCE`].
pub fn wait_until(what: &str, condition: impl FnMut() -> bool) {
    wait_until_within(what, PATIENCE, condition);
}

/// [`wait_until`] with a deadline of its own, for what may take longer than [`PATIENCE`].
pub fn wait_until_within(what: &str, timeout: Duration, condition: impl FnMut() -> bool) {
    assert!(
        poll_until(timeout, condition),
        "timed out after {timeout:?} waiting for {what}"
    );
}

/// Checks `condition` until it holds or `timeout` passed; returns whether it holds. For a test
/// that must clean up (stop a thread) before it fails.
pub fn poll_until(timeout: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + timeout;
    loop {
        if condition() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(POLL_INTERVAL);
    }
}

/// Two participants of `domain`, once it is sure that the test runs in an isolated network
/// namespace (`scripts/test.sh` provides one).
pub fn participants(domain: u32) -> (DomainParticipant, DomainParticipant) {
    tachyon_transport::testing::require_isolated_network();
    let a = DomainParticipant::new(domain).expect("participant a");
    let b = DomainParticipant::new(domain).expect("participant b");
    (a, b)
}

/// Waits until `writer` and `reader` matched each other. Both sides: a VOLATILE writer sends
/// nothing to a reader it has not matched, and a reader ignores a writer it does not know.
pub fn wait_matched<W: Writable, R: Readable>(writer: &DataWriter<W>, reader: &DataReader<R>) {
    let (w, r) = (writer.guid(), reader.guid());
    wait_until("the writer and the reader to match each other", || {
        writer.matched_subscriptions().contains(&r) && reader.matched_publications().contains(&w)
    });
}

/// Waits until `writer` matches exactly `n` readers (its PUBLICATION_MATCHED `current_count`,
/// looked at without resetting the status).
pub fn wait_writer_matches<T: Writable>(writer: &DataWriter<T>, n: usize) {
    let mut now = 0;
    let done = poll_until(PATIENCE, || {
        now = writer.matched_subscriptions().len();
        now == n
    });
    assert!(
        done,
        "timed out waiting for the writer to match {n} readers ({now} now)"
    );
}

/// Waits until `reader` matches exactly `n` writers (its SUBSCRIPTION_MATCHED
/// `current_count`, looked at without resetting the status).
pub fn wait_reader_matches<T: Readable>(reader: &DataReader<T>, n: usize) {
    let mut now = 0;
    let done = poll_until(PATIENCE, || {
        now = reader.matched_publications().len();
        now == n
    });
    assert!(
        done,
        "timed out waiting for the reader to match {n} writers ({now} now)"
    );
}

/// Takes every sample `reader` holds now; returns their data (a sample without data, such as
/// a dispose, is left out).
pub fn take_data<T: Readable>(reader: &DataReader<T>) -> Vec<T> {
    reader
        .take(usize::MAX)
        .expect("take")
        .into_iter()
        .filter_map(|s| s.data)
        .collect()
}

/// Takes from `reader` until samples with data arrived, at least `n` of them; returns all it
/// took.
pub fn take_at_least<T: Readable>(reader: &DataReader<T>, n: usize) -> Vec<T> {
    let mut got = Vec::new();
    let done = poll_until(PATIENCE, || {
        got.extend(take_data(reader));
        got.len() >= n
    });
    assert!(
        done,
        "timed out waiting for {n} samples ({} arrived)",
        got.len()
    );
    got
}

/// Everything `reader` gets of what `writer` wrote so far: takes until `n` samples with data
/// arrived, waits until every reader `writer` matched acknowledged all it wrote (a reliable
/// reader acknowledges a sample once it is in its cache, or refused), then takes what else is
/// there. More than `n` means samples arrived that should not have.
///
/// `writer` must have matched `reader` (see [`wait_matched`]): an acknowledgement says nothing
/// about a reader the writer does not know.
pub fn take_all_written<W: Writable, T: Readable>(
    writer: &DataWriter<W>,
    reader: &DataReader<T>,
    n: usize,
) -> Vec<T> {
    let mut got = take_at_least(reader, n);
    writer
        .wait_for_acknowledgments(PATIENCE)
        .expect("every sample acknowledged");
    got.extend(take_data(reader));
    got
}

/// A RELIABLE KEEP_ALL writer of topic `name` on `a` and a reader of it on `b` (not waited
/// for: see [`wait_matched`]).
pub fn reliable_pair<T: DdsType + for<'de> tachyon::Decode<'de>>(
    a: &DomainParticipant,
    b: &DomainParticipant,
    name: &str,
) -> (DataWriter<T>, DataReader<T>) {
    let ta = a.create_topic::<T>(name).expect("topic");
    let tb = b.create_topic::<T>(name).expect("topic");
    let w = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(&ta, DataWriterQos::default().reliable().keep_all())
        .expect("writer");
    let r = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(&tb, DataReaderQos::default().reliable().keep_all())
        .expect("reader");
    (w, r)
}

/// A RELIABLE KEEP_ALL reader of `topic` on `participant` whose RESOURCE_LIMITS hold `max`
/// samples: what does not fit is refused, not acknowledged, until a take makes room.
pub fn limited_reader<T: Readable>(
    participant: &DomainParticipant,
    topic: &Topic<T>,
    max: usize,
) -> DataReader<T> {
    let limits = tachyon::qos::ResourceLimits {
        max_samples: Some(max),
        ..Default::default()
    };
    participant
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            topic,
            DataReaderQos {
                resource_limits: limits,
                ..DataReaderQos::default().reliable().keep_all()
            },
        )
        .expect("reader")
}

/// Takes from `reader` two samples at a time (a reader whose cache holds few) until `n` with
/// data arrived; returns their `seq`, in the order taken.
pub fn take_two_at_a_time<T: Readable>(
    reader: &DataReader<T>,
    n: usize,
    seq: impl Fn(&T) -> u64,
) -> Vec<u64> {
    let mut got = Vec::new();
    let end = Instant::now() + PATIENCE;
    while got.len() < n {
        assert!(Instant::now() < end, "{} of {n} samples", got.len());
        let taken = reader.take(2).expect("take");
        assert!(taken.len() <= 2);
        got.extend(taken.iter().filter_map(|s| s.data.as_ref().map(&seq)));
        std::thread::sleep(Duration::from_millis(1));
    }
    got
}

/// A child process (this test binary run again as `role`), killed and reaped when dropped:
/// a failing test leaves none running.
pub struct Kid(pub std::process::Child);

impl Drop for Kid {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// This test binary run again as its `child` test, with `var` set to `role:domain`, once it
/// printed a line ending in "matched"; and its standard output, to read further lines.
pub fn spawn_child(
    var: &str,
    role: &str,
    domain: u32,
) -> (Kid, std::io::BufReader<std::process::ChildStdout>) {
    use std::io::BufRead;
    let exe = std::env::current_exe().expect("test binary");
    let mut child = Kid(std::process::Command::new(exe)
        .args(["--exact", "child", "--nocapture", "--test-threads=1"])
        .env(var, format!("{role}:{domain}"))
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn"));
    let mut out = std::io::BufReader::new(child.0.stdout.take().expect("stdout"));
    let mut line = String::new();
    loop {
        line.clear();
        let n = out.read_line(&mut line).expect("child output");
        assert!(n > 0, "the {role} child ended before it matched");
        // After the harness's "test child ... ", which has no line end.
        if line.trim_end().ends_with("matched") {
            return (child, out);
        }
    }
}

/// Waits until `writer` reports OFFERED_INCOMPATIBLE_QOS and `reader` REQUESTED_INCOMPATIBLE_QOS
/// (each side's StatusCondition, in a WaitSet) and returns both statuses as first read.
pub fn wait_incompatible<W: Writable, R: Readable>(
    writer: &DataWriter<W>,
    reader: &DataReader<R>,
) -> (
    tachyon::status::IncompatibleQosStatus,
    tachyon::status::IncompatibleQosStatus,
) {
    let wc = writer.get_statuscondition();
    wc.set_enabled_statuses(StatusMask::OFFERED_INCOMPATIBLE_QOS);
    let rc = reader.get_statuscondition();
    rc.set_enabled_statuses(StatusMask::REQUESTED_INCOMPATIBLE_QOS);
    let mut ws = WaitSet::new();
    ws.attach_condition(&wc).expect("attach");
    ws.attach_condition(&rc).expect("attach");
    let end = Instant::now() + PATIENCE;
    let (mut offered, mut requested) = (None, None);
    while offered.is_none() || requested.is_none() {
        let left = end.saturating_duration_since(Instant::now());
        for c in ws.wait(left).expect("incompatible QoS reported in time") {
            if c == wc {
                offered = Some(writer.get_offered_incompatible_qos_status());
            } else if c == rc {
                requested = Some(reader.get_requested_incompatible_qos_status());
            }
        }
    }
    (offered.expect("set"), requested.expect("set"))
}
