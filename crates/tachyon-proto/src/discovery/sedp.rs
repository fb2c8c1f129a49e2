//! SEDP (RTPS 2.5 8.5.4): announcing local writers and readers on the builtin publications
//! and subscriptions writers, learning remote ones from the builtin readers, and matching
//! them — topic, type, partitions and request-offered QoS ([`crate::qos::compat`]).

use std::collections::VecDeque;
use tachyon_cdr::KeyHash;

use tachyon_wire::{EntityId, Guid, GuidPrefix, VendorId};

use super::data::{PublicationData, SubscriptionData};
use super::{guid_key, key_guid, usable, usable_pair, usable_pair_alternates, Discovery};
use crate::endpoint::{RemoteReader, RemoteWriter};
use crate::event::Event;
use crate::history::{ChangeKind, Durability, InstanceState, Payload, Query, Sample};
use crate::participant::Error;
use crate::qos::compat::{self, MatchOutcome};
use crate::qos::{DataRepresentation, DurabilityKind};
use crate::time::Instant;
use crate::writer::WriteRequest;
use crate::Participant;

/// Key hash of a DCPSPublication payload without inline key hash: its endpoint GUID.
pub(super) fn publication_key(payload: &[u8], _is_key: bool) -> Option<KeyHash> {
    super::data::endpoint_guid_from_key(payload).map(|g| guid_key(&g))
}

/// Key hash of a DCPSSubscription payload without inline key hash.
pub(super) fn subscription_key(payload: &[u8], _is_key: bool) -> Option<KeyHash> {
    super::data::endpoint_guid_from_key(payload).map(|g| guid_key(&g))
}

/// Most endpoints kept waiting for their participant, and for how long.
const ORPHAN_LIMIT: usize = 1024;
const ORPHAN_TTL: crate::time::Duration = crate::time::Duration::from_secs(30);

/// An announced endpoint, decoded.
#[derive(Debug)]
pub(super) enum Announced {
    Publication(Box<PublicationData>),
    Subscription(Box<SubscriptionData>),
}

impl Announced {
    fn guid(&self) -> Guid {
        match self {
            Announced::Publication(p) => p.guid,
            Announced::Subscription(s) => s.guid,
        }
    }
}

/// An endpoint announced before its participant: a discovery server's relay of it can
/// overtake the relay of the participant's announcement, and on a lossy link SEDP can
/// overtake SPDP. Dropping it would lose it for good (the reliable reader acknowledged it),
/// so it waits for the participant (bounded in number and time).
#[derive(Debug)]
pub(super) struct Orphan {
    expires: Instant,
    endpoint: Announced,
    payload: Payload,
}

impl Orphan {
    fn guid(&self) -> Guid {
        self.endpoint.guid()
    }
}

/// Whether `writer` is one of the SEDP writers.
pub(super) fn is_sedp(writer: EntityId) -> bool {
    writer == EntityId::SEDP_PUBLICATIONS_WRITER || writer == EntityId::SEDP_SUBSCRIPTIONS_WRITER
}

impl Participant {
    /// Announces local writer `writer` through SEDP and matches it with every known reader of
    /// its topic. `publication` describes it (topic, type, QoS, partitions); its GUID and
    /// participant GUID are filled in here. Calling it again re-announces changed QoS.
    pub fn announce_writer(
        &mut self,
        now: Instant,
        writer: EntityId,
        mut publication: PublicationData,
    ) -> Result<(), Error> {
        if self.writer_history(writer).is_none() && !self.in_lane(writer) {
            return Err(Error::UnknownWriter(writer));
        }
        let Some(mut d) = self.discovery.take() else {
            return Err(Error::NoDiscovery);
        };
        publication.guid = self.guid(writer);
        publication.participant_guid = Some(self.guid(EntityId::PARTICIPANT));
        let r = self.write_sedp(
            now,
            &d,
            EntityId::SEDP_PUBLICATIONS_WRITER,
            ChangeKind::Alive,
            &publication.guid,
            publication.to_payload(),
        );
        // Rematch from scratch: QoS may have changed. Only readers of its topic can be
        // related (of the topic it announced before, when it is announced again).
        let old_topic = d
            .local_publications
            .get(&writer)
            .map(|o| o.topic_name.clone());
        let related = |s: &&SubscriptionData| {
            s.topic_name == publication.topic_name || old_topic.as_deref() == Some(&s.topic_name)
        };
        let readers: Vec<SubscriptionData> = d
            .subscriptions
            .values()
            .map(|s| &**s)
            .chain(d.local_subscriptions.values())
            .filter(related)
            .cloned()
            .collect();
        for s in &readers {
            self.match_pair(now, &mut d, &publication, s);
        }
        let topic = publication.topic_name.clone();
        d.local_publications.insert(writer, publication);
        self.check_remote_topic_types(now, &mut d, &topic);
        self.discovery = Some(d);
        r
    }

