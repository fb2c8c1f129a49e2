//! The DCPS communication statuses of writers and readers, as plain values.

use tachyon_proto::qos::QosPolicyId;
use tachyon_wire::Guid;

/// PUBLICATION_MATCHED.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PublicationMatchedStatus {
    /// Readers ever matched.
    pub total_count: u32,
    /// Readers matched now.
    pub current_count: u32,
    /// The last reader matched or unmatched.
    pub last_subscription_handle: Option<Guid>,
}

/// SUBSCRIPTION_MATCHED.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubscriptionMatchedStatus {
    /// Writers ever matched.
    pub total_count: u32,
    /// Writers matched now.
    pub current_count: u32,
    /// The last writer matched or unmatched.
    pub last_publication_handle: Option<Guid>,
}

/// OFFERED_INCOMPATIBLE_QOS / REQUESTED_INCOMPATIBLE_QOS.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IncompatibleQosStatus {
    /// Remote endpoints found incompatible so far.
    pub total_count: u32,
    /// The policy found incompatible last.
    pub last_policy_id: Option<QosPolicyId>,
    /// How often each policy was found incompatible.
    pub policies: Vec<(QosPolicyId, u32)>,
}

/// LIVELINESS_CHANGED.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LivelinessChangedStatus {
    /// Matched writers alive.
    pub alive_count: u32,
    /// Matched writers not alive.
    pub not_alive_count: u32,
    /// The writer that changed last.
    pub last_publication_handle: Option<Guid>,
}

/// SAMPLE_LOST.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleLostStatus {
    /// Samples lost so far.
    pub total_count: u64,
}

/// Counters of missed deadlines (OFFERED/REQUESTED_DEADLINE_MISSED) and lost liveliness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CountStatus {
    /// How often it happened.
    pub total_count: u64,
}

/// Every status of one writer or reader.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EndpointStatus {
    /// PUBLICATION_MATCHED (writers).
    pub publication_matched: PublicationMatchedStatus,
    /// SUBSCRIPTION_MATCHED (readers).
    pub subscription_matched: SubscriptionMatchedStatus,
    /// OFFERED_INCOMPATIBLE_QOS (writers) or REQUESTED_INCOMPATIBLE_QOS (readers).
    pub incompatible_qos: IncompatibleQosStatus,
    /// LIVELINESS_CHANGED (readers).
    pub liveliness_changed: LivelinessChangedStatus,
    /// LIVELINESS_LOST (writers).
    pub liveliness_lost: CountStatus,
    /// OFFERED/REQUESTED_DEADLINE_MISSED.
    pub deadline_missed: CountStatus,
    /// SAMPLE_LOST (readers).
    pub sample_lost: SampleLostStatus,
    /// SAMPLE_REJECTED (readers).
    pub sample_rejected: CountStatus,
}
