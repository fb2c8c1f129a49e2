//! The RTPS message receiver (RTPS 2.5 8.3.4): walks the submessages of one datagram keeping
//! the receiver state (source prefix, destination prefix, timestamp) and hands each endpoint
//! submessage to the local writers or readers it is for.

use tachyon_wire::{EntityId, Guid, GuidPrefix, MessageView, SubmessageView, Time};

use super::Participant;
use crate::time::Instant;

/// Receiver state while interpreting one message.
struct ReceiverState {
    source: GuidPrefix,
    /// `None` once an INFO_DST named another participant: skip until the next INFO_DST.
    for_us: bool,
    timestamp: Option<Time>,
}

impl Participant {
    /// Interprets one datagram. Anything malformed is counted and the rest of the message
    /// dropped (as the spec says); nothing panics.
    /// `via`: the transport it came through (which references to samples resolve).
    pub(super) fn receive(&mut self, now: Instant, data: &[u8], via: crate::shared::Via<'_>) {
        self.stats.datagrams_received += 1;
        let msg = match MessageView::new_checked(data) {
            Ok(m) => m,
            Err(e) => {
                self.stats.malformed_datagrams += 1;
                tracing::debug!(len = data.len(), error = %e, "datagram dropped: bad RTPS header or submessage framing");
                return;
            }
        };
        let from_tachyon = msg.header().vendor_id() == tachyon_wire::VendorId::TACHYON;
        let mut rx = ReceiverState {
            source: msg.header().guid_prefix(),
            for_us: true,
            timestamp: None,
        };
        for sub in msg.submessages() {
            let sub = match sub {
                Ok(s) => s,
                Err(e) => {
                    self.stats.malformed_submessages += 1;
                    tracing::debug!(source = %rx.source, error = %e,
                        "malformed submessage: the rest of the message is dropped");
                    break;
                }
            };
            self.stats.submessages_received += 1;
            match sub {
                SubmessageView::InfoTs(v) => rx.timestamp = v.timestamp(),
                SubmessageView::InfoDst(v) => {
                    let p = v.guid_prefix();
                    rx.for_us = p == GuidPrefix::UNKNOWN || p == self.prefix;
                }
                SubmessageView::InfoSrc(v) => {
                    rx.source = v.guid_prefix();
                    rx.for_us = true;
                    rx.timestamp = None;
                }
                // Not a malformation: another participant's traffic on a shared locator.
                _ if !rx.for_us => self.stats.not_for_us += 1,
                // A lane has no discovery: builtin traffic is the main participant's.
                _ if self.siblings.lane && is_builtin(&sub) => self.siblings.forward = true,
                // SPDP is stateless, except from the PDP writers of the discovery servers
                // this participant is a client of: their reliable traffic goes to its PDP
                // reader (`discovery/client.rs`).
                SubmessageView::Data(d)
                    if d.writer_id() == EntityId::SPDP_WRITER
                        && !self
                            .routes
                            .contains_key(&Guid::new(rx.source, EntityId::SPDP_WRITER)) =>
                {
                    self.builtin_input = true;
                    self.on_spdp_data(rx.source, &d);
                }
                SubmessageView::Data(d) => {
                    self.builtin_input |= d.writer_id().kind().is_builtin();
                    let writer = Guid::new(rx.source, d.writer_id());
                    self.for_readers(writer, d.reader_id(), |r| {
                        r.handle_data(now, writer, rx.timestamp, &d, from_tachyon, via)
                    });
                }
                SubmessageView::DataFrag(d) => {
                    self.builtin_input |= d.writer_id().kind().is_builtin();
                    let writer = Guid::new(rx.source, d.writer_id());
                    self.for_readers(writer, d.reader_id(), |r| {
                        r.handle_data_frag(now, writer, rx.timestamp, &d)
                    });
                }
                SubmessageView::Heartbeat(h) => {
                    self.builtin_input |= h.writer_id().kind().is_builtin();
                    let writer = Guid::new(rx.source, h.writer_id());
                    let (first, last, count) = (h.first_sn(), h.last_sn(), h.count().0);
                    let (fin, live) = (h.is_final(), h.liveliness());
                    self.for_readers(writer, h.reader_id(), |r| {
                        r.handle_heartbeat(now, writer, first, last, count, fin, live)
                    });
                }
                SubmessageView::HeartbeatFrag(h) => {
                    let writer = Guid::new(rx.source, h.writer_id());
                    let (sn, last, count) = (h.writer_sn(), h.last_fragment_num().0, h.count().0);
                    self.for_readers(writer, h.reader_id(), |r| {
                        r.handle_heartbeat_frag(now, writer, sn, last, count)
                    });
                }
                SubmessageView::Gap(g) => {
                    self.builtin_input |= g.writer_id().kind().is_builtin();
                    let writer = Guid::new(rx.source, g.writer_id());
                    let (start, list) = (g.gap_start(), g.gap_list());
                    self.for_readers(writer, g.reader_id(), |r| {
                        r.handle_gap(now, writer, start, &list)
                    });
                }
                SubmessageView::AckNack(a) => {
                    let reader = Guid::new(rx.source, a.reader_id());
                    let state = a.reader_sn_state();
                    let (count, fin) = (a.count(), a.is_final());
                    match self.writer_mut(a.writer_id()) {
                        Some(w) => w.handle_acknack(now, reader, &state, count, fin),
                        None if a.writer_id() == EntityId::SPDP_WRITER => {
                            self.on_pdp_acknack(reader, &state)
                        }
                        None => self.no_writer(a.writer_id(), reader),
                    }
                }
                SubmessageView::NackFrag(n) => {
                    let reader = Guid::new(rx.source, n.reader_id());
                    let (sn, set, count) = (n.writer_sn(), n.fragment_number_state(), n.count());
                    match self.writer_mut(n.writer_id()) {
                        Some(w) => w.handle_nack_frag(now, reader, sn, &set, count),
                        None => self.no_writer(n.writer_id(), reader),
                    }
                }
                // INFO_REPLY(_IP4) only matter to discovery; PAD and unknown ones are skipped.
                _ => {}
            }
        }
        self.assemble_sets(now);
        let source = msg.header().guid_prefix();
        self.renew_lease(now, source);
        if !self.siblings.lane {
            self.siblings.heard_from(source);
        }
        self.participant_activity(now, source);
    }

