//! Submessage elements shared by the header, submessages and parameter lists.

mod guid;
mod locator;
mod seqnum;
mod time;
mod vendor;

pub use guid::{EntityId, EntityKind, Guid, GuidPrefix};
pub use locator::{Locator, LocatorUdpV4, Reach};
pub use seqnum::{
    FragmentNumber, FragmentNumberSet, SequenceNumber, SequenceNumberSet, MAX_SET_BITS,
};
pub use time::{Count, Duration, Time};
pub use vendor::{ProtocolVersion, VendorId};
