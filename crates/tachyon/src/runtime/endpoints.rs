//! A user endpoint's life across the lanes ([`lanes`](super::lanes)): created, changed and
//! deleted.
//!
//! A writer or reader is announced by discovery, which is the main lane's, and lives in its
//! own lane: the main one, or the critical one when its TRANSPORT_PRIORITY is above
//! `threads.critical_priority`. Every step takes the main lane's lock first, then the
//! endpoint's own when that is another:
//! - [`Creating`] creates the endpoint where it lives (a critical one under an entity id the
//!   main lane reserves, so the participant's ids stay unique), hands the DCPS layer the
//!   endpoint's own lane and discovery, and finishes by flushing both lanes in the order that
//!   lets discovery's matches reach the critical lane;
//! - [`Shared::in_own_lane`] changes it where it lives, with discovery locked (`set_qos`);
//! - [`Shared::delete_endpoint`] deletes it where it lives, then withdraws it from
//!   discovery.

use tachyon_proto::{Instant, Participant, ReaderConfig, WriterConfig};
use tachyon_wire::{EntityId, EntityKind};

use super::lanes::{CRITICAL, MAIN};
use super::{Shared, State, StateGuard};
use crate::error::Error;

/// An endpoint being created: the main lane locked, and the critical lane when the endpoint
/// lives there.
pub(crate) struct Creating<'a> {
    shared: &'a Shared,
    main: StateGuard<'a>,
    lane: Option<StateGuard<'a>>,
    /// The runtime clock when creation began.
    pub(crate) now: Instant,
}

impl Shared {
    /// Begins creating an endpoint; in the critical lane when `critical`
    /// ([`goes_to_critical_lane`](Shared::goes_to_critical_lane)).
    pub(crate) fn begin_creating(&self, critical: bool) -> Creating<'_> {
        let main = self.lock();
        let now = self.now();
        let lane = critical.then(|| self.lock_lane(CRITICAL));
        Creating {
            shared: self,
            main,
            lane,
            now,
        }
    }
}

impl Creating<'_> {
    /// Creates the writer in its lane.
    pub(crate) fn create_writer(&mut self, config: WriterConfig) -> Result<EntityId, Error> {
        let Some(lane) = &mut self.lane else {
            return Ok(self.main.participant.create_writer(config)?);
        };
        let kind = match config.keyed {
            true => EntityKind::USER_WRITER_WITH_KEY,
            false => EntityKind::USER_WRITER_NO_KEY,
        };
        let id = self.main.participant.reserve_lane_endpoint(kind)?;
        if let Err(e) = lane.participant.create_writer_with_id(id, config) {
            let _ = self.main.participant.delete_writer(self.now, id);
            return Err(e.into());
        }
        Ok(id)
    }

    /// Creates the reader in its lane.
    pub(crate) fn create_reader(&mut self, config: ReaderConfig) -> Result<EntityId, Error> {
        let Some(lane) = &mut self.lane else {
            return Ok(self.main.participant.create_reader(config)?);
        };
        let kind = match config.keyed {
            true => EntityKind::USER_READER_WITH_KEY,
            false => EntityKind::USER_READER_NO_KEY,
        };
        let id = self.main.participant.reserve_lane_endpoint(kind)?;
        if let Err(e) = lane.participant.create_reader_with_id(id, config) {
            let _ = self.main.participant.delete_reader(self.now, id);
            return Err(e.into());
        }
        Ok(id)
    }

    /// The state of the lane the endpoint lives in.
    pub(crate) fn own(&mut self) -> &mut State {
        match &mut self.lane {
            Some(l) => l,
            None => &mut self.main,
        }
    }

    /// Discovery (the main lane's protocol state), which announces the endpoint.
    pub(crate) fn discovery(&mut self) -> &mut Participant {
        &mut self.main.participant
    }

    /// Sends what the creation made due and wakes the driver to look at its timers again.
    /// The critical lane is flushed and released first: the main lane's flush applies
    /// discovery's matches to it, taking its lock itself.
    pub(crate) fn finish(self) {
        let Creating {
            shared,
            mut main,
            lane,
            now,
        } = self;
        if let Some(mut l) = lane {
            l.flush(shared, now);
            // Sent once the main lane's lock is released, not under it.
            main.take_sends(&mut l);
        }
        main.flush(shared, now);
        drop(main);
        shared.wake();
    }
}

impl Shared {
    /// Runs `f` on the protocol state of endpoint `id` with the main lane (`main`) locked:
    /// on it when the endpoint lives there, else under the endpoint's lane's lock, taken
    /// inside and released before `main`'s, which sends what `f` made due.
    pub(crate) fn in_own_lane<R>(
        &self,
        main: &mut State,
        id: EntityId,
        now: Instant,
        f: impl FnOnce(&mut Participant) -> R,
    ) -> R {
        if self.lane_of(id) == main.lane() {
            return f(&mut main.participant);
        }
        let mut lane = self.lock_for(id);
        let r = f(&mut lane.participant);
        lane.flush(self, now);
        main.take_sends(&mut lane);
        r
    }

    /// Deletes user endpoint `id` with `delete`: where it lives, then (when that is another
    /// lane) from discovery; forgets its statuses and listener; tells the WaitSets (its
    /// conditions no longer trigger).
    pub(crate) fn delete_endpoint(
        &self,
        id: EntityId,
        delete: impl Fn(&mut Participant, Instant, EntityId),
    ) {
        if self.lane_of(id) != MAIN {
            let mut lane = self.lock_for(id);
            let now = self.now();
            delete(&mut lane.participant, now, id);
            lane.remove_endpoint(id);
            lane.flush(self, now);
        }
        let mut st = self.lock();
        let now = self.now();
        delete(&mut st.participant, now, id);
        st.remove_endpoint(id);
        st.flush(self, now);
        drop(st);
        self.observers.notify();
    }
}