    /// Announces local reader `reader` through SEDP and matches it with every known writer.
    pub fn announce_reader(
        &mut self,
        now: Instant,
        reader: EntityId,
        mut subscription: SubscriptionData,
    ) -> Result<(), Error> {
        if self.reader_history(reader).is_none() && !self.in_lane(reader) {
            return Err(Error::UnknownReader(reader));
        }
        let Some(mut d) = self.discovery.take() else {
            return Err(Error::NoDiscovery);
        };
        subscription.guid = self.guid(reader);
        subscription.participant_guid = Some(self.guid(EntityId::PARTICIPANT));
        let r = self.write_sedp(
            now,
            &d,
            EntityId::SEDP_SUBSCRIPTIONS_WRITER,
            ChangeKind::Alive,
            &subscription.guid,
            subscription.to_payload(),
        );
        let old_topic = d
            .local_subscriptions
            .get(&reader)
            .map(|o| o.topic_name.clone());
        let related = |p: &&PublicationData| {
            p.topic_name == subscription.topic_name || old_topic.as_deref() == Some(&p.topic_name)
        };
        let writers: Vec<PublicationData> = d
            .publications
            .values()
            .map(|p| &**p)
            .chain(d.local_publications.values())
            .filter(related)
            .cloned()
            .collect();
        for p in &writers {
            self.match_pair(now, &mut d, p, &subscription);
        }
        let topic = subscription.topic_name.clone();
        d.local_subscriptions.insert(reader, subscription);
        self.check_remote_topic_types(now, &mut d, &topic);
        self.discovery = Some(d);
        r
    }

    /// Registers a local topic: a remote writer or reader on `name` with another type name
    /// raises [`Event::InconsistentTopic`] for it, those discovered already at once. Each
    /// call is undone by one [`remove_local_topic`](Self::remove_local_topic).
    pub fn add_local_topic(&mut self, name: &str, type_name: &str) {
        let Some(d) = self.discovery.as_mut() else {
            return;
        };
        let n = d
            .local_topics
            .entry((name.to_owned(), type_name.to_owned()))
            .or_insert(0);
        *n += 1;
        if *n > 1 {
            return;
        }
        let remote: Vec<Guid> = d
            .publications
            .values()
            // Endpoints announcing TypeInformation are judged by type, once a local endpoint
            // of the topic announces its own (`check_topic_types`).
            .filter(|p| {
                p.topic_name == name
                    && p.type_info.is_none()
                    && !compat::type_names_match(&p.type_name, type_name)
            })
            .map(|p| p.guid)
            .chain(
                d.subscriptions
                    .values()
                    .filter(|s| {
                        s.topic_name == name
                            && s.type_info.is_none()
                            && !compat::type_names_match(&s.type_name, type_name)
                    })
                    .map(|s| s.guid),
            )
            .collect();
        for guid in remote {
            d.events.push_back(Event::InconsistentTopic {
                topic: name.to_owned(),
                type_name: type_name.to_owned(),
                remote: guid,
            });
        }
    }

    /// Undoes one [`add_local_topic`](Self::add_local_topic).
    pub fn remove_local_topic(&mut self, name: &str, type_name: &str) {
        let Some(d) = self.discovery.as_mut() else {
            return;
        };
        let key = (name.to_owned(), type_name.to_owned());
        if let Some(n) = d.local_topics.get_mut(&key) {
            *n -= 1;
            if *n == 0 {
                d.local_topics.remove(&key);
            }
        }
    }

