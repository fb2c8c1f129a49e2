//! The shared-memory transport between participants of this test process, each with its
//! own segment in a private directory of `/dev/shm`. Killed processes: the `tachyon`
//! crate's `tests/shm.rs`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::*;
use layout::entry;

/// A private directory of `/dev/shm`, deleted with everything in it when dropped.
pub(super) struct Dir(pub(super) PathBuf);

impl Dir {
    pub(super) fn new() -> Dir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let base = if Path::new("/dev/shm").is_dir() {
            PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        let p = base.join(format!("tachyon-unit-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("test directory");
        Dir(p)
    }

    fn config(&self) -> ShmConfig {
        ShmConfig {
            dir: self.0.clone(),
            small_slots: 16,
            large_slots: 4,
            ring: 8,
            channels: 16,
            incoming: 16,
            ..ShmConfig::default()
        }
    }

    pub(super) fn segments(&self) -> usize {
        std::fs::read_dir(&self.0).map(|d| d.count()).unwrap_or(0)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn open(dir: &Dir) -> ShmTransport {
    ShmTransport::open(&dir.config(), 8192, true).expect("open")
}

/// A datagram too large for a ring entry to hold itself: it takes a slot.
fn slotted(tag: u8) -> Vec<u8> {
    vec![tag; entry::INLINE + 1]
}

fn send(from: &ShmTransport, to: &[&ShmTransport], port: u32, data: &[u8]) {
    let mut buf = from.tx_buffer();
    buf[..data.len()].copy_from_slice(data);
    let dests: Vec<Locator> = to
        .iter()
        .map(|t| locator(t.prefix, t.own.token, port))
        .collect();
    from.send(buf, data.len(), &dests, 0).expect("send");
}

/// Rings `reader`'s doorbell of `port`, as a writer does once it stamped its ring entries
/// (a receive looks at the rings only when the doorbell moved since it last emptied them).
fn ring(reader: &ShmTransport, port: u32) {
    let (seq, _) = reader.own.doorbell(port).expect("doorbell");
    seq.fetch_add(1, Ordering::SeqCst);
}

fn receive_all(t: &ShmTransport, port: u32) -> Vec<(Locator, Vec<u8>)> {
    let mut batch = RecvBatch::new(4, 8192);
    let mut out = Vec::new();
    while t.receive(port as usize, &mut batch).expect("receive") > 0 {
        out.extend(batch.iter().map(|(l, b)| (*l, b.to_vec())));
    }
    out
}

#[test]
fn datagrams_flow_both_ways_on_each_port() {
    let dir = Dir::new();
    let (a, b) = (open(&dir), open(&dir));
    assert_eq!(a.reach(), b.reach(), "one host, one user: the same reach");
    assert!(a.reach().covers(&b.locators().default_unicast[0]));
    send(&a, &[&b], USER_PORT, b"hello");
    send(&a, &[&b], USER_PORT, &[7; 3000]);
    send(&a, &[&b], CRITICAL_PORT, b"urgent");
    let got = receive_all(&b, USER_PORT);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0].1, b"hello");
    assert_eq!(got[1].1, vec![7; 3000], "a large slot");
    assert_eq!(
        got[0].0,
        locator(a.prefix, a.own.token, USER_PORT),
        "the source"
    );
    let critical = receive_all(&b, CRITICAL_PORT);
    assert_eq!(critical.len(), 1);
    assert_eq!(critical[0].1, b"urgent");
    send(&b, &[&a], USER_PORT, b"answer");
    assert_eq!(receive_all(&a, USER_PORT)[0].1, b"answer");
    assert_eq!(a.stats().datagrams_sent, 3);
    assert_eq!(b.stats().datagrams_received, 3);
    // Both ports' counts (each counted under its own port's lock), bytes too.
    let (sa, sb) = (a.stats(), b.stats());
    assert_eq!((sa.bytes_sent, sb.bytes_received), (3011, 3011));
    assert_eq!((sb.datagrams_sent, sb.bytes_sent), (1, 6));
    assert_eq!((sa.datagrams_received, sa.bytes_received), (1, 6));
    assert_eq!(a.stats().malformed + b.stats().malformed, 0);
}

#[test]
fn one_slot_serves_eight_readers_and_is_freed_when_all_read() {
    let dir = Dir::new();
    let w = open(&dir);
    let readers: Vec<ShmTransport> = (0..8).map(|_| open(&dir)).collect();
    let refs: Vec<&ShmTransport> = readers.iter().collect();
    let free = || lock(&w.tx).free_small.len();
    let before = free();
    for i in 0..5u8 {
        send(&w, &refs, USER_PORT, &slotted(i));
    }
    assert_eq!(
        before - free(),
        5,
        "one slot per datagram, not one per reader"
    );
    for r in &readers {
        let got = receive_all(r, USER_PORT);
        let want: Vec<Vec<u8>> = (0..5u8).map(slotted).collect();
        assert_eq!(got.into_iter().map(|g| g.1).collect::<Vec<_>>(), want);
    }
    w.sweep_channels(&mut lock(&w.tx));
    assert_eq!(
        free(),
        before,
        "every slot back once every reader released it"
    );
}

#[test]
fn a_slow_reader_loses_only_its_own_datagrams() {
    let dir = Dir::new();
    let (w, fast, slow) = (open(&dir), open(&dir), open(&dir));
    // The ring holds 8: the slow reader, which never reads, misses the rest; the fast one
    // misses nothing.
    let mut fast_got = Vec::new();
    for i in 0..20u8 {
        send(&w, &[&fast, &slow], USER_PORT, &[i]);
        fast_got.extend(receive_all(&fast, USER_PORT).into_iter().map(|g| g.1[0]));
    }
    assert_eq!(fast_got, (0..20).collect::<Vec<u8>>());
    let slow_got: Vec<u8> = receive_all(&slow, USER_PORT)
        .into_iter()
        .map(|g| g.1[0])
        .collect();
    assert_eq!(slow_got, (0..8).collect::<Vec<u8>>(), "the first ring-full");
    assert_eq!(w.stats().send_drops, 12);
    // Caught up, it receives again.
    send(&w, &[&fast, &slow], USER_PORT, &[99]);
    assert_eq!(receive_all(&slow, USER_PORT)[0].1, vec![99]);
}

/// A thread that waits `waits` times on `t`'s user port, each time keeping how many
/// datagrams the wait returned and the first of them.
fn waiting(
    t: &std::sync::Arc<ShmTransport>,
    waits: usize,
) -> std::thread::JoinHandle<Vec<(usize, Option<Vec<u8>>)>> {
    let t = std::sync::Arc::clone(t);
    std::thread::spawn(move || {
        let mut batch = RecvBatch::new(4, 8192);
        (0..waits)
            .map(|_| {
                let n = t
                    .receive_wait(USER_PORT as usize, &mut batch)
                    .expect("wait");
                (n, batch.iter().next().map(|(_, d)| d.to_vec()))
            })
            .collect()
    })
}

#[test]
fn a_blocked_receiver_is_woken_and_interrupt_ends_its_wait() {
    let dir = Dir::new();
    let (a, b) = (open(&dir), std::sync::Arc::new(open(&dir)));
    // Connect first, so the wait below finds the channel.
    send(&a, &[&b], USER_PORT, b"first");
    assert_eq!(receive_all(&b, USER_PORT).len(), 1);
    let waiter = waiting(&b, 2);
    std::thread::sleep(Duration::from_millis(50));
    send(&a, &[&b], USER_PORT, b"wake");
    std::thread::sleep(Duration::from_millis(50));
    b.interrupt();
    let waits = waiter.join().expect("join");
    assert_eq!(waits[0], (1, Some(b"wake".to_vec())));
    assert_eq!(waits[1].0, 0, "interrupted");
}

/// Whether `t`'s receive thread on the user port says it sleeps on the futex.
fn sleeping(t: &ShmTransport) -> bool {
    let (_, waiters) = t.own.doorbell(USER_PORT).expect("doorbell");
    waiters.load(Ordering::SeqCst) & layout::WAITER_FUTEX != 0
}

#[test]
fn a_receiver_watches_its_doorbell_for_the_spin_then_sleeps() {
    let dir = Dir::new();
    for (spin, watching) in [(Duration::from_secs(5), true), (Duration::ZERO, false)] {
        let a = open(&dir);
        let config = ShmConfig {
            spin,
            ..dir.config()
        };
        let b = std::sync::Arc::new(ShmTransport::open(&config, 8192, false).expect("open"));
        send(&a, &[&b], USER_PORT, b"connect");
        assert_eq!(receive_all(&b, USER_PORT).len(), 1);
        let waiter = waiting(&b, 1);
        // A spinning receiver never says it sleeps; one without spin does, soon.
        let deadline = Instant::now() + Duration::from_secs(2);
        while !watching && !sleeping(&b) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        if watching {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert_eq!(sleeping(&b), !watching, "spin {spin:?}");
        send(&a, &[&b], USER_PORT, b"ring");
        let waits = waiter.join().expect("join");
        assert_eq!(waits, vec![(1, Some(b"ring".to_vec()))], "{spin:?}");
    }
}

#[test]
fn publish_needs_a_channel_then_puts_the_datagram_in_the_ring_and_wakes_after() {
    let dir = Dir::new();
    let a = open(&dir);
    let config = ShmConfig {
        spin: Duration::ZERO,
        ..dir.config()
    };
    let b = std::sync::Arc::new(ShmTransport::open(&config, 8192, false).expect("open"));
    let to_b = locator(b.prefix, b.own.token, USER_PORT);
    // No channel yet: setting one up opens a segment, which publish never does.
    assert!(!a.publish(&to_b, b"too early"));
    assert!(receive_all(&b, USER_PORT).is_empty());
    assert!(!a.publish(&locator(b.prefix, 0, USER_PORT), b"no reader"));
    send(&a, &[&b], USER_PORT, b"connect");
    assert_eq!(receive_all(&b, USER_PORT).len(), 1);
    // In the ring at once; a reader that looks finds it without a wake-up.
    assert!(a.publish(&to_b, b"published"));
    let got = receive_all(&b, USER_PORT);
    assert_eq!(
        got,
        vec![(
            locator(a.prefix, a.own.token, USER_PORT),
            b"published".to_vec()
        )]
    );
    a.wake_published();
    // A sleeping reader: the doorbell counted, the wake-up left to `wake_published`.
    let waiter = waiting(&b, 1);
    let deadline = Instant::now() + Duration::from_secs(2);
    while !sleeping(&b) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(1));
    }
    assert!(sleeping(&b));
    assert!(a.publish(&to_b, b"wake"));
    a.wake_published();
    let waits = waiter.join().expect("join");
    assert_eq!(waits, vec![(1, Some(b"wake".to_vec()))]);
    // Half a ring unread: publish leaves it to send, which reclaims what the reader freed.
    let ring = dir.config().ring as usize;
    let mut published = 0;
    while published < ring && a.publish(&to_b, b"x") {
        published += 1;
    }
    assert!(published < ring, "stops before the ring is full");
    a.wake_published();
    assert_eq!(receive_all(&b, USER_PORT).len(), published);
    send(&a, &[&b], USER_PORT, b"after");
    assert!(a.publish(&to_b, b"again"), "the reclaim made room");
    let got: Vec<Vec<u8>> = receive_all(&b, USER_PORT)
        .into_iter()
        .map(|g| g.1)
        .collect();
    assert_eq!(got, vec![b"after".to_vec(), b"again".to_vec()]);
    assert_eq!(a.stats().datagrams_sent, 5 + published as u64);
}

#[test]
fn a_small_datagram_is_held_by_its_ring_entries_and_takes_no_slot() {
    let dir = Dir::new();
    let w = open(&dir);
    let readers: Vec<ShmTransport> = (0..3).map(|_| open(&dir)).collect();
    let refs: Vec<&ShmTransport> = readers.iter().collect();
    let free = || lock(&w.tx).free_small.len();
    let before = free();
    let small: Vec<u8> = (0..entry::INLINE).map(|i| i as u8).collect();
    send(&w, &refs, USER_PORT, &small);
    send(&w, &refs, USER_PORT, b"");
    assert_eq!(free(), before, "held by each reader's ring entry");
    send(&w, &refs, USER_PORT, &slotted(7));
    assert_eq!(before - free(), 1, "one byte more: a slot");
    // Through `publish` too (the path of a write to one reader).
    let dest = locator(readers[0].prefix, readers[0].own.token, USER_PORT);
    assert!(w.publish(&dest, b"published"));
    for r in &readers {
        let got: Vec<Vec<u8>> = receive_all(r, USER_PORT).into_iter().map(|g| g.1).collect();
        let mut want = vec![small.clone(), Vec::new(), slotted(7)];
        if r.own.token == readers[0].own.token {
            want.push(b"published".to_vec());
        }
        assert_eq!(got, want);
        assert_eq!(r.stats().malformed, 0);
    }
}

/// Another process's view of the ring entries of `w`'s channel to `r` (what a buggy or
/// hostile writer could write there).
struct Scribbler {
    map: map::Mapping,
    layout: layout::Layout,
    channel: usize,
}

impl Scribbler {
    /// The channel's number, and the view.
    fn of(w: &ShmTransport, r: &ShmTransport) -> (u32, Scribbler) {
        let c = *lock(&w.tx)
            .by_dest
            .get(&(r.own.token, USER_PORT))
            .expect("channel");
        let layout = w.own.layout;
        let channel = layout.channel(c).expect("channel");
        let map = map::Mapping::open(w.segment_path()).expect("map");
        (
            c,
            Scribbler {
                map,
                layout,
                channel,
            },
        )
    }

