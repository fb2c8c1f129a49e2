//! SPDP (RTPS 2.5 8.5.3): the stateless best-effort announcer of this participant and the
//! stateless detector of others. An announcement goes out periodically to every SPDP
//! destination (multicast group and peer list), at once to each newly discovered participant,
//! and a dispose when the participant is deleted.

use std::collections::VecDeque;

use tachyon_wire::{
    DataSpec, EntityId, Guid, GuidPrefix, InlineQos, Locator, MessageBuilder, PayloadKind,
    SequenceNumber, VendorId,
};

use super::data::{builtin_endpoints as be, ParticipantData};
use super::{usable, Discovery, DiscoveryConfig, ParticipantLostReason, RemoteParticipant};
use crate::endpoint::{Liveliness, Reliability, RemoteReader, RemoteWriter};
use crate::event::Event;
use crate::history::Durability;
use crate::time::Instant;
use crate::transmit::{Destination, Transmit};
use crate::Participant;

/// STATUS_INFO flags of a dispose + unregister.
const DISPOSED_UNREGISTERED: u32 = 0x3;

/// An SPDP sample taken off the wire, processed after the datagram.
#[derive(Debug)]
pub(super) struct Received {
    source: GuidPrefix,
    /// Serialized ParticipantData; empty for a dispose without payload.
    payload: Vec<u8>,
    /// STATUS_INFO flags (dispose / unregister).
    status: u32,
    /// PID_KEY_HASH, if sent.
    key: Option<[u8; 16]>,
}

/// The stateless SPDP writer of this participant.
#[derive(Debug)]
pub(super) struct Announcer {
    data: ParticipantData,
    payload: Vec<u8>,
    sn: i64,
    /// When the next periodic announcement is due (`None` after deletion).
    next: Option<Instant>,
    initial_left: u32,
    /// Participants to announce ourselves to at once (their metatraffic unicast locators).
    directed: VecDeque<Vec<Locator>>,
    /// The participant is being deleted: send the dispose once.
    dispose: bool,
}

impl Announcer {
    pub(super) fn new(data: ParticipantData, config: &DiscoveryConfig) -> Announcer {
        let payload = data.to_payload();
        Announcer {
            data,
            payload,
            sn: 0,
            next: Some(Instant::ZERO),
            initial_left: config.initial_announcements,
            directed: VecDeque::new(),
            dispose: false,
        }
    }

    pub(super) fn data(&self) -> &ParticipantData {
        &self.data
    }

    /// The sequence number of the last announcement.
    pub(super) fn sn(&self) -> i64 {
        self.sn
    }

    /// The serialized announcement.
    pub(super) fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// As a discovery-server client: one announcement, sequence number 1, sent reliably
    /// (its number changes only when its content does).
    pub(super) fn set_reliable(&mut self) {
        self.sn = 1;
    }

    /// As a discovery server: no stateless announcements (its PDP writer announces it).
    pub(super) fn silence(&mut self) {
        self.next = None;
        self.initial_left = 0;
    }

    pub(super) fn next_due(&self) -> Option<Instant> {
        if self.dispose || !self.directed.is_empty() {
            return Some(Instant::ZERO);
        }
        self.next
    }

    /// Changes USER_DATA and announces the change at once: on the SPDP destinations now (the
    /// periodic schedule restarts) and to every participant in `known` directly. Returns
    /// whether it changed.
    pub(super) fn set_user_data(&mut self, user_data: Vec<u8>, known: Vec<Vec<Locator>>) -> bool {
        if self.dispose || self.data.user_data == user_data {
            return false;
        }
        self.data.user_data = user_data;
        self.payload = self.data.to_payload();
        if self.next.is_some() {
            self.next = Some(Instant::ZERO);
        }
        self.directed.extend(known);
        true
    }

    /// The announcement changed: a reliable one gets the next sequence number.
    pub(super) fn next_sn(&mut self) {
        self.sn += 1;
    }

    pub(super) fn announce_deletion(&mut self) {
        self.dispose = true;
        self.directed.clear();
    }
}

