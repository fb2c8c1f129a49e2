//! Fragmentation of large samples into DATA_FRAG submessages and their bounded reassembly.
//!
//! The writer side ([`fragments`]) cuts a serialized payload into fragments of a configured
//! size. The reader side ([`Reassembler`]) puts them back together while defending itself: the
//! size a peer *announces* costs nothing until fragments actually arrive (storage is allocated
//! in chunks as data lands), every partial sample counts against a byte budget and a count
//! limit, and inconsistent or malformed fragments are rejected with a reason and counted.

mod fragmenter;
mod reassembly;

pub use fragmenter::{fragments, FragmentRange, DEFAULT_FRAGMENT_SIZE};
pub use reassembly::{
    FragmentInfo, Reassembler, ReassemblyError, ReassemblyLimits, ReassemblyOutcome,
    ReassemblyStats,
};
