//! The builtin-topic data discovery exchanges: DCPSParticipant (SPDP), DCPSPublication and
//! DCPSSubscription (SEDP), and the participant message (liveliness), with their
//! ParameterList (PL_CDR) encodings.
//!
//! Decoding is tolerant of what the spec allows (absent parameters take their defaults,
//! unknown and vendor-specific PIDs are skipped) and strict about the rest: a malformed value
//! or an unknown PID with the must-understand bit rejects the sample with a [`DataError`]
//! that names the parameter.
//!
//! Encoding emits PL_CDR_LE with the parameters 4-aligned and only what a receiver cannot
//! assume: policies at their defaults are left out, except RELIABILITY, DURABILITY and
//! DATA_REPRESENTATION, which are always sent because implementations disagree on their
//! defaults.
//!
//! Defaults of absent parameters are those Cyclone DDS 0.10 and Fast DDS 2.9 apply (both
//! checked in their sources): a publication without RELIABILITY is RELIABLE (Cyclone merges
//! in `ddsi_default_qos_writer`, Fast DDS's `WriterQos::clear` sets RELIABLE), a subscription
//! without it BEST_EFFORT, `max_blocking_time` 100 ms; DATA_REPRESENTATION absent is
//! `[XCDR1]`; PARTICIPANT_LEASE_DURATION absent is 100 s; every other policy takes its DDS
//! default.
//!
//! Durations are RTPS `Duration_t` (seconds, fraction in 2^-32 s), DURATION_INFINITE being
//! `None`; both peers encode them so (a 100 ms `max_blocking_time` from Fast DDS is
//! fraction `0x1999999a`).

use std::sync::Arc;

use tachyon_wire::parameter::payload::encapsulation;
use tachyon_wire::parameter::{
    pid, ContentFilterProperty, DurabilityServiceQos, HistoryQos, LivelinessQos, PresentationQos,
    ReliabilityQos as WireReliability, ResourceLimitsQos,
};
use tachyon_wire::{
    Duration as WireDuration, Encapsulation, EntityId, Guid, GuidPrefix, Locator, Parameter,
    ParameterList, ParameterListPayload, ParameterListPayloadView, ParameterValue, ProtocolVersion,
    VendorId,
};
use tachyon_xtypes::TypeInformation;

use crate::qos::{
    AccessScope, DataReaderQos, DataRepresentation, DataWriterQos, DestinationOrderKind,
    DurabilityKind, DurabilityService, History, Liveliness, LivelinessKind, OwnershipKind,
    Presentation, Reliability, ReliabilityQos, ResourceLimits, TypeConsistency,
    TypeConsistencyKind,
};
use crate::time::Duration;

/// PARTICIPANT_LEASE_DURATION of a participant that does not announce one (RTPS 2.5 9.6.2.2).
pub const DEFAULT_PARTICIPANT_LEASE: Duration = Duration::from_secs(100);

/// Builtin endpoint set bits (RTPS 2.5 9.3.2.12 and DDS-XTypes).
pub mod builtin_endpoints {
    /// SPDP participant announcer (writer).
    pub const PARTICIPANT_ANNOUNCER: u32 = 1 << 0;
    /// SPDP participant detector (reader).
    pub const PARTICIPANT_DETECTOR: u32 = 1 << 1;
    /// SEDP publications announcer.
    pub const PUBLICATIONS_ANNOUNCER: u32 = 1 << 2;
    /// SEDP publications detector.
    pub const PUBLICATIONS_DETECTOR: u32 = 1 << 3;
    /// SEDP subscriptions announcer.
    pub const SUBSCRIPTIONS_ANNOUNCER: u32 = 1 << 4;
    /// SEDP subscriptions detector.
    pub const SUBSCRIPTIONS_DETECTOR: u32 = 1 << 5;
    /// Participant message (liveliness) writer.
    pub const PARTICIPANT_MESSAGE_WRITER: u32 = 1 << 10;
    /// Participant message (liveliness) reader.
    pub const PARTICIPANT_MESSAGE_READER: u32 = 1 << 11;
    /// XTypes TypeLookup request writer.
    pub const TYPE_LOOKUP_REQUEST_WRITER: u32 = 1 << 12;
    /// XTypes TypeLookup request reader.
    pub const TYPE_LOOKUP_REQUEST_READER: u32 = 1 << 13;
    /// XTypes TypeLookup reply writer.
    pub const TYPE_LOOKUP_REPLY_WRITER: u32 = 1 << 14;
    /// XTypes TypeLookup reply reader.
    pub const TYPE_LOOKUP_REPLY_READER: u32 = 1 << 15;
    /// SEDP topics announcer.
    pub const TOPICS_ANNOUNCER: u32 = 1 << 28;
    /// SEDP topics detector.
    pub const TOPICS_DETECTOR: u32 = 1 << 29;
}

/// DCPSParticipant: what SPDP announces about a participant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParticipantData {
    /// The participant's GUID prefix (from PID_PARTICIPANT_GUID).
    pub guid_prefix: GuidPrefix,
    /// PID_PROTOCOL_VERSION.
    pub protocol_version: ProtocolVersion,
    /// PID_VENDORID.
    pub vendor_id: VendorId,
    /// PID_DOMAIN_ID (`None` when absent: the receiver's own domain is assumed).
    pub domain_id: Option<u32>,
    /// PID_DOMAIN_TAG (default empty).
    pub domain_tag: String,
    /// PID_EXPECTS_INLINE_QOS (default false).
    pub expects_inline_qos: bool,
    /// PID_METATRAFFIC_UNICAST_LOCATOR: where SEDP and liveliness traffic goes.
    pub metatraffic_unicast: Vec<Locator>,
    /// PID_METATRAFFIC_MULTICAST_LOCATOR.
    pub metatraffic_multicast: Vec<Locator>,
    /// PID_DEFAULT_UNICAST_LOCATOR: user traffic of endpoints that list no locator.
    pub default_unicast: Vec<Locator>,
    /// PID_DEFAULT_MULTICAST_LOCATOR.
    pub default_multicast: Vec<Locator>,
    /// PID_BUILTIN_ENDPOINT_SET ([`builtin_endpoints`] bits).
    pub builtin_endpoints: u32,
    /// PID_PARTICIPANT_LEASE_DURATION (default 100 s; `None` = infinite).
    pub lease_duration: Option<Duration>,
    /// PID_PARTICIPANT_MANUAL_LIVELINESS_COUNT (default 0).
    pub manual_liveliness_count: i32,
    /// PID_USER_DATA.
    pub user_data: Vec<u8>,
    /// PID_ENTITY_NAME, if sent.
    pub entity_name: Option<String>,
    /// PID_PROPERTY_LIST name/value pairs.
    pub properties: Vec<(String, String)>,
    /// The version of the implementation, when its vendor announces it in a parameter of its
    /// own ([`ProductVersion`]); received only (Tachyon does not announce one).
    pub product_version: Option<ProductVersion>,
}

/// The release of the implementation a participant runs, from its vendor's own parameter:
/// Cyclone DDS's PID_ADLINK_PARTICIPANT_VERSION_INFO (0x8007, whose string reads
/// `host/0.10.2/…`), Fast DDS's and RTI Connext's PID_PRODUCT_VERSION (0x8000, four octets
/// major, minor, patch, tweak). Quirks of a release are keyed on it ([`crate::quirks`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ProductVersion {
    /// Major release number.
    pub major: u16,
    /// Minor release number.
    pub minor: u16,
    /// Patch number.
    pub patch: u16,
}

impl ProductVersion {
    /// A version `major.minor.patch`.
    pub const fn new(major: u16, minor: u16, patch: u16) -> ProductVersion {
        ProductVersion {
            major,
            minor,
            patch,
        }
    }

    /// Parses `major.minor[.patch]` (anything after a further dot or dash ignored).
    pub fn parse(s: &str) -> Option<ProductVersion> {
        let mut parts = s.split(['.', '-']).map(|p| p.parse::<u16>());
        let major = parts.next()?.ok()?;
        let minor = parts.next()?.ok()?;
        let patch = parts.next().and_then(Result::ok).unwrap_or(0);
        Some(ProductVersion::new(major, minor, patch))
    }

