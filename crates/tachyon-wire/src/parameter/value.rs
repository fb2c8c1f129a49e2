//! Typed parameter values and the QoS policy structures they carry.
//!
//! Decoding is strict: a value is typed only if re-encoding it reproduces the received bytes;
//! anything else (odd padding, bad UTF-8, vendor PIDs) stays [`ParameterValue::Opaque`].

use super::pid;
use crate::bytes::{Endian, Reader, Writer};
use crate::error::{EmitError, WireError};
use crate::types::{Duration, EntityId, Guid, Locator, ProtocolVersion, SequenceNumber, VendorId};

/// The value of one parameter, typed by what its PID carries.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ParameterValue {
    /// Bytes kept as received: unknown, vendor-specific or non-canonical values, TYPE_INFORMATION.
    Opaque(Vec<u8>),
    /// A CDR string (TOPIC_NAME, TYPE_NAME, ENTITY_NAME, DOMAIN_TAG).
    String(String),
    /// A sequence of CDR strings (PARTITION).
    StringSeq(Vec<String>),
    /// A sequence of octets (USER_DATA, TOPIC_DATA, GROUP_DATA).
    OctetSeq(Vec<u8>),
    /// An unsigned 32-bit value (DOMAIN_ID, BUILTIN_ENDPOINT_SET, DURABILITY kind, ...).
    U32(u32),
    /// A signed 32-bit value (OWNERSHIP_STRENGTH, TRANSPORT_PRIORITY, manual liveliness count).
    I32(i32),
    /// A boolean octet (EXPECTS_INLINE_QOS).
    Bool(bool),
    /// A duration (DEADLINE, LATENCY_BUDGET, LIFESPAN, TIME_BASED_FILTER, lease duration).
    Duration(Duration),
    /// A locator (all six locator PIDs).
    Locator(Locator),
    /// A GUID (PARTICIPANT_GUID, ENDPOINT_GUID, GROUP_GUID).
    Guid(Guid),
    /// An entity id (PARTICIPANT_ENTITYID, GROUP_ENTITYID).
    EntityId(EntityId),
    /// The 16-byte key hash.
    KeyHash([u8; 16]),
    /// The 4 status-info octets; flags live in the last one.
    StatusInfo([u8; 4]),
    /// A protocol version.
    ProtocolVersion(ProtocolVersion),
    /// A vendor id.
    VendorId(VendorId),
    /// A sequence number (COHERENT_SET, GROUP_COHERENT_SET, GROUP_SEQ_NUM).
    SequenceNumber(SequenceNumber),
    /// RELIABILITY.
    Reliability(ReliabilityQos),
    /// LIVELINESS.
    Liveliness(LivelinessQos),
    /// HISTORY.
    History(HistoryQos),
    /// RESOURCE_LIMITS.
    ResourceLimits(ResourceLimitsQos),
    /// DURABILITY_SERVICE.
    DurabilityService(DurabilityServiceQos),
    /// PRESENTATION.
    Presentation(PresentationQos),
    /// DATA_REPRESENTATION: the representation ids in preference order.
    DataRepresentation(Vec<i16>),
    /// TYPE_CONSISTENCY_ENFORCEMENT: the kind (0 DISALLOW, 1 ALLOW_TYPE_COERCION) and, when
    /// sent, the five option octets that follow it (ignore sequence bounds, ignore string
    /// bounds, ignore member names, prevent type widening, force type validation).
    TypeConsistency {
        /// The kind.
        kind: u16,
        /// The option octets, if the parameter carried them.
        options: Option<[u8; 5]>,
    },
    /// CONTENT_FILTER_PROPERTY.
    ContentFilterProperty(ContentFilterProperty),
    /// ORIGINAL_WRITER_INFO: GUID and sequence number (the nested QoS list stays in padding).
    OriginalWriterInfo(Guid, SequenceNumber),
    /// PROPERTY_LIST: name/value pairs (binary properties, if any, stay in padding).
    PropertyList(Vec<(String, String)>),
}

