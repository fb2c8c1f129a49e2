//! [`Publisher`] and [`DataWriter`]: writing typed samples.

use std::marker::PhantomData;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration as StdDuration, Instant as StdInstant, SystemTime};

use tachyon_cdr::{Endianness, Extensibility, KeyHash, XcdrVersion};
use tachyon_proto::discovery::PublicationData;
use tachyon_proto::history::{
    ChangeKind, Durability, PayloadPool, WriteError, WriterHistoryConfig,
};
use tachyon_proto::qos::{
    AccessScope, DataRepresentation, DataWriterQos, DurabilityKind, PublisherQos,
};
use tachyon_proto::quirks;
use tachyon_proto::{WriteRequest, WriterConfig, WriterUpdate};
use tachyon_wire::{EntityId, Guid, Time};

use crate::condition::StatusCondition;
use crate::dynamic::DynamicType;
use crate::error::Error;
use crate::group::{set_group_qos, Group};
use crate::listener::{publisher_dispatch, PublisherListener, PUBLISHER_STATUSES};
use crate::listener::{DataWriterListener, WRITER_STATUSES};
use crate::loan::{in_place_header, Loan, Loanable, Store};
use crate::runtime::{lock, Dispatch, Runtime, Shared, PUBLISHER_KIND};
use crate::status::{
    DeadlineMissedStatus, IncompatibleQosStatus, LivelinessLostStatus, PublicationMatchedStatus,
    StatusMask,
};
use crate::topic::Topic;
use crate::writable::Writable;
use tachyon_proto::history::SharedPool;
use tachyon_transport::shm::loan::LoanArea;

/// Groups writers sharing PARTITION and PRESENTATION.
///
/// With PRESENTATION `coherent_access`, what its writers write between
/// [`begin_coherent_changes`](Self::begin_coherent_changes) and
/// [`end_coherent_changes`](Self::end_coherent_changes) is one coherent set per writer (and
/// one publisher-wide set with access scope GROUP): subscribers with coherent access see all
/// of it or none of it.
pub struct Publisher {
    runtime: Arc<Runtime>,
    group: EntityId,
    condition: StatusCondition,
    state: Mutex<Group<PublisherQos>>,
    /// Nesting depth of `begin_coherent_changes`.
    coherent_depth: Mutex<u32>,
}

impl Publisher {
    pub(crate) fn new(runtime: Arc<Runtime>, qos: PublisherQos) -> Publisher {
        let group = runtime.shared.lock().new_entity(PUBLISHER_KIND);
        let condition = StatusCondition::new(Arc::clone(&runtime), group);
        Publisher {
            runtime,
            group,
            condition,
            state: Mutex::new(Group {
                qos,
                members: Vec::new(),
            }),
            coherent_depth: Mutex::new(0),
        }
    }

    /// Begins a coherent set (DDS `begin_coherent_changes`): the changes its writers make
    /// until the matching [`end_coherent_changes`](Self::end_coherent_changes) are
    /// delivered together. Calls nest: the set ends with the outermost end. Writers created
    /// while a set is open are not part of it. Without PRESENTATION `coherent_access` the
    /// calls are only counted (samples go out as usual).
    pub fn begin_coherent_changes(&self) -> Result<(), Error> {
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let mut st = sh.lock();
        let g = lock(&self.state);
        let mut depth = lock(&self.coherent_depth);
        if *depth == 0 && g.qos.presentation.coherent_access {
            let group_scope = g.qos.presentation.access_scope == AccessScope::Group;
            st.participant
                .begin_coherent_set(self.group, &g.members, group_scope)?;
        }
        *depth += 1;
        Ok(())
    }

    /// Ends a coherent set (DDS `end_coherent_changes`): at the outermost call, every
    /// writer of the set sends its end marker and the set becomes visible to subscribers.
    /// [`Error::PreconditionNotMet`] without a matching `begin_coherent_changes`.
    pub fn end_coherent_changes(&self) -> Result<(), Error> {
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let mut st = sh.lock();
        let g = lock(&self.state);
        let mut depth = lock(&self.coherent_depth);
        if *depth == 0 {
            return Err(Error::PreconditionNotMet(
                "end_coherent_changes without begin_coherent_changes",
            ));
        }
        *depth -= 1;
        if *depth > 0 || !g.qos.presentation.coherent_access {
            return Ok(());
        }
        drop(g);
        drop(depth);
        let now = sh.now();
        let result = st.participant.end_coherent_set(now, self.group);
        st.flush(sh, now);
        drop(st);
        sh.wake();
        result.map_err(Error::from)
    }

    /// The publisher's QoS now (the same as [`get_qos`](Self::get_qos)).
    pub fn qos(&self) -> PublisherQos {
        self.get_qos()
    }

    /// The publisher's QoS now (DDS `get_qos`).
    pub fn get_qos(&self) -> PublisherQos {
        lock(&self.state).qos.clone()
    }

