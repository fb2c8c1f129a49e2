//! Coherent sets on the reader side (RTPS 2.5 8.7.6): the coherent-set parameters of a
//! received DATA, and [`SetAssembly`], which holds one writer's open set back until it ends
//! and says whether every sample of it arrived.
//!
//! Changes reach the assembly in sequence-number order (after the proxy's reordering), with
//! the holes the reader knows of (GAPs, best-effort losses, skipped history). A set ends
//! with an end marker, a sample of another set, or a sample outside any set; a HEARTBEAT
//! never ends one. A set is complete when its first sample (sequence number = the set's
//! name) and every later one up to its end arrived.

use tachyon_wire::SequenceNumber;

use super::inline::InlineParams;
use super::proxy::Received;
use crate::history::coherent::decode_sequence_number;
use crate::history::PublisherSet;

/// Most samples one open set may hold back; a longer set is dropped (counted incomplete).
pub(crate) const MAX_SET_SAMPLES: usize = 1 << 16;

/// What the inline QoS of a DATA says about coherent sets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum SetParam {
    /// No PID_COHERENT_SET: outside any set.
    #[default]
    None,
    /// A sample of the set whose first sample has this sequence number.
    Member(SequenceNumber),
    /// An end marker (PID_COHERENT_SET = SEQUENCENUMBER_UNKNOWN), with Tachyon's group
    /// parameter when the writer is Tachyon's.
    End(Option<(PublisherSet, Option<SequenceNumber>)>),
    /// A coherent-set parameter that cannot be used.
    Malformed,
}

/// The coherent-set parameters of an inline QoS list; the vendor-specific one is read only
/// from Tachyon writers.
pub(crate) fn set_param(q: &InlineParams<'_>, from_tachyon: bool) -> SetParam {
    let Some(v) = q.coherent_set else {
        return SetParam::None;
    };
    let big = q.big_endian;
    match decode_sequence_number(v, big) {
        Some(sn) if sn == SequenceNumber::UNKNOWN => {
            let group = if from_tachyon {
                q.coherent_group.and_then(|v| PublisherSet::decode(v, big))
            } else {
                None
            };
            SetParam::End(group)
        }
        Some(sn) if sn.0 > 0 => SetParam::Member(sn),
        _ => SetParam::Malformed,
    }
}

/// A writer's set that ended: its samples in order, and whether all arrived.
#[derive(Debug)]
pub(crate) struct Finished {
    /// Every sample of the set arrived.
    pub complete: bool,
    /// The samples, in the writer's order.
    pub changes: Vec<Received>,
    /// The publisher-wide set it is part of (Tachyon writers' end markers).
    pub publisher: Option<PublisherSet>,
}

/// The set of one writer being received.
#[derive(Debug)]
struct OpenSet {
    set: SequenceNumber,
    complete: bool,
    changes: Vec<Received>,
}

/// One writer's coherent set being assembled (held by its proxy).
#[derive(Debug, Default)]
pub(crate) struct SetAssembly {
    open: Option<OpenSet>,
}

impl SetAssembly {
    /// The next change in order, `sn`, in set `set` (`None`: outside any set). Returns the
    /// set it ended, if any, and the change back when it is outside any set (to deliver
    /// after the ended set).
    pub fn change(
        &mut self,
        sn: SequenceNumber,
        set: Option<SequenceNumber>,
        c: Received,
    ) -> (Option<Finished>, Option<Received>) {
        let Some(set) = set else {
            return (self.close(None), Some(c));
        };
        if let Some(open) = self.open.as_mut().filter(|o| o.set == set) {
            if open.changes.len() >= MAX_SET_SAMPLES {
                open.complete = false;
                open.changes.clear();
            } else if open.complete {
                open.changes.push(c);
            }
            return (None, None);
        }
        let ended = self.close(None);
        self.open = Some(OpenSet {
            set,
            // Joined after the set's first sample: it cannot be whole.
            complete: sn == set,
            changes: vec![c],
        });
        (ended, None)
    }

