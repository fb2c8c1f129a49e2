//! The participant's writers or readers by index, each marked when it may have something
//! to send, or events to hand out.
//!
//! Any mutable access to an endpoint (a write, a received submessage, a timer, a match)
//! can give it a datagram to send, so it queues the endpoint; the transmit scan asks the
//! queued endpoints only, in turn, and one with nothing to send leaves the queue until it
//! is touched again. A flush after each sample therefore looks at the endpoint that sample
//! concerned, not at every builtin and user endpoint of the participant (callgrind: the
//! full scan was a sixth of the user-space instructions of a 32-byte round trip).
//!
//! Time alone can give an endpoint something to send (a delayed repair or ACKNACK falls
//! due, a batch stops waiting): an endpoint that leaves the queue says when asking again
//! could find something, and the participant queues them all again from then on
//! (`tx_recheck_at`), so polling at that time sends it with or without `handle_timeout`.
//!
//! Events are found the same way: only an endpoint reached mutably since its events were
//! last taken can have new ones, so `poll_event` looks at those, in index order. And so are
//! deadlines: a receive thread asks for the earliest timer of the endpoints changed since it
//! last asked (`Participant::changed_user_poll_timeout`), not of every endpoint.

use std::collections::VecDeque;

use crate::event::Event;

#[derive(Debug)]
pub(crate) struct Slots<T> {
    items: Vec<Option<T>>,
    /// Endpoints that may have something to send, oldest mark first; each at most once.
    ready: VecDeque<usize>,
    /// Endpoints reached mutably since their events were last taken, each at most once;
    /// sorted highest first when `touched_sorted`.
    touched: Vec<usize>,
    touched_sorted: bool,
    /// Endpoints reached mutably since [`take_changed`](Self::take_changed) last ran.
    changed: Vec<usize>,
    /// Per endpoint, in which of the three lists it is ([`QUEUED`], [`TOUCHED`],
    /// [`CHANGED`]): one byte, so marking an endpoint reads and writes one place.
    flags: Vec<u8>,
}

/// In `ready`.
const QUEUED: u8 = 1;
/// In `touched`.
const TOUCHED: u8 = 2;
/// In `changed`.
const CHANGED: u8 = 4;

impl<T> Default for Slots<T> {
    fn default() -> Self {
        Slots {
            items: Vec::new(),
            ready: VecDeque::new(),
            touched: Vec::new(),
            touched_sorted: true,
            changed: Vec::new(),
            flags: Vec::new(),
        }
    }
}

impl<T> Slots<T> {
    /// Adds an endpoint (queued: a new endpoint may announce itself); returns its index.
    pub(crate) fn push(&mut self, item: T) -> usize {
        let i = self.items.len();
        self.items.push(Some(item));
        self.flags.push(0);
        self.mark(i);
        i
    }

    /// Empties slot `i`.
    pub(crate) fn remove(&mut self, i: usize) {
        if let Some(slot) = self.items.get_mut(i) {
            *slot = None;
        }
    }

    pub(crate) fn get(&self, i: usize) -> Option<&T> {
        self.items.get(i)?.as_ref()
    }

    /// Endpoint `i`, queued for the transmit scan.
    pub(crate) fn get_mut(&mut self, i: usize) -> Option<&mut T> {
        if self.items.get(i)?.is_some() {
            self.mark(i);
        }
        self.items.get_mut(i)?.as_mut()
    }

    /// Endpoint `i`, touched (its events and timers are looked at) but not queued for the
    /// transmit scan: for a call that gives it nothing to send unless it says so
    /// ([`requeue`](Self::requeue) then).
    pub(crate) fn get_mut_touched(&mut self, i: usize) -> Option<&mut T> {
        if self.items.get(i)?.is_some() {
            self.touch(i);
        }
        self.items.get_mut(i)?.as_mut()
    }

    /// Endpoint `i`, not queued: for a call that cannot give it anything to send or any
    /// event unless it says so ([`requeue`](Self::requeue) then).
    pub(crate) fn get_mut_quiet(&mut self, i: usize) -> Option<&mut T> {
        self.items.get_mut(i)?.as_mut()
    }

    /// Whether no endpoint is queued or touched: a flush would find nothing to send and no
    /// event (timers aside).
    pub(crate) fn is_quiet(&self) -> bool {
        self.ready.is_empty() && self.touched.is_empty()
    }