    /// Ring entry `i`'s word at `field` (a constant of `layout::entry`).
    fn entry_word(&self, i: u32, field: usize) -> &std::sync::atomic::AtomicU32 {
        let at = self.layout.ring_entry(self.channel, i) + field;
        self.map.u32_at(at).expect("word")
    }
}

#[test]
fn an_entry_claiming_to_hold_more_than_it_can_is_dropped_and_counted() {
    let dir = Dir::new();
    let (w, r) = (open(&dir), open(&dir));
    send(&w, &[&r], USER_PORT, b"first");
    assert_eq!(receive_all(&r, USER_PORT).len(), 1);
    let (c, scribbler) = Scribbler::of(&w, &r);
    let word = |i: u32, field: usize| scribbler.entry_word(i, field);
    // Ring index 1: "in the entry itself", one byte longer than an entry holds.
    word(1, entry::SLOT).store(layout::INLINE_SLOT, Ordering::Relaxed);
    word(1, entry::LEN).store(entry::INLINE as u32 + 1, Ordering::Relaxed);
    word(1, entry::STAMP).store(layout::stamp(1), Ordering::Release);
    ring(&r, USER_PORT);
    assert!(receive_all(&r, USER_PORT).is_empty(), "dropped");
    assert_eq!(r.stats().malformed, 1, "counted");
    // The ring goes on after it (the writer skips the index scribbled over).
    {
        let mut tx = lock(&w.tx);
        let ch = tx.channels[c as usize].as_mut().expect("channel");
        ch.entries[1] = layout::INLINE_SLOT;
        ch.tail = 2;
    }
    send(&w, &[&r], USER_PORT, b"third");
    let got: Vec<Vec<u8>> = receive_all(&r, USER_PORT)
        .into_iter()
        .map(|g| g.1)
        .collect();
    assert_eq!(got, vec![b"third".to_vec()]);
}

#[test]
fn a_closed_reader_is_noticed_and_its_segment_is_gone() {
    let dir = Dir::new();
    let (w, r) = (open(&dir), open(&dir));
    send(&w, &[&r], USER_PORT, &slotted(1));
    assert_eq!(dir.segments(), 2);
    drop(r);
    assert_eq!(
        dir.segments(),
        1,
        "a closing participant deletes its segment"
    );
    let free = lock(&w.tx).free_small.len();
    let dest = lock(&w.tx)
        .by_dest
        .keys()
        .next()
        .copied()
        .expect("a channel");
    let mut buf = w.tx_buffer();
    let two = slotted(2);
    buf[..two.len()].copy_from_slice(&two);
    let l = locator(w.prefix, dest.0, USER_PORT);
    w.send(buf, two.len(), &[l], 0).expect("send");
    assert!(lock(&w.tx).by_dest.is_empty(), "the channel is closed");
    assert_eq!(
        lock(&w.tx).free_small.len(),
        free + 1,
        "the unread slot is freed"
    );
}

#[test]
fn segments_of_dead_participants_are_swept_and_live_ones_kept() {
    let dir = Dir::new();
    let live = open(&dir);
    // A segment whose owner is gone: created, and its lock dropped without deleting it (as
    // when a process is killed).
    let params = Params {
        small_count: 1,
        small_size: 64,
        large_count: 1,
        large_size: 64,
        channels: 1,
        ring: 1,
        incoming: 1,
    };
    drop(Segment::create(&dir.0, 0x1234, params, 0o600, None).expect("segment"));
    std::fs::write(dir.0.join("tachyon-not-a-segment"), b"x").expect("other file");
    assert_eq!(dir.segments(), 3);
    let other = open(&dir);
    let mut names: Vec<String> = std::fs::read_dir(&dir.0)
        .expect("dir")
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert!(
        !names.contains(&"tachyon-0000000000001234".to_string()),
        "{names:?}"
    );
    assert!(
        names.contains(&"tachyon-not-a-segment".to_string()),
        "only segments go"
    );
    assert_eq!(names.len(), 3, "the two live segments stay: {names:?}");
    drop((live, other));
}

#[test]
fn segments_are_private_to_their_user() {
    use std::os::unix::fs::PermissionsExt;
    let dir = Dir::new();
    let t = open(&dir);
    let mode = std::fs::metadata(t.segment_path())
        .expect("meta")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn a_hostile_writer_cannot_crash_or_hang_its_reader() {
    let dir = Dir::new();
    let (w, r) = (open(&dir), open(&dir));
    send(&w, &[&r], USER_PORT, b"ok");
    assert_eq!(receive_all(&r, USER_PORT).len(), 1);
    // Another process of the user scribbles over the writer's channels and slots, with
    // numbers chosen to be out of range, and random bytes.
    let scribbler = map::Mapping::open(w.segment_path()).expect("map");
    let l = w.own.layout;
    let channel0 = l.channel(0).expect("channel");
    let mut rng: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    let mut batch = RecvBatch::new(4, 8192);
    let started = Instant::now();
    for round in 0..2000 {
        let word = |off: usize| scribbler.u32_at(off).expect("word");
        // The entry the reader looks at next, and another.
        let head = word(channel0 + channel::HEAD).load(Ordering::Acquire);
        let entry = |i: u32| l.ring_entry(channel0, i);
        match round % 5 {
            0 => {
                // A stamp the reader takes, naming any slot (or the entry itself) and any
                // length.
                let slot = match next() % 2 {
                    0 => layout::INLINE_SLOT,
                    _ => next() as u32,
                };
                word(entry(head) + entry::SLOT).store(slot, Ordering::Relaxed);
                word(entry(head) + entry::LEN).store(next() as u32, Ordering::Relaxed);
                word(entry(head) + entry::STAMP).store(layout::stamp(head), Ordering::Release);
            }
            1 => word(entry(head) + entry::STAMP).store(next() as u32, Ordering::Release),
            2 => word(entry(next() as u32) + (next() as usize % 3) * 4)
                .store(next() as u32, Ordering::Release),
            3 => word(channel0 + channel::EPOCH).store(next() as u32, Ordering::Release),
            _ => {
                let at = (next() as usize % (l.total / 4)) * 4;
                // Not the header: its numbers were copied when the segment was opened.
                if at >= 256 {
                    word(at).store(next() as u32, Ordering::Release);
                }
            }
        }
        // Bounded work per call, whatever the numbers say (rung, or the reader does not look).
        ring(&r, USER_PORT);
        let _ = r.receive(USER_PORT as usize, &mut batch).expect("receive");
        assert!(batch.len() <= 4);
    }
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "no unbounded loop"
    );
    assert!(r.stats().malformed > 0, "bad records are counted");
    // The reader still serves another writer.
    let other = open(&dir);
    send(&other, &[&r], USER_PORT, b"still here");
    let got: Vec<Vec<u8>> = (0..3)
        .flat_map(|_| receive_all(&r, USER_PORT))
        .filter(|(from, _)| *from == locator(other.prefix, other.own.token, USER_PORT))
        .map(|g| g.1)
        .collect();
    assert_eq!(got, vec![b"still here".to_vec()]);
}

/// What a hostile `reader` can do: write into `w`'s segment, on its channel, a head it was
/// never given.
fn scribble_head(w: &ShmTransport, reader: &ShmTransport) {
    let c = *lock(&w.tx)
        .by_dest
        .get(&(reader.own.token, USER_PORT))
        .expect("channel");
    let scribbler = map::Mapping::open(w.segment_path()).expect("map");
    let head = w.own.layout.channel(c).expect("channel") + channel::HEAD;
    scribbler
        .u32_at(head)
        .expect("head")
        .store(1_000_000, Ordering::Release);
}

#[test]
fn a_hostile_reader_loses_its_channel_not_the_writers_slots() {
    let dir = Dir::new();
    let (w, bad, good) = (open(&dir), open(&dir), open(&dir));
    send(&w, &[&bad, &good], USER_PORT, &slotted(b'x'));
    assert_eq!(receive_all(&good, USER_PORT).len(), 1);
    // The reader writes a head it was never given.
    scribble_head(&w, &bad);
    let free = lock(&w.tx).free_small.len();
    // The writer reads a reader's head when that reader's ring looks half full, when its
    // slots run out, and at its periodic sweep (`IDLE_CHECK`): here the sweep, at once.
    w.sweep_channels(&mut lock(&w.tx));
    assert!(w.stats().malformed >= 1);
    assert!(!lock(&w.tx)
        .by_dest
        .contains_key(&(bad.own.token, USER_PORT)));
    send(&w, &[&good], USER_PORT, &slotted(b'y'));
    assert_eq!(receive_all(&good, USER_PORT)[0].1, slotted(b'y'));
    w.sweep_channels(&mut lock(&w.tx));
    assert_eq!(
        lock(&w.tx).free_small.len(),
        free + 1,
        "no slot leaked or freed twice"
    );
}

/// Without a sweep, the writer reads a reader's head once the ring looks half full: a head
/// scribbled there is found by the send that gets that far, and slots a reader released
/// come back to the writer's pool as it sends.
#[test]
fn a_readers_head_is_read_once_its_ring_looks_half_full() {
    let dir = Dir::new();
    let (w, bad, good) = (open(&dir), open(&dir), open(&dir));
    let free = lock(&w.tx).free_small.len();
    // Ring of 8: the first four leave the heads unread.
    for i in 0..4u8 {
        send(&w, &[&good], USER_PORT, &slotted(i));
        assert_eq!(receive_all(&good, USER_PORT).len(), 1);
    }
    assert_eq!(
        lock(&w.tx).free_small.len(),
        free - 4,
        "held until the head is read"
    );
    send(&w, &[&good], USER_PORT, &slotted(4));
    assert_eq!(receive_all(&good, USER_PORT).len(), 1);
    assert_eq!(
        lock(&w.tx).free_small.len(),
        free - 1,
        "the four released, the fifth held"
    );

    send(&w, &[&bad], USER_PORT, b"x");
    scribble_head(&w, &bad);
    for _ in 0..3 {
        send(&w, &[&bad], USER_PORT, b"y");
        assert_eq!(w.stats().malformed, 0, "the head not read yet");
    }
    send(&w, &[&bad], USER_PORT, b"z");
    assert_eq!(w.stats().malformed, 1, "read at half full, and refused");
    assert!(!lock(&w.tx)
        .by_dest
        .contains_key(&(bad.own.token, USER_PORT)));
}

#[test]
fn locators_of_another_host_or_kind_are_skipped() {
    let dir = Dir::new();
    let (a, b) = (open(&dir), open(&dir));
    let mut other_host = locator(a.prefix, b.own.token, USER_PORT);
    other_host.address[0] ^= 0xff;
    let udp = Locator::udp("127.0.0.1:7411".parse().expect("addr"));
    let buf = a.tx_buffer();
    a.send(buf, 4, &[other_host, udp], 0).expect("send");
    assert_eq!(a.stats().skipped_locators, 2);
    assert!(receive_all(&b, USER_PORT).is_empty());
}

#[test]
fn a_segment_that_cannot_be_created_names_itself_and_the_fix() {
    let dir = Dir::new();
    let config = ShmConfig {
        dir: dir.0.join("missing"),
        ..dir.config()
    };
    let e = ShmTransport::open(&config, 8192, false).expect_err("no directory");
    assert!(e.to_string().contains("missing"), "{e}");
    let huge = ShmConfig {
        large_slots: 60_000,
        ..dir.config()
    };
    // 60,000 slots of 1 MiB: beyond the limit of a segment; a ring of 12: not a power of two.
    let e = ShmTransport::open(&huge, 1 << 20, false).expect_err("too large");
    assert!(matches!(e, TransportError::ShmConfig(_)), "{e}");
    let odd = ShmConfig {
        ring: 12,
        ..dir.config()
    };
    let text = ShmTransport::open(&odd, 8192, false)
        .expect_err("odd ring")
        .to_string();
    assert!(
        text.contains("[shm]") && text.contains("ring length 12"),
        "{text}"
    );
    assert_eq!(dir.segments(), 0, "nothing left behind");
}

#[test]
fn a_channel_set_up_anew_for_another_port_is_not_read_on_the_old_one() {
    let dir = Dir::new();
    let (w, r) = (open(&dir), open(&dir));
    send(&w, &[&r], USER_PORT, b"user");
    assert_eq!(receive_all(&r, USER_PORT).len(), 1);
    // The writer takes the channel back and gives its index to the reader's critical port.
    {
        let mut tx = lock(&w.tx);
        let c = *tx.by_dest.get(&(r.own.token, USER_PORT)).expect("channel");
        w.close_channel(&mut tx, c);
    }
    send(&w, &[&r], CRITICAL_PORT, b"critical");
    assert_eq!(
        lock(&w.tx).by_dest.get(&(r.own.token, CRITICAL_PORT)),
        Some(&0),
        "the same index, set up anew"
    );
    assert!(
        receive_all(&r, USER_PORT).is_empty(),
        "not on the user port"
    );
    let got = receive_all(&r, CRITICAL_PORT);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].1, b"critical");
    // And the user port is set up again when used.
    send(&w, &[&r], USER_PORT, b"user again");
    assert_eq!(receive_all(&r, USER_PORT)[0].1, b"user again");
}

