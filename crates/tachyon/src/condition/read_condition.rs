//! [`ReadCondition`]: triggered while its reader holds a sample in the given states.

use std::fmt;
use std::sync::Arc;

use tachyon_proto::history::{InstanceStateMask, Query, SampleStateMask, ViewStateMask};
use tachyon_wire::EntityId;

use super::ConditionId;
use crate::runtime::notify::Observers;
use crate::runtime::Runtime;

/// A condition on a DataReader's cache (`DataReader::create_readcondition`): triggered while
/// the reader holds at least one sample in its sample, view and instance states. Read or take
/// exactly those samples with `read_w_condition`/`take_w_condition`. Clones share the
/// condition; once its reader is deleted it never triggers.
#[derive(Clone)]
pub struct ReadCondition {
    inner: Arc<Inner>,
}

struct Inner {
    id: ConditionId,
    runtime: Arc<Runtime>,
    reader: EntityId,
    query: Query,
}

impl fmt::Debug for ReadCondition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ReadCondition")
            .field("id", &self.inner.id)
            .field("reader", &self.inner.reader)
            .field("sample_states", &self.inner.query.sample_states)
            .field("view_states", &self.inner.query.view_states)
            .field("instance_states", &self.inner.query.instance_states)
            .finish()
    }
}

impl ReadCondition {
    pub(crate) fn new(
        runtime: Arc<Runtime>,
        reader: EntityId,
        sample_states: SampleStateMask,
        view_states: ViewStateMask,
        instance_states: InstanceStateMask,
    ) -> ReadCondition {
        ReadCondition {
            inner: Arc::new(Inner {
                id: ConditionId::next(),
                runtime,
                reader,
                query: Query::ANY.states(sample_states, view_states, instance_states),
            }),
        }
    }

    /// Whether the reader holds a sample in the condition's states.
    pub fn trigger_value(&self) -> bool {
        let st = self.inner.runtime.shared.lock_for(self.inner.reader);
        st.reader_history(self.inner.reader)
            .is_some_and(|h| h.has_matching(&self.inner.query))
    }

    /// The sample states the condition selects.
    pub fn get_sample_state_mask(&self) -> SampleStateMask {
        self.inner.query.sample_states
    }

    /// The view states the condition selects.
    pub fn get_view_state_mask(&self) -> ViewStateMask {
        self.inner.query.view_states
    }

    /// The instance states the condition selects.
    pub fn get_instance_state_mask(&self) -> InstanceStateMask {
        self.inner.query.instance_states
    }

    /// The condition's id.
    pub fn id(&self) -> ConditionId {
        self.inner.id
    }

    /// The condition's states as a query of every instance, if it belongs to reader `reader`
    /// of `runtime`.
    pub(crate) fn query_for(&self, runtime: &Arc<Runtime>, reader: EntityId) -> Option<Query> {
        (Arc::ptr_eq(&self.inner.runtime, runtime) && self.inner.reader == reader)
            .then_some(self.inner.query)
    }

    /// The reader the condition belongs to.
    pub(super) fn reader(&self) -> EntityId {
        self.inner.reader
    }

    pub(super) fn observers(&self) -> &Observers {
        &self.inner.runtime.shared.observers
    }
}
