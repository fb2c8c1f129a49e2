//! History caches of writers and readers: sans-IO data structures that hold reference-counted
//! [`Payload`]s, never copies, and take time as an [`Instant`](crate::Instant) argument.
//!
//! - [`WriterHistory`]: the DataWriter's HistoryCache (sequence numbers, KEEP_LAST replacement,
//!   KEEP_ALL flow control, acknowledgement release, TRANSIENT_LOCAL retention, lifespan, GAPs).
//! - [`ReaderHistory`]: the DataReader's cache (instances and their lifecycle, `read`/`take`
//!   with state masks and SampleInfo ranks, SAMPLE_REJECTED reasons, autopurge).
//!
//! Semantics follow DDS 1.4 DCPS; where the spec is silent they follow Cyclone DDS.

pub mod coherent;
mod instance;
mod payload;
mod qos;
mod reader;
mod sample_info;
mod writer;

pub use coherent::{Coherence, GroupMember, PublisherSet};
pub use payload::{Payload, PayloadMut, PayloadPool, SharedBytes, SharedPool};
pub use qos::{Durability, History, QosError, ReaderDataLifecycle, ResourceLimits};
pub use reader::{
    InstanceSelector, Query, ReadError, ReaderHistory, ReaderHistoryConfig, RejectReason, Rejected,
};
pub use sample_info::{
    InstanceState, InstanceStateMask, Sample, SampleInfo, SampleState, SampleStateMask, ViewState,
    ViewStateMask,
};
pub use writer::{
    AddOutcome, CacheChange, ChangeKind, Limit, NewChange, WriteError, WriterHistory,
    WriterHistoryConfig,
};
