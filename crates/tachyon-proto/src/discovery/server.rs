//! This participant as a discovery server: Fast DDS's discovery-server protocol (the server
//! side of `discovery/client.rs`), so Fast DDS 2.x clients (`ROS_DISCOVERY_SERVER`) and
//! Tachyon clients (`discovery.servers`) find each other through it without multicast.
//!
//! What a server does, as `fastdds discovery` does on the wire:
//! - Its GUID prefix is the fixed one of its server id (`fastdds_server_prefix`): that is how
//!   clients recognize it. It listens on a well-known unicast port (11811 by default; the
//!   runtime binds it).
//! - Its PDP writer and reader are reliable and transient-local. A client's first DATA(p)
//!   arrives unsolicited (the stateless SPDP path takes it); the client is then matched both
//!   ways. The PDP writer holds the server's own announcement (written again every
//!   `announce_period`, which keeps the clients' leases of the server) and relays every
//!   client's announcement, byte for byte, to every client, with the original's identity in
//!   eProsima's parameter 0x800f; a client that leaves (its dispose, or its lease) is relayed
//!   as a dispose.
//! - SEDP runs with every client. What a client announces is relayed by the server's SEDP
//!   writers, byte for byte with its identity, **only to the clients that have an endpoint on
//!   the same topic** (by name, as Fast DDS 2.x servers scope it): each client's SEDP readers
//!   get a filter on the topic, and are served on their own (the writer's directed path,
//!   which transcoded readers take, with an identity conversion), so a sample goes only to
//!   the clients it passes. When a client starts using a topic, the endpoints of that topic
//!   relayed before are written again, so it gets them too.
//! - User data, liveliness and TypeLookup flow directly between the clients.

use std::collections::HashSet;
use std::sync::Arc;

use tachyon_wire::{EntityId, Guid, GuidPrefix};

use super::data::topic_name_of;
use super::{guid_key, Discovery};
use crate::endpoint::{Reliability, RemoteReader, WriterConfig};
use crate::history::{ChangeKind, Durability, Payload, ResourceLimits, WriterHistoryConfig};
use crate::maps::HashMap;
use crate::qos::DataRepresentation;
use crate::time::Instant;
use crate::writer::WriteRequest;
use crate::Participant;

/// The server's state.
#[derive(Debug, Default)]
pub(super) struct Server {
    /// Per client, how many of its endpoints use each topic.
    topics: HashMap<GuidPrefix, HashMap<String, u32>>,
    /// The endpoints relayed: their topic, the SEDP writer relaying them, their announcement.
    relayed: HashMap<Guid, Relayed>,
    /// When the server's own announcement is written again (`None`: first at the next
    /// timeout).
    next_announce: Option<Instant>,
}

#[derive(Debug)]
struct Relayed {
    topic: String,
    writer: EntityId,
    payload: Payload,
}

impl Server {
    /// The own announcement changed: write it again at the next timeout.
    pub(super) fn announce_now(&mut self) {
        self.next_announce = None;
    }
}

/// The SEDP readers of a client, each with the server's SEDP writer that relays to it.
pub(super) fn sedp_pairs(client: GuidPrefix) -> [(EntityId, Guid); 2] {
    [
        (
            EntityId::SEDP_PUBLICATIONS_WRITER,
            Guid::new(client, EntityId::SEDP_PUBLICATIONS_READER),
        ),
        (
            EntityId::SEDP_SUBSCRIPTIONS_WRITER,
            Guid::new(client, EntityId::SEDP_SUBSCRIPTIONS_READER),
        ),
    ]
}

impl Participant {
    /// A server's reliable PDP writer and reader. Its SEDP writers' conversion (set with
    /// the builtin endpoints, `older_types`) lets each client be served on its own.
    pub(super) fn create_server_endpoints(&mut self) {
        let _ = self.insert_writer(
            EntityId::SPDP_WRITER,
            WriterConfig {
                reliability: Reliability::Reliable,
                history: WriterHistoryConfig {
                    history: crate::history::History::KeepLast(1),
                    limits: ResourceLimits::default(),
                    durability: Durability::TransientLocal,
                },
                keyed: true,
                repair_suppression: super::BUILTIN_REPAIR_SUPPRESSION,
                sample_identity: true,
                ..WriterConfig::default()
            },
        );
        self.create_pdp_reader();
    }

