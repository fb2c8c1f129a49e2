//! [`Host`]: a simulated machine running one [`Participant`] and an application ([`App`]) that
//! writes and takes samples, reacting to the participant's events.

use tachyon_proto::{Event, Instant, Participant, Transmit, TxBuf};
use tachyon_wire::Locator;

use crate::node::Node;

/// Application logic on a [`Host`]: called with the participant after every input.
pub trait App: 'static {
    /// An event from the participant.
    fn on_event(&mut self, now: Instant, participant: &mut Participant, event: Event) {
        let _ = (now, participant, event);
    }

    /// Runs after every input and event batch (write more, take, …).
    fn run(&mut self, now: Instant, participant: &mut Participant) {
        let _ = (now, participant);
    }

    /// When the application wants [`App::run`] called next without any input (`None`: never).
    fn next_wake(&self) -> Option<Instant> {
        None
    }
}

/// An application that does nothing (a participant driven from the test itself).
#[derive(Debug, Default)]
pub struct Idle;

impl App for Idle {}

/// A simulated host: a participant and its application.
#[derive(Debug)]
pub struct Host<A> {
    /// The protocol state.
    pub participant: Participant,
    /// The application.
    pub app: A,
}

impl<A: App> Host<A> {
    /// A host running `app` on `participant`.
    pub fn new(participant: Participant, app: A) -> Host<A> {
        Host { participant, app }
    }

    /// Lets the application react to events, then run.
    pub fn drive(&mut self, now: Instant) {
        while let Some(e) = self.participant.poll_event() {
            self.app.on_event(now, &mut self.participant, e);
        }
        self.app.run(now, &mut self.participant);
        while let Some(e) = self.participant.poll_event() {
            self.app.on_event(now, &mut self.participant, e);
        }
    }
}

impl<A: App> Node for Host<A> {
    fn handle_datagram(&mut self, now: Instant, source: &Locator, _: &Locator, data: &[u8]) {
        self.participant.handle_datagram(now, source, data);
        self.drive(now);
    }

    fn handle_timeout(&mut self, now: Instant) {
        self.participant.handle_timeout(now);
        self.drive(now);
    }

    fn poll_transmit(&mut self, now: Instant, buf: &mut TxBuf) -> Option<Transmit> {
        self.participant.poll_transmit(now, buf)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        match (self.participant.poll_timeout(), self.app.next_wake()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }
}
