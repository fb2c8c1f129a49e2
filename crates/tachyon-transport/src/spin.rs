//! Watching a receive source a moment before sleeping on it, and only while that pays:
//! shared memory's rings ([`ShmConfig::spin`](crate::shm::ShmConfig::spin)), or any
//! transport's non-blocking receive (the runtime's receive threads, `[threads.receive] spin`).
//!
//! A receive thread that sleeps is woken by the kernel when a datagram comes; on a virtual
//! machine whose vCPU halted meanwhile that costs 35–50 µs, the larger part of a small
//! sample's round trip. Watching for a few microseconds first takes a datagram that follows
//! closely (a reply, a stream) without that wake-up. Where datagrams come further apart than
//! the window (periodic traffic), watching only burns CPU: from the second miss in a row,
//! each miss doubles how many waits go straight to sleep (up to [`MAX_SKIP`]), and the first
//! hit brings watching back.
//!
//! Nor does watching pay where the sender shares the watcher's CPU. There a blocked
//! receiver is woken on a busy CPU, with no halted vCPU to wake, and a yield is no hand-over:
//! between processes of different scheduling groups (sessions, with the kernel's autogroups;
//! services, with their cgroups) the scheduler often gives the CPU straight back to the
//! yielding thread, which then keeps its sender from running for much of the window. Watching
//! made a one-vCPU ping-pong's p99 1.1–1.8× and its p99.9 1.1–1.2× what blocking at once gave
//! (2026-11-27, ping and pong each in its own session, as `bench/run.py` starts them). So a
//! watcher notes whether each datagram it caught came only after a yield that ran another
//! thread ([`Spin::caught`]): after [`SHARED_AFTER`] such catches in a row, waits go straight
//! to sleep, all but one in [`MAX_SKIP`], which watches again to learn whether the sender
//! moved to another CPU (a catch after a yield that ran nothing brings watching back).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The most waits that go straight to sleep after misses, before the next watch.
pub const MAX_SKIP: u32 = 64;

/// Looks at the doorbell between two yields of the CPU.
const LOOKS: u32 = 32;

/// Catches in a row, each only after a yield that ran another thread, from which the
/// sender is taken to share the watcher's CPU.
pub const SHARED_AFTER: u32 = 8;

/// A datagram that came less than this many windows after a watch that missed it counts as
/// no miss ([`Spin::missed_by`]).
pub const NEAR_MISS: u32 = 2;

/// How much longer than its window a watch may last in all, when the time other threads had
/// the CPU is left out of the window ([`Deadline`]).
pub const STRETCH: u32 = 8;

/// When a watch ends: its window after it began, not counting the gaps between looks in
/// which another thread had the CPU, and at most [`STRETCH`] windows after it began. A
/// thread of the watcher's own process that its yield let run (a WaitSet's thread, woken by
/// the datagram the watcher handled, now answering it) would otherwise use up the window
/// before the answer to the answer can come back: the watcher then slept and was woken on a
/// halted vCPU (a two-vCPU 32 B WaitSet ping-pong took 77–85 µs).
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    until: Instant,
    cap: Instant,
}

impl Deadline {
    /// For a watch of `window` beginning at `start`.
    pub fn new(start: Instant, window: Duration) -> Deadline {
        Deadline {
            until: start + window,
            cap: start + window.saturating_mul(STRETCH),
        }
    }

    /// Whether the watch is over at `now`, the look before having been `gap` ago.
    pub fn over(&mut self, now: Instant, gap: Duration) -> bool {
        if gap >= YIELD_RAN_OTHER {
            self.until = (self.until + gap).min(self.cap);
        }
        now >= self.until
    }
}

/// Looks this far apart had another thread run between them: a yield that finds nothing
/// else to run and a receive that finds nothing take about a microsecond together, while a
/// peer on the same CPU that gets the CPU handles a datagram and sends before it yields or
/// blocks (several microseconds).
pub const YIELD_RAN_OTHER: Duration = Duration::from_micros(3);

/// How a watch caught its datagram ([`Spin::caught`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Catch {
    /// At its first look, which came soon (nothing else ran): it was there already.
    AtFirstLook,
    /// At a look that came long after the one before ([`YIELD_RAN_OTHER`] or more): another
    /// thread had the CPU meanwhile, the sender perhaps.
    AfterOther,
    /// At a later look that came soon after the one before: the datagram came while this
    /// thread watched a CPU with nothing else to run, from another CPU.
    WhileWatching,
}

impl Catch {
    /// How a catch at look `look` (0: the first) came, `gap` after the look before it (or
    /// after the watch began).
    pub fn of(look: u32, gap: Duration) -> Catch {
        if gap >= YIELD_RAN_OTHER {
            Catch::AfterOther
        } else if look == 0 {
            Catch::AtFirstLook
        } else {
            Catch::WhileWatching
        }
    }
}