    /// The version a participant of `vendor` announces in the vendor-specific parameters of
    /// its SPDP `payload`, if any (a malformed one is ignored: it is only informative).
    fn from_spdp(payload: &[u8], vendor: VendorId) -> Option<ProductVersion> {
        const ADLINK_PARTICIPANT_VERSION_INFO: u16 = 0x8007;
        const PRODUCT_VERSION: u16 = 0x8000;
        let view = ParameterListPayloadView::parse(payload).ok()?;
        let list = view.list();
        if vendor == VendorId::CYCLONE_DDS {
            // version, flags, 3 unused (u32 each), then a CDR string: length, octets, NUL.
            let v = list.get(ADLINK_PARTICIPANT_VERSION_INFO)?;
            let len = v.get(20..24)?;
            let len = match list.endian() {
                tachyon_wire::Endian::Little => u32::from_le_bytes(len.try_into().ok()?),
                tachyon_wire::Endian::Big => u32::from_be_bytes(len.try_into().ok()?),
            };
            let text = v.get(24..24usize.checked_add(len as usize)?)?;
            let text = std::str::from_utf8(text).ok()?.trim_end_matches('\0');
            return ProductVersion::parse(text.split('/').nth(1)?);
        }
        if vendor == VendorId::FAST_DDS || vendor == VendorId::RTI_CONNEXT {
            let &[major, minor, patch, _] = list.get(PRODUCT_VERSION)?.first_chunk::<4>()?;
            return Some(ProductVersion::new(
                major.into(),
                minor.into(),
                patch.into(),
            ));
        }
        None
    }
}

impl std::fmt::Display for ProductVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// DCPSPublication: what SEDP announces about a writer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicationData {
    /// PID_ENDPOINT_GUID.
    pub guid: Guid,
    /// PID_PARTICIPANT_GUID, if sent.
    pub participant_guid: Option<Guid>,
    /// PID_TOPIC_NAME.
    pub topic_name: String,
    /// PID_TYPE_NAME.
    pub type_name: String,
    /// PID_UNICAST_LOCATOR (empty: the participant's default locators apply).
    pub unicast_locators: Vec<Locator>,
    /// PID_MULTICAST_LOCATOR.
    pub multicast_locators: Vec<Locator>,
    /// The writer's QoS as announced (fields SEDP does not carry keep their defaults); shared
    /// between the endpoints that announce the same (discovery keeps one per distinct QoS,
    /// `docs/scale.md`): change it with `Arc::make_mut`.
    pub qos: Arc<DataWriterQos>,
    /// PRESENTATION of its publisher.
    pub presentation: Presentation,
    /// PID_GROUP_ENTITYID: its publisher, if sent.
    pub group_entity_id: Option<EntityId>,
    /// PARTITION of its publisher.
    pub partition: Vec<String>,
    /// GROUP_DATA of its publisher.
    pub group_data: Vec<u8>,
    /// TOPIC_DATA.
    pub topic_data: Vec<u8>,
    /// PID_TYPE_INFORMATION, kept as received.
    pub type_information: Option<Vec<u8>>,
    /// PID_TYPE_INFORMATION decoded, when it does (Fast DDS 2.x sends a form that does not,
    /// XCDR1 with an encapsulation header: such an endpoint is matched by type name).
    pub type_info: Option<Arc<TypeInformation>>,
    /// Whether the announcement carried PID_DATA_REPRESENTATION (`qos.representation` holds
    /// XCDR1, the spec's meaning of its absence, when it did not). Fast DDS up to 2.x never
    /// sends it, whatever its application asked (`compat::Unannounced`).
    pub representation_announced: bool,
    /// PID_ENTITY_NAME, if sent.
    pub entity_name: Option<String>,
}

/// DCPSSubscription: what SEDP announces about a reader.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubscriptionData {
    /// PID_ENDPOINT_GUID.
    pub guid: Guid,
    /// PID_PARTICIPANT_GUID, if sent.
    pub participant_guid: Option<Guid>,
    /// PID_TOPIC_NAME.
    pub topic_name: String,
    /// PID_TYPE_NAME.
    pub type_name: String,
    /// PID_UNICAST_LOCATOR (empty: the participant's default locators apply).
    pub unicast_locators: Vec<Locator>,
    /// PID_MULTICAST_LOCATOR.
    pub multicast_locators: Vec<Locator>,
    /// PID_EXPECTS_INLINE_QOS.
    pub expects_inline_qos: bool,
    /// The reader's QoS as announced; shared as [`PublicationData::qos`] is.
    pub qos: Arc<DataReaderQos>,
    /// PRESENTATION of its subscriber.
    pub presentation: Presentation,
    /// PARTITION of its subscriber.
    pub partition: Vec<String>,
    /// GROUP_DATA of its subscriber.
    pub group_data: Vec<u8>,
    /// TOPIC_DATA.
    pub topic_data: Vec<u8>,
    /// PID_CONTENT_FILTER_PROPERTY, if the reader filters.
    pub content_filter: Option<ContentFilterProperty>,
    /// PID_TYPE_INFORMATION, kept as received.
    pub type_information: Option<Vec<u8>>,
    /// PID_TYPE_INFORMATION decoded, when it does (Fast DDS 2.x sends a form that does not,
    /// XCDR1 with an encapsulation header: such an endpoint is matched by type name).
    pub type_info: Option<Arc<TypeInformation>>,
    /// Whether the announcement carried PID_DATA_REPRESENTATION (`qos.representation` holds
    /// XCDR1, the spec's meaning of its absence, when it did not). Fast DDS up to 2.x never
    /// sends it, whatever its application asked (`compat::Unannounced`).
    pub representation_announced: bool,
    /// PID_ENTITY_NAME, if sent.
    pub entity_name: Option<String>,
}

/// ParticipantMessageData (the liveliness topic): a participant asserting its writers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParticipantMessage {
    /// The participant whose writers are asserted.
    pub guid_prefix: GuidPrefix,
    /// The kind: [`ParticipantMessage::AUTOMATIC`], [`ParticipantMessage::MANUAL`] or another.
    pub kind: [u8; 4],
    /// Opaque data.
    pub data: Vec<u8>,
}

/// Decodes the value of PID_TYPE_INFORMATION `value` of the parameter list `payload` (in the
/// list's byte order).
pub fn decode_type_information(
    payload: &[u8],
    value: &[u8],
) -> Result<TypeInformation, tachyon_cdr::DecodeError> {
    let endian = match payload.get(1) {
        Some(0x02) => tachyon_cdr::Endianness::Big,
        _ => tachyon_cdr::Endianness::Little,
    };
    TypeInformation::from_bytes(value, endian)
}

macro_rules! set_type_information {
    ($t:ty) => {
        impl $t {
            /// Announces `info` as this endpoint's TypeInformation (PID_TYPE_INFORMATION).
            pub fn set_type_information(&mut self, info: &TypeInformation) {
                self.type_information = info.to_bytes().ok();
                self.type_info = self
                    .type_information
                    .is_some()
                    .then(|| Arc::new(info.clone()));
            }
        }
    };
}
set_type_information!(PublicationData);
set_type_information!(SubscriptionData);

impl ParticipantMessage {
    /// PARTICIPANT_MESSAGE_DATA_KIND_AUTOMATIC_LIVELINESS_UPDATE.
    pub const AUTOMATIC: [u8; 4] = [0, 0, 0, 1];
    /// PARTICIPANT_MESSAGE_DATA_KIND_MANUAL_LIVELINESS_UPDATE.
    pub const MANUAL: [u8; 4] = [0, 0, 0, 2];
}

/// Why a builtin-topic sample was rejected.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum DataError {
    /// The payload is not a parameter list (bad encapsulation or structure).
    Malformed(String),
    /// A required parameter is absent.
    Missing(&'static str),
    /// A parameter's value does not decode.
    BadValue {
        /// The parameter id.
        pid: u16,
        /// What is wrong.
        reason: &'static str,
    },
    /// An unknown parameter has the must-understand bit set.
    MustUnderstand(u16),
}

