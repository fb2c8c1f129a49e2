//! The DCPS communication statuses of writers, readers and topics, as plain values, and
//! [`StatusMask`], the set of status kinds conditions and listeners select.
//!
//! Each status is read with the endpoint's `get_<status>_status()`, which returns it and
//! resets its `*_change` fields and its changed flag (what a [`StatusCondition`] triggers on),
//! as DDS 1.4 2.2.4.1 says.
//!
//! [`StatusCondition`]: crate::condition::StatusCondition

use std::ops::{BitAnd, BitOr, BitOrAssign, Not};

use tachyon_cdr::KeyHash;
use tachyon_proto::qos::QosPolicyId;
use tachyon_wire::Guid;

pub use tachyon_proto::history::RejectReason;

/// A set of communication status kinds (DDS `StatusMask`; a single kind is a `StatusKind`).
/// The bits are those of the DDS specification, so masks convert to and from other vendors'.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct StatusMask(u32);

/// One communication status kind: a [`StatusMask`] with one bit.
pub type StatusKind = StatusMask;

impl StatusMask {
    /// No status.
    pub const NONE: StatusMask = StatusMask(0);
    /// INCONSISTENT_TOPIC (topics): a remote endpoint uses the topic's name with another type.
    pub const INCONSISTENT_TOPIC: StatusMask = StatusMask(1 << 0);
    /// OFFERED_DEADLINE_MISSED (writers).
    pub const OFFERED_DEADLINE_MISSED: StatusMask = StatusMask(1 << 1);
    /// REQUESTED_DEADLINE_MISSED (readers).
    pub const REQUESTED_DEADLINE_MISSED: StatusMask = StatusMask(1 << 2);
    /// OFFERED_INCOMPATIBLE_QOS (writers).
    pub const OFFERED_INCOMPATIBLE_QOS: StatusMask = StatusMask(1 << 5);
    /// REQUESTED_INCOMPATIBLE_QOS (readers).
    pub const REQUESTED_INCOMPATIBLE_QOS: StatusMask = StatusMask(1 << 6);
    /// SAMPLE_LOST (readers).
    pub const SAMPLE_LOST: StatusMask = StatusMask(1 << 7);
    /// SAMPLE_REJECTED (readers).
    pub const SAMPLE_REJECTED: StatusMask = StatusMask(1 << 8);
    /// DATA_ON_READERS (subscribers): some reader of the subscriber has new data.
    pub const DATA_ON_READERS: StatusMask = StatusMask(1 << 9);
    /// DATA_AVAILABLE (readers): new data or instance-state changes since the last read/take.
    pub const DATA_AVAILABLE: StatusMask = StatusMask(1 << 10);
    /// LIVELINESS_LOST (writers).
    pub const LIVELINESS_LOST: StatusMask = StatusMask(1 << 11);
    /// LIVELINESS_CHANGED (readers).
    pub const LIVELINESS_CHANGED: StatusMask = StatusMask(1 << 12);
    /// PUBLICATION_MATCHED (writers).
    pub const PUBLICATION_MATCHED: StatusMask = StatusMask(1 << 13);
    /// SUBSCRIPTION_MATCHED (readers).
    pub const SUBSCRIPTION_MATCHED: StatusMask = StatusMask(1 << 14);
    /// Every status kind (the default of a StatusCondition's enabled statuses).
    pub const ALL: StatusMask = StatusMask(0x7fe7);

    /// The mask with these DDS bits (unknown bits are kept, and never raised).
    pub const fn from_bits(bits: u32) -> StatusMask {
        StatusMask(bits)
    }

    /// The DDS bits.
    pub const fn bits(self) -> u32 {
        self.0
    }

    /// Whether every kind of `other` is in the mask.
    pub const fn contains(self, other: StatusMask) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether some kind of `other` is in the mask.
    pub const fn intersects(self, other: StatusMask) -> bool {
        self.0 & other.0 != 0
    }

    /// Whether the mask holds no kind.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The single kinds of the mask, lowest bit first.
    pub fn kinds(self) -> impl Iterator<Item = StatusKind> {
        (0..32)
            .map(|b| StatusMask(1 << b))
            .filter(move |k| self.intersects(*k))
    }
}

impl BitOr for StatusMask {
    type Output = StatusMask;
    fn bitor(self, rhs: StatusMask) -> StatusMask {
        StatusMask(self.0 | rhs.0)
    }
}

impl BitOrAssign for StatusMask {
    fn bitor_assign(&mut self, rhs: StatusMask) {
        self.0 |= rhs.0;
    }
}

impl BitAnd for StatusMask {
    type Output = StatusMask;
    fn bitand(self, rhs: StatusMask) -> StatusMask {
        StatusMask(self.0 & rhs.0)
    }
}

impl Not for StatusMask {
    type Output = StatusMask;
    fn not(self) -> StatusMask {
        StatusMask(!self.0)
    }
}

/// INCONSISTENT_TOPIC: remote writers and readers found on the topic's name with another
/// type name (counted once per remote endpoint, as Tachyon does not use DCPSTopic).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InconsistentTopicStatus {
    /// Inconsistent remote endpoints found so far.
    pub total_count: u32,
    /// Change of `total_count` since the status was last read.
    pub total_count_change: u32,
}

