//! The builtin-topic data codecs (`discovery::data`): round trips, the payloads Cyclone DDS
//! 0.10.2 and Fast DDS 2.9.1 really send (extracted from `interop/captures`, see
//! `tests/data/discovery/README.md`), and malformed input.

use proptest::prelude::*;
use tachyon_proto::discovery::data::{
    builtin_endpoints as be, duration_from_wire, duration_to_wire, endpoint_guid_from_key,
    guid_from_key_hash, participant_guid_from_key, DataError, ParticipantData, ParticipantMessage,
    ProductVersion, PublicationData, SubscriptionData, DEFAULT_PARTICIPANT_LEASE,
};
use tachyon_proto::qos::{
    AccessScope, DataReaderQos, DataRepresentation, DataWriterQos, DestinationOrderKind,
    DurabilityKind, DurabilityService, History, Liveliness, LivelinessKind, OwnershipKind,
    Presentation, Reliability, ReliabilityQos, ResourceLimits, TypeConsistency,
};
use tachyon_proto::Duration;
use tachyon_wire::parameter::{pid, ContentFilterProperty};
use tachyon_wire::{
    Duration as WireDuration, EntityId, Guid, GuidPrefix, Locator, ParameterListPayloadView,
    ProtocolVersion, VendorId,
};

// ---------------------------------------------------------------------------------------------
// Helpers.

/// A captured payload from `tests/data/discovery/NAME` (one line of hex).
macro_rules! sample {
    ($name:literal) => {
        hex(include_str!(concat!("data/discovery/", $name)))
    };
}

fn hex(text: &str) -> Vec<u8> {
    let text = text.trim();
    assert!(text.len() % 2 == 0, "odd number of hex digits");
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).expect("hex digit"))
        .collect()
}

fn guid(hex_text: &str) -> Guid {
    let b = hex(hex_text);
    let mut g = Guid::UNKNOWN;
    g.prefix.0.copy_from_slice(&b[..12]);
    g.entity_id.0.copy_from_slice(&b[12..16]);
    g
}

fn udp4(a: [u8; 4], port: u32) -> Locator {
    let mut address = [0u8; 16];
    address[12..].copy_from_slice(&a);
    Locator {
        kind: Locator::KIND_UDPV4,
        port,
        address,
    }
}

/// A PL_CDR_LE payload of the given (pid, value) parameters and a sentinel.
fn pl(params: &[(u16, &[u8])]) -> Vec<u8> {
    let mut v = vec![0x00, 0x03, 0x00, 0x00];
    for (pid, value) in params {
        v.extend_from_slice(&pid.to_le_bytes());
        v.extend_from_slice(&(value.len() as u16).to_le_bytes());
        v.extend_from_slice(value);
    }
    v.extend_from_slice(&[0x01, 0x00, 0x00, 0x00]);
    v
}

fn le_string(s: &str) -> Vec<u8> {
    let mut v = ((s.len() + 1) as u32).to_le_bytes().to_vec();
    v.extend_from_slice(s.as_bytes());
    v.push(0);
    while v.len() % 4 != 0 {
        v.push(0);
    }
    v
}