    /// Server timers: its own announcement, written again every announce period.
    pub(super) fn server_timeout(&mut self, now: Instant, d: &mut Discovery) {
        let Some(s) = d.server.as_mut() else {
            return;
        };
        if s.next_announce.is_some_and(|t| t > now) {
            return;
        }
        s.next_announce = now.checked_add(d.config.announce_period);
        let me = Guid::new(self.prefix, EntityId::PARTICIPANT);
        let payload = Payload::copy_from_slice(d.spdp.payload());
        self.relay(
            now,
            d,
            EntityId::SPDP_WRITER,
            &me,
            ChangeKind::Alive,
            payload,
        );
    }

    /// When the server's timers next run.
    pub(super) fn server_due(d: &Discovery) -> Option<Instant> {
        let s = d.server.as_ref()?;
        Some(s.next_announce.unwrap_or(Instant::ZERO))
    }

    /// A client announced itself (`new`: for the first time): it is matched with the
    /// server's PDP endpoints, its SEDP readers are scoped to its topics, and its
    /// announcement is relayed to every client.
    pub(super) fn server_participant(
        &mut self,
        now: Instant,
        d: &mut Discovery,
        client: &super::ParticipantData,
        raw: &[u8],
    ) {
        if d.server.is_none() {
            return;
        }
        let prefix = client.guid_prefix;
        let reach = &d.config.reach;
        let locs = super::usable(reach, &client.metatraffic_unicast, false);
        let _ = self.match_reader(
            now,
            EntityId::SPDP_WRITER,
            RemoteReader {
                guid: Guid::new(prefix, EntityId::SPDP_READER),
                unicast_locators: locs.clone(),
                multicast_locators: Vec::new(),
                reliability: Reliability::Reliable,
                durability: Durability::TransientLocal,
            },
        );
        self.match_pdp_writer(now, prefix, locs, client.vendor_id);
        for (writer, reader) in sedp_pairs(prefix) {
            self.set_reader_representation(now, writer, &reader, Some(DataRepresentation::Xcdr1));
        }
        self.scope_client(d, prefix);
        let key = Guid::new(prefix, EntityId::PARTICIPANT);
        let payload = Payload::copy_from_slice(raw);
        self.relay(
            now,
            d,
            EntityId::SPDP_WRITER,
            &key,
            ChangeKind::Alive,
            payload,
        );
    }

    /// A client left (its dispose, or its lease expired): its end is relayed.
    pub(super) fn server_participant_gone(
        &mut self,
        now: Instant,
        d: &mut Discovery,
        prefix: GuidPrefix,
    ) {
        let Some(s) = d.server.as_mut() else {
            return;
        };
        s.topics.remove(&prefix);
        // As Fast DDS clients send theirs: the key hash alone says whose end it is.
        let key = Guid::new(prefix, EntityId::PARTICIPANT);
        let kind = ChangeKind::NotAliveDisposedUnregistered;
        self.relay(
            now,
            d,
            EntityId::SPDP_WRITER,
            &key,
            kind,
            Payload::from(Vec::new()),
        );
    }