impl std::fmt::Display for DataError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DataError::Malformed(e) => write!(f, "not a parameter list: {e}"),
            DataError::Missing(p) => write!(f, "required parameter {p} is missing"),
            DataError::BadValue { pid, reason } => {
                write!(f, "parameter 0x{pid:04x} does not decode: {reason}")
            }
            DataError::MustUnderstand(pid) => {
                write!(f, "unknown parameter 0x{pid:04x} is marked must-understand")
            }
        }
    }
}

impl std::error::Error for DataError {}

impl ParticipantData {
    /// The data of a participant with `guid_prefix` and `vendor_id` and every other field at the
    /// value an absent parameter implies (protocol 2.5, lease 100 s, no locators, no builtin
    /// endpoints).
    pub fn new(guid_prefix: GuidPrefix, vendor_id: VendorId) -> ParticipantData {
        ParticipantData {
            guid_prefix,
            protocol_version: ProtocolVersion::V2_5,
            vendor_id,
            domain_id: None,
            domain_tag: String::new(),
            expects_inline_qos: false,
            metatraffic_unicast: Vec::new(),
            metatraffic_multicast: Vec::new(),
            default_unicast: Vec::new(),
            default_multicast: Vec::new(),
            builtin_endpoints: 0,
            lease_duration: Some(DEFAULT_PARTICIPANT_LEASE),
            manual_liveliness_count: 0,
            user_data: Vec::new(),
            entity_name: None,
            properties: Vec::new(),
            product_version: None,
        }
    }

    /// The participant's GUID (its prefix with ENTITYID_PARTICIPANT).
    pub fn guid(&self) -> Guid {
        Guid::new(self.guid_prefix, EntityId::PARTICIPANT)
    }

    /// The SPDP serialized payload (PL_CDR_LE).
    ///
    /// A value longer than a parameter can hold (65 532 bytes) is left out.
    pub fn to_payload(&self) -> Vec<u8> {
        use ParameterValue as V;
        let mut l = ListBuilder::default();
        l.push(
            pid::PROTOCOL_VERSION,
            V::ProtocolVersion(self.protocol_version),
        );
        l.push(pid::VENDOR_ID, V::VendorId(self.vendor_id));
        l.push(pid::PARTICIPANT_GUID, V::Guid(self.guid()));
        if let Some(domain_id) = self.domain_id {
            l.push(pid::DOMAIN_ID, V::U32(domain_id));
        }
        // DOMAIN_TAG is must-understand: sending the default would make implementations that
        // do not know it ignore us.
        if !self.domain_tag.is_empty() {
            l.push(pid::DOMAIN_TAG, V::String(self.domain_tag.clone()));
        }
        l.locators(pid::DEFAULT_UNICAST_LOCATOR, &self.default_unicast);
        l.locators(pid::DEFAULT_MULTICAST_LOCATOR, &self.default_multicast);
        l.locators(pid::METATRAFFIC_UNICAST_LOCATOR, &self.metatraffic_unicast);
        l.locators(
            pid::METATRAFFIC_MULTICAST_LOCATOR,
            &self.metatraffic_multicast,
        );
        if self.expects_inline_qos {
            l.push(pid::EXPECTS_INLINE_QOS, V::Bool(true));
        }
        l.push(pid::BUILTIN_ENDPOINT_SET, V::U32(self.builtin_endpoints));
        l.duration(pid::PARTICIPANT_LEASE_DURATION, self.lease_duration);
        if self.manual_liveliness_count != 0 {
            l.push(
                pid::PARTICIPANT_MANUAL_LIVELINESS_COUNT,
                V::I32(self.manual_liveliness_count),
            );
        }
        if !self.user_data.is_empty() {
            l.push(pid::USER_DATA, V::OctetSeq(self.user_data.clone()));
        }
        if let Some(name) = &self.entity_name {
            l.push(pid::ENTITY_NAME, V::String(name.clone()));
        }
        if !self.properties.is_empty() {
            l.property_list(&self.properties);
        }
        l.finish()
    }

    /// Decodes an SPDP serialized payload.
    ///
    /// Absent parameters take the values [`ParticipantData::new`] gives them, the vendor id
    /// [`VendorId::UNKNOWN`]; PID_PARTICIPANT_GUID is required. Of a parameter sent twice the
    /// last counts, except locators, which accumulate.
    pub fn from_payload(payload: &[u8]) -> Result<ParticipantData, DataError> {
        use ParameterValue as V;
        let mut d = ParticipantData::new(GuidPrefix::UNKNOWN, VendorId::UNKNOWN);
        let mut guid = None;
        let mut endpoint_set = None;
        let mut legacy_endpoint_set = None;
        for_each_parameter(payload, |pid, value| {
            match pid {
                pid::PARTICIPANT_GUID => guid = Some(typed!(pid, value, V::Guid)),
                pid::PROTOCOL_VERSION => {
                    d.protocol_version = typed!(pid, value, V::ProtocolVersion)
                }
                pid::VENDOR_ID => d.vendor_id = typed!(pid, value, V::VendorId),
                pid::DOMAIN_ID => d.domain_id = Some(typed!(pid, value, V::U32)),
                pid::DOMAIN_TAG => d.domain_tag = typed!(pid, value, V::String),
                pid::EXPECTS_INLINE_QOS => d.expects_inline_qos = typed!(pid, value, V::Bool),
                pid::METATRAFFIC_UNICAST_LOCATOR => {
                    d.metatraffic_unicast.push(typed!(pid, value, V::Locator))
                }
                pid::METATRAFFIC_MULTICAST_LOCATOR => {
                    d.metatraffic_multicast.push(typed!(pid, value, V::Locator))
                }
                pid::DEFAULT_UNICAST_LOCATOR => {
                    d.default_unicast.push(typed!(pid, value, V::Locator))
                }
                pid::DEFAULT_MULTICAST_LOCATOR => {
                    d.default_multicast.push(typed!(pid, value, V::Locator))
                }
                pid::BUILTIN_ENDPOINT_SET => endpoint_set = Some(typed!(pid, value, V::U32)),
                pid::PARTICIPANT_BUILTIN_ENDPOINTS => {
                    legacy_endpoint_set = Some(typed!(pid, value, V::U32))
                }
                pid::PARTICIPANT_LEASE_DURATION => {
                    d.lease_duration = duration(pid, typed!(pid, value, V::Duration))?
                }
                pid::PARTICIPANT_MANUAL_LIVELINESS_COUNT => {
                    d.manual_liveliness_count = typed!(pid, value, V::I32)
                }
                pid::USER_DATA => d.user_data = typed!(pid, value, V::OctetSeq),
                pid::ENTITY_NAME => d.entity_name = Some(typed!(pid, value, V::String)),
                pid::PROPERTY_LIST => d.properties = typed!(pid, value, V::PropertyList),
                _ => {}
            }
            Ok(())
        })?;
        let guid: Guid = guid.ok_or(DataError::Missing("PID_PARTICIPANT_GUID"))?;
        d.guid_prefix = guid.prefix;
        // A Tachyon discovery-server client announces eProsima's vendor id (Fast DDS servers
        // require it) and its own in a property.
        if d.vendor_id == VendorId::FAST_DDS {
            if let Some(v) = super::client::announced_vendor(&d.properties) {
                d.vendor_id = v;
            }
        }
        d.product_version = ProductVersion::from_spdp(payload, d.vendor_id);
        d.builtin_endpoints = endpoint_set.or(legacy_endpoint_set).unwrap_or(0);
        Ok(d)
    }
}

impl PublicationData {
    /// A writer of `type_name` on `topic_name` with the default writer QoS and publisher
    /// QoS, announcing no locator of its own.
    pub fn new(guid: Guid, topic_name: &str, type_name: &str) -> PublicationData {
        PublicationData {
            guid,
            participant_guid: None,
            topic_name: topic_name.to_owned(),
            type_name: type_name.to_owned(),
            unicast_locators: Vec::new(),
            multicast_locators: Vec::new(),
            qos: Arc::default(),
            presentation: Presentation::default(),
            group_entity_id: None,
            partition: Vec::new(),
            group_data: Vec::new(),
            topic_data: Vec::new(),
            type_information: None,
            type_info: None,
            representation_announced: true,
            entity_name: None,
        }
    }

