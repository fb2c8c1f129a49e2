//! Property tests: repr → emit → parse gives the same repr; arbitrary and mutated bytes never
//! panic, and whatever parses re-emits byte for byte (checked inside the fuzz entry points).

use proptest::prelude::*;
use tachyon_wire::parameter::{payload::Encapsulation, pid, ContentFilterProperty};
use tachyon_wire::parameter::{
    DurabilityServiceQos, HistoryQos, LivelinessQos, PresentationQos, ReliabilityQos,
    ResourceLimitsQos,
};
use tachyon_wire::submessage::{id, GapGroupInfo, HeartbeatGroupInfo};
use tachyon_wire::*;

fn entity_id() -> impl Strategy<Value = EntityId> {
    any::<[u8; 4]>().prop_map(EntityId)
}

fn sn() -> impl Strategy<Value = SequenceNumber> {
    any::<i64>().prop_map(SequenceNumber)
}

fn guid() -> impl Strategy<Value = Guid> {
    (any::<[u8; 12]>(), entity_id()).prop_map(|(p, e)| Guid::new(GuidPrefix(p), e))
}

fn duration() -> impl Strategy<Value = Duration> {
    (any::<i32>(), any::<u32>()).prop_map(|(seconds, fraction)| Duration { seconds, fraction })
}

fn locator() -> impl Strategy<Value = Locator> {
    (any::<i32>(), any::<u32>(), any::<[u8; 16]>()).prop_map(|(kind, port, address)| Locator {
        kind,
        port,
        address,
    })
}

fn bitmap(num_bits: u32, words: [u32; 8]) -> [u32; 8] {
    let mut b = [0u32; 8];
    let n = num_bits.div_ceil(32) as usize;
    b[..n].copy_from_slice(&words[..n]);
    b
}

fn sn_set() -> impl Strategy<Value = SequenceNumberSet> {
    (sn(), 0..=256u32, any::<[u32; 8]>()).prop_map(|(base, num_bits, w)| SequenceNumberSet {
        base,
        num_bits,
        bitmap: bitmap(num_bits, w),
    })
}

fn frag_set() -> impl Strategy<Value = FragmentNumberSet> {
    (any::<u32>(), 0..=256u32, any::<[u32; 8]>()).prop_map(|(base, num_bits, w)| {
        FragmentNumberSet {
            base: FragmentNumber(base),
            num_bits,
            bitmap: bitmap(num_bits, w),
        }
    })
}

fn text() -> impl Strategy<Value = String> {
    "[a-zA-Z0-9_:. ]{0,12}"
}

fn bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..max)
}

fn aligned_bytes(max_words: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<[u8; 4]>(), 0..max_words).prop_map(|w| w.concat())
}

fn limits() -> impl Strategy<Value = ResourceLimitsQos> {
    any::<(i32, i32, i32)>().prop_map(|(a, b, c)| ResourceLimitsQos {
        max_samples: a,
        max_instances: b,
        max_samples_per_instance: c,
    })
}

