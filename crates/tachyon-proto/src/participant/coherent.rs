//! PRESENTATION across endpoints: a local publisher's coherent sets (begin/end over its
//! writers, group sequence numbers with GROUP access scope), and a local subscriber's
//! assembly of a remote publisher's sets from the parts its readers receive from each of
//! that publisher's writers, plus the subscriber's `begin_access`/`end_access`.
//!
//! A remote publisher's set `n` becomes visible in the subscriber's readers in one step once
//! every matched writer of that publisher (PID_GROUP_ENTITYID in SEDP) delivered its part of
//! `n` whole (its end marker carries [`PID_TACHYON_COHERENT_GROUP`]); if a part is missing
//! or incomplete, the whole set is dropped. Sets of one publisher are resolved in order.
//!
//! [`PID_TACHYON_COHERENT_GROUP`]: crate::history::coherent::PID_TACHYON_COHERENT_GROUP

use crate::maps::HashMap;
use std::collections::BTreeMap;

use tachyon_wire::{EntityId, Guid, GuidPrefix, SequenceNumber};

use super::{Error, Participant};
use crate::history::{GroupMember, PublisherSet};
use crate::reader::{ReceivedChange, SetPart};
use crate::time::Instant;
use crate::writer::Writer;

/// Most sets of one remote publisher a subscriber holds back waiting for missing parts; the
/// oldest is dropped beyond it.
const MAX_PENDING_SETS: usize = 16;

/// A local publisher's coherent-set numbering and its open set.
#[derive(Debug, Default)]
pub(crate) struct PublisherSets {
    /// The next group sequence number (GROUP scope).
    next_group_sn: i64,
    /// The number of the next publisher-wide set.
    next_set: i64,
    open: Option<OpenSet>,
}

#[derive(Debug)]
struct OpenSet {
    writers: Vec<EntityId>,
    group_scope: bool,
    /// Group sequence number of the set's first sample.
    first_group_sn: Option<SequenceNumber>,
}

/// A subscriber's pending sets of one remote publisher.
#[derive(Debug, Default)]
pub(crate) struct RemoteSets {
    sets: BTreeMap<SequenceNumber, Vec<Part>>,
    /// The latest set each (reader, writer) pair reported a part of.
    last: HashMap<(usize, Guid), SequenceNumber>,
}

#[derive(Debug)]
struct Part {
    reader: usize,
    writer: Guid,
    complete: bool,
    changes: Vec<ReceivedChange>,
}

/// Key of [`RemoteSets`]: local subscriber, remote participant, remote publisher.
pub(crate) type RemoteKey = (EntityId, GuidPrefix, EntityId);

impl Participant {
    /// Begins a coherent set of local publisher `publisher` over its `writers` (DDS
    /// `begin_coherent_changes`): what they write until
    /// [`end_coherent_set`](Self::end_coherent_set) forms one set per writer, and one
    /// publisher-wide set. `group_scope`: PRESENTATION access scope GROUP (samples also
    /// carry group sequence numbers). A set already open stays open.
    pub fn begin_coherent_set(
        &mut self,
        publisher: EntityId,
        writers: &[EntityId],
        group_scope: bool,
    ) -> Result<(), Error> {
        let state = self.publisher_sets.entry(publisher).or_default();
        if state.open.is_some() {
            return Ok(());
        }
        let mut members = Vec::with_capacity(writers.len());
        for &id in writers {
            if let Some(w) = self.writer_mut(id) {
                w.begin_set();
                members.push(id);
            }
        }
        if let Some(state) = self.publisher_sets.get_mut(&publisher) {
            state.open = Some(OpenSet {
                writers: members,
                group_scope,
                first_group_sn: None,
            });
        }
        Ok(())
    }

    /// Ends the open coherent set of `publisher` (DDS `end_coherent_changes`): when any of
    /// its writers wrote in it, each writer of the set writes an end marker.
    /// [`Error::NoCoherentSet`] when none is open.
    pub fn end_coherent_set(&mut self, now: Instant, publisher: EntityId) -> Result<(), Error> {
        let open = self
            .publisher_sets
            .get_mut(&publisher)
            .and_then(|s| s.open.take())
            .ok_or(Error::NoCoherentSet)?;
        let live: Vec<EntityId> = open
            .writers
            .iter()
            .copied()
            .filter(|&id| self.writer(id).is_some_and(|w| w.set_open()))
            .collect();
        let written = live
            .iter()
            .any(|&id| self.writer(id).is_some_and(|w| w.set_written()));
        let set = if written {
            let state = self.publisher_sets.entry(publisher).or_default();
            state.next_set = state.next_set.max(0) + 1;
            Some(PublisherSet {
                group: publisher,
                number: SequenceNumber(state.next_set),
                writers: u32::try_from(live.len()).unwrap_or(u32::MAX),
            })
        } else {
            None
        };
        let group_set = open.first_group_sn.filter(|_| open.group_scope);
        let mut result = Ok(());
        for id in live {
            if let Some(w) = self.writer_mut(id) {
                if let Err(e) = w.end_set(now, group_set, set) {
                    result = Err(Error::Write(e));
                }
            }
        }
        result
    }