/// The announcement this participant makes.
pub(super) fn own_data(
    prefix: GuidPrefix,
    vendor_id: VendorId,
    config: &DiscoveryConfig,
) -> ParticipantData {
    let mut d = ParticipantData::new(prefix, vendor_id);
    d.domain_id = Some(config.domain_id);
    d.domain_tag.clone_from(&config.domain_tag);
    d.metatraffic_unicast
        .clone_from(&config.metatraffic_unicast);
    d.metatraffic_multicast
        .clone_from(&config.metatraffic_multicast);
    d.default_unicast.clone_from(&config.default_unicast);
    d.default_multicast.clone_from(&config.default_multicast);
    d.builtin_endpoints = be::PARTICIPANT_ANNOUNCER
        | be::PARTICIPANT_DETECTOR
        | be::PUBLICATIONS_ANNOUNCER
        | be::PUBLICATIONS_DETECTOR
        | be::SUBSCRIPTIONS_ANNOUNCER
        | be::SUBSCRIPTIONS_DETECTOR
        | be::PARTICIPANT_MESSAGE_WRITER
        | be::PARTICIPANT_MESSAGE_READER
        | be::TYPE_LOOKUP_REQUEST_WRITER
        | be::TYPE_LOOKUP_REQUEST_READER
        | be::TYPE_LOOKUP_REPLY_WRITER
        | be::TYPE_LOOKUP_REPLY_READER;
    d.lease_duration = Some(config.lease_duration);
    d.user_data.clone_from(&config.user_data);
    d.entity_name.clone_from(&config.entity_name);
    d.properties.clone_from(&config.properties);
    if !config.servers.is_empty() {
        super::client::client_announcement(&mut d);
    }
    if config.server {
        d.properties
            .retain(|(k, _)| k != "PARTICIPANT_TYPE" && k != "DS_VERSION");
        d.properties
            .push(("PARTICIPANT_TYPE".to_owned(), "SERVER".to_owned()));
        d.properties
            .push(("DS_VERSION".to_owned(), "2.0".to_owned()));
    }
    d
}

impl Participant {
    /// An SPDP DATA arrived (from any writer: SPDP readers are stateless).
    pub(crate) fn on_spdp_data(&mut self, source: GuidPrefix, d: &tachyon_wire::DataView<'_>) {
        let Some(disc) = self.discovery.as_mut() else {
            self.stats.unknown_destination += 1;
            return;
        };
        disc.stats.spdp_received += 1;
        if source == self.prefix {
            return;
        }
        let mut status = 0;
        let mut key = None;
        if let Some(qos) = d.inline_qos() {
            if let Some(v) = qos.get(tachyon_wire::parameter::pid::STATUS_INFO) {
                if let Some(b) = v.get(..4) {
                    status = u32::from(b[3]);
                }
            }
            if let Some(v) = qos.get(tachyon_wire::parameter::pid::KEY_HASH) {
                key = v.get(..16).and_then(|b| b.try_into().ok());
            }
        }
        if disc.inbox.len() >= super::INBOX_LIMIT {
            disc.stats.inbox_overflow += 1;
            tracing::debug!(%source, "SPDP sample dropped: inbox full");
            return;
        }
        disc.inbox.push_back(Received {
            source,
            payload: d.serialized_payload().unwrap_or(&[]).to_vec(),
            status,
            key,
        });
    }

    /// Processes one received SPDP sample.
    pub(super) fn handle_spdp(&mut self, now: Instant, d: &mut Discovery, rx: Received) {
        if rx.status & DISPOSED_UNREGISTERED != 0 {
            let prefix = match super::data::participant_guid_from_key(&rx.payload) {
                Some(g) => g.prefix,
                None => match rx.key {
                    Some(k) => super::key_guid(&tachyon_cdr::KeyHash(k)).prefix,
                    None => rx.source,
                },
            };
            self.remove_participant(now, d, prefix, ParticipantLostReason::Deleted);
            return;
        }
        let data = match ParticipantData::from_payload(&rx.payload) {
            Ok(p) => p,
            Err(e) => {
                d.stats.malformed += 1;
                tracing::debug!(source = %rx.source, error = %e, "SPDP sample rejected");
                return;
            }
        };
        self.accept_participant(now, d, data, &rx.payload, false);
    }

