//! RTPS 2.5 wire codec for Tachyon DDS: message header, every submessage, ParameterList,
//! and the submessage elements (GUIDs, sequence number sets, locators, time).
//!
//! No I/O, no clock, no global state. Every element comes in two forms, smoltcp style:
//!
//! - a checked, zero-copy **view** (`MessageView`, `DataView`, `ParameterListView`, ...) whose
//!   accessors cannot panic once `new_checked`/`parse` accepted the bytes;
//! - a parsed **repr** (`Message`, `Submessage`, `Data`, `ParameterList`, ...) whose `emit`
//!   writes exactly `buffer_len()` bytes and returns an error, never panics, on a short buffer.
//!
//! Parsing never panics, never allocates a size read from the input, and reports what failed
//! and where. A parsed [`Message`] re-emits byte for byte: per-submessage byte order, flag bits
//! this crate does not interpret, octetsToNextHeader == 0, bytes beyond the parsed fields,
//! parameter padding and unknown or vendor-specific submessages and parameters are all kept.
//!
//! ```
//! use tachyon_wire::{Message, MessageView};
//! # let bytes = tachyon_wire::doc_example_message();
//! let view = MessageView::new_checked(&bytes)?;
//! for sub in view.submessages() {
//!     let _typed = sub?; // a SubmessageView borrowing from `bytes`
//! }
//! let msg = Message::parse(&bytes)?;
//! println!("{msg}");
//! assert_eq!(msg.to_bytes().unwrap(), bytes);
//! # Ok::<(), tachyon_wire::WireError>(())
//! ```
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod builder;
mod bytes;
mod display;
pub mod error;
mod fuzz;
pub mod header;
pub mod message;
pub mod parameter;
pub mod submessage;
pub mod types;

pub use builder::{DataFragSpec, DataSpec, InlineQos, MessageBuilder, PayloadKind, PlainData};
pub use bytes::Endian;
pub use error::{EmitError, ParameterError, WireError};
pub use fuzz::{fuzz_parse_message, fuzz_parse_parameter_list};
pub use header::{Header, HeaderView, HEADER_LEN};
pub use message::{Message, MessageView, RawSubmessages};
pub use parameter::payload::{Encapsulation, ParameterListPayload, ParameterListPayloadView};
pub use parameter::{Parameter, ParameterList, ParameterListView, ParameterValue, ParameterView};
pub use submessage::{
    AckNack, AckNackView, Data, DataFrag, DataFragView, DataPayload, DataView, Gap, GapView,
    Heartbeat, HeartbeatFrag, HeartbeatFragView, HeartbeatView, InfoDst, InfoDstView, InfoReply,
    InfoReplyIp4, InfoReplyIp4View, InfoReplyView, InfoSrc, InfoSrcView, InfoTs, InfoTsView,
    NackFrag, NackFragView, Pad, PadView, RawSubmessage, Submessage, SubmessageBody,
    SubmessageView, Unknown,
};
pub use types::*;

/// A small valid message (INFO_TS + HEARTBEAT) for documentation examples.
#[doc(hidden)]
pub fn doc_example_message() -> Vec<u8> {
    let mut m = b"RTPS\x02\x05\x01\xf0".to_vec();
    m.extend_from_slice(&[1; 12]);
    m.extend_from_slice(&[0x09, 0x01, 8, 0, 1, 0, 0, 0, 0, 0, 0, 0x80]);
    m.extend_from_slice(&[0x07, 0x03, 28, 0, 0, 0, 0, 0, 0, 0, 1, 0x02]);
    m.extend_from_slice(&[0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 7, 0, 0, 0]);
    m
}