/// RELIABILITY QoS: kind (1 best effort, 2 reliable) and max blocking time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ReliabilityQos {
    /// 1 = BEST_EFFORT, 2 = RELIABLE.
    pub kind: u32,
    /// How long a reliable write may block.
    pub max_blocking_time: Duration,
}

/// LIVELINESS QoS: kind (0 automatic, 1 manual by participant, 2 manual by topic) and lease.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct LivelinessQos {
    /// Liveliness kind.
    pub kind: u32,
    /// Lease duration.
    pub lease_duration: Duration,
}

/// HISTORY QoS: kind (0 keep last, 1 keep all) and depth.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HistoryQos {
    /// History kind.
    pub kind: u32,
    /// Depth for KEEP_LAST.
    pub depth: i32,
}

/// RESOURCE_LIMITS QoS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct ResourceLimitsQos {
    /// Max samples (-1 unlimited).
    pub max_samples: i32,
    /// Max instances (-1 unlimited).
    pub max_instances: i32,
    /// Max samples per instance (-1 unlimited).
    pub max_samples_per_instance: i32,
}

/// DURABILITY_SERVICE QoS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct DurabilityServiceQos {
    /// Service cleanup delay.
    pub service_cleanup_delay: Duration,
    /// History kind.
    pub history_kind: u32,
    /// History depth.
    pub history_depth: i32,
    /// Resource limits of the durability service.
    pub limits: ResourceLimitsQos,
}

/// PRESENTATION QoS.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct PresentationQos {
    /// 0 instance, 1 topic, 2 group.
    pub access_scope: u32,
    /// Coherent access.
    pub coherent_access: bool,
    /// Ordered access.
    pub ordered_access: bool,
}

/// CONTENT_FILTER_PROPERTY: a content-filtered topic's filter.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ContentFilterProperty {
    /// Name of the content-filtered topic.
    pub content_filtered_topic_name: String,
    /// Name of the topic it filters.
    pub related_topic_name: String,
    /// Filter class (e.g. `DDSSQL`).
    pub filter_class_name: String,
    /// Filter expression.
    pub filter_expression: String,
    /// Expression parameters.
    pub expression_parameters: Vec<String>,
}

impl ParameterValue {
    /// Decodes `raw` for `pid`: the typed value and how many bytes it used, else `Opaque`.
    pub(crate) fn decode(pid: u16, raw: &[u8], endian: Endian) -> (ParameterValue, usize) {
        let mut value = ParameterValue::Opaque(Vec::new());
        let used = Self::decode_into(pid, raw, endian, &mut value);
        (value, used)
    }

    /// [`Self::decode`] into `out` (which must hold an empty `Opaque`), so the value is built
    /// in its final place rather than in a temporary that is then copied.
    #[inline]
    pub(crate) fn decode_into(pid: u16, raw: &[u8], endian: Endian, out: &mut Self) -> usize {
        let mut r = Reader::new(raw, 0, "parameter value", endian);
        // A typed value re-encodes to exactly the bytes it was read from: every field is read
        // and written in the same order, width and byte order, the readers reject the values
        // that would not round-trip (booleans other than 0/1, non-UTF-8 strings) and
        // `align4` rejects non-zero padding. So no trial re-encoding is needed here; the
        // round trip itself is checked by the tests and the fuzz targets.
        match decode_typed(pid, &mut r, out) {
            Ok(true) => r.pos(),
            _ => {
                *out = ParameterValue::Opaque(crate::bytes::to_vec(raw));
                raw.len()
            }
        }
    }

    /// Bytes the value takes when encoded (without padding).
    pub fn wire_len(&self) -> usize {
        let mut n = Counter(0);
        // Encoding into a counter cannot fail; it only adds lengths.
        self.encode_to(&mut n);
        n.0
    }