    /// Changes the publisher's QoS (DDS `set_qos`). PARTITION, GROUP_DATA and ENTITY_FACTORY
    /// may change; a PARTITION or GROUP_DATA change re-announces every writer of the
    /// publisher through SEDP, so matching is re-evaluated here and at every remote
    /// participant (PUBLICATION_MATCHED/SUBSCRIPTION_MATCHED report what it changed).
    ///
    /// Errors, with nothing changed: [`Error::ImmutablePolicy`] when PRESENTATION differs,
    /// [`Error::InconsistentQos`] for an unusable partition name.
    pub fn set_qos(&self, qos: PublisherQos) -> Result<(), Error> {
        set_group_qos(&self.runtime, &self.state, qos, |p, now, id, q| {
            let mut data = p.local_publication(id).cloned()?;
            data.partition.clone_from(&q.partition);
            data.group_data.clone_from(&q.group_data);
            Some(p.announce_writer(now, id, data))
        })
    }

    /// Creates a writer of `topic` and announces it.
    pub fn create_datawriter<T: Writable>(
        &self,
        topic: &Topic<T>,
        qos: DataWriterQos,
    ) -> Result<DataWriter<T>, Error> {
        self.create(topic, qos, |_| None)
    }

    /// Creates a writer of `topic` whose `listener` is called for the statuses in `mask`
    /// from the start. See [`crate::listener`]: listeners run on the driver thread.
    pub fn create_datawriter_with_listener<T: Writable + 'static>(
        &self,
        topic: &Topic<T>,
        qos: DataWriterQos,
        listener: Arc<dyn DataWriterListener<T>>,
        mask: StatusMask,
    ) -> Result<DataWriter<T>, Error> {
        self.create(topic, qos, |w| Some((w.dispatch(listener), mask)))
    }

    /// Creates and announces the writer; `listener` makes its listener, set under the same
    /// lock so no event slips by.
    fn create<T: Writable>(
        &self,
        topic: &Topic<T>,
        mut qos: DataWriterQos,
        listener: impl FnOnce(&DataWriter<T>) -> Option<(Dispatch, StatusMask)>,
    ) -> Result<DataWriter<T>, Error> {
        let support = topic.support();
        let dynamic = support.dynamic.clone();
        if qos.representation.is_empty() {
            qos.representation = default_representation(support.extensibility);
        }
        let version = DataRepresentation::written(&qos.representation)
            .xcdr_version()
            .ok_or(Error::Unsupported("the XML data representation"))?;
        let presentation = lock(&self.state).qos.presentation;
        let mut config = writer_config(&qos, support.keyed, self.runtime.shared.max_datagram);
        if presentation.coherent_access {
            config.coherent_sets = true;
            config.fragment_size =
                coherent_fragment_size(config.fragment_size, config.max_datagram);
        }
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        // A critical writer lives in the critical lane; its group's sets would span lanes.
        let critical = sh.goes_to_critical_lane(qos.transport_priority, presentation.spans_group());
        let mut c = sh.begin_creating(critical);
        let id = c.create_writer(config)?;
        {
            let own = &mut c.own().participant;
            // Readers announcing a content filter get only what it accepts.
            own.set_writer_filter_factory(id, T::remote_filter_factory())?;
            // Readers that read another representation (Fast DDS 2.x's XCDR1 only) get
            // converted samples.
            own.set_writer_transcoder(id, T::transcoder(dynamic.as_ref()))?;
        }
        // Readers of this process reading `T` may get its samples as values.
        let sharing = match T::shared_values().filter(|_| dynamic.is_none()) {
            Some(s) => {
                let flag = c.own().participant.share_writer_samples(id, s.type_id())?;
                Some((s, flag))
            }
            None => None,
        };
        let mut data = PublicationData::new(Guid::UNKNOWN, topic.name(), topic.type_name());
        if let Some(reps) = topic.type_representations() {
            data.set_type_information(&reps.type_information());
        }
        // A critical writer is reached (acknowledgements) in the critical lane.
        data.unicast_locators = sh.endpoint_locators(qos.transport_priority);
        data.qos = qos.clone().into();
        data.topic_data = topic.qos().topic_data;
        let mut g = lock(&self.state);
        data.partition.clone_from(&g.qos.partition);
        data.presentation = g.qos.presentation;
        if g.qos.presentation.coherent_access {
            // Subscribers assemble this publisher's coherent sets from all its writers.
            data.group_entity_id = Some(self.group);
        }
        data.group_data.clone_from(&g.qos.group_data);
        let now = c.now;
        c.discovery().announce_writer(now, id, data)?;
        g.members.push(id);
        drop(g);
        // Nothing fails from here on (dropping `writer` under the lock would deadlock).
        let own = c.own();
        own.add_endpoint(id);
        own.set_group(id, self.group);
        let writer = DataWriter {
            inner: Arc::new(WriterInner {
                runtime: Arc::clone(&self.runtime),
                id,
                max_blocking_time: qos.reliability.max_blocking_time,
                qos: Mutex::new(qos),
                version,
                pool: PayloadPool::new(),
                sharing,
                shared_written: AtomicU64::new(0),
                loan_area: std::sync::OnceLock::new(),
                loan_payloads: SharedPool::new(),
                condition: StatusCondition::new(Arc::clone(&self.runtime), id),
                dynamic,
                _type: PhantomData,
            }),
        };
        if let Some((dispatch, mask)) = listener(&writer) {
            c.own()
                .set_listener(id, Some((dispatch, mask & WRITER_STATUSES)));
        }
        c.finish();
        Ok(writer)
    }
}

