//! [`Subscriber`] and [`DataReader`]: receiving typed samples.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration as StdDuration, Instant as StdInstant};

use tachyon_cdr::{DdsType, Decode, KeyHash};
use tachyon_proto::discovery::SubscriptionData;
use tachyon_proto::endpoint::KeyHashFn;
use tachyon_proto::history::{
    Durability, InstanceSelector, InstanceStateMask, Payload, Query, ReaderHistoryConfig,
    SampleInfo, SampleStateMask, ViewStateMask,
};
use tachyon_proto::qos::{
    DataReaderQos, DataRepresentation, DestinationOrderKind, DurabilityKind, OwnershipKind,
    SubscriberQos,
};
use tachyon_proto::{ReaderConfig, ReaderUpdate};
use tachyon_wire::{EntityId, Guid};

use crate::condition::{ReadCondition, StatusCondition};
use crate::content_filter::TopicDescription;
use crate::dynamic::DynamicType;
use crate::error::Error;
use crate::group::{set_group_qos, Group};
use crate::listener::{subscriber_dispatch, SubscriberListener, SUBSCRIBER_STATUSES};
use crate::listener::{DataReaderListener, READER_STATUSES};
use crate::runtime::notify::{Signal, Touched};
use crate::runtime::{lock, Arrivals, Dispatch, Runtime, SUBSCRIBER_KIND};
use crate::status::{
    DeadlineMissedStatus, IncompatibleQosStatus, LivelinessChangedStatus, SampleLostStatus,
    SampleRejectedStatus, StatusMask, SubscriptionMatchedStatus,
};
use crate::topic::Topic;

/// Groups readers sharing PARTITION and PRESENTATION.
///
/// With PRESENTATION `coherent_access`, a coherent set becomes visible in its readers whole
/// or not at all, and a remote Tachyon publisher's set in all its readers at once; between
/// [`begin_access`](Self::begin_access) and the last [`end_access`](Self::end_access), sets
/// that arrive wait, so the reads of one access see the same sets in every reader. With
/// `ordered_access` and access scope TOPIC or GROUP, `read`/`take` return samples in the
/// order they were received across instances.
pub struct Subscriber {
    runtime: Arc<Runtime>,
    group: EntityId,
    condition: StatusCondition,
    state: Mutex<Group<SubscriberQos>>,
    /// Nesting depth of `begin_access`.
    access_depth: Mutex<u32>,
    /// Its readers' DATA_AVAILABLE count.
    arrivals: Arc<Arrivals>,
}

impl Subscriber {
    pub(crate) fn new(runtime: Arc<Runtime>, qos: SubscriberQos) -> Subscriber {
        let group = runtime.shared.lock().new_entity(SUBSCRIBER_KIND);
        let condition = StatusCondition::new(Arc::clone(&runtime), group);
        Subscriber {
            runtime,
            group,
            condition,
            state: Mutex::new(Group {
                qos,
                members: Vec::new(),
            }),
            access_depth: Mutex::new(0),
            arrivals: Arc::default(),
        }
    }

    /// Begins an access to the subscriber's readers (DDS `begin_access`): with coherent
    /// access, coherent sets completed from now on stay hidden until the last
    /// [`end_access`](Self::end_access), so reads of several readers see the same sets.
    /// Calls nest.
    pub fn begin_access(&self) -> Result<(), Error> {
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let mut st = sh.lock();
        let g = lock(&self.state);
        let mut depth = lock(&self.access_depth);
        if *depth == 0 && g.qos.presentation.coherent_access {
            let now = sh.now();
            st.participant.set_subscriber_access(now, self.group, true);
        }
        *depth += 1;
        Ok(())
    }

    /// Ends an access (DDS `end_access`): at the outermost call, the coherent sets that
    /// completed meanwhile become visible together. [`Error::PreconditionNotMet`] without a
    /// matching `begin_access`.
    pub fn end_access(&self) -> Result<(), Error> {
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let mut st = sh.lock();
        let g = lock(&self.state);
        let mut depth = lock(&self.access_depth);
        if *depth == 0 {
            return Err(Error::PreconditionNotMet("end_access without begin_access"));
        }
        *depth -= 1;
        if *depth == 0 && g.qos.presentation.coherent_access {
            drop(g);
            drop(depth);
            let now = sh.now();
            st.participant.set_subscriber_access(now, self.group, false);
            st.flush(sh, now);
        }
        Ok(())
    }

    /// The subscriber's QoS now (the same as [`get_qos`](Self::get_qos)).
    pub fn qos(&self) -> SubscriberQos {
        self.get_qos()
    }

    /// The subscriber's QoS now (DDS `get_qos`).
    pub fn get_qos(&self) -> SubscriberQos {
        lock(&self.state).qos.clone()
    }

    /// Changes the subscriber's QoS (DDS `set_qos`). PARTITION, GROUP_DATA and
    /// ENTITY_FACTORY may change; a PARTITION or GROUP_DATA change re-announces every reader
    /// of the subscriber through SEDP, so matching is re-evaluated here and at every remote
    /// participant: readers stop matching writers of partitions they left (with
    /// SUBSCRIPTION_MATCHED) and match those of the partitions they joined.
    ///
    /// Errors, with nothing changed: [`Error::ImmutablePolicy`] when PRESENTATION differs,
    /// [`Error::InconsistentQos`] for an unusable partition name.
    pub fn set_qos(&self, qos: SubscriberQos) -> Result<(), Error> {
        set_group_qos(&self.runtime, &self.state, qos, |p, now, id, q| {
            let mut data = p.local_subscription(id).cloned()?;
            data.partition.clone_from(&q.partition);
            data.group_data.clone_from(&q.group_data);
            Some(p.announce_reader(now, id, data))
        })
    }

    /// Creates a reader of `topic` (a [`Topic`], or a
    /// [`ContentFilteredTopic`](crate::ContentFilteredTopic): the reader then keeps only the
    /// samples its filter accepts) and announces it.
    pub fn create_datareader<T>(
        &self,
        topic: &impl TopicDescription<T>,
        qos: DataReaderQos,
    ) -> Result<DataReader<T>, Error>
    where
        T: Readable,
    {
        self.create(topic, qos, |_| None)
    }