    /// Withdraws a local writer's announcement (before it is deleted); local readers matched
    /// with it lose it.
    pub(crate) fn retract_writer(&mut self, now: Instant, writer: EntityId) {
        let Some(mut d) = self.discovery.take() else {
            return;
        };
        if d.local_publications.remove(&writer).is_some() {
            let guid = self.guid(writer);
            self.dispose_sedp(now, &d, EntityId::SEDP_PUBLICATIONS_WRITER, &guid);
            for &r in d.local_subscriptions.keys() {
                let _ = self.unmatch_writer(now, r, &guid);
            }
        }
        self.discovery = Some(d);
    }

    /// Withdraws a local reader's announcement; local writers matched with it lose it.
    pub(crate) fn retract_reader(&mut self, now: Instant, reader: EntityId) {
        let Some(mut d) = self.discovery.take() else {
            return;
        };
        if d.local_subscriptions.remove(&reader).is_some() {
            let guid = self.guid(reader);
            self.dispose_sedp(now, &d, EntityId::SEDP_SUBSCRIPTIONS_WRITER, &guid);
            for &w in d.local_publications.keys() {
                let _ = self.unmatch_reader(w, &guid);
            }
        }
        self.discovery = Some(d);
    }

    /// Writes one DCPSPublication/DCPSSubscription change (keyed by the endpoint's GUID).
    fn write_sedp(
        &mut self,
        now: Instant,
        d: &Discovery,
        builtin: EntityId,
        kind: ChangeKind,
        guid: &Guid,
        payload: Vec<u8>,
    ) -> Result<(), Error> {
        let req = WriteRequest {
            kind,
            instance: guid_key(guid),
            source_timestamp: Participant::discovery_time(d, now),
            payload: Payload::from(payload),
        };
        self.write(now, builtin, req).map(|_| ())
    }

    /// The SEDP change that withdraws an endpoint: dispose + unregister of its key, carrying
    /// the serialized key as Cyclone DDS and Fast DDS accept it.
    fn dispose_sedp(&mut self, now: Instant, d: &Discovery, builtin: EntityId, guid: &Guid) {
        let kind = ChangeKind::NotAliveDisposedUnregistered;
        let _ = self.write_sedp(now, d, builtin, kind, guid, endpoint_key_payload(guid));
    }

    /// Takes what the SEDP readers received and acts on it.
    pub(super) fn drain_sedp(&mut self, now: Instant, d: &mut Discovery) {
        let mut samples: Vec<Sample> = Vec::new();
        let _ = self.take(
            now,
            EntityId::SEDP_PUBLICATIONS_READER,
            &Query::ANY,
            &mut samples,
        );
        for s in samples.drain(..) {
            let guid = key_guid(&s.info.instance_handle);
            if s.info.instance_state != InstanceState::Alive || !s.info.valid_data {
                if s.info.instance_state != InstanceState::Alive {
                    d.orphans.retain(|o| o.guid() != guid);
                    self.remove_publication(now, d, guid);
                }
                continue;
            }
            let bytes = s.data.as_ref().map_or(&[][..], Payload::as_bytes);
            match PublicationData::from_payload(bytes) {
                Ok(p) => {
                    let payload = s.data.clone().unwrap_or_default();
                    self.on_endpoint(now, d, Announced::Publication(Box::new(p)), payload);
                }
                Err(e) => {
                    d.stats.malformed += 1;
                    tracing::debug!(writer = %guid.prefix, error = %e, "DCPSPublication rejected");
                }
            }
        }
        let _ = self.take(
            now,
            EntityId::SEDP_SUBSCRIPTIONS_READER,
            &Query::ANY,
            &mut samples,
        );
        for s in samples.drain(..) {
            let guid = key_guid(&s.info.instance_handle);
            if s.info.instance_state != InstanceState::Alive || !s.info.valid_data {
                if s.info.instance_state != InstanceState::Alive {
                    d.orphans.retain(|o| o.guid() != guid);
                    self.remove_subscription(now, d, guid);
                }
                continue;
            }
            let bytes = s.data.as_ref().map_or(&[][..], Payload::as_bytes);
            match SubscriptionData::from_payload(bytes) {
                Ok(sub) => {
                    let payload = s.data.clone().unwrap_or_default();
                    self.on_endpoint(now, d, Announced::Subscription(Box::new(sub)), payload);
                }
                Err(e) => {
                    d.stats.malformed += 1;
                    tracing::debug!(reader = %guid.prefix, error = %e, "DCPSSubscription rejected");
                }
            }
        }
    }

