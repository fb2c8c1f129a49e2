//! QoS: the DCPS policies as plain values ([`policy`]), each entity's QoS with the spec's
//! defaults and builders ([`entity`]), and the request-offered and partition matching rules
//! discovery applies ([`compat`]).

pub mod compat;
pub mod entity;
pub mod policy;

pub use compat::{partitions_match, QosPolicyId};
pub use entity::{
    check_partitions, DataReaderQos, DataWriterQos, DomainParticipantQos, EntityFactory,
    PublisherQos, SubscriberQos, TopicQos,
};
pub use policy::*;