fn u32s(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

const WRITER_GUID: &str = "0a0b0c0d0e0f1011121314150000a102";
const READER_GUID: &str = "0a0b0c0d0e0f1011121314150000a207";

/// The smallest valid publication (GUID, topic, type), plus `extra` parameters.
fn minimal_endpoint(guid_hex: &str, extra: &[(u16, &[u8])]) -> Vec<u8> {
    let g = hex(guid_hex);
    let topic = le_string("Topic");
    let ty = le_string("Type");
    let mut params: Vec<(u16, &[u8])> = vec![
        (pid::ENDPOINT_GUID, &g),
        (pid::TOPIC_NAME, &topic),
        (pid::TYPE_NAME, &ty),
    ];
    params.extend_from_slice(extra);
    pl(&params)
}

/// The (pid) sequence of an encoded payload, checking its framing on the way.
fn pids(payload: &[u8]) -> Vec<u16> {
    assert_eq!(
        &payload[..4],
        &[0x00, 0x03, 0x00, 0x00],
        "PL_CDR_LE, options 0"
    );
    assert_eq!(payload.len() % 4, 0);
    let view = ParameterListPayloadView::parse(payload).expect("a valid parameter list");
    assert!(view.trailing().is_empty());
    view.list()
        .iter()
        .map(|p| {
            assert_eq!(p.value.len() % 4, 0);
            p.pid
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Representative values, every field away from its default.

fn full_participant() -> ParticipantData {
    ParticipantData {
        guid_prefix: GuidPrefix([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]),
        protocol_version: ProtocolVersion::V2_4,
        vendor_id: VendorId::TACHYON,
        domain_id: Some(42),
        domain_tag: "lab".to_owned(),
        expects_inline_qos: true,
        metatraffic_unicast: vec![udp4([10, 0, 0, 1], 7410), udp4([10, 0, 0, 2], 7410)],
        metatraffic_multicast: vec![udp4([239, 255, 0, 1], 7400)],
        default_unicast: vec![Locator {
            kind: Locator::KIND_UDPV6,
            port: 7411,
            address: [0xfe, 0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1],
        }],
        default_multicast: vec![Locator {
            kind: Locator::KIND_FASTDDS_SHM,
            port: 99,
            address: [7; 16],
        }],
        builtin_endpoints: be::PARTICIPANT_ANNOUNCER
            | be::PARTICIPANT_DETECTOR
            | be::PUBLICATIONS_ANNOUNCER
            | be::SUBSCRIPTIONS_DETECTOR,
        lease_duration: Some(Duration::from_millis(12_345)),
        manual_liveliness_count: 7,
        user_data: b"user".to_vec(),
        entity_name: Some("participant \u{e9}".to_owned()),
        properties: vec![
            ("a".to_owned(), "1".to_owned()),
            ("bb".to_owned(), String::new()),
        ],
        // Received only: Tachyon announces none.
        product_version: None,
    }
}

fn full_writer_qos() -> DataWriterQos {
    DataWriterQos {
        durability: DurabilityKind::TransientLocal,
        durability_service: DurabilityService {
            service_cleanup_delay: Duration::from_secs(3),
            history: History::KeepLast(5),
            limits: ResourceLimits {
                max_samples: Some(100),
                max_instances: None,
                max_samples_per_instance: Some(5),
            },
        },
        deadline: Some(Duration::from_micros(2_500)),
        latency_budget: Duration::from_millis(1),
        liveliness: Liveliness {
            kind: LivelinessKind::ManualByTopic,
            lease_duration: Some(Duration::from_secs(2)),
        },
        reliability: ReliabilityQos {
            kind: Reliability::BestEffort,
            max_blocking_time: Duration::from_millis(250),
        },
        destination_order: DestinationOrderKind::BySourceTimestamp,
        history: History::KeepAll,
        resource_limits: ResourceLimits {
            max_samples: Some(1000),
            max_instances: Some(10),
            max_samples_per_instance: None,
        },
        transport_priority: 3,
        lifespan: Some(Duration::from_secs(60)),
        user_data: vec![9, 8, 7],
        ownership: OwnershipKind::Exclusive,
        ownership_strength: -4,
        autodispose_unregistered_instances: true,
        representation: vec![DataRepresentation::Xcdr1],
        ignore_local: false,
        batch_delay: None,
    }
}

fn full_reader_qos() -> DataReaderQos {
    DataReaderQos {
        durability: DurabilityKind::Persistent,
        deadline: Some(Duration::from_millis(100)),
        latency_budget: Duration::from_nanos(1),
        liveliness: Liveliness {
            kind: LivelinessKind::ManualByParticipant,
            lease_duration: None,
        },
        reliability: ReliabilityQos {
            kind: Reliability::Reliable,
            max_blocking_time: Duration::MAX,
        },
        destination_order: DestinationOrderKind::BySourceTimestamp,
        history: History::KeepLast(20),
        resource_limits: ResourceLimits {
            max_samples: None,
            max_instances: Some(3),
            max_samples_per_instance: None,
        },
        user_data: vec![1],
        ownership: OwnershipKind::Exclusive,
        time_based_filter: Duration::from_millis(10),
        reader_data_lifecycle: Default::default(),
        representation: vec![DataRepresentation::Xcdr2],
        type_consistency: TypeConsistency::disallow(),
        ignore_local: false,
    }
}

fn full_publication() -> PublicationData {
    PublicationData {
        guid: guid(WRITER_GUID),
        participant_guid: Some(guid("0a0b0c0d0e0f101112131415000001c1")),
        topic_name: "Square".to_owned(),
        type_name: "ShapeType".to_owned(),
        unicast_locators: vec![udp4([192, 168, 1, 5], 7411)],
        multicast_locators: vec![udp4([239, 255, 0, 2], 7401)],
        qos: full_writer_qos().into(),
        presentation: Presentation {
            access_scope: AccessScope::Group,
            coherent_access: true,
            ordered_access: true,
        },
        group_entity_id: Some(tachyon_wire::EntityId::new(
            [0, 0, 9],
            tachyon_wire::EntityKind::USER_WRITER_GROUP,
        )),
        partition: vec!["p1".to_owned(), "x*".to_owned(), String::new()],
        group_data: vec![0xaa; 5],
        topic_data: vec![0xbb; 3],
        type_information: Some(vec![0x60, 0, 0, 0, 1, 2, 3, 4]),
        type_info: None,
        representation_announced: true,
        entity_name: Some("writer".to_owned()),
    }
}

fn full_subscription() -> SubscriptionData {
    SubscriptionData {
        guid: guid(READER_GUID),
        participant_guid: Some(guid("0a0b0c0d0e0f101112131415000001c1")),
        topic_name: "Circle".to_owned(),
        type_name: "ShapeType".to_owned(),
        unicast_locators: vec![udp4([192, 168, 1, 5], 7413), udp4([10, 1, 1, 1], 7413)],
        multicast_locators: vec![],
        expects_inline_qos: true,
        qos: full_reader_qos().into(),
        presentation: Presentation {
            access_scope: AccessScope::Topic,
            coherent_access: false,
            ordered_access: true,
        },
        partition: vec!["a".to_owned()],
        group_data: vec![1, 2],
        topic_data: vec![3],
        content_filter: Some(ContentFilterProperty {
            content_filtered_topic_name: "CF".to_owned(),
            related_topic_name: "Circle".to_owned(),
            filter_class_name: "DDSSQL".to_owned(),
            filter_expression: "x > %0".to_owned(),
            expression_parameters: vec!["10".to_owned(), "abc".to_owned()],
        }),
        type_information: None,
        type_info: None,
        representation_announced: true,
        entity_name: Some("reader".to_owned()),
    }
}

// ---------------------------------------------------------------------------------------------
// Round trips.

#[test]
fn participant_round_trip() {
    let p = full_participant();
    let bytes = p.to_payload();
    pids(&bytes);
    assert_eq!(ParticipantData::from_payload(&bytes), Ok(p));
}

#[test]
fn publication_round_trip() {
    let p = full_publication();
    let bytes = p.to_payload();
    pids(&bytes);
    assert_eq!(PublicationData::from_payload(&bytes), Ok(p));
}

#[test]
fn subscription_round_trip() {
    let s = full_subscription();
    let bytes = s.to_payload();
    pids(&bytes);
    assert_eq!(SubscriptionData::from_payload(&bytes), Ok(s));
}

#[test]
fn participant_message_round_trip() {
    for data in [vec![], vec![0], vec![1, 2, 3, 4, 5]] {
        let m = ParticipantMessage {
            guid_prefix: GuidPrefix([9; 12]),
            kind: ParticipantMessage::MANUAL,
            data,
        };
        let bytes = m.to_payload();
        assert_eq!(&bytes[..4], &[0, 0, 0, 0], "CDR_BE");
        assert_eq!(bytes.len() % 4, 0);
        assert_eq!(ParticipantMessage::from_payload(&bytes), Ok(m));
    }
}

#[test]
fn defaults_round_trip_and_match_an_empty_list() {
    let p = ParticipantData::new(GuidPrefix([3; 12]), VendorId::CYCLONE_DDS);
    assert_eq!(p.lease_duration, Some(DEFAULT_PARTICIPANT_LEASE));
    assert_eq!(ParticipantData::from_payload(&p.to_payload()), Ok(p));

    // An empty DATA_REPRESENTATION (the runtime's choice) goes out as what it means.
    let mut w = PublicationData::new(guid(WRITER_GUID), "T", "Ty");
    assert!(w.qos.representation.is_empty());
    let back = PublicationData::from_payload(&w.to_payload());
    std::sync::Arc::make_mut(&mut w.qos).representation = vec![DataRepresentation::Xcdr1];
    assert_eq!(back, Ok(w));
    let mut r = SubscriptionData::new(guid(READER_GUID), "T", "Ty");
    assert!(r.qos.representation.is_empty());
    let back = SubscriptionData::from_payload(&r.to_payload());
    std::sync::Arc::make_mut(&mut r.qos).representation =
        vec![DataRepresentation::Xcdr1, DataRepresentation::Xcdr2];
    assert_eq!(back, Ok(r));

    // Only the GUID: everything else is the builtin-topic default.
    let g = hex("0102030405060708090a0b0c000001c1");
    let only_guid = ParticipantData::from_payload(&pl(&[(pid::PARTICIPANT_GUID, &g)])).unwrap();
    let mut expected =
        ParticipantData::new(GuidPrefix(g[..12].try_into().unwrap()), VendorId::UNKNOWN);
    expected.protocol_version = only_guid.protocol_version;
    assert_eq!(only_guid, expected);
}

#[test]
fn absent_policies_take_the_builtin_topic_defaults() {
    let w = PublicationData::from_payload(&minimal_endpoint(WRITER_GUID, &[])).unwrap();
    // Absent RELIABILITY on a publication is RELIABLE (Cyclone and Fast DDS agree).
    assert_eq!(w.qos.reliability, ReliabilityQos::RELIABLE);
    assert_eq!(w.qos.durability, DurabilityKind::Volatile);
    assert_eq!(w.qos.representation, vec![DataRepresentation::Xcdr1]);
    assert_eq!(w.qos.history, History::KeepLast(1));
    assert_eq!(w.qos.liveliness, Liveliness::default());
    assert_eq!(w.qos.deadline, None);
    assert_eq!(w.qos.lifespan, None);
    assert_eq!(w.participant_guid, None);
    assert!(w.unicast_locators.is_empty());

    let r = SubscriptionData::from_payload(&minimal_endpoint(READER_GUID, &[])).unwrap();
    assert_eq!(r.qos.reliability, ReliabilityQos::BEST_EFFORT);
    assert_eq!(r.qos.representation, vec![DataRepresentation::Xcdr1]);
    assert_eq!(r.qos.type_consistency, TypeConsistency::allow());
    assert!(!r.expects_inline_qos);

    // An empty DATA_REPRESENTATION list is XCDR1 too; an unknown id is an error.
    let empty = u32s(&[0]);
    let w = PublicationData::from_payload(&minimal_endpoint(
        WRITER_GUID,
        &[(pid::DATA_REPRESENTATION, &empty)],
    ))
    .unwrap();
    assert_eq!(w.qos.representation, vec![DataRepresentation::Xcdr1]);
    let mut odd = u32s(&[3]);
    odd.extend_from_slice(&[9, 0, 2, 0, 7, 0, 0, 0]); // ids 9, 2, 7 + padding
    assert_eq!(
        PublicationData::from_payload(&minimal_endpoint(
            WRITER_GUID,
            &[(pid::DATA_REPRESENTATION, &odd)],
        )),
        Err(DataError::BadValue {
            pid: pid::DATA_REPRESENTATION,
            reason: "unknown data representation id"
        })
    );
}

#[test]
fn emitted_parameters_are_minimal_but_always_carry_reliability_durability_representation() {
    let w = PublicationData::new(guid(WRITER_GUID), "T", "Ty");
    assert_eq!(
        pids(&w.to_payload()),
        vec![
            pid::ENDPOINT_GUID,
            pid::TOPIC_NAME,
            pid::TYPE_NAME,
            pid::DURABILITY,
            pid::RELIABILITY,
            pid::DATA_REPRESENTATION,
        ]
    );
    let r = SubscriptionData::new(guid(READER_GUID), "T", "Ty");
    assert_eq!(
        pids(&r.to_payload()),
        vec![
            pid::ENDPOINT_GUID,
            pid::TOPIC_NAME,
            pid::TYPE_NAME,
            pid::DURABILITY,
            pid::RELIABILITY,
            pid::DATA_REPRESENTATION,
        ]
    );
    let p = ParticipantData::new(GuidPrefix([3; 12]), VendorId::TACHYON);
    assert_eq!(
        pids(&p.to_payload()),
        vec![
            pid::PROTOCOL_VERSION,
            pid::VENDOR_ID,
            pid::PARTICIPANT_GUID,
            pid::BUILTIN_ENDPOINT_SET,
            pid::PARTICIPANT_LEASE_DURATION,
        ]
    );
    // Every optional parameter of a fully populated reader appears once, in a fixed order.
    let all = pids(&full_subscription().to_payload());
    for p in [
        pid::PARTICIPANT_GUID,
        pid::DEADLINE,
        pid::LATENCY_BUDGET,
        pid::LIVELINESS,
        pid::DESTINATION_ORDER,
        pid::HISTORY,
        pid::RESOURCE_LIMITS,
        pid::USER_DATA,
        pid::OWNERSHIP,
        pid::TIME_BASED_FILTER,
        pid::TYPE_CONSISTENCY_ENFORCEMENT,
        pid::EXPECTS_INLINE_QOS,
        pid::CONTENT_FILTER_PROPERTY,
        pid::PRESENTATION,
        pid::PARTITION,
        pid::GROUP_DATA,
        pid::TOPIC_DATA,
        pid::ENTITY_NAME,
    ] {
        assert_eq!(all.iter().filter(|&&x| x == p).count(), 1, "pid {p:#06x}");
    }
    assert_eq!(
        all.iter().filter(|&&x| x == pid::UNICAST_LOCATOR).count(),
        2
    );
}

#[test]
fn type_consistency_is_sent_with_its_options() {
    let mut r = SubscriptionData::new(guid(READER_GUID), "T", "Ty");
    std::sync::Arc::make_mut(&mut r.qos).type_consistency = TypeConsistency::disallow();
    let bytes = r.to_payload();
    let view = ParameterListPayloadView::parse(&bytes).unwrap();
    // kind DISALLOW (0), then ignore_sequence_bounds, ignore_string_bounds,
    // ignore_member_names, prevent_type_widening, force_type_validation, one octet of padding.
    assert_eq!(
        view.list().get(pid::TYPE_CONSISTENCY_ENFORCEMENT),
        Some(&[0u8, 0, 0, 0, 0, 1, 0, 0][..])
    );
    assert_eq!(
        SubscriptionData::from_payload(&bytes)
            .unwrap()
            .qos
            .type_consistency,
        TypeConsistency::disallow()
    );
    // ALLOW with its options as set.
    std::sync::Arc::make_mut(&mut r.qos).type_consistency = TypeConsistency {
        ignore_member_names: true,
        force_type_validation: true,
        ..TypeConsistency::allow()
    };
    let bytes = r.to_payload();
    let view = ParameterListPayloadView::parse(&bytes).unwrap();
    assert_eq!(
        view.list().get(pid::TYPE_CONSISTENCY_ENFORCEMENT),
        Some(&[1u8, 0, 1, 1, 1, 0, 1, 0][..])
    );
    assert_eq!(
        SubscriptionData::from_payload(&bytes)
            .unwrap()
            .qos
            .type_consistency,
        r.qos.type_consistency
    );
}

// ---------------------------------------------------------------------------------------------
// Durations.

#[test]
fn durations_are_rtps_fractions() {
    // What Fast DDS 2.9.1 sends for a 100 ms max_blocking_time (and Cyclone computes alike).
    let fastdds_100ms = WireDuration {
        seconds: 0,
        fraction: 0x1999_999a,
    };
    assert_eq!(
        duration_from_wire(fastdds_100ms),
        Ok(Some(Duration::from_millis(100)))
    );
    assert_eq!(
        duration_to_wire(Some(Duration::from_millis(100))),
        fastdds_100ms
    );
    assert_eq!(duration_from_wire(WireDuration::INFINITE), Ok(None));
    assert_eq!(duration_to_wire(None), WireDuration::INFINITE);
    assert_eq!(
        duration_to_wire(Some(Duration::from_secs(1 << 31))),
        WireDuration::INFINITE
    );
    assert_eq!(
        duration_to_wire(Some(Duration::MAX)),
        WireDuration::INFINITE
    );
    assert_eq!(
        duration_from_wire(WireDuration {
            seconds: -1,
            fraction: 0
        }),
        Err("negative duration")
    );
    // The largest fraction rounds up into the next second rather than past it.
    assert_eq!(
        duration_from_wire(WireDuration {
            seconds: 1,
            fraction: u32::MAX
        }),
        Ok(Some(Duration::from_secs(2)))
    );
    // Finite but with the infinite fraction's seconds: a real, long duration.
    assert_eq!(
        duration_from_wire(WireDuration {
            seconds: i32::MAX,
            fraction: 0
        }),
        Ok(Some(Duration::from_secs(i32::MAX as u64)))
    );
}

#[test]
fn every_nanosecond_value_round_trips() {
    for nanos in (0..1_000_000_000u32).step_by(997).chain([1, 999_999_999]) {
        let d = Duration::new(5, nanos);
        assert_eq!(duration_from_wire(duration_to_wire(Some(d))), Ok(Some(d)));
    }
}

// ---------------------------------------------------------------------------------------------
// What the peers send.

#[test]
fn cyclone_spdp() {
    let bytes = sample!("cyclone-spdp.hex");
    let p = ParticipantData::from_payload(&bytes).unwrap();
    assert_eq!(p.guid(), guid("01107eb6677dbb6ba247f47c000001c1"));
    assert_eq!(p.vendor_id, VendorId::CYCLONE_DDS);
    assert_eq!(p.protocol_version, ProtocolVersion::V2_1);
    assert_eq!(p.domain_id, Some(0));
    assert_eq!(p.domain_tag, "");
    assert_eq!(p.lease_duration, Some(Duration::from_secs(10)));
    assert_eq!(p.builtin_endpoints, 0x0000_fc3f);
    assert_eq!(p.default_unicast, vec![udp4([127, 0, 0, 1], 39734)]);
    assert_eq!(p.metatraffic_unicast, vec![udp4([127, 0, 0, 1], 39734)]);
    assert_eq!(p.default_multicast, vec![udp4([239, 255, 0, 1], 7401)]);
    assert_eq!(p.metatraffic_multicast, vec![udp4([239, 255, 0, 1], 7400)]);
    assert_eq!(p.user_data, b"DDSPerf:0:15001:vm");
    assert_eq!(
        p.properties,
        vec![
            ("__ProcessName".to_owned(), "ddsperf".to_owned()),
            ("__Pid".to_owned(), "15001".to_owned()),
            ("__Hostname".to_owned(), "vm".to_owned()),
        ]
    );
    assert_eq!(p.entity_name, None);
    assert!(!p.expects_inline_qos);
    // From its PID_ADLINK_PARTICIPANT_VERSION_INFO ("vm/0.10.2/…").
    assert_eq!(p.product_version, Some(ProductVersion::new(0, 10, 2)));
    assert_stable_participant(&bytes);
}

#[test]
fn fastdds_spdp() {
    let bytes = sample!("fastdds-spdp.hex");
    let p = ParticipantData::from_payload(&bytes).unwrap();
    assert_eq!(p.guid(), guid("010f7f014e3adc9e00000000000001c1"));
    assert_eq!(p.vendor_id, VendorId::FAST_DDS);
    assert_eq!(p.protocol_version, ProtocolVersion::V2_3);
    assert_eq!(p.domain_id, None);
    assert_eq!(p.lease_duration, Some(Duration::from_secs(20)));
    assert_eq!(p.builtin_endpoints, 0x0c3f_0c3f);
    assert_eq!(p.metatraffic_unicast, vec![udp4([127, 0, 0, 1], 7410)]);
    assert_eq!(p.default_unicast, vec![udp4([127, 0, 0, 1], 7411)]);
    assert!(p.metatraffic_multicast.is_empty() && p.default_multicast.is_empty());
    assert_eq!(p.entity_name.as_deref(), Some("tachyon-capture-sub"));
    assert_eq!(p.properties.len(), 4);
    assert_eq!(
        p.properties[0],
        ("PARTICIPANT_TYPE".to_owned(), "SIMPLE".to_owned())
    );
    assert_eq!(p.product_version, None);
    assert_stable_participant(&bytes);
}

#[test]
fn cyclone_publication_without_reliability_is_reliable() {
    // ddsperf's DDSPerfCPUStats topic is RELIABLE with 100 ms: equal to Cyclone's writer
    // default, so Cyclone leaves RELIABILITY (and DURABILITY, HISTORY, ...) out.
    let bytes = sample!("cyclone-publication-cpustats.hex");
    let w = PublicationData::from_payload(&bytes).unwrap();
    assert_eq!(w.guid, guid("0110c73b48683144e1b5744300000802"));
    assert_eq!(w.participant_guid, None);
    assert_eq!(w.topic_name, "DDSPerfCPUStats");
    assert_eq!(w.type_name, "CPUStats");
    assert_eq!(w.qos.reliability, ReliabilityQos::RELIABLE);
    assert_eq!(w.qos.durability, DurabilityKind::Volatile);
    assert_eq!(
        w.qos.representation,
        vec![DataRepresentation::Xcdr1, DataRepresentation::Xcdr2]
    );
    assert_eq!(w.type_information.as_ref().map(Vec::len), Some(148));
    // Cyclone DDS 0.10's TypeInformation decodes: both identifiers, one dependency.
    let info = w
        .type_info
        .as_ref()
        .expect("Cyclone's TypeInformation decodes");
    assert!(info.minimal.id.id.hash().is_some() && info.complete.id.id.hash().is_some());
    assert!(w.unicast_locators.is_empty() && w.multicast_locators.is_empty());
    assert_stable_publication(&bytes);
}

#[test]
fn cyclone_publication_with_qos() {
    let bytes = sample!("cyclone-publication-rdataks.hex");
    let w = PublicationData::from_payload(&bytes).unwrap();
    assert_eq!(w.guid, guid("0110c73b48683144e1b5744300000b02"));
    assert_eq!(w.topic_name, "DDSPerfRDataKS");
    assert_eq!(w.type_name, "KeyedSeq");
    assert_eq!(
        w.qos.reliability,
        ReliabilityQos {
            kind: Reliability::Reliable,
            max_blocking_time: Duration::from_secs(10),
        }
    );
    assert_eq!(w.qos.history, History::KeepAll);
    assert_eq!(
        w.qos.resource_limits,
        ResourceLimits {
            max_samples: Some(10_000),
            max_instances: None,
            max_samples_per_instance: None,
        }
    );
    assert_eq!(w.qos.durability, DurabilityKind::Volatile);
    assert_stable_publication(&bytes);
}

#[test]
fn cyclone_subscription() {
    let bytes = sample!("cyclone-subscription-rpongks.hex");
    let r = SubscriptionData::from_payload(&bytes).unwrap();
    assert_eq!(r.guid, guid("0110c73b48683144e1b5744300000c07"));
    assert_eq!(r.topic_name, "DDSPerfRPongKS");
    assert_eq!(r.type_name, "KeyedSeq");
    assert_eq!(r.qos.reliability.kind, Reliability::Reliable);
    assert_eq!(r.qos.reliability.max_blocking_time, Duration::from_secs(10));
    assert_eq!(r.qos.durability, DurabilityKind::Volatile);
    assert_eq!(r.qos.history, History::KeepAll);
    assert_eq!(r.qos.resource_limits.max_samples, Some(10_000));
    assert_eq!(r.partition, vec!["0110c73b_48683144_e1b57443_000001c1"]);
    assert_eq!(
        r.qos.representation,
        vec![DataRepresentation::Xcdr1, DataRepresentation::Xcdr2]
    );
    assert_eq!(r.type_information.as_ref().map(Vec::len), Some(100));
    assert!(!r.expects_inline_qos);
    assert_stable_subscription(&bytes);
}

#[test]
fn fastdds_publication() {
    let bytes = sample!("fastdds-publication-keyed.hex");
    let w = PublicationData::from_payload(&bytes).unwrap();
    assert_eq!(w.guid, guid("010f7f01553a08990000000000000102"));
    assert_eq!(
        w.participant_guid,
        Some(guid("010f7f01553a089900000000000001c1"))
    );
    assert_eq!(w.topic_name, "TachyonKeyed");
    assert_eq!(w.type_name, "tachyon::KeyedSample");
    assert_eq!(w.unicast_locators, vec![udp4([127, 0, 0, 1], 7413)]);
    // 100 ms is sent as the fraction 0x1999999a.
    assert_eq!(w.qos.reliability, ReliabilityQos::RELIABLE);
    assert_eq!(w.qos.durability, DurabilityKind::Volatile);
    assert_eq!(w.qos.durability_service, DurabilityService::default());
    assert_eq!(w.qos.deadline, None);
    assert_eq!(w.qos.lifespan, None);
    assert_eq!(w.qos.latency_budget, Duration::ZERO);
    assert_eq!(w.qos.liveliness, Liveliness::default());
    assert_eq!(w.qos.ownership, OwnershipKind::Shared);
    // Fast DDS 2.9 sends no DATA_REPRESENTATION: XCDR1 by the spec, and remembered as absent.
    assert_eq!(w.qos.representation, vec![DataRepresentation::Xcdr1]);
    assert!(!w.representation_announced);
    assert_eq!(w.presentation, Presentation::default());
    assert!(w.partition.is_empty() && w.topic_data.is_empty() && w.group_data.is_empty());
    assert_stable_publication(&bytes);
}

#[test]
fn fastdds_subscription() {
    let bytes = sample!("fastdds-subscription-keyed.hex");
    let r = SubscriptionData::from_payload(&bytes).unwrap();
    assert_eq!(r.guid, guid("010f7f014e3adc9e0000000000000107"));
    assert_eq!(r.topic_name, "TachyonKeyed");
    assert_eq!(r.type_name, "tachyon::KeyedSample");
    assert_eq!(r.unicast_locators, vec![udp4([127, 0, 0, 1], 7411)]);
    assert_eq!(r.qos.reliability, ReliabilityQos::RELIABLE);
    assert_eq!(r.qos.durability, DurabilityKind::Volatile);
    assert_eq!(r.qos.type_consistency, TypeConsistency::allow());
    assert_eq!(r.qos.representation, vec![DataRepresentation::Xcdr1]);
    assert!(!r.representation_announced);
    assert!(!r.expects_inline_qos);
    assert_stable_subscription(&bytes);
}

#[test]
fn cyclone_participant_message() {
    // CDR_LE: prefix, kind 00 00 00 01 (automatic), data = [0].
    let bytes = sample!("cyclone-participant-message.hex");
    let m = ParticipantMessage::from_payload(&bytes).unwrap();
    assert_eq!(
        m.guid_prefix,
        guid("0110c73b48683144e1b5744300000000").prefix
    );
    assert_eq!(m.kind, ParticipantMessage::AUTOMATIC);
    assert_eq!(m.data, vec![0]);
    assert_eq!(ParticipantMessage::from_payload(&m.to_payload()), Ok(m));
}

#[test]
fn fastdds_participant_message_layout() {
    // Fast DDS 2.9 WLP::send_liveliness_message: PL_CDR_LE label, prefix, kind, length 0,
    // four zero bytes.
    let mut bytes = vec![0x00, 0x03, 0x00, 0x00];
    bytes.extend_from_slice(&[0x01, 0x0f, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    bytes.extend_from_slice(&[0, 0, 0, 2]);
    bytes.extend_from_slice(&[0; 8]);
    let m = ParticipantMessage::from_payload(&bytes).unwrap();
    assert_eq!(m.kind, ParticipantMessage::MANUAL);
    assert_eq!(m.guid_prefix.0[..2], [0x01, 0x0f]);
    assert!(m.data.is_empty());
}

#[test]
fn keys_of_disposes_and_full_samples() {
    let dispose = sample!("cyclone-publication-dispose-key.hex");
    assert_eq!(
        endpoint_guid_from_key(&dispose),
        Some(guid("0110b99e9f66d6631168437c00000d02"))
    );
    let spdp_dispose = sample!("cyclone-spdp-dispose-key.hex");
    assert_eq!(
        participant_guid_from_key(&spdp_dispose),
        Some(guid("0110b99e9f66d6631168437c000001c1"))
    );
    // A key-only payload is not a full sample.
    assert_eq!(
        PublicationData::from_payload(&dispose),
        Err(DataError::Missing("PID_TOPIC_NAME"))
    );
    // Full samples: the endpoint GUID, not the participant GUID listed before it.
    assert_eq!(
        endpoint_guid_from_key(&sample!("fastdds-publication-keyed.hex")),
        Some(guid("010f7f01553a08990000000000000102"))
    );
    assert_eq!(
        participant_guid_from_key(&sample!("fastdds-spdp.hex")),
        Some(guid("010f7f014e3adc9e00000000000001c1"))
    );
    // PID_KEY_HASH in the payload when the GUID parameter is absent.
    let kh = hex("0102030405060708090a0b0c00000102");
    assert_eq!(
        endpoint_guid_from_key(&pl(&[(pid::KEY_HASH, &kh)])),
        Some(guid("0102030405060708090a0b0c00000102"))
    );
    // Fast DDS's dispose has no payload: the inline PID_KEY_HASH of fastdds.pcap.
    let inline_key: [u8; 16] = hex("010f7f01553a08990000000000000102").try_into().unwrap();
    assert_eq!(
        guid_from_key_hash(inline_key),
        Guid::new(
            guid("010f7f01553a08990000000000000102").prefix,
            EntityId([0, 0, 1, 2])
        )
    );
    assert_eq!(endpoint_guid_from_key(&[]), None);
    assert_eq!(endpoint_guid_from_key(&pl(&[])), None);
    assert_eq!(endpoint_guid_from_key(&[0, 1, 0, 0, 1, 0, 0, 0]), None);
}

fn assert_stable_participant(bytes: &[u8]) {
    let a = ParticipantData::from_payload(bytes).unwrap();
    let b = ParticipantData::from_payload(&a.to_payload()).unwrap();
    // The vendor's version is received, never sent (Tachyon announces its own vendor only).
    let a = ParticipantData {
        product_version: None,
        ..a
    };
    assert_eq!(a, b);
}

fn assert_stable_publication(bytes: &[u8]) {
    let mut a = PublicationData::from_payload(bytes).unwrap();
    let b = PublicationData::from_payload(&a.to_payload()).unwrap();
    // Tachyon always announces DATA_REPRESENTATION, whether the original did or not.
    assert!(b.representation_announced);
    a.representation_announced = true;
    assert_eq!(a, b);
}

fn assert_stable_subscription(bytes: &[u8]) {
    let mut a = SubscriptionData::from_payload(bytes).unwrap();
    let b = SubscriptionData::from_payload(&a.to_payload()).unwrap();
    // Tachyon always announces DATA_REPRESENTATION, whether the original did or not.
    assert!(b.representation_announced);
    a.representation_announced = true;
    assert_eq!(a, b);
}

// ---------------------------------------------------------------------------------------------
// Malformed input.

/// Every valid sample, captured and generated.
fn all_samples() -> Vec<Vec<u8>> {
    vec![
        sample!("cyclone-spdp.hex"),
        sample!("cyclone-publication-cpustats.hex"),
        sample!("cyclone-publication-rdataks.hex"),
        sample!("cyclone-subscription-rpongks.hex"),
        sample!("cyclone-publication-dispose-key.hex"),
        sample!("cyclone-spdp-dispose-key.hex"),
        sample!("cyclone-participant-message.hex"),
        sample!("fastdds-spdp.hex"),
        sample!("fastdds-publication-keyed.hex"),
        sample!("fastdds-subscription-keyed.hex"),
        full_participant().to_payload(),
        full_publication().to_payload(),
        full_subscription().to_payload(),
    ]
}

/// Runs every decoder on `bytes`; only a panic fails.
fn decode_all(bytes: &[u8]) {
    let _ = ParticipantData::from_payload(bytes);
    let _ = PublicationData::from_payload(bytes);
    let _ = SubscriptionData::from_payload(bytes);
    let _ = ParticipantMessage::from_payload(bytes);
    let _ = endpoint_guid_from_key(bytes);
    let _ = participant_guid_from_key(bytes);
}

#[test]
fn every_truncation_is_rejected_without_panic() {
    for s in all_samples() {
        for n in 0..s.len() {
            decode_all(&s[..n]);
        }
    }
    // A cut parameter list is malformed (no sentinel, or a value running past the end).
    let s = sample!("fastdds-publication-keyed.hex");
    for n in 0..s.len() {
        assert!(
            matches!(
                PublicationData::from_payload(&s[..n]),
                Err(DataError::Malformed(_))
            ),
            "truncated at {n}"
        );
    }
    let m = sample!("cyclone-participant-message.hex");
    for n in 0..24 {
        assert!(matches!(
            ParticipantMessage::from_payload(&m[..n]),
            Err(DataError::Malformed(_))
        ));
    }
}

#[test]
fn every_single_byte_corruption_is_handled_without_panic() {
    for s in all_samples() {
        for i in 0..s.len() {
            for v in [0x00, 0x01, 0x7f, 0x80, 0xff] {
                let mut c = s.clone();
                c[i] = v;
                decode_all(&c);
            }
        }
    }
}

#[test]
fn wrong_encapsulation() {
    let mut s = sample!("cyclone-spdp.hex");
    s[1] = 0x01; // CDR_LE
    assert!(matches!(
        ParticipantData::from_payload(&s),
        Err(DataError::Malformed(_))
    ));
    s[1] = 0x0b; // PL_CDR2_LE
    assert!(matches!(
        ParticipantData::from_payload(&s),
        Err(DataError::Malformed(_))
    ));
    assert!(matches!(
        ParticipantData::from_payload(&[0, 3]),
        Err(DataError::Malformed(_))
    ));
    let mut m = sample!("cyclone-participant-message.hex");
    m[1] = 0x07; // CDR2_LE
    assert!(matches!(
        ParticipantMessage::from_payload(&m),
        Err(DataError::Malformed(_))
    ));
    // A big-endian parameter list decodes like the little-endian one.
    let g = hex("0102030405060708090a0b0c000001c1");
    let mut be = vec![0x00, 0x02, 0x00, 0x00];
    be.extend_from_slice(&[0x00, 0x50, 0x00, 0x10]);
    be.extend_from_slice(&g);
    be.extend_from_slice(&[0x00, 0x02, 0x00, 0x08, 0, 0, 0, 5, 0x80, 0, 0, 0]);
    be.extend_from_slice(&[0x00, 0x01, 0x00, 0x00]);
    let p = ParticipantData::from_payload(&be).unwrap();
    assert_eq!(p.guid_prefix.0, g[..12]);
    assert_eq!(p.lease_duration, Some(Duration::from_millis(5500)));
}

#[test]
fn bad_lengths() {
    let g = hex("0102030405060708090a0b0c000001c1");
    // Unaligned length.
    let mut s = pl(&[(pid::PARTICIPANT_GUID, &g)]);
    s[6] = 15;
    assert!(matches!(
        ParticipantData::from_payload(&s),
        Err(DataError::Malformed(_))
    ));
    // Length running past the end.
    s[6] = 0xf0;
    assert!(matches!(
        ParticipantData::from_payload(&s),
        Err(DataError::Malformed(_))
    ));
    // A participant message whose sequence length exceeds the payload.
    let mut m = ParticipantMessage {
        guid_prefix: GuidPrefix([1; 12]),
        kind: ParticipantMessage::AUTOMATIC,
        data: vec![1, 2, 3],
    }
    .to_payload();
    m[23] = 200;
    assert!(matches!(
        ParticipantMessage::from_payload(&m),
        Err(DataError::Malformed(_))
    ));
    m[20] = 0xff; // length > 2^24
    assert!(matches!(
        ParticipantMessage::from_payload(&m),
        Err(DataError::Malformed(_))
    ));
}

#[test]
fn must_understand_and_vendor_pids() {
    let g = hex("0102030405060708090a0b0c000001c1");
    let four = [0u8; 4];
    // Unknown, must-understand: rejected.
    let s = pl(&[(pid::PARTICIPANT_GUID, &g), (0x4fff, &four)]);
    assert_eq!(
        ParticipantData::from_payload(&s),
        Err(DataError::MustUnderstand(0x4fff))
    );
    assert_eq!(
        PublicationData::from_payload(&minimal_endpoint(WRITER_GUID, &[(0x7005, &four)])),
        Err(DataError::MustUnderstand(0x7005))
    );
    // Vendor-specific, even with the must-understand bit, and unknown ones without it:
    // skipped. So is a known PID that does not belong to this topic (KEY_HASH, GROUP_GUID).
    let s = pl(&[
        (0xc001, &four),
        (0x8007, &[1, 2, 3, 4, 5, 6, 7, 8]),
        (0x3fff, &four),
        (pid::GROUP_GUID, &g),
        (pid::PARTICIPANT_GUID, &g),
    ]);
    assert!(ParticipantData::from_payload(&s).is_ok());
    // DOMAIN_TAG is must-understand and known.
    let tag = le_string("x");
    let s = pl(&[(pid::PARTICIPANT_GUID, &g), (pid::DOMAIN_TAG, &tag)]);
    assert_eq!(ParticipantData::from_payload(&s).unwrap().domain_tag, "x");
}

#[test]
fn bad_values_name_the_parameter() {
    let g = hex("0102030405060708090a0b0c000001c1");
    // A locator of 20 bytes instead of 24.
    let short_locator = [1u8; 20];
    let s = pl(&[
        (pid::PARTICIPANT_GUID, &g),
        (pid::METATRAFFIC_UNICAST_LOCATOR, &short_locator),
    ]);
    assert!(matches!(
        ParticipantData::from_payload(&s),
        Err(DataError::BadValue {
            pid: pid::METATRAFFIC_UNICAST_LOCATOR,
            ..
        })
    ));
    // A GUID of 12 bytes.
    let s = pl(&[(pid::PARTICIPANT_GUID, &g[..12])]);
    assert!(matches!(
        ParticipantData::from_payload(&s),
        Err(DataError::BadValue {
            pid: pid::PARTICIPANT_GUID,
            ..
        })
    ));
    // A negative lease.
    let neg = u32s(&[(-5i32) as u32, 0]);
    let s = pl(&[
        (pid::PARTICIPANT_GUID, &g),
        (pid::PARTICIPANT_LEASE_DURATION, &neg),
    ]);
    assert_eq!(
        ParticipantData::from_payload(&s),
        Err(DataError::BadValue {
            pid: pid::PARTICIPANT_LEASE_DURATION,
            reason: "negative duration"
        })
    );
    // Endpoint policies out of range.
    let cases: Vec<(u16, Vec<u8>)> = vec![
        (pid::RELIABILITY, u32s(&[0, 0, 0])),
        (pid::RELIABILITY, u32s(&[3, 0, 0])),
        (pid::RELIABILITY, u32s(&[2, u32::MAX, 0])),
        (pid::DURABILITY, u32s(&[4])),
        (pid::LIVELINESS, u32s(&[3, 0, 0])),
        (pid::HISTORY, u32s(&[0, 0])),
        (pid::HISTORY, u32s(&[2, 1])),
        (pid::RESOURCE_LIMITS, u32s(&[0, u32::MAX, u32::MAX])),
        (pid::RESOURCE_LIMITS, u32s(&[u32::MAX, (-2i32) as u32, 1])),
        (pid::DURABILITY_SERVICE, u32s(&[0, 0, 0, 0, 0, 0, 0])),
        (pid::OWNERSHIP, u32s(&[2])),
        (pid::DESTINATION_ORDER, u32s(&[2])),
        (pid::PRESENTATION, u32s(&[3, 0])),
        (pid::PRESENTATION, u32s(&[0, 2])), // coherent_access octet 2
        (pid::TYPE_CONSISTENCY_ENFORCEMENT, u32s(&[2])),
        (pid::DEADLINE, u32s(&[0])),
        (pid::TOPIC_NAME, hex("03000000ffff0000")), // not UTF-8
        (pid::PARTITION, u32s(&[5])),
        (pid::EXPECTS_INLINE_QOS, u32s(&[2])),
        (pid::UNICAST_LOCATOR, u32s(&[1, 2, 3, 4])),
    ];
    for (p, value) in cases {
        let s = minimal_endpoint(READER_GUID, &[(p, &value)]);
        let r = SubscriptionData::from_payload(&s);
        assert!(
            matches!(r, Err(DataError::BadValue { pid, .. }) if pid == p),
            "pid {p:#06x}: {r:?}"
        );
    }
}

#[test]
fn missing_required_parameters() {
    let g = hex(WRITER_GUID);
    let topic = le_string("T");
    let ty = le_string("Ty");
    assert_eq!(
        ParticipantData::from_payload(&pl(&[])),
        Err(DataError::Missing("PID_PARTICIPANT_GUID"))
    );
    assert_eq!(
        PublicationData::from_payload(&pl(&[(pid::TOPIC_NAME, &topic), (pid::TYPE_NAME, &ty)])),
        Err(DataError::Missing("PID_ENDPOINT_GUID"))
    );
    assert_eq!(
        SubscriptionData::from_payload(&pl(&[(pid::ENDPOINT_GUID, &g), (pid::TYPE_NAME, &ty)])),
        Err(DataError::Missing("PID_TOPIC_NAME"))
    );
    assert_eq!(
        SubscriptionData::from_payload(&pl(&[(pid::ENDPOINT_GUID, &g), (pid::TOPIC_NAME, &topic)])),
        Err(DataError::Missing("PID_TYPE_NAME"))
    );
}

#[test]
fn unknown_locator_kinds_are_kept() {
    let shm = Locator {
        kind: Locator::KIND_FASTDDS_SHM,
        port: 1,
        address: [3; 16],
    };
    let mut w = PublicationData::new(guid(WRITER_GUID), "T", "Ty");
    w.unicast_locators = vec![shm, udp4([1, 2, 3, 4], 5)];
    assert_eq!(
        PublicationData::from_payload(&w.to_payload())
            .unwrap()
            .unicast_locators,
        w.unicast_locators
    );
}

#[test]
fn oversized_values_are_left_out_instead_of_breaking_the_list() {
    let mut p = ParticipantData::new(GuidPrefix([1; 12]), VendorId::TACHYON);
    p.user_data = vec![1; 70_000];
    let back = ParticipantData::from_payload(&p.to_payload()).unwrap();
    assert!(back.user_data.is_empty());
    assert_eq!(back.guid_prefix, p.guid_prefix);
}

// ---------------------------------------------------------------------------------------------
// Property tests.

fn text() -> impl Strategy<Value = String> {
    "\\PC{0,12}"
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..max)
}

fn locators() -> impl Strategy<Value = Vec<Locator>> {
    prop::collection::vec(
        (any::<i32>(), any::<u32>(), any::<[u8; 16]>()).prop_map(|(kind, port, address)| Locator {
            kind,
            port,
            address,
        }),
        0..3,
    )
}

fn any_guid() -> impl Strategy<Value = Guid> {
    (any::<[u8; 12]>(), any::<[u8; 4]>()).prop_map(|(p, e)| Guid::new(GuidPrefix(p), EntityId(e)))
}

/// A finite duration RTPS can express, or [`Duration::MAX`] (sent as infinite).
fn finite_duration() -> impl Strategy<Value = Duration> {
    prop_oneof![
        (0..=i32::MAX as u64, 0..1_000_000_000u32).prop_map(|(s, n)| Duration::new(s, n)),
        (0..10u64, 0..1_000_000_000u32).prop_map(|(s, n)| Duration::new(s, n)),
        Just(Duration::ZERO),
        Just(Duration::MAX),
    ]
}

fn opt_duration() -> impl Strategy<Value = Option<Duration>> {
    prop_oneof![
        Just(None),
        (0..=i32::MAX as u64, 0..1_000_000_000u32).prop_map(|(s, n)| Some(Duration::new(s, n))),
    ]
}

fn history() -> impl Strategy<Value = History> {
    prop_oneof![
        Just(History::KeepAll),
        (1..=i32::MAX as usize).prop_map(History::KeepLast),
    ]
}

fn limits() -> impl Strategy<Value = ResourceLimits> {
    let one = || prop::option::of(1..=i32::MAX as usize);
    (one(), one(), one()).prop_map(|(a, b, c)| ResourceLimits {
        max_samples: a,
        max_instances: b,
        max_samples_per_instance: c,
    })
}

fn liveliness() -> impl Strategy<Value = Liveliness> {
    (
        prop_oneof![
            Just(LivelinessKind::Automatic),
            Just(LivelinessKind::ManualByParticipant),
            Just(LivelinessKind::ManualByTopic)
        ],
        opt_duration(),
    )
        .prop_map(|(kind, lease_duration)| Liveliness {
            kind,
            lease_duration,
        })
}

fn reliability() -> impl Strategy<Value = ReliabilityQos> {
    (any::<bool>(), finite_duration()).prop_map(|(r, max_blocking_time)| ReliabilityQos {
        kind: if r {
            Reliability::Reliable
        } else {
            Reliability::BestEffort
        },
        max_blocking_time,
    })
}

fn durability() -> impl Strategy<Value = DurabilityKind> {
    prop_oneof![
        Just(DurabilityKind::Volatile),
        Just(DurabilityKind::TransientLocal),
        Just(DurabilityKind::Transient),
        Just(DurabilityKind::Persistent)
    ]
}

fn representation() -> impl Strategy<Value = Vec<DataRepresentation>> {
    prop::collection::vec(
        prop_oneof![
            Just(DataRepresentation::Xcdr1),
            Just(DataRepresentation::Xml),
            Just(DataRepresentation::Xcdr2)
        ],
        1..4,
    )
}

fn presentation() -> impl Strategy<Value = Presentation> {
    (
        prop_oneof![
            Just(AccessScope::Instance),
            Just(AccessScope::Topic),
            Just(AccessScope::Group)
        ],
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(access_scope, coherent_access, ordered_access)| Presentation {
                access_scope,
                coherent_access,
                ordered_access,
            },
        )
}

fn ownership() -> impl Strategy<Value = OwnershipKind> {
    prop_oneof![Just(OwnershipKind::Shared), Just(OwnershipKind::Exclusive)]
}

fn destination_order() -> impl Strategy<Value = DestinationOrderKind> {
    prop_oneof![
        Just(DestinationOrderKind::ByReceptionTimestamp),
        Just(DestinationOrderKind::BySourceTimestamp)
    ]
}

/// What a random TypeInformation decodes to (usually nothing).
fn typed(raw: &Option<Vec<u8>>) -> Option<tachyon_xtypes::TypeInformation> {
    raw.as_deref().and_then(|b| {
        tachyon_xtypes::TypeInformation::from_bytes(b, tachyon_cdr::Endianness::Little).ok()
    })
}

/// Opaque type information as received: parameter values are 4-aligned.
fn type_information() -> impl Strategy<Value = Option<Vec<u8>>> {
    prop::option::of(bytes(40).prop_map(|mut v| {
        v.truncate(v.len() / 4 * 4);
        v
    }))
}

fn participant() -> impl Strategy<Value = ParticipantData> {
    (
        (
            any::<[u8; 12]>(),
            any::<[u8; 2]>(),
            any::<[u8; 2]>(),
            prop::option::of(any::<u32>()),
            text(),
            any::<bool>(),
        ),
        (locators(), locators(), locators(), locators()),
        (
            any::<u32>(),
            opt_duration(),
            any::<i32>(),
            bytes(20),
            prop::option::of(text()),
            prop::collection::vec((text(), text()), 0..4),
        ),
    )
        .prop_map(|(a, b, c)| ParticipantData {
            guid_prefix: GuidPrefix(a.0),
            protocol_version: ProtocolVersion {
                major: a.1[0],
                minor: a.1[1],
            },
            vendor_id: VendorId(a.2),
            domain_id: a.3,
            domain_tag: a.4,
            expects_inline_qos: a.5,
            metatraffic_unicast: b.0,
            metatraffic_multicast: b.1,
            default_unicast: b.2,
            default_multicast: b.3,
            builtin_endpoints: c.0,
            lease_duration: c.1,
            manual_liveliness_count: c.2,
            user_data: c.3,
            entity_name: c.4,
            properties: c.5,
            product_version: None,
        })
}

fn writer_qos() -> impl Strategy<Value = DataWriterQos> {
    (
        (
            durability(),
            (finite_duration(), history(), limits()),
            opt_duration(),
            finite_duration(),
            liveliness(),
            reliability(),
        ),
        (
            destination_order(),
            history(),
            limits(),
            any::<i32>(),
            opt_duration(),
            bytes(10),
        ),
        (ownership(), any::<i32>(), representation()),
    )
        .prop_map(|(a, b, c)| DataWriterQos {
            durability: a.0,
            durability_service: DurabilityService {
                service_cleanup_delay: a.1 .0,
                history: a.1 .1,
                limits: a.1 .2,
            },
            deadline: a.2,
            latency_budget: a.3,
            liveliness: a.4,
            reliability: a.5,
            destination_order: b.0,
            history: b.1,
            resource_limits: b.2,
            transport_priority: b.3,
            lifespan: b.4,
            user_data: b.5,
            ownership: c.0,
            ownership_strength: c.1,
            autodispose_unregistered_instances: true,
            representation: c.2,
            ignore_local: false,
            batch_delay: None,
        })
}

fn reader_qos() -> impl Strategy<Value = DataReaderQos> {
    (
        (
            durability(),
            opt_duration(),
            finite_duration(),
            liveliness(),
            reliability(),
            destination_order(),
        ),
        (
            history(),
            limits(),
            bytes(10),
            ownership(),
            finite_duration(),
            representation(),
            any::<bool>(),
        ),
    )
        .prop_map(|(a, b)| DataReaderQos {
            durability: a.0,
            deadline: a.1,
            latency_budget: a.2,
            liveliness: a.3,
            reliability: a.4,
            destination_order: a.5,
            history: b.0,
            resource_limits: b.1,
            user_data: b.2,
            ownership: b.3,
            time_based_filter: b.4,
            reader_data_lifecycle: Default::default(),
            representation: b.5,
            type_consistency: if b.6 {
                TypeConsistency::allow()
            } else {
                TypeConsistency::disallow()
            },
            ignore_local: false,
        })
}

fn publication() -> impl Strategy<Value = PublicationData> {
    (
        (
            any_guid(),
            prop::option::of(any_guid()),
            text(),
            text(),
            locators(),
            locators(),
        ),
        writer_qos(),
        (
            presentation(),
            prop::collection::vec(text(), 0..3),
            bytes(10),
            bytes(10),
            type_information(),
            prop::option::of(text()),
        ),
    )
        .prop_map(|(a, qos, c)| PublicationData {
            guid: a.0,
            participant_guid: a.1,
            topic_name: a.2,
            type_name: a.3,
            unicast_locators: a.4,
            multicast_locators: a.5,
            qos: qos.into(),
            presentation: c.0,
            group_entity_id: None,
            partition: c.1,
            group_data: c.2,
            topic_data: c.3,
            type_info: typed(&c.4).map(Into::into),
            type_information: c.4,
            representation_announced: true,
            entity_name: c.5,
        })
}

fn content_filter() -> impl Strategy<Value = Option<ContentFilterProperty>> {
    prop::option::of(
        (
            text(),
            text(),
            text(),
            text(),
            prop::collection::vec(text(), 0..3),
        )
            .prop_map(|(a, b, c, d, e)| ContentFilterProperty {
                content_filtered_topic_name: a,
                related_topic_name: b,
                filter_class_name: c,
                filter_expression: d,
                expression_parameters: e,
            }),
    )
}

fn subscription() -> impl Strategy<Value = SubscriptionData> {
    (
        (
            any_guid(),
            prop::option::of(any_guid()),
            text(),
            text(),
            locators(),
            locators(),
            any::<bool>(),
        ),
        reader_qos(),
        (
            presentation(),
            prop::collection::vec(text(), 0..3),
            bytes(10),
            bytes(10),
            content_filter(),
            type_information(),
            prop::option::of(text()),
        ),
    )
        .prop_map(|(a, qos, c)| SubscriptionData {
            guid: a.0,
            participant_guid: a.1,
            topic_name: a.2,
            type_name: a.3,
            unicast_locators: a.4,
            multicast_locators: a.5,
            expects_inline_qos: a.6,
            qos: qos.into(),
            presentation: c.0,
            partition: c.1,
            group_data: c.2,
            topic_data: c.3,
            content_filter: c.4,
            type_info: typed(&c.5).map(Into::into),
            type_information: c.5,
            representation_announced: true,
            entity_name: c.6,
        })
}

proptest! {
    #[test]
    fn prop_participant_round_trip(p in participant()) {
        let bytes = p.to_payload();
        pids(&bytes);
        prop_assert_eq!(ParticipantData::from_payload(&bytes), Ok(p));
    }

    #[test]
    fn prop_publication_round_trip(p in publication()) {
        let bytes = p.to_payload();
        pids(&bytes);
        prop_assert_eq!(PublicationData::from_payload(&bytes), Ok(p));
    }

    #[test]
    fn prop_subscription_round_trip(s in subscription()) {
        let bytes = s.to_payload();
        pids(&bytes);
        prop_assert_eq!(SubscriptionData::from_payload(&bytes), Ok(s));
    }

    #[test]
    fn prop_participant_message_round_trip(
        prefix in any::<[u8; 12]>(),
        kind in any::<[u8; 4]>(),
        data in bytes(64),
    ) {
        let m = ParticipantMessage { guid_prefix: GuidPrefix(prefix), kind, data };
        prop_assert_eq!(ParticipantMessage::from_payload(&m.to_payload()), Ok(m));
    }

    #[test]
    fn prop_durations_round_trip(d in opt_duration()) {
        prop_assert_eq!(duration_from_wire(duration_to_wire(d)), Ok(d));
    }

    #[test]
    fn prop_random_bytes_never_panic(b in bytes(256)) {
        decode_all(&b);
    }

    #[test]
    fn prop_random_parameter_lists_never_panic(
        params in prop::collection::vec(
            (
                prop_oneof![0u16..0x80, Just(0x4014u16), Just(0x8007u16), any::<u16>()],
                prop::collection::vec(any::<u8>(), 0..40),
            ),
            0..12,
        ),
        big_endian in any::<bool>(),
    ) {
        let mut v = vec![0, if big_endian { 2 } else { 3 }, 0, 0];
        for (pid, mut value) in params {
            value.truncate(value.len() / 4 * 4);
            let (p, l) = if big_endian {
                (pid.to_be_bytes(), (value.len() as u16).to_be_bytes())
            } else {
                (pid.to_le_bytes(), (value.len() as u16).to_le_bytes())
            };
            if pid == 1 {
                continue;
            }
            v.extend_from_slice(&p);
            v.extend_from_slice(&l);
            v.extend_from_slice(&value);
        }
        v.extend_from_slice(if big_endian { &[0, 1, 0, 0] } else { &[1, 0, 0, 0] });
        decode_all(&v);
    }
}