/// When a receive thread watches its source before sleeping.
#[derive(Debug)]
pub struct Spin {
    window: Duration,
    /// Watches in a row that saw nothing.
    misses: u32,
    /// Waits left that sleep at once.
    skip: u32,
    /// Catches in a row that came only after a yield that ran another thread.
    shared: u32,
}

impl Spin {
    /// Watching for `window` (zero: never).
    pub fn new(window: Duration) -> Spin {
        Spin {
            window,
            misses: 0,
            skip: 0,
            shared: 0,
        }
    }

    /// How long this wait should watch first, if at all (a wait that does not counts as
    /// one of those a miss skips).
    pub fn due(&mut self) -> Option<Duration> {
        if self.window.is_zero() {
            return None;
        }
        if self.skip > 0 {
            self.skip -= 1;
            return None;
        }
        Some(self.window)
    }

    /// What the watch saw: a datagram (`hit`) or nothing.
    pub fn record(&mut self, hit: bool) {
        self.shared = 0;
        if hit {
            self.misses = 0;
        } else {
            // One miss alone (a late reply, a preempted peer) changes nothing; from the
            // second in a row: 1, 3, 7 … waits straight to sleep.
            self.misses = self.misses.saturating_add(1);
            self.skip = 1u32
                .checked_shl(self.misses - 1)
                .map_or(MAX_SKIP, |n| (n - 1).min(MAX_SKIP));
        }
    }

    /// The watch caught nothing, and the datagram came `late` after it ended. Only one that
    /// came later than [`NEAR_MISS`] windows counts as a miss (traffic spaced wider than the
    /// window, which watching would only burn CPU for); one that came sooner is an answer
    /// slowed down, most often by a peer that slept because its own watches had missed: had
    /// those counted, both ends of a fast ping-pong between two vCPUs slid together into
    /// sleeping for most of their waits, a slow round trip making the other end miss in turn
    /// (a tenth of its round trips took the 60–80 µs of a wake-up, 2026-11-27).
    pub fn missed_by(&mut self, late: Duration) {
        if late >= self.window.saturating_mul(NEAR_MISS) {
            self.record(false);
        }
    }

    /// The watch caught a datagram, as `how` says. From the [`SHARED_AFTER`]th catch in a
    /// row after another thread ran ([`Catch::AfterOther`]; a catch at the first look counts
    /// neither way) the sender is taken to share this CPU, and all but one in [`MAX_SKIP`]
    /// waits go straight to sleep; a catch of a datagram that came while this thread
    /// watched a CPU with nothing else to run ([`Catch::WhileWatching`]) brings watching
    /// back.
    pub fn caught(&mut self, how: Catch) {
        self.misses = 0;
        match how {
            Catch::WhileWatching => {
                self.shared = 0;
                self.skip = 0;
            }
            Catch::AtFirstLook => {}
            Catch::AfterOther => self.shared = self.shared.saturating_add(1),
        }
        if self.shared >= SHARED_AFTER {
            self.skip = MAX_SKIP - 1;
        }
    }

    /// Whether the sender is taken to share this CPU (waits go straight to sleep).
    pub fn cpu_shared(&self) -> bool {
        self.shared >= SHARED_AFTER
    }
}

