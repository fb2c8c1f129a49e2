//! Lanes: endpoints of one participant kept in protocol states of their own.
//!
//! The runtime can keep some endpoints of a participant (its critical ones) in a second
//! [`Participant`] with the same GUID prefix, a *lane*, behind a lock of its own, so that a
//! critical `write` or a critical datagram never waits for what discovery or a bulk writer
//! holds (`docs/runtime.md`). Discovery stays in the main participant and announces and
//! matches the lane's endpoints as its own; what it would do to them (match, unmatch, give a
//! reader's content filter or representation) it queues as [`LaneCommand`]s for the runtime to
//! apply to the lane ([`Participant::poll_lane_command`], [`Participant::apply_lane_command`]).
//!
//! A datagram may hold submessages for endpoints of both (multicast, a peer that sends all to
//! one locator): each participant reports, after [`Participant::handle_datagram`], whether the
//! datagram also concerns endpoints kept elsewhere ([`Participant::take_forward`]), and the
//! runtime hands it to the other state too. The lane also hears of activity of the participants
//! whose writers its readers follow, seen by the main participant (their liveliness,
//! [`Participant::poll_participant_activity`]).

use crate::maps::{HashMap, HashSet};

use tachyon_wire::parameter::ContentFilterProperty;
use tachyon_wire::{EntityId, Guid, GuidPrefix};

use super::{Error, Participant};
use crate::endpoint::{ReaderConfig, RemoteReader, RemoteWriter, WriterConfig};
use crate::qos::DataRepresentation;
use crate::time::Instant;

/// What discovery in the main participant does to an endpoint kept in a lane. `writer` and
/// `reader` name the lane's endpoint when it is an entity id, the remote (or other local)
/// one when it is a GUID.
#[derive(Clone, Debug, PartialEq)]
#[allow(missing_docs)]
pub enum LaneCommand {
    /// [`Participant::match_reader`].
    MatchReader {
        writer: EntityId,
        remote: RemoteReader,
    },
    /// [`Participant::unmatch_reader`].
    UnmatchReader { writer: EntityId, reader: Guid },
    /// The content filter matched reader `reader` announced (`None`: none).
    ReaderFilter {
        writer: EntityId,
        reader: Guid,
        filter: Option<ContentFilterProperty>,
    },
    /// [`Participant::set_reader_representation`].
    ReaderRepresentation {
        writer: EntityId,
        reader: Guid,
        representation: Option<DataRepresentation>,
    },
    /// [`Participant::match_writer`].
    MatchWriter {
        reader: EntityId,
        remote: RemoteWriter,
    },
    /// [`Participant::unmatch_writer`].
    UnmatchWriter { reader: EntityId, writer: Guid },
}

impl LaneCommand {
    /// The local endpoint the command is for.
    pub fn endpoint(&self) -> EntityId {
        match self {
            LaneCommand::MatchReader { writer, .. }
            | LaneCommand::UnmatchReader { writer, .. }
            | LaneCommand::ReaderFilter { writer, .. }
            | LaneCommand::ReaderRepresentation { writer, .. } => *writer,
            LaneCommand::MatchWriter { reader, .. } | LaneCommand::UnmatchWriter { reader, .. } => {
                *reader
            }
        }
    }
}

/// The bit of an entity key's first octet that marks an endpoint reserved for a lane.
const LANE_KEY_BIT: u8 = 0x80;

/// Whether `id` is that of a user endpoint reserved for a lane
/// ([`Participant::reserve_lane_endpoint`]): the runtime finds an endpoint's lane from its
/// entity id alone, without a lock.
pub fn is_lane_id(id: EntityId) -> bool {
    use tachyon_wire::EntityKind as K;
    let user_endpoint = matches!(
        id.kind(),
        K::USER_WRITER_WITH_KEY
            | K::USER_WRITER_NO_KEY
            | K::USER_READER_WITH_KEY
            | K::USER_READER_NO_KEY
    );
    user_endpoint && id.0[0] & LANE_KEY_BIT != 0
}

