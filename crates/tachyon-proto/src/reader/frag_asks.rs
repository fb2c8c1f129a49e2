//! The fragments a reader asked one writer to resend, and whether each may still be on its
//! way.
//!
//! A writer serves a NACK_FRAG after what it is sending (new data goes first), and the repairs
//! then cross the network. Every HEARTBEAT_FRAG or HEARTBEAT that arrives meanwhile was sent
//! before the repairs; answered with everything still missing, it makes the writer send the
//! same fragments again, and those queue behind the first repairs, and so on. One 4 MiB sample
//! through 10 % loss made a writer resend three times the sample that way (tachyon-sim,
//! `tests/large_sample.rs`), and the reader waited for all of it.
//!
//! So a fragment asked for is not asked again while its repair can still come. The ask is
//! *answered* — what is still missing of it was lost — once the reader sees the writer past it:
//! - a later fragment of the same ask arrived (writers resend a request in ascending order);
//! - a repair of a newer ask arrived (writers serve requests in order);
//! - a HEARTBEAT or HEARTBEAT_FRAG arrived after the first of its repairs (writers end a
//!   repair burst with one).
//!
//! An ask nothing answers (the NACK_FRAG was lost, or the writer dropped part of it) is
//! released after twice the smoothed repair round trip — the time from a NACK_FRAG to the first
//! repair of it, measured here on the fragments asked for once only (Karn's rule) — within
//! [`MIN_HOLD`] and [`MAX_HOLD`], and [`FIRST_HOLD`] before the first measurement.

use std::collections::VecDeque;

use tachyon_wire::{FragmentNumber, FragmentNumberSet, SequenceNumber};

use crate::time::{Duration, Instant};

/// Asks remembered per writer; older ones are forgotten (their fragments may be asked again).
const MAX_ASKS: usize = 64;
/// Hold before any repair round trip was measured: the longest, as a writer still sending a
/// large sample's new data serves repairs after it (a lost NACK_FRAG is found sooner, when a
/// newer ask is served).
const FIRST_HOLD: Duration = MAX_HOLD;
/// Shortest hold: below it, timer granularity and scheduling decide, not the network.
const MIN_HOLD: Duration = Duration::from_millis(1);
/// Longest hold: a repair later than this is treated as lost (writers' periodic heartbeats
/// are typically 100 ms apart; a longer hold would let one of them pass unanswered).
const MAX_HOLD: Duration = Duration::from_millis(50);

/// One NACK_FRAG sent.
#[derive(Clone, Copy, Debug)]
struct Ask {
    at: Instant,
    sn: SequenceNumber,
    set: FragmentNumberSet,
    /// The highest fragment of the set received since (0: none yet).
    served_upto: u32,
    /// [`FragAsks::heartbeats`] when its first repair arrived.
    served_at: Option<u64>,
}

/// The NACK_FRAGs recently sent to one writer (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct FragAsks {
    asks: VecDeque<Ask>,
    /// Smoothed repair round trip (`None`: not measured yet).
    srtt: Option<Duration>,
    /// HEARTBEATs and HEARTBEAT_FRAGs received from the writer.
    heartbeats: u64,
    /// When the last of them arrived.
    heartbeat_at: Instant,
    /// When the writer was last heard (a heartbeat or a fragment) while asks were out: the
    /// retransmission timer runs only during an exchange of repairs. (Kept so on purpose:
    /// armed on the first ask of a stream too, it fired while a keep-all writer's repairs
    /// waited behind its new data and tripled what a 4 MiB stream at 10 % loss asked for,
    /// measured on the veth bridge.)
    heard_at: Instant,
}

impl FragAsks {
    /// A HEARTBEAT or HEARTBEAT_FRAG of the writer arrived at `now`.
    pub fn heartbeat(&mut self, now: Instant) {
        if !self.asks.is_empty() {
            self.heartbeats += 1;
            self.heartbeat_at = now;
            self.heard_at = now;
        }
    }

