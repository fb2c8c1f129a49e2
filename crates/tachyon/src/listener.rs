//! Listeners: callbacks the runtime calls when a communication status changes.
//!
//! A listener is set with a [`StatusMask`] of the statuses it wants, at creation
//! (`create_datareader_with_listener`, `create_datawriter_with_listener`,
//! `create_subscriber_with_listener`, `create_publisher_with_listener`,
//! `create_topic_with_listener`) or later with `set_listener`. Every method has a default
//! that does nothing, so a listener implements only what it needs.
//!
//! **The cascade** (DDS 1.4 2.2.4.2.3): a status change of a reader or writer goes to its own
//! listener if that is enabled for the status; otherwise to its Subscriber's
//! ([`SubscriberListener`]) or Publisher's ([`PublisherListener`]) listener if enabled,
//! otherwise to the participant's ([`DomainParticipantListener`]); a topic's
//! INCONSISTENT_TOPIC goes to its [`TopicListener`], else to the participant's. Those
//! listeners receive the endpoint as an [`AnyDataReader`] / [`AnyDataWriter`] (its type is
//! not known to them): compare it with your typed readers (`any == reader`) to read from
//! the right one.
//!
//! **DATA_ON_READERS** (DDS 2.2.4.4): new data in a reader also raises DATA_ON_READERS on
//! its Subscriber. When the Subscriber's listener (or else the participant's) is enabled for
//! DATA_ON_READERS, its `on_data_on_readers` is called *instead of* any `on_data_available`,
//! with the subscriber's readers that hold new data (DDS passes the Subscriber; the readers
//! are what a listener looks up with it).
//!
//! **Listeners run on the participant's runtime threads**: the receive thread that received
//! the data, or the timers thread for what a timer or discovery changed (the driver thread in
//! driver mode; inside `run_once` in single-thread mode), one listener call at a time per
//! participant, after the participant's lock was released: a listener may call `take`,
//! `read`, `write` or the status getters. Keep them short — while one runs, the thread that
//! called it receives nothing (or its timers wait). Hand long work to another thread, or use
//! a [`WaitSet`](crate::WaitSet) instead. A panicking listener is logged and the runtime goes
//! on.
//!
//! As DDS says, a status a listener is called for is read by that call: its `*_change`
//! counts and its changed flag are reset, so a [`StatusCondition`](crate::StatusCondition)
//! does not trigger on it too. DATA_AVAILABLE is reset before `on_data_available` runs,
//! DATA_ON_READERS before `on_data_on_readers` (the readers' DATA_AVAILABLE stays until
//! they are read). Statuses outside the listener's mask are left for the StatusCondition
//! and the getters.

use std::fmt;
use std::sync::Arc;

use tachyon_wire::{EntityId, Guid};

use crate::publication::DataWriter;
use crate::runtime::{GroupCall, GroupDispatch, Runtime, TOPIC_KIND};
use crate::status::{
    DeadlineMissedStatus, IncompatibleQosStatus, InconsistentTopicStatus, LivelinessChangedStatus,
    LivelinessLostStatus, PublicationMatchedStatus, SampleLostStatus, SampleRejectedStatus,
    StatusMask, SubscriptionMatchedStatus,
};
use crate::subscription::DataReader;

/// Callbacks for the statuses of a [`DataReader<T>`] (see the [module](self) docs: they
/// run on the participant's runtime threads and should be short).
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
/// run on the participant's runtime threads and should be short).
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