    /// An endpoint announced (`payload`: its announcement as received). One of a participant
    /// not known yet is kept a while ([`Orphan`]) and adopted when the participant appears.
    fn on_endpoint(&mut self, now: Instant, d: &mut Discovery, e: Announced, payload: Payload) {
        let guid = e.guid();
        if !d.participants.contains_key(&guid.prefix) {
            d.stats.orphan_endpoints += 1;
            tracing::debug!(endpoint = %guid, "endpoint of a participant not known yet: kept");
            d.orphans.retain(|o| o.guid() != guid);
            while d.orphans.front().is_some_and(|o| o.expires <= now)
                || d.orphans.len() >= ORPHAN_LIMIT
            {
                d.orphans.pop_front();
            }
            let expires = now.checked_add(ORPHAN_TTL).unwrap_or(now);
            d.orphans.push_back(Orphan {
                expires,
                endpoint: e,
                payload,
            });
            return;
        }
        let reader = match e {
            Announced::Publication(p) => {
                self.add_publication(now, d, *p);
                d.publications
                    .contains_key(&guid)
                    .then_some(EntityId::SEDP_PUBLICATIONS_READER)
            }
            Announced::Subscription(s) => {
                self.add_subscription(now, d, *s);
                d.subscriptions
                    .contains_key(&guid)
                    .then_some(EntityId::SEDP_SUBSCRIPTIONS_READER)
            }
        };
        if let (Some(reader), true) = (reader, d.server.is_some()) {
            self.server_endpoint(now, d, reader, guid, payload);
        }
    }

    /// A participant appeared: the endpoints it announced before are taken now.
    pub(super) fn adopt_orphans(&mut self, now: Instant, d: &mut Discovery, prefix: GuidPrefix) {
        if !d.orphans.iter().any(|o| o.guid().prefix == prefix) {
            return;
        }
        let (mine, rest): (VecDeque<Orphan>, VecDeque<Orphan>) = std::mem::take(&mut d.orphans)
            .into_iter()
            .partition(|o| o.guid().prefix == prefix && o.expires > now);
        d.orphans = rest;
        for o in mine {
            self.on_endpoint(now, d, o.endpoint, o.payload);
        }
    }

    fn add_publication(&mut self, now: Instant, d: &mut Discovery, mut p: PublicationData) {
        let Some(owner) = d.participants.get(&p.guid.prefix) else {
            d.stats.orphan_endpoints += 1;
            tracing::debug!(endpoint = %p.guid, "publication of an unknown participant ignored");
            return;
        };
        if !d.publications.contains_key(&p.guid)
            && d.publications.len() + d.subscriptions.len() >= d.config.max_remote_endpoints
        {
            d.stats.endpoints_refused += 1;
            tracing::debug!(endpoint = %p.guid, "publication refused: max_remote_endpoints reached");
            return;
        }
        let alternates = fill_locators(
            &d.config,
            &mut p.unicast_locators,
            &mut p.multicast_locators,
            &owner.data.default_unicast,
            &owner.data.default_multicast,
        );
        d.note_alternates(p.guid.prefix, &p.unicast_locators, &alternates);
        p.qos = d.writer_qos.intern(p.qos);
        p.type_info = p.type_info.map(|t| d.type_infos.intern(t));
        let old = d.publications.insert(p.guid, Box::new(p.clone()));
        match &old {
            None => d
                .events
                .push_back(Event::PublicationDiscovered { remote: p.guid }),
            Some(old) if **old != p => d
                .events
                .push_back(Event::PublicationUpdated { remote: p.guid }),
            Some(_) => {}
        }
        note_type_information(
            d,
            p.guid,
            p.type_information.as_deref(),
            p.type_info.is_some(),
        );
        // With TypeInformation, types are compared by assignability, not by name.
        if !self.check_topic_types(now, d, p.guid, &p.topic_name, p.type_info.as_deref())
            && old.as_ref().map_or(true, |o| {
                (&o.topic_name, &o.type_name) != (&p.topic_name, &p.type_name)
            })
        {
            inconsistent_topics(d, &p.topic_name, &p.type_name, p.guid);
        }
        // Only the local readers of its topic (or of the topic it announced before) can be
        // related: matching each of a participant's endpoints against every remote one
        // would cost N·M² per participant in a system of N participants of M endpoints.
        let old_topic = old.as_ref().map(|o| o.topic_name.as_str());
        let locals: Vec<SubscriptionData> = d
            .local_subscriptions
            .values()
            .filter(|s| s.topic_name == p.topic_name || old_topic == Some(s.topic_name.as_str()))
            .cloned()
            .collect();
        for s in &locals {
            self.match_pair(now, d, &p, s);
        }
    }