    /// Encodes the value (without padding).
    pub(crate) fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        let mut sink = WriterSink { w, err: None };
        self.encode_to(&mut sink);
        match sink.err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn encode_to(&self, s: &mut dyn Sink) {
        match self {
            ParameterValue::Opaque(b) => s.put(b),
            ParameterValue::String(v) => put_string(s, v),
            ParameterValue::StringSeq(v) => put_strings(s, v),
            ParameterValue::OctetSeq(v) => {
                s.u32(len_u32(v.len()));
                s.put(v);
            }
            ParameterValue::U32(v) => s.u32(*v),
            ParameterValue::I32(v) => s.u32(*v as u32),
            ParameterValue::Bool(v) => s.put(&[u8::from(*v)]),
            ParameterValue::Duration(d) => put_duration(s, d),
            ParameterValue::Locator(l) => {
                s.u32(l.kind as u32);
                s.u32(l.port);
                s.put(&l.address);
            }
            ParameterValue::Guid(g) => {
                s.put(&g.prefix.0);
                s.put(&g.entity_id.0);
            }
            ParameterValue::EntityId(e) => s.put(&e.0),
            ParameterValue::KeyHash(k) => s.put(k),
            ParameterValue::StatusInfo(k) => s.put(k),
            ParameterValue::ProtocolVersion(v) => s.put(&[v.major, v.minor]),
            ParameterValue::VendorId(v) => s.put(&v.0),
            ParameterValue::SequenceNumber(sn) => {
                s.u32(sn.high() as u32);
                s.u32(sn.low());
            }
            ParameterValue::Reliability(q) => {
                s.u32(q.kind);
                put_duration(s, &q.max_blocking_time);
            }
            ParameterValue::Liveliness(q) => {
                s.u32(q.kind);
                put_duration(s, &q.lease_duration);
            }
            ParameterValue::History(q) => {
                s.u32(q.kind);
                s.u32(q.depth as u32);
            }
            ParameterValue::ResourceLimits(q) => put_limits(s, q),
            ParameterValue::DurabilityService(q) => {
                put_duration(s, &q.service_cleanup_delay);
                s.u32(q.history_kind);
                s.u32(q.history_depth as u32);
                put_limits(s, &q.limits);
            }
            ParameterValue::Presentation(q) => {
                s.u32(q.access_scope);
                s.put(&[u8::from(q.coherent_access), u8::from(q.ordered_access)]);
            }
            ParameterValue::DataRepresentation(v) => {
                s.u32(len_u32(v.len()));
                for id in v {
                    s.u16(*id as u16);
                }
            }
            ParameterValue::TypeConsistency { kind, options } => {
                s.u16(*kind);
                if let Some(o) = options {
                    s.put(o);
                }
            }
            ParameterValue::ContentFilterProperty(c) => {
                for (i, text) in [
                    &c.content_filtered_topic_name,
                    &c.related_topic_name,
                    &c.filter_class_name,
                    &c.filter_expression,
                ]
                .into_iter()
                .enumerate()
                {
                    if i > 0 {
                        s.align4();
                    }
                    put_string(s, text);
                }
                s.align4();
                put_strings(s, &c.expression_parameters);
            }
            ParameterValue::OriginalWriterInfo(g, sn) => {
                s.put(&g.prefix.0);
                s.put(&g.entity_id.0);
                s.u32(sn.high() as u32);
                s.u32(sn.low());
            }
            ParameterValue::PropertyList(props) => {
                s.u32(len_u32(props.len()));
                for (name, value) in props {
                    s.align4();
                    put_string(s, name);
                    s.align4();
                    put_string(s, value);
                }
            }
        }
    }
}

