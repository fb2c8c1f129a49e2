//! One copy of each distinct QoS and TypeInformation announced by remote endpoints.
//!
//! A participant keeps every remote endpoint's announcement (a system of 1,000 participants
//! of 20 endpoints: 20,000 of them in each participant), and most endpoints of a system
//! announce one of a handful of QoS: sharing them took a remote endpoint from ≈ 900 to
//! ≈ 450 heap bytes (`docs/scale.md`). An interner remembers up to [`INTERNED`] values;
//! full, it forgets those no endpoint holds any more, and past that the new value is kept
//! by its endpoint alone (a peer announcing thousands of distinct QoS costs what it would
//! without interning, and a look here stays bounded).

use std::sync::Arc;

/// Distinct values remembered at most.
const INTERNED: usize = 64;

#[derive(Debug)]
pub(super) struct Interner<T> {
    values: Vec<Arc<T>>,
}

impl<T> Default for Interner<T> {
    fn default() -> Self {
        Interner { values: Vec::new() }
    }
}

impl<T: PartialEq> Interner<T> {
    /// The remembered value equal to `value`, or `value` (remembered when there is room).
    pub(super) fn intern(&mut self, value: Arc<T>) -> Arc<T> {
        if let Some(v) = self.values.iter().find(|v| ***v == *value) {
            return Arc::clone(v);
        }
        if self.values.len() >= INTERNED {
            self.values.retain(|v| Arc::strong_count(v) > 1);
        }
        if self.values.len() < INTERNED {
            self.values.push(Arc::clone(&value));
        }
        value
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.values.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_values_share_one_allocation() {
        let mut i = Interner::default();
        let a = i.intern(Arc::new(String::from("reliable")));
        let b = i.intern(Arc::new(String::from("reliable")));
        let c = i.intern(Arc::new(String::from("best effort")));
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(i.len(), 2);
    }

    #[test]
    fn a_full_interner_forgets_unheld_values_and_stays_bounded() {
        let mut i = Interner::default();
        let held: Vec<_> = (0..INTERNED / 2).map(|n| i.intern(Arc::new(n))).collect();
        for n in INTERNED / 2..INTERNED * 10 {
            let _ = i.intern(Arc::new(n));
            assert!(i.len() <= INTERNED);
        }
        // The held ones are still shared.
        for (n, h) in held.iter().enumerate() {
            assert!(Arc::ptr_eq(h, &i.intern(Arc::new(n))));
        }
        let mut full = Interner::default();
        let all: Vec<_> = (0..INTERNED * 2)
            .map(|n| full.intern(Arc::new(n)))
            .collect();
        assert_eq!(
            full.len(),
            INTERNED,
            "held values are kept, the rest are not remembered"
        );
        assert_eq!(*all[INTERNED + 1], INTERNED + 1);
    }
}
