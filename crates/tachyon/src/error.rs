//! Errors of the DCPS operations: each says what failed and what to do.

use tachyon_proto::qos::{InconsistentQos, QosPolicyId};

/// Why a DCPS operation failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration (file, `TACHYON_CONFIG`) could not be loaded.
    #[error("configuration: {0}")]
    Config(#[from] crate::config::ConfigError),
    /// The network transport could not be set up (interface, ports, sockets).
    #[error("transport: {0}")]
    Transport(#[from] tachyon_transport::TransportError),
    /// The settings leave the participant without any transport (`no_udp`, `no_intra`,
    /// shared memory off or unavailable, and no other).
    #[error(
        "no transport: TransportSettings::no_udp and no_intra are set, shared memory is off \
         or unavailable, and no other transport was given (add one to \
         TransportSettings::extra, or keep UDP)"
    )]
    NoTransport,
    /// A QoS value or combination cannot be used (DDS INCONSISTENT_POLICY).
    #[error("inconsistent QoS: {0}")]
    InconsistentQos(#[from] InconsistentQos),
    /// `set_qos` would change a policy DDS fixes at creation (DDS IMMUTABLE_POLICY): the
    /// first such policy whose value differs. Nothing was changed.
    #[error("QoS policy {0} cannot be changed after creation")]
    ImmutablePolicy(QosPolicyId),
    /// The sample could not be serialized.
    #[error("serializing the sample failed: {0}")]
    Encode(#[from] tachyon_cdr::EncodeError),
    /// A blocking operation ran out of time (DDS TIMEOUT): `WaitSet::wait` saw no condition
    /// trigger, `wait_for_acknowledgments` saw no acknowledgement, or a reliable KEEP_ALL
    /// writer's history stayed full for `max_blocking_time` (readers are not keeping up).
    #[error("timed out")]
    Timeout,
    /// The operation needs an instance the writer or reader does not know (for a reader:
    /// one it holds no sample or state of).
    #[error("unknown instance: register it or write a sample of it first")]
    BadInstance,
    /// An argument does not fit the operation (DDS BAD_PARAMETER), e.g. a ReadCondition of
    /// another reader.
    #[error("bad parameter: {0}")]
    BadParameter(&'static str),
    /// The operation is not allowed in the current state (DDS PRECONDITION_NOT_MET), e.g.
    /// detaching a condition that is not attached.
    #[error("precondition not met: {0}")]
    PreconditionNotMet(&'static str),
    /// Memory or another resource ran out (DDS OUT_OF_RESOURCES).
    #[error("out of resources: {0}")]
    OutOfResources(&'static str),
    /// The participant was closed (or its runtime stopped).
    #[error("the participant is closed")]
    AlreadyDeleted,
    /// A peer's type cannot be obtained or described: it announces no TypeInformation, its
    /// participant has no TypeLookup service, or the type uses what a description cannot
    /// hold. The message says which.
    #[error("type not available: {0}")]
    TypeUnavailable(String),
    /// The runtime thread could not be started.
    #[error("starting the runtime thread failed: {0}")]
    Thread(std::io::Error),
    /// A thread role's CPU affinity or `SCHED_FIFO` priority could not be applied and the
    /// configuration says `threads.strict = true` (otherwise it is a warning).
    #[error("thread role {role}: cannot apply {setting}: {source}")]
    ThreadSettings {
        /// The role ("driver").
        role: &'static str,
        /// The setting, as the configuration writes it.
        setting: String,
        /// The operating system's error (EPERM, EINVAL).
        source: std::io::Error,
    },
    /// An operation Tachyon does not provide yet (listed in the README).
    #[error("not supported yet: {0}")]
    Unsupported(&'static str),
    /// A content filter expression or its parameters were refused (the message names the
    /// column and what was expected there).
    #[error("content filter: {0}")]
    Filter(tachyon_proto::filter::FilterError),
    /// The protocol layer refused the operation.
    #[error("{0}")]
    Protocol(tachyon_proto::Error),
}

impl From<tachyon_proto::Error> for Error {
    fn from(e: tachyon_proto::Error) -> Error {
        match e {
            tachyon_proto::Error::Qos(q) => Error::InconsistentQos(InconsistentQos::History(q)),
            tachyon_proto::Error::Read(tachyon_proto::history::ReadError::UnknownInstance) => {
                Error::BadInstance
            }
            other => Error::Protocol(other),
        }
    }
}
