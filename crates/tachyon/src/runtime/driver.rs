//! The driver: waits for datagrams and the next protocol timer, and serves what is ready in
//! the executor's priority order ([`executor`](super::executor)), one bounded batch at a
//! time. A driver thread runs it in a loop; in single-thread mode the application runs it
//! with `DomainParticipant::run_once`.

use std::time::Duration as StdDuration;

use mio::unix::SourceFd;
use mio::{Events, Interest, Poll, Token};
use tachyon_proto::{Instant, TimerClass, TimerDeadlines};
use tachyon_transport::{RecvBatch, RxSource};

use super::executor::{Class, Ready};
use super::lanes::{CRITICAL, MAIN};
use super::{receive, Shared};

/// The waker's token.
pub(super) const WAKE: Token = Token(usize::MAX);

/// Datagrams taken per batch (one `recvmmsg`): the most a higher class waits for.
pub(crate) const BATCH: usize = 32;

/// The critical lane's next timer, when the driver serves it (no timers thread of its own).
fn lane_deadline(shared: &Shared) -> Option<Instant> {
    if shared.lane_ids().len() <= CRITICAL || shared.lane_timers.get().is_some() {
        return None;
    }
    shared.lock_lane(CRITICAL).participant.poll_timeout()
}

/// The event loop of one participant: its poller, receive buffers and what it knows is ready.
pub(crate) struct Driver {
    poll: Poll,
    events: Events,
    batch: RecvBatch,
    /// Every receive source of every transport, with its transport's index; a source's
    /// mio token is its index here.
    sources: Vec<(usize, RxSource)>,
    /// Sources reported readable and not drained since (readiness is edge-triggered).
    readable: Vec<bool>,
    /// Where the next search for a readable source of a class starts (fairness within it).
    cursor: usize,
    /// The protocol's timer deadlines, as of the last time the driver held the main lane's
    /// lock.
    deadlines: TimerDeadlines,
    /// The critical lane's next timer, as of the last time the driver held its lock.
    lane_deadline: Option<Instant>,
    /// Indices of a batch's datagrams that concern the other lane too.
    forward: Vec<usize>,
    /// How long to poll without blocking before blocking, when out of work
    /// ([`ThreadSettings::busy_poll`](crate::config::ThreadSettings::busy_poll)).
    pub(super) busy_poll: Option<StdDuration>,
    /// The last poll reported the waker (a user call wants the turn started again).
    woken: bool,
    /// How often, and when next, the transports' upkeep is due ([`Transport::upkeep`]:
    /// what their receive threads, which sleep without a timeout, leave to the driver).
    ///
    /// [`Transport::upkeep`]: tachyon_transport::Transport::upkeep
    upkeep: Option<(StdDuration, Instant)>,
}

impl Driver {
    /// A driver watching `sources` (receive sources of `shared`'s transports, with their
    /// transport's index) on `poll` (whose waker is `shared`'s).
    pub(super) fn new(shared: &Shared, poll: Poll, sources: Vec<(usize, RxSource)>) -> Driver {
        for (token, (t, s)) in sources.iter().enumerate() {
            let name = shared.transports.all()[*t].name();
            let Some(fd) = s.fd else {
                tracing::error!(
                    transport = name,
                    source = s.id,
                    "a receive source without a descriptor needs a thread of its own; it will \
                     not receive"
                );
                continue;
            };
            if let Err(e) =
                poll.registry()
                    .register(&mut SourceFd(&fd), Token(token), Interest::READABLE)
            {
                tracing::error!(transport = name, source = s.id, error = %e,
                    "cannot watch a receive source; it will not receive");
            }
        }
        let readable = vec![false; sources.len()];
        Driver {
            poll,
            events: Events::with_capacity(16),
            // Receive slots as large as a UDP datagram can be: peers may send more than we do.
            batch: RecvBatch::new(BATCH, tachyon_transport::MAX_UDP_PAYLOAD),
            sources,
            readable,
            cursor: 0,
            deadlines: TimerDeadlines::default(),
            lane_deadline: None,
            forward: Vec::with_capacity(BATCH),
            busy_poll: None,
            woken: false,
            upkeep: shared
                .transports
                .upkeep_interval()
                .map(|every| (every, shared.now() + every)),
        }
    }