    /// Creates a reader of `topic` whose `listener` is called for the statuses in `mask`
    /// from the start (no match or sample can slip by before it is set). See
    /// [`crate::listener`]: listeners run on the driver thread.
    pub fn create_datareader_with_listener<T>(
        &self,
        topic: &impl TopicDescription<T>,
        qos: DataReaderQos,
        listener: Arc<dyn DataReaderListener<T>>,
        mask: StatusMask,
    ) -> Result<DataReader<T>, Error>
    where
        T: Readable + Send + 'static,
    {
        self.create(topic, qos, |r| Some((r.dispatch(listener), mask)))
    }

    /// Creates and announces the reader; `listener` makes its listener, set under the same
    /// lock so no event slips by.
    fn create<T>(
        &self,
        topic: &impl TopicDescription<T>,
        mut qos: DataReaderQos,
        listener: impl FnOnce(&DataReader<T>) -> Option<(Dispatch, StatusMask)>,
    ) -> Result<DataReader<T>, Error>
    where
        T: Readable,
    {
        let target = topic.reader_target();
        let topic: &Topic<T> = target.topic;
        let dynamic = topic.dynamic_type().cloned();
        if qos.representation.is_empty() {
            // Tachyon decodes both, whatever the type's extensibility.
            qos.representation = vec![DataRepresentation::Xcdr1, DataRepresentation::Xcdr2];
        }
        qos.check()?;
        let presentation = lock(&self.state).qos.presentation;
        let mut config = ReaderConfig {
            reliability: qos.reliability.kind,
            history: ReaderHistoryConfig {
                history: qos.history,
                limits: qos.resource_limits,
                lifecycle: qos.reader_data_lifecycle,
            },
            durability: if qos.durability >= DurabilityKind::TransientLocal {
                Durability::TransientLocal
            } else {
                Durability::Volatile
            },
            keyed: topic.support().keyed,
            key_hash_of: T::key_hash_fn(dynamic.as_ref()),
            deadline: qos.deadline,
            time_based_filter: (!qos.time_based_filter.is_zero()).then_some(qos.time_based_filter),
            exclusive_ownership: qos.ownership == OwnershipKind::Exclusive,
            by_source_timestamp: qos.destination_order == DestinationOrderKind::BySourceTimestamp,
            reassembly: self.runtime.shared.reader_limits.reassembly,
            max_pending_bytes: self.runtime.shared.reader_limits.max_pending_bytes,
            presentation,
            subscriber: self.group,
            ..ReaderConfig::default()
        };
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let topic_qos = topic.qos();
        config.priority = topic_qos.transport_priority;
        // A reader of a critical topic lives in the critical lane; its group's sets would
        // span lanes.
        let critical =
            sh.goes_to_critical_lane(topic_qos.transport_priority, presentation.spans_group());
        let mut c = sh.begin_creating(critical);
        let id = c.create_reader(config)?;
        // A reader of a content-filtered topic announces the related topic's name (so any
        // vendor's writers match it) and the filter.
        let mut data = SubscriptionData::new(Guid::UNKNOWN, topic.name(), topic.type_name());
        if let Some(reps) = topic.type_representations() {
            data.set_type_information(&reps.type_information());
        }
        if let Some(cft) = target.filter {
            let (property, filter) = cft.attach(id);
            data.content_filter = Some(property);
            c.own().participant.set_reader_filter(id, Some(filter))?;
        }
        // Writers of this process writing `T` may hand it their samples as values.
        let sharing = T::shared_values().filter(|_| dynamic.is_none());
        if let Some(s) = &sharing {
            c.own()
                .participant
                .set_reader_shared_type(id, s.type_id())?;
        }
        data.qos = qos.clone().into();
        data.topic_data = topic_qos.topic_data;
        // A reader of a critical topic (its TRANSPORT_PRIORITY above the threshold: readers
        // have none of their own) gets its data in the critical lane.
        data.unicast_locators = sh.endpoint_locators(topic_qos.transport_priority);
        let mut g = lock(&self.state);
        data.partition.clone_from(&g.qos.partition);
        data.presentation = g.qos.presentation;
        data.group_data.clone_from(&g.qos.group_data);
        let now = c.now;
        c.discovery().announce_reader(now, id, data)?;
        g.members.push(id);
        drop(g);
        // Nothing fails from here on (dropping `reader` under the lock would deadlock).
        let own = c.own();
        own.add_endpoint(id);
        own.set_group(id, self.group);
        own.set_arrivals(id, Arc::clone(&self.arrivals));
        let reader = DataReader {
            inner: Arc::new(ReaderInner {
                runtime: Arc::clone(&self.runtime),
                id,
                qos: Mutex::new(qos),
                decode_errors: AtomicU64::new(0),
                sharing,
                shared_taken: AtomicU64::new(0),
                spare: Mutex::new(Vec::new()),
                arrivals: Some((Arc::clone(&self.arrivals), AtomicU64::new(NEVER_EMPTY))),
                condition: StatusCondition::new(Arc::clone(&self.runtime), id),
                dynamic,
                _type: PhantomData,
            }),
        };
        if let Some((dispatch, mask)) = listener(&reader) {
            c.own()
                .set_listener(id, Some((dispatch, mask & READER_STATUSES)));
        }
        c.finish();
        Ok(reader)
    }
}

/// The Subscriber's own statuses (DATA_ON_READERS) and its listener.
impl Subscriber {
    /// The subscriber's StatusCondition: DATA_ON_READERS, set when one of its readers
    /// receives data and reset by a read or take on any of them (every call returns the
    /// same condition).
    pub fn get_statuscondition(&self) -> StatusCondition {
        self.condition.clone()
    }

    /// The statuses changed since they were last read (DDS `get_status_changes`).
    pub fn get_status_changes(&self) -> StatusMask {
        self.runtime.shared.status_changes(self.group)
    }