/// The Publisher's StatusCondition and listener.
impl Publisher {
    /// The publisher's StatusCondition (a Publisher has no status of its own: it never
    /// triggers; every call returns the same condition).
    pub fn get_statuscondition(&self) -> StatusCondition {
        self.condition.clone()
    }

    /// The statuses changed since they were last read (DDS `get_status_changes`).
    pub fn get_status_changes(&self) -> StatusMask {
        self.runtime.shared.status_changes(self.group)
    }

    /// Sets the listener and the statuses it is called for (`None`: removes it): the
    /// statuses of its writers whose own listener is not enabled for them (see
    /// [`crate::listener`]: listeners run on the driver thread).
    pub fn set_listener(&self, listener: Option<Arc<dyn PublisherListener>>, mask: StatusMask) {
        let dispatch = listener.map(|l| {
            (
                publisher_dispatch(&self.runtime, l),
                mask & PUBLISHER_STATUSES,
            )
        });
        self.runtime.shared.set_group_listener(self.group, dispatch);
    }
}

impl Drop for Publisher {
    fn drop(&mut self) {
        self.runtime.shared.remove_group(self.group);
    }
}

/// The representation a writer offers when its QoS names none: XCDR1 first for `@final`
/// types (what Cyclone DDS 0.10 and Fast DDS 2.9 both read and match), XCDR2 for the others.
fn default_representation(ext: Extensibility) -> Vec<DataRepresentation> {
    match ext {
        Extensibility::Final => vec![DataRepresentation::Xcdr1, DataRepresentation::Xcdr2],
        _ => vec![DataRepresentation::Xcdr2],
    }
}

/// The fragment size of a writer whose samples carry coherent-set inline QoS: a DATA_FRAG of
/// one fragment with the largest such inline QoS must fit `max_datagram` (with RTPS header,
/// INFO_DST and INFO_TS).
fn coherent_fragment_size(fragment_size: u16, max_datagram: usize) -> u16 {
    let overhead = 20 + 16 + 12 + 4 + 32 + tachyon_proto::MAX_COHERENT_INLINE_QOS;
    let fits = max_datagram.saturating_sub(overhead) & !3;
    fragment_size
        .min(u16::try_from(fits).unwrap_or(u16::MAX))
        .max(4)
}

/// The protocol configuration a writer's QoS implies.
fn writer_config(qos: &DataWriterQos, keyed: bool, max_datagram: usize) -> WriterConfig {
    WriterConfig {
        reliability: qos.reliability.kind,
        history: WriterHistoryConfig {
            history: qos.history,
            limits: qos.resource_limits,
            durability: if qos.durability >= DurabilityKind::TransientLocal {
                Durability::TransientLocal
            } else {
                Durability::Volatile
            },
        },
        keyed,
        lifespan: qos.lifespan,
        deadline: qos.deadline,
        liveliness: qos.liveliness,
        priority: qos.transport_priority,
        batch_delay: qos.batch_delay,
        max_datagram,
        ..WriterConfig::default()
    }
}

/// Writes samples of `T`.
pub struct DataWriter<T> {
    inner: Arc<WriterInner<T>>,
}

/// What a writer is; shared with the listener dispatch, which holds it weakly.
struct WriterInner<T> {
    runtime: Arc<Runtime>,
    id: EntityId,
    /// The QoS now; changed by `set_qos` under the state lock.
    qos: Mutex<DataWriterQos>,
    /// RELIABILITY `max_blocking_time` (immutable, so read without a lock).
    max_blocking_time: tachyon_proto::Duration,
    version: XcdrVersion,
    pool: PayloadPool,
    /// How samples are shared as values with readers of this process (`tachyon_cdr::share`),
    /// and whether they may be now (every matched reader is one of them).
    sharing: Option<(tachyon_cdr::Sharing<T>, Arc<AtomicBool>)>,
    /// Samples written as values, not serialized.
    shared_written: AtomicU64,
    /// The loan area of `loan_sample` (made on the first; `None`: loans come from the heap).
    loan_area: std::sync::OnceLock<Option<LoanArea>>,
    /// Holders of the payloads of published loans (recycled: none allocated per sample).
    loan_payloads: SharedPool,
    condition: StatusCondition,
    /// The dynamic type of the topic (a writer of DynamicData).
    dynamic: Option<DynamicType>,
    _type: PhantomData<fn(&T)>,
}

