//! [`GuardCondition`]: a condition the application triggers itself.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use super::ConditionId;
use crate::runtime::notify::Observers;

/// A condition whose trigger value the application sets, e.g. to wake a thread blocked in
/// [`WaitSet::wait`](super::WaitSet::wait) from another thread. Clones share the condition.
#[derive(Clone, Debug)]
pub struct GuardCondition {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    id: ConditionId,
    trigger: AtomicBool,
    observers: Observers,
}

impl Default for GuardCondition {
    fn default() -> GuardCondition {
        GuardCondition::new()
    }
}

impl GuardCondition {
    /// A guard condition, not triggered.
    pub fn new() -> GuardCondition {
        GuardCondition {
            inner: Arc::new(Inner {
                id: ConditionId::next(),
                trigger: AtomicBool::new(false),
                observers: Observers::default(),
            }),
        }
    }

    /// Sets the trigger value; setting it wakes the WaitSets it is attached to at once.
    /// It stays set until the application resets it.
    pub fn set_trigger_value(&self, value: bool) {
        self.inner.trigger.store(value, Ordering::SeqCst);
        if value {
            self.inner.observers.notify();
        }
    }

    /// The trigger value.
    pub fn get_trigger_value(&self) -> bool {
        self.inner.trigger.load(Ordering::SeqCst)
    }

    /// The trigger value (the name every condition shares).
    pub fn trigger_value(&self) -> bool {
        self.get_trigger_value()
    }

    /// The condition's id.
    pub fn id(&self) -> ConditionId {
        self.inner.id
    }

    pub(super) fn observers(&self) -> &Observers {
        &self.inner.observers
    }
}
