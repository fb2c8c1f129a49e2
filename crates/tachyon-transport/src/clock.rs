//! The monotonic clock, read cheaply.
//!
//! `std::time::Instant` reads the same clock, but its arithmetic (`elapsed`, `duration_since`:
//! a checked `timespec` subtraction, then a `Duration`) costs more than the read itself, and
//! the runtime reads the clock a few times per sample (callgrind, `docs/hot-path.md`). These
//! give the clocks as nanoseconds, to subtract as integers.

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
