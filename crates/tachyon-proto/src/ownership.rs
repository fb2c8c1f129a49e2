//! OWNERSHIP EXCLUSIVE on the reader side (DDS 1.4 §2.2.3.23): each instance accepts changes
//! from one writer at a time, its *owner*.
//!
//! The owner is the strongest writer among those writing the instance: a change from a writer
//! stronger than the owner (or as strong, with a lower GUID, so every reader picks the same)
//! takes the instance over; a change from a weaker one is dropped. The instance has no owner
//! — and the next writer to write it becomes the owner, so the reader fails over to the
//! strongest writer still writing — when the owner unregisters it, loses liveliness, is
//! unmatched, or misses the instance's requested deadline. Unregistrations of non-owners are
//! still applied (they change who writes the instance, not what it holds).

use crate::maps::HashMap;

use tachyon_cdr::KeyHash;
use tachyon_wire::Guid;

/// The owner of an instance and the strength it had when it last wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Owner {
    writer: Guid,
    strength: i32,
}

/// The owners of a reader's instances.
#[derive(Debug, Default)]
pub(crate) struct Owners {
    by_instance: HashMap<KeyHash, Owner>,
}

impl Owners {
    /// Whether a change of `instance` from `writer` (of `strength`) is accepted; when it is,
    /// `writer` owns the instance from now on.
    pub(crate) fn admit(&mut self, instance: KeyHash, writer: Guid, strength: i32) -> bool {
        let candidate = Owner { writer, strength };
        match self.by_instance.get_mut(&instance) {
            None => {
                self.by_instance.insert(instance, candidate);
                true
            }
            Some(owner) if owner.writer == writer => {
                owner.strength = strength;
                true
            }
            Some(owner) if stronger(candidate, *owner) => {
                *owner = candidate;
                true
            }
            Some(_) => false,
        }
    }

    /// The writer owning `instance`, if any.
    pub(crate) fn owner(&self, instance: &KeyHash) -> Option<Guid> {
        self.by_instance.get(instance).map(|o| o.writer)
    }

    /// `writer` unregistered `instance`: if it owned it, the instance has no owner now.
    pub(crate) fn unregistered(&mut self, instance: &KeyHash, writer: Guid) {
        if self.owner(instance) == Some(writer) {
            self.by_instance.remove(instance);
        }
    }

    /// The owner of `instance` missed its deadline: the instance has no owner now.
    pub(crate) fn deadline_missed(&mut self, instance: &KeyHash) {
        self.by_instance.remove(instance);
    }

    /// `writer` lost liveliness or was unmatched: it owns nothing any more.
    pub(crate) fn writer_gone(&mut self, writer: Guid) {
        self.by_instance.retain(|_, o| o.writer != writer);
    }

    /// `writer`'s OWNERSHIP_STRENGTH changed (`set_qos` on it).
    pub(crate) fn strength_changed(&mut self, writer: Guid, strength: i32) {
        for o in self.by_instance.values_mut() {
            if o.writer == writer {
                o.strength = strength;
            }
        }
    }
}

/// Whether `a` takes an instance from owner `b`: stronger, or as strong with a lower GUID.
fn stronger(a: Owner, b: Owner) -> bool {
    a.strength > b.strength || (a.strength == b.strength && a.writer < b.writer)
}

#[cfg(test)]
mod tests {
    use super::*;
    use tachyon_wire::{EntityId, EntityKind, GuidPrefix};

    fn writer(n: u8) -> Guid {
        Guid::new(
            GuidPrefix([n; 12]),
            EntityId::new([0, 0, 1], EntityKind::USER_WRITER_WITH_KEY),
        )
    }

    const BLUE: KeyHash = KeyHash([1; 16]);
    const RED: KeyHash = KeyHash([2; 16]);

    #[test]
    fn strongest_writer_owns_each_instance() {
        let mut o = Owners::default();
        assert!(o.admit(BLUE, writer(1), 3));
        assert!(o.admit(BLUE, writer(2), 4), "a stronger writer takes over");
        assert!(!o.admit(BLUE, writer(1), 3), "the weaker one is dropped");
        assert!(o.admit(BLUE, writer(2), 4));
        assert!(o.admit(RED, writer(1), 3), "instances are owned separately");
        assert_eq!(o.owner(&BLUE), Some(writer(2)));
        assert_eq!(o.owner(&RED), Some(writer(1)));
    }

    #[test]
    fn equal_strength_goes_to_the_lower_guid() {
        let mut o = Owners::default();
        assert!(o.admit(BLUE, writer(5), 1));
        assert!(o.admit(BLUE, writer(3), 1));
        assert!(!o.admit(BLUE, writer(5), 1));
    }

    #[test]
    fn failover_when_the_owner_goes() {
        let mut o = Owners::default();
        assert!(o.admit(BLUE, writer(2), 4));
        assert!(o.admit(RED, writer(2), 4));
        assert!(!o.admit(BLUE, writer(1), 3));
        o.writer_gone(writer(2));
        assert!(
            o.admit(BLUE, writer(1), 3),
            "the remaining writer takes over"
        );

        o.unregistered(&BLUE, writer(7));
        assert_eq!(
            o.owner(&BLUE),
            Some(writer(1)),
            "a non-owner's unregister changes nothing"
        );
        o.unregistered(&BLUE, writer(1));
        assert_eq!(o.owner(&BLUE), None);

        assert!(o.admit(BLUE, writer(2), 4));
        o.deadline_missed(&BLUE);
        assert!(
            o.admit(BLUE, writer(1), 3),
            "a missed deadline releases the instance"
        );
    }

    #[test]
    fn strength_changes_are_applied() {
        let mut o = Owners::default();
        assert!(o.admit(BLUE, writer(2), 4));
        o.strength_changed(writer(2), 1);
        assert!(o.admit(BLUE, writer(3), 2));
    }
}