/// PUBLICATION_MATCHED.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PublicationMatchedStatus {
    /// Readers ever matched.
    pub total_count: u32,
    /// Change of `total_count` since the status was last read.
    pub total_count_change: u32,
    /// Readers matched now.
    pub current_count: u32,
    /// Change of `current_count` since the status was last read.
    pub current_count_change: i32,
    /// The last reader matched or unmatched.
    pub last_subscription_handle: Option<Guid>,
}

/// SUBSCRIPTION_MATCHED.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubscriptionMatchedStatus {
    /// Writers ever matched.
    pub total_count: u32,
    /// Change of `total_count` since the status was last read.
    pub total_count_change: u32,
    /// Writers matched now.
    pub current_count: u32,
    /// Change of `current_count` since the status was last read.
    pub current_count_change: i32,
    /// The last writer matched or unmatched.
    pub last_publication_handle: Option<Guid>,
}

/// OFFERED_INCOMPATIBLE_QOS / REQUESTED_INCOMPATIBLE_QOS.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IncompatibleQosStatus {
    /// Remote endpoints found incompatible so far.
    pub total_count: u32,
    /// Change of `total_count` since the status was last read.
    pub total_count_change: u32,
    /// The policy found incompatible last.
    pub last_policy_id: Option<QosPolicyId>,
    /// How often each policy was found incompatible.
    pub policies: Vec<(QosPolicyId, u32)>,
}

/// OFFERED_INCOMPATIBLE_QOS (DDS name of [`IncompatibleQosStatus`] on writers).
pub type OfferedIncompatibleQosStatus = IncompatibleQosStatus;
/// REQUESTED_INCOMPATIBLE_QOS (DDS name of [`IncompatibleQosStatus`] on readers).
pub type RequestedIncompatibleQosStatus = IncompatibleQosStatus;

/// LIVELINESS_CHANGED.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LivelinessChangedStatus {
    /// Matched writers alive.
    pub alive_count: u32,
    /// Matched writers not alive.
    pub not_alive_count: u32,
    /// Change of `alive_count` since the status was last read.
    pub alive_count_change: i32,
    /// Change of `not_alive_count` since the status was last read.
    pub not_alive_count_change: i32,
    /// The writer that changed last.
    pub last_publication_handle: Option<Guid>,
}

/// LIVELINESS_LOST.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LivelinessLostStatus {
    /// Times the writer failed to assert its liveliness in time.
    pub total_count: u32,
    /// Change of `total_count` since the status was last read.
    pub total_count_change: u32,
}

/// OFFERED_DEADLINE_MISSED / REQUESTED_DEADLINE_MISSED.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeadlineMissedStatus {
    /// Deadlines missed so far (over all instances).
    pub total_count: u32,
    /// Change of `total_count` since the status was last read.
    pub total_count_change: u32,
    /// The instance that missed its deadline last.
    pub last_instance_handle: Option<KeyHash>,
}

/// OFFERED_DEADLINE_MISSED (DDS name of [`DeadlineMissedStatus`] on writers).
pub type OfferedDeadlineMissedStatus = DeadlineMissedStatus;
/// REQUESTED_DEADLINE_MISSED (DDS name of [`DeadlineMissedStatus`] on readers).
pub type RequestedDeadlineMissedStatus = DeadlineMissedStatus;

/// SAMPLE_LOST.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleLostStatus {
    /// Samples lost so far.
    pub total_count: u64,
    /// Change of `total_count` since the status was last read.
    pub total_count_change: u64,
}

/// SAMPLE_REJECTED.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleRejectedStatus {
    /// Samples rejected so far.
    pub total_count: u32,
    /// Change of `total_count` since the status was last read.
    pub total_count_change: u32,
    /// Why the last sample was rejected (`None`: NOT_REJECTED, nothing rejected yet).
    pub last_reason: Option<RejectReason>,
    /// The instance of the last rejected sample.
    pub last_instance_handle: Option<KeyHash>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn masks_combine_and_split() {
        let m = StatusMask::DATA_AVAILABLE | StatusMask::SUBSCRIPTION_MATCHED;
        assert!(m.contains(StatusMask::DATA_AVAILABLE));
        assert!(!m.contains(StatusMask::ALL));
        assert!(StatusMask::ALL.contains(m));
        assert_eq!(
            m.kinds().collect::<Vec<_>>(),
            [StatusMask::DATA_AVAILABLE, StatusMask::SUBSCRIPTION_MATCHED]
        );
        assert_eq!(
            (m & !StatusMask::DATA_AVAILABLE),
            StatusMask::SUBSCRIPTION_MATCHED
        );
        assert_eq!(StatusMask::SUBSCRIPTION_MATCHED.bits(), 0x4000);
        let every = [
            StatusMask::INCONSISTENT_TOPIC,
            StatusMask::OFFERED_DEADLINE_MISSED,
            StatusMask::REQUESTED_DEADLINE_MISSED,
            StatusMask::OFFERED_INCOMPATIBLE_QOS,
            StatusMask::REQUESTED_INCOMPATIBLE_QOS,
            StatusMask::SAMPLE_LOST,
            StatusMask::SAMPLE_REJECTED,
            StatusMask::DATA_ON_READERS,
            StatusMask::DATA_AVAILABLE,
            StatusMask::LIVELINESS_LOST,
            StatusMask::LIVELINESS_CHANGED,
            StatusMask::PUBLICATION_MATCHED,
            StatusMask::SUBSCRIPTION_MATCHED,
        ];
        let all = every.iter().fold(StatusMask::NONE, |a, k| a | *k);
        assert_eq!(all, StatusMask::ALL);
    }
}
