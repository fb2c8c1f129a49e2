//! [`Writable`]: what a [`DataWriter`](crate::DataWriter) writes — every
//! `#[derive(DdsType)]` type (serialized by its derived code) and
//! [`DynamicData`](crate::dynamic::DynamicData) (serialized from its type's description).

use tachyon_cdr::{DdsType, KeyForm, KeyHash, XcdrVersion};
use tachyon_proto::{RemoteFilterFactory, Transcoder};

use crate::dynamic::DynamicType;
use crate::error::Error;

/// The types a [`DataWriter`](crate::DataWriter) writes. Sealed: implement [`DdsType`]
/// (or derive it) instead. `ty` is the dynamic type of the writer's topic (`None` for a
/// derived type).
pub trait Writable: sealed::Sealed {
    /// The sample's instance handle (key hash).
    #[doc(hidden)]
    fn instance(&self, ty: Option<&DynamicType>) -> Result<KeyHash, Error>;

    /// The bytes the serialized sample takes, encapsulation header included.
    #[doc(hidden)]
    fn serialized_size(
        &self,
        ty: Option<&DynamicType>,
        version: XcdrVersion,
    ) -> Result<usize, Error>;

    /// Serializes the sample into `buf` (little-endian); returns the bytes written.
    #[doc(hidden)]
    fn serialize_into(
        &self,
        ty: Option<&DynamicType>,
        version: XcdrVersion,
        buf: &mut [u8],
    ) -> Result<usize, Error>;

    /// The key-only payload of a dispose or unregister of the sample's instance.
    #[doc(hidden)]
    fn key_payload(
        &self,
        ty: Option<&DynamicType>,
        version: XcdrVersion,
        form: KeyForm,
    ) -> Result<Vec<u8>, Error>;

    /// Converts serialized samples for readers of another representation.
    #[doc(hidden)]
    fn transcoder(ty: Option<&DynamicType>) -> Option<Transcoder>
    where
        Self: Sized;

    /// How the writer shares samples as values with readers of this process that read the
    /// same type (`None`: it always serializes them).
    #[doc(hidden)]
    fn shared_values() -> Option<tachyon_cdr::Sharing<Self>>
    where
        Self: Sized,
    {
        None
    }

    /// Builds the filters of matched readers that announce one (`None`: the writer sends
    /// every sample and the readers filter).
    #[doc(hidden)]
    fn remote_filter_factory() -> Option<RemoteFilterFactory>
    where
        Self: Sized,
    {
        None
    }
}

pub(crate) mod sealed {
    /// Keeps [`Writable`](super::Writable) to the types Tachyon knows how to serialize.
    pub trait Sealed {}
}

impl<T: DdsType> sealed::Sealed for T {}

impl<T: DdsType> Writable for T {
    #[inline]
    fn instance(&self, _: Option<&DynamicType>) -> Result<KeyHash, Error> {
        Ok(tachyon_cdr::key_hash(self)?)
    }

    #[inline]
    fn serialized_size(
        &self,
        _: Option<&DynamicType>,
        version: XcdrVersion,
    ) -> Result<usize, Error> {
        Ok(tachyon_cdr::serialized_size(self, version)?)
    }

    #[inline]
    fn serialize_into(
        &self,
        _: Option<&DynamicType>,
        version: XcdrVersion,
        buf: &mut [u8],
    ) -> Result<usize, Error> {
        Ok(tachyon_cdr::serialize(
            self,
            version,
            tachyon_cdr::Endianness::Little,
            buf,
        )?)
    }

    fn key_payload(
        &self,
        _: Option<&DynamicType>,
        version: XcdrVersion,
        form: KeyForm,
    ) -> Result<Vec<u8>, Error> {
        // The key never takes more than the whole sample.
        let mut buf = vec![0u8; tachyon_cdr::serialized_size(self, version)?];
        let n = tachyon_cdr::serialize_key_payload(
            self,
            version,
            tachyon_cdr::Endianness::Little,
            form,
            &mut buf,
        )?;
        buf.truncate(n);
        Ok(buf)
    }

    fn remote_filter_factory() -> Option<RemoteFilterFactory> {
        Some(crate::content_filter::remote_filter_factory::<T>())
    }

    fn shared_values() -> Option<tachyon_cdr::Sharing<Self>> {
        <T as DdsType>::sharing()
    }

    fn transcoder(_: Option<&DynamicType>) -> Option<Transcoder> {
        let f: fn(&[u8], XcdrVersion) -> Option<Vec<u8>> = T::transcode_serialized;
        Some(std::sync::Arc::new(
            move |payload: &[u8], to: tachyon_proto::qos::DataRepresentation, _: &_| {
                f(payload, to.xcdr_version()?)
            },
        ))
    }
}
