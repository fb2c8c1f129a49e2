//! Listeners: callbacks the runtime calls when a communication status of a DataReader or
//! DataWriter changes.
//!
//! A listener is set with a [`StatusMask`] of the statuses it wants, at creation
//! (`create_datareader_with_listener`, `create_datawriter_with_listener`) or later with
//! `set_listener`. Every method has a default that does nothing, so a listener implements
//! only what it needs.
//!
//! **Listeners run on the participant's driver thread**, the thread that receives and sends
//! for the whole participant, after it released the participant's lock: a listener may call
//! `take`, `read`, `write` or the status getters. Keep them short — while one runs, the
//! participant receives nothing and its timers (heartbeats, deadlines, leases) wait. Hand
//! long work to another thread, or use a [`WaitSet`](crate::WaitSet) instead. A panicking
//! listener is logged and the runtime goes on.
//!
//! As DDS says, a status a listener is called for is read by that call: its `*_change`
//! counts and its changed flag are reset, so a [`StatusCondition`](crate::StatusCondition)
//! does not trigger on it too. DATA_AVAILABLE is reset before `on_data_available` runs.
//! Statuses outside the listener's mask are left for the StatusCondition and the getters.

use crate::publication::DataWriter;
use crate::status::{
    DeadlineMissedStatus, IncompatibleQosStatus, LivelinessChangedStatus, LivelinessLostStatus,
    PublicationMatchedStatus, SampleLostStatus, SampleRejectedStatus, StatusMask,
    SubscriptionMatchedStatus,
};
use crate::subscription::DataReader;

/// Callbacks for the statuses of a [`DataReader<T>`] (see the [module](self) docs: they
/// run on the driver thread and should be short).
#[allow(unused_variables)]
pub trait DataReaderListener<T>: Send + Sync {
    /// DATA_AVAILABLE: new samples or instance-state changes arrived.
    fn on_data_available(&self, reader: &DataReader<T>) {}
    /// SUBSCRIPTION_MATCHED: a writer was matched or unmatched.
    fn on_subscription_matched(&self, reader: &DataReader<T>, status: SubscriptionMatchedStatus) {}
    /// REQUESTED_INCOMPATIBLE_QOS: a writer of the topic does not offer what the reader
    /// requests.
    fn on_requested_incompatible_qos(&self, reader: &DataReader<T>, status: IncompatibleQosStatus) {
    }
    /// LIVELINESS_CHANGED: a matched writer became alive or not alive.
    fn on_liveliness_changed(&self, reader: &DataReader<T>, status: LivelinessChangedStatus) {}
    /// REQUESTED_DEADLINE_MISSED: an instance received no sample within the deadline.
    fn on_requested_deadline_missed(&self, reader: &DataReader<T>, status: DeadlineMissedStatus) {}
    /// SAMPLE_LOST: samples were lost on the way.
    fn on_sample_lost(&self, reader: &DataReader<T>, status: SampleLostStatus) {}
    /// SAMPLE_REJECTED: the reader's resource limits refused a sample.
    fn on_sample_rejected(&self, reader: &DataReader<T>, status: SampleRejectedStatus) {}
}

/// Callbacks for the statuses of a [`DataWriter<T>`] (see the [module](self) docs: they
/// run on the driver thread and should be short).
#[allow(unused_variables)]
pub trait DataWriterListener<T>: Send + Sync {
    /// PUBLICATION_MATCHED: a reader was matched or unmatched.
    fn on_publication_matched(&self, writer: &DataWriter<T>, status: PublicationMatchedStatus) {}
    /// OFFERED_INCOMPATIBLE_QOS: a reader of the topic requests what the writer does not
    /// offer.
    fn on_offered_incompatible_qos(&self, writer: &DataWriter<T>, status: IncompatibleQosStatus) {}
    /// LIVELINESS_LOST: the writer did not assert its liveliness in time.
    fn on_liveliness_lost(&self, writer: &DataWriter<T>, status: LivelinessLostStatus) {}
    /// OFFERED_DEADLINE_MISSED: the writer did not write an instance within its deadline.
    fn on_offered_deadline_missed(&self, writer: &DataWriter<T>, status: DeadlineMissedStatus) {}
}

/// The statuses a reader listener can be called for.
pub const READER_STATUSES: StatusMask = StatusMask::from_bits(
    StatusMask::DATA_AVAILABLE.bits()
        | StatusMask::SUBSCRIPTION_MATCHED.bits()
        | StatusMask::REQUESTED_INCOMPATIBLE_QOS.bits()
        | StatusMask::LIVELINESS_CHANGED.bits()
        | StatusMask::REQUESTED_DEADLINE_MISSED.bits()
        | StatusMask::SAMPLE_LOST.bits()
        | StatusMask::SAMPLE_REJECTED.bits(),
);

/// The statuses a writer listener can be called for.
pub const WRITER_STATUSES: StatusMask = StatusMask::from_bits(
    StatusMask::PUBLICATION_MATCHED.bits()
        | StatusMask::OFFERED_INCOMPATIBLE_QOS.bits()
        | StatusMask::LIVELINESS_LOST.bits()
        | StatusMask::OFFERED_DEADLINE_MISSED.bits(),
);