/// A parameter whose PID and value type agree, zero-padded to 4 bytes.
fn parameter() -> impl Strategy<Value = Parameter> {
    use ParameterValue as V;
    let typed = prop_oneof![
        text().prop_map(|s| (pid::TOPIC_NAME, V::String(s))),
        prop::collection::vec(text(), 0..3).prop_map(|v| (pid::PARTITION, V::StringSeq(v))),
        bytes(9).prop_map(|b| (pid::USER_DATA, V::OctetSeq(b))),
        any::<u32>().prop_map(|x| (pid::DOMAIN_ID, V::U32(x))),
        any::<i32>().prop_map(|x| (pid::OWNERSHIP_STRENGTH, V::I32(x))),
        any::<bool>().prop_map(|x| (pid::EXPECTS_INLINE_QOS, V::Bool(x))),
        duration().prop_map(|d| (pid::DEADLINE, V::Duration(d))),
        locator().prop_map(|l| (pid::METATRAFFIC_UNICAST_LOCATOR, V::Locator(l))),
        guid().prop_map(|g| (pid::ENDPOINT_GUID, V::Guid(g))),
        entity_id().prop_map(|e| (pid::GROUP_ENTITYID, V::EntityId(e))),
        any::<[u8; 16]>().prop_map(|k| (pid::KEY_HASH, V::KeyHash(k))),
        any::<[u8; 4]>().prop_map(|s| (pid::STATUS_INFO, V::StatusInfo(s))),
        any::<(u8, u8)>().prop_map(|(major, minor)| (
            pid::PROTOCOL_VERSION,
            V::ProtocolVersion(ProtocolVersion { major, minor })
        )),
        any::<[u8; 2]>().prop_map(|v| (pid::VENDOR_ID, V::VendorId(VendorId(v)))),
        sn().prop_map(|s| (pid::COHERENT_SET, V::SequenceNumber(s))),
        (any::<u32>(), duration()).prop_map(|(kind, max_blocking_time)| (
            pid::RELIABILITY,
            V::Reliability(ReliabilityQos {
                kind,
                max_blocking_time
            })
        )),
        (any::<u32>(), duration()).prop_map(|(kind, lease_duration)| (
            pid::LIVELINESS,
            V::Liveliness(LivelinessQos {
                kind,
                lease_duration
            })
        )),
        any::<(u32, i32)>()
            .prop_map(|(kind, depth)| (pid::HISTORY, V::History(HistoryQos { kind, depth }))),
        limits().prop_map(|l| (pid::RESOURCE_LIMITS, V::ResourceLimits(l))),
        (duration(), any::<(u32, i32)>(), limits()).prop_map(|(d, (k, depth), l)| (
            pid::DURABILITY_SERVICE,
            V::DurabilityService(DurabilityServiceQos {
                service_cleanup_delay: d,
                history_kind: k,
                history_depth: depth,
                limits: l
            })
        )),
        any::<(u32, bool, bool)>().prop_map(|(s, c, o)| (
            pid::PRESENTATION,
            V::Presentation(PresentationQos {
                access_scope: s,
                coherent_access: c,
                ordered_access: o
            })
        )),
        prop::collection::vec(any::<i16>(), 0..4)
            .prop_map(|v| (pid::DATA_REPRESENTATION, V::DataRepresentation(v))),
        (any::<u16>(), proptest::option::of(any::<[u8; 5]>())).prop_map(|(kind, options)| (
            pid::TYPE_CONSISTENCY_ENFORCEMENT,
            V::TypeConsistency { kind, options }
        )),
        (
            text(),
            text(),
            text(),
            text(),
            prop::collection::vec(text(), 0..3)
        )
            .prop_map(|(a, b, c, d, e)| (
                pid::CONTENT_FILTER_PROPERTY,
                V::ContentFilterProperty(ContentFilterProperty {
                    content_filtered_topic_name: a,
                    related_topic_name: b,
                    filter_class_name: c,
                    filter_expression: d,
                    expression_parameters: e
                })
            )),
        (guid(), sn()).prop_map(|(g, s)| (pid::ORIGINAL_WRITER_INFO, V::OriginalWriterInfo(g, s))),
        prop::collection::vec((text(), text()), 0..3)
            .prop_map(|p| (pid::PROPERTY_LIST, V::PropertyList(p))),
        (0x8000u16..=0xffff, aligned_bytes(4)).prop_map(|(p, b)| (p, V::Opaque(b))),
        aligned_bytes(2).prop_map(|b| (pid::PAD, V::Opaque(b))),
    ];
    typed.prop_map(|(p, v)| Parameter::new(p, v))
}

fn parameter_list() -> impl Strategy<Value = ParameterList> {
    (prop::collection::vec(parameter(), 0..6), any::<u16>()).prop_map(|(parameters, s)| {
        ParameterList {
            parameters,
            sentinel_length: s,
        }
    })
}

fn data() -> impl Strategy<Value = Data> {
    (
        any::<u16>(),
        entity_id(),
        entity_id(),
        sn(),
        aligned_bytes(2),
        prop::option::of(parameter_list()),
        prop_oneof![
            Just(DataPayload::None),
            bytes(40).prop_map(DataPayload::Data),
            bytes(40).prop_map(DataPayload::Key),
        ],
        any::<bool>(),
    )
        .prop_map(|(x, r, w, s, gap, q, payload, n)| Data {
            extra_flags: x,
            reader_id: r,
            writer_id: w,
            writer_sn: s,
            gap,
            inline_qos: q,
            payload,
            non_standard_payload: n,
        })
}

