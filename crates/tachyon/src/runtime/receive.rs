//! Receive threads (`threads.mode = "threads"`): each serves one user-data receive source
//! alone, blocked in the transport's `receive_wait` (for UDP one `recvfrom`, or a `recvmmsg`
//! while datagrams come in bursts; no epoll), and handles what arrives on its own thread: the
//! protocol under the state lock for one batch, then the datagrams it made due are sent and
//! the listeners with news are called, all before it blocks again. A pong therefore answers
//! with two system calls per round trip (the `recvfrom` that woke it and the `send` of the
//! answer, on a socket connected to the ping), as Cyclone DDS's receive threads do.
//!
//! Before it blocks, a receive thread watches its source for a moment (`[threads.receive]
//! spin`, 20 µs by default): it yields its CPU and asks again, so a reply or the next
//! datagram of a stream is taken without the wake-up of a blocked thread, which costs
//! 35–60 µs on a virtual machine whose vCPU went idle. It watches only while that catches
//! datagrams (`tachyon_transport::spin`): periodic traffic slower than the window soon
//! goes straight to sleep. With it, a 32 B round trip between two processes on two vCPUs
//! took 6.5 µs where blocking at once took 62 µs, for about 90 % of a vCPU per process
//! instead of 37 % while the ping-pong ran (2026-11-27).
//!
//! The timers and discovery stay with the driver (the `timers` thread in this mode); a batch
//! that arms a timer earlier than the driver planned to wake wakes it.

use std::time::Duration as StdDuration;

use tachyon_transport::clock::monotonic_nanos;
use tachyon_transport::spin::{Catch, Deadline, Spin};
use tachyon_transport::{RecvBatch, RxSource, Transport, MAX_UDP_PAYLOAD};
use tachyon_wire::Locator;

use super::driver::BATCH;
use super::lanes::{CRITICAL, MAIN};
use super::{Shared, StateGuard};

/// Serves `source` of transport `transport` until the runtime stops; with `busy_poll`,
/// asks the source without blocking for up to that long before it blocks
/// ([`ThreadSettings::busy_poll`](crate::config::ThreadSettings::busy_poll)); otherwise it
/// watches the source for up to `spin` first, while that catches datagrams
/// ([`ThreadSettings::spin`](crate::config::ThreadSettings::spin)).
pub(super) fn run(
    shared: &Shared,
    transport: usize,
    source: RxSource,
    busy_poll: Option<StdDuration>,
    spin: StdDuration,
) {
    let t = &shared.transports.all()[transport];
    // Slots as large as a UDP datagram can be: peers may send more than we do.
    let mut batch = RecvBatch::new(BATCH, MAX_UDP_PAYLOAD);
    // The critical source's datagrams go to the critical lane (when there is one).
    let lane = shared.lane_for(source.traffic);
    let mut forward = Vec::with_capacity(BATCH);
    // A transport that watches its own sources before blocking is not watched twice.
    let window = match t.watches_before_blocking() {
        true => StdDuration::ZERO,
        false => spin,
    };
    let mut watch = Spin::new(window);
    while !shared.stopped() {
        // When the datagrams were looked for (`None`: not known without a clock read).
        let mut looked_at = None;
        match receive(
            shared,
            t.as_ref(),
            source.id,
            &mut batch,
            busy_poll,
            &mut watch,
            &mut looked_at,
        ) {
            Ok(0) => {
                // Interrupted (the runtime is stopping), or a spurious wake-up.
                if !shared.stopped() {
                    std::thread::sleep(StdDuration::from_millis(1));
                }
            }
            Ok(_) => {
                // The listeners' calls are taken under the batch's lock (one lock for both),
                // made once it is released and what the batch made due is sent.
                let (wake, calls) = {
                    let mut st = shared.lock_lane(lane);
                    let datagrams = batch.iter().enumerate();
                    let wake =
                        handle_locked(shared, &mut st, datagrams, Some(&mut forward), looked_at);
                    (wake, shared.prepare_listeners(&mut st, lane))
                };
                t.handled(source.id);
                // Datagrams that concern the other lane too (rare: multicast, a peer sending
                // to a locator of the other lane) go to that lane's inbox, served by its own
                // thread: this one never takes the other lane's lock (a critical thread
                // would wait for discovery; a main one would hold up the critical lane).
                if !forward.is_empty() {
                    let other = if lane == MAIN { CRITICAL } else { MAIN };
                    shared.forward_datagrams(other, forward.iter().map(|&i| batch.datagram(i)));
                    forward.clear();
                }
                // Its own lane's listeners only: the other lane's threads call theirs.
                shared.dispatch_prepared(lane, calls);
                // Only now: a timers thread woken earlier would take the listener calls of
                // this batch (whoever comes first calls them), away from this thread.
                if wake {
                    shared.wake();
                }
            }
            // An ICMP error of an earlier send, reported once: go on at once.
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => {}
            Err(e) => {
                tracing::debug!(transport = t.name(), source = source.id, error = %e,
                    "receive failed");
                std::thread::sleep(StdDuration::from_millis(1));
            }
        }
    }
}

/// How many empty tries of a busy-polling receive go between two looks at its deadline and
/// at the stop flag.
const SPIN_CHECK_EVERY: u32 = 64;

