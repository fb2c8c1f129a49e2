//! Type discovery (XTypes 1.3, 7.6.3): the type check of matching, from the TypeInformation
//! endpoints announce, and the TypeLookup service that fetches the TypeObjects of types this
//! participant does not know and serves its own.
//!
//! The rules, as Cyclone DDS 11 applies them (so both match the same pairs):
//! - when either side announces no usable TypeInformation, type names are compared (or, if
//!   the reader asks `force_type_validation`, nothing matches);
//! - equal minimal identifiers are the same type; under DISALLOW_TYPE_COERCION nothing else
//!   matches;
//! - otherwise the reader's type must be assignable from the writer's
//!   ([`tachyon_xtypes::is_assignable`]), decided once both are known: a type missing from
//!   the library is asked of its owner (`getTypes`), the pair waits, and matching runs again
//!   when the reply arrives (requests are repeated a few times: neither Cyclone DDS nor Fast
//!   DDS repeats them on its own). Type names do not matter then.
//!
//! The service answers `getTypes` (Cyclone DDS, Fast DDS 3) and `getTypeDependencies` (Fast
//! DDS 3 asks it first) from the library. Everything received is checked: a reply's objects
//! must hash to their identifiers and are kept only when asked for.

use std::sync::Arc;

use tachyon_cdr::KeyHash;
use tachyon_wire::{EntityId, Guid, GuidPrefix};
use tachyon_xtypes::lookup::{instance_name, remote_ex};
use tachyon_xtypes::{
    is_assignable, AssignOptions, LookupCall, LookupReply, LookupRequest, LookupReturn,
    SampleIdentity, TypeIdWithSize, TypeIdentifier, TypeInformation, TypeLibrary,
    TypeRepresentations,
};

use super::data::{builtin_endpoints as be, ParticipantData, PublicationData, SubscriptionData};
use super::Discovery;
use crate::event::Event;
use crate::history::{Payload, Query, Sample};
use crate::maps::HashMap;
use crate::qos::compat::TypeMatch;
use crate::qos::{TypeConsistency, TypeConsistencyKind};
use crate::time::{Duration, Instant};
use crate::writer::WriteRequest;
use crate::Participant;

/// How long a request waits for its reply before it is sent again.
const RETRY_AFTER: Duration = Duration::from_secs(1);
/// How many times a type is asked for before giving up.
const MAX_TRIES: u32 = 5;
/// Longest a reply waits for its requester's reply reader to be in sync with our reply
/// writer ([`TypeState::deferred`]).
const REPLY_HOLD: Duration = Duration::from_secs(1);
/// Most identifiers one `getTypeDependencies` reply lists (a continuation point gives the
/// rest, as Fast DDS pages them).
const DEPENDENCIES_PER_REPLY: usize = 128;

/// Counters of type discovery.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TypeStats {
    /// TypeLookup requests sent.
    pub requests_sent: u64,
    /// TypeLookup requests answered.
    pub requests_answered: u64,
    /// TypeObjects received and kept.
    pub objects_received: u64,
    /// TypeObjects received and refused (wrong hash, not asked for, library full).
    pub objects_refused: u64,
    /// TypeLookup messages that did not decode.
    pub malformed: u64,
    /// Announcements whose TypeInformation did not decode (matched by type name).
    pub undecodable_type_information: u64,
}

/// Where fetching a type stands ([`Participant::fetch_type`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeFetch {
    /// Known with everything it uses.
    Known,
    /// Asked for (TypeLookup `getTypes`); try again later.
    Asked,
    /// The owner runs no TypeLookup service (announces no request reader).
    NoService,
    /// The announcement names no complete type.
    NoType,
}

/// A type asked for.
#[derive(Debug, Clone, Copy)]
struct Asked {
    at: Instant,
    from: GuidPrefix,
    tries: u32,
}