    /// The SEDP serialized payload (PL_CDR_LE).
    ///
    /// An empty DATA_REPRESENTATION list is sent as `[XCDR1]`. WRITER_DATA_LIFECYCLE has no
    /// standard parameter and is not sent. A value longer than a parameter can hold
    /// (65 532 bytes) is left out.
    pub fn to_payload(&self) -> Vec<u8> {
        use ParameterValue as V;
        let q = &self.qos;
        let d = DataWriterQos::default();
        let mut l = ListBuilder::default();
        l.endpoint_head(
            self.guid,
            self.participant_guid,
            &self.topic_name,
            &self.type_name,
        );
        l.push(pid::DURABILITY, V::U32(durability_to_wire(q.durability)));
        if q.durability_service != d.durability_service {
            l.push(
                pid::DURABILITY_SERVICE,
                V::DurabilityService(durability_service_to_wire(&q.durability_service)),
            );
        }
        l.common_qos(&CommonQos {
            deadline: q.deadline,
            latency_budget: q.latency_budget,
            liveliness: q.liveliness,
            reliability: q.reliability,
            destination_order: q.destination_order,
            history: q.history,
            resource_limits: q.resource_limits,
            user_data: &q.user_data,
            ownership: q.ownership,
        });
        if q.transport_priority != d.transport_priority {
            l.push(pid::TRANSPORT_PRIORITY, V::I32(q.transport_priority));
        }
        if q.lifespan.is_some() {
            l.duration(pid::LIFESPAN, q.lifespan);
        }
        if q.ownership_strength != d.ownership_strength {
            l.push(pid::OWNERSHIP_STRENGTH, V::I32(q.ownership_strength));
        }
        // Empty means the runtime has not chosen from the type; XCDR1 is what an empty
        // list means to the matching rules (and what an absent parameter means to peers).
        l.representation(or_if_empty(&q.representation, &[DataRepresentation::Xcdr1]));
        if let Some(g) = self.group_entity_id {
            l.push(pid::GROUP_ENTITYID, V::EntityId(g));
        }
        l.endpoint_tail(&EndpointTail {
            presentation: self.presentation,
            partition: &self.partition,
            group_data: &self.group_data,
            topic_data: &self.topic_data,
            type_information: self.type_information.as_deref(),
            entity_name: self.entity_name.as_deref(),
            unicast: &self.unicast_locators,
            multicast: &self.multicast_locators,
        });
        l.finish()
    }

    /// Decodes a DCPSPublication serialized payload.
    ///
    /// PID_ENDPOINT_GUID, PID_TOPIC_NAME and PID_TYPE_NAME are required. Absent policies take
    /// the DDS writer defaults (RELIABILITY RELIABLE, 100 ms), except DATA_REPRESENTATION,
    /// which is `[XCDR1]` (never empty, unlike a local QoS whose empty list leaves the choice
    /// to the runtime); WRITER_DATA_LIFECYCLE keeps its default.
    pub fn from_payload(payload: &[u8]) -> Result<PublicationData, DataError> {
        let mut f = EndpointFields::decode(payload)?;
        let (guid, topic_name, type_name) = f.identity()?;
        let d = DataWriterQos::default();
        let representation_announced = f.representation.is_some();
        let qos = DataWriterQos {
            durability: f.durability.unwrap_or(d.durability),
            durability_service: f.durability_service.unwrap_or(d.durability_service),
            deadline: f.deadline.unwrap_or(d.deadline),
            latency_budget: f.latency_budget.unwrap_or(d.latency_budget),
            liveliness: f.liveliness.unwrap_or(d.liveliness),
            reliability: f.reliability.unwrap_or(ReliabilityQos::RELIABLE),
            destination_order: f.destination_order.unwrap_or(d.destination_order),
            history: f.history.unwrap_or(d.history),
            resource_limits: f.resource_limits.unwrap_or(d.resource_limits),
            transport_priority: f.transport_priority.unwrap_or(d.transport_priority),
            lifespan: f.lifespan.unwrap_or(d.lifespan),
            user_data: f.user_data,
            ownership: f.ownership.unwrap_or(d.ownership),
            ownership_strength: f.ownership_strength.unwrap_or(d.ownership_strength),
            autodispose_unregistered_instances: d.autodispose_unregistered_instances,
            representation: f
                .representation
                .unwrap_or_else(|| vec![DataRepresentation::Xcdr1]),
            ignore_local: false,
            batch_delay: None,
        };
        Ok(PublicationData {
            guid,
            participant_guid: f.participant_guid,
            topic_name,
            type_name,
            unicast_locators: f.unicast,
            multicast_locators: f.multicast,
            qos: Arc::new(qos),
            presentation: f.presentation.unwrap_or_default(),
            group_entity_id: f.group_entity_id,
            partition: f.partition,
            group_data: f.group_data,
            topic_data: f.topic_data,
            type_info: f
                .type_information
                .as_deref()
                .and_then(|b| decode_type_information(payload, b).ok())
                .map(Arc::new),
            type_information: f.type_information,
            representation_announced,
            entity_name: f.entity_name,
        })
    }
}

impl SubscriptionData {
    /// A reader of `type_name` on `topic_name` with the default reader QoS and subscriber
    /// QoS, announcing no locator of its own.
    pub fn new(guid: Guid, topic_name: &str, type_name: &str) -> SubscriptionData {
        SubscriptionData {
            guid,
            participant_guid: None,
            topic_name: topic_name.to_owned(),
            type_name: type_name.to_owned(),
            unicast_locators: Vec::new(),
            multicast_locators: Vec::new(),
            expects_inline_qos: false,
            qos: Arc::default(),
            presentation: Presentation::default(),
            partition: Vec::new(),
            group_data: Vec::new(),
            topic_data: Vec::new(),
            content_filter: None,
            type_information: None,
            type_info: None,
            representation_announced: true,
            entity_name: None,
        }
    }

    /// The SEDP serialized payload (PL_CDR_LE).
    ///
    /// An empty DATA_REPRESENTATION list is sent as `[XCDR1, XCDR2]`. READER_DATA_LIFECYCLE
    /// has no standard parameter and is not sent. A value longer than a parameter can hold
    /// (65 532 bytes) is left out.
    pub fn to_payload(&self) -> Vec<u8> {
        use ParameterValue as V;
        let q = &self.qos;
        let d = DataReaderQos::default();
        let mut l = ListBuilder::default();
        l.endpoint_head(
            self.guid,
            self.participant_guid,
            &self.topic_name,
            &self.type_name,
        );
        l.push(pid::DURABILITY, V::U32(durability_to_wire(q.durability)));
        l.common_qos(&CommonQos {
            deadline: q.deadline,
            latency_budget: q.latency_budget,
            liveliness: q.liveliness,
            reliability: q.reliability,
            destination_order: q.destination_order,
            history: q.history,
            resource_limits: q.resource_limits,
            user_data: &q.user_data,
            ownership: q.ownership,
        });
        if q.time_based_filter != d.time_based_filter {
            l.duration(pid::TIME_BASED_FILTER, Some(q.time_based_filter));
        }
        // Empty means the runtime accepts both XCDR versions: say so explicitly.
        l.representation(or_if_empty(
            &q.representation,
            &[DataRepresentation::Xcdr1, DataRepresentation::Xcdr2],
        ));
        if q.type_consistency != d.type_consistency {
            l.type_consistency(q.type_consistency);
        }
        if self.expects_inline_qos {
            l.push(pid::EXPECTS_INLINE_QOS, V::Bool(true));
        }
        if let Some(filter) = &self.content_filter {
            l.push(
                pid::CONTENT_FILTER_PROPERTY,
                V::ContentFilterProperty(filter.clone()),
            );
        }
        l.endpoint_tail(&EndpointTail {
            presentation: self.presentation,
            partition: &self.partition,
            group_data: &self.group_data,
            topic_data: &self.topic_data,
            type_information: self.type_information.as_deref(),
            entity_name: self.entity_name.as_deref(),
            unicast: &self.unicast_locators,
            multicast: &self.multicast_locators,
        });
        l.finish()
    }

