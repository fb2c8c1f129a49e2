//! What the protocol tells the application: [`Event`]s, polled with `poll_event` after the
//! transmits and the timeout (DESIGN.md section 2). They map onto the DCPS communication statuses.

use tachyon_cdr::KeyHash;
use tachyon_wire::{EntityId, Guid, GuidPrefix};

use crate::discovery::ParticipantLostReason;
use crate::qos::QosPolicyId;

use crate::history::RejectReason;

/// Something the application may want to react to. `writer`/`reader` fields without a GUID are
/// the local endpoint's entity id (its handle inside the participant).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Event {
    /// DATA_AVAILABLE: the reader's cache received new samples or instance-state changes.
    DataAvailable {
        /// The local reader.
        reader: EntityId,
    },
    /// PUBLICATION_MATCHED: a remote reader was matched with (or unmatched from) a writer.
    PublicationMatched {
        /// The local writer.
        writer: EntityId,
        /// The remote reader.
        remote: Guid,
        /// `true` when matched, `false` when unmatched.
        matched: bool,
        /// Readers matched now.
        current_count: usize,
    },
    /// SUBSCRIPTION_MATCHED: a remote writer was matched with (or unmatched from) a reader.
    SubscriptionMatched {
        /// The local reader.
        reader: EntityId,
        /// The remote writer.
        remote: Guid,
        /// `true` when matched, `false` when unmatched.
        matched: bool,
        /// Writers matched now.
        current_count: usize,
    },
    /// SAMPLE_LOST: a best-effort reader saw sequence numbers skipped, or a reliable reader was
    /// told samples it never received are no longer available.
    SampleLost {
        /// The local reader.
        reader: EntityId,
        /// The writer whose samples were lost.
        writer: Guid,
        /// How many were lost this time.
        count: u64,
    },
    /// SAMPLE_REJECTED: the reader's resource limits refused a sample.
    SampleRejected {
        /// The local reader.
        reader: EntityId,
        /// Which limit.
        reason: RejectReason,
        /// The instance the sample belonged to.
        instance: KeyHash,
    },
    /// OFFERED_DEADLINE_MISSED: the writer did not write an instance within its deadline.
    OfferedDeadlineMissed {
        /// The local writer.
        writer: EntityId,
        /// The late instance.
        instance: KeyHash,
    },
    /// REQUESTED_DEADLINE_MISSED: no sample of an instance arrived within the deadline.
    RequestedDeadlineMissed {
        /// The local reader.
        reader: EntityId,
        /// The late instance.
        instance: KeyHash,
    },
    /// LIVELINESS_LOST: a manual-liveliness writer did not assert itself within its lease.
    LivelinessLost {
        /// The local writer.
        writer: EntityId,
    },
    /// LIVELINESS_CHANGED: a matched writer became alive or not alive for a reader.
    LivelinessChanged {
        /// The local reader.
        reader: EntityId,
        /// The remote writer.
        writer: Guid,
        /// Its new state.
        alive: bool,
        /// Matched writers alive now.
        alive_count: usize,
        /// Matched writers not alive now.
        not_alive_count: usize,
    },
    /// A remote participant was discovered (SPDP).
    ParticipantDiscovered {
        /// Its GUID prefix.
        participant: GuidPrefix,
    },
    /// A discovered remote participant announced changed data (QoS, locators, user data).
    ParticipantUpdated {
        /// Its GUID prefix.
        participant: GuidPrefix,
    },
    /// A remote participant is gone: its endpoints were unmatched and forgotten.
    ParticipantLost {
        /// Its GUID prefix.
        participant: GuidPrefix,
        /// Lease expiry or announced deletion.
        reason: ParticipantLostReason,
    },
    /// A remote writer was discovered (SEDP, DCPSPublication).
    PublicationDiscovered {
        /// Its GUID.
        remote: Guid,
    },
    /// A discovered remote writer announced changed data (QoS, partitions, locators).
    PublicationUpdated {
        /// Its GUID.
        remote: Guid,
    },
    /// A remote writer was withdrawn or its participant lost.
    PublicationLost {
        /// Its GUID.
        remote: Guid,
    },
    /// A remote reader was discovered (SEDP, DCPSSubscription).
    SubscriptionDiscovered {
        /// Its GUID.
        remote: Guid,
    },
    /// A discovered remote reader announced changed data (QoS, partitions, locators).
    SubscriptionUpdated {
        /// Its GUID.
        remote: Guid,
    },
    /// A remote reader was withdrawn or its participant lost.
    SubscriptionLost {
        /// Its GUID.
        remote: Guid,
    },
    /// OFFERED_INCOMPATIBLE_QOS: a reader of the writer's topic requests what it does not
    /// offer; the policies are named (the status's `last_policy_id` is the first).
    OfferedIncompatibleQos {
        /// The local writer.
        writer: EntityId,
        /// The reader it cannot match.
        remote: Guid,
        /// The incompatible policies.
        policies: Vec<QosPolicyId>,
    },
    /// REQUESTED_INCOMPATIBLE_QOS: a writer of the reader's topic does not offer what it
    /// requests.
    RequestedIncompatibleQos {
        /// The local reader.
        reader: EntityId,
        /// The writer it cannot match.
        remote: Guid,
        /// The incompatible policies.
        policies: Vec<QosPolicyId>,
    },
    /// INCONSISTENT_TOPIC: a remote writer or reader was discovered on the name of a local
    /// topic ([`Participant::add_local_topic`](crate::Participant::add_local_topic)) with
    /// another type name. Raised once per remote endpoint (when it is discovered, or when a
    /// local topic of that name is added later); the two never match.
    InconsistentTopic {
        /// The topic name.
        topic: String,
        /// The local topic's type name.
        type_name: String,
        /// The remote writer or reader.
        remote: Guid,
    },
}
