//! Samples handed by reference between participants of one host, through shared memory.
//!
//! A writer whose sample lives in a shared-memory slot (a **loaned** sample, written in
//! place: [`Payload::shared_reference`]) and whose destinations all read shared memory does
//! not put the sample in the DATA: the DATA carries [`PID_TACHYON_SHM_SAMPLE`], whose value
//! names the slot (the transport's business: this crate only carries it), and no payload.
//! A reader that receives such a DATA *through the shared-memory transport* asks its
//! participant's [`SampleResolver`] for the bytes; the transport holds the slot for as long
//! as the reader's cache keeps the [`Payload`] it returns, and the writer does not reuse a
//! held slot. No copy on either side, and no fragmentation whatever the sample's size.
//!
//! A reference that cannot be resolved (the writer reused the slot, the segment cannot be
//! opened) is counted ([`crate::ReaderStats::by_reference_missed`]) and the DATA treated as
//! not received: a reliable reader asks again, and the writer repairs by value. The
//! parameter from anywhere but the shared-memory transport is malformed.

use crate::history::Payload;

/// Vendor-specific inline QoS parameter of a DATA whose sample is in a shared-memory slot;
/// its value names the slot (see the transport's loan areas).
pub const PID_TACHYON_SHM_SAMPLE: u16 = 0x8003;

/// What resolving a reference gave.
#[derive(Debug)]
pub enum Resolved {
    /// The sample's bytes, held while the payload lives.
    Sample(Payload),
    /// Not available (any more): the slot was reused, or its segment cannot be opened.
    Missed(&'static str),
}

/// Turns the value of a [`PID_TACHYON_SHM_SAMPLE`] into the sample's bytes (the runtime
/// gives a participant the shared-memory transport's, [`crate::Participant::set_sample_resolver`]).
pub trait SampleResolver: Send + Sync {
    /// The sample `reference` names.
    fn resolve(&self, reference: &[u8]) -> Resolved;
}

/// Where a datagram came from, as far as references go.
#[derive(Clone, Copy)]
pub(crate) enum Via<'a> {
    /// The in-process transport: [`crate::local`] references resolve.
    Intra,
    /// The shared-memory transport: [`PID_TACHYON_SHM_SAMPLE`] references resolve through
    /// the resolver, when the participant has one.
    Shm(Option<&'a dyn SampleResolver>),
    /// Anywhere else: no reference means anything.
    Other,
}

/// A participant's resolver, if it has one.
#[derive(Clone, Default)]
pub(crate) struct ResolverSlot(pub(crate) Option<std::sync::Arc<dyn SampleResolver>>);

impl std::fmt::Debug for ResolverSlot {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "SampleResolver"
        } else {
            "no SampleResolver"
        })
    }
}