/// Decodes the typed value for `pid` into `out`; `Ok(false)` (and `out` untouched) when the
/// PID is kept opaque.
#[inline(always)]
fn decode_typed(pid: u16, r: &mut Reader<'_>, out: &mut ParameterValue) -> Result<bool, WireError> {
    use ParameterValue as V;
    *out = match pid {
        pid::TOPIC_NAME | pid::TYPE_NAME | pid::ENTITY_NAME | pid::DOMAIN_TAG => {
            V::String(string(r)?)
        }
        pid::PARTITION => V::StringSeq(strings(r)?),
        pid::USER_DATA | pid::TOPIC_DATA | pid::GROUP_DATA => {
            let n = r.u32()? as usize;
            V::OctetSeq(r.take(n)?.to_vec())
        }
        pid::DOMAIN_ID
        | pid::BUILTIN_ENDPOINT_SET
        | pid::BUILTIN_ENDPOINT_QOS
        | pid::PARTICIPANT_BUILTIN_ENDPOINTS
        | pid::DURABILITY
        | pid::DESTINATION_ORDER
        | pid::OWNERSHIP
        | pid::TYPE_MAX_SIZE_SERIALIZED
        | pid::WRITER_GROUP_INFO => V::U32(r.u32()?),
        pid::OWNERSHIP_STRENGTH
        | pid::TRANSPORT_PRIORITY
        | pid::PARTICIPANT_MANUAL_LIVELINESS_COUNT => V::I32(r.i32()?),
        pid::EXPECTS_INLINE_QOS => match r.u8()? {
            0 => V::Bool(false),
            1 => V::Bool(true),
            _ => return Ok(false),
        },
        pid::DEADLINE
        | pid::LATENCY_BUDGET
        | pid::LIFESPAN
        | pid::TIME_BASED_FILTER
        | pid::PARTICIPANT_LEASE_DURATION => V::Duration(r.decode()?),
        pid::UNICAST_LOCATOR
        | pid::MULTICAST_LOCATOR
        | pid::DEFAULT_UNICAST_LOCATOR
        | pid::DEFAULT_MULTICAST_LOCATOR
        | pid::METATRAFFIC_UNICAST_LOCATOR
        | pid::METATRAFFIC_MULTICAST_LOCATOR => V::Locator(r.decode()?),
        pid::PARTICIPANT_GUID | pid::ENDPOINT_GUID | pid::GROUP_GUID => V::Guid(r.decode()?),
        pid::PARTICIPANT_ENTITYID | pid::GROUP_ENTITYID => V::EntityId(r.decode()?),
        pid::KEY_HASH => V::KeyHash(r.array()?),
        pid::STATUS_INFO => V::StatusInfo(r.array()?),
        pid::PROTOCOL_VERSION => V::ProtocolVersion(r.decode()?),
        pid::VENDOR_ID => V::VendorId(r.decode()?),
        pid::COHERENT_SET | pid::GROUP_COHERENT_SET | pid::GROUP_SEQ_NUM => {
            V::SequenceNumber(r.decode()?)
        }
        pid::RELIABILITY => V::Reliability(ReliabilityQos {
            kind: r.u32()?,
            max_blocking_time: r.decode()?,
        }),
        pid::LIVELINESS => V::Liveliness(LivelinessQos {
            kind: r.u32()?,
            lease_duration: r.decode()?,
        }),
        pid::HISTORY => V::History(HistoryQos {
            kind: r.u32()?,
            depth: r.i32()?,
        }),
        pid::RESOURCE_LIMITS => V::ResourceLimits(limits(r)?),
        pid::DURABILITY_SERVICE => V::DurabilityService(DurabilityServiceQos {
            service_cleanup_delay: r.decode()?,
            history_kind: r.u32()?,
            history_depth: r.i32()?,
            limits: limits(r)?,
        }),
        pid::PRESENTATION => {
            let access_scope = r.u32()?;
            let [c, o] = r.array()?;
            if c > 1 || o > 1 {
                return Ok(false);
            }
            V::Presentation(PresentationQos {
                access_scope,
                coherent_access: c == 1,
                ordered_access: o == 1,
            })
        }
        pid::DATA_REPRESENTATION => {
            let n = r.u32()? as usize;
            if n > r.remaining() / 2 {
                return Err(r.truncated(n.saturating_mul(2)));
            }
            let mut ids = Vec::with_capacity(n);
            for _ in 0..n {
                ids.push(r.i16()?);
            }
            V::DataRepresentation(ids)
        }
        pid::TYPE_CONSISTENCY_ENFORCEMENT => {
            let kind = r.u16()?;
            let options = if r.remaining() >= 5 {
                let mut o = [0u8; 5];
                o.copy_from_slice(r.take(5)?);
                Some(o)
            } else {
                None
            };
            V::TypeConsistency { kind, options }
        }
        pid::CONTENT_FILTER_PROPERTY => {
            let content_filtered_topic_name = string(r)?;
            align4(r)?;
            let related_topic_name = string(r)?;
            align4(r)?;
            let filter_class_name = string(r)?;
            align4(r)?;
            let filter_expression = string(r)?;
            align4(r)?;
            V::ContentFilterProperty(ContentFilterProperty {
                content_filtered_topic_name,
                related_topic_name,
                filter_class_name,
                filter_expression,
                expression_parameters: strings(r)?,
            })
        }
        pid::ORIGINAL_WRITER_INFO => V::OriginalWriterInfo(r.decode()?, r.decode()?),
        pid::PROPERTY_LIST => {
            let n = r.u32()? as usize;
            if n > r.remaining() / 8 {
                return Err(r.truncated(n.saturating_mul(8)));
            }
            let mut props = Vec::with_capacity(n);
            for _ in 0..n {
                align4(r)?;
                let name = string(r)?;
                align4(r)?;
                props.push((name, string(r)?));
            }
            V::PropertyList(props)
        }
        _ => return Ok(false),
    };
    Ok(true)
}