    /// Sets the listener and the statuses it is called for (`None`: removes it): the
    /// subscriber's DATA_ON_READERS, and the statuses of its readers whose own listener is
    /// not enabled for them (see [`crate::listener`]: listeners run on the driver thread).
    pub fn set_listener(&self, listener: Option<Arc<dyn SubscriberListener>>, mask: StatusMask) {
        let dispatch = listener.map(|l| {
            (
                subscriber_dispatch(&self.runtime, l),
                mask & SUBSCRIBER_STATUSES,
            )
        });
        self.runtime.shared.set_group_listener(self.group, dispatch);
    }
}

impl Drop for Subscriber {
    fn drop(&mut self) {
        self.runtime.shared.remove_group(self.group);
    }
}

/// The instance handle of a serialized sample, or of a key-only payload (a dispose or
/// unregister), that came without inline key hash.
fn key_hash_of<T: DdsType + for<'de> Decode<'de>>(payload: &[u8], is_key: bool) -> Option<KeyHash> {
    let v: T = if is_key {
        tachyon_cdr::deserialize_key(payload).ok()?
    } else {
        tachyon_cdr::deserialize(payload).ok()?
    };
    tachyon_cdr::key_hash(&v).ok()
}

/// The types a [`DataReader`] delivers: every `#[derive(DdsType)]` type (decoded from
/// XCDR), and the builtin-topic data of [`crate::builtin`] (decoded from the discovery
/// announcements). Sealed: implement [`DdsType`] instead.
pub trait Readable: Sized + sealed::Sealed {
    /// Decodes one sample's serialized data (the reader drops and counts what fails).
    #[doc(hidden)]
    fn decode_payload(payload: &[u8]) -> Result<Self, String>;

    /// Decodes one sample's serialized data into `self`, reusing what it owns.
    #[doc(hidden)]
    fn decode_payload_into(&mut self, payload: &[u8]) -> Result<(), String> {
        *self = Self::decode_payload(payload)?;
        Ok(())
    }

    /// Decodes one sample of the reader's topic, whose dynamic type is `ty` (`None` for a
    /// derived type).
    #[doc(hidden)]
    fn decode_described(ty: Option<&DynamicType>, payload: &[u8]) -> Result<Self, String> {
        let _ = ty;
        Self::decode_payload(payload)
    }

    /// The instance handle of a payload that came without key hash (`None`: unkeyed, or
    /// not derivable).
    #[doc(hidden)]
    fn key_hash_fn(ty: Option<&DynamicType>) -> Option<KeyHashFn> {
        let _ = ty;
        None
    }

    /// How a writer of this process shares samples of the type as values, which the
    /// reader then takes without decoding (`None`: always decoded).
    #[doc(hidden)]
    fn shared_values() -> Option<tachyon_cdr::Sharing<Self>> {
        None
    }
}

impl<T: DdsType + for<'de> Decode<'de>> sealed::Sealed for T {}

impl<T: DdsType + for<'de> Decode<'de>> Readable for T {
    fn decode_payload(payload: &[u8]) -> Result<Self, String> {
        tachyon_cdr::deserialize::<T>(payload).map_err(|e| e.to_string())
    }
    fn decode_payload_into(&mut self, payload: &[u8]) -> Result<(), String> {
        tachyon_cdr::deserialize_into(payload, self).map_err(|e| e.to_string())
    }
    fn key_hash_fn(_: Option<&DynamicType>) -> Option<KeyHashFn> {
        let f: fn(&[u8], bool) -> Option<KeyHash> = key_hash_of::<T>;
        T::KEYED.then(|| KeyHashFn::new(f))
    }
    fn shared_values() -> Option<tachyon_cdr::Sharing<Self>> {
        <T as DdsType>::sharing()
    }
}

pub(crate) mod sealed {
    /// Keeps [`Readable`](super::Readable) to the types Tachyon knows how to decode.
    pub trait Sealed {}
}

/// A received sample: the data (absent for a dispose or unregister) and its SampleInfo.
#[derive(Clone, Debug)]
pub struct Sample<T> {
    /// The value, `None` when `info.valid_data` is false.
    pub data: Option<T>,
    /// DDS SampleInfo.
    pub info: SampleInfo,
}

/// Reads samples of `T`.
///
/// Every read and take returns samples grouped by instance, instances in handle order,
/// samples of an instance in reception order, each with its [`SampleInfo`] — except that
/// with its subscriber's PRESENTATION `ordered_access` and access scope TOPIC or GROUP,
/// reading all instances returns samples in reception order across instances. `read` leaves
/// the samples in the reader (marked READ), `take` removes them. Both reset DATA_AVAILABLE.
///
/// Clones share the reader (its cache, conditions and listener); it is deleted when the
/// last clone is dropped. The builtin-topic readers ([`crate::builtin`]) are readers too.
pub struct DataReader<T> {
    pub(crate) inner: Arc<ReaderInner<T>>,
}

impl<T> Clone for DataReader<T> {
    fn clone(&self) -> DataReader<T> {
        DataReader {
            inner: Arc::clone(&self.inner),
        }
    }
}

impl<T> std::fmt::Debug for DataReader<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataReader")
            .field("entity_id", &self.inner.id)
            .finish_non_exhaustive()
    }
}

/// What a reader is; shared with the listener dispatch, which holds it weakly.
pub(crate) struct ReaderInner<T> {
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) id: EntityId,
    /// The QoS now; changed by `set_qos` under the state lock.
    qos: Mutex<DataReaderQos>,
    decode_errors: AtomicU64,
    /// How writers of this process share samples of `T` as values (`None`: `T` cannot be).
    sharing: Option<tachyon_cdr::Sharing<T>>,
    /// Samples taken or read as the writer's value, not decoded.
    shared_taken: AtomicU64,
    /// Values a `take_into` or `read_into` left out of its caller's vector (it returned
    /// fewer samples than the vector held), decoded into again by a later one: a loop that
    /// polls an empty reader does not free its samples' memory and allocate it again.
    spare: Mutex<Vec<T>>,
    /// The subscriber's arrival count, and its value when a take or read of every sample
    /// last found the cache empty ([`NEVER_EMPTY`]: not yet); none for a builtin-topic reader.
    arrivals: Option<(Arc<Arrivals>, AtomicU64)>,
    condition: StatusCondition,
    /// The dynamic type of the topic, which decodes its samples (a reader of DynamicData).
    dynamic: Option<DynamicType>,
    _type: PhantomData<fn() -> T>,
}

