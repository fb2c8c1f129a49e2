//! [`Topic`]: a name, a type and the QoS its writers and readers start from; its
//! INCONSISTENT_TOPIC status, StatusCondition and listener.

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use tachyon_proto::qos::TopicQos;
use tachyon_wire::EntityId;

use crate::condition::StatusCondition;
use crate::error::Error;
use crate::listener::{topic_dispatch, TopicListener, TOPIC_STATUSES};
use crate::runtime::{GroupDispatch, Runtime};
use crate::status::{InconsistentTopicStatus, StatusMask};

/// A typed topic of a participant. Discovery compares it with the remote writers and
/// readers of its name: one with another type name raises INCONSISTENT_TOPIC on it (and
/// never matches).
pub struct Topic<T> {
    name: String,
    type_name: &'static str,
    qos: TopicQos,
    runtime: Arc<Runtime>,
    id: EntityId,
    condition: StatusCondition,
    _type: PhantomData<fn() -> T>,
}

impl<T> fmt::Debug for Topic<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Topic")
            .field("name", &self.name)
            .field("type_name", &self.type_name)
            .field("qos", &self.qos)
            .finish_non_exhaustive()
    }
}

impl<T> Topic<T> {
    /// Registers the topic with `runtime` (and its listener, before discovery reports
    /// anything for it).
    pub(crate) fn new(
        runtime: &Arc<Runtime>,
        name: &str,
        type_name: &'static str,
        qos: TopicQos,
        listener: Option<(GroupDispatch, StatusMask)>,
    ) -> Result<Topic<T>, Error> {
        let sh = &runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        let mut st = sh.lock();
        let id = st.add_topic(name, type_name);
        if let Some((dispatch, mask)) = listener {
            st.set_group_listener(id, Some((dispatch, mask & TOPIC_STATUSES)));
        }
        let now = sh.now();
        st.flush(sh, now);
        drop(st);
        sh.wake();
        Ok(Topic {
            name: name.to_owned(),
            type_name,
            qos,
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

    /// The type name announced in discovery (compared exactly by every vendor).
    pub fn type_name(&self) -> &str {
        self.type_name
    }

    /// The topic's QoS.
    pub fn qos(&self) -> &TopicQos {
        &self.qos
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