/// The type library and the TypeLookup client's state.
#[derive(Debug, Default)]
pub(crate) struct TypeState {
    pub(crate) library: TypeLibrary,
    asked: HashMap<TypeIdentifier, Asked>,
    next_sequence: i64,
    /// Remote endpoints reported INCONSISTENT_TOPIC against a local topic's type, once each.
    inconsistent: crate::maps::HashSet<(Guid, String)>,
    /// Replies held until their requester's reply reader answered one of our reply writer's
    /// HEARTBEATs (oldest first; each sent at the latest at its deadline). A volatile reader
    /// that has not yet heard a HEARTBEAT takes everything up to the first one it hears as
    /// history, not for it: a reply sent before, and lost, would be skipped for good, and
    /// Cyclone DDS 0.10 never asks again (its writer then stays unmatched; seen over a lossy
    /// link).
    deferred: std::collections::VecDeque<Deferred>,
    pub(crate) stats: TypeStats,
    /// Local types peers of XTypes 1.2 cannot read (`older_types`).
    pub(super) unreadable: super::older_types::Unreadable,
}

/// A reply waiting for its requester's reader ([`TypeState::deferred`]).
#[derive(Debug)]
struct Deferred {
    reader: Guid,
    deadline: Instant,
    payload: Vec<u8>,
}

impl TypeState {
    /// The state of a new participant whose SEDP writers leave out `unreadable`'s types for
    /// older peers.
    pub(super) fn with_unreadable(unreadable: super::older_types::Unreadable) -> TypeState {
        TypeState {
            unreadable,
            ..TypeState::default()
        }
    }

    /// When a held reply must go out at the latest.
    pub(super) fn next_due(&self) -> Option<Instant> {
        self.deferred.front().map(|r| r.deadline)
    }
}

/// What of a TypeInformation type checking can use: a minimal identifier that is a hash.
fn usable(info: &Option<Arc<TypeInformation>>) -> Option<&TypeInformation> {
    info.as_deref()
        .filter(|i| i.minimal.id.id.hash().is_some() || i.complete.id.id.hash().is_some())
}

/// The reader's options, and the remote side's way of describing types (`quirks`).
fn options(t: &TypeConsistency, remote: Option<&ParticipantData>) -> AssignOptions {
    AssignOptions {
        ignore_sequence_bounds: t.ignore_sequence_bounds,
        ignore_string_bounds: t.ignore_string_bounds,
        ignore_member_names: t.ignore_member_names,
        prevent_type_widening: t.prevent_type_widening,
        xtypes_1_2_integers: remote.is_some_and(|r| {
            crate::quirks::knows_no_xtypes_1_3_integers(r.vendor_id, r.product_version)
        }),
    }
}

/// The identifier of one side to check with: the minimal one when it is known with all it
/// uses, else the complete one when that is (Fast DDS 3 answers with complete objects).
fn side<'a>(lib: &TypeLibrary, info: &'a TypeInformation) -> Option<&'a TypeIdentifier> {
    [&info.minimal.id.id, &info.complete.id.id]
        .into_iter()
        .find(|id| id.hash().is_some() && lib.is_resolved(id))
}

impl Participant {
    /// Adds a local type's TypeObjects to the library: what TypeLookup serves and the type
    /// check compares with.
    pub fn add_local_types(&mut self, reps: &TypeRepresentations) {
        if let Some(d) = self.discovery.as_mut() {
            d.types.library.add_local(reps);
            if reps.xtypes_1_3_integers {
                if let Ok(encoded) = reps.type_information().to_bytes() {
                    d.types.unreadable.add_type(encoded);
                }
            }
        }
    }

    /// The type library (local types and those learnt from peers).
    pub fn type_library(&self) -> Option<&TypeLibrary> {
        self.discovery.as_ref().map(|d| &d.types.library)
    }

    /// Type discovery counters.
    pub fn type_stats(&self) -> TypeStats {
        self.discovery
            .as_ref()
            .map(|d| d.types.stats)
            .unwrap_or_default()
    }

