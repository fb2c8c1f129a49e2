//! The traits a serializable type implements: [`Encode`], [`Decode`] and, for topic types,
//! [`DdsType`]. `#[derive(DdsType)]` implements all three.

use crate::encoding::{Extensibility, XcdrVersion};
use crate::error::{DecodeError, EncodeError};
use crate::fields::Fields;
use crate::reader::Reader;
use crate::writer::Writer;

/// A value that can be written as XCDR.
pub trait Encode {
    /// True for the types XTypes calls primitive (boolean, char, integers, floats). Sequences and
    /// arrays of them carry no DHEADER in XCDR2.
    const PRIMITIVE: bool = false;

    /// For arrays: whether the innermost element is primitive (multi-dimensional arrays are one
    /// array on the wire). Everything else: [`Self::PRIMITIVE`].
    const LEAF_PRIMITIVE: bool = Self::PRIMITIVE;

    /// For fixed-size primitives and enumerations: their size (1, 2, 4 or 8).
    const FIXED_SIZE: Option<usize> = None;

    /// The EMHEADER length code a member of this type gets in a mutable type (XTypes 1.3,
    /// 7.4.3.4.2), chosen as Cyclone DDS chooses it: 0–3 for 1/2/4/8-byte primitives, 5 for
    /// strings and for sequences and arrays that start with their byte length or a DHEADER,
    /// 6/7 for sequences of 4/8-byte primitives, 4 (a separate NEXTINT) otherwise.
    const LENGTH_CODE: u8 = 4;

    /// Writes the value.
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError>;

    /// Writes the value of a member declared with a bound (strings and sequences check it).
    #[inline]
    fn encode_bounded(&self, w: &mut Writer<'_>, bound: u32) -> Result<(), EncodeError> {
        let _ = bound;
        self.encode(w)
    }

    /// Writes consecutive values (primitives override this with a bulk copy).
    #[inline]
    fn encode_slice(items: &[Self], w: &mut Writer<'_>) -> Result<(), EncodeError>
    where
        Self: Sized,
    {
        items.iter().try_for_each(|i| i.encode(w))
    }

    /// Writes the value as an element of an enclosing array (arrays write their elements only,
    /// so that nested arrays form one multi-dimensional array).
    #[inline]
    fn encode_array_element(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.encode(w)
    }

    /// Writes the key-only form: for a struct with `#[key]` members, those members; otherwise
    /// the whole value (XTypes 1.3, 7.6.8).
    #[inline]
    fn encode_key(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.encode(w)
    }

    /// Writes the key as a key-only payload carries it (a dispose, an unregister): the key
    /// holder of XTypes 1.3 7.2.2.4.7, the key members framed as the type frames its members
    /// (a DHEADER for an appendable or mutable struct in XCDR2, member headers for a mutable
    /// one), nested key members in their own holder form. [`encode_key`](Self::encode_key)
    /// is the unframed form, which the key hash is computed from (7.6.8) and which Cyclone
    /// DDS 0.10 sends. Types other than structs have no framing of their own: the default.
    #[inline]
    fn encode_key_holder(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        self.encode_key(w)
    }

    /// Where the largest possible key-only encoding of this type ends when it starts at offset
    /// `start`, or `None` when it has no upper bound (decides whether a key hash uses MD5).
    fn key_max_end(start: usize, version: XcdrVersion, bound: Option<u32>) -> Option<usize> {
        let _ = (start, version, bound);
        None
    }
}

/// A value that can be read from XCDR, possibly borrowing from the input (`&'de str`,
/// `&'de [u8]`).
pub trait Decode<'de>: Encode + Sized {
    /// The fewest bytes one value takes; sequence counts are checked against it before any
    /// allocation.
    const MIN_SIZE: usize = 1;

