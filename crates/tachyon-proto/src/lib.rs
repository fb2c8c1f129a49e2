//! The RTPS protocol as sans-IO state machines (DESIGN.md section 2).
//!
//! Nothing here opens a socket, reads a clock, spawns a thread or holds global state. Time comes
//! in as an [`Instant`] argument, datagrams come in as bytes, and everything a state machine
//! wants to send goes out through `poll_transmit` into a caller-owned [`TxBuf`]. Every state
//! machine documents its methods in this order:
//!
//! - **inputs**: `handle_datagram(now, source, bytes)`, `handle_timeout(now)`;
//! - **commands** from the user side: `write`, `dispose`, `create_writer`, …;
//! - **outputs**, polled until `None`: `poll_transmit(now, &mut TxBuf)`, then `poll_timeout()`,
//!   then `poll_event()`;
//! - **getters**.
//!
//! The entry point is [`Participant`]: create writers and readers on it, match them with remote
//! endpoints (discovery's job, or the application's in a static setup), feed it datagrams and
//! timeouts, and poll it. Inside, each writer keeps a proxy per matched reader and each reader a
//! proxy per matched writer (`writer/`, `reader/`); [`history`] holds the caches and
//! [`frag`] the fragmentation. `tachyon-sim` runs participants in a simulated network.
//!
//! Rules: `now` is monotonic; a spurious `handle_timeout` does nothing; nothing derived from the
//! network is unwrapped; malformed input is counted and dropped; resource limits bound memory.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod deadline;
pub mod discovery;
pub mod endpoint;
pub mod event;
pub mod filter;
pub mod frag;
#[doc(hidden)]
pub mod fuzzing;
pub mod history;
mod layout;
pub mod local;
pub mod maps;
mod ownership;
pub mod participant;
pub mod qos;
pub mod quirks;
mod reader;
pub mod shared;
pub mod time;
pub mod transmit;
mod writer;

pub use endpoint::{
    KeyHashFn, Liveliness, LivelinessKind, ReaderConfig, ReaderUpdate, Reliability, RemoteReader,
    RemoteWriter, WriterConfig, WriterUpdate, DEFAULT_MAX_DATAGRAM,
};
pub use event::Event;
pub use filter::{ContentFilter, FilterError, RemoteFilterFactory, SampleFilter};
pub use participant::{
    Error, Participant, ParticipantConfig, ParticipantStats, ReadersSummary, TimerClass,
    TimerDeadlines, MAX_COHERENT_INLINE_QOS,
};
pub use reader::{ReaderStats, HOLE_WAIT};
pub use time::{Duration, Instant};
pub use transmit::{Destination, Transmit, TxBuf};
pub use writer::{
    ack_request_interval, Transcoder, WriteRequest, WriterStats, BUILTIN_ACK_REQUEST_INTERVAL,
    HEARTBEAT_PIGGYBACK_INTERVAL, MAX_UNACKNOWLEDGED_BYTES,
};
