//! This participant as a client of discovery servers: Fast DDS's discovery-server protocol
//! (the one `fastdds discovery` serves and ROS 2's `ROS_DISCOVERY_SERVER` selects), so
//! participants find each other without multicast and without knowing each other's
//! addresses, only the servers'.
//!
//! What a client does, as Fast DDS 2.x clients do on the wire:
//! - It sends its SPDP announcement (DATA(p)) only to its servers, each in a message of its
//!   own (INFO_DST the server), with the sample identity Fast DDS servers require
//!   (PID 0x800f) and a HEARTBEAT, so the server's reliable PDP reader acknowledges it. Until
//!   a server has acknowledged it, the announcement is repeated every
//!   `initial_announce_period` (Fast DDS's "ping"); afterwards every `announce_period`,
//!   which keeps the client's lease at the server.
//! - The servers' PDP writers are reliable: a reliable reader (ENTITYID_SPDP_BUILTIN_
//!   PARTICIPANT_READER, matched with each server's PDP writer once that server is known)
//!   receives the servers' own announcements and those they relay of other clients. A
//!   relayed participant has no lease here: its server announces its end (a relayed dispose).
//! - SEDP runs only with the servers (they relay the endpoints of the other participants,
//!   of the topics this participant uses); liveliness, TypeLookup and user data go directly
//!   between the participants, to the locators the relayed announcements give.
//!
//! A server is named by its GUID prefix: Fast DDS 2.x servers have a fixed one per server id
//! ([`fastdds_server_prefix`]), its clients find them by it.

use std::collections::VecDeque;

use tachyon_wire::{
    Count, DataSpec, EntityId, Guid, GuidPrefix, InlineQos, Locator, MessageBuilder, PayloadKind,
    SequenceNumber, SequenceNumberSet, VendorId,
};

use super::data::ParticipantData;
use super::{Discovery, DiscoveryServer, ParticipantLostReason};
use crate::history::{InstanceState, Payload, Query, Sample};
use crate::time::Instant;
use crate::transmit::{Destination, Transmit};
use crate::Participant;

/// eProsima's vendor-specific inline parameter: the identity (writer GUID, sequence number)
/// of the sample, which Fast DDS discovery servers require of DATA(p), DATA(w) and DATA(r)
/// and keep when they relay it.
pub const PID_FASTDDS_SAMPLE_IDENTITY: u16 = 0x800f;

/// The GUID prefix of the Fast DDS 2.x discovery server with id `id` (its position in
/// `ROS_DISCOVERY_SERVER`): "DS", the id, then "_EPROSIMA" (`44.53.<id>.5f.45.50.52.4f.53.49.4d.41`).
pub fn fastdds_server_prefix(id: u8) -> GuidPrefix {
    GuidPrefix([
        0x44, 0x53, id, 0x5f, 0x45, 0x50, 0x52, 0x4f, 0x53, 0x49, 0x4d, 0x41,
    ])
}

/// The encoded value of PID 0x800f: GUID, then sequence number (high, low; little-endian).
pub(crate) fn sample_identity(writer: &Guid, sn: SequenceNumber) -> [u8; 24] {
    let mut v = [0u8; 24];
    v[..12].copy_from_slice(&writer.prefix.0);
    v[12..16].copy_from_slice(&writer.entity_id.0);
    v[16..20].copy_from_slice(&((sn.0 >> 32) as i32).to_le_bytes());
    v[20..].copy_from_slice(&(sn.0 as u32).to_le_bytes());
    v
}

/// The client's state: one link per server.
#[derive(Debug)]
pub(super) struct Client {
    links: Vec<Link>,
    /// Links whose announcement is due now (indices into `links`).
    due: VecDeque<usize>,
    heartbeats: i32,
}

#[derive(Debug)]
struct Link {
    server: DiscoveryServer,
    /// The server acknowledged our current announcement.
    acked: bool,
}

impl Client {
    pub(super) fn new(servers: &[DiscoveryServer]) -> Option<Client> {
        if servers.is_empty() {
            return None;
        }
        Some(Client {
            links: servers
                .iter()
                .map(|s| Link {
                    server: s.clone(),
                    acked: false,
                })
                .collect(),
            due: VecDeque::new(),
            heartbeats: 0,
        })
    }