    /// A participant's announcement (`raw`: as received): from itself, or `relayed` by a
    /// discovery server (whose PDP writer then tells of its end: it gets no lease here).
    pub(super) fn accept_participant(
        &mut self,
        now: Instant,
        d: &mut Discovery,
        data: ParticipantData,
        raw: &[u8],
        relayed: bool,
    ) {
        if data.domain_id.is_some_and(|id| id != d.config.domain_id)
            || data.domain_tag != d.config.domain_tag
        {
            d.stats.other_domain += 1;
            tracing::debug!(participant = %data.guid_prefix, "participant of another domain ignored");
            return;
        }
        let prefix = data.guid_prefix;
        if prefix == self.prefix {
            return;
        }
        let expiry = if relayed {
            None
        } else {
            data.lease_duration.and_then(|l| now.checked_add(l))
        };
        if let Some(p) = d.participants.get_mut(&prefix) {
            p.lease_expiry = expiry;
            p.relayed = relayed;
            if let Some(t) = expiry {
                d.lease_check = Some(d.lease_check.map_or(t, |c| c.min(t)));
            }
            if p.data != data {
                // Locators or builtin endpoints changed: rematch the builtin endpoints.
                p.data = data;
                let data = p.data.clone();
                self.match_builtin(now, d, &data);
                self.server_participant(now, d, &data, raw);
                d.events.push_back(Event::ParticipantUpdated {
                    participant: prefix,
                });
            }
            return;
        }
        while d.deleted.front().is_some_and(|(_, until)| *until <= now) {
            d.deleted.pop_front();
        }
        if d.deleted.iter().any(|(p, _)| *p == prefix) {
            tracing::debug!(participant = %prefix, "late announcement of a deleted participant ignored");
            return;
        }
        if d.participants.len() >= d.config.max_participants {
            d.stats.participants_refused += 1;
            tracing::debug!(participant = %prefix, limit = d.config.max_participants,
                "participant refused: max_participants reached");
            return;
        }
        tracing::debug!(participant = %prefix, vendor = ?data.vendor_id, relayed, "participant discovered");
        self.match_builtin(now, d, &data);
        self.server_participant(now, d, &data, raw);
        if d.client.is_none() && d.server.is_none() {
            let to = usable(&d.config.reach, &data.metatraffic_unicast, false);
            if !to.is_empty() {
                d.spdp.directed.push_back(to);
            }
        }
        d.participants.insert(
            prefix,
            RemoteParticipant {
                data,
                lease_expiry: expiry,
                relayed,
            },
        );
        if let Some(t) = expiry {
            d.lease_check = Some(d.lease_check.map_or(t, |c| c.min(t)));
        }
        d.events.push_back(Event::ParticipantDiscovered {
            participant: prefix,
        });
        self.adopt_orphans(now, d, prefix);
        // Our endpoints are announced to it through the transient-local SEDP writers; a
        // liveliness assertion lets its readers see our writers alive at once.
        d.liveliness.assert_automatic_soon();
    }