    /// Fetches the complete type `info` names from its owner, the participant `owner`,
    /// with everything it uses (for tools that show a peer's type: `tachyon spy typeof`).
    /// Call again until [`TypeFetch::Known`]; requests are repeated after a second.
    pub fn fetch_type(
        &mut self,
        now: Instant,
        owner: GuidPrefix,
        info: &TypeInformation,
    ) -> TypeFetch {
        let Some(mut d) = self.discovery.take() else {
            return TypeFetch::NoService;
        };
        let id = &info.complete.id.id;
        let r = if id.hash().is_none() {
            TypeFetch::NoType
        } else if d.types.library.is_resolved(id) {
            TypeFetch::Known
        } else if !d
            .participants
            .get(&owner)
            .is_some_and(|p| p.data.builtin_endpoints & be::TYPE_LOOKUP_REQUEST_READER != 0)
        {
            TypeFetch::NoService
        } else {
            let mut missing = d.types.library.missing(&info.complete);
            for m in d.types.library.unresolved(id) {
                if !missing.contains(&m) {
                    missing.push(m);
                }
            }
            self.ask_types(now, &mut d, owner, missing);
            TypeFetch::Asked
        };
        self.discovery = Some(d);
        r
    }

    /// The type check of a writer and a reader, one of them local; asks for the types it
    /// needs and does not have.
    pub(super) fn type_match(
        &mut self,
        now: Instant,
        d: &mut Discovery,
        p: &PublicationData,
        s: &SubscriptionData,
    ) -> TypeMatch {
        if p.topic_name != s.topic_name {
            return TypeMatch::ByName;
        }
        let tce = s.qos.type_consistency;
        let (Some(wi), Some(ri)) = (usable(&p.type_info), usable(&s.type_info)) else {
            if tce.force_type_validation {
                tracing::info!(writer = %p.guid, reader = %s.guid, topic = %p.topic_name,
                    "not matched: the reader forces type validation and one side announces no TypeInformation");
                return TypeMatch::Incompatible;
            }
            tracing::debug!(writer = %p.guid, reader = %s.guid, topic = %p.topic_name,
                "type check by type name (one side announces no TypeInformation)");
            return TypeMatch::ByName;
        };
        if wi.minimal.id.id == ri.minimal.id.id || wi.complete.id.id == ri.complete.id.id {
            tracing::debug!(writer = %p.guid, reader = %s.guid, topic = %p.topic_name,
                "type check: the same type (equal type identifiers)");
            return TypeMatch::Compatible;
        }
        if tce.kind == TypeConsistencyKind::DisallowTypeCoercion {
            tracing::info!(writer = %p.guid, reader = %s.guid, topic = %p.topic_name,
                "not matched: different types and the reader disallows type coercion");
            return TypeMatch::Incompatible;
        }
        let lib = &d.types.library;
        let remote = if p.guid.prefix != self.prefix {
            p.guid.prefix
        } else {
            s.guid.prefix
        };
        let (Some(w), Some(r)) = (side(lib, wi), side(lib, ri)) else {
            let remote_info = if remote == p.guid.prefix { wi } else { ri };
            let serves = d
                .participants
                .get(&remote)
                .is_some_and(|rp| rp.data.builtin_endpoints & be::TYPE_LOOKUP_REQUEST_READER != 0);
            if !serves {
                tracing::debug!(writer = %p.guid, reader = %s.guid, topic = %p.topic_name,
                    "type check by type name: the peer's type is unknown and it has no TypeLookup service");
                return TypeMatch::ByName;
            }
            let mut missing = lib.missing(&remote_info.minimal);
            for id in [&wi.minimal.id.id, &ri.minimal.id.id] {
                for m in lib.unresolved(id) {
                    if !missing.contains(&m) {
                        missing.push(m);
                    }
                }
            }
            tracing::debug!(writer = %p.guid, reader = %s.guid, topic = %p.topic_name,
                missing = missing.len(), "type check waits for TypeLookup");
            self.ask_types(now, d, remote, missing);
            return TypeMatch::Pending;
        };
        let peer = d.participants.get(&remote).map(|rp| &rp.data);
        match is_assignable(lib, r, w, &options(&tce, peer)) {
            Ok(()) => {
                tracing::debug!(writer = %p.guid, reader = %s.guid, topic = %p.topic_name,
                    "type check: the reader's type is assignable from the writer's");
                TypeMatch::Compatible
            }
            Err(e) => {
                tracing::info!(writer = %p.guid, reader = %s.guid, topic = %p.topic_name,
                    writer_type = %p.type_name, reader_type = %s.type_name,
                    "not matched: the reader's type is not assignable from the writer's: {e}");
                TypeMatch::Incompatible
            }
        }
    }