impl<T> DataReader<T> {
    /// The handle of builtin reader `id` (its statuses are registered when the runtime
    /// starts).
    pub(crate) fn builtin(runtime: &Arc<Runtime>, id: EntityId) -> DataReader<T> {
        DataReader {
            inner: Arc::new(ReaderInner {
                runtime: Arc::clone(runtime),
                id,
                qos: Mutex::new(DataReaderQos {
                    durability: DurabilityKind::TransientLocal,
                    ..DataReaderQos::default().reliable().keep_last(1)
                }),
                decode_errors: AtomicU64::new(0),
                sharing: None,
                shared_taken: AtomicU64::new(0),
                spare: Mutex::new(Vec::new()),
                arrivals: None,
                condition: StatusCondition::new(Arc::clone(runtime), id),
                dynamic: None,
                _type: PhantomData,
            }),
        }
    }
}

impl<T: DdsType + for<'de> Decode<'de>> DataReader<T> {
    /// The handle of the instance of `sample` (its key fields), if the reader knows it.
    pub fn lookup_instance(&self, sample: &T) -> Result<Option<KeyHash>, Error> {
        let key = tachyon_cdr::key_hash(sample)?;
        let st = self.inner.runtime.shared.lock_for(self.inner.id);
        Ok(st
            .reader_history(self.inner.id)
            .and_then(|h| h.lookup_instance(&key)))
    }

    /// The key of instance `handle`, as a `T` whose key fields are the instance's (the other
    /// fields are those of the newest sample held). [`Error::BadInstance`] when the reader
    /// holds no valid sample of it to take the key from.
    pub fn get_key_value(&self, handle: KeyHash) -> Result<T, Error> {
        let payload = {
            let st = self.inner.runtime.shared.lock_for(self.inner.id);
            st.reader_history(self.inner.id)
                .and_then(|h| h.newest_payload(&handle))
                .cloned()
                .ok_or(Error::BadInstance)?
        };
        tachyon_cdr::deserialize::<T>(payload.as_bytes()).map_err(|e| {
            tracing::debug!(error = %e, "a held sample does not decode; no key value");
            Error::BadInstance
        })
    }
}

impl<T: Readable> DataReader<T> {
    /// Takes up to `max_samples` samples (removing them from the reader).
    pub fn take(&self, max_samples: usize) -> Result<Vec<Sample<T>>, Error> {
        self.take_with(&Query::ANY.max_samples(max_samples))
    }

    /// Reads up to `max_samples` samples (they stay, marked READ).
    pub fn read(&self, max_samples: usize) -> Result<Vec<Sample<T>>, Error> {
        self.read_with(&Query::ANY.max_samples(max_samples))
    }

    /// Takes the samples `query` selects (states, instance, count), e.g.
    /// `Query::ANY.sample_states(SampleStateMask::NOT_READ).max_samples(10)`.
    pub fn take_with(&self, query: &Query) -> Result<Vec<Sample<T>>, Error> {
        self.collect(query, true)
    }

    /// Takes up to `max_samples` samples into `samples`, whose contents they replace; returns
    /// how many. The values `samples` held are decoded into (the DCPS `take` with a
    /// caller's sequence): their octet sequences and `@final` members are reused, so a loop
    /// that takes into the same vector allocates nothing for samples that fit what it held
    /// (a 64 KiB `Vec<u8>` member is not allocated, zeroed by the kernel and freed per
    /// sample). Values beyond the samples returned are kept by the reader for the next take,
    /// so polling an empty reader frees nothing either; and a take that finds the reader
    /// empty again, nothing having arrived for its subscriber's readers since, returns
    /// without locking the participant (a polling thread does not hold up the writers that
    /// deliver to it).
    pub fn take_into(
        &self,
        samples: &mut Vec<Sample<T>>,
        max_samples: usize,
    ) -> Result<usize, Error> {
        self.take_with_into(&Query::ANY.max_samples(max_samples), samples)
    }

    /// [`take_w_condition`](Self::take_w_condition) into `samples`, as
    /// [`take_into`](Self::take_into).
    pub fn take_w_condition_into(
        &self,
        condition: &ReadCondition,
        samples: &mut Vec<Sample<T>>,
        max_samples: usize,
    ) -> Result<usize, Error> {
        let query = self.condition_query(condition)?.max_samples(max_samples);
        self.take_with_into(&query, samples)
    }

    /// [`take_with`](Self::take_with) into `samples`, as [`take_into`](Self::take_into).
    pub fn take_with_into(
        &self,
        query: &Query,
        samples: &mut Vec<Sample<T>>,
    ) -> Result<usize, Error> {
        self.collect_into(query, true, samples)?;
        Ok(samples.len())
    }

    /// DDS `take_next_sample`: takes the next sample not read before (oldest first, in the
    /// order [`take`](Self::take) returns them; any view and instance state), its value
    /// copied or decoded into `value`, reusing what `value` owns. Returns its
    /// [`SampleInfo`], or `None` when there is no such sample (DDS `NO_DATA`).
    ///
    /// When the sample carries no value (`info.valid_data` false: a dispose or unregister)
    /// `value` is left as it was. A sample that does not decode is counted
    /// ([`decode_errors`](Self::decode_errors)) and passed over, as `take` drops it, and the
    /// next one is taken; `value` may then hold part of what was decoded. No vector of
    /// samples is built: the cheapest way to take one sample at a time (a loop with one
    /// writer, a `WaitSet` woken per sample).
    pub fn take_next_sample(&self, value: &mut T) -> Result<Option<SampleInfo>, Error> {
        self.next_sample(value, true)
    }

    /// DDS `read_next_sample`: as [`take_next_sample`](Self::take_next_sample), but the
    /// sample stays in the reader, marked READ (so the next call returns the one after it).
    pub fn read_next_sample(&self, value: &mut T) -> Result<Option<SampleInfo>, Error> {
        self.next_sample(value, false)
    }

