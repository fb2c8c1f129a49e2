//! The builtin topics DCPSParticipant, DCPSPublication and DCPSSubscription as the
//! application reads them: three [`ReaderHistory`] caches, one per topic, fed from the
//! discovery events the protocol reports.
//!
//! Why real reader caches and not a map of what discovery knows: a builtin reader then has
//! exactly the semantics of any other reader — sample, view and instance states, `read`
//! versus `take`, ranks, ReadConditions, DATA_AVAILABLE on its StatusCondition and listener,
//! the async stream — because it *is* one, driven by the same code. Discovery itself keeps
//! its own tables (`Participant::discovered_*`); the caches here only mirror its events:
//!
//! - a newly discovered remote entity is a valid sample of a new instance (view state NEW);
//! - a changed announcement (QoS, user data, locators) is a new valid sample of it;
//! - its removal (announced deletion, lease expiry, SEDP dispose, its participant's loss)
//!   disposes and unregisters the instance: NOT_ALIVE_DISPOSED, reported through the unread
//!   sample or an invalid-data sample, as for any disposed instance.
//!
//! The instance handle of each is the key hash of the remote entity's GUID, so a
//! `publication_handle` or `last_publication_handle` of a user reader's status is directly
//! the instance handle to look up on the DCPSPublication reader.
//!
//! Only remote entities appear, as in RTI Connext (Cyclone DDS also lists local ones): the
//! application knows its own. The caches keep one sample per instance (KEEP_LAST 1), and a
//! disposed instance nobody takes is purged after [`AUTOPURGE_DISPOSED`], so a stream of
//! participants coming and going cannot grow memory while the application never reads; the
//! live instances are bounded by discovery's own limits (`max_participants`,
//! `max_remote_endpoints`).

use std::time::SystemTime;

use tachyon_cdr::KeyHash;
use tachyon_proto::history::{
    History, Payload, QosError, ReaderDataLifecycle, ReaderHistory, ReaderHistoryConfig,
    ResourceLimits,
};
use tachyon_proto::{Duration, Event, Instant, Participant};
use tachyon_wire::{EntityId, EntityKind, Guid, GuidPrefix};

use crate::publication::wire_time;

/// The local handle of the DCPSParticipant reader (a vendor-specific reader-with-key kind:
/// it never appears on the wire and cannot collide with a protocol endpoint).
pub(crate) const PARTICIPANT_READER: EntityId = EntityId::new([0xff, 0x00, 0x01], EntityKind(0x47));
/// The local handle of the DCPSPublication reader.
pub(crate) const PUBLICATION_READER: EntityId = EntityId::new([0xff, 0x00, 0x02], EntityKind(0x47));
/// The local handle of the DCPSSubscription reader.
pub(crate) const SUBSCRIPTION_READER: EntityId =
    EntityId::new([0xff, 0x00, 0x03], EntityKind(0x47));

/// How long a disposed instance nobody took stays in a builtin cache.
pub(crate) const AUTOPURGE_DISPOSED: Duration = Duration::from_secs(60);

/// The three builtin-topic caches of a participant.
#[derive(Debug)]
pub(crate) struct BuiltinTopics {
    participants: ReaderHistory,
    publications: ReaderHistory,
    subscriptions: ReaderHistory,
}

impl BuiltinTopics {
    /// Empty caches (the configuration is fixed and valid; an error would be a bug).
    pub(crate) fn new() -> Result<BuiltinTopics, QosError> {
        Ok(BuiltinTopics {
            participants: cache()?,
            publications: cache()?,
            subscriptions: cache()?,
        })
    }
}

/// A builtin cache: the newest announcement per remote entity.
fn cache() -> Result<ReaderHistory, QosError> {
    ReaderHistory::new(ReaderHistoryConfig {
        history: History::KeepLast(1),
        limits: ResourceLimits::default(),
        lifecycle: ReaderDataLifecycle {
            autopurge_nowriter_samples_delay: None,
            autopurge_disposed_samples_delay: Some(AUTOPURGE_DISPOSED),
        },
    })
}

/// The statuses of a new runtime: the builtin readers' are there before the driver thread
/// starts, so no DATA_AVAILABLE of an early discovery is lost.
pub(crate) fn statuses() -> super::Statuses {
    let mut s = super::Statuses::default();
    for id in [PARTICIPANT_READER, PUBLICATION_READER, SUBSCRIPTION_READER] {
        s.insert(id);
    }
    s
}

/// Whether `id` is one of the builtin readers.
pub(crate) fn is_builtin(id: EntityId) -> bool {
    id == PARTICIPANT_READER || id == PUBLICATION_READER || id == SUBSCRIPTION_READER
}

impl BuiltinTopics {
    /// The cache behind builtin reader `id`.
    pub(crate) fn history(&self, id: EntityId) -> Option<&ReaderHistory> {
        match id {
            PARTICIPANT_READER => Some(&self.participants),
            PUBLICATION_READER => Some(&self.publications),
            SUBSCRIPTION_READER => Some(&self.subscriptions),
            _ => None,
        }
    }

