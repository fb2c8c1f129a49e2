//! The hash maps and sets of the protocol state.
//!
//! Lookups by entity id, GUID and key hash sit on every sample's path (routing a datagram,
//! adding a change to a writer's instance, marking a status), several per sample. The
//! standard library's SipHash costs about 180 instructions per lookup there, a fifth of the
//! user-space work of a 32-byte round trip (measured with callgrind, `docs/hot-path.md`).
//! foldhash is a few instructions per key and still seeded per process, so a peer that
//! sends crafted GUIDs or keys cannot predict collisions from one run to the next.

/// A `HashMap` with foldhash's per-process seeded hasher; build one with `default()`.
pub type HashMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;

/// A `HashSet` with foldhash's per-process seeded hasher; build one with `default()`.
pub type HashSet<T> = std::collections::HashSet<T, foldhash::fast::RandomState>;
