//! The receiving side: for each port, the channels other participants' segments hold for
//! this one, found through our incoming table, and read in turn.
//!
//! Everything read from a writer's segment is checked before use: a ring entry's stamp must
//! be this round's index (new), the round before's or zero (nothing new yet), its slot must
//! be one of the writer's and its length fit that slot. A bad record is counted
//! (`malformed`) and skipped; a call reads at most a ring; nothing from shared memory can make
//! this side index outside the segment, loop without bound or block.

use std::sync::Arc;
use std::time::Duration;

use super::segment::Segment;
use crate::spin::Spin;

/// A channel of a writer's segment that carries datagrams to us on one port.
#[derive(Debug)]
pub(crate) struct RxChannel {
    pub writer: Arc<Segment>,
    pub c: u32,
    /// Next ring index to read (ours; published as the channel's `head`).
    pub head: u32,
    /// The channel's epoch when we attached (a new one: the writer set it up anew).
    pub epoch: u32,
}

/// The receiving state of one port.
#[derive(Debug)]
pub(crate) struct Rx {
    /// The incoming table's generation we last read (`None`: read it now).
    pub generation: Option<u32>,
    pub attached: Vec<RxChannel>,
    /// Where the next receive starts (round robin between writers).
    pub next: usize,
    /// When the writers' liveness was last checked (the coarse clock, `map::coarse_now`).
    pub checked: Duration,
    /// Whether a wait watches the doorbell before sleeping.
    pub spin: Spin,
}

impl Rx {
    pub(crate) fn new(spin: Duration) -> Rx {
        Rx {
            generation: None,
            attached: Vec::new(),
            next: 0,
            checked: super::map::coarse_now(),
            spin: Spin::new(spin),
        }
    }
}
