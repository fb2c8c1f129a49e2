//! Dynamic types: topics whose type the program learns at run time — from another
//! participant through XTypes TypeLookup ([`DomainParticipant::find_topic_type`](crate::DomainParticipant::find_topic_type)), or built
//! as a [`TypeDesc`] — read and written as [`DynamicData`] without a Rust type for them.
//!
//! ```no_run
//! # use std::time::Duration;
//! # use tachyon::{DomainParticipant, dynamic::DynamicData, qos::*};
//! # fn main() -> Result<(), tachyon::Error> {
//! let participant = DomainParticipant::new(0)?;
//! // The type of whatever writes "Square", asked from its participant.
//! let ty = participant.find_topic_type("Square", Duration::from_secs(5))?;
//! let topic = participant.create_dynamic_topic("Square", &ty)?;
//! let reader = participant
//!     .create_subscriber()?
//!     .create_datareader(&topic, DataReaderQos::default())?;
//! for s in reader.take(10)? {
//!     if let Some(d) = s.data {
//!         println!("{}", d.to_json());
//!     }
//! }
//! # Ok(()) }
//! ```
//!
//! A dynamic topic announces the type's TypeInformation like a derived one, so it matches
//! by assignability where the other side announces one, and its samples and keys are
//! byte-for-byte those of `#[derive(DdsType)]` for the same type. Content filters on
//! dynamic topics are not supported (a reader can filter what it takes itself).

use std::fmt;
use std::sync::Arc;

use tachyon_cdr::{Endianness, Extensibility, KeyForm, KeyHash, TypeDesc, XcdrVersion};
use tachyon_proto::endpoint::KeyHashFn;
use tachyon_proto::qos::DataRepresentation;
use tachyon_proto::Transcoder;
use tachyon_xtypes::dynamic::{self, Value};

use crate::error::Error;
use crate::subscription::{sealed, Readable};
use crate::writable::Writable;

/// A type known by its description: a struct or union (possibly with a module path,
/// `Module::Type`), its members, keys and extensibility. Cheap to clone.
#[derive(Clone)]
pub struct DynamicType {
    inner: Arc<TypeInner>,
}

struct TypeInner {
    desc: TypeDesc,
    name: String,
    keyed: bool,
    extensibility: Extensibility,
    representations: Option<Arc<tachyon_xtypes::TypeRepresentations>>,
}

impl fmt::Debug for DynamicType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DynamicType")
            .field("name", &self.inner.name)
            .field("keyed", &self.inner.keyed)
            .field("extensibility", &self.inner.extensibility)
            .finish_non_exhaustive()
    }
}

impl PartialEq for DynamicType {
    fn eq(&self, other: &DynamicType) -> bool {
        self.inner.desc == other.inner.desc
    }
}

impl DynamicType {
    /// The type `desc` describes, which must be a struct or a union (a topic's type);
    /// typedefs of one are followed. Computes its XTypes TypeObjects, which its topics
    /// announce (a type they cannot be computed for matches by name only, with a warning).
    ///
    /// Errors: [`Error::BadParameter`] for another kind of type.
    pub fn new(desc: TypeDesc) -> Result<DynamicType, Error> {
        let mut top = &desc;
        for _ in 0..64 {
            match top {
                TypeDesc::Alias(a) => top = &a.target,
                _ => break,
            }
        }
        let (name, extensibility) = match top {
            TypeDesc::Struct(s) => (s.name.clone(), s.extensibility),
            TypeDesc::Union(u) => (u.name.clone(), u.extensibility),
            _ => return Err(Error::BadParameter("a topic type is a struct or a union")),
        };
        let representations = match tachyon_xtypes::TypeRepresentations::of(&desc) {
            Ok(r) => Some(Arc::new(r)),
            Err(e) => {
                tracing::warn!(type_name = %name, error = %e,
                    "no TypeInformation for this dynamic type: its endpoints match by type name");
                None
            }
        };
        Ok(DynamicType {
            inner: Arc::new(TypeInner {
                keyed: dynamic::is_keyed(&desc),
                desc,
                name,
                extensibility,
                representations,
            }),
        })
    }

