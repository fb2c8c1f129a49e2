//! Timestamps, durations and counts.

use crate::bytes::{Codec, Reader, Writer};
use crate::error::{EmitError, WireError};
use std::fmt;

/// An RTPS timestamp: seconds plus a fraction in units of 2^-32 s.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Time {
    /// Whole seconds since the epoch.
    pub seconds: i32,
    /// Fraction of a second in 2^-32 s.
    pub fraction: u32,
}

impl Time {
    /// TIME_ZERO.
    pub const ZERO: Time = Time {
        seconds: 0,
        fraction: 0,
    };
    /// TIME_INVALID.
    pub const INVALID: Time = Time {
        seconds: -1,
        fraction: 0xffff_ffff,
    };
    /// TIME_INFINITE.
    pub const INFINITE: Time = Time {
        seconds: 0x7fff_ffff,
        fraction: 0xffff_ffff,
    };

    /// The fraction converted to nanoseconds (rounded down).
    #[inline]
    pub const fn nanos(self) -> u32 {
        ((self.fraction as u64 * 1_000_000_000) >> 32) as u32
    }
}

/// A duration as sent in QoS parameters: seconds plus a fraction field.
///
/// RTPS defines the second field as 2^-32 s fractions; some vendors send nanoseconds. The raw
/// value is kept so that it re-emits exactly; interpretation belongs to the protocol layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Duration {
    /// Whole seconds.
    pub seconds: i32,
    /// Sub-second part as sent.
    pub fraction: u32,
}

impl Duration {
    /// DURATION_ZERO.
    pub const ZERO: Duration = Duration {
        seconds: 0,
        fraction: 0,
    };
    /// DURATION_INFINITE.
    pub const INFINITE: Duration = Duration {
        seconds: 0x7fff_ffff,
        fraction: 0xffff_ffff,
    };
}

/// A monotonically increasing counter (HEARTBEAT, ACKNACK, ...).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Count(pub i32);

impl Codec for Time {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Time {
            seconds: r.i32()?,
            fraction: r.u32()?,
        })
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.i32(self.seconds)?;
        w.u32(self.fraction)
    }
}

impl Codec for Duration {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Duration {
            seconds: r.i32()?,
            fraction: r.u32()?,
        })
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.i32(self.seconds)?;
        w.u32(self.fraction)
    }
}

impl Codec for Count {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(Count(r.i32()?))
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.i32(self.0)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::INVALID => f.write_str("invalid"),
            Self::INFINITE => f.write_str("infinite"),
            t => write!(f, "{}.{:09}", t.seconds, t.nanos()),
        }
    }
}

impl fmt::Display for Duration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if *self == Self::INFINITE {
            f.write_str("infinite")
        } else {
            write!(f, "{}s+{}", self.seconds, self.fraction)
        }
    }
}
