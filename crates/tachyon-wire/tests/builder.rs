//! The send-path builder writes submessages that parse back to the same fields, re-emit
//! byte-exactly, and never leave a half-written submessage behind.

use tachyon_wire::{
    Count, DataFragSpec, DataSpec, EntityId, FragmentNumber, FragmentNumberSet, GuidPrefix, Header,
    InlineQos, MessageBuilder, MessageView, PayloadKind, PlainData, ProtocolVersion,
    SequenceNumber, SequenceNumberSet, SubmessageView, Time, VendorId,
};

fn header() -> Header {
    Header {
        protocol_version: ProtocolVersion::V2_5,
        vendor_id: VendorId::TACHYON,
        guid_prefix: GuidPrefix([7; 12]),
    }
}

const W: EntityId = EntityId([0, 0, 1, 0x03]);
const R: EntityId = EntityId([0, 0, 1, 0x04]);

#[test]
fn every_submessage_round_trips() {
    let mut buf = vec![0u8; 4096];
    let mut b = MessageBuilder::new(&mut buf, &header()).unwrap();
    assert!(b.is_empty());
    let ts = Time {
        seconds: 12,
        fraction: 34,
    };
    b.info_ts(Some(ts)).unwrap();
    b.info_dst(GuidPrefix([9; 12])).unwrap();
    let qos = InlineQos::new(Some([5; 16]), Some(InlineQos::DISPOSED));
    let payload = [0x00, 0x01, 0x00, 0x00, 1, 2, 3, 4, 5]; // odd length: padded
    b.data(&DataSpec {
        reader_id: EntityId::UNKNOWN,
        writer_id: W,
        writer_sn: SequenceNumber::from_parts(0, 3),
        inline_qos: Some(qos.as_bytes()),
        kind: PayloadKind::Data,
        payload: &payload,
    })
    .unwrap();
    let frags: Vec<u8> = (0..250u8).collect();
    b.data_frag(&DataFragSpec {
        reader_id: R,
        writer_id: W,
        writer_sn: SequenceNumber::from_parts(0, 4),
        fragment_starting_num: 3,
        fragment_size: 100,
        sample_size: 1000,
        inline_qos: None,
        key: false,
        fragments: &frags,
    })
    .unwrap();
    b.heartbeat(
        R,
        W,
        SequenceNumber::from_parts(0, 1),
        SequenceNumber::from_parts(0, 4),
        Count(9),
        true,
        false,
    )
    .unwrap();
    let mut set = SequenceNumberSet::empty(SequenceNumber::from_parts(0, 2));
    set.insert(SequenceNumber::from_parts(0, 4));
    b.acknack(R, W, &set, Count(2), false).unwrap();
    b.gap(R, W, SequenceNumber::from_parts(0, 1), &set).unwrap();
    let mut missing = FragmentNumberSet::empty(FragmentNumber(2));
    missing.insert(FragmentNumber(5));
    b.nack_frag(R, W, SequenceNumber::from_parts(0, 4), &missing, Count(1))
        .unwrap();
    b.heartbeat_frag(
        R,
        W,
        SequenceNumber::from_parts(0, 4),
        FragmentNumber(10),
        Count(3),
    )
    .unwrap();
    b.info_ts(None).unwrap();
    let len = b.finish();

    let bytes = &buf[..len];
    tachyon_wire::fuzz_parse_message(bytes); // parses, prints, re-emits byte for byte
    let view = MessageView::new_checked(bytes).unwrap();
    assert_eq!(view.header().guid_prefix(), GuidPrefix([7; 12]));
    let subs: Vec<_> = view.submessages().map(Result::unwrap).collect();
    assert_eq!(subs.len(), 10);
    match &subs[0] {
        SubmessageView::InfoTs(t) => assert_eq!(t.timestamp(), Some(ts)),
        other => panic!("{other:?}"),
    }
    match &subs[1] {
        SubmessageView::InfoDst(d) => assert_eq!(d.guid_prefix(), GuidPrefix([9; 12])),
        other => panic!("{other:?}"),
    }
    match &subs[2] {
        SubmessageView::Data(d) => {
            assert_eq!(d.writer_id(), W);
            assert_eq!(d.writer_sn(), SequenceNumber::from_parts(0, 3));
            // The payload is followed by submessage padding, as on the wire.
            assert!(d.serialized_payload().unwrap().starts_with(&payload));
            let q = d.inline_qos().unwrap();
            assert_eq!(q.get(0x0070), Some(&[5u8; 16][..]));
            assert_eq!(q.get(0x0071), Some(&1u32.to_be_bytes()[..]));
        }
        other => panic!("{other:?}"),
    }
    match &subs[3] {
        SubmessageView::DataFrag(d) => {
            assert_eq!(d.fragment_starting_num(), FragmentNumber(3));
            assert_eq!(d.fragments_in_submessage(), 3);
            assert_eq!(d.fragment_size(), 100);
            assert_eq!(d.sample_size(), 1000);
            assert!(d.payload().starts_with(&frags));
        }
        other => panic!("{other:?}"),
    }
    match &subs[4] {
        SubmessageView::Heartbeat(h) => {
            assert_eq!(h.last_sn(), SequenceNumber::from_parts(0, 4));
            assert!(h.is_final() && !h.liveliness());
            assert_eq!(h.count(), Count(9));
        }
        other => panic!("{other:?}"),
    }
    match &subs[5] {
        SubmessageView::AckNack(a) => assert_eq!(a.reader_sn_state(), set),
        other => panic!("{other:?}"),
    }
    match &subs[6] {
        SubmessageView::Gap(g) => assert_eq!(g.gap_list(), set),
        other => panic!("{other:?}"),
    }
    match &subs[7] {
        SubmessageView::NackFrag(n) => assert_eq!(n.fragment_number_state(), missing),
        other => panic!("{other:?}"),
    }
    match &subs[8] {
        SubmessageView::HeartbeatFrag(h) => assert_eq!(h.last_fragment_num(), FragmentNumber(10)),
        other => panic!("{other:?}"),
    }
    match &subs[9] {
        SubmessageView::InfoTs(t) => assert_eq!(t.timestamp(), None),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_submessage_that_does_not_fit_leaves_the_message_unchanged() {
    let payload = vec![0u8; 100];
    for size in 20..200 {
        let mut buf = vec![0u8; size];
        let mut b = MessageBuilder::new(&mut buf, &header()).unwrap();
        let before = b.len();
        let r = b.data(&DataSpec {
            reader_id: R,
            writer_id: W,
            writer_sn: SequenceNumber::from_parts(0, 1),
            inline_qos: None,
            kind: PayloadKind::Data,
            payload: &payload,
        });
        if r.is_err() {
            assert_eq!(b.len(), before, "size {size}");
        } else {
            assert_eq!(b.len(), before + 4 + 20 + 100);
        }
        let len = b.finish();
        let _ = MessageView::new_checked(&buf[..len]).unwrap();
    }
    assert!(MessageBuilder::new(&mut [0u8; 10], &header()).is_err());
}

mod fixed_layouts {
    //! INFO_TS, DATA and HEARTBEAT are laid out by hand (one copy of their fixed fields):
    //! for any field values they parse back to those values and re-emit byte for byte
    //! through the independent encoder of the parsed forms.
    use super::*;
    use proptest::prelude::*;

    fn entity() -> impl Strategy<Value = EntityId> {
        any::<[u8; 4]>().prop_map(EntityId)
    }

    fn sn() -> impl Strategy<Value = SequenceNumber> {
        (any::<i32>(), any::<u32>()).prop_map(|(h, l)| SequenceNumber::from_parts(h, l))
    }

    proptest! {
        #[test]
        fn info_ts_data_heartbeat_round_trip(
            (reader, writer) in (entity(), entity()),
            (data_sn, first, last) in (sn(), sn(), sn()),
            (seconds, fraction, count) in (any::<i32>(), any::<u32>(), any::<i32>()),
            (with_ts, with_qos, key) in (any::<bool>(), any::<bool>(), any::<bool>()),
            (fin, live) in (any::<bool>(), any::<bool>()),
            payload in proptest::collection::vec(any::<u8>(), 0..40),
        ) {
            let mut buf = vec![0u8; 1024];
            let mut b = MessageBuilder::new(&mut buf, &header()).unwrap();
            let ts = Time { seconds, fraction };
            b.info_ts(with_ts.then_some(ts)).unwrap();
            let qos = InlineQos::new(Some([3; 16]), None);
            let kind = match (payload.is_empty(), key) {
                (true, _) => PayloadKind::None,
                (false, true) => PayloadKind::Key,
                (false, false) => PayloadKind::Data,
            };
            b.data(&DataSpec {
                reader_id: reader,
                writer_id: writer,
                writer_sn: data_sn,
                inline_qos: with_qos.then(|| qos.as_bytes()),
                kind,
                payload: &payload,
            })
            .unwrap();
            b.heartbeat(reader, writer, first, last, Count(count), fin, live).unwrap();
            let len = b.finish();
            let bytes = &buf[..len];
            // Parses, and the parsed form re-emits these very bytes.
            tachyon_wire::fuzz_parse_message(bytes);
            let view = MessageView::new_checked(bytes).unwrap();
            let subs: Vec<_> = view.submessages().map(Result::unwrap).collect();
            prop_assert_eq!(subs.len(), 3);
            match &subs[0] {
                SubmessageView::InfoTs(t) => prop_assert_eq!(t.timestamp(), with_ts.then_some(ts)),
                other => prop_assert!(false, "{:?}", other),
            }
            match &subs[1] {
                SubmessageView::Data(d) => {
                    prop_assert_eq!((d.reader_id(), d.writer_id()), (reader, writer));
                    prop_assert_eq!(d.writer_sn(), data_sn);
                    prop_assert_eq!(d.octets_to_inline_qos(), 16);
                    prop_assert_eq!(d.inline_qos().is_some(), with_qos);
                    prop_assert_eq!(d.is_key(), kind == PayloadKind::Key);
                    let p = d.serialized_payload().unwrap_or_default();
                    prop_assert!(p.starts_with(&payload) && p.len() - payload.len() < 4);
                }
                other => prop_assert!(false, "{:?}", other),
            }
            match &subs[2] {
                SubmessageView::Heartbeat(h) => {
                    prop_assert_eq!((h.reader_id(), h.writer_id()), (reader, writer));
                    prop_assert_eq!((h.first_sn(), h.last_sn()), (first, last));
                    prop_assert_eq!(h.count(), Count(count));
                    prop_assert_eq!((h.is_final(), h.liveliness()), (fin, live));
                }
                other => prop_assert!(false, "{:?}", other),
            }
        }

        /// The steady stream's DATA written in one step is what the general calls write,
        /// byte for byte; where it does not fit, it writes nothing.
        #[test]
        fn info_ts_and_data_is_info_ts_then_data(
            (reader, writer, writer_sn) in (entity(), entity(), sn()),
            (seconds, fraction) in (any::<i32>(), any::<u32>()),
            key_hash in proptest::option::of(any::<[u8; 16]>()),
            payload in proptest::collection::vec(any::<u8>(), 0..80),
            size in 20usize..200,
        ) {
            let time = Time { seconds, fraction };
            let mut general = vec![0u8; 1024];
            let mut b = MessageBuilder::new(&mut general, &header()).unwrap();
            b.info_ts(Some(time)).unwrap();
            let qos = key_hash.map(|k| InlineQos::new(Some(k), None));
            b.data(&DataSpec {
                reader_id: reader,
                writer_id: writer,
                writer_sn,
                inline_qos: qos.as_ref().map(|q| q.as_bytes()),
                kind: PayloadKind::Data,
                payload: &payload,
            })
            .unwrap();
            let general_len = b.finish();
            let plain = PlainData {
                time,
                reader_id: reader,
                writer_id: writer,
                writer_sn,
                key_hash: key_hash.as_ref(),
                payload: &payload,
            };
            let mut fused = vec![0xeeu8; 1024];
            let mut b = MessageBuilder::new(&mut fused, &header()).unwrap();
            b.info_ts_and_data(&plain).unwrap();
            let fused_len = b.finish();
            prop_assert_eq!(&fused[..fused_len], &general[..general_len]);
            // Too small a buffer: an error, and nothing after the header.
            let mut small = vec![0u8; size];
            let mut b = MessageBuilder::new(&mut small, &header()).unwrap();
            let fits = b.info_ts_and_data(&plain).is_ok();
            let len = b.finish();
            prop_assert_eq!(fits, size >= general_len);
            prop_assert_eq!(len, if fits { general_len } else { 20 });
        }
    }
}