// ---- permissions and room: real processes (root only) -------------------------------------

/// Selects what [`probe_child`] does in a process the tests below start.
const PROBE: &str = "TACHYON_SHM_PROBE";

/// Not a test of its own: the body of the processes the root-only tests start (it does
/// nothing when run by the harness). `create:DIR` creates a participant's segment in DIR
/// with the default sizes; `attach:DIR:TOKEN` opens another's. Prints one `PROBE` line.
#[test]
fn probe_child() {
    let Ok(what) = std::env::var(PROBE) else {
        return;
    };
    let mut parts = what.splitn(3, ':');
    let (what, dir) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let dir = PathBuf::from(dir);
    match what {
        "create" => {
            let config = ShmConfig {
                dir: dir.clone(),
                ..ShmConfig::default()
            };
            match ShmTransport::open(&config, 65_536, false) {
                Ok(t) => println!("PROBE ok {}", t.segment_path().display()),
                Err(e) => {
                    let left = std::fs::read_dir(&dir).map_or(0, |d| d.count());
                    println!("PROBE err left={left} {e}");
                }
            }
        }
        "attach" => {
            let token = parts
                .next()
                .and_then(|t| u64::from_str_radix(t, 16).ok())
                .unwrap_or(0);
            match Segment::open(&dir, token) {
                Ok(_) => println!("PROBE ok attached"),
                Err(OpenError::Io(e)) => println!("PROBE err {:?} {e}", e.kind()),
                Err(e) => println!("PROBE err {e}"),
            }
        }
        other => println!("PROBE err unknown probe {other}"),
    }
}

