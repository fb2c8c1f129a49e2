//! Parameter ids (PIDs) used by SPDP, SEDP and inline QoS, with their names.
//!
//! RTPS defines no PIDs for WRITER_DATA_LIFECYCLE / READER_DATA_LIFECYCLE (those policies are
//! local and never sent), so none appear here.

/// Must-understand bit: a receiver that does not know a PID with this bit set must drop the list.
pub const MUST_UNDERSTAND: u16 = 0x4000;
/// Vendor-specific bit: the PID's meaning depends on the sender's vendor id.
pub const VENDOR_SPECIFIC: u16 = 0x8000;

/// Padding parameter.
pub const PAD: u16 = 0x0000;
/// End of the parameter list.
pub const SENTINEL: u16 = 0x0001;
/// Participant lease duration.
pub const PARTICIPANT_LEASE_DURATION: u16 = 0x0002;
/// Time-based filter QoS.
pub const TIME_BASED_FILTER: u16 = 0x0004;
/// Topic name.
pub const TOPIC_NAME: u16 = 0x0005;
/// Ownership strength QoS.
pub const OWNERSHIP_STRENGTH: u16 = 0x0006;
/// Type name.
pub const TYPE_NAME: u16 = 0x0007;
/// Domain id.
pub const DOMAIN_ID: u16 = 0x000f;
/// Protocol version.
pub const PROTOCOL_VERSION: u16 = 0x0015;
/// Vendor id.
pub const VENDOR_ID: u16 = 0x0016;
/// Reliability QoS.
pub const RELIABILITY: u16 = 0x001a;
/// Liveliness QoS.
pub const LIVELINESS: u16 = 0x001b;
/// Durability QoS.
pub const DURABILITY: u16 = 0x001d;
/// Durability service QoS.
pub const DURABILITY_SERVICE: u16 = 0x001e;
/// Ownership QoS.
pub const OWNERSHIP: u16 = 0x001f;
/// Presentation QoS.
pub const PRESENTATION: u16 = 0x0021;
/// Deadline QoS.
pub const DEADLINE: u16 = 0x0023;
/// Destination order QoS.
pub const DESTINATION_ORDER: u16 = 0x0025;
/// Latency budget QoS.
pub const LATENCY_BUDGET: u16 = 0x0027;
/// Partition QoS.
pub const PARTITION: u16 = 0x0029;
/// Lifespan QoS.
pub const LIFESPAN: u16 = 0x002b;
/// User data QoS.
pub const USER_DATA: u16 = 0x002c;
/// Group data QoS.
pub const GROUP_DATA: u16 = 0x002d;
/// Topic data QoS.
pub const TOPIC_DATA: u16 = 0x002e;
/// Endpoint unicast locator.
pub const UNICAST_LOCATOR: u16 = 0x002f;
/// Endpoint multicast locator.
pub const MULTICAST_LOCATOR: u16 = 0x0030;
/// Participant default unicast locator.
pub const DEFAULT_UNICAST_LOCATOR: u16 = 0x0031;
/// Participant metatraffic unicast locator.
pub const METATRAFFIC_UNICAST_LOCATOR: u16 = 0x0032;
/// Participant metatraffic multicast locator.
pub const METATRAFFIC_MULTICAST_LOCATOR: u16 = 0x0033;
/// Participant manual liveliness count.
pub const PARTICIPANT_MANUAL_LIVELINESS_COUNT: u16 = 0x0034;
/// Content filter property.
pub const CONTENT_FILTER_PROPERTY: u16 = 0x0035;
/// Expects inline QoS.
pub const EXPECTS_INLINE_QOS: u16 = 0x0043;
/// Participant builtin endpoints (deprecated alias of BUILTIN_ENDPOINT_SET).
pub const PARTICIPANT_BUILTIN_ENDPOINTS: u16 = 0x0044;
/// Participant default multicast locator.
pub const DEFAULT_MULTICAST_LOCATOR: u16 = 0x0048;
/// Transport priority QoS.
pub const TRANSPORT_PRIORITY: u16 = 0x0049;
/// History QoS.
pub const HISTORY: u16 = 0x0040;
/// Resource limits QoS.
pub const RESOURCE_LIMITS: u16 = 0x0041;
/// Participant GUID.
pub const PARTICIPANT_GUID: u16 = 0x0050;
/// Participant entity id.
pub const PARTICIPANT_ENTITYID: u16 = 0x0051;
/// Group GUID.
pub const GROUP_GUID: u16 = 0x0052;
/// Group entity id.
pub const GROUP_ENTITYID: u16 = 0x0053;
/// Content filter info (inline QoS).
pub const CONTENT_FILTER_INFO: u16 = 0x0055;
/// Coherent set (inline QoS).
pub const COHERENT_SET: u16 = 0x0056;
/// Directed write (inline QoS).
pub const DIRECTED_WRITE: u16 = 0x0057;
/// Builtin endpoint set.
pub const BUILTIN_ENDPOINT_SET: u16 = 0x0058;
/// Property list.
pub const PROPERTY_LIST: u16 = 0x0059;
/// Endpoint GUID.
pub const ENDPOINT_GUID: u16 = 0x005a;
/// Type max size serialized.
pub const TYPE_MAX_SIZE_SERIALIZED: u16 = 0x0060;
/// Original writer info (inline QoS).
pub const ORIGINAL_WRITER_INFO: u16 = 0x0061;
/// Entity name.
pub const ENTITY_NAME: u16 = 0x0062;
/// Group coherent set (inline QoS).
pub const GROUP_COHERENT_SET: u16 = 0x0063;
/// Group sequence number (inline QoS).
pub const GROUP_SEQ_NUM: u16 = 0x0064;
/// Writer group info (inline QoS).
pub const WRITER_GROUP_INFO: u16 = 0x0065;
/// Secure writer group info (inline QoS).
pub const SECURE_WRITER_GROUP_INFO: u16 = 0x0066;
/// Key hash (inline QoS).
pub const KEY_HASH: u16 = 0x0070;
/// Status info (inline QoS).
pub const STATUS_INFO: u16 = 0x0071;
/// Data representation QoS (XTypes).
pub const DATA_REPRESENTATION: u16 = 0x0073;
/// Type consistency enforcement QoS (XTypes).
pub const TYPE_CONSISTENCY_ENFORCEMENT: u16 = 0x0074;
/// Type information (XTypes), kept opaque.
pub const TYPE_INFORMATION: u16 = 0x0075;
/// Builtin endpoint QoS.
pub const BUILTIN_ENDPOINT_QOS: u16 = 0x0077;
/// Domain tag (must understand).
pub const DOMAIN_TAG: u16 = 0x4014;