    /// Shared body of `take_next_sample` and `read_next_sample`.
    fn next_sample(&self, value: &mut T, take: bool) -> Result<Option<SampleInfo>, Error> {
        let query = Query::ANY
            .sample_states(SampleStateMask::NOT_READ)
            .max_samples(1);
        let mut raw = RAW_SAMPLES.with(|r| std::mem::take(&mut *r.borrow_mut()));
        // Each pass marks or removes the sample it finds: a sample that does not decode is
        // not found again, and the loop ends when the reader has no sample left to give.
        let result = loop {
            if let Err(e) = self.collect_raw(&query, take, &mut raw) {
                break Err(e);
            }
            let Some(mut s) = raw.pop() else {
                break Ok(None);
            };
            let Some(p) = s.data.take().filter(|_| s.info.valid_data) else {
                break Ok(Some(s.info));
            };
            match self.decode_one(p, value) {
                Ok(()) => break Ok(Some(s.info)),
                Err(e) => {
                    self.inner.decode_errors.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(error = %e, "a received sample does not decode; dropped");
                }
            }
        };
        RAW_SAMPLES.with(|r| *r.borrow_mut() = raw);
        result
    }

    /// The value of payload `p` into `value`: copied from the writer's value when `p` holds
    /// a `T` (in process), else decoded.
    fn decode_one(&self, p: Payload, value: &mut T) -> Result<(), String> {
        if let (Some(sharing), Some(shared)) = (self.inner.sharing, p.shared_sample()) {
            if sharing.clone_into(shared, value) {
                self.inner.shared_taken.fetch_add(1, Ordering::Relaxed);
                return Ok(());
            }
        }
        match self.inner.dynamic.as_ref() {
            None => value.decode_payload_into(p.as_bytes()),
            ty => {
                *value = T::decode_described(ty, p.as_bytes())?;
                Ok(())
            }
        }
    }

    /// Reads the samples `query` selects.
    pub fn read_with(&self, query: &Query) -> Result<Vec<Sample<T>>, Error> {
        self.collect(query, false)
    }

    /// Reads up to `max_samples` samples in the states of `condition`, a ReadCondition of
    /// this reader (otherwise [`Error::BadParameter`]).
    pub fn read_w_condition(
        &self,
        condition: &ReadCondition,
        max_samples: usize,
    ) -> Result<Vec<Sample<T>>, Error> {
        self.read_with(&self.condition_query(condition)?.max_samples(max_samples))
    }

    /// Takes up to `max_samples` samples in the states of `condition`, a ReadCondition of
    /// this reader (otherwise [`Error::BadParameter`]).
    pub fn take_w_condition(
        &self,
        condition: &ReadCondition,
        max_samples: usize,
    ) -> Result<Vec<Sample<T>>, Error> {
        self.take_with(&self.condition_query(condition)?.max_samples(max_samples))
    }

    /// Reads up to `max_samples` samples of one instance ([`Error::BadInstance`] if the
    /// reader holds nothing of it).
    pub fn read_instance(
        &self,
        handle: KeyHash,
        max_samples: usize,
    ) -> Result<Vec<Sample<T>>, Error> {
        self.read_with(&instance_query(
            InstanceSelector::Instance(handle),
            max_samples,
        ))
    }

    /// Takes up to `max_samples` samples of one instance ([`Error::BadInstance`] if the
    /// reader holds nothing of it).
    pub fn take_instance(
        &self,
        handle: KeyHash,
        max_samples: usize,
    ) -> Result<Vec<Sample<T>>, Error> {
        self.take_with(&instance_query(
            InstanceSelector::Instance(handle),
            max_samples,
        ))
    }

    /// Reads up to `max_samples` samples of the first instance after `previous` (in handle
    /// order; `None`: from the first) that has samples; empty when there is none. Iterate
    /// with `previous = Some(samples[0].info.instance_handle)`.
    pub fn read_next_instance(
        &self,
        previous: Option<KeyHash>,
        max_samples: usize,
    ) -> Result<Vec<Sample<T>>, Error> {
        self.read_with(&instance_query(
            InstanceSelector::NextAfter(previous),
            max_samples,
        ))
    }

    /// Takes up to `max_samples` samples of the first instance after `previous` (in handle
    /// order; `None`: from the first) that has samples; empty when there is none.
    pub fn take_next_instance(
        &self,
        previous: Option<KeyHash>,
        max_samples: usize,
    ) -> Result<Vec<Sample<T>>, Error> {
        self.take_with(&instance_query(
            InstanceSelector::NextAfter(previous),
            max_samples,
        ))
    }

    /// A ReadCondition triggered while the reader holds a sample in these states.
    pub fn create_readcondition(
        &self,
        sample_states: SampleStateMask,
        view_states: ViewStateMask,
        instance_states: InstanceStateMask,
    ) -> ReadCondition {
        ReadCondition::new(
            Arc::clone(&self.inner.runtime),
            self.inner.id,
            sample_states,
            view_states,
            instance_states,
        )
    }

    /// The reader's StatusCondition (every call returns the same condition).
    pub fn get_statuscondition(&self) -> StatusCondition {
        self.inner.condition.clone()
    }

    /// The statuses changed since they were last read (DDS `get_status_changes`).
    pub fn get_status_changes(&self) -> StatusMask {
        self.inner
            .runtime
            .shared
            .lock_for(self.inner.id)
            .statuses
            .changes(self.inner.id)
    }

    /// Sets the listener and the statuses it is called for (`None`: removes it). See
    /// [`crate::listener`]: listeners run on the driver thread.
    pub fn set_listener(&self, listener: Option<Arc<dyn DataReaderListener<T>>>, mask: StatusMask)
    where
        T: Send + 'static,
    {
        let dispatch = listener.map(|l| (self.dispatch(l), mask & READER_STATUSES));
        self.inner
            .runtime
            .shared
            .lock_for(self.inner.id)
            .set_listener(self.inner.id, dispatch);
    }

    /// SUBSCRIPTION_MATCHED; resets its change counts.
    pub fn get_subscription_matched_status(&self) -> SubscriptionMatchedStatus {
        self.statuses(|s, id| s.subscription_matched(id))
    }

    /// REQUESTED_INCOMPATIBLE_QOS; resets its change count.
    pub fn get_requested_incompatible_qos_status(&self) -> IncompatibleQosStatus {
        self.statuses(|s, id| s.incompatible_qos(id))
    }