/// Runs `probe` in a process of this test binary, started by `wrapper` (a command and its
/// arguments, the binary's command line appended); returns its `PROBE` line.
fn run_probe(wrapper: &[&str], probe: &str) -> String {
    let uid = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Uid:"))
                .map(|l| l.split_whitespace().next().unwrap_or("").to_owned())
        });
    assert_eq!(
        uid.as_deref(),
        Some("0"),
        "this test needs root (it mounts a tmpfs or runs a process as another user): \
         scripts/test.sh runs it when it runs as root"
    );
    // A copy anyone may run: the checkout may be in a directory only its owner can enter.
    let exe = std::env::current_exe().expect("test binary");
    static N: AtomicUsize = AtomicUsize::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let copy = std::env::temp_dir().join(format!("tachyon-probe-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&copy);
    std::fs::create_dir_all(&copy).expect("probe directory");
    let bin = copy.join("probe");
    std::fs::copy(&exe, &bin).expect("copy the test binary");
    for path in [&copy, &bin] {
        let mut perms = std::fs::metadata(path).expect("probe").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
        std::fs::set_permissions(path, perms).expect("chmod the probe");
    }
    let out = std::process::Command::new(wrapper[0])
        .args(&wrapper[1..])
        .arg(&bin)
        .args(["--exact", "shm::tests::probe_child", "--nocapture"])
        .env(PROBE, probe)
        .output()
        .expect("start the probe");
    let _ = std::fs::remove_dir_all(&copy);
    let stdout = String::from_utf8_lossy(&out.stdout);
    stdout
        .lines()
        .find_map(|l| l.strip_prefix("PROBE "))
        .map(str::to_owned)
        .unwrap_or_else(|| {
            panic!(
                "no PROBE line ({}):\n{stdout}\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            )
        })
}

/// A tmpfs too small for a segment: `fallocate` says ENOSPC at creation (not a SIGBUS at the
/// first write), the error names the segment, its size and the fixes, and nothing is left.
#[test]
#[ignore = "needs root: mounts a tmpfs in a mount namespace of its own (scripts/test.sh runs it as root)"]
fn a_full_tmpfs_is_an_error_naming_the_segment_and_the_fix() {
    let dir = Dir::new();
    let mount = dir.0.join("small");
    std::fs::create_dir_all(&mount).expect("mount point");
    let target = mount.to_str().expect("path");
    // The child sees the tmpfs (256 KiB), nobody else does; it goes with the child.
    let wrapper = [
        "unshare",
        "-m",
        "--propagation",
        "private",
        "sh",
        "-c",
        "mount -t tmpfs -o size=256k tmpfs \"$0\" && exec \"$@\"",
        target,
    ];
    let line = run_probe(&wrapper, &format!("create:{target}"));
    assert!(line.starts_with("err left=0 "), "{line}");
    for part in [
        "create the shared-memory segment",
        target,
        "MiB",
        "has no room for",
        "[shm] large_slots",
        "[transports] shm = false",
    ] {
        assert!(line.contains(part), "{part:?} missing from: {line}");
    }
}

/// Another user can neither create a segment in a directory that is not theirs (the error
/// says so and what to do) nor open a segment of this user (mode 0600).
#[test]
#[ignore = "needs root: runs a process as nobody (scripts/test.sh runs it as root)"]
fn another_user_cannot_create_here_nor_attach_to_this_users_segment() {
    let dir = Dir::new();
    let target = dir.0.to_str().expect("path").to_owned();
    let nobody = [
        "setpriv",
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
    ];
    let line = run_probe(&nobody, &format!("create:{target}"));
    assert!(line.starts_with("err left=0 "), "{line}");
    assert!(
        line.contains(&format!("no permission to create files in {target}"))
            && line.contains("[shm] dir"),
        "{line}"
    );
    // This user's segment, in a directory anyone may search.
    let own = open(&dir);
    let mut perms = std::fs::metadata(&dir.0).expect("dir").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&dir.0, perms).expect("chmod");
    let line = run_probe(&nobody, &format!("attach:{target}:{:016x}", own.own.token));
    assert!(line.starts_with("err PermissionDenied"), "{line}");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(own.segment_path())
            .expect("segment")
            .permissions(),
    );
    assert_eq!(mode & 0o777, 0o600, "owner only");
}

