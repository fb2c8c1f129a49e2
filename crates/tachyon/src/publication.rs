//! [`Publisher`] and [`DataWriter`]: writing typed samples.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant as StdInstant, SystemTime};

use tachyon_cdr::{DdsType, Endianness, Extensibility, KeyHash, XcdrVersion};
use tachyon_proto::discovery::PublicationData;
use tachyon_proto::history::{
    ChangeKind, Durability, PayloadPool, WriteError, WriterHistoryConfig,
};
use tachyon_proto::qos::{DataRepresentation, DataWriterQos, DurabilityKind, PublisherQos};
use tachyon_proto::{WriteRequest, WriterConfig};
use tachyon_wire::{EntityId, Guid, Time};

use crate::error::Error;
use crate::runtime::Runtime;
use crate::status::EndpointStatus;
use crate::topic::Topic;

/// Groups writers sharing PARTITION and PRESENTATION.
pub struct Publisher {
    runtime: Arc<Runtime>,
    qos: PublisherQos,
}

impl Publisher {
    pub(crate) fn new(runtime: Arc<Runtime>, qos: PublisherQos) -> Publisher {
        Publisher { runtime, qos }
    }

    /// The publisher's QoS.
    pub fn qos(&self) -> &PublisherQos {
        &self.qos
    }

    /// Creates a writer of `topic` and announces it.
    pub fn create_datawriter<T: DdsType>(
        &self,
        topic: &Topic<T>,
        mut qos: DataWriterQos,
    ) -> Result<DataWriter<T>, Error> {
        if qos.representation.is_empty() {
            qos.representation = default_representation(T::EXTENSIBILITY);
        }
        let version = match qos.representation.first() {
            Some(DataRepresentation::Xcdr2) => XcdrVersion::Xcdr2,
            Some(DataRepresentation::Xcdr1) => XcdrVersion::Xcdr1,
            _ => return Err(Error::Unsupported("the XML data representation")),
        };
        let config = writer_config(&qos, T::KEYED);
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let mut st = sh.lock();
        let now = sh.now();
        let id = st.participant.create_writer(config)?;
        let mut data = PublicationData::new(Guid::UNKNOWN, topic.name(), topic.type_name());
        data.qos = qos.clone();
        data.partition.clone_from(&self.qos.partition);
        data.presentation = self.qos.presentation;
        data.group_data.clone_from(&self.qos.group_data);
        data.topic_data.clone_from(&topic.qos().topic_data);
        st.participant.announce_writer(now, id, data)?;
        st.flush(sh, now);
        drop(st);
        sh.wake();
        Ok(DataWriter {
            runtime: Arc::clone(&self.runtime),
            id,
            qos,
            version,
            pool: PayloadPool::new(),
            _type: PhantomData,
        })
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

/// The protocol configuration a writer's QoS implies.
fn writer_config(qos: &DataWriterQos, keyed: bool) -> WriterConfig {
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
        ..WriterConfig::default()
    }
}

/// Writes samples of `T`.
pub struct DataWriter<T> {
    runtime: Arc<Runtime>,
    id: EntityId,
    qos: DataWriterQos,
    version: XcdrVersion,
    pool: PayloadPool,
    _type: PhantomData<fn(&T)>,
}

impl<T: DdsType> DataWriter<T> {
    /// Writes a sample, timestamped now.
    pub fn write(&self, sample: &T) -> Result<(), Error> {
        self.write_w_timestamp(sample, SystemTime::now())
    }

    /// Writes a sample with a given source timestamp.
    pub fn write_w_timestamp(&self, sample: &T, timestamp: SystemTime) -> Result<(), Error> {
        let key = tachyon_cdr::key_hash(sample)?;
        let size = tachyon_cdr::serialized_size(sample, self.version)?;
        let mut buf = self.pool.alloc(size);
        let n =
            tachyon_cdr::serialize(sample, self.version, Endianness::Little, buf.as_mut_slice())?;
        buf.truncate(n);
        let req = WriteRequest::data(key, wire_time(timestamp), buf.freeze());
        self.submit(req)
    }

    /// Disposes the instance of `sample` (its key fields).
    pub fn dispose(&self, sample: &T) -> Result<(), Error> {
        self.instance_change(sample, ChangeKind::NotAliveDisposed)
    }