    /// The dynamic twin of a derived type (`None` for a type that does not describe
    /// itself).
    pub fn of<T: tachyon_cdr::DdsType>() -> Option<DynamicType> {
        DynamicType::new(T::type_desc()?).ok()
    }

    /// The type's name as discovery announces it (`Module::Type`).
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The description.
    pub fn desc(&self) -> &TypeDesc {
        &self.inner.desc
    }

    /// Whether instances are told apart by key members.
    pub fn is_keyed(&self) -> bool {
        self.inner.keyed
    }

    /// The extensibility of the top-level type.
    pub fn extensibility(&self) -> Extensibility {
        self.inner.extensibility
    }

    /// The type as IDL (its dependencies first).
    pub fn to_idl(&self) -> String {
        tachyon_xtypes::idl::to_idl(&self.inner.desc)
    }

    /// The TypeObjects and TypeInformation its topics announce.
    pub(crate) fn representations(&self) -> Option<Arc<tachyon_xtypes::TypeRepresentations>> {
        self.inner.representations.clone()
    }
}

/// A sample of a [`DynamicType`]: a [`Value`] tree (members by name) and its type.
#[derive(Clone, Debug)]
pub struct DynamicData {
    ty: DynamicType,
    value: Value,
    /// The bytes it was decoded from (a received sample).
    received: Option<usize>,
}

impl PartialEq for DynamicData {
    fn eq(&self, other: &DynamicData) -> bool {
        self.value == other.value && self.ty == other.ty
    }
}

impl DynamicData {
    /// A sample of `ty` with every member at its default (zero, empty, the first
    /// enumerator; optional members absent).
    pub fn new(ty: &DynamicType) -> DynamicData {
        DynamicData {
            value: dynamic::default(ty.desc()),
            ty: ty.clone(),
            received: None,
        }
    }

    /// A sample of `ty` holding `value`, which must fit the type.
    ///
    /// Errors: [`Error::Encode`] naming what does not fit.
    pub fn from_value(ty: &DynamicType, value: Value) -> Result<DynamicData, Error> {
        dynamic::encoded_size(ty.desc(), &value, XcdrVersion::Xcdr2)?;
        Ok(DynamicData {
            ty: ty.clone(),
            value,
            received: None,
        })
    }

    /// The bytes of the serialized sample it was decoded from (encapsulation header
    /// included), for a received one.
    pub fn serialized_len(&self) -> Option<usize> {
        self.received
    }

    /// The sample's type.
    pub fn dynamic_type(&self) -> &DynamicType {
        &self.ty
    }

    /// The value.
    pub fn value(&self) -> &Value {
        &self.value
    }

    /// The value, to change in place (a value that no longer fits the type makes `write`
    /// fail with [`Error::Encode`]).
    pub fn value_mut(&mut self) -> &mut Value {
        &mut self.value
    }

    /// Takes the value out.
    pub fn into_value(self) -> Value {
        self.value
    }

    /// The member `name` of a struct sample (`a.b` for a nested one), `None` when absent.
    pub fn get(&self, path: &str) -> Option<&Value> {
        path.split('.')
            .try_fold(&self.value, |v, name| v.field(name))
    }

    /// Sets the member at `path` (`a.b` for a nested one) to `value`.
    ///
    /// Errors: [`Error::BadParameter`] when the type has no such member or `value` does not
    /// fit it (nothing changes then).
    pub fn set(&mut self, path: &str, value: Value) -> Result<(), Error> {
        let mut candidate = self.value.clone();
        let names: Vec<&str> = path.split('.').collect();
        let slot = member_mut(&mut candidate, &names)
            .ok_or(Error::BadParameter("the type has no member of that name"))?;
        *slot = Some(value);
        if dynamic::encoded_size(self.ty.desc(), &candidate, XcdrVersion::Xcdr2).is_err() {
            return Err(Error::BadParameter(
                "the value does not fit the member's type",
            ));
        }
        self.value = candidate;
        Ok(())
    }

    /// The sample as JSON (see [`Value::to_json`]).
    pub fn to_json(&self) -> String {
        self.value.to_json()
    }

