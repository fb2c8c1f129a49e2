//! Samples shared as values, not serialized: how a writer hands its sample to readers of the
//! same Rust type in its own process (issue 15's in-process path).
//!
//! A writer whose matched readers are all in its process and read its very type keeps a copy
//! of each sample as a [`SharedSample`] (reference counted by the payload that holds it)
//! instead of serializing it; each reader clones the value out of it (or moves it, when no one
//! else holds it). Serialization happens only if someone needs the bytes after all (a reader
//! that matched later from another process, a transcoding reader).
//!
//! Which types can be shared is decided by [`DdsType::sharing`]: `#[derive(DdsType)]` gives a
//! struct without generic parameters that is also `Clone + Send + Sync + 'static` its
//! [`Sharing`]; other types (and hand-written implementations) are always serialized.

use std::any::{Any, TypeId};
use std::marker::PhantomData;

use crate::{DdsType, EncodeError, Endianness, Fields, XcdrVersion};

/// A sample held as its value (a boxed `T` of some [`DdsType`]).
pub trait SharedSample: Send + Sync + 'static {
    /// The value, to downcast.
    fn as_any(&self) -> &dyn Any;
    /// The value, to overwrite in place.
    fn as_any_mut(&mut self) -> &mut dyn Any;
    /// The value, to move out.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
    /// Its members by name (content filters evaluate it without serializing).
    fn fields(&self) -> &dyn Fields;
    /// The sample serialized (little-endian, encapsulation header included).
    fn serialize(&self, version: XcdrVersion) -> Result<Vec<u8>, EncodeError>;
}

impl<T: DdsType + Send + Sync + 'static> SharedSample for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
    fn fields(&self) -> &dyn Fields {
        self
    }
    fn serialize(&self, version: XcdrVersion) -> Result<Vec<u8>, EncodeError> {
        crate::serialize_to_vec(self, version, Endianness::Little)
    }
}

/// How samples of `T` are shared: copied into a [`SharedSample`] and out of one. Made for
/// `T: DdsType + Clone + Send + Sync + 'static` by [`Sharing::by_clone`]; the derive copies
/// member by member in place (`assign`), so a recycled value keeps the
/// capacity of its strings and sequences.
pub struct Sharing<T> {
    /// `T`'s identity ([`type_id`](Self::type_id)).
    type_id: TypeId,
    /// A copy.
    clone: fn(&T) -> T,
    /// Overwrites a value with a copy of another, reusing what it owns; false when it
    /// cannot (then it is cloned). [`with_assign`](Self::with_assign) sets it.
    assign: fn(into: &mut T, from: &T) -> bool,
    /// The value, boxed.
    boxed: fn(T) -> Box<dyn SharedSample>,
    /// The value a [`SharedSample`] holds, when it is a `T`.
    downcast_ref: fn(&dyn SharedSample) -> Option<&T>,
    /// The same, to overwrite.
    downcast_mut: fn(&mut dyn SharedSample) -> Option<&mut T>,
    /// The value moved out, when it is a `T`.
    move_out: fn(Box<dyn SharedSample>) -> Option<T>,
}

impl<T> Clone for Sharing<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Sharing<T> {}

impl<T> std::fmt::Debug for Sharing<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sharing")
            .field("type", &std::any::type_name::<T>())
            .finish_non_exhaustive()
    }
}

impl<T: DdsType + Clone + Send + Sync + 'static> Sharing<T> {
    /// Sharing by `Clone` (`Clone::clone_from` to assign).
    #[inline]
    pub fn by_clone() -> Sharing<T> {
        Sharing {
            type_id: TypeId::of::<T>(),
            clone: T::clone,
            assign: |into, from| {
                into.clone_from(from);
                true
            },
            boxed: |v| Box::new(v),
            downcast_ref: |s| s.as_any().downcast_ref::<T>(),
            downcast_mut: |s| s.as_any_mut().downcast_mut::<T>(),
            move_out: |s| s.into_any().downcast::<T>().ok().map(|v| *v),
        }
    }
}

impl<T> Sharing<T> {
    /// `T`'s identity: a reader takes a writer's values when both have the same.
    #[inline]
    pub fn type_id(&self) -> TypeId {
        self.type_id
    }

    /// The same, copying in place with `assign` (which says false when it cannot: the value
    /// is then cloned). The derive's member-by-member copy.
    pub fn with_assign(self, assign: fn(into: &mut T, from: &T) -> bool) -> Sharing<T> {
        Sharing { assign, ..self }
    }

    /// Whether `shared` holds a `T`.
    #[inline]
    pub fn holds(&self, shared: &dyn SharedSample) -> bool {
        shared.as_any().type_id() == self.type_id
    }

    /// The value `shared` holds, moved out, when it is a `T` ([`holds`](Self::holds); a
    /// value of another type is dropped).
    #[inline]
    pub fn move_out(&self, shared: Box<dyn SharedSample>) -> Option<T> {
        (self.move_out)(shared)
    }

    /// Puts a copy of `value` in `slot`, overwriting in place the value the slot holds when
    /// it is a `T` (a recycled slot then allocates nothing for members that keep their
    /// capacity).
    #[inline]
    pub fn share(&self, value: &T, slot: &mut Option<Box<dyn SharedSample>>) {
        if let Some(held) = slot.as_deref_mut().and_then(self.downcast_mut) {
            if !(self.assign)(held, value) {
                *held = (self.clone)(value);
            }
            return;
        }
        *slot = Some((self.boxed)((self.clone)(value)));
    }