    /// Runs `f` on every local reader matched with `writer` that `reader_id` addresses
    /// (ENTITYID_UNKNOWN addresses them all).
    /// Submessages a lane's readers want too make the datagram one to forward; one that
    /// reaches no reader here is for the main participant when this is a lane.
    fn for_readers(
        &mut self,
        writer: Guid,
        reader_id: EntityId,
        mut f: impl FnMut(&mut crate::reader::Reader),
    ) {
        let elsewhere = if self.siblings.lane {
            false
        } else {
            self.siblings.wants_reader_submessage(&writer, reader_id)
        };
        self.siblings.forward |= elsewhere;
        let Some(routes) = self.routes.get(&writer) else {
            if self.siblings.lane {
                self.siblings.forward = true;
            } else if !elsewhere {
                self.stats.unknown_destination += 1;
                tracing::debug!(%writer, "submessage dropped: no local reader is matched with its writer");
            }
            return;
        };
        let mut hit = false;
        for &i in routes {
            let addressed = self
                .readers
                .get(i)
                .is_some_and(|r| reader_id == EntityId::UNKNOWN || r.guid().entity_id == reader_id);
            if !addressed {
                continue;
            }
            // Touched (its events are looked at), queued for the transmit scan only when an
            // ACKNACK is due now or later: the only thing a reader sends (`reader/send.rs`).
            // A ping-pong's DATA and HEARTBEAT usually make none.
            let Some(r) = self.readers.get_mut_touched(i) else {
                continue;
            };
            f(r);
            hit = true;
            if r.acks_due_at().is_some() {
                self.readers.requeue(i);
            }
        }
        if !hit {
            if self.siblings.lane {
                self.siblings.forward = true;
            } else if !elsewhere {
                self.stats.unknown_destination += 1;
                tracing::debug!(%writer, reader = ?reader_id, "submessage dropped: no such matched reader");
            }
        }
    }

    /// An ACKNACK or NACK_FRAG for no writer here: one of a lane's (forward the datagram), or
    /// for the main participant when this is a lane, else dropped and counted.
    fn no_writer(&mut self, writer: EntityId, reader: Guid) {
        if self.siblings.lane || self.siblings.is_sibling(writer) {
            self.siblings.forward = true;
            return;
        }
        self.stats.unknown_destination += 1;
        tracing::debug!(%reader, "submessage dropped: no such local writer");
    }
}

/// Whether `sub` is traffic of a builtin (discovery) endpoint.
fn is_builtin(sub: &SubmessageView<'_>) -> bool {
    let writer = match sub {
        SubmessageView::Data(d) => d.writer_id(),
        SubmessageView::DataFrag(d) => d.writer_id(),
        SubmessageView::Heartbeat(h) => h.writer_id(),
        SubmessageView::HeartbeatFrag(h) => h.writer_id(),
        SubmessageView::Gap(g) => g.writer_id(),
        SubmessageView::AckNack(a) => a.writer_id(),
        SubmessageView::NackFrag(n) => n.writer_id(),
        _ => return false,
    };
    writer.kind().is_builtin()
}