    /// One round: waits up to `timeout` (`None`: as long as no timer is due) for a socket
    /// or a timer, unless work is ready already, then serves ready work in priority order,
    /// one batch at a time, until none is left. Returns `false` once the runtime stopped.
    pub(super) fn turn(&mut self, shared: &Shared, timeout: Option<StdDuration>) -> bool {
        if shared.stopped() {
            return false;
        }
        // Datagrams a critical receive thread handed to the main lane (threads mode).
        let inbox = shared.take_inbox(MAIN);
        if !inbox.datagrams.is_empty() {
            let datagrams = inbox.datagrams.iter().map(|(from, b)| (from, b.as_slice()));
            receive::handle(shared, MAIN, datagrams.enumerate(), None);
        }
        // Listeners queued by a user thread's flush (which woke us).
        shared.dispatch_listeners();
        // A user call may have armed a timer since we last looked. When we will wake is
        // published under the same lock, so a later call arming an earlier timer wakes us.
        let now = shared.now();
        if let Some((every, at)) = &mut self.upkeep {
            if *at <= now {
                shared.transports.upkeep();
                *at = now + *every;
            }
        }
        self.lane_deadline = lane_deadline(shared);
        {
            let st = shared.lock();
            self.deadlines = st.participant.poll_timeouts();
            let by_timeout = timeout.and_then(|t| {
                now.checked_add(tachyon_proto::Duration::from_nanos(t.as_nanos() as u64))
            });
            let wakes_at = [self.earliest(), by_timeout].into_iter().flatten().min();
            shared.set_driver_wakes_at(wakes_at);
        }
        let mut ready = self.ready(shared.now());
        if ready.is_empty() {
            let until_timer = self.earliest().map(|t| {
                StdDuration::from_nanos(t.saturating_duration_since(shared.now()).as_nanos() as u64)
            });
            let mut wait = match (until_timer, timeout) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            self.woken = false;
            if let Some(spin) = self.busy_poll {
                let Some((r, left)) = self.spin(shared, spin, wait) else {
                    return false;
                };
                ready = r;
                wait = left;
            }
            if ready.is_empty() && !self.woken {
                if !self.poll(wait) {
                    return false;
                }
                ready = self.ready(shared.now());
            }
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

    /// Busy polling: polls without blocking until work is ready, the waker rings, `spin`
    /// has passed or `wait` would have ended. Returns the work ready and what is left of
    /// `wait`; `None` when polling failed for good.
    fn spin(
        &mut self,
        shared: &Shared,
        spin: StdDuration,
        wait: Option<StdDuration>,
    ) -> Option<(Ready, Option<StdDuration>)> {
        let start = std::time::Instant::now();
        let budget = wait.map_or(spin, |w| w.min(spin));
        loop {
            if !self.poll(Some(StdDuration::ZERO)) {
                return None;
            }
            let ready = self.ready(shared.now());
            let spent = start.elapsed();
            if !ready.is_empty() || self.woken || shared.stopped() || spent >= budget {
                return Some((ready, wait.map(|w| w.saturating_sub(spent))));
            }
            // No PAUSE: the non-blocking poll paces the loop (as `receive.rs`'s busy poll).
        }
    }

    /// Learns both lanes' next timers again (after a batch changed them).
    fn refresh_deadlines(&mut self, shared: &Shared) {
        self.lane_deadline = lane_deadline(shared);
        self.deadlines = shared.lock().participant.poll_timeouts();
    }

    /// The classes with work: readable sockets and due timers.
    fn ready(&self, now: Instant) -> Ready {
        let sockets = self
            .sources
            .iter()
            .zip(&self.readable)
            .filter(|(_, r)| **r)
            .map(|((_, s), _)| Class::of_traffic(s.traffic));
        let timers = TimerClass::ALL
            .into_iter()
            .filter(|&c| self.timer_due(c, now))
            .map(Class::of_timers);
        // The critical lane's timers are the executor's first class.
        let lane = self.lane_due(now).then_some(Class::Critical);
        sockets.chain(timers).chain(lane).collect()
    }

    /// The earliest timer of either lane, or the transports' upkeep.
    fn earliest(&self) -> Option<Instant> {
        let upkeep = self.upkeep.map(|(_, at)| at);
        [self.deadlines.earliest(), self.lane_deadline, upkeep]
            .into_iter()
            .flatten()
            .min()
    }

    fn lane_due(&self, now: Instant) -> bool {
        self.lane_deadline.is_some_and(|t| t <= now)
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
        self.woken = false;
        for ev in self.events.iter() {
            if ev.token() == WAKE {
                self.woken = true;
            } else if let Some(r) = self.readable.get_mut(ev.token().0) {
                *r = true;
            }
        }
        true
    }

    /// Serves one batch of `class`.
    fn serve(&mut self, shared: &Shared, class: Class) {
        let now = shared.now();
        match class {
            Class::Critical if self.lane_due(now) => self.lane_timers(shared, now),
            Class::Critical if self.timer_due(TimerClass::Critical, now) => {
                self.timers(shared, TimerClass::Critical, now);
            }
            Class::Critical => self.receive(shared, Class::Critical),
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

    /// Runs the critical lane's due timers and sends what they made due.
    fn lane_timers(&mut self, shared: &Shared, now: Instant) {
        let mut st = shared.lock_lane(CRITICAL);
        st.participant.handle_timeout(now);
        st.flush(shared, now);
        self.lane_deadline = st.participant.poll_timeout();
    }

    /// Runs the due timers of `class` (of the main lane) and sends what they made due.
    fn timers(&mut self, shared: &Shared, class: TimerClass, now: Instant) {
        let mut st = shared.lock();
        st.participant.handle_timeout_of(now, class);
        st.flush(shared, now);
        self.deadlines = st.participant.poll_timeouts();
    }

    /// Receives one batch from the next readable source of `class`, hands it to the
    /// participant under one lock and queues what became due (sent once the lock is
    /// released).
    fn receive(&mut self, shared: &Shared, class: Class) {
        let n = self.sources.len();
        let Some(k) = (0..n)
            .map(|k| (self.cursor + k) % n)
            .find(|&k| self.readable[k] && Class::of_traffic(self.sources[k].1.traffic) == class)
        else {
            return;
        };
        self.cursor = (k + 1) % n;
        let (t, source) = self.sources[k];
        let transport = &shared.transports.all()[t];
        match transport.receive(source.id, &mut self.batch) {
            Ok(got) => {
                if got == 0 || self.batch.drained() {
                    self.readable[k] = false;
                }
                if got == 0 {
                    return;
                }
                let lane = shared.lane_for(source.traffic);
                self.forward.clear();
                let batch = &self.batch;
                receive::handle(
                    shared,
                    lane,
                    batch.iter().enumerate(),
                    Some(&mut self.forward),
                );
                // The other lane's share: handled here when the driver serves that lane too,
                // else (threads mode) handed to its thread.
                if !self.forward.is_empty() {
                    let other = if lane == MAIN { CRITICAL } else { MAIN };
                    let only = self.forward.iter().map(|&i| batch.datagram(i));
                    shared.forward_datagrams(other, only);
                }
                transport.handled(source.id);
                self.refresh_deadlines(shared);
            }
            Err(e) => {
                // An ICMP error of an earlier send is reported once, ahead of the queued
                // datagrams: the source stays readable. Anything else: wait for a new edge.
                if e.kind() != std::io::ErrorKind::ConnectionRefused {
                    self.readable[k] = false;
                }
                tracing::debug!(transport = transport.name(), source = source.id, error = %e,
                    "receive failed");
            }
        }
    }
}