    /// Whether `prefix` is one of the servers.
    pub(super) fn is_server(&self, prefix: &GuidPrefix) -> bool {
        self.links.iter().any(|l| l.server.prefix == *prefix)
    }

    /// Every server acknowledged the current announcement.
    pub(super) fn all_acked(&self) -> bool {
        self.links.iter().all(|l| l.acked)
    }

    /// Announce to every server now (periodic announcement, or the announcement changed).
    pub(super) fn announce_to_all(&mut self, changed: bool) {
        for (i, l) in self.links.iter_mut().enumerate() {
            if changed {
                l.acked = false;
            }
            if !self.due.contains(&i) {
                self.due.push_back(i);
            }
        }
    }

    pub(super) fn has_due(&self) -> bool {
        !self.due.is_empty()
    }

    /// A server lost: it must acknowledge us again (a restarted server knows nothing).
    pub(super) fn server_lost(&mut self, prefix: &GuidPrefix) {
        for l in &mut self.links {
            if l.server.prefix == *prefix {
                l.acked = false;
            }
        }
    }

    /// The configured server `prefix`.
    pub(super) fn server(&self, prefix: &GuidPrefix) -> Option<&DiscoveryServer> {
        self.links
            .iter()
            .map(|l| &l.server)
            .find(|s| s.prefix == *prefix)
    }

    /// The locators of every server (where a dispose goes).
    pub(super) fn locators(&self) -> impl Iterator<Item = &Locator> {
        self.links.iter().flat_map(|l| l.server.locators.iter())
    }
}

/// The property that tells a Tachyon participant announcing eProsima's vendor id (as a
/// discovery-server client must, [`client_announcement`]) from Fast DDS: receivers take the
/// vendor id it holds instead (`ParticipantData::from_payload`).
pub const TACHYON_VENDOR_PROPERTY: &str = "tachyon.vendor_id";

/// What a discovery-server client announces beyond a simple participant's: the properties
/// Fast DDS clients carry (`PARTICIPANT_TYPE=CLIENT`, `DS_VERSION=2.0`), and eProsima's
/// vendor id, without which a Fast DDS 2.x server drops the announcement ("DATA(p) from
/// different vendor is not supported for Discover-Server operation"); the real vendor id goes
/// in [`TACHYON_VENDOR_PROPERTY`].
pub(super) fn client_announcement(d: &mut ParticipantData) {
    let real = d.vendor_id;
    d.vendor_id = VendorId::FAST_DDS;
    d.properties.retain(|(k, _)| {
        k != "PARTICIPANT_TYPE" && k != "DS_VERSION" && k != TACHYON_VENDOR_PROPERTY
    });
    d.properties
        .push(("PARTICIPANT_TYPE".to_owned(), "CLIENT".to_owned()));
    d.properties
        .push(("DS_VERSION".to_owned(), "2.0".to_owned()));
    d.properties.push((
        TACHYON_VENDOR_PROPERTY.to_owned(),
        format!("{:02x}.{:02x}", real.0[0], real.0[1]),
    ));
}

/// The vendor id [`TACHYON_VENDOR_PROPERTY`] holds ("01.f0"), if it is there.
pub(crate) fn announced_vendor(properties: &[(String, String)]) -> Option<VendorId> {
    let (_, v) = properties
        .iter()
        .find(|(k, _)| k == TACHYON_VENDOR_PROPERTY)?;
    let (a, b) = v.split_once('.')?;
    Some(VendorId([
        u8::from_str_radix(a, 16).ok()?,
        u8::from_str_radix(b, 16).ok()?,
    ]))
}

impl Participant {
    /// Matches the PDP reader with server `server`'s PDP writer, at the locators configured
    /// (as Fast DDS clients do): the server's HEARTBEATs are answered, and its announcement
    /// comes before anything else is known of it.
    pub(super) fn prematch_server(&mut self, now: Instant, server: &DiscoveryServer) {
        let locators = server.locators.clone();
        self.match_pdp_writer(now, server.prefix, locators, VendorId::UNKNOWN);
    }