    /// Matches our builtin SEDP and liveliness endpoints with a participant's.
    fn match_builtin(&mut self, now: Instant, d: &Discovery, p: &ParticipantData) {
        let reach = &d.config.reach;
        let mut locs = usable(reach, &p.metatraffic_unicast, false);
        if locs.is_empty() {
            locs = usable(reach, &p.metatraffic_multicast, d.config.use_multicast);
        }
        let prefix = p.guid_prefix;
        // A discovery-server client runs SEDP with its servers only (they relay the rest),
        // and receives their PDP writers' announcements with a reliable reader.
        let server = d.client.as_ref().map(|c| c.is_server(&prefix));
        if server == Some(true) && p.builtin_endpoints & be::PARTICIPANT_ANNOUNCER != 0 {
            self.match_pdp_writer(now, prefix, locs.clone(), p.vendor_id);
        }
        let sedp = server != Some(false);
        let pairs = [
            (
                EntityId::SEDP_PUBLICATIONS_WRITER,
                EntityId::SEDP_PUBLICATIONS_READER,
                be::PUBLICATIONS_DETECTOR,
                be::PUBLICATIONS_ANNOUNCER,
            ),
            (
                EntityId::SEDP_SUBSCRIPTIONS_WRITER,
                EntityId::SEDP_SUBSCRIPTIONS_READER,
                be::SUBSCRIPTIONS_DETECTOR,
                be::SUBSCRIPTIONS_ANNOUNCER,
            ),
            (
                EntityId::PARTICIPANT_MESSAGE_WRITER,
                EntityId::PARTICIPANT_MESSAGE_READER,
                be::PARTICIPANT_MESSAGE_READER,
                be::PARTICIPANT_MESSAGE_WRITER,
            ),
            (
                EntityId::TYPE_LOOKUP_REQUEST_WRITER,
                EntityId::TYPE_LOOKUP_REQUEST_READER,
                be::TYPE_LOOKUP_REQUEST_READER,
                be::TYPE_LOOKUP_REQUEST_WRITER,
            ),
            (
                EntityId::TYPE_LOOKUP_REPLY_WRITER,
                EntityId::TYPE_LOOKUP_REPLY_READER,
                be::TYPE_LOOKUP_REPLY_READER,
                be::TYPE_LOOKUP_REPLY_WRITER,
            ),
        ];
        for (writer, reader, their_reader_bit, their_writer_bit) in pairs {
            if !sedp && super::sedp::is_sedp(writer) {
                continue;
            }
            // The TypeLookup endpoints are volatile, the others transient-local.
            let durability = if writer.0[1] == 0x03 {
                Durability::Volatile
            } else {
                Durability::TransientLocal
            };
            if p.builtin_endpoints & their_reader_bit != 0 {
                let _ = self.match_reader(
                    now,
                    writer,
                    RemoteReader {
                        guid: Guid::new(prefix, reader),
                        unicast_locators: locs.clone(),
                        multicast_locators: Vec::new(),
                        reliability: Reliability::Reliable,
                        durability,
                    },
                );
            }
            if p.builtin_endpoints & their_writer_bit != 0 {
                let _ = self.match_writer(
                    now,
                    reader,
                    RemoteWriter {
                        guid: Guid::new(prefix, writer),
                        unicast_locators: locs.clone(),
                        reliability: Reliability::Reliable,
                        durability,
                        liveliness: Liveliness::default(),
                        ownership_strength: 0,
                        lifespan: None,
                        group: None,
                        vendor: p.vendor_id,
                    },
                );
            }
        }
        if sedp && crate::quirks::knows_no_xtypes_1_3_integers(p.vendor_id, p.product_version) {
            self.serve_sedp_alone(now, d, prefix);
        }
    }

    /// Unmatches our builtin endpoints from a participant's.
    pub(super) fn unmatch_builtin(&mut self, now: Instant, prefix: GuidPrefix) {
        for (writer, reader) in [
            (
                EntityId::SEDP_PUBLICATIONS_WRITER,
                EntityId::SEDP_PUBLICATIONS_READER,
            ),
            (
                EntityId::SEDP_SUBSCRIPTIONS_WRITER,
                EntityId::SEDP_SUBSCRIPTIONS_READER,
            ),
            (
                EntityId::PARTICIPANT_MESSAGE_WRITER,
                EntityId::PARTICIPANT_MESSAGE_READER,
            ),
            (
                EntityId::TYPE_LOOKUP_REQUEST_WRITER,
                EntityId::TYPE_LOOKUP_REQUEST_READER,
            ),
            (
                EntityId::TYPE_LOOKUP_REPLY_WRITER,
                EntityId::TYPE_LOOKUP_REPLY_READER,
            ),
        ] {
            let _ = self.unmatch_reader(writer, &Guid::new(prefix, reader));
            let _ = self.unmatch_writer(now, reader, &Guid::new(prefix, writer));
        }
    }