/// The spec name of a PID without the `PID_` prefix, `None` if unknown or vendor-specific.
pub fn name(pid: u16) -> Option<&'static str> {
    Some(match pid {
        PAD => "PAD",
        SENTINEL => "SENTINEL",
        PARTICIPANT_LEASE_DURATION => "PARTICIPANT_LEASE_DURATION",
        TIME_BASED_FILTER => "TIME_BASED_FILTER",
        TOPIC_NAME => "TOPIC_NAME",
        OWNERSHIP_STRENGTH => "OWNERSHIP_STRENGTH",
        TYPE_NAME => "TYPE_NAME",
        DOMAIN_ID => "DOMAIN_ID",
        PROTOCOL_VERSION => "PROTOCOL_VERSION",
        VENDOR_ID => "VENDORID",
        RELIABILITY => "RELIABILITY",
        LIVELINESS => "LIVELINESS",
        DURABILITY => "DURABILITY",
        DURABILITY_SERVICE => "DURABILITY_SERVICE",
        OWNERSHIP => "OWNERSHIP",
        PRESENTATION => "PRESENTATION",
        DEADLINE => "DEADLINE",
        DESTINATION_ORDER => "DESTINATION_ORDER",
        LATENCY_BUDGET => "LATENCY_BUDGET",
        PARTITION => "PARTITION",
        LIFESPAN => "LIFESPAN",
        USER_DATA => "USER_DATA",
        GROUP_DATA => "GROUP_DATA",
        TOPIC_DATA => "TOPIC_DATA",
        UNICAST_LOCATOR => "UNICAST_LOCATOR",
        MULTICAST_LOCATOR => "MULTICAST_LOCATOR",
        DEFAULT_UNICAST_LOCATOR => "DEFAULT_UNICAST_LOCATOR",
        METATRAFFIC_UNICAST_LOCATOR => "METATRAFFIC_UNICAST_LOCATOR",
        METATRAFFIC_MULTICAST_LOCATOR => "METATRAFFIC_MULTICAST_LOCATOR",
        PARTICIPANT_MANUAL_LIVELINESS_COUNT => "PARTICIPANT_MANUAL_LIVELINESS_COUNT",
        CONTENT_FILTER_PROPERTY => "CONTENT_FILTER_PROPERTY",
        EXPECTS_INLINE_QOS => "EXPECTS_INLINE_QOS",
        PARTICIPANT_BUILTIN_ENDPOINTS => "PARTICIPANT_BUILTIN_ENDPOINTS",
        DEFAULT_MULTICAST_LOCATOR => "DEFAULT_MULTICAST_LOCATOR",
        TRANSPORT_PRIORITY => "TRANSPORT_PRIORITY",
        HISTORY => "HISTORY",
        RESOURCE_LIMITS => "RESOURCE_LIMITS",
        PARTICIPANT_GUID => "PARTICIPANT_GUID",
        PARTICIPANT_ENTITYID => "PARTICIPANT_ENTITYID",
        GROUP_GUID => "GROUP_GUID",
        GROUP_ENTITYID => "GROUP_ENTITYID",
        CONTENT_FILTER_INFO => "CONTENT_FILTER_INFO",
        COHERENT_SET => "COHERENT_SET",
        DIRECTED_WRITE => "DIRECTED_WRITE",
        BUILTIN_ENDPOINT_SET => "BUILTIN_ENDPOINT_SET",
        PROPERTY_LIST => "PROPERTY_LIST",
        ENDPOINT_GUID => "ENDPOINT_GUID",
        TYPE_MAX_SIZE_SERIALIZED => "TYPE_MAX_SIZE_SERIALIZED",
        ORIGINAL_WRITER_INFO => "ORIGINAL_WRITER_INFO",
        ENTITY_NAME => "ENTITY_NAME",
        GROUP_COHERENT_SET => "GROUP_COHERENT_SET",
        GROUP_SEQ_NUM => "GROUP_SEQ_NUM",
        WRITER_GROUP_INFO => "WRITER_GROUP_INFO",
        SECURE_WRITER_GROUP_INFO => "SECURE_WRITER_GROUP_INFO",
        KEY_HASH => "KEY_HASH",
        STATUS_INFO => "STATUS_INFO",
        DATA_REPRESENTATION => "DATA_REPRESENTATION",
        TYPE_CONSISTENCY_ENFORCEMENT => "TYPE_CONSISTENCY_ENFORCEMENT",
        TYPE_INFORMATION => "TYPE_INFORMATION",
        BUILTIN_ENDPOINT_QOS => "BUILTIN_ENDPOINT_QOS",
        DOMAIN_TAG => "DOMAIN_TAG",
        _ => return None,
    })
}