    fn add_subscription(&mut self, now: Instant, d: &mut Discovery, mut s: SubscriptionData) {
        let Some(owner) = d.participants.get(&s.guid.prefix) else {
            d.stats.orphan_endpoints += 1;
            tracing::debug!(endpoint = %s.guid, "subscription of an unknown participant ignored");
            return;
        };
        if !d.subscriptions.contains_key(&s.guid)
            && d.publications.len() + d.subscriptions.len() >= d.config.max_remote_endpoints
        {
            d.stats.endpoints_refused += 1;
            tracing::debug!(endpoint = %s.guid, "subscription refused: max_remote_endpoints reached");
            return;
        }
        let alternates = fill_locators(
            &d.config,
            &mut s.unicast_locators,
            &mut s.multicast_locators,
            &owner.data.default_unicast,
            &owner.data.default_multicast,
        );
        d.note_alternates(s.guid.prefix, &s.unicast_locators, &alternates);
        s.qos = d.reader_qos.intern(s.qos);
        s.type_info = s.type_info.map(|t| d.type_infos.intern(t));
        let old = d.subscriptions.insert(s.guid, Box::new(s.clone()));
        match &old {
            None => d
                .events
                .push_back(Event::SubscriptionDiscovered { remote: s.guid }),
            Some(old) if **old != s => d
                .events
                .push_back(Event::SubscriptionUpdated { remote: s.guid }),
            Some(_) => {}
        }
        note_type_information(
            d,
            s.guid,
            s.type_information.as_deref(),
            s.type_info.is_some(),
        );
        if !self.check_topic_types(now, d, s.guid, &s.topic_name, s.type_info.as_deref())
            && old.as_ref().map_or(true, |o| {
                (&o.topic_name, &o.type_name) != (&s.topic_name, &s.type_name)
            })
        {
            inconsistent_topics(d, &s.topic_name, &s.type_name, s.guid);
        }
        // Only the local writers of its topic (or of the topic it announced before).
        let old_topic = old.as_ref().map(|o| o.topic_name.as_str());
        let locals: Vec<PublicationData> = d
            .local_publications
            .values()
            .filter(|p| p.topic_name == s.topic_name || old_topic == Some(p.topic_name.as_str()))
            .cloned()
            .collect();
        for p in &locals {
            self.match_pair(now, d, p, &s);
        }
    }

    pub(super) fn remove_publication(&mut self, now: Instant, d: &mut Discovery, guid: Guid) {
        if d.publications.remove(&guid).is_none() {
            return;
        }
        Participant::forget_remote_types(d, guid);
        tracing::debug!(writer = %guid, "publication removed");
        self.server_endpoint_gone(now, d, guid);
        let readers: Vec<EntityId> = d.local_subscriptions.keys().copied().collect();
        for r in readers {
            let _ = self.unmatch_writer(now, r, &guid);
        }
        d.events.push_back(Event::PublicationLost { remote: guid });
    }

    pub(super) fn remove_subscription(&mut self, now: Instant, d: &mut Discovery, guid: Guid) {
        if d.subscriptions.remove(&guid).is_none() {
            return;
        }
        Participant::forget_remote_types(d, guid);
        self.server_endpoint_gone(now, d, guid);
        let writers: Vec<EntityId> = d.local_publications.keys().copied().collect();
        for w in writers {
            let _ = self.unmatch_reader(w, &guid);
        }
        d.events.push_back(Event::SubscriptionLost { remote: guid });
    }