/// Callbacks of a Subscriber: DATA_ON_READERS, and the statuses of its readers that have no
/// listener of their own enabled for them (see the [module](self) docs).
#[allow(unused_variables)]
pub trait SubscriberListener: Send + Sync {
    /// DATA_ON_READERS: some readers of the subscriber have new data; `readers` are those
    /// with DATA_AVAILABLE set. Called instead of the readers' `on_data_available`.
    fn on_data_on_readers(&self, readers: &[AnyDataReader]) {}
    /// DATA_AVAILABLE of a reader (when DATA_ON_READERS is not taken by a listener).
    fn on_data_available(&self, reader: &AnyDataReader) {}
    /// SUBSCRIPTION_MATCHED of a reader.
    fn on_subscription_matched(&self, reader: &AnyDataReader, status: SubscriptionMatchedStatus) {}
    /// REQUESTED_INCOMPATIBLE_QOS of a reader.
    fn on_requested_incompatible_qos(&self, reader: &AnyDataReader, status: IncompatibleQosStatus) {
    }
    /// LIVELINESS_CHANGED of a reader.
    fn on_liveliness_changed(&self, reader: &AnyDataReader, status: LivelinessChangedStatus) {}
    /// REQUESTED_DEADLINE_MISSED of a reader.
    fn on_requested_deadline_missed(&self, reader: &AnyDataReader, status: DeadlineMissedStatus) {}
    /// SAMPLE_LOST of a reader.
    fn on_sample_lost(&self, reader: &AnyDataReader, status: SampleLostStatus) {}
    /// SAMPLE_REJECTED of a reader.
    fn on_sample_rejected(&self, reader: &AnyDataReader, status: SampleRejectedStatus) {}
}

/// Callbacks of a Publisher: the statuses of its writers that have no listener of their own
/// enabled for them.
#[allow(unused_variables)]
pub trait PublisherListener: Send + Sync {
    /// PUBLICATION_MATCHED of a writer.
    fn on_publication_matched(&self, writer: &AnyDataWriter, status: PublicationMatchedStatus) {}
    /// OFFERED_INCOMPATIBLE_QOS of a writer.
    fn on_offered_incompatible_qos(&self, writer: &AnyDataWriter, status: IncompatibleQosStatus) {}
    /// LIVELINESS_LOST of a writer.
    fn on_liveliness_lost(&self, writer: &AnyDataWriter, status: LivelinessLostStatus) {}
    /// OFFERED_DEADLINE_MISSED of a writer.
    fn on_offered_deadline_missed(&self, writer: &AnyDataWriter, status: DeadlineMissedStatus) {}
}

/// Callbacks of a Topic.
#[allow(unused_variables)]
pub trait TopicListener: Send + Sync {
    /// INCONSISTENT_TOPIC: a remote writer or reader uses the topic's name with another type.
    fn on_inconsistent_topic(&self, topic: &AnyTopic, status: InconsistentTopicStatus) {}
}

/// Callbacks of a DomainParticipant: every status of its entities whose own listener and
/// whose group's listener are not enabled for it. Implement the three listener traits it
/// extends (their methods all have defaults) and this one:
///
/// ```
/// # use tachyon::listener::*;
/// struct Log;
/// impl SubscriberListener for Log {
///     fn on_data_available(&self, reader: &AnyDataReader) {
///         println!("data for {:?}", reader.guid());
///     }
/// }
/// impl PublisherListener for Log {}
/// impl TopicListener for Log {}
/// impl DomainParticipantListener for Log {}
/// ```
pub trait DomainParticipantListener:
    SubscriberListener + PublisherListener + TopicListener
{
}

/// The statuses a Subscriber listener can be called for.
pub const SUBSCRIBER_STATUSES: StatusMask =
    StatusMask::from_bits(READER_STATUSES.bits() | StatusMask::DATA_ON_READERS.bits());

/// The statuses a Publisher listener can be called for.
pub const PUBLISHER_STATUSES: StatusMask = WRITER_STATUSES;

/// The statuses a Topic listener can be called for.
pub const TOPIC_STATUSES: StatusMask = StatusMask::INCONSISTENT_TOPIC;

/// The statuses a DomainParticipant listener can be called for.
pub const PARTICIPANT_STATUSES: StatusMask = StatusMask::from_bits(
    SUBSCRIBER_STATUSES.bits() | PUBLISHER_STATUSES.bits() | TOPIC_STATUSES.bits(),
);

/// A DataReader of a type the listener does not know, as Subscriber and DomainParticipant
/// listeners receive it. Compares equal to the typed [`DataReader`] it stands for.
#[derive(Clone)]
pub struct AnyDataReader {
    runtime: Arc<Runtime>,
    id: EntityId,
}

impl AnyDataReader {
    /// The reader's GUID.
    pub fn guid(&self) -> Guid {
        self.runtime
            .shared
            .lock_for(self.id)
            .participant
            .guid(self.id)
    }