    /// The cache behind builtin reader `id`, to read or take.
    pub(crate) fn history_mut(&mut self, id: EntityId) -> Option<&mut ReaderHistory> {
        match id {
            PARTICIPANT_READER => Some(&mut self.participants),
            PUBLICATION_READER => Some(&mut self.publications),
            SUBSCRIPTION_READER => Some(&mut self.subscriptions),
            _ => None,
        }
    }

    /// Folds one protocol event into the caches; returns the builtin reader that has news.
    /// The announcement is taken from `participant`'s discovery tables, which the event has
    /// just changed. Only the telling-apart is inline: a sample's events (DATA_AVAILABLE and
    /// the like) leave here, and the code that stores an announcement stays out of the
    /// instruction cache lines a sample's path runs through (`docs/hot-path.md`).
    #[inline(always)]
    pub(crate) fn apply(
        &mut self,
        participant: &Participant,
        now: Instant,
        e: &Event,
    ) -> Option<EntityId> {
        let (reader, guid, lost) = match e {
            Event::ParticipantDiscovered { participant: p }
            | Event::ParticipantUpdated { participant: p } => {
                (PARTICIPANT_READER, participant_guid(*p), false)
            }
            Event::ParticipantLost { participant: p, .. } => {
                (PARTICIPANT_READER, participant_guid(*p), true)
            }
            Event::PublicationDiscovered { remote } | Event::PublicationUpdated { remote } => {
                (PUBLICATION_READER, *remote, false)
            }
            Event::PublicationLost { remote } => (PUBLICATION_READER, *remote, true),
            Event::SubscriptionDiscovered { remote } | Event::SubscriptionUpdated { remote } => {
                (SUBSCRIPTION_READER, *remote, false)
            }
            Event::SubscriptionLost { remote } => (SUBSCRIPTION_READER, *remote, true),
            _ => return None,
        };
        self.store(participant, now, reader, guid, lost)
    }

    /// The out-of-line half of [`apply`](Self::apply): the newest announcement of remote
    /// entity `guid` stored in builtin reader `reader`'s cache, or its instance disposed and
    /// unregistered when it was `lost`.
    #[inline(never)]
    fn store(
        &mut self,
        participant: &Participant,
        now: Instant,
        reader: EntityId,
        guid: Guid,
        lost: bool,
    ) -> Option<EntityId> {
        let payload = match (lost, reader) {
            (true, _) => None,
            (false, PARTICIPANT_READER) => Some(
                participant
                    .discovered_participant(&guid.prefix)?
                    .data
                    .to_payload(),
            ),
            (false, PUBLICATION_READER) => {
                Some(participant.discovered_publication(&guid)?.to_payload())
            }
            (false, _) => Some(participant.discovered_subscription(&guid)?.to_payload()),
        };
        let writer = announcer(reader, guid.prefix);
        let key = guid_key(&guid);
        let ts = wire_time(SystemTime::now());
        let history = self.history_mut(reader)?;
        history.purge(now);
        match payload {
            Some(p) => {
                if let Err(r) = history.insert_sample(now, writer, key, ts, Payload::from(p)) {
                    tracing::debug!(rejected = %r, "builtin-topic sample not stored");
                    return None;
                }
            }
            None => {
                // An entity the cache never held (refused, or purged) is not reported.
                history.lookup_instance(&key)?;
                history.dispose(now, writer, key, ts).ok()?;
                history.unregister(now, writer, key, ts);
            }
        }
        Some(reader)
    }
}

/// The GUID of a participant (its prefix and the participant entity id).
pub(crate) fn participant_guid(prefix: GuidPrefix) -> Guid {
    Guid::new(prefix, EntityId::PARTICIPANT)
}

/// The builtin writer that announced an entity of `reader`'s topic: it is the
/// `publication_handle` of the builtin samples.
fn announcer(reader: EntityId, prefix: GuidPrefix) -> Guid {
    let id = match reader {
        PUBLICATION_READER => EntityId::SEDP_PUBLICATIONS_WRITER,
        SUBSCRIPTION_READER => EntityId::SEDP_SUBSCRIPTIONS_WRITER,
        _ => EntityId::SPDP_WRITER,
    };
    Guid::new(prefix, id)
}

/// The key hash (instance handle) of an entity: its GUID's 16 bytes (RTPS 2.5 9.6.3.3).
pub(crate) fn guid_key(guid: &Guid) -> KeyHash {
    let mut k = [0u8; 16];
    k[..12].copy_from_slice(&guid.prefix.0);
    k[12..].copy_from_slice(&guid.entity_id.0);
    KeyHash(k)
}

/// The GUID a key hash names.
pub(crate) fn key_guid(key: &KeyHash) -> Guid {
    let mut prefix = [0u8; 12];
    prefix.copy_from_slice(&key.0[..12]);
    let mut id = [0u8; 4];
    id.copy_from_slice(&key.0[12..]);
    Guid::new(GuidPrefix(prefix), EntityId(id))
}
