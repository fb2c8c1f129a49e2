//! [`StatusCondition`]: triggered while an enabled communication status of its entity
//! has changed since the application last read it.

use std::fmt;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use tachyon_wire::EntityId;

use super::ConditionId;
use crate::runtime::notify::Observers;
use crate::runtime::Runtime;
use crate::status::StatusMask;

/// The StatusCondition of one entity (`get_statuscondition` of a DataReader, DataWriter,
/// Subscriber, Publisher, Topic or DomainParticipant). Its trigger value is whether some
/// status in its enabled mask changed since it was last read with the entity's
/// `get_*_status()` (DATA_AVAILABLE: since the last read or take; a Subscriber's
/// DATA_ON_READERS: since the last read or take on one of its readers, or
/// `on_data_on_readers`). Every status is enabled at first. Clones share the condition, its
/// enabled mask included.
#[derive(Clone)]
pub struct StatusCondition {
    inner: Arc<Inner>,
}

struct Inner {
    id: ConditionId,
    runtime: Arc<Runtime>,
    entity: EntityId,
    enabled: AtomicU32,
}

impl fmt::Debug for StatusCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StatusCondition")
            .field("id", &self.inner.id)
            .field("entity", &self.inner.entity)
            .field("enabled", &self.get_enabled_statuses())
            .finish()
    }
}

impl StatusCondition {
    /// The condition of entity `entity`, every status enabled.
    pub(crate) fn new(runtime: Arc<Runtime>, entity: EntityId) -> StatusCondition {
        StatusCondition {
            inner: Arc::new(Inner {
                id: ConditionId::next(),
                runtime,
                entity,
                enabled: AtomicU32::new(StatusMask::ALL.bits()),
            }),
        }
    }

    /// Chooses the statuses the condition triggers on.
    pub fn set_enabled_statuses(&self, mask: StatusMask) {
        self.inner.enabled.store(mask.bits(), Ordering::SeqCst);
        // A waiter may be waiting for what is now enabled and already changed.
        self.inner.runtime.shared.observers.notify();
    }

    /// The statuses the condition triggers on.
    pub fn get_enabled_statuses(&self) -> StatusMask {
        StatusMask::from_bits(self.inner.enabled.load(Ordering::SeqCst))
    }

    /// Whether an enabled status changed since it was last read.
    pub fn trigger_value(&self) -> bool {
        let changed = self
            .inner
            .runtime
            .shared
            .lock_for(self.inner.entity)
            .statuses
            .changes(self.inner.entity);
        changed.intersects(self.get_enabled_statuses())
    }

    /// The condition's id.
    pub fn id(&self) -> ConditionId {
        self.inner.id
    }

    /// The entity whose changes wake a waiter on this condition: a reader or writer is named
    /// by the events of its own changes; a group's or the participant's statuses change with
    /// those of their endpoints, so they follow every change (`None`).
    pub(super) fn interest(&self) -> Option<EntityId> {
        let kind = self.inner.entity.kind();
        (kind.is_reader() || kind.is_writer()).then_some(self.inner.entity)
    }

    pub(super) fn observers(&self) -> &Observers {
        &self.inner.runtime.shared.observers
    }
}