    /// Takes what the PDP reader received: at a client, the servers' own announcements and
    /// those they relay, and the ends they relay; at a server, the clients' announcements.
    pub(super) fn drain_pdp(&mut self, now: Instant, d: &mut Discovery) {
        let mut samples: Vec<Sample> = Vec::new();
        let _ = self.take(now, EntityId::SPDP_READER, &Query::ANY, &mut samples);
        for s in samples.drain(..) {
            let guid = super::key_guid(&s.info.instance_handle);
            if s.info.instance_state != InstanceState::Alive || !s.info.valid_data {
                if s.info.instance_state != InstanceState::Alive {
                    self.remove_participant(now, d, guid.prefix, ParticipantLostReason::Deleted);
                }
                continue;
            }
            let bytes = s.data.as_ref().map_or(&[][..], Payload::as_bytes);
            match ParticipantData::from_payload(bytes) {
                Ok(p) => {
                    // A client hears of the others through its servers; a server hears from
                    // each client itself.
                    let relayed = d
                        .client
                        .as_ref()
                        .is_some_and(|c| !c.is_server(&p.guid_prefix));
                    self.accept_participant(now, d, p, bytes, relayed);
                }
                Err(e) => {
                    d.stats.malformed += 1;
                    tracing::debug!(participant = %guid.prefix, error = %e, "relayed DATA(p) rejected");
                }
            }
        }
    }

    /// An ACKNACK from a server's PDP reader for our announcement: acknowledged, or asked
    /// for again.
    pub(crate) fn on_pdp_acknack(&mut self, reader: Guid, state: &SequenceNumberSet) {
        let Some(d) = self.discovery.as_mut() else {
            return;
        };
        let sn = SequenceNumber(d.spdp.sn());
        let Some(c) = d.client.as_mut() else {
            self.stats.unknown_destination += 1;
            return;
        };
        let Some(i) = c
            .links
            .iter()
            .position(|l| l.server.prefix == reader.prefix)
        else {
            self.stats.unknown_destination += 1;
            return;
        };
        if state.base > sn {
            c.links[i].acked = true;
        } else if !c.due.contains(&i) {
            c.due.push_back(i);
        }
    }

    /// The next announcement to a server, if one is due: INFO_DST, INFO_TS, DATA(p) with its
    /// sample identity, HEARTBEAT.
    pub(super) fn poll_client_transmit(
        &mut self,
        now: Instant,
        buf: &mut [u8],
    ) -> Option<Transmit> {
        let header = self.header;
        let prefix = self.prefix;
        let d: &mut Discovery = self.discovery.as_mut()?;
        let time = Participant::discovery_time(d, now);
        let c = d.client.as_mut()?;
        let i = c.due.pop_front()?;
        let link = c.links.get(i)?;
        let a = &d.spdp;
        let sn = SequenceNumber(a.sn());
        let writer = Guid::new(prefix, EntityId::SPDP_WRITER);
        let key = super::guid_key(&Guid::new(prefix, EntityId::PARTICIPANT));
        let mut qos = InlineQos::open(Some(key.0), None);
        qos.raw(PID_FASTDDS_SAMPLE_IDENTITY, &sample_identity(&writer, sn));
        qos.close();
        c.heartbeats = c.heartbeats.wrapping_add(1);
        let mut mb = MessageBuilder::new(buf, &header).ok()?;
        mb.info_dst(link.server.prefix).ok()?;
        mb.info_ts(Some(time)).ok()?;
        mb.data(&DataSpec {
            reader_id: EntityId::SPDP_READER,
            writer_id: EntityId::SPDP_WRITER,
            writer_sn: sn,
            inline_qos: Some(qos.as_bytes()),
            kind: PayloadKind::Data,
            payload: a.payload(),
        })
        .ok()?;
        mb.heartbeat(
            EntityId::SPDP_READER,
            EntityId::SPDP_WRITER,
            sn,
            sn,
            Count(c.heartbeats),
            false,
            false,
        )
        .ok()?;
        let len = mb.finish();
        let destination = match link.server.locators.as_slice() {
            [] => return None,
            [one] => Destination::Unicast(*one),
            many => Destination::Many(many.into()),
        };
        d.stats.spdp_sent += 1;
        Some(Transmit {
            destination,
            len,
            priority: 0,
        })
    }
}