/// What a participant knows of the endpoints kept in the other protocol state.
#[derive(Debug, Default)]
pub(crate) struct Siblings {
    /// This participant is a lane (no discovery): a submessage with no destination here is
    /// for the main participant.
    pub(super) lane: bool,
    /// Local endpoints kept in a lane (main participant only).
    ids: HashSet<EntityId>,
    /// Remote writers matched with readers kept in a lane, and those readers.
    routes: HashMap<Guid, HashSet<EntityId>>,
    /// The participants of those writers, and how many such pairs they have.
    prefixes: HashMap<GuidPrefix, u32>,
    commands: std::collections::VecDeque<LaneCommand>,
    /// The datagram just handled concerns the other state too.
    pub(super) forward: bool,
    /// Participants heard from whose writers the lane's readers follow.
    activity: Vec<GuidPrefix>,
}

impl Siblings {
    /// Whether commands or activity wait to be polled.
    pub(super) fn has_news(&self) -> bool {
        !self.commands.is_empty() || !self.activity.is_empty()
    }

    pub(super) fn is_sibling(&self, id: EntityId) -> bool {
        self.ids.contains(&id)
    }

    pub(super) fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether data of `writer` addressed to `reader_id` also concerns a lane's reader.
    pub(super) fn wants_reader_submessage(&self, writer: &Guid, reader_id: EntityId) -> bool {
        if reader_id == EntityId::UNKNOWN {
            self.routes.contains_key(writer)
        } else {
            self.ids.contains(&reader_id)
        }
    }

    /// The main participant heard from `prefix`: the lane's readers hear of it when they
    /// follow writers of it (each prefix once per datagram batch).
    pub(super) fn heard_from(&mut self, prefix: GuidPrefix) {
        if self.prefixes.contains_key(&prefix) && !self.activity.contains(&prefix) {
            self.activity.push(prefix);
        }
    }

    fn route_added(&mut self, writer: Guid, reader: EntityId) {
        if self.routes.entry(writer).or_default().insert(reader) {
            *self.prefixes.entry(writer.prefix).or_insert(0) += 1;
        }
    }

    fn route_removed(&mut self, writer: &Guid, reader: EntityId) {
        let Some(readers) = self.routes.get_mut(writer) else {
            return;
        };
        if !readers.remove(&reader) {
            return;
        }
        if readers.is_empty() {
            self.routes.remove(writer);
        }
        if let Some(n) = self.prefixes.get_mut(&writer.prefix) {
            *n -= 1;
            if *n == 0 {
                self.prefixes.remove(&writer.prefix);
            }
        }
    }
}

impl Participant {
    /// A lane: a participant without discovery that keeps endpoints the main participant of
    /// the same GUID prefix announces and matches
    /// ([`reserve_lane_endpoint`](Self::reserve_lane_endpoint),
    /// [`apply_lane_command`](Self::apply_lane_command)).
    /// Datagrams it gets with submessages for no endpoint of its own are for the main
    /// participant ([`take_forward`](Self::take_forward)).
    pub fn new_lane(prefix: GuidPrefix, config: super::ParticipantConfig) -> Participant {
        let mut p = Participant::new(prefix, config);
        p.siblings.lane = true;
        p
    }

    /// The entity id of a new writer or reader kept in a lane (`kind` says which): counted
    /// among this participant's endpoints, announced with
    /// [`announce_writer`](Self::announce_writer) or
    /// [`announce_reader`](Self::announce_reader) as if it were here; what discovery does to
    /// it is queued ([`poll_lane_command`](Self::poll_lane_command)).
    /// Create it in the lane with [`create_writer_with_id`](Self::create_writer_with_id) or
    /// [`create_reader_with_id`](Self::create_reader_with_id); delete it here with
    /// [`delete_writer`](Self::delete_writer) or [`delete_reader`](Self::delete_reader).
    /// Its entity key has the top bit set ([`is_lane_id`]), which no other endpoint's has.
    pub fn reserve_lane_endpoint(
        &mut self,
        kind: tachyon_wire::EntityKind,
    ) -> Result<EntityId, Error> {
        let EntityId([a, b, c, k]) = self.allocate_id(kind)?;
        let id = EntityId([a | LANE_KEY_BIT, b, c, k]);
        self.siblings.ids.insert(id);
        Ok(id)
    }

