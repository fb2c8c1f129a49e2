//! [`Payload`]: the immutable serialized sample that history caches share instead of copying.

use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// A cheaply clonable, immutable serialized payload (encapsulation header included).
///
/// Cloning bumps a reference count; the bytes are never copied once inside. For now the buffer
/// is an `Arc<[u8]>` allocated per sample; pooled buffers (DESIGN.md section 3: no allocation on
/// the steady-state hot path) replace it later without changing this type's interface.
#[derive(Clone, PartialEq, Eq, Hash, Default)]
pub struct Payload(Arc<[u8]>);

impl Payload {
    /// A payload holding a copy of `bytes` (the one copy made when data enters a cache).
    pub fn copy_from_slice(bytes: &[u8]) -> Payload {
        Payload(Arc::from(bytes))
    }

    /// The serialized bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Whether two payloads share the same buffer (no copy happened between them).
    pub fn ptr_eq(&self, other: &Payload) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl From<Vec<u8>> for Payload {
    fn from(bytes: Vec<u8>) -> Payload {
        Payload(Arc::from(bytes))
    }
}

impl From<&[u8]> for Payload {
    fn from(bytes: &[u8]) -> Payload {
        Payload::copy_from_slice(bytes)
    }
}

impl Deref for Payload {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.0
    }
}

impl AsRef<[u8]> for Payload {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

impl fmt::Debug for Payload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Payload({} bytes)", self.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_the_buffer() {
        let p = Payload::from(vec![1, 2, 3]);
        let q = p.clone();
        assert!(p.ptr_eq(&q));
        assert_eq!(q.as_bytes(), &[1, 2, 3]);
        assert_eq!(format!("{q:?}"), "Payload(3 bytes)");
        assert!(!p.ptr_eq(&Payload::copy_from_slice(&[1, 2, 3])));
    }
}