    /// Unregisters the instance of `sample` (disposing it too when the QoS says
    /// `autodispose_unregistered_instances`).
    pub fn unregister_instance(&self, sample: &T) -> Result<(), Error> {
        let kind = if self.qos.autodispose_unregistered_instances {
            ChangeKind::NotAliveDisposedUnregistered
        } else {
            ChangeKind::NotAliveUnregistered
        };
        self.instance_change(sample, kind)
    }

    /// Registers the instance of `sample`; returns its handle.
    pub fn register_instance(&self, sample: &T) -> Result<KeyHash, Error> {
        let key = tachyon_cdr::key_hash(sample)?;
        let mut st = self.runtime.shared.lock();
        Ok(st.participant.register_instance(self.id, key)?)
    }

    /// The handle of the instance of `sample` (its key hash).
    pub fn lookup_instance(&self, sample: &T) -> Result<KeyHash, Error> {
        Ok(tachyon_cdr::key_hash(sample)?)
    }

    /// Blocks until every matched reliable reader acknowledged everything written, or
    /// `timeout` passed (`Err(Timeout)`).
    pub fn wait_for_acknowledgments(&self, timeout: StdDuration) -> Result<(), Error> {
        let sh = &self.runtime.shared;
        let deadline = StdInstant::now() + timeout;
        let mut st = sh.lock();
        loop {
            if st.participant.all_acknowledged(self.id) != Some(false) {
                return Ok(());
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

    /// The readers matched now.
    pub fn matched_subscriptions(&self) -> Vec<Guid> {
        self.runtime
            .shared
            .lock()
            .participant
            .matched_readers(self.id)
    }

    /// The writer's communication statuses.
    pub fn status(&self) -> EndpointStatus {
        self.runtime.shared.lock().statuses.get(self.id)
    }

    /// The writer's GUID.
    pub fn guid(&self) -> Guid {
        self.runtime.shared.lock().participant.guid(self.id)
    }

    /// The writer's QoS.
    pub fn qos(&self) -> &DataWriterQos {
        &self.qos
    }

    fn instance_change(&self, sample: &T, kind: ChangeKind) -> Result<(), Error> {
        let key = tachyon_cdr::key_hash(sample)?;
        // The key never takes more than the whole sample.
        let mut buf = vec![0u8; tachyon_cdr::serialized_size(sample, self.version)?];
        let n =
            tachyon_cdr::serialize_key_payload(sample, self.version, Endianness::Little, &mut buf)?;
        buf.truncate(n);
        let req = WriteRequest {
            kind,
            instance: key,
            source_timestamp: wire_time(SystemTime::now()),
            payload: buf.into(),
        };
        self.submit(req)
    }

    /// Hands a change to the protocol, waiting up to `max_blocking_time` while a reliable
    /// KEEP_ALL history is full, and sends it from this thread.
    fn submit(&self, req: WriteRequest) -> Result<(), Error> {
        let sh = &self.runtime.shared;
        let deadline = StdInstant::now() + self.qos.reliability.max_blocking_time;
        let mut st = sh.lock();
        loop {
            if sh.stopped() {
                return Err(Error::AlreadyDeleted);
            }
            let now = sh.now();
            match st.participant.write(now, self.id, req.clone()) {
                Ok(_) => {
                    st.flush(sh, now);
                    drop(st);
                    sh.wake();
                    return Ok(());
                }
                Err(tachyon_proto::Error::Write(WriteError::WouldBlock { .. })) => {
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

impl<T> Drop for DataWriter<T> {
    fn drop(&mut self) {
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return;
        }
        let mut st = sh.lock();
        let now = sh.now();
        let _ = st.participant.delete_writer(now, self.id);
        st.statuses.remove(self.id);
        st.flush(sh, now);
    }
}

/// A wall-clock time as an RTPS timestamp.
pub(crate) fn wire_time(t: SystemTime) -> Time {
    let d = t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    Time {
        seconds: i32::try_from(d.as_secs()).unwrap_or(i32::MAX),
        fraction: ((u64::from(d.subsec_nanos()) << 32) / 1_000_000_000) as u32,
    }
}