/// Watches for up to `window`: how it caught something as soon as `arrived` says so (a
/// writer stamped a ring entry, or rang a doorbell), `None` when the window ends or the
/// transport stops. It yields its CPU between looks, so a sender pinned to the same CPU gets
/// to run.
pub(crate) fn watch(
    mut arrived: impl FnMut() -> bool,
    window: Duration,
    stopped: &AtomicBool,
) -> Option<Catch> {
    let start = Instant::now();
    let mut deadline = Deadline::new(start, window);
    // When the last yield began, and how many were made.
    let mut yielded = start;
    let mut yields = 0u32;
    loop {
        for _ in 0..LOOKS {
            if arrived() {
                return Some(Catch::of(yields, yielded.elapsed()));
            }
            if stopped.load(Ordering::Relaxed) {
                return None;
            }
            std::hint::spin_loop();
        }
        let now = Instant::now();
        if deadline.over(now, now.duration_since(yielded)) {
            return None;
        }
        std::thread::yield_now();
        yielded = now;
        yields += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn misses_back_off_doubling_and_a_hit_brings_watching_back() {
        let mut s = Spin::new(Duration::from_micros(20));
        assert!(s.due().is_some());
        // One miss alone: the next wait watches again.
        s.record(false);
        assert!(s.due().is_some());
        // A second in a row: one wait sleeps at once, then one watches.
        s.record(false);
        assert_eq!(s.due(), None);
        assert!(s.due().is_some());
        s.record(false);
        assert_eq!((0..3).filter(|_| s.due().is_none()).count(), 3);
        assert!(s.due().is_some());
        for _ in 0..20 {
            s.record(false);
        }
        assert_eq!(
            (0..MAX_SKIP).filter(|_| s.due().is_none()).count(),
            MAX_SKIP as usize
        );
        assert!(s.due().is_some());
        s.record(true);
        assert!(s.due().is_some() && s.due().is_some());
        assert_eq!(Spin::new(Duration::ZERO).due(), None);
    }

    #[test]
    fn catches_after_other_threads_ran_send_waits_to_sleep_until_one_comes_while_watching() {
        use Catch::*;
        assert_eq!(Catch::of(0, Duration::from_nanos(500)), AtFirstLook);
        assert_eq!(Catch::of(3, Duration::from_nanos(500)), WhileWatching);
        assert_eq!(Catch::of(0, YIELD_RAN_OTHER), AfterOther);
        assert_eq!(Catch::of(5, Duration::from_micros(40)), AfterOther);
        let mut s = Spin::new(Duration::from_micros(20));
        // Fewer than SHARED_AFTER in a row, or interrupted by one that came while watching:
        // watching. Catches at the first look count neither way.
        for _ in 0..SHARED_AFTER - 1 {
            assert!(s.due().is_some());
            s.caught(AfterOther);
            s.caught(AtFirstLook);
        }
        s.caught(WhileWatching);
        for _ in 0..SHARED_AFTER - 1 {
            assert!(s.due().is_some());
            s.caught(AfterOther);
        }
        assert!(!s.cpu_shared());
        assert!(s.due().is_some());
        // The SHARED_AFTER-th in a row: all but one in MAX_SKIP waits sleep at once.
        s.caught(AfterOther);
        assert!(s.cpu_shared());
        assert_eq!(
            (0..MAX_SKIP - 1).filter(|_| s.due().is_none()).count(),
            (MAX_SKIP - 1) as usize
        );
        // The probe watches; caught after another thread ran again, or at its first look:
        // sleeping goes on.
        for how in [AfterOther, AtFirstLook] {
            assert!(s.due().is_some());
            s.caught(how);
            for _ in 0..MAX_SKIP - 1 {
                assert_eq!(s.due(), None);
            }
        }
        // A probe that catches while watching (the sender moved away) brings watching back.
        assert!(s.due().is_some());
        s.caught(WhileWatching);
        assert!(!s.cpu_shared());
        assert!(s.due().is_some() && s.due().is_some());
        // A probe that catches nothing: the miss rule, and catches count anew.
        let mut s = Spin::new(Duration::from_micros(20));
        for _ in 0..SHARED_AFTER {
            s.caught(AfterOther);
        }
        s.record(false);
        assert!(!s.cpu_shared());
        s.caught(AfterOther);
        assert!(!s.cpu_shared());
        assert!(s.due().is_some());
    }

    #[test]
    fn a_datagram_that_came_soon_after_the_window_is_no_miss() {
        let window = Duration::from_micros(20);
        let mut s = Spin::new(window);
        for _ in 0..10 {
            assert!(s.due().is_some());
            s.missed_by(window * NEAR_MISS - Duration::from_micros(1));
        }
        // Two that came later: the second sends the next wait straight to sleep.
        s.missed_by(window * NEAR_MISS);
        assert!(s.due().is_some());
        s.missed_by(Duration::from_millis(1));
        assert_eq!(s.due(), None);
        assert!(s.due().is_some());
    }

    #[test]
    fn time_another_thread_had_the_cpu_does_not_count_up_to_a_stretch() {
        let start = Instant::now();
        let us = Duration::from_micros;
        let mut d = Deadline::new(start, us(20));
        // Short gaps: the window as it is.
        assert!(!d.over(start + us(10), us(1)));
        assert!(d.over(start + us(20), us(1)));
        // A long gap moves the end by its length.
        let mut d = Deadline::new(start, us(20));
        assert!(!d.over(start + us(25), us(10)));
        assert!(d.over(start + us(30), us(1)));
        // At most STRETCH windows in all.
        let mut d = Deadline::new(start, us(20));
        for i in 1..100u64 {
            if d.over(start + us(20 * i), us(20)) {
                assert_eq!(i, u64::from(STRETCH));
                return;
            }
        }
        panic!("the watch never ended");
    }

    #[test]
    fn a_watch_ends_when_the_bell_rings_or_the_window_closes() {
        let (seq, stopped) = (AtomicU32::new(7), AtomicBool::new(false));
        let start = Instant::now();
        let seq = &seq;
        let rang = |seen: u32| move || seq.load(Ordering::Acquire) != seen;
        assert_eq!(watch(rang(7), Duration::from_millis(2), &stopped), None);
        assert!(start.elapsed() >= Duration::from_millis(2));
        assert_eq!(
            watch(rang(6), Duration::from_secs(60), &stopped),
            Some(Catch::AtFirstLook)
        );
        stopped.store(true, Ordering::Relaxed);
        assert_eq!(watch(rang(7), Duration::from_secs(60), &stopped), None);
    }
}