    /// Whether endpoint `id` is kept in a lane.
    pub fn in_lane(&self, id: EntityId) -> bool {
        self.siblings.is_sibling(id)
    }

    /// Creates a writer with the entity id the main participant reserved for it.
    pub fn create_writer_with_id(
        &mut self,
        id: EntityId,
        config: WriterConfig,
    ) -> Result<(), Error> {
        super::check_fragmenting(&config)?;
        if self.writer_ids.contains_key(&id) || self.reader_ids.contains_key(&id) {
            return Err(Error::DuplicateEndpoint(id));
        }
        self.insert_writer(id, config)
    }

    /// Creates a reader with the entity id the main participant reserved for it.
    pub fn create_reader_with_id(
        &mut self,
        id: EntityId,
        config: ReaderConfig,
    ) -> Result<(), Error> {
        if self.writer_ids.contains_key(&id) || self.reader_ids.contains_key(&id) {
            return Err(Error::DuplicateEndpoint(id));
        }
        self.insert_reader(id, config)
    }

    /// The next thing discovery did to an endpoint kept in a lane.
    pub fn poll_lane_command(&mut self) -> Option<LaneCommand> {
        self.siblings.commands.pop_front()
    }

    /// Applies what discovery of the main participant did to an endpoint of this lane.
    pub fn apply_lane_command(&mut self, now: Instant, command: LaneCommand) -> Result<(), Error> {
        match command {
            LaneCommand::MatchReader { writer, remote } => self.match_reader(now, writer, remote),
            LaneCommand::UnmatchReader { writer, reader } => {
                self.unmatch_reader(writer, &reader).map(|_| ())
            }
            LaneCommand::ReaderFilter {
                writer,
                reader,
                filter,
            } => {
                self.give_reader_filter(writer, &reader, filter.as_ref());
                Ok(())
            }
            LaneCommand::ReaderRepresentation {
                writer,
                reader,
                representation,
            } => {
                self.set_reader_representation(now, writer, &reader, representation);
                Ok(())
            }
            LaneCommand::MatchWriter { reader, remote } => self.match_writer(now, reader, remote),
            LaneCommand::UnmatchWriter { reader, writer } => {
                self.unmatch_writer(now, reader, &writer).map(|_| ())
            }
        }
    }

    /// Whether the datagram just handled also concerns endpoints kept in the other state
    /// (for a lane: the main participant): hand it to that one too. Reading it resets it.
    pub fn take_forward(&mut self) -> bool {
        std::mem::take(&mut self.siblings.forward)
    }

    /// A participant the main participant heard from whose writers a lane's readers follow
    /// (their liveliness, when asserted per participant): give it to the lane's
    /// [`handle_participant_activity`](Self::handle_participant_activity).
    pub fn poll_participant_activity(&mut self) -> Option<GuidPrefix> {
        self.siblings.activity.pop()
    }

    /// Participant `prefix` was heard from (by the main participant of this lane).
    pub fn handle_participant_activity(&mut self, now: Instant, prefix: GuidPrefix) {
        self.participant_activity(now, prefix);
    }

    /// Queues `command` when its endpoint is kept in a lane; `true` if it was.
    pub(super) fn queue_for_lane(&mut self, command: LaneCommand) -> bool {
        if !self.siblings.is_sibling(command.endpoint()) {
            return false;
        }
        match &command {
            LaneCommand::MatchWriter { reader, remote } => {
                self.siblings.route_added(remote.guid, *reader);
            }
            LaneCommand::UnmatchWriter { reader, writer } => {
                self.siblings.route_removed(writer, *reader);
            }
            _ => {}
        }
        self.siblings.commands.push_back(command);
        true
    }

    /// Forgets lane endpoint `id` (deleted there), and the routes of its matches.
    pub(super) fn forget_lane_endpoint(&mut self, id: EntityId) -> bool {
        let writers: Vec<Guid> = self
            .siblings
            .routes
            .iter()
            .filter(|(_, readers)| readers.contains(&id))
            .map(|(w, _)| *w)
            .collect();
        for w in writers {
            self.siblings.route_removed(&w, id);
        }
        self.siblings.commands.retain(|c| c.endpoint() != id);
        self.siblings.ids.remove(&id)
    }
}
