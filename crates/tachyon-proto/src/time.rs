//! Virtual, monotonic time: the only notion of time the protocol has. The runtime converts its
//! clock into [`Instant`]s; the simulator advances them at will.

use core::ops::{Add, AddAssign, Sub};

pub use core::time::Duration;

/// A point in monotonic time, in nanoseconds since an epoch the caller chooses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

impl Instant {
    /// The epoch.
    pub const ZERO: Instant = Instant(0);
    /// The latest representable instant ("never" for timers).
    pub const MAX: Instant = Instant(u64::MAX);

    /// The instant `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: u64) -> Instant {
        Instant(nanos)
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// `self + d`, or `None` past [`Instant::MAX`].
    pub fn checked_add(self, d: Duration) -> Option<Instant> {
        let n = u64::try_from(d.as_nanos()).ok()?;
        self.0.checked_add(n).map(Instant)
    }

    /// `self + d`, clamped at [`Instant::MAX`].
    pub fn saturating_add(self, d: Duration) -> Instant {
        self.checked_add(d).unwrap_or(Instant::MAX)
    }

    /// Time from `earlier` to `self`, zero when `earlier` is later.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}

/// The earlier of two optional times (`None`: never).
#[inline]
pub(crate) fn earliest_of(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The earliest of optional times (`None`: never), without an iterator's bookkeeping (a
/// timer's next deadline is asked after every sample).
#[inline]
pub(crate) fn earliest<const N: usize>(times: [Option<Instant>; N]) -> Option<Instant> {
    times.into_iter().fold(None, earliest_of)
}

impl Add<Duration> for Instant {
    type Output = Instant;
    /// Saturating: time never wraps.
    fn add(self, d: Duration) -> Instant {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating at zero.
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

impl core::fmt::Display for Instant {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{}.{:09}s",
            self.0 / 1_000_000_000,
            self.0 % 1_000_000_000
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates() {
        let t = Instant::from_nanos(5);
        assert_eq!((t + Duration::from_nanos(7)).as_nanos(), 12);
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
        assert_eq!(t - Instant::from_nanos(9), Duration::ZERO);
        assert_eq!(
            Instant::from_nanos(1_500_000_000).to_string(),
            "1.500000000s"
        );
    }
}