    /// A hole in the writer's sequence (GAP, loss): the open set cannot be whole.
    pub fn hole(&mut self) {
        if let Some(open) = &mut self.open {
            open.complete = false;
            open.changes.clear();
        }
    }

    /// An end marker; `group` is Tachyon's group parameter (the publisher's set and where
    /// this writer's part started). Returns the ended set; with the group parameter also
    /// an empty part, or a part this reader missed entirely (incomplete).
    pub fn end(
        &mut self,
        group: Option<(PublisherSet, Option<SequenceNumber>)>,
    ) -> Option<Finished> {
        let (publisher, part) = match group {
            Some((p, part)) => (Some(p), part),
            None => (None, None),
        };
        let open_set = self.open.as_ref().map(|o| o.set);
        match self.close(publisher) {
            Some(mut f) => {
                if publisher.is_some() && part != open_set {
                    // The writer's part started elsewhere: the open set is not all of it.
                    f.complete = false;
                    f.changes.clear();
                }
                Some(f)
            }
            None => publisher.map(|p| Finished {
                complete: part.is_none(),
                changes: Vec::new(),
                publisher: Some(p),
            }),
        }
    }

    fn close(&mut self, publisher: Option<PublisherSet>) -> Option<Finished> {
        let open = self.open.take()?;
        Some(Finished {
            complete: open.complete,
            changes: if open.complete {
                open.changes
            } else {
                Vec::new()
            },
            publisher,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::{ChangeKind, Payload};
    use tachyon_cdr::KeyHash;
    use tachyon_wire::{EntityId, EntityKind, Time};

    fn c() -> Received {
        Received {
            kind: ChangeKind::Alive,
            instance: KeyHash::default(),
            source_timestamp: Time::ZERO,
            payload: Payload::from(vec![1u8]),
            set: None,
        }
    }

    fn publisher(n: i64) -> PublisherSet {
        PublisherSet {
            group: EntityId::new([0, 0, 1], EntityKind::USER_WRITER_GROUP),
            number: SequenceNumber(n),
            writers: 2,
        }
    }

    const S: fn(i64) -> SequenceNumber = SequenceNumber;

    #[test]
    fn a_whole_set_ends_with_its_marker() {
        let mut a = SetAssembly::default();
        assert!(a.change(S(1), Some(S(1)), c()).0.is_none());
        assert!(a.change(S(2), Some(S(1)), c()).0.is_none());
        let f = a.end(None).expect("ended");
        assert!(f.complete);
        assert_eq!(f.changes.len(), 2);
        assert!(a.end(None).is_none(), "a marker without a set is ignored");
    }

    #[test]
    fn a_set_joined_late_or_with_a_hole_is_incomplete() {
        let mut a = SetAssembly::default();
        a.change(S(5), Some(S(4)), c());
        let f = a.end(None).expect("ended");
        assert!(!f.complete && f.changes.is_empty());

        a.change(S(7), Some(S(7)), c());
        a.hole();
        a.change(S(9), Some(S(7)), c());
        let (ended, plain) = a.change(S(10), None, c());
        assert!(!ended.expect("ended by a plain sample").complete);
        assert!(plain.is_some());
    }

    #[test]
    fn the_next_set_ends_the_previous_one() {
        let mut a = SetAssembly::default();
        a.change(S(1), Some(S(1)), c());
        let (ended, _) = a.change(S(2), Some(S(2)), c());
        assert!(ended.expect("ended").complete);
    }

    #[test]
    fn group_markers_report_empty_and_missed_parts() {
        let mut a = SetAssembly::default();
        let empty = a.end(Some((publisher(1), None))).expect("empty part");
        assert!(empty.complete && empty.changes.is_empty());
        let missed = a
            .end(Some((publisher(2), Some(S(3)))))
            .expect("missed part");
        assert!(!missed.complete);
        a.change(S(4), Some(S(4)), c());
        let part = a.end(Some((publisher(3), Some(S(4))))).expect("part");
        assert!(part.complete);
        assert_eq!(part.publisher, Some(publisher(3)));
    }
}