    /// LIVELINESS_CHANGED; resets its change counts.
    pub fn get_liveliness_changed_status(&self) -> LivelinessChangedStatus {
        self.statuses(|s, id| s.liveliness_changed(id))
    }

    /// REQUESTED_DEADLINE_MISSED; resets its change count.
    pub fn get_requested_deadline_missed_status(&self) -> DeadlineMissedStatus {
        self.statuses(|s, id| s.deadline_missed(id))
    }

    /// SAMPLE_LOST; resets its change count.
    pub fn get_sample_lost_status(&self) -> SampleLostStatus {
        self.statuses(|s, id| s.sample_lost(id))
    }

    /// SAMPLE_REJECTED; resets its change count.
    pub fn get_sample_rejected_status(&self) -> SampleRejectedStatus {
        self.statuses(|s, id| s.sample_rejected(id))
    }

    /// Blocks until the reader holds a sample not yet read, or `timeout` passed; returns
    /// whether one is there.
    pub fn wait_for_data(&self, timeout: StdDuration) -> bool {
        let sh = &self.inner.runtime.shared;
        let deadline = StdInstant::now().checked_add(timeout);
        // Woken by this reader's changes only (and the runtime's end), not by every change
        // of the participant: registered before the first look, so none is missed.
        let signal = Arc::new(Signal::default());
        let id = Some(self.inner.id);
        sh.observers.add(&signal, id);
        let unread = loop {
            let seen = signal.generation();
            if self.has_unread() {
                break true;
            }
            if sh.stopped() || deadline.is_some_and(|d| StdInstant::now() >= d) {
                break false;
            }
            signal.wait_past(seen, deadline);
        };
        sh.observers.remove(&signal, id);
        unread
    }

    /// Whether the reader holds a sample (valid or not) not yet read.
    pub(crate) fn has_unread(&self) -> bool {
        self.inner
            .runtime
            .shared
            .lock_for(self.inner.id)
            .reader_history(self.inner.id)
            .is_some_and(|h| h.has_unread())
    }

    /// Writers matched now.
    pub fn matched_publications(&self) -> Vec<Guid> {
        self.inner
            .runtime
            .shared
            .lock_for(self.inner.id)
            .participant
            .matched_writers(self.inner.id)
    }

    /// Samples that arrived but did not decode as `T` (dropped, logged).
    pub fn decode_errors(&self) -> u64 {
        self.inner.decode_errors.load(Ordering::Relaxed)
    }

    /// Samples taken or read without decoding: a writer of this process handed them as
    /// values of `T` (cloned out, or moved when no one else held them).
    pub fn shared_samples_taken(&self) -> u64 {
        self.inner.shared_taken.load(Ordering::Relaxed)
    }

    /// The reader's GUID.
    pub fn guid(&self) -> Guid {
        self.inner
            .runtime
            .shared
            .lock_for(self.inner.id)
            .participant
            .guid(self.inner.id)
    }

    /// Samples this reader's content filter refused since it was created, before they
    /// reached its cache (a Tachyon extension; 0 for a reader of a plain topic).
    pub fn filtered_sample_count(&self) -> u64 {
        self.inner
            .runtime
            .shared
            .lock_for(self.inner.id)
            .participant
            .reader_stats(self.inner.id)
            .map_or(0, |s| s.content_filtered)
    }

    /// The reader's QoS now (the same as [`get_qos`](Self::get_qos)).
    pub fn qos(&self) -> DataReaderQos {
        self.get_qos()
    }

    /// The reader's QoS now (DDS `get_qos`).
    pub fn get_qos(&self) -> DataReaderQos {
        lock(&self.inner.qos).clone()
    }

    /// Changes the reader's QoS (DDS `set_qos`). DEADLINE, LATENCY_BUDGET, USER_DATA,
    /// TIME_BASED_FILTER and READER_DATA_LIFECYCLE may change: the deadline timers restart
    /// with the new period, the filter applies to samples received from now on, the
    /// autopurge delays at the next purge check, and the reader is re-announced through SEDP
    /// so matching is re-evaluated everywhere (a deadline no longer met by a writer's offer
    /// unmatches it and reports REQUESTED/OFFERED_INCOMPATIBLE_QOS). An empty
    /// DATA_REPRESENTATION stands for the one chosen at creation.
    ///
    /// Errors, with nothing changed: [`Error::ImmutablePolicy`] naming the first other
    /// policy that differs from [`get_qos`](Self::get_qos); [`Error::InconsistentQos`] when
    /// TIME_BASED_FILTER exceeds DEADLINE; [`Error::Unsupported`] on a builtin-topic reader.
    pub fn set_qos(&self, mut qos: DataReaderQos) -> Result<(), Error> {
        if crate::runtime::builtin::is_builtin(self.inner.id) {
            return Err(Error::Unsupported("set_qos on a builtin-topic reader"));
        }
        let sh = &self.inner.runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let mut st = sh.lock();
        let mut cur = lock(&self.inner.qos);
        if qos.representation.is_empty() {
            qos.representation.clone_from(&cur.representation);
        }
        if let Some(p) = cur.immutable_change(&qos) {
            return Err(Error::ImmutablePolicy(p));
        }
        qos.check()?;
        let now = sh.now();
        let update = ReaderUpdate {
            deadline: qos.deadline,
            time_based_filter: (!qos.time_based_filter.is_zero()).then_some(qos.time_based_filter),
            lifecycle: qos.reader_data_lifecycle,
        };
        let id = self.inner.id;
        sh.in_own_lane(&mut st, id, now, |p| p.update_reader(now, id, update))?;
        let announced = st.participant.local_subscription(self.inner.id).cloned();
        *cur = qos.clone();
        drop(cur);
        let mut result = Ok(());
        if let Some(mut data) = announced.filter(|d| *d.qos != qos) {
            data.qos = qos.into();
            result = st
                .participant
                .announce_reader(now, self.inner.id, data)
                .map_err(Error::from);
        }
        st.flush(sh, now);
        drop(st);
        sh.wake();
        result
    }