    /// Decodes a DCPSSubscription serialized payload.
    ///
    /// PID_ENDPOINT_GUID, PID_TOPIC_NAME and PID_TYPE_NAME are required. Absent policies take
    /// the DDS reader defaults (RELIABILITY BEST_EFFORT), except DATA_REPRESENTATION, which
    /// is `[XCDR1]` (never empty: a local empty list means "XCDR1 and XCDR2");
    /// READER_DATA_LIFECYCLE keeps its default.
    pub fn from_payload(payload: &[u8]) -> Result<SubscriptionData, DataError> {
        let mut f = EndpointFields::decode(payload)?;
        let (guid, topic_name, type_name) = f.identity()?;
        let d = DataReaderQos::default();
        let representation_announced = f.representation.is_some();
        let qos = DataReaderQos {
            durability: f.durability.unwrap_or(d.durability),
            deadline: f.deadline.unwrap_or(d.deadline),
            latency_budget: f.latency_budget.unwrap_or(d.latency_budget),
            liveliness: f.liveliness.unwrap_or(d.liveliness),
            reliability: f.reliability.unwrap_or(ReliabilityQos::BEST_EFFORT),
            destination_order: f.destination_order.unwrap_or(d.destination_order),
            history: f.history.unwrap_or(d.history),
            resource_limits: f.resource_limits.unwrap_or(d.resource_limits),
            user_data: f.user_data,
            ownership: f.ownership.unwrap_or(d.ownership),
            time_based_filter: f.time_based_filter.unwrap_or(d.time_based_filter),
            reader_data_lifecycle: d.reader_data_lifecycle,
            representation: f
                .representation
                .unwrap_or_else(|| vec![DataRepresentation::Xcdr1]),
            type_consistency: f.type_consistency.unwrap_or(d.type_consistency),
            ignore_local: false,
        };
        Ok(SubscriptionData {
            guid,
            participant_guid: f.participant_guid,
            topic_name,
            type_name,
            unicast_locators: f.unicast,
            multicast_locators: f.multicast,
            expects_inline_qos: f.expects_inline_qos,
            qos: Arc::new(qos),
            presentation: f.presentation.unwrap_or_default(),
            partition: f.partition,
            group_data: f.group_data,
            topic_data: f.topic_data,
            content_filter: f.content_filter,
            type_info: f
                .type_information
                .as_deref()
                .and_then(|b| decode_type_information(payload, b).ok())
                .map(Arc::new),
            type_information: f.type_information,
            representation_announced,
            entity_name: f.entity_name,
        })
    }
}

impl ParticipantMessage {
    /// The serialized payload: CDR_BE, guid prefix, kind, then the data as a sequence of
    /// octets, zero-padded to a multiple of 4 bytes.
    pub fn to_payload(&self) -> Vec<u8> {
        // A sequence length is 32 bits; nobody sends gigabytes of liveliness data.
        let len = u32::try_from(self.data.len()).unwrap_or(u32::MAX);
        let data = self.data.get(..len as usize).unwrap_or_default();
        let mut out = Vec::with_capacity(24usize.saturating_add(data.len()).saturating_add(3));
        out.extend_from_slice(&encapsulation::CDR_BE.to_be_bytes());
        out.extend_from_slice(&[0, 0]);
        out.extend_from_slice(&self.guid_prefix.0);
        out.extend_from_slice(&self.kind);
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(data);
        out.resize(out.len().next_multiple_of(4), 0);
        out
    }

    /// Decodes a participant message in CDR_BE or CDR_LE.
    ///
    /// PL_CDR_BE / PL_CDR_LE are read as CDR_BE / CDR_LE: Fast DDS 2.9 labels its
    /// (plain CDR) participant messages PL_CDR_LE. Bytes after the data are ignored.
    pub fn from_payload(payload: &[u8]) -> Result<ParticipantMessage, DataError> {
        let header = Encapsulation::parse(payload).ok_or_else(|| {
            DataError::Malformed(format!(
                "payload of {} bytes is shorter than its encapsulation header",
                payload.len()
            ))
        })?;
        let big_endian = match header.kind {
            encapsulation::CDR_BE | encapsulation::PL_CDR_BE => true,
            encapsulation::CDR_LE | encapsulation::PL_CDR_LE => false,
            other => {
                return Err(DataError::Malformed(format!(
                    "encapsulation 0x{other:04x} is not CDR"
                )))
            }
        };
        let truncated = || DataError::Malformed("participant message truncated".to_owned());
        let body = payload.get(4..).unwrap_or_default();
        let (guid_prefix, rest) = body.split_first_chunk::<12>().ok_or_else(truncated)?;
        let (kind, rest) = rest.split_first_chunk::<4>().ok_or_else(truncated)?;
        let (len, rest) = rest.split_first_chunk::<4>().ok_or_else(truncated)?;
        let len = if big_endian {
            u32::from_be_bytes(*len)
        } else {
            u32::from_le_bytes(*len)
        };
        let data = usize::try_from(len)
            .ok()
            .and_then(|n| rest.get(..n))
            .ok_or_else(truncated)?;
        Ok(ParticipantMessage {
            guid_prefix: GuidPrefix(*guid_prefix),
            kind: *kind,
            data: data.to_vec(),
        })
    }
}

/// The GUID of the endpoint a DCPSPublication or DCPSSubscription payload describes:
/// PID_ENDPOINT_GUID, else PID_KEY_HASH. Works on full payloads and on the key-only ones of
/// disposes and unregisters; `None` if the payload is no parameter list or has neither.
pub fn endpoint_guid_from_key(payload: &[u8]) -> Option<Guid> {
    guid_from_key(payload, pid::ENDPOINT_GUID)
}

/// The GUID of the participant an SPDP payload describes: PID_PARTICIPANT_GUID, else
/// PID_KEY_HASH. Works on full payloads and on key-only ones.
pub fn participant_guid_from_key(payload: &[u8]) -> Option<Guid> {
    guid_from_key(payload, pid::PARTICIPANT_GUID)
}

/// The GUID a builtin topic's 16-byte key hash holds (its key is the GUID itself), e.g. the
/// PID_KEY_HASH inline QoS of a Fast DDS dispose that carries no payload.
pub fn guid_from_key_hash(key_hash: [u8; 16]) -> Guid {
    let (prefix, entity) = key_hash.split_at(12);
    let mut g = Guid::UNKNOWN;
    g.prefix.0.copy_from_slice(prefix);
    g.entity_id.0.copy_from_slice(entity);
    g
}

/// An RTPS duration as a [`Duration`], `None` for DURATION_INFINITE.
///
/// The fraction (2^-32 s) is rounded to the nearest nanosecond, so every duration
/// [`duration_to_wire`] produces decodes to exactly the value encoded. A negative duration
/// is an error.
pub fn duration_from_wire(d: WireDuration) -> Result<Option<Duration>, &'static str> {
    if d == WireDuration::INFINITE {
        return Ok(None);
    }
    let seconds = u64::try_from(d.seconds).map_err(|_| "negative duration")?;
    // At most (2^32 - 1) * 10^9 + 2^31 < 2^63: no overflow.
    let nanos = (u64::from(d.fraction) * 1_000_000_000 + (1 << 31)) >> 32;
    Ok(Some(
        Duration::from_secs(seconds).saturating_add(Duration::from_nanos(nanos)),
    ))
}

/// A [`Duration`] as an RTPS duration: `None`, and anything from 2^31 s on, is
/// DURATION_INFINITE.
///
/// The fraction is rounded up as Cyclone DDS does, which [`duration_from_wire`] undoes
/// exactly.
pub fn duration_to_wire(d: Option<Duration>) -> WireDuration {
    let Some(d) = d else {
        return WireDuration::INFINITE;
    };
    let Ok(seconds) = i32::try_from(d.as_secs()) else {
        return WireDuration::INFINITE;
    };
    // ceil(nanos * 2^32 / 10^9) <= 4_294_967_292 for nanos < 10^9: fits in 32 bits.
    let fraction = (u64::from(d.subsec_nanos()) << 32).div_ceil(1_000_000_000);
    WireDuration {
        seconds,
        fraction: u32::try_from(fraction).unwrap_or(u32::MAX),
    }
}

