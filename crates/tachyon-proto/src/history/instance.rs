//! One instance in a reader's cache: its samples, live writers, states and generation counts,
//! and the instance-state transitions of DDS 1.4 2.2.2.5.1.

use std::collections::VecDeque;

use tachyon_wire::{Guid, Time};

use super::payload::Payload;
use super::sample_info::{InstanceState, SampleState, ViewState};
use crate::time::Instant;

/// A sample as the reader keeps it; the rest of its SampleInfo is computed when returned.
#[derive(Clone, Debug)]
pub(crate) struct StoredSample {
    pub sample_state: SampleState,
    pub source_timestamp: Time,
    pub writer: Guid,
    pub reception_time: Instant,
    pub disposed_generation_count: u32,
    pub no_writers_generation_count: u32,
    /// `None` for the invalid-data sample that reports a state change.
    pub payload: Option<Payload>,
    /// When LIFESPAN removes the sample (`None`: never).
    pub expiry: Option<Instant>,
    /// Reception order over the whole cache (ordered access); 0 until the cache numbers it.
    pub seq: u64,
}

impl StoredSample {
    /// The sum the generation ranks are differences of.
    pub fn generation(&self) -> u32 {
        self.disposed_generation_count
            .saturating_add(self.no_writers_generation_count)
    }
}

/// Reader-side state of one instance.
#[derive(Debug)]
pub(crate) struct ReaderInstance {
    pub state: InstanceState,
    pub view: ViewState,
    pub disposed_generation_count: u32,
    pub no_writers_generation_count: u32,
    /// Writers that wrote or disposed the instance and have neither unregistered nor been lost.
    pub writers: Vec<Guid>,
    /// Valid samples, oldest first.
    pub samples: VecDeque<StoredSample>,
    /// At most one invalid-data sample, reporting the latest state change (as Cyclone DDS).
    pub invalid: Option<StoredSample>,
    /// When the instance last became NOT_ALIVE (for autopurge).
    pub not_alive_since: Instant,
    /// Whether the cache's set of instances that may hold samples has it (so a sample for an
    /// instance already there does not look it up again).
    pub pending: bool,
}

impl ReaderInstance {
    /// A new, alive instance nobody has seen.
    pub fn new(now: Instant) -> ReaderInstance {
        ReaderInstance {
            state: InstanceState::Alive,
            view: ViewState::New,
            disposed_generation_count: 0,
            no_writers_generation_count: 0,
            writers: Vec::new(),
            samples: VecDeque::new(),
            invalid: None,
            not_alive_since: now,
            pending: false,
        }
    }

    /// Current generation sum (disposed + no-writers).
    pub fn generation(&self) -> u32 {
        self.disposed_generation_count
            .saturating_add(self.no_writers_generation_count)
    }

    /// Valid data from `writer`: registers it and brings a NOT_ALIVE instance back to life as a
    /// new generation, which the application sees as NEW again.
    pub fn on_data(&mut self, writer: Guid) {
        self.add_writer(writer);
        match self.state {
            InstanceState::Alive => {}
            InstanceState::NotAliveDisposed => {
                self.disposed_generation_count = self.disposed_generation_count.saturating_add(1);
                self.revive();
            }
            InstanceState::NotAliveNoWriters => {
                self.no_writers_generation_count =
                    self.no_writers_generation_count.saturating_add(1);
                self.revive();
            }
        }
        // New data carries the state; a pending state-change-only sample is superseded.
        self.invalid = None;
    }

    /// A dispose from `writer` (who thereby has the instance registered).
    pub fn on_dispose(&mut self, now: Instant, writer: Guid, ts: Time) {
        self.add_writer(writer);
        if self.state != InstanceState::NotAliveDisposed {
            self.state = InstanceState::NotAliveDisposed;
            self.not_alive_since = now;
            self.report_state_change(now, writer, ts);
        }
    }

    /// `writer` unregistered or was lost; the last live writer leaving an alive instance makes
    /// it NOT_ALIVE_NO_WRITERS (a disposed instance stays disposed).
    pub fn on_writer_gone(&mut self, now: Instant, writer: Guid, ts: Time) {
        let before = self.writers.len();
        self.writers.retain(|w| *w != writer);
        if self.writers.len() != before
            && self.writers.is_empty()
            && self.state == InstanceState::Alive
        {
            self.state = InstanceState::NotAliveNoWriters;
            self.not_alive_since = now;
            self.report_state_change(now, writer, ts);
        }
    }

    /// Whether the instance holds no sample, valid or invalid.
    pub fn is_empty(&self) -> bool {
        self.samples.is_empty() && self.invalid.is_none()
    }

    /// Whether the instance can be forgotten: nothing to return and nobody writing it.
    pub fn is_unused(&self) -> bool {
        self.state != InstanceState::Alive
            && self.writers.is_empty()
            && self.samples.is_empty()
            && self.invalid.is_none()
    }

    fn add_writer(&mut self, writer: Guid) {
        if !self.writers.contains(&writer) {
            self.writers.push(writer);
        }
    }

    fn revive(&mut self) {
        self.state = InstanceState::Alive;
        self.view = ViewState::New;
    }

    /// The application learns of a state change through the latest sample if it has not read
    /// it yet, else through an invalid-data sample (Cyclone DDS's rule).
    fn report_state_change(&mut self, now: Instant, writer: Guid, ts: Time) {
        if self
            .samples
            .back()
            .is_some_and(|s| s.sample_state == SampleState::NotRead)
        {
            return;
        }
        self.invalid = Some(StoredSample {
            sample_state: SampleState::NotRead,
            source_timestamp: ts,
            writer,
            reception_time: now,
            disposed_generation_count: self.disposed_generation_count,
            no_writers_generation_count: self.no_writers_generation_count,
            payload: None,
            expiry: None,
            seq: 0,
        });
    }
}