    /// Shared body of every read and take: collects under the lock, resets DATA_AVAILABLE,
    /// then (outside the lock) tells the WaitSets — a read changes sample and view states
    /// that ReadConditions select on — and decodes.
    fn collect(&self, query: &Query, take: bool) -> Result<Vec<Sample<T>>, Error> {
        let mut out = Vec::new();
        self.collect_into(query, take, &mut out)?;
        Ok(out)
    }

    /// Reads or takes what `query` selects into `out` (replacing its contents, decoding into
    /// the values it held).
    fn collect_into(
        &self,
        query: &Query,
        take: bool,
        out: &mut Vec<Sample<T>>,
    ) -> Result<(), Error> {
        // The samples as the protocol holds them, in this thread's reused vector (a take per
        // sample allocates nothing for them).
        let mut raw = RAW_SAMPLES.with(|r| std::mem::take(&mut *r.borrow_mut()));
        let result = self
            .collect_raw(query, take, &mut raw)
            .map(|()| self.decode(&mut raw, out));
        // A vector grown by one large take is not kept (its memory would stay with the thread).
        if raw.capacity() <= 256 {
            RAW_SAMPLES.with(|r| *r.borrow_mut() = raw);
        }
        result
    }

    /// Reads or takes what `query` selects into `raw` (cleared first), as the protocol holds
    /// them.
    fn collect_raw(
        &self,
        query: &Query,
        take: bool,
        raw: &mut Vec<tachyon_proto::history::Sample>,
    ) -> Result<(), Error> {
        raw.clear();
        let sh = &self.inner.runtime.shared;
        // A query of any instance on a reader found empty, with nothing arrived since: it
        // finds nothing, without the lock (a polling loop). Only a query of every sample
        // (any states) finding nothing shows the reader empty.
        let every = is_every_sample(query);
        let any_instance = query.instance == InstanceSelector::Any && query.max_samples > 0;
        let arrivals = self.inner.arrivals.as_ref().filter(|_| any_instance);
        let seen = arrivals.map(|(a, empty_at)| (a.now(), empty_at));
        if let Some((now, empty_at)) = seen {
            if empty_at.load(Ordering::Relaxed) == now {
                return Ok(());
            }
        }
        let collected = (|| {
            let mut st = sh.lock_for(self.inner.id);
            if take {
                // The clock is read only if the take depends on the time (lifespans, a full
                // cache reopened: `Participant::take_timed`).
                st.take(|| sh.now(), self.inner.id, query, raw)?;
                // Taking may reopen a full cache: acknowledgements become due. Usually it
                // leaves nothing to send and no event, and the flush is skipped.
                if st.participant.has_output() {
                    st.flush(sh, sh.now());
                }
            } else {
                st.read(self.inner.id, query, raw)?;
            }
            st.data_read(self.inner.id);
            Ok::<_, Error>(())
        })();
        if !raw.is_empty() {
            // The samples' states changed: this reader's conditions (and its group's and the
            // participant's) may have.
            sh.observers.notify_touched(&Touched::one(self.inner.id));
        } else if let (Ok(()), Some((now, empty_at)), true) = (&collected, seen, every) {
            // Empty at a time the count was at least `now`.
            empty_at.store(now, Ordering::Relaxed);
        }
        collected
    }

    fn condition_query(&self, condition: &ReadCondition) -> Result<Query, Error> {
        condition
            .query_for(&self.inner.runtime, self.inner.id)
            .ok_or(Error::BadParameter(
                "the ReadCondition belongs to another reader",
            ))
    }

    fn statuses<R>(&self, f: impl FnOnce(&mut crate::runtime::Statuses, EntityId) -> R) -> R {
        f(
            &mut self.inner.runtime.shared.lock_for(self.inner.id).statuses,
            self.inner.id,
        )
    }

    /// The type-erased call of `listener` for this reader, holding the reader weakly (the
    /// runtime must not keep a deleted reader alive).
    fn dispatch(&self, listener: Arc<dyn DataReaderListener<T>>) -> Dispatch
    where
        T: Send + 'static,
    {
        let weak: Weak<ReaderInner<T>> = Arc::downgrade(&self.inner);
        Arc::new(move |kinds: StatusMask| {
            let Some(inner) = weak.upgrade() else {
                return;
            };
            let reader = DataReader { inner };
            let l = &*listener;
            if kinds.contains(StatusMask::SUBSCRIPTION_MATCHED) {
                l.on_subscription_matched(&reader, reader.get_subscription_matched_status());
            }
            if kinds.contains(StatusMask::REQUESTED_INCOMPATIBLE_QOS) {
                let s = reader.get_requested_incompatible_qos_status();
                l.on_requested_incompatible_qos(&reader, s);
            }
            if kinds.contains(StatusMask::LIVELINESS_CHANGED) {
                l.on_liveliness_changed(&reader, reader.get_liveliness_changed_status());
            }
            if kinds.contains(StatusMask::REQUESTED_DEADLINE_MISSED) {
                let s = reader.get_requested_deadline_missed_status();
                l.on_requested_deadline_missed(&reader, s);
            }
            if kinds.contains(StatusMask::SAMPLE_LOST) {
                l.on_sample_lost(&reader, reader.get_sample_lost_status());
            }
            if kinds.contains(StatusMask::SAMPLE_REJECTED) {
                l.on_sample_rejected(&reader, reader.get_sample_rejected_status());
            }
            // DATA_AVAILABLE was reset as the call was taken (`runtime::collect_calls`).
            if kinds.contains(StatusMask::DATA_AVAILABLE) {
                l.on_data_available(&reader);
            }
        })
    }