    /// The subscriber's access is open (DDS `begin_access`, `open`) or closed (its last
    /// `end_access`): while open, sets that become whole in its readers wait, and all become
    /// visible together when it closes.
    pub fn set_subscriber_access(&mut self, now: Instant, subscriber: EntityId, open: bool) {
        for r in self.readers.iter_mut() {
            if r.config().subscriber == subscriber {
                r.set_access(now, open);
            }
        }
    }

    /// The group numbering of the next sample of writer `w`, when it writes in an open
    /// GROUP-scope set.
    pub(super) fn group_member(&self, w: &Writer) -> Option<(EntityId, GroupMember)> {
        if !w.set_open() {
            return None;
        }
        let writer = w.guid().entity_id;
        self.publisher_sets.iter().find_map(|(&p, s)| {
            let open = s.open.as_ref()?;
            if !open.group_scope || !open.writers.contains(&writer) {
                return None;
            }
            let sn = SequenceNumber(s.next_group_sn.max(0) + 1);
            let set = open.first_group_sn.unwrap_or(sn);
            Some((p, GroupMember { set, sn }))
        })
    }

    /// A sample numbered by [`group_member`](Self::group_member) was written.
    pub(super) fn group_member_written(&mut self, publisher: EntityId, g: GroupMember) {
        if let Some(s) = self.publisher_sets.get_mut(&publisher) {
            s.next_group_sn = g.sn.0;
            if let Some(open) = &mut s.open {
                open.first_group_sn.get_or_insert(g.set);
            }
        }
    }

    /// Collects the parts of remote publishers' sets the readers finished, and makes
    /// visible (or drops) every set that can be decided.
    pub(super) fn assemble_sets(&mut self, now: Instant) {
        if self.coherent_readers == 0 || !self.readers.iter().any(|r| r.has_parts()) {
            return;
        }
        for (i, r) in self.readers.enumerate_mut() {
            let subscriber = r.config().subscriber;
            for p in r.take_parts() {
                let key = (subscriber, p.writer.prefix, p.publisher.group);
                self.remote_sets.entry(key).or_default().add(i, p);
            }
        }
        self.resolve_sets(now);
    }

    /// Decides the pending sets of every remote publisher, oldest first: a set is decided
    /// when each matched writer of its publisher reported its part or moved past it.
    pub(super) fn resolve_sets(&mut self, now: Instant) {
        let keys: Vec<RemoteKey> = self.remote_sets.keys().copied().collect();
        for key in keys {
            let expected = self.expected_parts(key);
            let Some(mut pending) = self.remote_sets.remove(&key) else {
                continue;
            };
            while let Some((_, complete, parts)) = pending.next_decided(&expected) {
                for part in parts {
                    let Some(r) = self.readers.get_mut(part.reader) else {
                        continue;
                    };
                    if complete {
                        r.commit(now, part.writer, part.changes);
                    } else if part.complete {
                        r.part_discarded();
                    }
                }
            }
            if !expected.is_empty() {
                self.remote_sets.insert(key, pending);
            }
        }
    }

    /// The (reader, writer) pairs that must deliver a part of each set of `key`'s publisher.
    fn expected_parts(&self, (subscriber, prefix, group): RemoteKey) -> Vec<(usize, Guid)> {
        let mut out = Vec::new();
        for (i, r) in self.readers.enumerate() {
            if r.config().subscriber == subscriber {
                out.extend(r.writers_of_group(prefix, group).map(|w| (i, w)));
            }
        }
        out
    }
}

impl RemoteSets {
    fn add(&mut self, reader: usize, p: SetPart) {
        let n = p.publisher.number;
        let last = self.last.entry((reader, p.writer)).or_insert(n);
        *last = (*last).max(n);
        self.sets.entry(n).or_default().push(Part {
            reader,
            writer: p.writer,
            complete: p.complete,
            changes: p.changes,
        });
    }

    /// The oldest set if it can be decided: its number, whether it is whole, its parts.
    fn next_decided(
        &mut self,
        expected: &[(usize, Guid)],
    ) -> Option<(SequenceNumber, bool, Vec<Part>)> {
        let (&n, parts) = self.sets.iter().next()?;
        let has = |pair: &(usize, Guid)| {
            parts
                .iter()
                .find(|p| (p.reader, p.writer) == *pair)
                .map(|p| p.complete)
        };
        let overflow = self.sets.len() > MAX_PENDING_SETS;
        let decided = overflow
            || expected.iter().all(|pair| {
                has(pair).is_some() || self.last.get(pair).is_some_and(|&last| last > n)
            });
        if !decided {
            return None;
        }
        let complete = !overflow
            && !expected.is_empty()
            && expected.iter().all(|pair| has(pair) == Some(true));
        let mut parts = self.sets.remove(&n)?;
        parts.retain(|p| expected.contains(&(p.reader, p.writer)));
        if !complete {
            tracing::debug!(
                set = n.0,
                "publisher-wide coherent set dropped: a part is missing"
            );
        }
        Some((n, complete, parts))
    }
}
