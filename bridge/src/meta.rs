//! What travels with each sample in its Zenoh attachment: the topic's type name, whether it
//! is keyed, the writer's reliability, durability, data representation and partitions, and
//! the sample's kind and key hash. Text, one `name=value` per line after a version line, so
//! another program can read it:
//!
//! ```text
//! tachyon-bridge/1
//! type=ShapeType
//! keyed=1
//! reliable=1
//! transient_local=0
//! representation=xcdr1
//! partition=a,b
//! kind=data
//! key=00112233445566778899aabbccddeeff
//! ```

use tachyon::qos::{DataReaderQos, DataRepresentation, DataWriterQos, DurabilityKind, Reliability};
use tachyon::{PublicationBuiltinTopicData, SampleInfo};

const VERSION_LINE: &str = "tachyon-bridge/1";

/// A reader's or writer's QoS for a route (the two builders have the same methods).
macro_rules! endpoint_qos {
    ($qos:expr, $meta:expr) => {{
        let q = $qos.keep_all().ignore_local(true);
        let q = if $meta.reliable {
            q.reliable()
        } else {
            q.best_effort()
        };
        if $meta.transient_local {
            q.transient_local()
        } else {
            q
        }
    }};
}

/// What a sample does to its instance.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Data,
    Disposed,
    Unregistered,
}

impl Kind {
    /// The kind of a sample a DDS reader took.
    pub fn of(info: &SampleInfo) -> Kind {
        if info.valid_data {
            return Kind::Data;
        }
        match info.instance_state {
            tachyon::InstanceState::NotAliveDisposed => Kind::Disposed,
            _ => Kind::Unregistered,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Data => "data",
            Kind::Disposed => "disposed",
            Kind::Unregistered => "unregistered",
        }
    }
}

/// A topic's route description, and a sample's kind and key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Meta {
    pub type_name: String,
    pub keyed: bool,
    pub reliable: bool,
    pub transient_local: bool,
    pub representation: Option<DataRepresentation>,
    pub partition: Vec<String>,
    pub kind: Kind,
    pub key_hash: [u8; 16],
}

impl Meta {
    /// The route of a remote writer's topic, as it announced it.
    pub fn of_publication(p: &PublicationBuiltinTopicData) -> Meta {
        // Entity kind 0x02: a writer of a keyed topic (0x03: without key).
        let keyed = p.key.0.entity_id.0[3] & 0x0f == 0x02;
        Meta {
            type_name: p.type_name.clone(),
            keyed,
            reliable: p.qos.reliability.kind == Reliability::Reliable,
            transient_local: p.qos.durability >= DurabilityKind::TransientLocal,
            representation: p.qos.representation.first().copied(),
            partition: p.partition.clone(),
            kind: Kind::Data,
            key_hash: [0; 16],
        }
    }

    /// "reliable, transient-local".
    pub fn qos_label(&self) -> String {
        format!(
            "{}, {}",
            if self.reliable {
                "reliable"
            } else {
                "best-effort"
            },
            if self.transient_local {
                "transient-local"
            } else {
                "volatile"
            }
        )
    }

    /// The QoS of the bridge's reader of the route's topic: the writer's reliability and
    /// durability, KEEP_ALL, blind to the bridge's own writers.
    pub fn reader_qos(&self) -> DataReaderQos {
        endpoint_qos!(DataReaderQos::default(), self)
    }

    /// The QoS of the bridge's writer of the route's topic: as the original writer's, in
    /// the representation its samples are in.
    pub fn writer_qos(&self) -> DataWriterQos {
        let qos = endpoint_qos!(DataWriterQos::default(), self);
        match self.representation {
            Some(r) => qos.representation(&[r]),
            None => qos,
        }
    }

    /// The subscriber QoS that matches the writer's partitions.
    pub fn partition_qos(&self) -> tachyon::qos::SubscriberQos {
        tachyon::qos::SubscriberQos::default().partition(&self.partition)
    }

