//! The async reader API driven by a minimal hand-written executor (a `block_on` that parks
//! its thread until the task's `Waker` unparks it), between two participants of one process
//! over real UDP sockets on loopback (inside the isolated network namespace
//! `scripts/test.sh` provides).
//!
//! The executor parks with a deadline that fails the test: a stream or future that only
//! made progress because something polled it again (instead of being woken) fails.

mod common;

use std::future::Future;
use std::pin::{pin, Pin};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::Thread;
use std::time::{Duration, Instant};

use common::{participants, wait_matched, PATIENCE};
use futures_core::{FusedStream, Stream};
use tachyon::prelude::*;

#[derive(DdsType, Debug, Clone, PartialEq)]
#[dds(name = "test::Tick")]
struct Tick {
    #[key]
    lane: u32,
    seq: u64,
}

/// Wakes the parked thread, and counts the wakes.
struct Unpark {
    thread: Thread,
    wakes: AtomicUsize,
}

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        self.thread.unpark();
    }
}

/// Runs `f` to completion on this thread; panics if nothing wakes it within `PATIENCE`.
fn block_on<F: Future>(f: F) -> F::Output {
    let unpark = Arc::new(Unpark {
        thread: std::thread::current(),
        wakes: AtomicUsize::new(0),
    });
    let waker = Waker::from(Arc::clone(&unpark));
    let mut cx = Context::from_waker(&waker);
    let mut f = pin!(f);
    let deadline = Instant::now() + PATIENCE;
    loop {
        // Counted before the poll: a wake that comes while the future is being polled (after
        // it looked, before it returned `Pending`) calls for another poll, not for a park.
        let seen = unpark.wakes.load(Ordering::SeqCst);
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
        // Park until woken (park may return spuriously: the count says whether it was a wake).
        while unpark.wakes.load(Ordering::SeqCst) == seen {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(!left.is_zero(), "the task was never woken");
            std::thread::park_timeout(left);
        }
    }
}

/// The next item of a stream (what `StreamExt::next` does).
async fn next<S: Stream + Unpin>(s: &mut S) -> Option<S::Item> {
    std::future::poll_fn(|cx| Pin::new(&mut *s).poll_next(cx)).await
}

fn endpoints(a: &DomainParticipant, b: &DomainParticipant) -> (DataWriter<Tick>, DataReader<Tick>) {
    let writer = a
        .create_publisher()
        .expect("publisher")
        .create_datawriter(
            &a.create_topic::<Tick>("ticks").expect("topic"),
            DataWriterQos::default().reliable().keep_all(),
        )
        .expect("writer");
    let reader = b
        .create_subscriber()
        .expect("subscriber")
        .create_datareader(
            &b.create_topic::<Tick>("ticks").expect("topic"),
            DataReaderQos::default().reliable().keep_all(),
        )
        .expect("reader");
    wait_matched(&writer, &reader);
    (writer, reader)
}

