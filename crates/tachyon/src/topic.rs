//! [`Topic`]: a name, a type and the QoS its writers and readers start from.

use std::marker::PhantomData;

use tachyon_proto::qos::TopicQos;

/// A typed topic.
#[derive(Debug)]
pub struct Topic<T> {
    name: String,
    type_name: &'static str,
    qos: TopicQos,
    _type: PhantomData<fn() -> T>,
}

impl<T> Topic<T> {
    pub(crate) fn new(name: &str, type_name: &'static str, qos: TopicQos) -> Topic<T> {
        Topic {
            name: name.to_owned(),
            type_name,
            qos,
            _type: PhantomData,
        }
    }

    /// The topic name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The type name announced in discovery (compared exactly by every vendor).
    pub fn type_name(&self) -> &str {
        self.type_name
    }

    /// The topic's QoS.
    pub fn qos(&self) -> &TopicQos {
        &self.qos
    }
}
