//! [`ContentFilteredTopic`]: a topic seen through a DDS SQL filter, and
//! [`TopicDescription`], what a reader can be created on (a [`Topic`] or a
//! content-filtered topic).
//!
//! Where filtering happens: a reader of a content-filtered topic evaluates the filter on
//! every sample it receives, before the sample enters its cache (so KEEP_LAST depth and
//! resource limits count matching samples only; dispose and unregister always pass). Its
//! SEDP announcement carries the filter (PID_CONTENT_FILTER_PROPERTY, class `DDSSQL`) under
//! the related topic's name, as Cyclone DDS, Fast DDS and RTI Connext do; a Tachyon writer
//! that can evaluate it sends no sample that no matched reader wants (a GAP instead).

use std::sync::{Arc, Mutex};

use tachyon_cdr::{DdsType, Decode, FieldKind, Fields};
use tachyon_proto::filter::{
    ContentFilter, FilterError, RemoteFilterFactory, SampleFilter, DDSSQL,
};
use tachyon_proto::history::Payload;
use tachyon_wire::parameter::ContentFilterProperty;
use tachyon_wire::EntityId;

use crate::error::Error;
use crate::runtime::{lock, Runtime};
use crate::topic::Topic;

/// What a DataReader of samples `T` can be created on: a [`Topic`] or a
/// [`ContentFilteredTopic`] (DDS TopicDescription).
pub trait TopicDescription<T>: sealed::Sealed {
    /// The name: the topic's, or the content-filtered topic's own.
    fn get_name(&self) -> &str;
    /// The type name announced in discovery.
    fn get_type_name(&self) -> &str;
    /// The topic a reader announces and matches writers on, and its filter, if any.
    #[doc(hidden)]
    fn reader_target(&self) -> ReaderTarget<'_, T>;
}

/// What a reader is created on (internal to [`TopicDescription`]).
#[doc(hidden)]
pub struct ReaderTarget<'a, T> {
    pub(crate) topic: &'a Topic<T>,
    pub(crate) filter: Option<&'a dyn AttachFilter>,
}

/// A content-filtered topic as a reader created on it sees it (not generic over the type).
pub(crate) trait AttachFilter {
    /// What a new reader on the topic announces and filters with; remembers the reader.
    fn attach(&self, reader: EntityId) -> (ContentFilterProperty, SampleFilter);
}

mod sealed {
    /// Keeps [`TopicDescription`](super::TopicDescription) to the DDS topic kinds.
    pub trait Sealed {}
}

impl<T> sealed::Sealed for Topic<T> {}

impl<T> TopicDescription<T> for Topic<T> {
    fn get_name(&self) -> &str {
        self.name()
    }
    fn get_type_name(&self) -> &str {
        self.type_name()
    }
    fn reader_target(&self) -> ReaderTarget<'_, T> {
        ReaderTarget {
            topic: self,
            filter: None,
        }
    }
}

/// A topic seen through a filter (DDS ContentFilteredTopic): readers created on it receive
/// only the samples of the related topic for which the filter expression is true.
///
/// Created by [`DomainParticipant::create_contentfilteredtopic`]. It borrows its related
/// topic; readers created on it do not (they keep the filter).
///
/// [`DomainParticipant::create_contentfilteredtopic`]: crate::DomainParticipant::create_contentfilteredtopic
pub struct ContentFilteredTopic<'a, T> {
    name: String,
    topic: &'a Topic<T>,
    /// Shared with the readers' sample filters.
    filter: Arc<Mutex<ContentFilter>>,
    /// Readers created on it, re-announced when the parameters change.
    readers: Mutex<Vec<EntityId>>,
    runtime: Arc<Runtime>,
}

impl<T> std::fmt::Debug for ContentFilteredTopic<'_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let filter = lock(&self.filter);
        f.debug_struct("ContentFilteredTopic")
            .field("name", &self.name)
            .field("related_topic", &self.topic.name())
            .field("expression", &filter.expression())
            .field("parameters", &filter.parameters())
            .finish()
    }
}

