//! [`Subscriber`] and [`DataReader`]: receiving typed samples.

use std::marker::PhantomData;
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant as StdInstant};

use tachyon_cdr::{DdsType, Decode, KeyHash};
use tachyon_proto::discovery::SubscriptionData;
use tachyon_proto::history::{Durability, Query, ReaderHistoryConfig, SampleInfo};
use tachyon_proto::qos::{DataReaderQos, DataRepresentation, DurabilityKind, SubscriberQos};
use tachyon_proto::ReaderConfig;
use tachyon_wire::{EntityId, Guid};

use crate::error::Error;
use crate::runtime::Runtime;
use crate::status::EndpointStatus;
use crate::topic::Topic;

/// Groups readers sharing PARTITION and PRESENTATION.
pub struct Subscriber {
    runtime: Arc<Runtime>,
    qos: SubscriberQos,
}

impl Subscriber {
    pub(crate) fn new(runtime: Arc<Runtime>, qos: SubscriberQos) -> Subscriber {
        Subscriber { runtime, qos }
    }

    /// The subscriber's QoS.
    pub fn qos(&self) -> &SubscriberQos {
        &self.qos
    }

    /// Creates a reader of `topic` and announces it.
    pub fn create_datareader<T>(
        &self,
        topic: &Topic<T>,
        mut qos: DataReaderQos,
    ) -> Result<DataReader<T>, Error>
    where
        T: DdsType + for<'de> Decode<'de>,
    {
        if qos.representation.is_empty() {
            // Tachyon decodes both, whatever the type's extensibility.
            qos.representation = vec![DataRepresentation::Xcdr1, DataRepresentation::Xcdr2];
        }
        if qos.deadline.is_some_and(|d| d < qos.time_based_filter) {
            return Err(tachyon_proto::qos::InconsistentQos::TimeBasedFilterExceedsDeadline.into());
        }
        let config = ReaderConfig {
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
            keyed: T::KEYED,
            key_hash_of: T::KEYED.then_some(key_hash_of::<T> as _),
            deadline: qos.deadline,
            time_based_filter: (!qos.time_based_filter.is_zero()).then_some(qos.time_based_filter),
            ..ReaderConfig::default()
        };
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let mut st = sh.lock();
        let now = sh.now();
        let id = st.participant.create_reader(config)?;
        let mut data = SubscriptionData::new(Guid::UNKNOWN, topic.name(), topic.type_name());
        data.qos = qos.clone();
        data.partition.clone_from(&self.qos.partition);
        data.presentation = self.qos.presentation;
        data.group_data.clone_from(&self.qos.group_data);
        data.topic_data.clone_from(&topic.qos().topic_data);
        st.participant.announce_reader(now, id, data)?;
        st.flush(sh, now);
        drop(st);
        sh.wake();
        Ok(DataReader {
            runtime: Arc::clone(&self.runtime),
            id,
            qos,
            decode_errors: std::sync::atomic::AtomicU64::new(0),
            _type: PhantomData,
        })
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

/// A received sample: the data (absent for a dispose or unregister) and its SampleInfo.
#[derive(Clone, Debug)]
pub struct Sample<T> {
    /// The value, `None` when `info.valid_data` is false.
    pub data: Option<T>,
    /// DDS SampleInfo.
    pub info: SampleInfo,
}

/// Reads samples of `T`.
pub struct DataReader<T> {
    runtime: Arc<Runtime>,
    id: EntityId,
    qos: DataReaderQos,
    decode_errors: std::sync::atomic::AtomicU64,
    _type: PhantomData<fn() -> T>,
}

impl<T: DdsType + for<'de> Decode<'de>> DataReader<T> {
    /// Takes up to `max_samples` samples (removing them from the reader).
    pub fn take(&self, max_samples: usize) -> Result<Vec<Sample<T>>, Error> {
        self.take_with(&Query::ANY.max_samples(max_samples))
    }

    /// Reads up to `max_samples` samples (they stay, marked READ).
    pub fn read(&self, max_samples: usize) -> Result<Vec<Sample<T>>, Error> {
        self.read_with(&Query::ANY.max_samples(max_samples))
    }

    /// Takes the samples `query` selects (states, instance, count).
    pub fn take_with(&self, query: &Query) -> Result<Vec<Sample<T>>, Error> {
        let sh = &self.runtime.shared;
        let mut raw = Vec::new();
        {
            let mut st = sh.lock();
            let now = sh.now();
            st.participant.take(now, self.id, query, &mut raw)?;
            // Taking may reopen a full cache: acknowledgements become due.
            st.flush(sh, now);
        }
        Ok(self.decode(raw))
    }

    /// Reads the samples `query` selects.
    pub fn read_with(&self, query: &Query) -> Result<Vec<Sample<T>>, Error> {
        let mut raw = Vec::new();
        self.runtime
            .shared
            .lock()
            .participant
            .read(self.id, query, &mut raw)?;
        Ok(self.decode(raw))
    }

    /// Blocks until the reader holds a sample not yet read, or `timeout` passed; returns
    /// whether one is there.
    pub fn wait_for_data(&self, timeout: StdDuration) -> bool {
        let sh = &self.runtime.shared;
        let deadline = StdInstant::now() + timeout;
        let mut st = sh.lock();
        loop {
            let unread = st
                .participant
                .reader_history(self.id)
                .is_some_and(|h| h.has_unread());
            if unread {
                return true;
            }
            let left = deadline.saturating_duration_since(StdInstant::now());
            if left.is_zero() || sh.stopped() {
                return false;
            }
            st = sh.wait(st, left);
        }
    }

    /// Writers matched now.
    pub fn matched_publications(&self) -> Vec<Guid> {
        self.runtime
            .shared
            .lock()
            .participant
            .matched_writers(self.id)
    }

    /// The reader's communication statuses.
    pub fn status(&self) -> EndpointStatus {
        self.runtime.shared.lock().statuses.get(self.id)
    }

    /// Samples that arrived but did not decode as `T` (dropped, logged).
    pub fn decode_errors(&self) -> u64 {
        self.decode_errors
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    /// The reader's GUID.
    pub fn guid(&self) -> Guid {
        self.runtime.shared.lock().participant.guid(self.id)
    }

    /// The reader's QoS.
    pub fn qos(&self) -> &DataReaderQos {
        &self.qos
    }

    fn decode(&self, raw: Vec<tachyon_proto::history::Sample>) -> Vec<Sample<T>> {
        let mut out = Vec::with_capacity(raw.len());
        for s in raw {
            let data = match &s.data {
                Some(p) if s.info.valid_data => match tachyon_cdr::deserialize::<T>(p.as_bytes()) {
                    Ok(v) => Some(v),
                    Err(e) => {
                        self.decode_errors
                            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        tracing::warn!(error = %e, "a received sample does not decode; dropped");
                        continue;
                    }
                },
                _ => None,
            };
            out.push(Sample { data, info: s.info });
        }
        out
    }
}

impl<T> Drop for DataReader<T> {
    fn drop(&mut self) {
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return;
        }
        let mut st = sh.lock();
        let now = sh.now();
        let _ = st.participant.delete_reader(now, self.id);
        st.statuses.remove(self.id);
        st.flush(sh, now);
    }
}