    /// Matches (or unmatches, or reports incompatible) one writer with one reader, either of
    /// which is local.
    pub(super) fn match_pair(
        &mut self,
        now: Instant,
        d: &mut Discovery,
        p: &PublicationData,
        s: &SubscriptionData,
    ) {
        let local_writer = (p.guid.prefix == self.prefix).then_some(p.guid.entity_id);
        let local_reader = (s.guid.prefix == self.prefix).then_some(s.guid.entity_id);
        let same_participant = local_writer.is_some() && local_reader.is_some();
        let unannounced = unannounced_representation(d, p, s, self.prefix);
        let outcome = if same_participant && (p.qos.ignore_local || s.qos.ignore_local) {
            MatchOutcome::NotRelated
        } else {
            let types = self.type_match(now, d, p, s);
            compat::check_typed(p, s, unannounced, types)
        };
        tracing::debug!(writer = ?p.guid, reader = ?s.guid, topic = %p.topic_name, ?outcome, ?unannounced, "SEDP match");
        match outcome {
            MatchOutcome::Match(rep) => {
                if let Some(w) = local_writer {
                    let (unicast, multicast) = if s.guid.prefix == self.prefix {
                        // A reader of this participant with locators of its own (a critical
                        // one's lane) is reached there, else at the participant's.
                        let c = &d.config;
                        let (u, m) = match s.unicast_locators.is_empty() {
                            true => (&c.default_unicast, &c.default_multicast),
                            false => (&s.unicast_locators, &s.multicast_locators),
                        };
                        usable_pair(&c.reach, u, m, c.use_multicast)
                    } else {
                        (s.unicast_locators.clone(), s.multicast_locators.clone())
                    };
                    let _ = self.match_reader(
                        now,
                        w,
                        RemoteReader {
                            guid: s.guid,
                            unicast_locators: unicast,
                            multicast_locators: multicast,
                            reliability: s.qos.reliability.kind,
                            durability: durability(s.qos.durability),
                        },
                    );
                    self.give_reader_filter(w, &s.guid, s.content_filter.as_ref());
                    // The reader gets its samples converted when it reads another
                    // representation than the writer writes (an `Unannounced` reader).
                    let writes = DataRepresentation::written(&p.qos.representation);
                    self.set_reader_representation(now, w, &s.guid, (rep != writes).then_some(rep));
                }
                if let Some(r) = local_reader {
                    let unicast = if p.guid.prefix == self.prefix {
                        let own = match p.unicast_locators.is_empty() {
                            true => &d.config.default_unicast,
                            false => &p.unicast_locators,
                        };
                        usable(&d.config.reach, own, false)
                    } else {
                        p.unicast_locators.clone()
                    };
                    let _ = self.match_writer(
                        now,
                        r,
                        RemoteWriter {
                            guid: p.guid,
                            unicast_locators: unicast,
                            reliability: p.qos.reliability.kind,
                            durability: durability(p.qos.durability),
                            liveliness: p.qos.liveliness,
                            ownership_strength: p.qos.ownership_strength,
                            lifespan: p.qos.lifespan,
                            group: p.group_entity_id,
                            vendor: d
                                .participants
                                .get(&p.guid.prefix)
                                .map_or(VendorId::UNKNOWN, |rp| rp.data.vendor_id),
                        },
                    );
                }
            }
            MatchOutcome::NotRelated => self.unmatch_pair(now, p, s, local_writer, local_reader),
            MatchOutcome::Incompatible(policies) => {
                self.unmatch_pair(now, p, s, local_writer, local_reader);
                if let Some(w) = local_writer {
                    d.events.push_back(Event::OfferedIncompatibleQos {
                        writer: w,
                        remote: s.guid,
                        policies: policies.clone(),
                    });
                }
                if let Some(r) = local_reader {
                    d.events.push_back(Event::RequestedIncompatibleQos {
                        reader: r,
                        remote: p.guid,
                        policies,
                    });
                }
            }
        }
    }

    fn unmatch_pair(
        &mut self,
        now: Instant,
        p: &PublicationData,
        s: &SubscriptionData,
        local_writer: Option<EntityId>,
        local_reader: Option<EntityId>,
    ) {
        if let Some(w) = local_writer {
            let _ = self.unmatch_reader(w, &s.guid);
        }
        if let Some(r) = local_reader {
            let _ = self.unmatch_writer(now, r, &p.guid);
        }
    }
}