    /// The reader's statuses changed since they were last read.
    pub fn get_status_changes(&self) -> StatusMask {
        self.runtime
            .shared
            .lock_for(self.id)
            .statuses
            .changes(self.id)
    }

    /// Whether this is `reader`.
    pub fn is<T>(&self, reader: &DataReader<T>) -> bool {
        Arc::ptr_eq(&self.runtime, &reader.inner.runtime) && self.id == reader.inner.id
    }
}

impl fmt::Debug for AnyDataReader {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyDataReader")
            .field("entity_id", &self.id)
            .finish_non_exhaustive()
    }
}

impl<T> PartialEq<DataReader<T>> for AnyDataReader {
    fn eq(&self, other: &DataReader<T>) -> bool {
        self.is(other)
    }
}

/// A DataWriter of a type the listener does not know, as Publisher and DomainParticipant
/// listeners receive it. Compares equal to the typed [`DataWriter`] it stands for.
#[derive(Clone)]
pub struct AnyDataWriter {
    runtime: Arc<Runtime>,
    id: EntityId,
}

impl AnyDataWriter {
    /// The writer's GUID.
    pub fn guid(&self) -> Guid {
        self.runtime
            .shared
            .lock_for(self.id)
            .participant
            .guid(self.id)
    }

    /// The writer's statuses changed since they were last read.
    pub fn get_status_changes(&self) -> StatusMask {
        self.runtime
            .shared
            .lock_for(self.id)
            .statuses
            .changes(self.id)
    }

    /// Whether this is `writer`.
    pub fn is<T>(&self, writer: &DataWriter<T>) -> bool {
        let (runtime, id) = writer.entity();
        Arc::ptr_eq(&self.runtime, runtime) && self.id == id
    }
}

impl fmt::Debug for AnyDataWriter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AnyDataWriter")
            .field("entity_id", &self.id)
            .finish_non_exhaustive()
    }
}

impl<T> PartialEq<DataWriter<T>> for AnyDataWriter {
    fn eq(&self, other: &DataWriter<T>) -> bool {
        self.is(other)
    }
}

/// The topic a [`TopicListener`] or [`DomainParticipantListener`] is called for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AnyTopic {
    name: String,
    type_name: String,
}

impl AnyTopic {
    /// The topic name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The topic's type name.
    pub fn type_name(&self) -> &str {
        &self.type_name
    }
}

/// The call of a Subscriber's listener (holding the runtime weakly: the runtime holds it).
pub(crate) fn subscriber_dispatch(
    runtime: &Arc<Runtime>,
    listener: Arc<dyn SubscriberListener>,
) -> GroupDispatch {
    let weak = Arc::downgrade(runtime);
    Arc::new(move |c: &GroupCall| {
        if let Some(rt) = weak.upgrade() {
            reader_calls(&*listener, &rt, c);
        }
    })
}

/// The call of a Publisher's listener.
pub(crate) fn publisher_dispatch(
    runtime: &Arc<Runtime>,
    listener: Arc<dyn PublisherListener>,
) -> GroupDispatch {
    let weak = Arc::downgrade(runtime);
    Arc::new(move |c: &GroupCall| {
        if let Some(rt) = weak.upgrade() {
            writer_calls(&*listener, &rt, c);
        }
    })
}

/// The call of a Topic's listener.
pub(crate) fn topic_dispatch(
    runtime: &Arc<Runtime>,
    listener: Arc<dyn TopicListener>,
) -> GroupDispatch {
    let weak = Arc::downgrade(runtime);
    Arc::new(move |c: &GroupCall| {
        if let Some(rt) = weak.upgrade() {
            topic_calls(&*listener, &rt, c);
        }
    })
}

/// The call of a DomainParticipant's listener.
pub(crate) fn participant_dispatch(
    runtime: &Arc<Runtime>,
    listener: Arc<dyn DomainParticipantListener>,
) -> GroupDispatch {
    let weak = Arc::downgrade(runtime);
    Arc::new(move |c: &GroupCall| {
        if let Some(rt) = weak.upgrade() {
            reader_calls(&*listener, &rt, c);
            writer_calls(&*listener, &rt, c);
            topic_calls(&*listener, &rt, c);
        }
    })
}