impl<T: Writable> DataWriter<T> {
    /// Writes a sample, timestamped now.
    pub fn write(&self, sample: &T) -> Result<(), Error> {
        self.write_at(sample, None)
    }

    /// Writes a sample with a given source timestamp.
    pub fn write_w_timestamp(&self, sample: &T, timestamp: SystemTime) -> Result<(), Error> {
        self.write_at(sample, Some(wire_time(timestamp)))
    }

    /// Writes `sample`, with `timestamp` or (`None`) the time it is handed to the protocol.
    fn write_at(&self, sample: &T, timestamp: Option<Time>) -> Result<(), Error> {
        let ty = self.inner.dynamic.as_ref();
        let key = sample.instance(ty)?;
        // The size is computed either way: it checks the sample as serializing it would.
        let size = sample.serialized_size(ty, self.inner.version)?;
        let payload = match &self.inner.sharing {
            // Every matched reader takes the value: serialized only if asked for later.
            Some((sharing, now)) if now.load(Ordering::Relaxed) => {
                self.inner.shared_written.fetch_add(1, Ordering::Relaxed);
                self.inner
                    .pool
                    .share(size, self.inner.version, |slot| sharing.share(sample, slot))
            }
            _ => {
                let version = self.inner.version;
                self.inner
                    .pool
                    .fill(size, |buf| sample.serialize_into(ty, version, buf))?
            }
        };
        let req = WriteRequest::data(key, timestamp.unwrap_or_default(), payload);
        self.submit(req, timestamp.is_none())
    }

    /// Sends at once what write batching holds back (`DataWriterQos::batch`); nothing to do
    /// without batching.
    pub fn flush(&self) -> Result<(), Error> {
        let sh = &self.inner.runtime.shared;
        let mut st = sh.lock_for(self.inner.id);
        let now = sh.now();
        st.participant.flush_writer(self.inner.id)?;
        st.flush(sh, now);
        Ok(())
    }

    /// Disposes the instance of `sample` (its key fields).
    pub fn dispose(&self, sample: &T) -> Result<(), Error> {
        self.instance_change(sample, ChangeKind::NotAliveDisposed)
    }

    /// Unregisters the instance of `sample` (disposing it too when the QoS says
    /// `autodispose_unregistered_instances`).
    pub fn unregister_instance(&self, sample: &T) -> Result<(), Error> {
        let kind = if lock(&self.inner.qos).autodispose_unregistered_instances {
            ChangeKind::NotAliveDisposedUnregistered
        } else {
            ChangeKind::NotAliveUnregistered
        };
        self.instance_change(sample, kind)
    }

    /// Registers the instance of `sample`; returns its handle.
    pub fn register_instance(&self, sample: &T) -> Result<KeyHash, Error> {
        let key = sample.instance(self.inner.dynamic.as_ref())?;
        let mut st = self.inner.runtime.shared.lock_for(self.inner.id);
        Ok(st.participant.register_instance(self.inner.id, key)?)
    }

    /// The handle of the instance of `sample` (its key hash).
    pub fn lookup_instance(&self, sample: &T) -> Result<KeyHash, Error> {
        sample.instance(self.inner.dynamic.as_ref())
    }

    /// Blocks until every matched reliable reader acknowledged everything written, or
    /// `timeout` passed (`Err(Timeout)`).
    pub fn wait_for_acknowledgments(&self, timeout: StdDuration) -> Result<(), Error> {
        let sh = &self.inner.runtime.shared;
        let deadline = StdInstant::now() + timeout;
        let mut st = sh.lock_for(self.inner.id);
        let mut asked = false;
        loop {
            if st.participant.all_acknowledged(self.inner.id) != Some(false) {
                return Ok(());
            }
            if !asked {
                // A steady stream asks for acknowledgements only now and then: ask now. The
                // heartbeat leaves as the lock is released; the writer's next periodic one
                // moved, which the timers thread may not know yet.
                asked = true;
                let now = sh.now();
                st.participant.request_acknowledgments(self.inner.id, now);
                st.flush(sh, now);
                sh.release_after_write(st, self.inner.id);
                st = sh.lock_for(self.inner.id);
                continue;
            }
            let left = deadline.saturating_duration_since(StdInstant::now());
            if left.is_zero() {
                return Err(Error::Timeout);
            }
            if sh.stopped() {
                return Err(Error::AlreadyDeleted);
            }
            st = sh.wait(st, left.min(StdDuration::from_millis(50)));
        }
    }

    /// Samples written as values, not serialized: every matched reader was in this process
    /// and read `T` (a sample is serialized later only if someone asks for its bytes:
    /// [`late_serializations`](Self::late_serializations)).
    pub fn shared_samples_written(&self) -> u64 {
        self.inner.shared_written.load(Ordering::Relaxed)
    }