    /// Whether SPDP has an announcement to send that no timer tells of (a dispose, or one
    /// directed at a participant just heard from).
    pub(crate) fn spdp_pending(&self) -> bool {
        self.discovery.as_ref().is_some_and(|d| {
            d.spdp.dispose
                || !d.spdp.directed.is_empty()
                || d.client.as_ref().is_some_and(|c| c.has_due())
        })
    }

    /// Whether [`poll_spdp_transmit`](Self::poll_spdp_transmit) could send something at `now`.
    pub(crate) fn spdp_due(&self, now: Instant) -> bool {
        self.discovery.as_ref().is_some_and(|d| {
            let a = &d.spdp;
            d.client.is_some()
                || a.dispose
                || !a.directed.is_empty()
                || a.next.is_some_and(|t| t <= now)
        })
    }

    /// The next SPDP datagram, if one is due.
    pub(crate) fn poll_spdp_transmit(&mut self, now: Instant, buf: &mut [u8]) -> Option<Transmit> {
        if !self.spdp_due(now) {
            // Nothing due (asked at every flush).
            return None;
        }
        let header = self.header;
        let d = self.discovery.as_mut()?;
        let time = Participant::discovery_time(d, now);
        let a = &mut d.spdp;
        if !a.dispose {
            if let Some(c) = d.client.as_mut() {
                // A client announces to its servers only, reliably (`discovery/client.rs`).
                if a.next.is_some_and(|t| t <= now) {
                    c.announce_to_all(false);
                    let period = if c.all_acked() {
                        d.config.announce_period
                    } else {
                        d.config.initial_announce_period
                    };
                    a.next = now.checked_add(period);
                }
                return self.poll_client_transmit(now, buf);
            }
        }
        let (dest, dispose) = if a.dispose {
            a.dispose = false;
            a.next = None;
            let mut all = d.config.spdp_destinations.clone();
            if let Some(c) = d.client.as_ref() {
                all.extend(c.locators().copied());
            }
            for p in d.participants.values() {
                all.extend(usable(&d.config.reach, &p.data.metatraffic_unicast, false));
            }
            (all, true)
        } else if let Some(to) = a.directed.pop_front() {
            (to, false)
        } else if a.next.is_some_and(|t| t <= now) {
            let period = if a.initial_left > 0 {
                a.initial_left -= 1;
                d.config.initial_announce_period
            } else {
                d.config.announce_period
            };
            a.next = now.checked_add(period);
            (d.config.spdp_destinations.clone(), false)
        } else {
            return None;
        };
        a.sn += 1;
        let key = super::guid_key(&Guid::new(self.prefix, EntityId::PARTICIPANT));
        let status = dispose.then_some(DISPOSED_UNREGISTERED);
        let mut qos = InlineQos::open(Some(key.0), status);
        if d.client.is_some() {
            // Fast DDS servers require the sample identity of a dispose too.
            let writer = Guid::new(self.prefix, EntityId::SPDP_WRITER);
            qos.raw(
                super::PID_FASTDDS_SAMPLE_IDENTITY,
                &super::client::sample_identity(&writer, SequenceNumber(a.sn)),
            );
        }
        qos.close();
        let payload: &[u8] = if dispose { &[] } else { &a.payload };
        let mut mb = MessageBuilder::new(buf, &header).ok()?;
        mb.info_ts(Some(time)).ok()?;
        mb.data(&DataSpec {
            reader_id: EntityId::SPDP_READER,
            writer_id: EntityId::SPDP_WRITER,
            writer_sn: SequenceNumber(a.sn),
            inline_qos: Some(qos.as_bytes()),
            kind: if dispose {
                PayloadKind::None
            } else {
                PayloadKind::Data
            },
            payload,
        })
        .ok()?;
        let len = mb.finish();
        d.stats.spdp_sent += dest.len() as u64;
        let destination = match dest.len() {
            0 => return None,
            1 if super::is_multicast(&dest[0]) => Destination::Multicast(dest[0]),
            1 => Destination::Unicast(dest[0]),
            _ => Destination::Many(dest.into()),
        };
        self.stats.datagrams_sent += 1;
        Some(Transmit {
            destination,
            len,
            priority: 0,
        })
    }
}
