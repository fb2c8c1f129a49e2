//! Watching a receive source a moment before sleeping on it, and only while that pays: a
//! shared-memory doorbell ([`ShmConfig::spin`](crate::shm::ShmConfig::spin)), or any
//! transport's non-blocking receive (the runtime's receive threads, `[threads.receive] spin`).
//!
//! A receive thread that sleeps is woken by the kernel when a datagram comes; on a virtual
//! machine whose vCPU halted meanwhile that costs 35–50 µs, the larger part of a small
//! sample's round trip. Watching for a few microseconds first takes a datagram that follows
//! closely (a reply, a stream) without that wake-up. Where datagrams come further apart than
//! the window (periodic traffic), watching only burns CPU: from the second miss in a row,
//! each miss doubles how many waits go straight to sleep (up to [`MAX_SKIP`]), and the first
//! hit brings watching back.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The most waits that go straight to sleep after misses, before the next watch.
pub const MAX_SKIP: u32 = 64;

/// Looks at the doorbell between two yields of the CPU.
const LOOKS: u32 = 32;

/// When a receive thread watches its source before sleeping.
#[derive(Debug)]
pub struct Spin {
    window: Duration,
    /// Watches in a row that saw nothing.
    misses: u32,
    /// Waits left that sleep at once.
    skip: u32,
}

impl Spin {
    /// Watching for `window` (zero: never).
    pub fn new(window: Duration) -> Spin {
        Spin {
            window,
            misses: 0,
            skip: 0,
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
}

/// Watches a doorbell for up to `window`: `true` as soon as `seq` moves from `seen` (a
/// writer rang), `false` when the window ends or the transport stops. It yields its CPU
/// between looks, so a sender pinned to the same CPU gets to run.
pub(crate) fn watch(seq: &AtomicU32, seen: u32, window: Duration, stopped: &AtomicBool) -> bool {
    let start = Instant::now();
    loop {
        for _ in 0..LOOKS {
            if seq.load(Ordering::Acquire) != seen {
                return true;
            }
            if stopped.load(Ordering::Relaxed) {
                return false;
            }
            std::hint::spin_loop();
        }
        if start.elapsed() >= window {
            return false;
        }
        std::thread::yield_now();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_watch_ends_when_the_bell_rings_or_the_window_closes() {
        let (seq, stopped) = (AtomicU32::new(7), AtomicBool::new(false));
        let start = Instant::now();
        assert!(!watch(&seq, 7, Duration::from_millis(2), &stopped));
        assert!(start.elapsed() >= Duration::from_millis(2));
        assert!(watch(&seq, 6, Duration::from_secs(60), &stopped));
        stopped.store(true, Ordering::Relaxed);
        assert!(!watch(&seq, 7, Duration::from_secs(60), &stopped));
    }
}