    /// Sends `getTypes` for `ids` (those not asked for within [`RETRY_AFTER`]) to `to`.
    fn ask_types(
        &mut self,
        now: Instant,
        d: &mut Discovery,
        to: GuidPrefix,
        ids: Vec<TypeIdentifier>,
    ) {
        let ids: Vec<TypeIdentifier> = ids
            .into_iter()
            .filter(|id| {
                d.types
                    .asked
                    .get(id)
                    .map_or(true, |a| now.saturating_duration_since(a.at) >= RETRY_AFTER)
            })
            .collect();
        if ids.is_empty() {
            return;
        }
        for id in &ids {
            let tries = d.types.asked.get(id).map_or(0, |a| a.tries) + 1;
            d.types.asked.insert(
                id.clone(),
                Asked {
                    at: now,
                    from: to,
                    tries,
                },
            );
        }
        d.types.next_sequence += 1;
        let request = LookupRequest {
            id: SampleIdentity {
                writer_guid: guid_bytes(&self.guid(EntityId::TYPE_LOOKUP_REQUEST_WRITER)),
                sequence: d.types.next_sequence,
            },
            instance_name: instance_name(&to.0),
            call: LookupCall::GetTypes(ids),
        };
        match request.to_payload() {
            Ok(payload) => {
                d.types.stats.requests_sent += 1;
                self.write_lookup(now, d, EntityId::TYPE_LOOKUP_REQUEST_WRITER, payload);
            }
            Err(e) => tracing::warn!(error = %e, "a TypeLookup request does not encode"),
        }
    }

    fn write_lookup(&mut self, now: Instant, d: &Discovery, writer: EntityId, payload: Vec<u8>) {
        let req = WriteRequest::data(
            KeyHash([0; 16]),
            Participant::discovery_time(d, now),
            Payload::from(payload),
        );
        if let Err(e) = self.write(now, writer, req) {
            tracing::debug!(error = ?e, "TypeLookup message not written");
        }
    }

    /// Asks again for types still unknown whose request got no reply; gives up after
    /// [`MAX_TRIES`].
    pub(super) fn retry_type_requests(&mut self, now: Instant, d: &mut Discovery) {
        self.send_deferred_replies(now, d);
        let mut again: HashMap<GuidPrefix, Vec<TypeIdentifier>> = HashMap::default();
        let mut gave_up = Vec::new();
        for (id, a) in &d.types.asked {
            if d.types.library.get(id).is_some()
                || now.saturating_duration_since(a.at) < RETRY_AFTER
            {
                continue;
            }
            if a.tries >= MAX_TRIES {
                gave_up.push((id.clone(), a.from));
            } else if d.participants.contains_key(&a.from) {
                again.entry(a.from).or_default().push(id.clone());
            }
        }
        for (id, from) in gave_up {
            tracing::warn!(participant = %from, type_id = %id,
                "no TypeLookup reply after {MAX_TRIES} requests: its endpoints of this type stay unmatched");
            d.types.asked.remove(&id);
        }
        for (to, ids) in again {
            self.ask_types(now, d, to, ids);
        }
        // What was received is forgotten once its request is answered.
        let lib = &d.types.library;
        d.types.asked.retain(|id, _| lib.get(id).is_none());
    }