    /// A copy of `shared`, when it is a `T`.
    #[inline]
    pub fn clone_out(&self, shared: &dyn SharedSample) -> Option<T> {
        (self.downcast_ref)(shared).map(self.clone)
    }

    /// Copies `shared` into `into`, reusing what it owns, when it is a `T`.
    #[inline]
    pub fn clone_into(&self, shared: &dyn SharedSample, into: &mut T) -> bool {
        let Some(from) = (self.downcast_ref)(shared) else {
            return false;
        };
        if !(self.assign)(into, from) {
            *into = (self.clone)(from);
        }
        true
    }
}

/// The derive's probe for [`Sharing`]: `(&&Probe::<T>::NEW).sharing()` is `Some` when `T` is
/// `Clone + Send + Sync + 'static` (the method of [`ByClone`], found first), else `None`
/// (that of [`NotShareable`]). Works where `T` is a concrete type, as in derived code.
#[doc(hidden)]
pub struct Probe<T>(PhantomData<fn() -> T>);

impl<T> Probe<T> {
    /// The probe.
    pub const NEW: Probe<T> = Probe(PhantomData);
}

/// See [`Probe`].
#[doc(hidden)]
pub trait ByClone<T> {
    /// `T`'s sharing by `Clone`.
    fn sharing(&self) -> Option<Sharing<T>>;
}

impl<T: DdsType + Clone + Send + Sync + 'static> ByClone<T> for &Probe<T> {
    fn sharing(&self) -> Option<Sharing<T>> {
        Some(Sharing::by_clone())
    }
}

/// See [`Probe`].
#[doc(hidden)]
pub trait NotShareable<T> {
    /// No sharing.
    fn sharing(&self) -> Option<Sharing<T>>;
}

impl<T> NotShareable<T> for Probe<T> {
    fn sharing(&self) -> Option<Sharing<T>> {
        None
    }
}

/// The derive's probe for copying a member in place: `(&&&Probe::<M>::NEW).assigner()` is,
/// for a member type `M` that is a shareable [`DdsType`], its own [`Sharing::assign`] (member
/// by member, [`AssignDeep`]); for another `Clone` type, `Clone::clone_from` ([`AssignClone`]:
/// strings and sequences keep their capacity); else `None` ([`AssignNone`]: the struct is
/// cloned whole).
#[doc(hidden)]
pub trait AssignDeep<M> {
    /// See the trait.
    fn assigner(&self) -> Option<fn(&mut M, &M)>;
}

impl<M: DdsType + Clone + Send + Sync + 'static> AssignDeep<M> for &&Probe<M> {
    fn assigner(&self) -> Option<fn(&mut M, &M)> {
        Some(|into, from| {
            let done = M::sharing().is_some_and(|s| (s.assign)(into, from));
            if !done {
                into.clone_from(from);
            }
        })
    }
}

/// See [`AssignDeep`].
#[doc(hidden)]
pub trait AssignClone<M> {
    /// See [`AssignDeep`].
    fn assigner(&self) -> Option<fn(&mut M, &M)>;
}

impl<M: Clone> AssignClone<M> for &Probe<M> {
    fn assigner(&self) -> Option<fn(&mut M, &M)> {
        Some(M::clone_from)
    }
}

/// See [`AssignDeep`].
#[doc(hidden)]
pub trait AssignNone<M> {
    /// See [`AssignDeep`].
    fn assigner(&self) -> Option<fn(&mut M, &M)>;
}

impl<M> AssignNone<M> for Probe<M> {
    fn assigner(&self) -> Option<fn(&mut M, &M)> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(crate::DdsType, Clone, Debug, PartialEq)]
    struct Cloned {
        a: u32,
        b: String,
    }

    #[derive(crate::DdsType, Debug, PartialEq)]
    struct NotCloned {
        a: u32,
    }

    #[test]
    fn derived_clone_types_share_and_others_do_not() {
        let s = Cloned::sharing().expect("a Clone struct shares");
        assert!(NotCloned::sharing().is_none());
        let v = Cloned {
            a: 7,
            b: "seven".into(),
        };
        let mut slot = None;
        s.share(&v, &mut slot);
        let shared = slot.as_deref().expect("filled");
        assert_eq!(s.clone_out(shared), Some(v.clone()));
        let mut into = Cloned {
            a: 0,
            b: String::with_capacity(64),
        };
        assert!(s.clone_into(shared, &mut into));
        assert_eq!(into, v);
        // The slot's value is overwritten in place.
        let w = Cloned {
            a: 8,
            b: "eight".into(),
        };
        s.share(&w, &mut slot);
        let bytes = slot.as_deref().map(|s| s.serialize(XcdrVersion::Xcdr2));
        let want = crate::serialize_to_vec(&w, XcdrVersion::Xcdr2, Endianness::Little);
        assert_eq!(bytes.map(|b| b.ok()), Some(want.ok()));
        let moved = slot.take().map(|b| s.move_out(b));
        assert_eq!(moved, Some(Some(w)));
        // Another type's sample is not this one.
        let mut other = None;
        let n = Cloned::sharing().map(|s| s.type_id());
        assert_ne!(n, Some(TypeId::of::<NotCloned>()));
        let u = Sharing::<Unit>::by_clone();
        u.share(&Unit { x: 1 }, &mut other);
        let o = other.expect("filled");
        assert!(s.clone_out(&*o).is_none());
        assert!(!s.holds(&*o));
        assert!(s.move_out(o).is_none());
    }

    #[derive(crate::DdsType, Clone, Debug, PartialEq)]
    struct Unit {
        x: u8,
    }
}
