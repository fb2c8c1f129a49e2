//! The monotonic clock, read cheaply.
//!
//! `std::time::Instant` reads the same clock, but its arithmetic (`elapsed`, `duration_since`:
//! a checked `timespec` subtraction, then a `Duration`) costs more than the read itself, and
//! the runtime reads the clock a few times per sample (callgrind, `docs/hot-path.md`). These
//! give the clocks as nanoseconds, to subtract as integers.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::Instant;

/// `CLOCK_MONOTONIC` in nanoseconds (the clock of `std::time::Instant`).
pub fn monotonic_nanos() -> u64 {
    crate::sys::clock_nanos(libc::CLOCK_MONOTONIC).unwrap_or_else(fallback)
}

/// `CLOCK_MONOTONIC_COARSE` in nanoseconds: the time of the last tick (1 to 4 ms old), read
/// without looking at the hardware clock — for checks that run about once a second.
pub fn coarse_nanos() -> u64 {
    crate::sys::clock_nanos(libc::CLOCK_MONOTONIC_COARSE).unwrap_or_else(fallback)
}

/// `CLOCK_REALTIME` in nanoseconds since the Unix epoch (the clock of
/// `std::time::SystemTime`), zero before 1970.
pub fn realtime_nanos() -> u64 {
    crate::sys::clock_nanos(libc::CLOCK_REALTIME).unwrap_or_else(|| {
        let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        since.map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    })
}

/// The wall clock, derived from a reading of the monotonic clock: one clock read where a
/// write needs both (the protocol's timers run on the monotonic clock; a sample's source
/// timestamp is the wall clock's).
///
/// Linux keeps `CLOCK_REALTIME` as `CLOCK_MONOTONIC` plus an offset that only a step of the
/// wall clock changes (`settimeofday`, `clock_settime`, a leap second): NTP's slewing
/// adjusts both clocks' rate alike. The offset is read again once [`WallClock::REFRESH`] has
/// passed, so a step is followed within that time.
#[derive(Debug)]
pub struct WallClock {
    /// `CLOCK_REALTIME - CLOCK_MONOTONIC`, in nanoseconds (wrapping).
    offset: AtomicU64,
    /// The monotonic clock when the offset was read.
    read_at: AtomicU64,
}

impl WallClock {
    /// How long an offset is used before it is read again.
    pub const REFRESH: u64 = 10_000_000;

    /// A wall clock, its offset read now.
    pub fn new() -> WallClock {
        let (offset, at) = Self::read_offset();
        WallClock {
            offset: AtomicU64::new(offset),
            read_at: AtomicU64::new(at),
        }
    }

    /// `CLOCK_REALTIME` nanoseconds at the moment `CLOCK_MONOTONIC` read `monotonic`.
    pub fn at(&self, monotonic: u64) -> u64 {
        if monotonic.saturating_sub(self.read_at.load(Ordering::Relaxed)) >= Self::REFRESH {
            let (offset, at) = Self::read_offset();
            self.offset.store(offset, Ordering::Relaxed);
            self.read_at.store(at, Ordering::Relaxed);
        }
        monotonic.wrapping_add(self.offset.load(Ordering::Relaxed))
    }

    /// The offset (the wall clock read between two monotonic readings, set against their
    /// middle), and when it was read.
    fn read_offset() -> (u64, u64) {
        let before = monotonic_nanos();
        let wall = realtime_nanos();
        let after = monotonic_nanos();
        let middle = before + after.saturating_sub(before) / 2;
        (wall.wrapping_sub(middle), after)
    }
}

impl Default for WallClock {
    fn default() -> WallClock {
        WallClock::new()
    }
}

/// Not expected on Linux: a clock that keeps counting from the first call, so that what
/// compares readings keeps working.
fn fallback() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    u64::try_from(START.get_or_init(Instant::now).elapsed().as_nanos()).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clocks_move_forward_together() {
        let a = monotonic_nanos();
        let c = coarse_nanos();
        std::thread::sleep(std::time::Duration::from_millis(20));
        let b = monotonic_nanos();
        let d = coarse_nanos();
        assert!(b - a >= 20_000_000, "{a} then {b}");
        assert!(d > c, "{c} then {d}");
        // The coarse clock is the monotonic one as of the last tick.
        assert!(d <= b && b - d < 100_000_000, "coarse {d}, precise {b}");
    }

    #[test]
    fn the_wall_clock_derived_from_a_monotonic_reading_is_the_realtime_clock() {
        let clock = WallClock::new();
        for _ in 0..3 {
            let before = realtime_nanos();
            let t = clock.at(monotonic_nanos());
            let after = realtime_nanos();
            // Within the readings, give or take the offset's own uncertainty (half the
            // time between its two monotonic readings: microseconds at most).
            let slack = 1_000_000;
            assert!(
                before - slack <= t && t <= after + slack,
                "{before} <= {t} <= {after}"
            );
            std::thread::sleep(std::time::Duration::from_millis(12));
        }
        // Past REFRESH, the offset was read again.
        assert!(clock.read_at.load(Ordering::Relaxed) > monotonic_nanos() - 20_000_000);
    }

    #[test]
    fn the_realtime_clock_is_the_system_time() {
        let before = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let t = u128::from(realtime_nanos());
        let after = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        assert!(before <= t && t <= after, "{before} <= {t} <= {after}");
    }
}