    /// Handles what the TypeLookup readers received: answers requests, keeps the types of
    /// replies and matches again the pairs that waited for them.
    pub(super) fn drain_typelookup(&mut self, now: Instant, d: &mut Discovery) {
        self.send_deferred_replies(now, d);
        let mut samples: Vec<Sample> = Vec::new();
        let _ = self.take(
            now,
            EntityId::TYPE_LOOKUP_REQUEST_READER,
            &Query::ANY,
            &mut samples,
        );
        for s in samples.drain(..) {
            let Some(data) = s.data.as_ref() else {
                continue;
            };
            // The requester is the participant of the writer the request came from (Cyclone
            // DDS 0.10 writes the GUID in the request's identity in its own byte order).
            let requester = s.info.publication_handle.prefix;
            match LookupRequest::from_payload(data.as_bytes()) {
                Ok(req) => self.answer(now, d, req, requester),
                Err(e) => {
                    d.types.stats.malformed += 1;
                    tracing::debug!(error = %e, "TypeLookup request rejected");
                }
            }
        }
        let _ = self.take(
            now,
            EntityId::TYPE_LOOKUP_REPLY_READER,
            &Query::ANY,
            &mut samples,
        );
        let mut learnt = false;
        for s in samples.drain(..) {
            let Some(data) = s.data.as_ref() else {
                continue;
            };
            match LookupReply::from_payload(data.as_bytes()) {
                Ok(reply) => learnt |= self.take_reply(d, reply),
                Err(e) => {
                    d.types.stats.malformed += 1;
                    tracing::debug!(error = %e, "TypeLookup reply rejected");
                }
            }
        }
        if learnt {
            self.rematch_typed(now, d);
        }
    }

