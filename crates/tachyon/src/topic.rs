//! [`Topic`]: a name, a type and the QoS its writers and readers start from; its
//! INCONSISTENT_TOPIC status, StatusCondition and listener.

use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};

use tachyon_cdr::{DdsType, Extensibility};
use tachyon_proto::qos::TopicQos;
use tachyon_wire::EntityId;

use crate::condition::StatusCondition;
use crate::dynamic::DynamicType;
use crate::error::Error;
use crate::listener::{topic_dispatch, TopicListener, TOPIC_STATUSES};
use crate::runtime::{lock, GroupDispatch, Runtime};
use crate::status::{InconsistentTopicStatus, StatusMask};

/// What a topic knows of its type: the name discovery announces, keys, extensibility, the
/// XTypes representation, and the description of a dynamic type.
#[derive(Clone)]
pub(crate) struct TypeSupport {
    pub(crate) name: Arc<str>,
    pub(crate) keyed: bool,
    pub(crate) extensibility: Extensibility,
    /// The type's XTypes representation (what its endpoints announce), if it has one.
    pub(crate) representations: Option<Arc<tachyon_xtypes::TypeRepresentations>>,
    pub(crate) dynamic: Option<DynamicType>,
}

impl TypeSupport {
    /// A type known by its name alone (no description, no TypeInformation: endpoints match
    /// it by name), for samples handled undecoded.
    pub(crate) fn named(type_name: &str, keyed: bool) -> TypeSupport {
        TypeSupport {
            name: Arc::from(type_name),
            keyed,
            extensibility: Extensibility::Final,
            representations: None,
            dynamic: None,
        }
    }

    /// A derived (or hand-written) type's.
    pub(crate) fn of<T: DdsType>() -> TypeSupport {
        let representations =
            T::type_desc().and_then(
                |desc| match tachyon_xtypes::TypeRepresentations::of(&desc) {
                    Ok(reps) => Some(Arc::new(reps)),
                    Err(e) => {
                        tracing::warn!(type_name = T::TYPE_NAME, error = %e,
                        "no TypeInformation for this type: its endpoints match by type name");
                        None
                    }
                },
            );
        TypeSupport {
            name: Arc::from(T::TYPE_NAME),
            keyed: T::KEYED,
            extensibility: T::EXTENSIBILITY,
            representations,
            dynamic: None,
        }
    }

    /// A dynamic type's.
    pub(crate) fn dynamic(ty: &DynamicType) -> TypeSupport {
        TypeSupport {
            name: Arc::from(ty.name()),
            keyed: ty.is_keyed(),
            extensibility: ty.extensibility(),
            representations: ty.representations(),
            dynamic: Some(ty.clone()),
        }
    }
}

/// A typed topic of a participant. Discovery compares it with the remote writers and
/// readers of its name: one with another type name raises INCONSISTENT_TOPIC on it (and
/// never matches).
pub struct Topic<T> {
    name: String,
    support: TypeSupport,
    qos: Mutex<TopicQos>,
    runtime: Arc<Runtime>,
    id: EntityId,
    condition: StatusCondition,
    _type: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Topic<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Topic")
            .field("name", &self.name)
            .field("type_name", &self.support.name)
            .field("qos", &self.get_qos())
            .finish_non_exhaustive()
    }
}

impl<T> Topic<T> {
    /// Registers the topic with `runtime` (and its listener, before discovery reports
    /// anything for it).
    pub(crate) fn new(
        runtime: &Arc<Runtime>,
        name: &str,
        support: TypeSupport,
        qos: TopicQos,
        listener: Option<(GroupDispatch, StatusMask)>,
    ) -> Result<Topic<T>, Error> {
        let sh = &runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let mut st = sh.lock();
        let id = st.add_topic(name, &support.name);
        if let Some(reps) = &support.representations {
            st.participant.add_local_types(reps);
        }
        if let Some((dispatch, mask)) = listener {
            st.set_group_listener(id, Some((dispatch, mask & TOPIC_STATUSES)));
        }
        let now = sh.now();
        st.flush(sh, now);
        drop(st);
        sh.wake();
        Ok(Topic {
            name: name.to_owned(),
            support,
            qos: Mutex::new(qos),
            runtime: Arc::clone(runtime),
            id,
            condition: StatusCondition::new(Arc::clone(runtime), id),
            _type: PhantomData,
        })
    }

    /// The topic name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The type's XTypes representation: its minimal and complete TypeObjects and the
    /// TypeInformation its writers and readers announce (`None` for a type that does not
    /// describe itself).
    pub fn type_representations(&self) -> Option<&tachyon_xtypes::TypeRepresentations> {
        self.support.representations.as_deref()
    }