/// One batch from `source`: spinning on non-blocking receives for up to `busy_poll` first
/// (as long as the runtime runs), or watching it as `watch` says, then blocking. A try that
/// spinning or watching made right after reading the clock (`monotonic_nanos`) puts that
/// reading in `looked_at`: the batch's time, so its handling under the lock reads no clock
/// of its own.
///
/// Why: on the critical path a clock read costs more than alone (about 130 cycles of the
/// TSC against 55 in a loop of reads, 2026-11-28: the vDSO's ordered `rdtsc` waits for what
/// came before it), while spinning it costs nothing anyone waits for; the reading is at most
/// one try older than the datagram (a look at a ring, or one `recvfrom`). Busy-polling over
/// shared memory between two vCPUs, 32 B round trip p50: 1.82 → 1.77 µs.
fn receive(
    shared: &Shared,
    t: &dyn Transport,
    source: usize,
    batch: &mut RecvBatch,
    busy_poll: Option<StdDuration>,
    watch: &mut Spin,
    looked_at: &mut Option<u64>,
) -> std::io::Result<usize> {
    if let Some(spin) = busy_poll {
        let spin = u64::try_from(spin.as_nanos()).unwrap_or(u64::MAX);
        let until = monotonic_nanos().saturating_add(spin);
        let mut tries = 0u32;
        loop {
            match t.receive(source, batch) {
                Ok(0) => {}
                other => return other,
            }
            // The clock at every empty try (the next try's time, above); the deadline and
            // the stop flag at every 64th only. A datagram that arrives waits for the try
            // in progress: a clock read makes a try about twice as long over AF_XDP (a look
            // at the ring's two indices), half a clock read's wait on average, where the
            // read it spares the datagram's handling is a whole one and more.
            let now = monotonic_nanos();
            *looked_at = Some(now);
            tries = tries.wrapping_add(1);
            if tries % SPIN_CHECK_EVERY == 0 && (shared.stopped() || now >= until) {
                break;
            }
            // No `spin_loop` (PAUSE) between tries: the try and the clock read pace the loop
            // already, and a datagram that arrives during a PAUSE waits for it to end (23 ns
            // on the AMD EPYC the benchmarks run on, 2026-11-28; busy-polling shared memory
            // between two vCPUs, p50 1.75 -> 1.66 µs without it). `docs/hot-path.md`.
        }
        *looked_at = None;
    } else if let Some(window) = watch.due() {
        let mut last = std::time::Instant::now();
        let mut deadline = Deadline::new(last, window);
        let mut look = 0u32;
        loop {
            // The CPU first: what this thread waits for was just asked for (an answer is
            // not there yet), and on a CPU shared with its sender the sender runs now
            // (asking first cost a one-vCPU round trip half a microsecond). Looks far apart
            // had another thread run between them: catches right after such a gap say the
            // sender shares this CPU, where blocking costs no wake-up of a halted vCPU and a
            // yield is no sure hand-over (`Spin::caught`). Counting such a look a miss
            // instead was tried: on one vCPU the round trip's p50 grew by 0.5 µs
            // (2026-11-27).
            std::thread::yield_now();
            let now = std::time::Instant::now();
            let at = monotonic_nanos();
            match t.receive(source, batch) {
                Ok(0) => {}
                other => {
                    watch.caught(Catch::of(look, now.duration_since(last)));
                    *looked_at = Some(at);
                    return other;
                }
            }
            // Time another thread had the CPU is not watching (`Deadline`).
            if shared.stopped() || deadline.over(now, now.duration_since(last)) {
                break;
            }
            last = now;
            look += 1;
        }
        // Missed: how far behind the window the datagram came says whether the traffic is
        // periodic (a miss) or an answer that came late (`Spin::missed_by`).
        let ended = std::time::Instant::now();
        let got = t.receive_wait(source, batch);
        if matches!(got, Ok(n) if n > 0) {
            watch.missed_by(ended.elapsed());
        } else {
            watch.record(false);
        }
        return got;
    }
    t.receive_wait(source, batch)
}

/// Hands `datagrams` (each with its index in its batch) to lane `lane` under one lock, and
/// queues what became due (sent once the lock is released). With `forward`, the indices of
/// datagrams that concern the other lane too are put there. Returns whether a timer is now
/// due before the timers thread planned to wake.
pub(super) fn handle<'a>(
    shared: &Shared,
    lane: usize,
    datagrams: impl Iterator<Item = (usize, (&'a Locator, &'a [u8]))>,
    forward: Option<&mut Vec<usize>>,
) -> bool {
    handle_locked(
        shared,
        &mut shared.lock_lane(lane),
        datagrams,
        forward,
        None,
    )
}

/// [`handle`] under the lock `st` of the lane, which the caller releases; the datagrams were
/// looked for at `looked_at` (monotonic nanoseconds), when that is known.
fn handle_locked<'a>(
    shared: &Shared,
    st: &mut StateGuard<'_>,
    datagrams: impl Iterator<Item = (usize, (&'a Locator, &'a [u8]))>,
    mut forward: Option<&mut Vec<usize>>,
    looked_at: Option<u64>,
) -> bool {
    let now = match looked_at {
        Some(at) => shared.now_at(at),
        None => shared.now(),
    };
    let builtin = st.participant.builtin_datagrams();
    for (i, (from, bytes)) in datagrams {
        st.participant.handle_datagram(now, from, bytes);
        if st.participant.take_forward() {
            if let Some(f) = forward.as_deref_mut() {
                f.push(i);
            }
        }
    }
    st.flush(shared, now);
    let only_user = st.participant.builtin_datagrams() == builtin;
    // Dropping the guard sends what the batch made due.
    shared.timer_earlier(st, only_user)
}