    /// The instance handle (key hash) of the sample.
    pub fn key_hash(&self) -> Result<KeyHash, Error> {
        Ok(dynamic::key_hash(self.ty.desc(), &self.value)?)
    }

    /// Checks that the sample is of the writer's type `ty`.
    fn of_type(&self, ty: Option<&DynamicType>) -> Result<&TypeDesc, Error> {
        match ty {
            Some(t) if !Arc::ptr_eq(&t.inner, &self.ty.inner) && *t != self.ty => Err(
                Error::BadParameter("the sample is of another type than the writer's topic"),
            ),
            _ => Ok(self.ty.desc()),
        }
    }
}

/// The slot of the member at `path` in a struct value (`Some(v)` present, `None` an absent
/// optional member).
fn member_mut<'v>(v: &'v mut Value, path: &[&str]) -> Option<&'v mut Option<Value>> {
    let (first, rest) = path.split_first()?;
    let Value::Struct(members) = v else {
        return None;
    };
    let slot = members
        .iter_mut()
        .find(|(n, _)| n == first)
        .map(|(_, v)| v)?;
    if rest.is_empty() {
        Some(slot)
    } else {
        member_mut(slot.as_mut()?, rest)
    }
}

impl fmt::Display for DynamicData {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.value.to_json())
    }
}

/// The type a dynamic reader or writer was created with, or the error a typed path meets.
fn described(ty: Option<&DynamicType>) -> Result<&DynamicType, String> {
    ty.ok_or_else(|| "a dynamic reader needs the type of its topic".to_owned())
}

impl sealed::Sealed for DynamicData {}

impl Readable for DynamicData {
    fn decode_payload(_: &[u8]) -> Result<Self, String> {
        Err(described(None).err().unwrap_or_default())
    }

    fn decode_described(ty: Option<&DynamicType>, payload: &[u8]) -> Result<Self, String> {
        let ty = described(ty)?;
        let value = dynamic::decode(ty.desc(), payload).map_err(|e| e.to_string())?;
        Ok(DynamicData {
            ty: ty.clone(),
            value,
            received: Some(payload.len()),
        })
    }

    fn key_hash_fn(ty: Option<&DynamicType>) -> Option<KeyHashFn> {
        let ty = ty.filter(|t| t.is_keyed())?.clone();
        Some(KeyHashFn::new(move |payload: &[u8], is_key: bool| {
            let value = if is_key {
                dynamic::decode_key(ty.desc(), payload).ok()?
            } else {
                dynamic::decode(ty.desc(), payload).ok()?
            };
            dynamic::key_hash(ty.desc(), &value).ok()
        }))
    }
}

impl crate::writable::sealed::Sealed for DynamicData {}

impl Writable for DynamicData {
    fn instance(&self, ty: Option<&DynamicType>) -> Result<KeyHash, Error> {
        Ok(dynamic::key_hash(self.of_type(ty)?, &self.value)?)
    }

    fn serialized_size(
        &self,
        ty: Option<&DynamicType>,
        version: XcdrVersion,
    ) -> Result<usize, Error> {
        Ok(dynamic::encoded_size(
            self.of_type(ty)?,
            &self.value,
            version,
        )?)
    }

    fn serialize_into(
        &self,
        ty: Option<&DynamicType>,
        version: XcdrVersion,
        buf: &mut [u8],
    ) -> Result<usize, Error> {
        let desc = self.of_type(ty)?;
        Ok(dynamic::encode_into(
            desc,
            &self.value,
            version,
            Endianness::Little,
            buf,
        )?)
    }

    fn key_payload(
        &self,
        ty: Option<&DynamicType>,
        version: XcdrVersion,
        form: KeyForm,
    ) -> Result<Vec<u8>, Error> {
        let desc = self.of_type(ty)?;
        Ok(dynamic::encode_key_payload(
            desc,
            &self.value,
            version,
            Endianness::Little,
            form,
        )?)
    }