/// Reads (and so resets) a status of `id` under its lane's lock.
fn read<R>(rt: &Runtime, id: EntityId, f: impl FnOnce(&mut crate::runtime::Statuses) -> R) -> R {
    f(&mut rt.shared.lock_for(id).statuses)
}

fn reader_calls<L: SubscriberListener + ?Sized>(l: &L, rt: &Arc<Runtime>, c: &GroupCall) {
    let reader = |id| AnyDataReader {
        runtime: Arc::clone(rt),
        id,
    };
    if c.kinds.contains(StatusMask::DATA_ON_READERS) && !c.readers.is_empty() {
        let readers: Vec<AnyDataReader> = c.readers.iter().map(|id| reader(*id)).collect();
        l.on_data_on_readers(&readers);
    }
    let id = c.source;
    if !id.kind().is_reader() || !c.kinds.intersects(READER_STATUSES) {
        return;
    }
    let r = reader(id);
    let k = c.kinds;
    if k.contains(StatusMask::SUBSCRIPTION_MATCHED) {
        l.on_subscription_matched(&r, read(rt, id, |s| s.subscription_matched(id)));
    }
    if k.contains(StatusMask::REQUESTED_INCOMPATIBLE_QOS) {
        l.on_requested_incompatible_qos(&r, read(rt, id, |s| s.incompatible_qos(id)));
    }
    if k.contains(StatusMask::LIVELINESS_CHANGED) {
        l.on_liveliness_changed(&r, read(rt, id, |s| s.liveliness_changed(id)));
    }
    if k.contains(StatusMask::REQUESTED_DEADLINE_MISSED) {
        l.on_requested_deadline_missed(&r, read(rt, id, |s| s.deadline_missed(id)));
    }
    if k.contains(StatusMask::SAMPLE_LOST) {
        l.on_sample_lost(&r, read(rt, id, |s| s.sample_lost(id)));
    }
    if k.contains(StatusMask::SAMPLE_REJECTED) {
        l.on_sample_rejected(&r, read(rt, id, |s| s.sample_rejected(id)));
    }
    if k.contains(StatusMask::DATA_AVAILABLE) {
        read(rt, id, |s| s.clear(id, StatusMask::DATA_AVAILABLE));
        l.on_data_available(&r);
    }
}

fn writer_calls<L: PublisherListener + ?Sized>(l: &L, rt: &Arc<Runtime>, c: &GroupCall) {
    let id = c.source;
    if !id.kind().is_writer() || !c.kinds.intersects(WRITER_STATUSES) {
        return;
    }
    let w = AnyDataWriter {
        runtime: Arc::clone(rt),
        id,
    };
    let k = c.kinds;
    if k.contains(StatusMask::PUBLICATION_MATCHED) {
        l.on_publication_matched(&w, read(rt, id, |s| s.publication_matched(id)));
    }
    if k.contains(StatusMask::OFFERED_INCOMPATIBLE_QOS) {
        l.on_offered_incompatible_qos(&w, read(rt, id, |s| s.incompatible_qos(id)));
    }
    if k.contains(StatusMask::LIVELINESS_LOST) {
        l.on_liveliness_lost(&w, read(rt, id, |s| s.liveliness_lost(id)));
    }
    if k.contains(StatusMask::OFFERED_DEADLINE_MISSED) {
        l.on_offered_deadline_missed(&w, read(rt, id, |s| s.deadline_missed(id)));
    }
}

fn topic_calls<L: TopicListener + ?Sized>(l: &L, rt: &Arc<Runtime>, c: &GroupCall) {
    let id = c.source;
    if id.kind() != TOPIC_KIND || !c.kinds.contains(StatusMask::INCONSISTENT_TOPIC) {
        return;
    }
    let found = {
        let mut st = rt.shared.lock();
        let topic = st.topic(id).cloned();
        topic.map(|(name, type_name)| {
            let status = st.statuses.inconsistent_topic(id);
            (AnyTopic { name, type_name }, status)
        })
    };
    if let Some((topic, status)) = found {
        l.on_inconsistent_topic(&topic, status);
    }
}