fn data_frag() -> impl Strategy<Value = DataFrag> {
    (
        (any::<u16>(), entity_id(), entity_id(), sn()),
        any::<(u32, u16, u16, u32)>(),
        aligned_bytes(2),
        prop::option::of(parameter_list()),
        any::<(bool, bool)>(),
        bytes(40),
    )
        .prop_map(
            |((x, r, w, s), (start, n, size, total), gap, q, (k, ns), p)| DataFrag {
                extra_flags: x,
                reader_id: r,
                writer_id: w,
                writer_sn: s,
                fragment_starting_num: FragmentNumber(start),
                fragments_in_submessage: n,
                fragment_size: size,
                sample_size: total,
                gap,
                inline_qos: q,
                key: k,
                non_standard_payload: ns,
                payload: p,
            },
        )
}

fn body() -> impl Strategy<Value = SubmessageBody> {
    use SubmessageBody as B;
    let ids = || (entity_id(), entity_id());
    prop_oneof![
        data().prop_map(B::Data),
        data_frag().prop_map(B::DataFrag),
        (
            ids(),
            sn(),
            sn(),
            any::<i32>(),
            any::<(bool, bool)>(),
            prop::option::of((sn(), sn(), sn(), any::<[u8; 4]>(), any::<[u8; 4]>()))
        )
            .prop_map(|((r, w), f, l, c, (fin, liv), g)| B::Heartbeat(Heartbeat {
                reader_id: r,
                writer_id: w,
                first_sn: f,
                last_sn: l,
                count: Count(c),
                is_final: fin,
                liveliness: liv,
                group_info: g.map(|(a, b, c, d, e)| HeartbeatGroupInfo {
                    current_gsn: a,
                    first_gsn: b,
                    last_gsn: c,
                    writer_set: d,
                    secure_writer_set: e
                }),
            })),
        (ids(), sn(), any::<u32>(), any::<i32>()).prop_map(|((r, w), s, l, c)| {
            B::HeartbeatFrag(HeartbeatFrag {
                reader_id: r,
                writer_id: w,
                writer_sn: s,
                last_fragment_num: FragmentNumber(l),
                count: Count(c),
            })
        }),
        (ids(), sn_set(), any::<i32>(), any::<bool>()).prop_map(|((r, w), s, c, f)| {
            B::AckNack(AckNack {
                reader_id: r,
                writer_id: w,
                reader_sn_state: s,
                count: Count(c),
                is_final: f,
            })
        }),
        (ids(), sn(), frag_set(), any::<i32>()).prop_map(|((r, w), s, set, c)| {
            B::NackFrag(NackFrag {
                reader_id: r,
                writer_id: w,
                writer_sn: s,
                fragment_number_state: set,
                count: Count(c),
            })
        }),
        (ids(), sn(), sn_set(), prop::option::of((sn(), sn()))).prop_map(|((r, w), s, l, g)| {
            B::Gap(Gap {
                reader_id: r,
                writer_id: w,
                gap_start: s,
                gap_list: l,
                group_info: g.map(|(a, b)| GapGroupInfo {
                    gap_start_gsn: a,
                    gap_end_gsn: b,
                }),
            })
        }),
        prop::option::of(any::<(i32, u32)>()).prop_map(|t| B::InfoTs(InfoTs {
            timestamp: t.map(|(seconds, fraction)| Time { seconds, fraction })
        })),
        (
            any::<u32>(),
            any::<(u8, u8)>(),
            any::<[u8; 2]>(),
            any::<[u8; 12]>()
        )
            .prop_map(|(u, (major, minor), v, p)| B::InfoSrc(InfoSrc {
                unused: u,
                protocol_version: ProtocolVersion { major, minor },
                vendor_id: VendorId(v),
                guid_prefix: GuidPrefix(p),
            })),
        any::<[u8; 12]>().prop_map(|p| B::InfoDst(InfoDst {
            guid_prefix: GuidPrefix(p)
        })),
        (
            prop::collection::vec(locator(), 0..3),
            prop::option::of(prop::collection::vec(locator(), 0..3))
        )
            .prop_map(|(u, m)| B::InfoReply(InfoReply {
                unicast_locators: u,
                multicast_locators: m
            })),
        (any::<(u32, u32)>(), prop::option::of(any::<(u32, u32)>())).prop_map(|(u, m)| {
            let l = |(address, port)| LocatorUdpV4 { address, port };
            B::InfoReplyIp4(InfoReplyIp4 {
                unicast_locator: l(u),
                multicast_locator: m.map(l),
            })
        }),
        Just(B::Pad(Pad)),
        any::<u8>()
            .prop_filter("unknown id", |i| id::name(*i) == "UNKNOWN" || *i >= 0x80)
            .prop_map(|i| B::Unknown(Unknown { id: i })),
    ]
}