    /// Decodes `raw` into `out`: the first samples into the values `out` already holds, the
    /// rest into new ones; what fails to decode is counted and dropped.
    fn decode(&self, raw: &mut Vec<tachyon_proto::history::Sample>, out: &mut Vec<Sample<T>>) {
        let mut kept = 0;
        for mut s in raw.drain(..) {
            let payload = match s.data.take() {
                Some(p) if s.info.valid_data => Some(p),
                _ => None,
            };
            let Some(p) = payload else {
                let sample = Sample {
                    data: None,
                    info: s.info,
                };
                match out.get_mut(kept) {
                    Some(slot) => self.replace(slot, sample),
                    None => out.push(sample),
                }
                kept += 1;
                continue;
            };
            // Decoded into what the caller's vector holds there, else into a spare value,
            // else into a new one.
            let value = match out.get_mut(kept).and_then(|slot| slot.data.take()) {
                Some(v) => Some(v),
                None => self.take_spare(),
            };
            let decoded = match value {
                // Copied from the writer's value, else decoded, into one the caller had.
                Some(mut v) => self.decode_one(p, &mut v).map(|()| v),
                None => match self.shared_value(p) {
                    Ok(v) => Ok(v),
                    Err(p) => T::decode_described(self.inner.dynamic.as_ref(), p.as_bytes()),
                },
            };
            match decoded {
                Ok(v) => {
                    let sample = Sample {
                        data: Some(v),
                        info: s.info,
                    };
                    match out.get_mut(kept) {
                        Some(slot) => *slot = sample,
                        None => out.push(sample),
                    }
                    kept += 1;
                }
                Err(e) => {
                    self.inner.decode_errors.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(error = %e, "a received sample does not decode; dropped");
                }
            }
        }
        // What the vector held beyond the samples returned is kept for the next call.
        if out.len() > kept {
            if let Ok(mut spare) = self.inner.spare.lock() {
                for s in out.drain(kept..) {
                    if spare.len() >= SPARE_MAX {
                        break;
                    }
                    spare.extend(s.data);
                }
            }
            out.truncate(kept);
        }
    }

    /// The writer's value `p` holds, when it is a `T` (`tachyon_cdr::share`), as a new
    /// value: moved out when no one else holds it, else cloned. Otherwise `p` back, to decode.
    fn shared_value(&self, p: Payload) -> Result<T, Payload> {
        let Some(sharing) = self.inner.sharing else {
            return Err(p);
        };
        if !p.shared_sample().is_some_and(|v| sharing.holds(v)) {
            return Err(p);
        }
        let value = match p.into_shared_sample() {
            Ok(alone) => sharing.move_out(alone),
            Err(p) => p.shared_sample().and_then(|s| sharing.clone_out(s)),
        };
        if value.is_some() {
            self.inner.shared_taken.fetch_add(1, Ordering::Relaxed);
        }
        // Unreachable: it holds a `T` (checked above), and a `Sharing` is made only by
        // `Sharing::by_clone`, whose functions agree on the type.
        value.ok_or_else(Payload::default)
    }

    /// Puts `sample` in `slot`, keeping the value `slot` held as a spare.
    fn replace(&self, slot: &mut Sample<T>, sample: Sample<T>) {
        if let Some(v) = std::mem::replace(slot, sample).data {
            if let Ok(mut spare) = self.inner.spare.lock() {
                if spare.len() < SPARE_MAX {
                    spare.push(v);
                }
            }
        }
    }

    fn take_spare(&self) -> Option<T> {
        self.inner.spare.lock().ok()?.pop()
    }
}

impl<T: crate::loan::Loanable> DataReader<T> {
    /// Takes up to `max_samples` samples without copying or decoding them where it can
    /// ([`crate::loan`]): a [`LoanedSample`](crate::LoanedSample) borrows the received
    /// bytes — the writer's shared-memory slot, for a sample loaned by a writer of another
    /// process of this host — until it is dropped. A sample whose bytes are not `T`'s memory
    /// (another byte order, an XCDR2 header) is decoded into the heap instead.
    pub fn take_loaned(&self, max_samples: usize) -> Result<Vec<crate::LoanedSample<T>>, Error> {
        let mut out = Vec::new();
        self.take_loaned_into(&mut out, max_samples)?;
        Ok(out)
    }

    /// [`take_loaned`](Self::take_loaned) into `samples` (cleared first, its capacity
    /// reused); returns how many. With samples in place, a loop that takes into the same
    /// vector allocates nothing.
    pub fn take_loaned_into(
        &self,
        samples: &mut Vec<crate::LoanedSample<T>>,
        max_samples: usize,
    ) -> Result<usize, Error> {
        samples.clear();
        let mut raw = RAW_SAMPLES.with(|r| std::mem::take(&mut *r.borrow_mut()));
        let result = self.collect_raw(&Query::ANY.max_samples(max_samples), true, &mut raw);
        let headers = crate::loan::in_place_headers::<T>();
        for s in raw.drain(..) {
            let payload = s.data.filter(|_| s.info.valid_data);
            match crate::LoanedSample::new(s.info, payload, &headers) {
                Ok(sample) => samples.push(sample),
                Err(e) => {
                    self.inner.decode_errors.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(error = %e, "a received sample does not decode; dropped");
                }
            }
        }
        if raw.capacity() <= 256 {
            RAW_SAMPLES.with(|r| *r.borrow_mut() = raw);
        }
        result.map(|()| samples.len())
    }
}

/// [`ReaderInner::arrivals`] before any take or read found the cache empty.
const NEVER_EMPTY: u64 = u64::MAX;

/// Whether `query` selects every sample of the reader (any number of them but 0).
fn is_every_sample(query: &Query) -> bool {
    query.max_samples > 0
        && query.sample_states == SampleStateMask::ANY
        && query.view_states == ViewStateMask::ANY
        && query.instance_states == InstanceStateMask::ANY
        && query.instance == InstanceSelector::Any
}

/// Most spare values a reader keeps ([`ReaderInner::spare`]).
const SPARE_MAX: usize = 64;

thread_local! {
    /// [`DataReader::collect`]'s vector of protocol samples, kept from call to call.
    static RAW_SAMPLES: std::cell::RefCell<Vec<tachyon_proto::history::Sample>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// A query of every sample state of the instances `selector` picks.
fn instance_query(selector: InstanceSelector, max_samples: usize) -> Query {
    Query::ANY.instances(selector).max_samples(max_samples)
}

impl<T> Drop for ReaderInner<T> {
    fn drop(&mut self) {
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return;
        }
        // Its ReadConditions and StatusCondition no longer trigger.
        sh.delete_endpoint(self.id, |p, now, id| {
            // The builtin-topic readers are the runtime's, not the protocol's.
            if !crate::runtime::builtin::is_builtin(id) {
                let _ = p.delete_reader(now, id);
            }
        });
    }
}