    /// Reads a value.
    fn decode(r: &mut Reader<'de>) -> Result<Self, DecodeError>;

    /// Reads the value of a member declared with a bound (strings and sequences check it).
    #[inline]
    fn decode_bounded(r: &mut Reader<'de>, bound: u32) -> Result<Self, DecodeError> {
        let _ = bound;
        Self::decode(r)
    }

    /// Reads a value into `self`, reusing what it owns where it can (an octet sequence's
    /// buffer, the members of a `@final` struct): what `*self = Self::decode(r)?` does,
    /// without allocating when the new value fits. After an error `self` holds a valid but
    /// unspecified value.
    #[inline]
    fn decode_into(&mut self, r: &mut Reader<'de>) -> Result<(), DecodeError> {
        *self = Self::decode(r)?;
        Ok(())
    }

    /// Reads `n` consecutive values (`n` was already checked against the input).
    fn decode_vec(n: usize, r: &mut Reader<'de>) -> Result<Vec<Self>, DecodeError> {
        let mut v = Vec::with_capacity(n.min(r.remaining()));
        for _ in 0..n {
            v.push(Self::decode(r)?);
        }
        Ok(v)
    }

    /// Reads `n` consecutive values into `v`, replacing what it held and reusing its buffer
    /// where the type allows (octets).
    #[inline]
    fn decode_vec_into(
        n: usize,
        r: &mut Reader<'de>,
        v: &mut Vec<Self>,
    ) -> Result<(), DecodeError> {
        *v = Self::decode_vec(n, r)?;
        Ok(())
    }

    /// Reads the value as an element of an enclosing array (see [`Encode::encode_array_element`]).
    #[inline]
    fn decode_array_element(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        Self::decode(r)
    }

    /// Reads the key-only form [`Encode::encode_key`] writes. Members outside the key take
    /// their default value (the result is only good for its key: a key hash, a key lookup).
    #[inline]
    fn decode_key(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        Self::decode(r)
    }

    /// Reads the key holder [`Encode::encode_key_holder`] writes. Members outside the key
    /// take their default value.
    #[inline]
    fn decode_key_holder(r: &mut Reader<'de>) -> Result<Self, DecodeError> {
        Self::decode_key(r)
    }

    /// The value a member takes when a mutable or appendable encoding omits it (XTypes default
    /// values), if the type has one.
    #[inline]
    fn default_value() -> Option<Self> {
        None
    }
}

/// A type that can be the type of a DDS topic. Its members are readable by name
/// ([`Fields`], for content filters); a hand-written implementation may leave that out with
/// an empty `impl Fields for MyType {}`.
pub trait DdsType: Encode + Fields {
    /// The fully qualified type name announced in discovery (IDL style, `Module::Type`).
    const TYPE_NAME: &'static str;
    /// The extensibility of the type.
    const EXTENSIBILITY: Extensibility;
    /// True when the type has key members (instances are told apart by key).
    const KEYED: bool;

    /// Decodes a serialized sample (encapsulation header included) and returns what `f`
    /// says about its members: how a content filter reads samples it only has serialized
    /// (a writer evaluating its readers' filters). `None` when the payload does not decode,
    /// or the type does not support it (the default; `#[derive(DdsType)]` implements it for
    /// structs without generic parameters).
    fn inspect_serialized(payload: &[u8], f: &mut dyn FnMut(&dyn Fields) -> bool) -> Option<bool>
    where
        Self: Sized,
    {
        let _ = (payload, f);
        None
    }

    /// Re-serializes a serialized sample (encapsulation header included) in XCDR `version`
    /// ([`crate::transcode`]): how a writer serves a reader that reads another representation
    /// than it writes. `None` when the payload does not decode, or the type does not support
    /// it (the default; `#[derive(DdsType)]` implements it for structs without generic
    /// parameters).
    fn transcode_serialized(payload: &[u8], version: crate::XcdrVersion) -> Option<Vec<u8>>
    where
        Self: Sized,
    {
        let _ = (payload, version);
        None
    }

    /// The type's description, from which its XTypes TypeObjects and TypeInformation are
    /// computed. `None` (the default) for a hand-written implementation that does not
    /// describe itself: the topic then announces no TypeInformation and matches by type name
    /// only. `#[derive(DdsType)]` describes every type.
    fn type_desc() -> Option<crate::TypeDesc>
    where
        Self: Sized,
    {
        None
    }

    /// How samples of the type are shared as values between a writer and readers of one
    /// process ([`crate::share`]): `None` (the default) serializes them.
    /// `#[derive(DdsType)]` gives `Some` to structs without generic parameters that are
    /// `Clone + Send + Sync + 'static`.
    fn sharing() -> Option<crate::Sharing<Self>>
    where
        Self: Sized,
    {
        None
    }
}

/// A type that can discriminate a union: integers, `bool`, `char` and derived enumerations.
pub trait Discriminator: Copy + PartialEq {
    /// The value as a wide integer, for error messages.
    fn to_i64(&self) -> i64;
}

macro_rules! discriminator {
    ($($t:ty),*) => {$(
        impl Discriminator for $t {
            #[inline]
            fn to_i64(&self) -> i64 {
                *self as i64
            }
        }
    )*};
}

discriminator!(i8, u8, i16, u16, i32, u32, i64, u64, bool, char);