/// A CDR string: u32 length including the NUL, the bytes, the NUL. Must be UTF-8.
fn string(r: &mut Reader<'_>) -> Result<String, WireError> {
    let n = r.u32()? as usize;
    let bytes = r.take(n)?;
    match bytes.split_last() {
        Some((0, text)) => std::str::from_utf8(text)
            .map(str::to_owned)
            .map_err(|_| r.truncated(0)),
        _ => Err(r.truncated(0)),
    }
}

/// A sequence of CDR strings, each 4-aligned.
fn strings(r: &mut Reader<'_>) -> Result<Vec<String>, WireError> {
    let n = r.u32()? as usize;
    if n > r.remaining() / 4 {
        return Err(r.truncated(n.saturating_mul(4)));
    }
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        if i > 0 {
            align4(r)?;
        }
        v.push(string(r)?);
    }
    Ok(v)
}

fn limits(r: &mut Reader<'_>) -> Result<ResourceLimitsQos, WireError> {
    Ok(ResourceLimitsQos {
        max_samples: r.i32()?,
        max_instances: r.i32()?,
        max_samples_per_instance: r.i32()?,
    })
}

/// Skips to the next 4-aligned position relative to the start of the value.
///
/// The padding must be zero, as the encoder writes it; otherwise the value is not canonical
/// and is kept opaque (the error is only a signal to `decode`).
fn align4(r: &mut Reader<'_>) -> Result<(), WireError> {
    let pad = r.take((4 - r.pos() % 4) % 4)?;
    if pad.iter().any(|&b| b != 0) {
        return Err(r.truncated(0));
    }
    Ok(())
}

fn len_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Where encoded bytes go: a length counter or a real writer.
trait Sink {
    fn put(&mut self, b: &[u8]);
    fn pos(&self) -> usize;
    fn u16(&mut self, v: u16);
    fn u32(&mut self, v: u32);
    fn align4(&mut self) {
        let pad = (4 - self.pos() % 4) % 4;
        self.put(&[0u8; 3][..pad]);
    }
}

struct Counter(usize);

impl Sink for Counter {
    fn put(&mut self, b: &[u8]) {
        self.0 = self.0.saturating_add(b.len());
    }
    fn pos(&self) -> usize {
        self.0
    }
    fn u16(&mut self, _: u16) {
        self.0 = self.0.saturating_add(2);
    }
    fn u32(&mut self, _: u32) {
        self.0 = self.0.saturating_add(4);
    }
}