    /// Fragments `first .. first + count` of `sn` arrived at `now`.
    pub fn received(&mut self, now: Instant, sn: SequenceNumber, first: u32, count: u32) {
        if self.asks.is_empty() {
            return;
        }
        self.heard_at = now;
        let mut sample = None;
        for n in first..first.saturating_add(count.max(1)) {
            let f = FragmentNumber(n);
            let heartbeats = self.heartbeats;
            let mut asks = self
                .asks
                .iter_mut()
                .filter(|a| a.sn == sn && a.set.contains(f));
            let Some(oldest) = asks.next() else {
                continue;
            };
            // The repair answers the oldest ask of it: a newer one is not served yet.
            oldest.served_upto = oldest.served_upto.max(n);
            oldest.served_at.get_or_insert(heartbeats);
            let at = oldest.at;
            if asks.next().is_none() && sample.is_none() {
                sample = Some(now.saturating_duration_since(at));
            }
        }
        if let Some(s) = sample {
            // As TCP's SRTT: an eighth of each new sample.
            self.srtt = Some(
                self.srtt
                    .map_or(s, |r| r.saturating_mul(7).saturating_add(s) / 8),
            );
        }
    }

    /// How long an ask nothing answered holds its fragments.
    pub fn hold(&self) -> Duration {
        self.srtt.map_or(FIRST_HOLD, |r| {
            r.saturating_mul(2).clamp(MIN_HOLD, MAX_HOLD)
        })
    }

    /// Whether fragment `f` of `sn` was asked for and its repair may still come at `now`.
    pub fn in_flight(&self, now: Instant, sn: SequenceNumber, f: u32) -> bool {
        let n = FragmentNumber(f);
        let Some(i) = self
            .asks
            .iter()
            .rposition(|a| a.sn == sn && a.set.contains(n))
        else {
            return false;
        };
        let a = &self.asks[i];
        let answered = now.saturating_duration_since(a.at) >= self.hold()
            || a.served_upto > f
            || a.served_at.is_some_and(|h| self.heartbeats > h)
            || self.asks.range(i + 1..).any(|b| b.served_at.is_some())
            || self
                .srtt
                .is_some_and(|r| self.heartbeat_at >= a.at.saturating_add(r));
        !answered
    }

    /// When to ask again for fragments held back now (`None`: the writer has not been heard
    /// for a while — it may be gone — so only its next heartbeat makes the reader ask).
    pub fn retry_at(&self, now: Instant) -> Option<Instant> {
        (now.saturating_duration_since(self.heard_at) <= MAX_HOLD * 4)
            .then(|| now.saturating_add(self.hold()))
    }

    /// A NACK_FRAG asking for `set` of `sn` was sent at `now`.
    pub fn asked(&mut self, now: Instant, sn: SequenceNumber, set: FragmentNumberSet) {
        while self.asks.len() >= MAX_ASKS
            || self
                .asks
                .front()
                .is_some_and(|a| now.saturating_duration_since(a.at) > MAX_HOLD)
        {
            self.asks.pop_front();
        }
        self.asks.push_back(Ask {
            at: now,
            sn,
            set,
            served_upto: 0,
            served_at: None,
        });
    }