    /// A client announced (or changed) an endpoint, taken by SEDP reader `reader`: it is
    /// relayed to the clients that use its topic.
    pub(super) fn server_endpoint(
        &mut self,
        now: Instant,
        d: &mut Discovery,
        reader: EntityId,
        guid: Guid,
        payload: Payload,
    ) {
        let Some(s) = d.server.as_mut() else {
            return;
        };
        let Some(topic) = topic_name_of(payload.as_bytes()) else {
            return;
        };
        let writer = if reader == EntityId::SEDP_PUBLICATIONS_READER {
            EntityId::SEDP_PUBLICATIONS_WRITER
        } else {
            EntityId::SEDP_SUBSCRIPTIONS_WRITER
        };
        let entry = Relayed {
            topic: topic.clone(),
            writer,
            payload: payload.clone(),
        };
        let first = match s.relayed.insert(guid, entry) {
            Some(old) => {
                if old.topic != topic {
                    // A topic change is an endpoint leaving one topic for another.
                    Self::count_topic(s, guid.prefix, &old.topic, false);
                    Self::count_topic(s, guid.prefix, &topic, true)
                } else {
                    false
                }
            }
            None => Self::count_topic(s, guid.prefix, &topic, true),
        };
        if first {
            // The client uses a new topic: what was relayed of it before goes out again,
            // now that the client's filter lets it through.
            self.scope_client(d, guid.prefix);
            let again: Vec<(Guid, EntityId, Payload)> = d
                .server
                .iter()
                .flat_map(|s| s.relayed.iter())
                .filter(|(g, r)| r.topic == topic && g.prefix != guid.prefix)
                .map(|(g, r)| (*g, r.writer, r.payload.clone()))
                .collect();
            for (g, w, p) in again {
                self.relay(now, d, w, &g, ChangeKind::Alive, p);
            }
        }
        self.relay(now, d, writer, &guid, ChangeKind::Alive, payload);
    }

    /// A relayed endpoint is gone: its end is relayed.
    pub(super) fn server_endpoint_gone(&mut self, now: Instant, d: &mut Discovery, guid: Guid) {
        let Some(s) = d.server.as_mut() else {
            return;
        };
        let Some(r) = s.relayed.remove(&guid) else {
            return;
        };
        if Self::count_topic(s, guid.prefix, &r.topic, false) {
            self.scope_client(d, guid.prefix);
        }
        let kind = ChangeKind::NotAliveDisposedUnregistered;
        let payload = Payload::from(super::sedp::endpoint_key_payload(&guid));
        self.relay(now, d, r.writer, &guid, kind, payload);
    }

    /// Counts one endpoint of `client` on `topic` in (`add`) or out; returns whether the
    /// client's set of topics changed.
    fn count_topic(s: &mut Server, client: GuidPrefix, topic: &str, add: bool) -> bool {
        let topics = s.topics.entry(client).or_default();
        if add {
            let n = topics.entry(topic.to_owned()).or_insert(0);
            *n += 1;
            return *n == 1;
        }
        match topics.get_mut(topic) {
            Some(n) if *n > 1 => {
                *n -= 1;
                false
            }
            Some(_) => {
                topics.remove(topic);
                true
            }
            None => false,
        }
    }

    /// Gives `client`'s SEDP readers the filter of its topics: what the server relays of
    /// other topics, or of its own endpoints, does not reach it.
    fn scope_client(&mut self, d: &Discovery, client: GuidPrefix) {
        let topics: HashSet<String> = d
            .server
            .as_ref()
            .and_then(|s| s.topics.get(&client))
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        let topics = Arc::new(topics);
        // Its own endpoints do not come back to it.
        let filter: crate::filter::SampleFilter = Arc::new(move |payload: &Payload| {
            let payload = payload.as_bytes();
            super::data::endpoint_guid_from_key(payload).is_some_and(|g| g.prefix != client)
                && topic_name_of(payload).is_some_and(|t| topics.contains(&t))
        });
        for (writer, reader) in sedp_pairs(client) {
            self.set_reader_sample_filter(writer, &reader, Some(filter.clone()));
        }
    }

    /// Writes one relayed change (keyed by `key`, an entity's GUID) to `writer`.
    fn relay(
        &mut self,
        now: Instant,
        d: &Discovery,
        writer: EntityId,
        key: &Guid,
        kind: ChangeKind,
        payload: Payload,
    ) {
        let req = WriteRequest {
            kind,
            instance: guid_key(key),
            source_timestamp: Participant::discovery_time(d, now),
            payload,
        };
        if let Err(e) = self.write(now, writer, req) {
            tracing::debug!(%key, error = %e, "discovery server: relay not written");
        }
    }
}