    /// Samples written as values that were serialized after all: a reader of another
    /// process or type matched later and asked for them (durability, repairs), or a
    /// content filter or transcoding reader needed their bytes.
    pub fn late_serializations(&self) -> u64 {
        self.inner.pool.late_serializations()
    }

    /// Samples handed directly to readers of this writer's own participant, once per reader:
    /// no DATA built nor parsed (a Tachyon extension; `docs/runtime.md`, "In-process
    /// delivery").
    pub fn direct_deliveries(&self) -> u64 {
        self.protocol_count(|s| s.changes_direct)
    }

    /// One of the protocol's counters of this writer.
    fn protocol_count(&self, counter: impl FnOnce(tachyon_proto::WriterStats) -> u64) -> u64 {
        self.inner
            .runtime
            .shared
            .lock_for(self.inner.id)
            .participant
            .writer_stats(self.inner.id)
            .map_or(0, counter)
    }

    /// The readers matched now.
    pub fn matched_subscriptions(&self) -> Vec<Guid> {
        self.inner
            .runtime
            .shared
            .lock_for(self.inner.id)
            .participant
            .matched_readers(self.inner.id)
    }

    /// The writer's StatusCondition (every call returns the same condition).
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
    pub fn set_listener(&self, listener: Option<Arc<dyn DataWriterListener<T>>>, mask: StatusMask)
    where
        T: 'static,
    {
        let dispatch = listener.map(|l| (self.dispatch(l), mask & WRITER_STATUSES));
        self.inner
            .runtime
            .shared
            .lock_for(self.inner.id)
            .set_listener(self.inner.id, dispatch);
    }

    /// PUBLICATION_MATCHED; resets its change counts.
    pub fn get_publication_matched_status(&self) -> PublicationMatchedStatus {
        self.statuses(|s, id| s.publication_matched(id))
    }

    /// OFFERED_INCOMPATIBLE_QOS; resets its change count.
    pub fn get_offered_incompatible_qos_status(&self) -> IncompatibleQosStatus {
        self.statuses(|s, id| s.incompatible_qos(id))
    }

    /// LIVELINESS_LOST; resets its change count.
    pub fn get_liveliness_lost_status(&self) -> LivelinessLostStatus {
        self.statuses(|s, id| s.liveliness_lost(id))
    }

    /// OFFERED_DEADLINE_MISSED; resets its change count.
    pub fn get_offered_deadline_missed_status(&self) -> DeadlineMissedStatus {
        self.statuses(|s, id| s.deadline_missed(id))
    }

    fn statuses<R>(&self, f: impl FnOnce(&mut crate::runtime::Statuses, EntityId) -> R) -> R {
        f(
            &mut self.inner.runtime.shared.lock_for(self.inner.id).statuses,
            self.inner.id,
        )
    }

    /// The type-erased call of `listener` for this writer, holding the writer weakly.
    fn dispatch(&self, listener: Arc<dyn DataWriterListener<T>>) -> Dispatch
    where
        T: 'static,
    {
        let weak: Weak<WriterInner<T>> = Arc::downgrade(&self.inner);
        Arc::new(move |kinds: StatusMask| {
            let Some(inner) = weak.upgrade() else {
                return;
            };
            let writer = DataWriter { inner };
            let l = &*listener;
            if kinds.contains(StatusMask::PUBLICATION_MATCHED) {
                l.on_publication_matched(&writer, writer.get_publication_matched_status());
            }
            if kinds.contains(StatusMask::OFFERED_INCOMPATIBLE_QOS) {
                let s = writer.get_offered_incompatible_qos_status();
                l.on_offered_incompatible_qos(&writer, s);
            }
            if kinds.contains(StatusMask::LIVELINESS_LOST) {
                l.on_liveliness_lost(&writer, writer.get_liveliness_lost_status());
            }
            if kinds.contains(StatusMask::OFFERED_DEADLINE_MISSED) {
                let s = writer.get_offered_deadline_missed_status();
                l.on_offered_deadline_missed(&writer, s);
            }
        })
    }

    /// The writer's GUID.
    pub fn guid(&self) -> Guid {
        self.inner
            .runtime
            .shared
            .lock_for(self.inner.id)
            .participant
            .guid(self.inner.id)
    }

    /// Samples (and repairs) this writer did not send because the content filters of its
    /// matched readers refused them (a GAP told the readers instead); a Tachyon extension.
    pub fn filtered_sample_count(&self) -> u64 {
        self.protocol_count(|s| s.filtered_out)
    }

    /// The writer's QoS now (the same as [`get_qos`](Self::get_qos)).
    pub fn qos(&self) -> DataWriterQos {
        self.get_qos()
    }

    /// The writer's QoS now (DDS `get_qos`).
    pub fn get_qos(&self) -> DataWriterQos {
        lock(&self.inner.qos).clone()
    }

