//! Tachyon DDS: the OMG DDS DCPS API over the DDSI-RTPS wire protocol.
//!
//! ```no_run
//! use tachyon::prelude::*;
//!
//! #[derive(DdsType, Debug)]
//! struct Hello {
//!     #[key]
//!     id: u32,
//!     text: String,
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let participant = DomainParticipant::new(0)?;
//! let topic = participant.create_topic::<Hello>("hello")?;
//! let writer = participant.create_publisher()?.create_datawriter(&topic, DataWriterQos::default())?;
//! writer.write(&Hello { id: 1, text: "hi".into() })?;
//! # Ok(()) }
//! ```
//!
//! Layout: [`config`] (Config, the TOML file `TACHYON_CONFIG` names), [`domain`]
//! (DomainParticipant, factory), [`topic`], [`publication`] (Publisher, DataWriter),
//! [`subscription`] (Subscriber, DataReader, samples), [`status`] (communication statuses and
//! [`StatusMask`]), [`condition`] (GuardCondition, StatusCondition, ReadCondition, WaitSet),
//! [`listener`] (reader, writer, Subscriber, Publisher, Topic and DomainParticipant
//! listeners, and their cascade), [`builtin`] (the DCPSParticipant,
//! DCPSPublication and DCPSSubscription builtin topics), [`stream`] (the async reader API:
//! a `Stream` of samples, a data-available future), [`error`]; the runtime that drives
//! the protocol state, the UDP transport and the timers lives in `runtime`.
//!
//! Waiting for data and events, as in every DDS: a [`WaitSet`] with conditions (a
//! [`ReadCondition`] for samples, the endpoint's [`StatusCondition`] for statuses, a
//! [`GuardCondition`] to wake it from another thread), or listeners called on the
//! participant's runtime threads; or, in async code on any executor, [`DataReader::stream`] and
//! [`DataReader::wait_for_data_async`].
//!
//! Threads: by default each participant has a receive thread per user-data socket, blocked
//! in its `recvmmsg`, which handles what arrives (listeners included), and a timers thread that
//! runs the protocol's timers and serves discovery in a fixed priority order (critical writers,
//! reliability, discovery), scheduled as `[threads.receive]` and `[threads.timers]` of the
//! [`config`] say (CPU affinity, `SCHED_FIFO`). With `threads.mode = "driver"` one driver thread
//! does all of it through epoll, in the executor's order. With `threads.mode = "single"` no thread is spawned and the application
//! drives the participant with [`DomainParticipant::run_once`] or
//! [`DomainParticipant::spin`]; listeners then run inside those calls.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

// `#[derive(DdsType)]` inside this crate names `::tachyon::cdr`, as it does in users' crates.
extern crate self as tachyon;

pub mod builtin;
pub mod condition;
pub mod config;
pub mod content_filter;
pub mod discovery_server;
pub mod domain;
pub mod dynamic;
pub mod error;
mod group;
pub mod listener;
pub mod loan;
pub mod publication;
mod runtime;
pub mod statistics;
pub mod status;
pub mod stream;
pub mod subscription;
pub mod topic;
mod writable;

pub use builtin::{
    BuiltinTopicKey, ParticipantBuiltinTopicData, PublicationBuiltinTopicData,
    SubscriptionBuiltinTopicData,
};
pub use condition::{Condition, GuardCondition, ReadCondition, StatusCondition, WaitSet};
pub use config::{Config, ConfigError};
pub use content_filter::{ContentFilteredTopic, TopicDescription};
pub use discovery_server::{
    DiscoveryServerAddress, ServerRole, DEFAULT_SERVER_PORT, ROS_DISCOVERY_SERVER_ENV,
};
pub use domain::{
    DomainParticipant, DomainParticipantFactory, ParticipantSettings, TransportSettings,
};
pub use error::Error;
pub use listener::{
    AnyDataReader, AnyDataWriter, AnyTopic, DataReaderListener, DataWriterListener,
    DomainParticipantListener, PublisherListener, SubscriberListener, TopicListener,
};
pub use loan::{Loan, Loanable, LoanedSample};
pub use publication::{DataWriter, Publisher};
pub use statistics::ParticipantStatistics;
pub use status::{StatusKind, StatusMask};
pub use stream::{DataAvailable, SampleStream};
pub use subscription::{DataReader, Readable, Sample, Subscriber};
/// The CDR crate: what `#[derive(DdsType)]` expands to (a crate that depends on `tachyon`
/// alone derives through it).
pub use tachyon_cdr as cdr;
pub use tachyon_cdr::traits::DdsType;
pub use tachyon_cdr::{Decode, Encode, KeyHash};
/// `#[derive(DdsType)]`, its code naming `::tachyon::cdr` (see [`tachyon_cdr::DdsType`] for
/// its attributes).
pub use tachyon_derive::DdsTypeViaTachyon as DdsType;
pub use tachyon_proto::filter::FilterError;
pub use tachyon_proto::history::{
    InstanceSelector, InstanceState, InstanceStateMask, Query, SampleInfo, SampleState,
    SampleStateMask, ViewState, ViewStateMask,
};
pub use tachyon_proto::qos;
pub use tachyon_transport::xdp::{XdpConfig, XdpTraffic};
pub use tachyon_transport::{MulticastMode, Peer, PeerIndices, UdpConfig};
/// XTypes type representation: TypeObjects, TypeInformation, assignability, IDL printing.
pub use tachyon_xtypes as xtypes;
pub use topic::Topic;
pub use writable::Writable;
/// The crate whose derives make a type [`Loanable`] (`FromBytes`, `IntoBytes`,
/// `KnownLayout`, `Immutable`).
pub use zerocopy;

/// What most programs need: `use tachyon::prelude::*;`.
pub mod prelude {
    pub use crate::dynamic::{DynamicData, DynamicType};
    pub use crate::qos::{
        DataReaderQos, DataWriterQos, DurabilityKind, PublisherQos, SubscriberQos, TopicQos,
    };
    pub use crate::{
        AnyDataReader, AnyDataWriter, AnyTopic, Condition, ContentFilteredTopic, DataReader,
        DataReaderListener, DataWriter, DataWriterListener, DdsType, DomainParticipant,
        DomainParticipantListener, Error, GuardCondition, InstanceState, InstanceStateMask,
        ParticipantBuiltinTopicData, PublicationBuiltinTopicData, Publisher, PublisherListener,
        Query, ReadCondition, Sample, SampleInfo, SampleState, SampleStateMask, StatusCondition,
        StatusMask, Subscriber, SubscriberListener, SubscriptionBuiltinTopicData, Topic,
        TopicDescription, TopicListener, ViewStateMask, WaitSet,
    };
    pub use std::time::Duration;
}