    fn transcoder(ty: Option<&DynamicType>) -> Option<Transcoder> {
        let ty = ty?.clone();
        Some(Arc::new(
            move |payload: &[u8], to: DataRepresentation, _: &_| {
                let version = to.xcdr_version()?;
                let value = dynamic::decode(ty.desc(), payload).ok()?;
                let endian = tachyon_cdr::EncapsulationHeader::parse(payload)
                    .ok()?
                    .encapsulation
                    .endianness();
                dynamic::encode(ty.desc(), &value, version, endian).ok()
            },
        ))
    }
}

/// A sample as it was received: its serialized bytes (encapsulation header included),
/// undecoded — what a reader of a topic whose type is unknown gets (a rate meter, a
/// recorder). See [`DomainParticipant::create_serialized_topic`].
///
/// [`DomainParticipant::create_serialized_topic`]: crate::DomainParticipant::create_serialized_topic
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SerializedData {
    /// The bytes.
    pub bytes: Vec<u8>,
}

impl sealed::Sealed for SerializedData {}

impl Readable for SerializedData {
    fn decode_payload(payload: &[u8]) -> Result<Self, String> {
        Ok(SerializedData {
            bytes: payload.to_vec(),
        })
    }

    fn decode_payload_into(&mut self, payload: &[u8]) -> Result<(), String> {
        self.bytes.clear();
        self.bytes.extend_from_slice(payload);
        Ok(())
    }

    /// Without the type the key of a payload without key hash is unknown: such samples
    /// share one instance.
    fn key_hash_fn(_: Option<&DynamicType>) -> Option<KeyHashFn> {
        Some(KeyHashFn::new(|_: &[u8], _: bool| Some(KeyHash::default())))
    }
}

/// A serialized sample written or read as it is (encapsulation header included) with its
/// instance's key hash: what a program that does not know the type relays (a bridge, a
/// replayer). Written, its bytes go out unchanged, so its writer's DATA_REPRESENTATION
/// should be the one the bytes are in; read, `key_hash` is left zero (the instance is the
/// sample's `SampleInfo::instance_handle`, from the key hash its writer sent). See
/// [`DomainParticipant::create_raw_topic`].
///
/// [`DomainParticipant::create_raw_topic`]: crate::DomainParticipant::create_raw_topic
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RawSample {
    /// The serialized sample (for a dispose or unregister: the serialized key, or empty).
    pub bytes: Vec<u8>,
    /// Its instance.
    pub key_hash: KeyHash,
}

impl sealed::Sealed for RawSample {}

impl Readable for RawSample {
    fn decode_payload(payload: &[u8]) -> Result<Self, String> {
        Ok(RawSample {
            bytes: SerializedData::decode_payload(payload)?.bytes,
            key_hash: KeyHash::default(),
        })
    }

    /// As [`SerializedData`]'s: without the type, samples that come without key hash share
    /// one instance.
    fn key_hash_fn(ty: Option<&DynamicType>) -> Option<KeyHashFn> {
        SerializedData::key_hash_fn(ty)
    }
}

impl crate::writable::sealed::Sealed for RawSample {}

impl Writable for RawSample {
    fn instance(&self, _: Option<&DynamicType>) -> Result<KeyHash, Error> {
        Ok(self.key_hash)
    }

    fn serialized_size(&self, _: Option<&DynamicType>, _: XcdrVersion) -> Result<usize, Error> {
        Ok(self.bytes.len())
    }

    fn serialize_into(
        &self,
        _: Option<&DynamicType>,
        _: XcdrVersion,
        buf: &mut [u8],
    ) -> Result<usize, Error> {
        let capacity = buf.len();
        let dst =
            buf.get_mut(..self.bytes.len())
                .ok_or(tachyon_cdr::EncodeError::BufferTooSmall {
                    needed: self.bytes.len(),
                    capacity,
                })?;
        dst.copy_from_slice(&self.bytes);
        Ok(self.bytes.len())
    }

    fn key_payload(
        &self,
        _: Option<&DynamicType>,
        _: XcdrVersion,
        _: KeyForm,
    ) -> Result<Vec<u8>, Error> {
        Ok(self.bytes.clone())
    }

    fn transcoder(_: Option<&DynamicType>) -> Option<Transcoder> {
        None
    }
}