    /// Changes the writer's QoS (DDS `set_qos`). DEADLINE, LATENCY_BUDGET,
    /// TRANSPORT_PRIORITY, LIFESPAN, USER_DATA, OWNERSHIP_STRENGTH and WRITER_DATA_LIFECYCLE
    /// may change: the deadline timers restart with the new period, lifespan and priority
    /// apply to what is written and sent from now on, and the writer is re-announced through
    /// SEDP so matching is re-evaluated everywhere (a deadline no longer meeting a reader's
    /// request unmatches it and reports OFFERED/REQUESTED_INCOMPATIBLE_QOS). An empty
    /// DATA_REPRESENTATION stands for the one chosen at creation.
    ///
    /// Errors, with nothing changed: [`Error::ImmutablePolicy`] naming the first other
    /// policy that differs from [`get_qos`](Self::get_qos).
    pub fn set_qos(&self, mut qos: DataWriterQos) -> Result<(), Error> {
        let sh = &self.inner.runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let id = self.inner.id;
        // The main lane first (discovery), then the writer's own when it is another.
        let mut st = sh.lock();
        let mut cur = lock(&self.inner.qos);
        if qos.representation.is_empty() {
            qos.representation.clone_from(&cur.representation);
        }
        if let Some(p) = cur.immutable_change(&qos) {
            return Err(Error::ImmutablePolicy(p));
        }
        let now = sh.now();
        let update = WriterUpdate {
            deadline: qos.deadline,
            lifespan: qos.lifespan,
            priority: qos.transport_priority,
        };
        sh.in_own_lane(&mut st, id, now, |p| p.update_writer(now, id, update))?;
        let announced = st.participant.local_publication(id).cloned();
        *cur = qos.clone();
        drop(cur);
        let mut result = Ok(());
        if let Some(mut data) = announced.filter(|d| *d.qos != qos) {
            // Becoming critical, or no longer: the lane its readers answer in changes too.
            data.unicast_locators = sh.endpoint_locators(qos.transport_priority);
            data.qos = qos.into();
            result = st
                .participant
                .announce_writer(now, self.inner.id, data)
                .map_err(Error::from);
        }
        st.flush(sh, now);
        drop(st);
        sh.wake();
        result
    }

    fn instance_change(&self, sample: &T, kind: ChangeKind) -> Result<(), Error> {
        let ty = self.inner.dynamic.as_ref();
        let key = sample.instance(ty)?;
        let form = matched_readers_key_form(&self.inner.runtime.shared, self.inner.id);
        let mut buf = sample.key_payload(ty, self.inner.version, form)?;
        if self.readers_want_key_hash_only() {
            buf.clear();
        }
        let req = WriteRequest {
            kind,
            instance: key,
            source_timestamp: Time::default(),
            payload: buf.into(),
        };
        self.submit(req, true)
    }

    /// Whether a dispose or unregister should carry the key hash only, without the serialized
    /// key: when every matched reader needs it (`quirks::needs_key_hash_only_disposes`).
    fn readers_want_key_hash_only(&self) -> bool {
        every_matched_reader(
            &self.inner.runtime.shared,
            self.inner.id,
            quirks::needs_key_hash_only_disposes,
        )
    }

    /// Hands a change to the protocol, waiting up to `max_blocking_time` while a reliable
    /// KEEP_ALL history is full, and sends it from this thread. With `stamp_now`, its
    /// source timestamp is the wall clock when the protocol first looks at it (a write that
    /// then waits keeps it): read under the writer's lock, so timestamps follow the order of
    /// the writes, and derived from the protocol's own clock reading (one clock read per
    /// write, `Shared::wall_time`).
    fn submit(&self, req: WriteRequest, mut stamp_now: bool) -> Result<(), Error> {
        let sh = &self.inner.runtime.shared;
        // When blocking gives up: from the first time the writer would block (a write that
        // does not block reads no clock for it).
        let mut deadline = None;
        let mut st = sh.lock_for(self.inner.id);
        // Kept for another try only by a writer that may be told to wait (a copy of the
        // payload's handle and its drop are two atomic read-modify-writes per write).
        let mut kept = Some(req);
        loop {
            if sh.stopped() {
                return Err(Error::AlreadyDeleted);
            }
            let now = sh.now();
            let Some(mut req) = kept.take() else {
                return Err(Error::OutOfResources(HISTORY_FULL));
            };
            if stamp_now {
                req.source_timestamp = sh.wall_time(now);
                stamp_now = false;
            }
            if st.participant.write_may_block(self.inner.id) {
                kept = Some(req.clone());
            }
            match st.participant.write(now, self.inner.id, req) {
                Ok(_) => {
                    // The write's own DATA, built at once when it goes to one locator: to
                    // a reader of another process of this host it is in its ring already
                    // (the reader is woken once the lock is released), else in the outbox.
                    let published = st.send_written(sh, now, self.inner.id);
                    st.transmit(sh, now);
                    if st.has_sends() || published {
                        // The datagrams leave as the lock is released; the write's events
                        // are settled under the lock again, after them, so the reader on
                        // the other end starts on the sample sooner. A write with no event
                        // (to remote readers only: the usual one) takes the lock once.
                        // The timers are looked at once they left.
                        if !st.participant.has_pending_events() {
                            sh.release_after_write(st, self.inner.id);
                            sh.wake_published(published);
                            return Ok(());
                        }
                        drop(st);
                        sh.wake_published(published);
                        st = sh.lock_for(self.inner.id);
                    }
                    st.settle(sh, now);
                    sh.release_after_write(st, self.inner.id);
                    return Ok(());
                }
                Err(tachyon_proto::Error::Write(WriteError::WouldBlock { .. })) => {
                    if kept.is_none() {
                        // Refused although no limit said it could be: not retried.
                        return Err(Error::OutOfResources(HISTORY_FULL));
                    }
                    let deadline = *deadline
                        .get_or_insert_with(|| StdInstant::now() + self.inner.max_blocking_time);
                    let left = deadline.saturating_duration_since(StdInstant::now());
                    if left.is_zero() {
                        return Err(Error::Timeout);
                    }
                    st = sh.wait(st, left);
                }
                Err(e) => return Err(e.into()),
            }
        }
    }
}