// ---------------------------------------------------------------------------------------------
// Decoding helpers.

/// Takes the value of a parameter as the expected [`ParameterValue`] variant, else returns a
/// [`DataError::BadValue`] from the enclosing closure or function.
macro_rules! typed {
    ($pid:expr, $value:expr, $variant:path) => {
        match $value {
            $variant(v) => v,
            _ => {
                return Err(DataError::BadValue {
                    pid: $pid,
                    reason: "value does not decode",
                })
            }
        }
    };
}
use typed;

/// Calls `f` with every standard parameter of a PL_CDR payload, decoded.
///
/// Vendor-specific parameters and PID_PAD are skipped, so are unknown ones unless they carry
/// the must-understand bit, which rejects the payload.
fn for_each_parameter(
    payload: &[u8],
    mut f: impl FnMut(u16, ParameterValue) -> Result<(), DataError>,
) -> Result<(), DataError> {
    let view = ParameterListPayloadView::parse(payload)
        .map_err(|e| DataError::Malformed(e.to_string()))?;
    let list = view.list();
    for p in list.iter() {
        if p.pid & pid::VENDOR_SPECIFIC != 0 || p.pid == pid::PAD {
            continue;
        }
        if pid::name(p.pid).is_none() {
            if p.pid & pid::MUST_UNDERSTAND != 0 {
                return Err(DataError::MustUnderstand(p.pid));
            }
            continue;
        }
        f(p.pid, Parameter::parse(&p, list.endian()).value)?;
    }
    Ok(())
}

/// The topic name a DCPSPublication or DCPSSubscription payload holds, if it decodes.
pub fn topic_name_of(payload: &[u8]) -> Option<String> {
    let mut name = None;
    let _ = for_each_parameter(payload, |pid, value| {
        if pid == pid::TOPIC_NAME {
            if let ParameterValue::String(s) = value {
                name = Some(s);
            }
        }
        Ok(())
    });
    name
}

/// The first GUID parameter `guid_pid` of a payload, else its PID_KEY_HASH as a GUID.
fn guid_from_key(payload: &[u8], guid_pid: u16) -> Option<Guid> {
    let view = ParameterListPayloadView::parse(payload).ok()?;
    let list = view.list();
    let mut from_key_hash = None;
    for p in list.iter() {
        if p.pid == guid_pid {
            if let ParameterValue::Guid(g) = Parameter::parse(&p, list.endian()).value {
                return Some(g);
            }
        } else if p.pid == pid::KEY_HASH && from_key_hash.is_none() {
            if let ParameterValue::KeyHash(k) = Parameter::parse(&p, list.endian()).value {
                from_key_hash = Some(guid_from_key_hash(k));
            }
        }
    }
    from_key_hash
}

/// What a DCPSPublication or DCPSSubscription payload holds; `None` is "absent".
#[derive(Default)]
struct EndpointFields {
    guid: Option<Guid>,
    participant_guid: Option<Guid>,
    topic_name: Option<String>,
    type_name: Option<String>,
    unicast: Vec<Locator>,
    multicast: Vec<Locator>,
    expects_inline_qos: bool,
    durability: Option<DurabilityKind>,
    durability_service: Option<DurabilityService>,
    deadline: Option<Option<Duration>>,
    latency_budget: Option<Duration>,
    liveliness: Option<Liveliness>,
    reliability: Option<ReliabilityQos>,
    destination_order: Option<DestinationOrderKind>,
    history: Option<History>,
    resource_limits: Option<ResourceLimits>,
    transport_priority: Option<i32>,
    lifespan: Option<Option<Duration>>,
    user_data: Vec<u8>,
    ownership: Option<OwnershipKind>,
    ownership_strength: Option<i32>,
    time_based_filter: Option<Duration>,
    representation: Option<Vec<DataRepresentation>>,
    type_consistency: Option<TypeConsistency>,
    presentation: Option<Presentation>,
    group_entity_id: Option<EntityId>,
    partition: Vec<String>,
    group_data: Vec<u8>,
    topic_data: Vec<u8>,
    content_filter: Option<ContentFilterProperty>,
    type_information: Option<Vec<u8>>,
    entity_name: Option<String>,
}

impl EndpointFields {
    /// Decodes every parameter either side may send; the caller picks its side's.
    fn decode(payload: &[u8]) -> Result<EndpointFields, DataError> {
        use ParameterValue as V;
        let mut f = EndpointFields::default();
        for_each_parameter(payload, |pid, value| {
            match pid {
                pid::ENDPOINT_GUID => f.guid = Some(typed!(pid, value, V::Guid)),
                pid::PARTICIPANT_GUID => f.participant_guid = Some(typed!(pid, value, V::Guid)),
                pid::TOPIC_NAME => f.topic_name = Some(typed!(pid, value, V::String)),
                pid::TYPE_NAME => f.type_name = Some(typed!(pid, value, V::String)),
                pid::UNICAST_LOCATOR => f.unicast.push(typed!(pid, value, V::Locator)),
                pid::MULTICAST_LOCATOR => f.multicast.push(typed!(pid, value, V::Locator)),
                pid::EXPECTS_INLINE_QOS => f.expects_inline_qos = typed!(pid, value, V::Bool),
                pid::GROUP_ENTITYID => f.group_entity_id = Some(typed!(pid, value, V::EntityId)),
                pid::DURABILITY => {
                    f.durability = Some(durability_from_wire(pid, typed!(pid, value, V::U32))?)
                }
                pid::DURABILITY_SERVICE => {
                    let q = typed!(pid, value, V::DurabilityService);
                    f.durability_service = Some(durability_service_from_wire(pid, &q)?);
                }
                pid::DEADLINE => f.deadline = Some(duration(pid, typed!(pid, value, V::Duration))?),
                pid::LATENCY_BUDGET => {
                    f.latency_budget = Some(finite(pid, typed!(pid, value, V::Duration))?)
                }
                pid::LIVELINESS => {
                    let q = typed!(pid, value, V::Liveliness);
                    f.liveliness = Some(liveliness_from_wire(pid, &q)?);
                }
                pid::RELIABILITY => {
                    let q = typed!(pid, value, V::Reliability);
                    f.reliability = Some(reliability_from_wire(pid, &q)?);
                }
                pid::DESTINATION_ORDER => {
                    f.destination_order = Some(match typed!(pid, value, V::U32) {
                        0 => DestinationOrderKind::ByReceptionTimestamp,
                        1 => DestinationOrderKind::BySourceTimestamp,
                        _ => return Err(bad(pid, "unknown destination order kind")),
                    })
                }
                pid::HISTORY => {
                    let q = typed!(pid, value, V::History);
                    f.history = Some(history_from_wire(pid, q.kind, q.depth)?);
                }
                pid::RESOURCE_LIMITS => {
                    let q = typed!(pid, value, V::ResourceLimits);
                    f.resource_limits = Some(limits_from_wire(pid, &q)?);
                }
                pid::TRANSPORT_PRIORITY => f.transport_priority = Some(typed!(pid, value, V::I32)),
                pid::LIFESPAN => f.lifespan = Some(duration(pid, typed!(pid, value, V::Duration))?),
                pid::USER_DATA => f.user_data = typed!(pid, value, V::OctetSeq),
                pid::OWNERSHIP => {
                    f.ownership = Some(match typed!(pid, value, V::U32) {
                        0 => OwnershipKind::Shared,
                        1 => OwnershipKind::Exclusive,
                        _ => return Err(bad(pid, "unknown ownership kind")),
                    })
                }
                pid::OWNERSHIP_STRENGTH => f.ownership_strength = Some(typed!(pid, value, V::I32)),
                pid::TIME_BASED_FILTER => {
                    f.time_based_filter = Some(finite(pid, typed!(pid, value, V::Duration))?)
                }
                pid::DATA_REPRESENTATION => {
                    let ids = typed!(pid, value, V::DataRepresentation);
                    f.representation = Some(representation_from_wire(pid, &ids)?);
                }
                pid::TYPE_CONSISTENCY_ENFORCEMENT => {
                    let ParameterValue::TypeConsistency { kind, options } = value else {
                        return Err(bad(pid, "unexpected value"));
                    };
                    let kind = match kind {
                        0 => TypeConsistencyKind::DisallowTypeCoercion,
                        1 => TypeConsistencyKind::AllowTypeCoercion,
                        _ => return Err(bad(pid, "unknown type consistency kind")),
                    };
                    f.type_consistency = Some(TypeConsistency::from_wire(kind, options));
                }
                pid::PRESENTATION => {
                    let q = typed!(pid, value, V::Presentation);
                    f.presentation = Some(presentation_from_wire(pid, &q)?);
                }
                pid::PARTITION => f.partition = typed!(pid, value, V::StringSeq),
                pid::GROUP_DATA => f.group_data = typed!(pid, value, V::OctetSeq),
                pid::TOPIC_DATA => f.topic_data = typed!(pid, value, V::OctetSeq),
                pid::CONTENT_FILTER_PROPERTY => {
                    f.content_filter = Some(typed!(pid, value, V::ContentFilterProperty))
                }
                pid::TYPE_INFORMATION => f.type_information = Some(typed!(pid, value, V::Opaque)),
                pid::ENTITY_NAME => f.entity_name = Some(typed!(pid, value, V::String)),
                _ => {}
            }
            Ok(())
        })?;
        Ok(f)
    }