    /// Answers one request (a request naming another participant is answered only with
    /// what this one knows of it).
    fn answer(
        &mut self,
        now: Instant,
        d: &mut Discovery,
        req: LookupRequest,
        requester: GuidPrefix,
    ) {
        let for_us = req
            .instance_name
            .starts_with(&instance_name(&self.prefix.0)[..40]);
        let lib = &d.types.library;
        let (ret, known) = match &req.call {
            LookupCall::GetTypes(ids) => {
                let types: Vec<_> = lib
                    .lookup(ids)
                    .map(|(id, k)| (id.clone(), k.object.clone()))
                    .collect();
                let n = types.len();
                (
                    LookupReturn::Types {
                        types,
                        complete_to_minimal: Vec::new(),
                    },
                    n,
                )
            }
            LookupCall::GetDependencies { ids, continuation } => {
                let deps = dependencies(lib, ids);
                let start = continuation
                    .get(..4)
                    .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize);
                let end = (start + DEPENDENCIES_PER_REPLY).min(deps.len());
                let page = deps.get(start..end).unwrap_or(&[]).to_vec();
                let continuation = if end < deps.len() {
                    (end as u32).to_be_bytes().to_vec()
                } else {
                    Vec::new()
                };
                let known = usize::from(ids.iter().any(|id| lib.get(id).is_some()));
                (
                    LookupReturn::Dependencies {
                        ids: page,
                        continuation,
                    },
                    known,
                )
            }
            LookupCall::Unknown(op) => (LookupReturn::Unknown(*op), 0),
        };
        if !for_us && known == 0 {
            return;
        }
        let remote_ex = match ret {
            LookupReturn::Unknown(_) => remote_ex::UNKNOWN_OPERATION,
            _ => remote_ex::OK,
        };
        let reply = LookupReply {
            related: req.id,
            remote_ex,
            ret,
        };
        match reply.to_payload() {
            Ok(payload) => {
                d.types.stats.requests_answered += 1;
                let reader = Guid::new(requester, EntityId::TYPE_LOOKUP_REPLY_READER);
                let writer = EntityId::TYPE_LOOKUP_REPLY_WRITER;
                if self.reader_synced(writer, &reader) == Some(false) {
                    let deadline = now.checked_add(REPLY_HOLD).unwrap_or(now);
                    d.types.deferred.push_back(Deferred {
                        reader,
                        deadline,
                        payload,
                    });
                } else {
                    self.write_lookup(now, d, writer, payload);
                }
            }
            Err(e) => tracing::warn!(error = %e, "a TypeLookup reply does not encode"),
        }
    }

    /// Sends the held replies whose reader is in sync now, or whose time is up.
    pub(super) fn send_deferred_replies(&mut self, now: Instant, d: &mut Discovery) {
        if d.types.deferred.is_empty() {
            return;
        }
        let writer = EntityId::TYPE_LOOKUP_REPLY_WRITER;
        let held = std::mem::take(&mut d.types.deferred);
        for r in held {
            if r.deadline <= now || self.reader_synced(writer, &r.reader) != Some(false) {
                self.write_lookup(now, d, writer, r.payload);
            } else {
                d.types.deferred.push_back(r);
            }
        }
    }

    /// Keeps the TypeObjects of a reply that were asked for; returns whether any is new.
    fn take_reply(&mut self, d: &mut Discovery, reply: LookupReply) -> bool {
        let mut learnt = false;
        match reply.ret {
            LookupReturn::Types {
                types,
                complete_to_minimal,
            } => {
                for (id, object) in types {
                    // Asked for, or the complete form of a minimal type asked for (Fast DDS
                    // 3 answers so).
                    let wanted = d.types.asked.contains_key(&id)
                        || complete_to_minimal
                            .iter()
                            .any(|(c, m)| c == &id && d.types.asked.contains_key(m));
                    if !wanted {
                        d.types.stats.objects_refused += 1;
                        continue;
                    }
                    match d.types.library.add_received(&id, object) {
                        Ok(new) => {
                            d.types.stats.objects_received += 1;
                            learnt |= new;
                        }
                        Err(e) => {
                            d.types.stats.objects_refused += 1;
                            tracing::warn!(error = %e, "TypeObject refused");
                        }
                    }
                }
            }
            // This participant never asks getTypeDependencies (getTypes with the identifiers
            // TypeInformation lists does it in one round): such a reply answers another
            // participant's request (a reply writer sends to every matched reply reader).
            LookupReturn::Dependencies { ids, .. } => {
                tracing::trace!(
                    n = ids.len(),
                    "TypeLookup dependencies reply for another participant ignored"
                )
            }
            LookupReturn::Failed { operation, code } => {
                tracing::debug!(operation, code, "TypeLookup request failed at the peer")
            }
            LookupReturn::Unknown(op) => {
                tracing::debug!(
                    op,
                    remote_ex = reply.remote_ex,
                    "TypeLookup reply not understood"
                )
            }
        }
        learnt
    }

    /// INCONSISTENT_TOPIC with TypeInformation: a remote endpoint on a local topic's name
    /// whose type is neither the local type nor assignable to or from it (names do not
    /// matter). Each local topic is compared through one of its endpoints' announcements; a
    /// topic without endpoints, or a remote type not known yet (asked for), is not judged.
    /// Returns false when the remote endpoint announces no usable TypeInformation (the
    /// caller then compares type names).
    pub(super) fn check_topic_types(
        &mut self,
        now: Instant,
        d: &mut Discovery,
        remote: Guid,
        topic: &str,
        info: Option<&TypeInformation>,
    ) -> bool {
        let Some(info) = info.filter(|i| i.minimal.id.id.hash().is_some()) else {
            return false;
        };
        let locals: Vec<(String, Arc<TypeInformation>)> = d
            .local_topics
            .keys()
            .filter(|(n, _)| n == topic)
            .filter_map(|(_, t)| {
                let announced = d
                    .local_publications
                    .values()
                    .filter(|p| p.topic_name == topic && &p.type_name == t)
                    .map(|p| &p.type_info)
                    .chain(
                        d.local_subscriptions
                            .values()
                            .filter(|s| s.topic_name == topic && &s.type_name == t)
                            .map(|s| &s.type_info),
                    )
                    .find_map(|i| i.clone())?;
                Some((t.clone(), announced))
            })
            .collect();
        for (local_type, local) in locals {
            if local.minimal.id.id == info.minimal.id.id
                || d.types.inconsistent.contains(&(remote, local_type.clone()))
            {
                continue;
            }
            let lib = &d.types.library;
            let (Some(a), Some(b)) = (side(lib, &local), side(lib, info)) else {
                let missing = lib.missing(&info.minimal);
                self.ask_types(now, d, remote.prefix, missing);
                continue;
            };
            let o = AssignOptions::default();
            if is_assignable(lib, a, b, &o).is_ok() || is_assignable(lib, b, a, &o).is_ok() {
                continue;
            }
            d.types.inconsistent.insert((remote, local_type.clone()));
            d.events.push_back(Event::InconsistentTopic {
                topic: topic.to_owned(),
                type_name: local_type,
                remote,
            });
        }
        true
    }

    /// [`check_topic_types`](Self::check_topic_types) for every remote endpoint on `topic`
    /// (a local endpoint of it was just announced).
    pub(super) fn check_remote_topic_types(
        &mut self,
        now: Instant,
        d: &mut Discovery,
        topic: &str,
    ) {
        let remotes: Vec<(Guid, Arc<TypeInformation>)> = d
            .publications
            .values()
            .filter(|p| p.topic_name == topic)
            .filter_map(|p| Some((p.guid, p.type_info.clone()?)))
            .chain(
                d.subscriptions
                    .values()
                    .filter(|s| s.topic_name == topic)
                    .filter_map(|s| Some((s.guid, s.type_info.clone()?))),
            )
            .collect();
        for (guid, info) in remotes {
            self.check_topic_types(now, d, guid, topic, Some(&info));
        }
    }

    /// Forgets what was reported of a remote endpoint that left.
    pub(super) fn forget_remote_types(d: &mut Discovery, remote: Guid) {
        d.types.inconsistent.retain(|(g, _)| *g != remote);
    }

    /// Matches again every pair of a remote and a local endpoint that both announce
    /// TypeInformation (after new types arrived).
    fn rematch_typed(&mut self, now: Instant, d: &mut Discovery) {
        let typed_pubs: Vec<PublicationData> = d
            .publications
            .values()
            .map(|p| &**p)
            .filter(|p| p.type_info.is_some())
            .cloned()
            .collect();
        let local_subs: Vec<SubscriptionData> = d.local_subscriptions.values().cloned().collect();
        for p in &typed_pubs {
            self.check_topic_types(now, d, p.guid, &p.topic_name, p.type_info.as_deref());
            for s in local_subs.iter().filter(|s| s.topic_name == p.topic_name) {
                self.match_pair(now, d, p, s);
            }
        }
        let typed_subs: Vec<SubscriptionData> = d
            .subscriptions
            .values()
            .map(|s| &**s)
            .filter(|s| s.type_info.is_some())
            .cloned()
            .collect();
        let local_pubs: Vec<PublicationData> = d.local_publications.values().cloned().collect();
        for s in &typed_subs {
            self.check_topic_types(now, d, s.guid, &s.topic_name, s.type_info.as_deref());
            for p in local_pubs.iter().filter(|p| p.topic_name == s.topic_name) {
                self.match_pair(now, d, p, s);
            }
        }
    }
}

/// The hashed identifiers the types `ids` use, transitively, each once, with the sizes of
/// their objects (what `getTypeDependencies` answers).
fn dependencies(lib: &TypeLibrary, ids: &[TypeIdentifier]) -> Vec<TypeIdWithSize> {
    let mut out: Vec<TypeIdWithSize> = Vec::new();
    let mut stack: Vec<TypeIdentifier> = ids.to_vec();
    let mut seen: Vec<TypeIdentifier> = ids.to_vec();
    while let Some(id) = stack.pop() {
        let Some(k) = lib.get(&id) else { continue };
        for r in tachyon_xtypes::references(&k.object) {
            for h in tachyon_xtypes::hashed_in(&r) {
                if seen.contains(&h) {
                    continue;
                }
                seen.push(h.clone());
                let size = lib.get(&h).map_or(0, |k| k.bytes.len() as u32);
                out.push(TypeIdWithSize {
                    id: h.clone(),
                    size,
                });
                stack.push(h);
            }
        }
    }
    out
}

/// A GUID's 16 bytes in wire order.
fn guid_bytes(g: &tachyon_wire::Guid) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..12].copy_from_slice(&g.prefix.0);
    b[12..].copy_from_slice(&g.entity_id.0);
    b
}