/// What a write refused by a writer that was not expected to refuse it says.
const HISTORY_FULL: &str = "the writer's history is full";

impl<T: Loanable> DataWriter<T> {
    /// Lends a sample to write in place, then publish with
    /// [`write_loaned`](Self::write_loaned) ([`crate::loan`]). With shared memory on, it is
    /// a slot of this writer's loan area, which readers of other processes of the host read
    /// in place: nothing is serialized or copied. Without, or with every slot in use (held
    /// by readers, or by the writer's history), it is heap memory. It holds what an earlier
    /// sample left there (or zeros): write every member.
    pub fn loan_sample(&self) -> Result<Loan<T>, Error> {
        let inner = &self.inner;
        if inner.runtime.shared.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        if in_place_header::<T>(inner.version).is_some() {
            let area = inner.loan_area.get_or_init(|| {
                let shm = inner.runtime.shared.transports.shm()?;
                crate::loan::make_area::<T>(shm.loans())
            });
            if let Some(loan) = area.as_ref().and_then(|a| a.loan()).and_then(Loan::in_slot) {
                return Ok(loan);
            }
        }
        Loan::on_heap().ok_or(Error::OutOfResources("no memory for a loaned sample"))
    }

    /// Publishes a loaned sample, timestamped now.
    pub fn write_loaned(&self, loan: Loan<T>) -> Result<(), Error> {
        self.write_loaned_w_timestamp(loan, SystemTime::now())
    }

    /// Publishes a loaned sample with a given source timestamp: a sample in shared memory
    /// as it lies (readers of other processes of this host are sent a reference to it,
    /// others its bytes), one on the heap copied (not serialized) into a payload.
    pub fn write_loaned_w_timestamp(
        &self,
        loan: Loan<T>,
        timestamp: SystemTime,
    ) -> Result<(), Error> {
        let key = tachyon_cdr::key_hash(&*loan)?;
        let size = std::mem::size_of::<T>();
        let payload = match (in_place_header::<T>(self.inner.version), loan.store) {
            (Some(h), Store::Shm(slot)) => {
                crate::loan::publish::<T>(slot, h, &self.inner.loan_payloads)
                    .ok_or(Error::BadParameter("a loan's slot cannot hold its sample"))?
            }
            (Some(h), Store::Heap(value)) => {
                let filled = self.inner.pool.fill(4 + size, |bytes| {
                    bytes[..4].copy_from_slice(&h);
                    bytes[4..].copy_from_slice(zerocopy::IntoBytes::as_bytes(&*value));
                    Ok::<_, std::convert::Infallible>(bytes.len())
                });
                match filled {
                    Ok(p) => p,
                    Err(never) => match never {},
                }
            }
            (None, store) => {
                let loan = Loan { store };
                let version = self.inner.version;
                let size = tachyon_cdr::serialized_size(&*loan, version)?;
                self.inner.pool.fill(size, |buf| {
                    tachyon_cdr::serialize(&*loan, version, Endianness::Little, buf)
                })?
            }
        };
        self.submit(
            WriteRequest::data(key, wire_time(timestamp), payload),
            false,
        )
    }
}

impl<T> Drop for WriterInner<T> {
    fn drop(&mut self) {
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return;
        }
        unregister_for_fast_readers(sh, self.id);
        // Its StatusCondition no longer triggers.
        sh.delete_endpoint(self.id, |p, now, id| {
            let _ = p.delete_writer(now, id);
        });
    }
}