#[test]
fn the_stream_yields_every_sample_in_writing_order_then_ends_when_the_participant_closes() {
    let (a, b) = participants(43);
    let (writer, reader) = endpoints(&a, &b);
    let mut stream = reader.stream();
    let n = 300u64;
    // The writer runs on another thread while the stream waits: every sample must come,
    // across 4 instances, in the order written (not grouped by instance as `take` is).
    let producer = std::thread::spawn(move || {
        for seq in 0..n {
            writer
                .write(&Tick {
                    lane: (seq % 4) as u32,
                    seq,
                })
                .expect("write");
            if seq % 50 == 0 {
                // Pauses, so that the stream also waits (parked) for samples to come.
                std::thread::sleep(Duration::from_millis(2));
            }
        }
        writer
            .wait_for_acknowledgments(PATIENCE)
            .expect("acknowledged");
        writer
    });
    let got: Vec<Tick> = block_on(async {
        let mut got = Vec::new();
        while got.len() < n as usize {
            let s = next(&mut stream)
                .await
                .expect("the stream goes on while the participant is open")
                .expect("no error");
            assert_eq!(s.info.instance_state, InstanceState::Alive);
            got.push(s.data.expect("valid data"));
        }
        got
    });
    let seqs: Vec<u64> = got.iter().map(|t| t.seq).collect();
    assert_eq!(seqs, (0..n).collect::<Vec<_>>());
    assert!(got.iter().all(|t| t.lane == (t.seq % 4) as u32));
    let writer = producer.join().expect("producer");

    // The writer's participant goes away: its instances lose their writer, which the stream
    // reports as samples without data in a NOT_ALIVE state.
    drop(writer);
    a.close();
    let gone = block_on(async {
        let mut gone = std::collections::BTreeSet::new();
        while gone.len() < 4 {
            let s = next(&mut stream).await.expect("open").expect("no error");
            assert!(s.data.is_none(), "only state changes are left: {s:?}");
            assert_ne!(s.info.instance_state, InstanceState::Alive);
            gone.insert(s.info.instance_handle);
        }
        gone
    });
    assert_eq!(gone.len(), 4);

    // Closing the reader's own participant (from another thread) ends the stream cleanly.
    let closer = std::thread::spawn(move || {
        // Later, so that the stream is parked waiting when the close comes.
        std::thread::sleep(Duration::from_millis(100));
        b.close();
        b
    });
    let end = block_on(next(&mut stream));
    assert!(end.is_none(), "the stream ends: {end:?}");
    assert!(stream.is_terminated());
    assert!(block_on(next(&mut stream)).is_none(), "and stays ended");
    drop(closer.join().expect("closer"));
}

#[test]
fn wait_for_data_async_resolves_on_data_and_fails_once_closed() {
    let (a, b) = participants(44);
    let (writer, reader) = endpoints(&a, &b);
    // Nothing yet: the future is pending until the write from another thread wakes it (later,
    // so that the future is parked waiting when it comes).
    let w = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(50));
        writer.write(&Tick { lane: 1, seq: 7 }).expect("write");
        writer
    });
    let started = Instant::now();
    block_on(reader.wait_for_data_async()).expect("data arrives");
    assert!(started.elapsed() >= Duration::from_millis(40), "it waited");
    let s = reader.take(usize::MAX).expect("take");
    assert_eq!(s.len(), 1);
    assert_eq!(s[0].data, Some(Tick { lane: 1, seq: 7 }));
    // Data already there: ready at once.
    let writer = w.join().expect("writer thread");
    writer.write(&Tick { lane: 2, seq: 8 }).expect("write");
    block_on(reader.wait_for_data_async()).expect("data arrives");
    block_on(reader.wait_for_data_async()).expect("still unread: ready at once");
    reader.take(usize::MAX).expect("take");
    // Closed while waiting: the future fails instead of hanging.
    let closer = std::thread::spawn(move || {
        // Later, so that the future is parked waiting when the close comes.
        std::thread::sleep(Duration::from_millis(50));
        b.close();
        b
    });
    let r = block_on(reader.wait_for_data_async());
    assert!(matches!(r, Err(Error::AlreadyDeleted)), "{r:?}");
    drop(closer.join().expect("closer"));
    drop(writer);
}

#[test]
fn the_builtin_readers_stream_too() {
    let (a, b) = participants(45);
    let mut parts = b.builtin_participants_reader().into_stream();
    let first = block_on(next(&mut parts)).expect("open").expect("no error");
    let data = first.data.expect("valid");
    assert_eq!(data.key.instance_handle(), a.get_instance_handle());
    assert_eq!(first.info.view_state, tachyon::ViewState::New);
    drop(a);
    let gone = block_on(next(&mut parts)).expect("open").expect("no error");
    assert_eq!(gone.info.instance_handle, first.info.instance_handle);
    assert_eq!(gone.info.instance_state, InstanceState::NotAliveDisposed);
}