/// Counts and logs an announced TypeInformation that does not decode (the endpoint is then
/// matched by type name).
fn note_type_information(d: &mut Discovery, guid: Guid, raw: Option<&[u8]>, decoded: bool) {
    if let (Some(raw), false) = (raw, decoded) {
        d.types.stats.undecodable_type_information += 1;
        let e = tachyon_xtypes::TypeInformation::from_bytes(raw, tachyon_cdr::Endianness::Little)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        tracing::debug!(endpoint = %guid, error = %e,
            "TypeInformation does not decode (Fast DDS 2.x sends an XCDR1 form): matched by type name");
    }
}

/// Raises INCONSISTENT_TOPIC for every local topic named `topic` whose type is not
/// `type_name`, the type of remote endpoint `remote`.
fn inconsistent_topics(d: &mut Discovery, topic: &str, type_name: &str, remote: Guid) {
    let local: Vec<String> = d
        .local_topics
        .keys()
        .filter(|(n, t)| n == topic && !compat::type_names_match(t, type_name))
        .map(|(_, t)| t.clone())
        .collect();
    for t in local {
        d.events.push_back(Event::InconsistentTopic {
            topic: topic.to_owned(),
            type_name: t,
            remote,
        });
    }
}

/// An endpoint without locators of its own uses its participant's defaults. Returns the
/// unicast locators of the next transport in reach, if the announcement named any
/// ([`usable_pair_alternates`]).
fn fill_locators(
    config: &super::DiscoveryConfig,
    unicast: &mut Vec<tachyon_wire::Locator>,
    multicast: &mut Vec<tachyon_wire::Locator>,
    default_unicast: &[tachyon_wire::Locator],
    default_multicast: &[tachyon_wire::Locator],
) -> Vec<tachyon_wire::Locator> {
    if unicast.is_empty() && multicast.is_empty() {
        *unicast = default_unicast.to_vec();
        *multicast = default_multicast.to_vec();
    }
    let alternates;
    (*unicast, *multicast, alternates) =
        usable_pair_alternates(&config.reach, unicast, multicast, config.use_multicast);
    alternates
}

fn durability(k: DurabilityKind) -> Durability {
    if k >= DurabilityKind::TransientLocal {
        Durability::TransientLocal
    } else {
        Durability::Volatile
    }
}

/// The serialized key of an endpoint: a parameter list holding only PID_ENDPOINT_GUID, as
/// Cyclone DDS and Fast DDS send with a dispose.
pub(super) fn endpoint_key_payload(guid: &Guid) -> Vec<u8> {
    use tachyon_wire::parameter::{payload::encapsulation, pid};
    use tachyon_wire::{
        Encapsulation, Parameter, ParameterList, ParameterListPayload, ParameterValue,
    };
    let payload = ParameterListPayload {
        encapsulation: Encapsulation {
            kind: encapsulation::PL_CDR_LE,
            options: [0, 0],
        },
        list: ParameterList {
            parameters: vec![Parameter::new(
                pid::ENDPOINT_GUID,
                ParameterValue::Guid(*guid),
            )],
            sentinel_length: 0,
        },
        trailing: Vec::new(),
    };
    let mut out = vec![0; payload.buffer_len()];
    match payload.emit(&mut out) {
        Ok(n) => out.truncate(n),
        Err(_) => out.clear(),
    }
    out
}

/// Which remote endpoint of the pair, if any, is an XCDR1-only endpoint that announces no
/// DATA_REPRESENTATION ([`compat::Unannounced`]): one of an eProsima participant (Fast DDS up
/// to 2.x never sends the parameter) whose discovery data has none.
fn unannounced_representation(
    d: &Discovery,
    p: &PublicationData,
    s: &SubscriptionData,
    local: GuidPrefix,
) -> compat::Unannounced {
    let silent_eprosima = |prefix: GuidPrefix, announced: bool| {
        prefix != local
            && !announced
            && d.participants
                .get(&prefix)
                .is_some_and(|rp| crate::quirks::omits_data_representation(rp.data.vendor_id))
    };
    if silent_eprosima(p.guid.prefix, p.representation_announced) {
        compat::Unannounced::Writer
    } else if silent_eprosima(s.guid.prefix, s.representation_announced) {
        compat::Unannounced::Reader
    } else {
        compat::Unannounced::Neither
    }
}