    /// Forgets the asks of samples below `sn` (delivered or given up).
    pub fn forget_below(&mut self, sn: SequenceNumber) {
        if self.asks.iter().any(|a| a.sn < sn) {
            self.asks.retain(|a| a.sn >= sn);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(base: u32, ns: &[u32]) -> FragmentNumberSet {
        let mut s = FragmentNumberSet::empty(FragmentNumber(base));
        for &n in ns {
            s.insert(FragmentNumber(n));
        }
        s
    }

    fn at_ms(ms: u64) -> Instant {
        Instant::ZERO + Duration::from_millis(ms)
    }

    const SN: SequenceNumber = SequenceNumber(1);

    #[test]
    fn nothing_asked_is_nothing_in_flight() {
        let a = FragAsks::default();
        assert!(!a.in_flight(at_ms(0), SN, 1));
    }

    #[test]
    fn an_ask_holds_its_fragments_until_the_first_hold_passes() {
        let mut a = FragAsks::default();
        a.asked(at_ms(0), SN, set(3, &[3, 7]));
        assert!(a.in_flight(at_ms(1), SN, 3));
        assert!(a.in_flight(at_ms(49), SN, 7));
        assert!(
            !a.in_flight(at_ms(50), SN, 7),
            "released after the first hold"
        );
        assert!(!a.in_flight(at_ms(1), SN, 4), "never asked");
        assert!(
            !a.in_flight(at_ms(1), SequenceNumber(2), 3),
            "another sample"
        );
    }

    #[test]
    fn a_later_fragment_of_the_ask_answers_the_earlier_ones() {
        let mut a = FragAsks::default();
        a.asked(at_ms(0), SN, set(3, &[3, 7, 9]));
        a.received(at_ms(2), SN, 7, 1);
        assert!(!a.in_flight(at_ms(2), SN, 3), "3 was resent before 7: lost");
        assert!(a.in_flight(at_ms(2), SN, 9), "9 may still come");
    }

    #[test]
    fn a_heartbeat_after_the_repairs_answers_the_ask() {
        let mut a = FragAsks::default();
        a.asked(at_ms(0), SN, set(3, &[3, 9]));
        a.heartbeat(at_ms(1));
        assert!(
            a.in_flight(at_ms(1), SN, 9),
            "a heartbeat sent before the repairs"
        );
        a.received(at_ms(4), SN, 3, 1);
        assert!(a.in_flight(at_ms(4), SN, 9));
        a.heartbeat(at_ms(4));
        assert!(!a.in_flight(at_ms(4), SN, 9), "the burst ended without 9");
    }

    #[test]
    fn a_heartbeat_a_round_trip_after_an_ask_nothing_served_answers_it() {
        let mut a = FragAsks::default();
        a.asked(at_ms(0), SN, set(1, &[1]));
        a.received(at_ms(4), SN, 1, 1);
        // Round trip 4 ms. An ask whose every repair was lost:
        a.asked(at_ms(10), SN, set(7, &[7]));
        a.heartbeat(at_ms(12));
        assert!(
            a.in_flight(at_ms(12), SN, 7),
            "too early to be after the repairs"
        );
        a.heartbeat(at_ms(14));
        assert!(!a.in_flight(at_ms(14), SN, 7));
    }

    #[test]
    fn a_retry_is_due_after_the_hold_while_the_writer_is_heard() {
        let mut a = FragAsks::default();
        a.asked(at_ms(0), SN, set(1, &[1, 2]));
        a.received(at_ms(4), SN, 1, 1);
        assert_eq!(a.retry_at(at_ms(5)), Some(at_ms(13)));
        assert_eq!(
            a.retry_at(at_ms(300)),
            None,
            "not heard for 296 ms: gone, perhaps"
        );
    }

    #[test]
    fn a_repair_of_a_newer_ask_answers_the_older() {
        let mut a = FragAsks::default();
        a.asked(at_ms(0), SN, set(3, &[3]));
        a.asked(at_ms(1), SN, set(20, &[20]));
        assert!(a.in_flight(at_ms(2), SN, 3));
        a.received(at_ms(2), SN, 20, 1);
        assert!(!a.in_flight(at_ms(2), SN, 3));
    }

    #[test]
    fn the_hold_follows_the_measured_round_trip_within_bounds() {
        let mut a = FragAsks::default();
        assert_eq!(a.hold(), FIRST_HOLD);
        a.asked(at_ms(0), SN, set(1, &[1, 2]));
        a.received(at_ms(4), SN, 1, 1);
        assert_eq!(a.hold(), Duration::from_millis(8));
        // Asked twice: the arrival cannot tell which ask it answers, so it is not measured.
        a.asked(at_ms(5), SN, set(2, &[2]));
        a.received(at_ms(40), SN, 2, 1);
        assert_eq!(a.hold(), Duration::from_millis(8));
        let mut fast = FragAsks::default();
        fast.asked(at_ms(0), SN, set(1, &[1]));
        fast.received(Instant::ZERO + Duration::from_micros(50), SN, 1, 1);
        assert_eq!(fast.hold(), MIN_HOLD);
    }

    #[test]
    fn asks_are_bounded_and_forgotten_with_their_samples() {
        let mut a = FragAsks::default();
        for i in 0..(MAX_ASKS as u32 + 10) {
            a.asked(at_ms(0), SN, set(i + 1, &[i + 1]));
        }
        assert_eq!(a.asks.len(), MAX_ASKS);
        assert!(!a.in_flight(at_ms(0), SN, 1), "the oldest were forgotten");
        a.forget_below(SequenceNumber(2));
        assert!(a.asks.is_empty());
    }
}