/// Writes through a [`Writer`] positioned at the start of the value, keeping the first error.
struct WriterSink<'w, 'b> {
    w: &'w mut Writer<'b>,
    err: Option<EmitError>,
}

impl WriterSink<'_, '_> {
    fn keep(&mut self, r: Result<(), EmitError>) {
        if let (Err(e), None) = (r, &self.err) {
            self.err = Some(e);
        }
    }
}

impl Sink for WriterSink<'_, '_> {
    fn put(&mut self, b: &[u8]) {
        let r = self.w.put(b);
        self.keep(r);
    }
    fn pos(&self) -> usize {
        self.w.pos()
    }
    fn u16(&mut self, v: u16) {
        let r = self.w.u16(v);
        self.keep(r);
    }
    fn u32(&mut self, v: u32) {
        let r = self.w.u32(v);
        self.keep(r);
    }
}

fn put_string(s: &mut dyn Sink, v: &str) {
    s.u32(len_u32(v.len().saturating_add(1)));
    s.put(v.as_bytes());
    s.put(&[0]);
}

fn put_strings(s: &mut dyn Sink, v: &[String]) {
    s.u32(len_u32(v.len()));
    for (i, text) in v.iter().enumerate() {
        if i > 0 {
            s.align4();
        }
        put_string(s, text);
    }
}

fn put_duration(s: &mut dyn Sink, d: &Duration) {
    s.u32(d.seconds as u32);
    s.u32(d.fraction);
}

fn put_limits(s: &mut dyn Sink, q: &ResourceLimitsQos) {
    s.u32(q.max_samples as u32);
    s.u32(q.max_instances as u32);
    s.u32(q.max_samples_per_instance as u32);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `decode` no longer re-encodes to check that a typed value is canonical; this checks
    /// that claim on many generated values for every PID, in both byte orders.
    #[test]
    fn typed_values_re_encode_to_their_bytes() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut typed = 0usize;
        for round in 0..200_000u32 {
            let pid = (next() % 0x0080) as u16;
            let len = next() % 48;
            let endian = if round % 2 == 0 {
                Endian::Little
            } else {
                Endian::Big
            };
            let u32_bytes = |v: u32| match endian {
                Endian::Little => v.to_le_bytes(),
                Endian::Big => v.to_be_bytes(),
            };
            let raw: Vec<u8> = if round % 4 < 2 {
                // Mostly small bytes, so lengths, booleans and short strings often parse.
                (0..len)
                    .map(|_| match next() % 8 {
                        0..=3 => 0,
                        4 => 1,
                        5 => (next() % 8) as u8,
                        6 => b'a',
                        _ => next() as u8,
                    })
                    .collect()
            } else {
                // A count and CDR strings with zero or garbage padding (string sequences,
                // property lists, content filters).
                let strings = (next() % 9) as u32;
                let mut v = u32_bytes(if next() % 2 == 0 {
                    strings / 2
                } else {
                    strings
                })
                .to_vec();
                for _ in 0..strings {
                    while v.len() % 4 != 0 {
                        v.push(if next() % 8 == 0 { next() as u8 | 1 } else { 0 });
                    }
                    let n = (next() % 6) as u32;
                    v.extend_from_slice(&u32_bytes(n + 1));
                    v.extend((0..n).map(|_| b'a'));
                    v.push(0);
                }
                v.extend((0..next() % 4).map(|_| 0));
                v
            };
            let (value, used) = ParameterValue::decode(pid, &raw, endian);
            if let ParameterValue::Opaque(bytes) = &value {
                assert_eq!(bytes, &raw);
                continue;
            }
            typed += 1;
            let mut again = vec![0u8; value.wire_len()];
            value
                .encode(&mut Writer::new(&mut again, endian))
                .expect("a buffer of wire_len bytes holds the value");
            assert_eq!(
                Some(&again[..]),
                raw.get(..used),
                "pid {pid:#06x} {value:?}"
            );
        }
        assert!(typed > 10_000, "only {typed} typed values generated");
    }
}