    /// Every endpoint.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &T> {
        self.items.iter().flatten()
    }

    /// Every endpoint with its index.
    pub(crate) fn enumerate(&self) -> impl Iterator<Item = (usize, &T)> {
        self.items
            .iter()
            .enumerate()
            .filter_map(|(i, s)| s.as_ref().map(|s| (i, s)))
    }

    /// Queues every endpoint for the transmit scan.
    pub(crate) fn mark_all(&mut self) {
        for i in 0..self.items.len() {
            if self.items[i].is_some() {
                self.mark(i);
            }
        }
    }

    /// Every endpoint, each queued for the transmit scan.
    pub(crate) fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.mark_all();
        self.items.iter_mut().flatten()
    }

    /// Every endpoint with its index, each queued for the transmit scan.
    pub(crate) fn enumerate_mut(&mut self) -> impl Iterator<Item = (usize, &mut T)> {
        self.mark_all();
        self.items
            .iter_mut()
            .enumerate()
            .filter_map(|(i, s)| s.as_mut().map(|s| (i, s)))
    }

    /// Runs `f` on the endpoints at `indices` (emptied slots skipped) without queueing them:
    /// only for what cannot give one something to send (renewing the liveliness of a remote
    /// participant's writers). `f` says whether it raised an event: the endpoint is then
    /// touched.
    pub(crate) fn for_each_of(&mut self, indices: &[usize], mut f: impl FnMut(&mut T) -> bool) {
        for &i in indices {
            if let Some(item) = self.items.get_mut(i).and_then(Option::as_mut) {
                if f(item) {
                    self.touch(i);
                }
            }
        }
    }

    /// Every endpoint with its index.
    pub(crate) fn iter_indexed(&self) -> impl Iterator<Item = (usize, &T)> {
        let items = self.items.iter().enumerate();
        items.filter_map(|(i, item)| item.as_ref().map(|item| (i, item)))
    }

    /// The lowest-numbered endpoint that may have events, still marked so until
    /// [`untouch`](Self::untouch).
    pub(crate) fn next_touched(&mut self) -> Option<(usize, Option<&mut T>)> {
        if !self.touched_sorted {
            self.touched.sort_unstable_by(|a, b| b.cmp(a));
            self.touched_sorted = true;
        }
        let i = *self.touched.last()?;
        Some((i, self.items.get_mut(i).and_then(Option::as_mut)))
    }

    /// Whether a touched endpoint satisfies `f` (the touched are few: those reached since
    /// the last flush).
    pub(crate) fn any_touched(&self, f: impl Fn(&T) -> bool) -> bool {
        self.touched
            .iter()
            .any(|&i| self.items.get(i).and_then(Option::as_ref).is_some_and(&f))
    }

    /// The next event of a touched user endpoint, lowest index first; `next` gives an
    /// endpoint's next event, `builtin` whether it is a builtin endpoint. Builtin endpoints'
    /// events are discovery's business: taken and dropped. An endpoint without more events
    /// is no longer touched.
    pub(crate) fn next_user_event(
        &mut self,
        builtin: impl Fn(&T) -> bool,
        mut next: impl FnMut(&mut T) -> Option<Event>,
    ) -> Option<Event> {
        while let Some((i, item)) = self.next_touched() {
            if let Some(item) = item {
                let keep = !builtin(item);
                while let Some(e) = next(item) {
                    if keep {
                        return Some(e);
                    }
                }
            }
            self.untouch(i);
        }
        None
    }

    /// Endpoint `i` (the one [`next_touched`](Self::next_touched) gave) has no more events.
    pub(crate) fn untouch(&mut self, i: usize) {
        if self.touched.last() == Some(&i) {
            self.touched.pop();
            if let Some(f) = self.flags.get_mut(i) {
                *f &= !TOUCHED;
            }
        }
    }

    /// How many endpoints are queued.
    pub(crate) fn queued(&self) -> usize {
        self.ready.len()
    }

    /// The next queued endpoint, out of the queue; [`requeue`](Self::requeue) puts it back
    /// at the end (it sent something and may have more).
    pub(crate) fn next_queued(&mut self) -> Option<(usize, Option<&mut T>)> {
        let i = self.ready.pop_front()?;
        if let Some(f) = self.flags.get_mut(i) {
            *f &= !QUEUED;
        }
        Some((i, self.items.get_mut(i).and_then(Option::as_mut)))
    }

    /// The endpoint [`next_queued`](Self::next_queued) would hand out (`Some(None)`: an
    /// emptied slot).
    pub(crate) fn front_queued(&self) -> Option<Option<&T>> {
        let &i = self.ready.front()?;
        Some(self.items.get(i).and_then(Option::as_ref))
    }

    /// Takes endpoint `i` out of the queue if it was queued last (it was asked already and
    /// has nothing more to send); `false` if it is not there.
    pub(crate) fn unqueue_last(&mut self, i: usize) -> bool {
        if self.ready.back() != Some(&i) {
            return false;
        }
        self.ready.pop_back();
        if let Some(f) = self.flags.get_mut(i) {
            *f &= !QUEUED;
        }
        true
    }

    pub(crate) fn requeue(&mut self, i: usize) {
        self.mark(i);
    }

    fn mark(&mut self, i: usize) {
        if let Some(f) = self.flags.get_mut(i) {
            if *f & QUEUED == 0 {
                *f |= QUEUED;
                self.ready.push_back(i);
            }
        }
        self.touch(i);
    }

    /// Runs `f` on every endpoint reached mutably since the last call (an emptied slot is
    /// skipped), and forgets them.
    pub(crate) fn take_changed(&mut self, mut f: impl FnMut(&T)) {
        for i in self.changed.drain(..) {
            if let Some(f) = self.flags.get_mut(i) {
                *f &= !CHANGED;
            }
            if let Some(Some(item)) = self.items.get(i) {
                f(item);
            }
        }
    }

    fn touch(&mut self, i: usize) {
        let Some(f) = self.flags.get_mut(i) else {
            return;
        };
        let was = *f;
        *f |= TOUCHED | CHANGED;
        if was & CHANGED == 0 {
            self.changed.push(i);
        }
        if was & TOUCHED == 0 {
            if self.touched.last().is_some_and(|&last| last < i) {
                self.touched_sorted = false;
            }
            self.touched.push(i);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Slots;

    fn drain(s: &mut Slots<u32>) -> Vec<usize> {
        let mut out = Vec::new();
        while let Some((i, _)) = s.next_queued() {
            out.push(i);
        }
        out
    }

    #[test]
    fn mutable_access_queues_once_and_reads_do_not() {
        let mut s = Slots::default();
        let a = s.push(1);
        let b = s.push(2);
        assert_eq!(drain(&mut s), vec![a, b]);
        assert_eq!(s.get(b), Some(&2));
        assert_eq!(s.iter().count(), 2);
        assert_eq!(s.queued(), 0);
        *s.get_mut(b).unwrap() += 1;
        *s.get_mut(b).unwrap() += 1;
        assert_eq!(drain(&mut s), vec![b]);
        s.for_each_of(&[a, b], |v| {
            *v += 1;
            false
        });
        assert_eq!(s.queued(), 0);
        s.iter_mut().for_each(|v| *v += 1);
        assert_eq!(drain(&mut s), vec![a, b]);
    }

    #[test]
    fn requeued_endpoints_take_turns_and_removed_ones_leave() {
        let mut s = Slots::default();
        let a = s.push(1);
        let b = s.push(2);
        let (i, _) = s.next_queued().unwrap();
        s.requeue(i);
        assert_eq!(drain(&mut s), vec![b, a]);
        s.get_mut(a);
        s.remove(a);
        assert!(s.get_mut(a).is_none());
        let (i, item) = s.next_queued().unwrap();
        assert_eq!((i, item), (a, None));
        assert_eq!(s.queued(), 0);
        assert_eq!(s.enumerate().map(|(i, _)| i).collect::<Vec<_>>(), vec![b]);
    }

    #[test]
    fn events_are_looked_for_in_touched_endpoints_lowest_first() {
        let mut s = Slots::default();
        for v in 0..4 {
            s.push(v);
        }
        let mut seen = Vec::new();
        while let Some((i, _)) = s.next_touched() {
            seen.push(i);
            s.untouch(i);
        }
        assert_eq!(seen, vec![0, 1, 2, 3]);
        s.get_mut(3);
        s.get_mut(1);
        s.for_each_of(&[0, 1, 2, 3], |v| *v == 2);
        let mut seen = Vec::new();
        while let Some((i, item)) = s.next_touched() {
            seen.push((i, item.copied()));
            s.untouch(i);
        }
        assert_eq!(seen, vec![(1, Some(1)), (2, Some(2)), (3, Some(3))]);
    }

    #[test]
    fn changed_endpoints_are_handed_out_once() {
        let mut s = Slots::default();
        let a = s.push(10);
        let b = s.push(20);
        let mut seen = Vec::new();
        s.take_changed(|v| seen.push(*v));
        assert_eq!(seen, vec![10, 20]);
        s.take_changed(|v| seen.push(*v));
        assert_eq!(seen.len(), 2, "nothing changed since");
        s.get_mut(b);
        s.get_mut(b);
        s.remove(a);
        s.for_each_of(&[a, b], |_| true);
        assert_eq!(
            s.iter_indexed().map(|(i, v)| (i, *v)).collect::<Vec<_>>(),
            vec![(b, 20)]
        );
        let mut seen = Vec::new();
        s.take_changed(|v| seen.push(*v));
        assert_eq!(seen, vec![20]);
    }
}
