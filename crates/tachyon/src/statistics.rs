//! [`ParticipantStatistics`]: what a participant received, dropped and holds, as a plain
//! snapshot ([`DomainParticipant::statistics`](crate::DomainParticipant::statistics)).
//!
//! Every datagram that cannot be used is dropped and counted somewhere here, never a panic:
//! a datagram without an RTPS header in [`ParticipantStats::malformed_datagrams`], a submessage
//! whose length or body is wrong in [`ParticipantStats::malformed_submessages`], traffic for no
//! matched endpoint in [`ParticipantStats::unknown_destination`], an SPDP/SEDP sample whose
//! ParameterList does not decode in [`DiscoveryStats::malformed`], a participant beyond
//! `max_participants` in [`DiscoveryStats::participants_refused`], a DATA or DATA_FRAG a reader
//! cannot use in [`ReaderStats::malformed`] (summed in [`ReadersSummary::stats`]).

pub use tachyon_proto::discovery::DiscoveryStats;
pub use tachyon_proto::frag::{ReassemblyLimits, ReassemblyStats};
pub use tachyon_proto::{ParticipantStats, ReaderStats, ReadersSummary};
pub use tachyon_transport::shm::loan::LoanStats;
pub use tachyon_transport::xdp::XdpStats;
pub use tachyon_transport::TransportStats;

/// A snapshot of a participant's counters and of what it holds for remote entities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ParticipantStatistics {
    /// Every transport, added up: datagrams and bytes received and sent, kernel-level drops.
    pub transport: TransportStats,
    /// Of which the in-process transport (`tachyon_transport::intra`): datagrams handed to
    /// participants of this process (`datagrams_sent`; those handled on the sending thread
    /// included), taken from its queues (`datagrams_received`), dropped on a full queue
    /// (`send_drops`).
    pub intra: TransportStats,
    /// Of which shared memory (`tachyon_transport::shm`): datagrams published to readers of
    /// other processes of this host (`datagrams_sent`), read from writers' segments
    /// (`datagrams_received`), dropped because a reader's ring or the slots were full
    /// (`send_drops`), records of a corrupt or hostile segment rejected (`malformed`), datagrams
    /// to readers it could not reach at all, sent over UDP instead (`refused`).
    pub shm: TransportStats,
    /// The AF_XDP transport (`[xdp]`): datagrams through its rings, those it handed to the
    /// kernel's UDP socket instead, the kernel's drops on its socket, its modes.
    pub xdp: XdpStats,
    /// Loans ([`crate::loan`]) through shared memory: areas made, slots lent (and asked for
    /// when none was free), samples of other processes held in place or copied, references
    /// missed or malformed, holds of dead readers released.
    pub loans: LoanStats,
    /// The message receiver: datagrams interpreted, malformed datagrams and submessages,
    /// submessages for no local endpoint.
    pub receive: ParticipantStats,
    /// Discovery: SPDP/SEDP samples received, malformed, refused by the limits, leases expired.
    pub discovery: DiscoveryStats,
    /// Type discovery: TypeLookup requests sent and answered, TypeObjects received and
    /// refused, TypeInformation that did not decode.
    pub types: tachyon_proto::discovery::TypeStats,
    /// Every reader of the participant (the builtin discovery readers included), summed:
    /// malformed and unmatched-writer drops, samples being reassembled and the bytes held.
    pub readers: ReadersSummary,
    /// Remote participants known now.
    pub remote_participants: usize,
    /// The most remote participants kept (`ParticipantSettings::max_participants`).
    pub max_participants: usize,
    /// Remote writers plus readers known now.
    pub remote_endpoints: usize,
    /// The most remote writers plus readers kept.
    pub max_remote_endpoints: usize,
    /// Datagrams that concerned both lanes (threads mode with `threads.critical_priority`)
    /// dropped because the other lane's inbox was full: its thread was behind.
    pub lane_inbox_overflow: u64,
}

impl ParticipantStatistics {
    /// Every datagram, submessage or sample dropped because it was malformed (any layer).
    pub fn malformed(&self) -> u64 {
        self.receive.malformed_datagrams
            + self.receive.malformed_submessages
            + self.discovery.malformed
            + self.readers.stats.malformed
    }

    /// Everything refused because a resource limit was reached (participants, endpoints,
    /// reassembly, out-of-order samples, the SPDP inbox, the lanes' inboxes).
    pub fn refused_by_limits(&self) -> u64 {
        self.discovery.participants_refused
            + self.discovery.endpoints_refused
            + self.discovery.inbox_overflow
            + self.readers.stats.pending_overflow
            + self.lane_inbox_overflow
    }
}