/// Deleting a writer unregisters its instances. Readers learn that from discovery (the
/// writer is gone), except some that then report only the instances still holding samples
/// (`quirks::needs_unregister_on_writer_deletion`): when every matched reader is such, `writer`
/// sends an unregistration per registered instance, key hash only (sent at once).
pub(crate) fn unregister_for_fast_readers(sh: &Shared, writer: EntityId) {
    if !every_matched_reader(sh, writer, quirks::needs_unregister_on_writer_deletion) {
        return;
    }
    let mut st = sh.lock_for(writer);
    let now = sh.now();
    let instances: Vec<KeyHash> = st
        .participant
        .writer_history(writer)
        .map(|h| h.registered_instances().copied().collect())
        .unwrap_or_default();
    let ts = wire_now();
    for instance in &instances {
        let req = WriteRequest {
            kind: ChangeKind::NotAliveUnregistered,
            instance: *instance,
            source_timestamp: ts,
            payload: Vec::new().into(),
        };
        let _ = st.participant.write(now, writer, req);
    }
    if !instances.is_empty() {
        st.flush(sh, now);
    }
}

/// [`quirks::every_matched_reader`] for a writer of any lane: its matched readers from its
/// lane, their vendors from discovery (the main lane), each lock taken alone.
pub(crate) fn every_matched_reader(
    sh: &Shared,
    writer: EntityId,
    quirk: fn(tachyon_wire::VendorId) -> bool,
) -> bool {
    if sh.lane_of(writer) == crate::runtime::lanes::MAIN {
        return quirks::every_matched_reader(&sh.lock().participant, writer, quirk);
    }
    let readers = sh.lock_for(writer).participant.matched_readers(writer);
    let st = sh.lock();
    !readers.is_empty()
        && readers.iter().all(|g| {
            st.participant
                .discovered_participant(&g.prefix)
                .is_some_and(|d| quirk(d.data.vendor_id))
        })
}

/// The form of the key-only payloads writer `writer` sends: the bare key members when a
/// matched reader requires them and none requires the key holder, else the key holder
/// (`quirks::key_payload_form`).
fn matched_readers_key_form(sh: &Shared, writer: EntityId) -> tachyon_cdr::KeyForm {
    use tachyon_cdr::KeyForm;
    let readers = sh.lock_for(writer).participant.matched_readers(writer);
    let st = sh.lock();
    let (mut bare, mut framed) = (false, false);
    for g in &readers {
        let Some(d) = st.participant.discovered_participant(&g.prefix) else {
            continue;
        };
        match quirks::key_payload_form(d.data.vendor_id, d.data.product_version) {
            Some(KeyForm::Bare) => bare = true,
            Some(KeyForm::Framed) => framed = true,
            None => {}
        }
    }
    if bare && !framed {
        KeyForm::Bare
    } else {
        KeyForm::Framed
    }
}

/// A wall-clock time as an RTPS timestamp.
///
/// The fraction is rounded up, as Cyclone DDS does, so that reading it back with
/// [`Time::nanos`] (rounded down) gives the same nanoseconds: a timestamp survives the round
/// trip to the wire exactly (`ddsperf` carries a flag in its lowest bit).
pub(crate) fn wire_time(t: SystemTime) -> Time {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    time_of(d.as_secs(), u64::from(d.subsec_nanos()))
}

/// The wall clock now as an RTPS timestamp ([`wire_time`] of `SystemTime::now()`, read as
/// integer nanoseconds: half the instructions).
pub(crate) fn wire_now() -> Time {
    wire_nanos(tachyon_transport::clock::realtime_nanos())
}

/// Nanoseconds since the Unix epoch as an RTPS timestamp.
pub(crate) fn wire_nanos(n: u64) -> Time {
    time_of(n / 1_000_000_000, n % 1_000_000_000)
}

fn time_of(seconds: u64, subsec_nanos: u64) -> Time {
    Time {
        seconds: i32::try_from(seconds).unwrap_or(i32::MAX),
        fraction: (subsec_nanos << 32).div_ceil(1_000_000_000) as u32,
    }
}

impl<T> DataWriter<T> {
    /// The writer's runtime and entity id (what an `AnyDataWriter` compares).
    pub(crate) fn entity(&self) -> (&Arc<Runtime>, EntityId) {
        (&self.inner.runtime, self.inner.id)
    }
}

#[cfg(test)]
mod wire_time_tests {
    use super::*;

    #[test]
    fn nanoseconds_survive_the_round_trip_through_the_wire_fraction() {
        for ns in (0..1_000_000_000u32)
            .step_by(999_983)
            .chain([1, 2, 3, 999_999_999])
        {
            let t = SystemTime::UNIX_EPOCH + std::time::Duration::new(1_700_000_000, ns);
            let w = wire_time(t);
            assert_eq!(w.nanos(), ns, "fraction {:#x}", w.fraction);
            assert_eq!(w.seconds, 1_700_000_000);
        }
    }

    #[test]
    fn now_on_the_wire_is_the_system_time() {
        let before = wire_time(SystemTime::now());
        let now = wire_now();
        let after = wire_time(SystemTime::now());
        let key = |t: Time| (t.seconds, t.fraction);
        assert!(key(before) <= key(now) && key(now) <= key(after));
    }
}