fn submessage() -> impl Strategy<Value = Submessage> {
    (body(), any::<bool>(), any::<u8>(), bytes(12), any::<bool>()).prop_map(
        |(body, le, flags, trailing, to_end)| {
            let sid = body.id();
            let payload_to_end = match &body {
                SubmessageBody::Data(d) => !matches!(d.payload, DataPayload::None),
                SubmessageBody::DataFrag(_) => true,
                _ => false,
            };
            Submessage {
                endian: if le { Endian::Little } else { Endian::Big },
                unknown_flags: flags & !(0x01 | SubmessageBody::known_flags(sid)),
                body,
                trailing: if payload_to_end { Vec::new() } else { trailing },
                extends_to_end: to_end,
            }
        },
    )
}

fn message() -> impl Strategy<Value = Message> {
    (
        any::<(u8, u8)>(),
        any::<[u8; 2]>(),
        any::<[u8; 12]>(),
        prop::collection::vec(submessage(), 0..6),
    )
        .prop_map(|((major, minor), v, p, mut subs)| {
            let last = subs.len().saturating_sub(1);
            for (i, s) in subs.iter_mut().enumerate() {
                let zero_is_length = matches!(s.id(), id::PAD | id::INFO_TS);
                if i != last || zero_is_length {
                    s.extends_to_end = false;
                }
                // An empty body (only possible for unknown kinds here) reads back as
                // "extends to the end": give it a byte unless it is last, then mark it.
                if s.body_len() == 0 && !zero_is_length {
                    if i == last {
                        s.extends_to_end = true;
                    } else {
                        s.trailing.push(0xab);
                    }
                }
            }
            Message {
                header: Header {
                    protocol_version: ProtocolVersion { major, minor },
                    vendor_id: VendorId(v),
                    guid_prefix: GuidPrefix(p),
                },
                submessages: subs,
            }
        })
}

proptest! {
    // 512 cases by default; PROPTEST_CASES overrides for longer runs.
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(512),
        ..ProptestConfig::default()
    })]

    #[test]
    fn message_repr_round_trips(msg in message()) {
        let bytes = msg.to_bytes().unwrap();
        prop_assert_eq!(bytes.len(), msg.buffer_len());
        let parsed = Message::parse(&bytes).unwrap();
        prop_assert_eq!(&parsed, &msg);
        prop_assert!(!parsed.to_string().is_empty());
        fuzz_parse_message(&bytes);
    }

    #[test]
    fn parameter_list_payload_round_trips(list in parameter_list(), le in any::<bool>(), trailing in bytes(4)) {
        let p = ParameterListPayload {
            encapsulation: Encapsulation { kind: if le { 3 } else { 2 }, options: [0, 0] },
            list,
            trailing,
        };
        let mut out = vec![0; p.buffer_len()];
        prop_assert_eq!(p.emit(&mut out).unwrap(), out.len());
        prop_assert_eq!(ParameterListPayload::parse_bytes(&out).unwrap(), p);
        fuzz_parse_parameter_list(&out);
    }

    #[test]
    fn arbitrary_bytes_never_panic(data in bytes(200)) {
        fuzz_parse_message(&data);
        fuzz_parse_parameter_list(&data);
        let mut rtps = b"RTPS".to_vec();
        rtps.extend_from_slice(&data);
        fuzz_parse_message(&rtps);
        let mut pl = vec![0, 3, 0, 0];
        pl.extend_from_slice(&data);
        fuzz_parse_parameter_list(&pl);
    }

    #[test]
    fn mutated_messages_never_panic(
        msg in message(),
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..6),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = msg.to_bytes().unwrap();
        for (at, v) in edits {
            let i = at.index(bytes.len());
            bytes[i] = v;
        }
        fuzz_parse_message(&bytes);
        fuzz_parse_message(&bytes[..cut.index(bytes.len() + 1)]);
    }
}