    /// The required endpoint GUID, topic name and type name (taken out of `self`).
    fn identity(&mut self) -> Result<(Guid, String, String), DataError> {
        let guid = self.guid.ok_or(DataError::Missing("PID_ENDPOINT_GUID"))?;
        let topic = self
            .topic_name
            .take()
            .ok_or(DataError::Missing("PID_TOPIC_NAME"))?;
        let type_name = self
            .type_name
            .take()
            .ok_or(DataError::Missing("PID_TYPE_NAME"))?;
        Ok((guid, topic, type_name))
    }
}

fn bad(pid: u16, reason: &'static str) -> DataError {
    DataError::BadValue { pid, reason }
}

/// A duration parameter, `None` for infinite.
fn duration(pid: u16, d: WireDuration) -> Result<Option<Duration>, DataError> {
    duration_from_wire(d).map_err(|reason| bad(pid, reason))
}

/// A duration parameter whose policy has no "infinite": infinite is [`Duration::MAX`].
fn finite(pid: u16, d: WireDuration) -> Result<Duration, DataError> {
    Ok(duration(pid, d)?.unwrap_or(Duration::MAX))
}

fn durability_from_wire(pid: u16, kind: u32) -> Result<DurabilityKind, DataError> {
    Ok(match kind {
        0 => DurabilityKind::Volatile,
        1 => DurabilityKind::TransientLocal,
        2 => DurabilityKind::Transient,
        3 => DurabilityKind::Persistent,
        _ => return Err(bad(pid, "unknown durability kind")),
    })
}

fn reliability_from_wire(pid: u16, q: &WireReliability) -> Result<ReliabilityQos, DataError> {
    let kind = match q.kind {
        1 => Reliability::BestEffort,
        2 => Reliability::Reliable,
        _ => return Err(bad(pid, "unknown reliability kind")),
    };
    Ok(ReliabilityQos {
        kind,
        max_blocking_time: finite(pid, q.max_blocking_time)?,
    })
}

fn liveliness_from_wire(pid: u16, q: &LivelinessQos) -> Result<Liveliness, DataError> {
    let kind = match q.kind {
        0 => LivelinessKind::Automatic,
        1 => LivelinessKind::ManualByParticipant,
        2 => LivelinessKind::ManualByTopic,
        _ => return Err(bad(pid, "unknown liveliness kind")),
    };
    Ok(Liveliness {
        kind,
        lease_duration: duration(pid, q.lease_duration)?,
    })
}

fn history_from_wire(pid: u16, kind: u32, depth: i32) -> Result<History, DataError> {
    match kind {
        0 => match usize::try_from(depth) {
            Ok(depth) if depth > 0 => Ok(History::KeepLast(depth)),
            _ => Err(bad(pid, "KEEP_LAST depth is not positive")),
        },
        1 => Ok(History::KeepAll),
        _ => Err(bad(pid, "unknown history kind")),
    }
}

/// One resource limit: -1 (LENGTH_UNLIMITED) is `None`, other values must be positive.
fn limit_from_wire(pid: u16, n: i32) -> Result<Option<usize>, DataError> {
    match n {
        -1 => Ok(None),
        n => match usize::try_from(n) {
            Ok(n) if n > 0 => Ok(Some(n)),
            _ => Err(bad(pid, "resource limit is neither positive nor -1")),
        },
    }
}

fn limits_from_wire(pid: u16, q: &ResourceLimitsQos) -> Result<ResourceLimits, DataError> {
    Ok(ResourceLimits {
        max_samples: limit_from_wire(pid, q.max_samples)?,
        max_instances: limit_from_wire(pid, q.max_instances)?,
        max_samples_per_instance: limit_from_wire(pid, q.max_samples_per_instance)?,
    })
}

fn durability_service_from_wire(
    pid: u16,
    q: &DurabilityServiceQos,
) -> Result<DurabilityService, DataError> {
    Ok(DurabilityService {
        service_cleanup_delay: finite(pid, q.service_cleanup_delay)?,
        history: history_from_wire(pid, q.history_kind, q.history_depth)?,
        limits: limits_from_wire(pid, &q.limits)?,
    })
}

fn presentation_from_wire(pid: u16, q: &PresentationQos) -> Result<Presentation, DataError> {
    let access_scope = match q.access_scope {
        0 => AccessScope::Instance,
        1 => AccessScope::Topic,
        2 => AccessScope::Group,
        _ => return Err(bad(pid, "unknown presentation access scope")),
    };
    Ok(Presentation {
        access_scope,
        coherent_access: q.coherent_access,
        ordered_access: q.ordered_access,
    })
}