    /// The topic's dynamic type (`None` for a topic of a derived type).
    pub(crate) fn dynamic_type(&self) -> Option<&DynamicType> {
        self.support.dynamic.as_ref()
    }

    /// How the topic's samples are told apart and serialized.
    pub(crate) fn support(&self) -> &TypeSupport {
        &self.support
    }

    /// The type name announced in discovery (compared exactly by every vendor).
    pub fn type_name(&self) -> &str {
        &self.support.name
    }

    /// The topic's QoS now (the same as [`get_qos`](Self::get_qos)).
    pub fn qos(&self) -> TopicQos {
        self.get_qos()
    }

    /// The topic's QoS now (DDS `get_qos`).
    pub fn get_qos(&self) -> TopicQos {
        lock(&self.qos).clone()
    }

    /// Changes the topic's QoS (DDS `set_qos`). TOPIC_DATA, DEADLINE, LATENCY_BUDGET,
    /// TRANSPORT_PRIORITY and LIFESPAN may change. A TOPIC_DATA change re-announces every
    /// writer and reader of this participant on the topic through SEDP (others see it in
    /// their builtin topics); the other changeable policies are defaults for endpoints
    /// created from now on ([`DataWriterQos::from_topic`]), as in DDS.
    ///
    /// Errors, with nothing changed: [`Error::ImmutablePolicy`] naming the first other
    /// policy that differs from [`get_qos`](Self::get_qos).
    ///
    /// [`DataWriterQos::from_topic`]: tachyon_proto::qos::DataWriterQos::from_topic
    pub fn set_qos(&self, qos: TopicQos) -> Result<(), Error> {
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let mut st = sh.lock();
        let mut cur = lock(&self.qos);
        if let Some(p) = cur.immutable_change(&qos) {
            return Err(Error::ImmutablePolicy(p));
        }
        let now = sh.now();
        let announced = cur.topic_data != qos.topic_data;
        *cur = qos;
        let topic_data = cur.topic_data.clone();
        drop(cur);
        let mut result: Result<(), Error> = Ok(());
        if announced {
            let p = &mut st.participant;
            let on_topic = |name: &str, data: &[u8]| name == self.name && data != topic_data;
            let writers: Vec<_> = p
                .local_publications()
                .filter(|d| on_topic(&d.topic_name, &d.topic_data))
                .cloned()
                .collect();
            let readers: Vec<_> = p
                .local_subscriptions()
                .filter(|d| on_topic(&d.topic_name, &d.topic_data))
                .cloned()
                .collect();
            for mut d in writers {
                let id: EntityId = d.guid.entity_id;
                d.topic_data.clone_from(&topic_data);
                if let Err(e) = p.announce_writer(now, id, d) {
                    result = result.and(Err(e.into()));
                }
            }
            for mut d in readers {
                let id: EntityId = d.guid.entity_id;
                d.topic_data.clone_from(&topic_data);
                if let Err(e) = p.announce_reader(now, id, d) {
                    result = result.and(Err(e.into()));
                }
            }
        }
        st.flush(sh, now);
        drop(st);
        sh.wake();
        result
    }

    /// INCONSISTENT_TOPIC; resets its change count.
    pub fn get_inconsistent_topic_status(&self) -> InconsistentTopicStatus {
        self.runtime
            .shared
            .lock()
            .statuses
            .inconsistent_topic(self.id)
    }

    /// The topic's StatusCondition (INCONSISTENT_TOPIC; every call returns the same
    /// condition).
    pub fn get_statuscondition(&self) -> StatusCondition {
        self.condition.clone()
    }

    /// The statuses changed since they were last read (DDS `get_status_changes`).
    pub fn get_status_changes(&self) -> StatusMask {
        self.runtime.shared.lock().statuses.changes(self.id)
    }

    /// Sets the listener and the statuses it is called for (`None`: removes it). See
    /// [`crate::listener`]: listeners run on the driver thread.
    pub fn set_listener(&self, listener: Option<Arc<dyn TopicListener>>, mask: StatusMask) {
        let dispatch = listener.map(|l| (topic_dispatch(&self.runtime, l), mask & TOPIC_STATUSES));
        self.runtime
            .shared
            .lock()
            .set_group_listener(self.id, dispatch);
    }
}

impl<T> Drop for Topic<T> {
    fn drop(&mut self) {
        let sh = &self.runtime.shared;
        sh.lock().remove_entity(self.id);
        // Its StatusCondition no longer triggers.
        sh.observers.notify();
    }
}
