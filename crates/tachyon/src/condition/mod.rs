//! DCPS conditions and the [`WaitSet`] that waits on them.
//!
//! - [`GuardCondition`]: triggered by the application (`set_trigger_value`), e.g. to wake a
//!   waiting thread for shutdown;
//! - [`StatusCondition`]: one per entity — DataReader, DataWriter, Subscriber
//!   (DATA_ON_READERS), Publisher, Topic (INCONSISTENT_TOPIC), DomainParticipant —
//!   (`get_statuscondition`), triggered while a status in its enabled mask has changed since
//!   that status was last read;
//! - [`ReadCondition`]: made by a DataReader (`create_readcondition`), triggered while the
//!   reader holds a sample in the given sample/view/instance states;
//! - [`WaitSet`]: blocks until one of its conditions triggers, and wakes as soon as the
//!   runtime's state changes (no polling).
//!
//! ```no_run
//! # use tachyon::prelude::*;
//! # #[derive(DdsType, Debug)] struct Hello { #[key] id: u32 }
//! # fn main() -> Result<(), Error> {
//! # let p = DomainParticipant::new(0)?;
//! # let topic = p.create_topic::<Hello>("hello")?;
//! let reader = p.create_subscriber()?.create_datareader(&topic, DataReaderQos::default())?;
//! let data = reader.create_readcondition(
//!     SampleStateMask::NOT_READ, ViewStateMask::ANY, InstanceStateMask::ANY);
//! let stop = GuardCondition::new();
//! let mut ws = WaitSet::new();
//! ws.attach_condition(&data)?;
//! ws.attach_condition(&stop)?;
//! loop {
//!     let triggered = ws.wait(Duration::from_secs(1))?;
//!     if triggered.iter().any(|c| *c == stop) {
//!         break;
//!     }
//!     for s in reader.take_w_condition(&data, usize::MAX)? {
//!         println!("{:?}", s.data);
//!     }
//! }
//! # Ok(()) }
//! ```

mod guard;
mod read_condition;
mod status_condition;
mod waitset;

use std::sync::atomic::{AtomicU64, Ordering};

pub use guard::GuardCondition;
pub use read_condition::ReadCondition;
pub use status_condition::StatusCondition;
pub use waitset::WaitSet;

use tachyon_wire::EntityId;

use crate::runtime::notify::Observers;

/// Identifies a condition (all clones of one condition share it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConditionId(u64);

impl ConditionId {
    /// A process-unique id.
    fn next() -> ConditionId {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        ConditionId(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// Any condition, as a WaitSet holds and returns it. Compares equal to the condition it was
/// made from (`*c == guard`).
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Condition {
    /// A [`GuardCondition`].
    Guard(GuardCondition),
    /// A [`StatusCondition`].
    Status(StatusCondition),
    /// A [`ReadCondition`].
    Read(ReadCondition),
}

impl Condition {
    /// Whether the condition is triggered now.
    pub fn trigger_value(&self) -> bool {
        match self {
            Condition::Guard(c) => c.trigger_value(),
            Condition::Status(c) => c.trigger_value(),
            Condition::Read(c) => c.trigger_value(),
        }
    }

    /// The condition's id.
    pub fn id(&self) -> ConditionId {
        match self {
            Condition::Guard(c) => c.id(),
            Condition::Status(c) => c.id(),
            Condition::Read(c) => c.id(),
        }
    }

    /// The entity whose changes this condition follows, if one (a reader's ReadCondition,
    /// an endpoint's StatusCondition; a group's or the participant's StatusCondition and a
    /// guard condition follow any change of theirs).
    fn interest(&self) -> Option<EntityId> {
        match self {
            Condition::Guard(_) => None,
            Condition::Status(c) => c.interest(),
            Condition::Read(c) => Some(c.reader()),
        }
    }

    /// Who notifies a WaitSet when this condition may have changed.
    fn observers(&self) -> &Observers {
        match self {
            Condition::Guard(c) => c.observers(),
            Condition::Status(c) => c.observers(),
            Condition::Read(c) => c.observers(),
        }
    }
}

impl PartialEq for Condition {
    fn eq(&self, other: &Condition) -> bool {
        self.id() == other.id()
    }
}

impl Eq for Condition {}

macro_rules! condition_kind {
    ($variant:ident, $ty:ty) => {
        impl From<$ty> for Condition {
            fn from(c: $ty) -> Condition {
                Condition::$variant(c)
            }
        }

        impl From<&$ty> for Condition {
            fn from(c: &$ty) -> Condition {
                Condition::$variant(c.clone())
            }
        }

        impl PartialEq<$ty> for Condition {
            fn eq(&self, other: &$ty) -> bool {
                self.id() == other.id()
            }
        }

        impl PartialEq<Condition> for $ty {
            fn eq(&self, other: &Condition) -> bool {
                self.id() == other.id()
            }
        }
    };
}

condition_kind!(Guard, GuardCondition);
condition_kind!(Status, StatusCondition);
condition_kind!(Read, ReadCondition);
