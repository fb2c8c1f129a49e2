//! The hash maps and sets of the protocol state.
//!
//! Lookups by entity id, GUID and key hash sit on every sample's path (routing a datagram,
//! adding a change to a writer's instance, marking a status), several per sample. The
//! standard library's SipHash costs about 180 instructions per lookup there, a fifth of the
//! user-space work of a 32-byte round trip (measured with callgrind, `docs/hot-path.md`).
//! foldhash is a few instructions per key and still seeded per process, so a peer that
//! sends crafted GUIDs or keys cannot predict collisions from one run to the next.
//!
//! The simulator (`tachyon-sim`) calls [`fix_hash_seed`] first: every map built afterwards
//! uses a fixed seed, so the order in which a map is walked (matching a new endpoint against
//! every known one, say), and with it every datagram sent, is the same from one run to the
//! next.

use std::hash::BuildHasher;
use std::sync::atomic::{AtomicBool, Ordering};

use foldhash::fast::{FixedState, FoldHasher, RandomState};

/// A `HashMap` with foldhash's per-process seeded hasher; build one with `default()`.
pub type HashMap<K, V> = std::collections::HashMap<K, V, State>;

/// A `HashSet` with foldhash's per-process seeded hasher; build one with `default()`.
pub type HashSet<T> = std::collections::HashSet<T, State>;

static FIXED: AtomicBool = AtomicBool::new(false);

/// Makes every map built from now on in this process use a fixed hash seed instead of a
/// random one: for deterministic simulation (`tachyon-sim`), never for a process that
/// reads the network (a peer could then craft colliding keys).
pub fn fix_hash_seed() {
    FIXED.store(true, Ordering::Relaxed);
}

/// The maps' hasher builder: foldhash, seeded per process unless [`fix_hash_seed`] was
/// called before the map was built.
#[derive(Clone, Debug)]
pub struct State(Seed);

#[derive(Clone, Debug)]
enum Seed {
    Random(RandomState),
    Fixed(FixedState),
}

impl Default for State {
    fn default() -> State {
        if FIXED.load(Ordering::Relaxed) {
            State(Seed::Fixed(FixedState::default()))
        } else {
            State(Seed::Random(RandomState::default()))
        }
    }
}

impl BuildHasher for State {
    type Hasher = FoldHasher<'static>;

    #[inline(always)]
    fn build_hasher(&self) -> FoldHasher<'static> {
        match &self.0 {
            Seed::Random(s) => s.build_hasher(),
            Seed::Fixed(s) => s.build_hasher(),
        }
    }
}