#[test]
fn an_entry_is_read_once_stamped_and_a_channel_set_up_anew_starts_clean() {
    let dir = Dir::new();
    let (w, r) = (open(&dir), open(&dir));
    for d in [b"one", b"two", b"six"] {
        send(&w, &[&r], USER_PORT, d);
    }
    assert_eq!(receive_all(&r, USER_PORT).len(), 3);
    let (c, scribbler) = Scribbler::of(&w, &r);
    let word = |i: u32, field: usize| scribbler.entry_word(i, field);
    // Ring index 3 gets entry 0's slot and length, not yet its stamp: nothing to read.
    word(3, entry::SLOT).store(
        word(0, entry::SLOT).load(Ordering::Relaxed),
        Ordering::Relaxed,
    );
    word(3, entry::LEN).store(3, Ordering::Relaxed);
    ring(&r, USER_PORT);
    assert!(receive_all(&r, USER_PORT).is_empty());
    word(3, entry::STAMP).store(layout::stamp(3), Ordering::Release);
    // A receive that does not block (a busy-polling thread's) looks at the entries
    // themselves, not at the doorbell: read once stamped, before any doorbell rings, and once.
    assert_eq!(receive_all(&r, USER_PORT).len(), 1, "read once stamped");
    ring(&r, USER_PORT);
    assert!(receive_all(&r, USER_PORT).is_empty(), "read once");
    // Set up anew (ring index 0 again): the stamps of the round before are not read again.
    w.close_channel(&mut lock(&w.tx), c);
    send(&w, &[&r], USER_PORT, b"new");
    let got: Vec<Vec<u8>> = receive_all(&r, USER_PORT)
        .into_iter()
        .map(|g| g.1)
        .collect();
    assert_eq!(got, vec![b"new".to_vec()]);
    assert_eq!(r.stats().malformed, 0);
}

#[test]
fn builds_of_another_segment_layout_do_not_reach_each_other_through_segments() {
    let place = "boot|1|2|u0";
    let ours = [layout::VERSION, loan::VERSION];
    assert_eq!(prefix_of(place, ours), prefix_of(place, ours));
    assert_ne!(
        prefix_of(place, ours),
        prefix_of(place, [ours[0] - 1, ours[1]])
    );
    assert_ne!(
        prefix_of(place, ours),
        prefix_of(place, [ours[0], ours[1] + 1])
    );
    assert_ne!(prefix_of(place, ours), prefix_of("boot|1|3|u0", ours));
}