    /// The publisher QoS of the writer's partitions.
    pub fn partition_qos_pub(&self) -> tachyon::qos::PublisherQos {
        tachyon::qos::PublisherQos::default().partition(&self.partition)
    }

    /// The attachment of a sample of this route.
    pub fn attachment(&self, kind: Kind, key_hash: [u8; 16]) -> Vec<u8> {
        let representation = match self.representation {
            Some(DataRepresentation::Xcdr1) => "xcdr1",
            Some(DataRepresentation::Xcdr2) => "xcdr2",
            _ => "",
        };
        let key: String = key_hash.iter().map(|b| format!("{b:02x}")).collect();
        format!(
            "{VERSION_LINE}\ntype={}\nkeyed={}\nreliable={}\ntransient_local={}\n\
             representation={representation}\npartition={}\nkind={}\nkey={key}\n",
            self.type_name,
            u8::from(self.keyed),
            u8::from(self.reliable),
            u8::from(self.transient_local),
            self.partition.join(","),
            kind.name(),
        )
        .into_bytes()
    }

    /// Reads an attachment; `None` when it is not one of this bridge's (or malformed).
    pub fn parse(bytes: &[u8]) -> Option<Meta> {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut lines = text.lines();
        if lines.next()? != VERSION_LINE {
            return None;
        }
        let mut m = Meta {
            type_name: String::new(),
            keyed: false,
            reliable: true,
            transient_local: false,
            representation: None,
            partition: Vec::new(),
            kind: Kind::Data,
            key_hash: [0; 16],
        };
        let flag = |v: &str| match v {
            "0" => Some(false),
            "1" => Some(true),
            _ => None,
        };
        for line in lines {
            let (k, v) = line.split_once('=')?;
            match k {
                "type" => m.type_name = v.to_owned(),
                "keyed" => m.keyed = flag(v)?,
                "reliable" => m.reliable = flag(v)?,
                "transient_local" => m.transient_local = flag(v)?,
                "representation" => {
                    m.representation = match v {
                        "xcdr1" => Some(DataRepresentation::Xcdr1),
                        "xcdr2" => Some(DataRepresentation::Xcdr2),
                        "" => None,
                        _ => return None,
                    }
                }
                "partition" => {
                    m.partition = v
                        .split(',')
                        .filter(|p| !p.is_empty())
                        .map(str::to_owned)
                        .collect()
                }
                "kind" => {
                    m.kind = match v {
                        "data" => Kind::Data,
                        "disposed" => Kind::Disposed,
                        "unregistered" => Kind::Unregistered,
                        _ => return None,
                    }
                }
                "key" => {
                    if v.len() != 32 {
                        return None;
                    }
                    for (i, b) in m.key_hash.iter_mut().enumerate() {
                        *b = u8::from_str_radix(v.get(2 * i..2 * i + 2)?, 16).ok()?;
                    }
                }
                // Later versions may add lines.
                _ => {}
            }
        }
        (!m.type_name.is_empty()).then_some(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attachment_reads_back_and_garbage_is_refused() {
        let m = Meta {
            type_name: "ShapeType".into(),
            keyed: true,
            reliable: true,
            transient_local: true,
            representation: Some(DataRepresentation::Xcdr2),
            partition: vec!["a".into(), "b*".into()],
            kind: Kind::Data,
            key_hash: [7; 16],
        };
        let bytes = m.attachment(Kind::Disposed, [0xab; 16]);
        let back = Meta::parse(&bytes).expect("parses");
        assert_eq!(
            back,
            Meta {
                kind: Kind::Disposed,
                key_hash: [0xab; 16],
                ..m
            }
        );
        for bad in [
            &b""[..],
            b"tachyon-bridge/2\ntype=T\n",
            b"tachyon-bridge/1\n",
            b"tachyon-bridge/1\ntype=T\nkeyed=2\n",
            b"tachyon-bridge/1\ntype=T\nkey=zz\n",
            b"tachyon-bridge/1\ntype=T\nno equals sign\n",
            b"\xff\xfe",
        ] {
            assert_eq!(Meta::parse(bad), None, "{bad:?}");
        }
    }
}
