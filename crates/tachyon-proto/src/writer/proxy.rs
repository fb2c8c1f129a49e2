//! [`ReaderProxy`]: what a writer remembers about one matched reader — how far it acknowledged,
//! what it asked to have repaired, and where to send directed traffic.

use std::collections::{BTreeSet, VecDeque};

use tachyon_wire::{FragmentNumberSet, Locator, SequenceNumber};

use crate::endpoint::{Reliability, RemoteReader};
use crate::time::{Duration, Instant};

/// A run of fragments `first..=last` of one sample to (re)send to one reader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct FragRun {
    pub sn: SequenceNumber,
    pub first: u32,
    pub last: u32,
}

/// The writer's state for one matched reader.
#[derive(Debug)]
pub(crate) struct ReaderProxy {
    pub remote: RemoteReader,
    /// Where directed traffic goes (`None`: the reader gave no unicast locator; it gets only
    /// what goes to every reader).
    pub dest: Option<Locator>,
    /// Every sequence number up to this one is acknowledged (reliable readers only).
    pub acked: SequenceNumber,
    /// Sequence numbers below this one are not for this reader (a volatile reader matched
    /// after they were written); it gets a GAP for them.
    pub first_relevant: SequenceNumber,
    /// Sequence numbers the reader asked for (ACKNACK bitmap), not yet answered.
    pub requested: BTreeSet<SequenceNumber>,
    /// Fragments to send it (NACK_FRAG requests, or a whole fragmented sample being resent).
    pub frag_runs: VecDeque<FragRun>,
    /// When the pending requests are answered (after the NACK response delay).
    pub repair_at: Option<Instant>,
    /// Highest ACKNACK / NACK_FRAG count seen, to drop duplicates and stale ones.
    pub last_acknack: Option<i32>,
    pub last_nack_frag: Option<i32>,
    /// A heartbeat addressed to this reader alone is due.
    pub needs_heartbeat: bool,
    /// The reader answered a HEARTBEAT (a final ACKNACK, or one asking for data), so it knows
    /// where this writer stands. Until then it gets a HEARTBEAT every heartbeat period: a
    /// reader that learns of the writer after the HEARTBEAT sent on matching (Cyclone DDS's
    /// volatile readers) otherwise starts from whatever sample reaches it first.
    pub synced: bool,
    /// The reader's content filter, when it announced one this writer can evaluate.
    pub filter: Option<crate::filter::Hook>,
    /// The representation this reader reads when it is not the one the writer writes
    /// (`transcode` module): it is then served alone, every change queued for it as a repair.
    pub transcode: Option<crate::qos::DataRepresentation>,
    /// The last sample converted for it, kept while its fragments go out.
    pub transcoded: Option<(SequenceNumber, crate::history::Payload)>,
    /// The heartbeat addressed to it next asserts the writer's liveliness (a reader outside
    /// the fan-out does not hear the one to everyone).
    pub liveliness_due: bool,
    /// When a repair last went to this reader and the highest sequence number it carried:
    /// requests for those numbers within the repair suppression duration are ignored (a
    /// HEARTBEAT that crossed the repair, not a loss).
    pub repaired: Option<(Instant, SequenceNumber)>,
    /// In the writer's attention queue (`readers.rs`).
    pub flagged: bool,
    /// The reader belongs to the writer's own participant (the same protocol state), in this
    /// slot of its readers: the participant hands it every new change as it is written
    /// (`writer/direct.rs`), outside the fan-out.
    pub direct: Option<usize>,
}

impl ReaderProxy {
    pub fn new(remote: RemoteReader, acked: SequenceNumber) -> ReaderProxy {
        ReaderProxy {
            dest: remote.unicast_locators.first().copied(),
            remote,
            acked,
            first_relevant: SequenceNumber(acked.0.saturating_add(1)),
            requested: BTreeSet::new(),
            frag_runs: VecDeque::new(),
            repair_at: None,
            last_acknack: None,
            last_nack_frag: None,
            needs_heartbeat: false,
            synced: false,
            filter: None,
            transcode: None,
            transcoded: None,
            liveliness_due: false,
            repaired: None,
            flagged: false,
            direct: None,
        }
    }

    /// Outside the fan-out: served alone (another representation, `transcode`), or directly
    /// (a reader of the writer's own participant, `direct`). Such a reader hears the
    /// heartbeats addressed to it, not those to the fan-out.
    pub fn alone(&self) -> bool {
        self.transcode.is_some() || self.direct.is_some()
    }

    /// Handed every new change by the participant as it is written (`writer/direct.rs`).
    pub fn served_directly(&self) -> bool {
        self.direct.is_some() && self.transcode.is_none()
    }

    /// Notes that `sn` was just resent to this reader.
    pub fn note_repair(&mut self, now: Instant, sn: SequenceNumber, window: Duration) {
        let upto = self.repaired_within(now, window).map_or(sn, |u| u.max(sn));
        self.repaired = Some((now, upto));
    }

    /// The highest sequence number resent to this reader less than `window` ago.
    pub fn repaired_within(&self, now: Instant, window: Duration) -> Option<SequenceNumber> {
        self.repaired
            .filter(|(at, _)| now.saturating_duration_since(*at) < window)
            .map(|(_, sn)| sn)
    }

    /// Whether the reader wants a sample with this payload (no filter: every one).
    pub fn wants(&self, payload: &crate::history::Payload) -> bool {
        self.filter.as_ref().map_or(true, |f| (f.0)(payload))
    }

    pub fn is_reliable(&self) -> bool {
        self.remote.reliability == Reliability::Reliable
    }

    /// Whether a repair is due at `now`.
    pub fn repair_due(&self, now: Instant) -> bool {
        self.repair_at.is_some_and(|at| at <= now)
            && (!self.requested.is_empty() || !self.frag_runs.is_empty())
    }

    /// Queues the fragments of `set` (one NACK_FRAG) as runs of consecutive numbers.
    pub fn request_fragments(&mut self, sn: SequenceNumber, set: &FragmentNumberSet) {
        let mut run: Option<FragRun> = None;
        // Fragment numbers start at 1; a 0 from a confused peer is ignored.
        for n in set.iter().filter(|n| n.0 >= 1) {
            match &mut run {
                Some(r) if r.last.checked_add(1) == Some(n.0) => r.last = n.0,
                _ => {
                    if let Some(r) = run.take() {
                        self.push_run(r);
                    }
                    run = Some(FragRun {
                        sn,
                        first: n.0,
                        last: n.0,
                    });
                }
            }
        }
        if let Some(r) = run {
            self.push_run(r);
        }
    }

    fn push_run(&mut self, run: FragRun) {
        // The same NACK_FRAG often arrives again before it is served: do not send twice.
        if !self
            .frag_runs
            .iter()
            .any(|r| r.sn == run.sn && r.first <= run.first && r.last >= run.last)
        {
            self.frag_runs.push_back(run);
        }
    }

    /// Forgets requests below `sn` (acknowledged or no longer held).
    pub fn drop_requests_below(&mut self, sn: SequenceNumber) {
        self.requested = self.requested.split_off(&sn);
        self.frag_runs.retain(|r| r.sn >= sn);
    }
}