/// The representations in the sender's order; an empty list means XCDR1, as if absent.
///
/// An id XTypes does not define is an error rather than skipped: a writer writes with its
/// first offered representation, so dropping an unknown one could make a writer look
/// compatible when it is not.
fn representation_from_wire(pid: u16, ids: &[i16]) -> Result<Vec<DataRepresentation>, DataError> {
    if ids.is_empty() {
        return Ok(vec![DataRepresentation::Xcdr1]);
    }
    ids.iter()
        .map(|&id| {
            DataRepresentation::from_id(id).ok_or(bad(pid, "unknown data representation id"))
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Encoding helpers.

/// The QoS policies writers and readers share, as sent in SEDP.
struct CommonQos<'a> {
    deadline: Option<Duration>,
    latency_budget: Duration,
    liveliness: Liveliness,
    reliability: ReliabilityQos,
    destination_order: DestinationOrderKind,
    history: History,
    resource_limits: ResourceLimits,
    user_data: &'a [u8],
    ownership: OwnershipKind,
}

/// The group-level QoS, type information, name and locators that end an SEDP payload.
struct EndpointTail<'a> {
    presentation: Presentation,
    partition: &'a [String],
    group_data: &'a [u8],
    topic_data: &'a [u8],
    type_information: Option<&'a [u8]>,
    entity_name: Option<&'a str>,
    unicast: &'a [Locator],
    multicast: &'a [Locator],
}

/// The parameters of a payload being built, in wire order.
#[derive(Default)]
struct ListBuilder(Vec<Parameter>);

impl ListBuilder {
    fn push(&mut self, pid: u16, value: ParameterValue) {
        self.0.push(Parameter::new(pid, value));
    }

    fn locators(&mut self, pid: u16, locators: &[Locator]) {
        for l in locators {
            self.push(pid, ParameterValue::Locator(*l));
        }
    }

    fn duration(&mut self, pid: u16, d: Option<Duration>) {
        self.push(pid, ParameterValue::Duration(duration_to_wire(d)));
    }

    /// PROPERTY_LIST, followed (as Cyclone DDS sends it) by the empty sequence of binary
    /// properties of DDS-Security's PropertyQosPolicy.
    fn property_list(&mut self, properties: &[(String, String)]) {
        let value = ParameterValue::PropertyList(properties.to_vec());
        let mut padding = vec![0; (4 - value.wire_len() % 4) % 4];
        padding.extend_from_slice(&[0; 4]);
        self.0.push(Parameter {
            pid: pid::PROPERTY_LIST,
            value,
            padding,
        });
    }

    /// TYPE_CONSISTENCY_ENFORCEMENT: the kind and its five option octets, padded to 8 bytes
    /// (as Cyclone DDS and Fast DDS send it).
    fn type_consistency(&mut self, t: TypeConsistency) {
        let kind = match t.kind {
            TypeConsistencyKind::DisallowTypeCoercion => 0,
            TypeConsistencyKind::AllowTypeCoercion => 1,
        };
        self.0.push(Parameter {
            pid: pid::TYPE_CONSISTENCY_ENFORCEMENT,
            value: ParameterValue::TypeConsistency {
                kind,
                options: Some(t.options()),
            },
            padding: vec![0],
        });
    }

    fn representation(&mut self, reprs: &[DataRepresentation]) {
        let ids = reprs.iter().map(|r| r.id()).collect();
        self.push(
            pid::DATA_REPRESENTATION,
            ParameterValue::DataRepresentation(ids),
        );
    }

    fn endpoint_head(
        &mut self,
        guid: Guid,
        participant_guid: Option<Guid>,
        topic_name: &str,
        type_name: &str,
    ) {
        use ParameterValue as V;
        self.push(pid::ENDPOINT_GUID, V::Guid(guid));
        if let Some(g) = participant_guid {
            self.push(pid::PARTICIPANT_GUID, V::Guid(g));
        }
        self.push(pid::TOPIC_NAME, V::String(topic_name.to_owned()));
        self.push(pid::TYPE_NAME, V::String(type_name.to_owned()));
    }

    /// The shared policies: RELIABILITY always, the others when not at their DDS default.
    fn common_qos(&mut self, q: &CommonQos<'_>) {
        use ParameterValue as V;
        if q.deadline.is_some() {
            self.duration(pid::DEADLINE, q.deadline);
        }
        if q.latency_budget != Duration::ZERO {
            self.duration(pid::LATENCY_BUDGET, Some(q.latency_budget));
        }
        if q.liveliness != Liveliness::default() {
            self.push(
                pid::LIVELINESS,
                V::Liveliness(LivelinessQos {
                    kind: match q.liveliness.kind {
                        LivelinessKind::Automatic => 0,
                        LivelinessKind::ManualByParticipant => 1,
                        LivelinessKind::ManualByTopic => 2,
                    },
                    lease_duration: duration_to_wire(q.liveliness.lease_duration),
                }),
            );
        }
        self.push(
            pid::RELIABILITY,
            V::Reliability(WireReliability {
                kind: match q.reliability.kind {
                    Reliability::BestEffort => 1,
                    Reliability::Reliable => 2,
                },
                max_blocking_time: duration_to_wire(Some(q.reliability.max_blocking_time)),
            }),
        );
        if q.destination_order != DestinationOrderKind::default() {
            self.push(
                pid::DESTINATION_ORDER,
                V::U32(match q.destination_order {
                    DestinationOrderKind::ByReceptionTimestamp => 0,
                    DestinationOrderKind::BySourceTimestamp => 1,
                }),
            );
        }
        if q.history != History::default() {
            let (kind, depth) = history_to_wire(q.history);
            self.push(pid::HISTORY, V::History(HistoryQos { kind, depth }));
        }
        if q.resource_limits != ResourceLimits::default() {
            self.push(
                pid::RESOURCE_LIMITS,
                V::ResourceLimits(limits_to_wire(&q.resource_limits)),
            );
        }
        if !q.user_data.is_empty() {
            self.push(pid::USER_DATA, V::OctetSeq(q.user_data.to_vec()));
        }
        if q.ownership != OwnershipKind::default() {
            self.push(
                pid::OWNERSHIP,
                V::U32(match q.ownership {
                    OwnershipKind::Shared => 0,
                    OwnershipKind::Exclusive => 1,
                }),
            );
        }
    }

    fn endpoint_tail(&mut self, t: &EndpointTail<'_>) {
        use ParameterValue as V;
        if t.presentation != Presentation::default() {
            self.push(
                pid::PRESENTATION,
                V::Presentation(PresentationQos {
                    access_scope: match t.presentation.access_scope {
                        AccessScope::Instance => 0,
                        AccessScope::Topic => 1,
                        AccessScope::Group => 2,
                    },
                    coherent_access: t.presentation.coherent_access,
                    ordered_access: t.presentation.ordered_access,
                }),
            );
        }
        if !t.partition.is_empty() {
            self.push(pid::PARTITION, V::StringSeq(t.partition.to_vec()));
        }
        if !t.group_data.is_empty() {
            self.push(pid::GROUP_DATA, V::OctetSeq(t.group_data.to_vec()));
        }
        if !t.topic_data.is_empty() {
            self.push(pid::TOPIC_DATA, V::OctetSeq(t.topic_data.to_vec()));
        }
        if let Some(info) = t.type_information {
            self.push(pid::TYPE_INFORMATION, V::Opaque(info.to_vec()));
        }
        if let Some(name) = t.entity_name {
            self.push(pid::ENTITY_NAME, V::String(name.to_owned()));
        }
        self.locators(pid::UNICAST_LOCATOR, t.unicast);
        self.locators(pid::MULTICAST_LOCATOR, t.multicast);
    }

    /// The PL_CDR_LE payload.
    fn finish(mut self) -> Vec<u8> {
        // A parameter's length field has 16 bits: a longer value cannot be expressed.
        self.0.retain(|p| u16::try_from(p.value_len()).is_ok());
        let payload = ParameterListPayload {
            encapsulation: Encapsulation {
                kind: encapsulation::PL_CDR_LE,
                options: [0, 0],
            },
            list: ParameterList {
                parameters: self.0,
                sentinel_length: 0,
            },
            trailing: Vec::new(),
        };
        let mut buf = vec![0; payload.buffer_len()];
        let written = payload
            .emit(&mut buf)
            .expect("a buffer of buffer_len() bytes holds the list, and no length exceeds 16 bits");
        buf.truncate(written);
        buf
    }
}

fn or_if_empty<'a, T>(list: &'a [T], default: &'a [T]) -> &'a [T] {
    if list.is_empty() {
        default
    } else {
        list
    }
}

fn durability_to_wire(kind: DurabilityKind) -> u32 {
    match kind {
        DurabilityKind::Volatile => 0,
        DurabilityKind::TransientLocal => 1,
        DurabilityKind::Transient => 2,
        DurabilityKind::Persistent => 3,
    }
}

/// HISTORY kind and depth; KEEP_ALL sends depth 1 (ignored), a depth beyond `i32::MAX` is
/// clamped.
fn history_to_wire(h: History) -> (u32, i32) {
    match h {
        History::KeepLast(depth) => (0, i32::try_from(depth).unwrap_or(i32::MAX)),
        History::KeepAll => (1, 1),
    }
}

fn limit_to_wire(n: Option<usize>) -> i32 {
    n.map_or(-1, |n| i32::try_from(n).unwrap_or(i32::MAX))
}

fn limits_to_wire(r: &ResourceLimits) -> ResourceLimitsQos {
    ResourceLimitsQos {
        max_samples: limit_to_wire(r.max_samples),
        max_instances: limit_to_wire(r.max_instances),
        max_samples_per_instance: limit_to_wire(r.max_samples_per_instance),
    }
}

fn durability_service_to_wire(s: &DurabilityService) -> DurabilityServiceQos {
    let (history_kind, history_depth) = history_to_wire(s.history);
    DurabilityServiceQos {
        service_cleanup_delay: duration_to_wire(Some(s.service_cleanup_delay)),
        history_kind,
        history_depth,
        limits: limits_to_wire(&s.limits),
    }
}