impl<'a, T: DdsType> ContentFilteredTopic<'a, T> {
    /// Checks `expression` against `T` and binds `parameters` (see
    /// [`tachyon_proto::filter`]).
    pub(crate) fn new(
        runtime: &Arc<Runtime>,
        name: &str,
        topic: &'a Topic<T>,
        expression: &str,
        parameters: &[impl AsRef<str>],
    ) -> Result<ContentFilteredTopic<'a, T>, Error> {
        if name.is_empty() {
            return Err(Error::BadParameter("a content-filtered topic needs a name"));
        }
        let filter = ContentFilter::with_kinds(expression, parameters, &kinds_of::<T>)?;
        Ok(ContentFilteredTopic {
            name: name.to_owned(),
            topic,
            filter: Arc::new(Mutex::new(filter)),
            readers: Mutex::new(Vec::new()),
            runtime: Arc::clone(runtime),
        })
    }

    /// The filter expression (DDS `get_filter_expression`).
    pub fn get_filter_expression(&self) -> String {
        lock(&self.filter).expression().to_owned()
    }

    /// The expression parameters now (DDS `get_expression_parameters`).
    pub fn get_expression_parameters(&self) -> Vec<String> {
        lock(&self.filter).parameters().to_vec()
    }

    /// Replaces the expression parameters (DDS `set_expression_parameters`): readers created
    /// on this topic filter samples received from now on with them, and are re-announced so
    /// writers filter with them too. On error (a parameter missing or not fitting its
    /// member) nothing changes.
    pub fn set_expression_parameters(&self, parameters: &[impl AsRef<str>]) -> Result<(), Error> {
        let sh = &self.runtime.shared;
        if sh.stopped() {
            return Err(Error::AlreadyDeleted);
        }
        // The participant's lock first, as the readers' filters take it (on the driver).
        let mut st = sh.lock();
        let property = {
            let mut f = lock(&self.filter);
            f.set_parameters_with(parameters, &kinds_of::<T>)?;
            self.property(&f)
        };
        let now = sh.now();
        let mut readers = lock(&self.readers);
        readers.retain(|&id| st.participant.local_subscription(id).is_some());
        let mut result = Ok(());
        for &id in readers.iter() {
            if let Some(mut data) = st.participant.local_subscription(id).cloned() {
                data.content_filter = Some(property.clone());
                if let Err(e) = st.participant.announce_reader(now, id, data) {
                    result = result.and(Err(e.into()));
                }
            }
        }
        drop(readers);
        st.flush(sh, now);
        drop(st);
        sh.wake();
        result
    }

    /// The related topic (DDS `get_related_topic`).
    pub fn get_related_topic(&self) -> &'a Topic<T> {
        self.topic
    }

    /// The filter as announced in discovery.
    fn property(&self, f: &ContentFilter) -> ContentFilterProperty {
        ContentFilterProperty {
            content_filtered_topic_name: self.name.clone(),
            related_topic_name: self.topic.name().to_owned(),
            filter_class_name: DDSSQL.to_owned(),
            filter_expression: f.expression().to_owned(),
            expression_parameters: f.parameters().to_vec(),
        }
    }
}

impl<T> sealed::Sealed for ContentFilteredTopic<'_, T> {}

impl<'a, T: DdsType + for<'de> Decode<'de>> TopicDescription<T> for ContentFilteredTopic<'a, T> {
    fn get_name(&self) -> &str {
        &self.name
    }
    fn get_type_name(&self) -> &str {
        self.topic.type_name()
    }
    fn reader_target(&self) -> ReaderTarget<'_, T> {
        ReaderTarget {
            topic: self.topic,
            filter: Some(self),
        }
    }
}

impl<T: DdsType + for<'de> Decode<'de>> AttachFilter for ContentFilteredTopic<'_, T> {
    fn attach(&self, reader: EntityId) -> (ContentFilterProperty, SampleFilter) {
        let property = self.property(&lock(&self.filter));
        lock(&self.readers).push(reader);
        (
            property,
            sample_filter(
                Arc::clone(&self.filter),
                passes::<T>,
                T::sharing().map(|s| s.type_id()),
            ),
        )
    }
}

/// The reader's filter: `passes` with the shared filter; a writer's value of the reader's
/// own type (`shared`: its identity, when it has sharing) is read as it is, not serialized.
/// Not generic, so the closure does not need `T: 'static`.
fn sample_filter(
    shared: Arc<Mutex<ContentFilter>>,
    passes: fn(&[u8], &ContentFilter) -> bool,
    own_type: Option<std::any::TypeId>,
) -> SampleFilter {
    Arc::new(move |payload: &Payload| {
        let value = payload
            .shared_sample()
            .filter(|v| Some(v.as_any().type_id()) == own_type);
        match value {
            Some(v) => lock(&shared).matches(v.fields()),
            None => passes(payload.as_bytes(), &lock(&shared)),
        }
    })
}

/// Whether a serialized sample passes `f` (one that does not decode passes: the reader
/// counts it as a decode error when it is read).
fn passes<T: DdsType + for<'de> Decode<'de>>(payload: &[u8], f: &ContentFilter) -> bool {
    match tachyon_cdr::deserialize::<T>(payload) {
        Ok(v) => f.matches(&v),
        Err(_) => true,
    }
}

/// [`DdsType::inspect_serialized`] of a type.
type InspectFn = fn(&[u8], &mut dyn FnMut(&dyn Fields) -> bool) -> Option<bool>;

fn kinds_of<T: DdsType>(path: &[&str]) -> Option<FieldKind> {
    T::field_kind(path)
}

/// What a writer of `T` builds its matched readers' announced filters with. A type that
/// cannot decode a payload for inspection ([`DdsType::inspect_serialized`]) lets every
/// sample through (its readers filter).
pub(crate) fn remote_filter_factory<T: DdsType>() -> RemoteFilterFactory {
    factory(kinds_of::<T>, T::inspect_serialized)
}

/// The factory of [`remote_filter_factory`], from the type's functions (not generic, so
/// the closures do not need `T: 'static`).
fn factory(kinds: fn(&[&str]) -> Option<FieldKind>, inspect: InspectFn) -> RemoteFilterFactory {
    Arc::new(
        move |p: &ContentFilterProperty| -> Result<SampleFilter, FilterError> {
            if !p.filter_class_name.eq_ignore_ascii_case(DDSSQL) {
                return Err(FilterError::UnsupportedClass(p.filter_class_name.clone()));
            }
            let f =
                ContentFilter::with_kinds(&p.filter_expression, &p.expression_parameters, &kinds)?;
            Ok(Arc::new(move |payload: &Payload| {
                // A value the writer shares is its own type's: read as it is.
                if let Some(v) = payload.shared_sample() {
                    return f.matches(v.fields());
                }
                inspect(payload.as_bytes(), &mut |s| f.matches(s)).unwrap_or(true)
            }))
        },
    )
}

impl From<FilterError> for Error {
    fn from(e: FilterError) -> Error {
        Error::Filter(e)
    }
}
