//! The driver: waits for datagrams and the next protocol timer, and serves what is ready in
//! the executor's priority order ([`executor`](super::executor)), one bounded batch at a
//! time. A driver thread runs it in a loop; in single-thread mode the application runs it
//! with `DomainParticipant::run_once`.

use std::time::Duration as StdDuration;

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use tachyon_proto::{Instant, TimerClass, TimerDeadlines};
use tachyon_transport::{RecvBatch, SocketId};

use super::executor::{Class, Ready};
use super::{Shared, MAX_DATAGRAM};

/// The waker's token.
pub(super) const WAKE: Token = Token(usize::MAX);

/// Datagrams taken per batch (one `recvmmsg`): the most a higher class waits for.
pub(crate) const BATCH: usize = 32;

/// The event loop of one participant: its poller, receive buffers and what it knows is ready.
pub(crate) struct Driver {
    poll: Poll,
    events: Events,
    batch: RecvBatch,
    /// Sockets reported readable and not drained since (readiness is edge-triggered).
    readable: [bool; SocketId::ALL.len()],
    /// Where the next search for a readable socket of a class starts (fairness within it).
    cursor: usize,
    /// The protocol's timer deadlines, as of the last time the driver held the state lock.
    deadlines: TimerDeadlines,
}

impl Driver {
    /// A driver watching every socket of `shared`'s transport on `poll` (whose waker is
    /// `shared`'s).
    pub(super) fn new(shared: &Shared, poll: Poll) -> Driver {
        for (id, fd) in shared.transport.sockets() {
            if let Err(e) =
                poll.registry()
                    .register(&mut SourceFd(&fd), Token(id.index()), Interest::READABLE)
            {
                tracing::error!(socket = ?id, error = %e, "cannot watch socket; it will not receive");
            }
        }
        Driver {
            poll,
            events: Events::with_capacity(16),
            // Receive slots as large as a UDP datagram can be: peers may send more than we do.
            batch: RecvBatch::new(BATCH, tachyon_transport::MAX_UDP_PAYLOAD.max(MAX_DATAGRAM)),
            readable: [false; SocketId::ALL.len()],
            cursor: 0,
            deadlines: TimerDeadlines::default(),
        }
    }

    /// One round: waits up to `timeout` (`None`: as long as no timer is due) for a socket
    /// or a timer, unless work is ready already, then serves ready work in priority order,
    /// one batch at a time, until none is left. Returns `false` once the runtime stopped.
    pub(super) fn turn(&mut self, shared: &Shared, timeout: Option<StdDuration>) -> bool {
        if shared.stopped() {
            return false;
        }
        // Listeners queued by a user thread's flush (which woke us).
        shared.dispatch_listeners();
        // A user call may have armed a timer since we last looked. When we will wake is
        // published under the same lock, so a later call arming an earlier timer wakes us.
        let now = shared.now();
        {
            let st = shared.lock();
            self.deadlines = st.participant.poll_timeouts();
            let by_timeout = timeout.and_then(|t| {
                now.checked_add(tachyon_proto::Duration::from_nanos(t.as_nanos() as u64))
            });
            let wakes_at = match (self.deadlines.earliest(), by_timeout) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            shared.set_driver_wakes_at(wakes_at);
        }
        let mut ready = self.ready(shared.now());
        if ready.is_empty() {
            let until_timer = self.deadlines.earliest().map(|t| {
                StdDuration::from_nanos(t.saturating_duration_since(shared.now()).as_nanos() as u64)
            });
            let wait = match (until_timer, timeout) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            if !self.poll(wait) {
                return false;
            }
            ready = self.ready(shared.now());
        }
        while let Some(class) = ready.next() {
            self.serve(shared, class);
            shared.dispatch_listeners();
            if shared.stopped() {
                return false;
            }
            ready = self.ready(shared.now());
            if !ready.is_empty() {
                // More work waits: learn, without blocking, whether a socket of a higher
                // class became readable during that batch, so it goes first.
                if !self.poll(Some(StdDuration::ZERO)) {
                    return false;
                }
                ready = self.ready(shared.now());
            }
        }
        true
    }

    /// The classes with work: readable sockets and due timers.
    fn ready(&self, now: Instant) -> Ready {
        let sockets = SocketId::ALL
            .into_iter()
            .filter(|s| self.readable[s.index()])
            .map(Class::of_socket);
        let timers = TimerClass::ALL
            .into_iter()
            .filter(|&c| self.timer_due(c, now))
            .map(Class::of_timers);
        sockets.chain(timers).collect()
    }

    fn timer_due(&self, class: TimerClass, now: Instant) -> bool {
        self.deadlines.get(class).is_some_and(|t| t <= now)
    }

    /// Waits for readiness (the waker included) up to `timeout`; notes the readable sockets.
    /// `false` when polling failed for good.
    fn poll(&mut self, timeout: Option<StdDuration>) -> bool {
        if let Err(e) = self.poll.poll(&mut self.events, timeout) {
            if e.kind() != std::io::ErrorKind::Interrupted {
                tracing::error!(error = %e, "poll failed; the runtime stops");
                return false;
            }
        }
        for ev in self.events.iter() {
            if let Some(id) = SocketId::from_index(ev.token().0) {
                self.readable[id.index()] = true;
            }
        }
        true
    }

    /// Serves one batch of `class`.
    fn serve(&mut self, shared: &Shared, class: Class) {
        let now = shared.now();
        match class {
            Class::Critical => self.timers(shared, TimerClass::Critical, now),
            Class::UserData => self.receive(shared, Class::UserData),
            Class::Reliability => self.timers(shared, TimerClass::User, now),
            // Announcements and lease checks are due rarely and cost one batch; a storm on
            // the metatraffic sockets does not postpone them.
            Class::Discovery if self.timer_due(TimerClass::Discovery, now) => {
                self.timers(shared, TimerClass::Discovery, now);
            }
            Class::Discovery => self.receive(shared, Class::Discovery),
        }
    }

    /// Runs the due timers of `class` and sends what they made due.
    fn timers(&mut self, shared: &Shared, class: TimerClass, now: Instant) {
        let mut st = shared.lock();
        st.participant.handle_timeout_of(now, class);
        st.flush(shared, now);
        self.deadlines = st.participant.poll_timeouts();
    }

    /// Receives one batch from the next readable socket of `class`, hands it to the
    /// participant under one lock and sends what became due.
    fn receive(&mut self, shared: &Shared, class: Class) {
        let n = SocketId::ALL.len();
        let Some(id) = (0..n)
            .map(|k| SocketId::ALL[(self.cursor + k) % n])
            .find(|&s| self.readable[s.index()] && Class::of_socket(s) == class)
        else {
            return;
        };
        self.cursor = (id.index() + 1) % n;
        match shared.transport.recv_batch(id, &mut self.batch) {
            Ok(got) => {
                if got == 0 || self.batch.drained() {
                    self.readable[id.index()] = false;
                }
                if got == 0 {
                    return;
                }
                let mut st = shared.lock();
                let now = shared.now();
                for (source, bytes) in self.batch.iter() {
                    st.participant.handle_datagram(now, source, bytes);
                }
                st.flush(shared, now);
                self.deadlines = st.participant.poll_timeouts();
            }
            Err(e) => {
                // An ICMP error of an earlier send is reported once, ahead of the queued
                // datagrams: the socket stays readable. Anything else: wait for a new edge.
                if e.kind() != std::io::ErrorKind::ConnectionRefused {
                    self.readable[id.index()] = false;
                }
                tracing::debug!(socket = ?id, error = %e, "receive failed");
            }
        }
    }
}
