//! Hand-written byte vectors (RTPS 2.5 chapter 9 layouts) in both byte orders, and malformed
//! inputs that must be rejected with a typed error, never a panic.

use tachyon_wire::parameter::pid;
use tachyon_wire::submessage::id;
use tachyon_wire::{
    fuzz_parse_message, fuzz_parse_parameter_list, Count, DataPayload, EmitError, Endian, EntityId,
    Message, MessageView, ParameterError, ParameterListPayload, ParameterValue, SequenceNumber,
    SubmessageBody, SubmessageView, Time, VendorId, WireError,
};

const PREFIX: [u8; 12] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];

fn msg(subs: &[&[u8]]) -> Vec<u8> {
    let mut m = b"RTPS\x02\x05\x01\x10".to_vec();
    m.extend_from_slice(&PREFIX);
    for s in subs {
        m.extend_from_slice(s);
    }
    m
}

/// Parses, checks exact re-emission and returns the single submessage's body.
fn round_trip(bytes: &[u8]) -> Message {
    let m = Message::parse(bytes).unwrap_or_else(|e| panic!("parse failed: {e}"));
    assert_eq!(m.to_bytes().unwrap(), bytes, "re-emission differs");
    assert_eq!(m.buffer_len(), bytes.len());
    fuzz_parse_message(bytes);
    m
}

fn only(m: &Message) -> &SubmessageBody {
    assert_eq!(m.submessages.len(), 1);
    &m.submessages[0].body
}

const DATA_LE: &[u8] = &[
    0x15, 0x05, 28, 0, // DATA, E|D, octetsToNextHeader 28
    0, 0, 16, 0, // extraFlags, octetsToInlineQos = 16
    0, 0, 0, 0, // readerId UNKNOWN
    0, 0, 1, 2, // writerId
    0, 0, 0, 0, 5, 0, 0, 0, // writerSN = 5
    0, 1, 0, 0, 42, 0, 0, 0, // payload: CDR_LE + u32 42
];

const DATA_BE: &[u8] = &[
    0x15, 0x04, 0, 28, // DATA, D, big endian
    0, 0, 0, 16, // extraFlags, octetsToInlineQos
    0, 0, 0, 0, 0, 0, 1, 2, // readerId, writerId
    0, 0, 0, 0, 0, 0, 0, 5, // writerSN = 5
    0, 0, 0, 0, 0, 0, 0, 42, // payload: CDR_BE + u32 42
];

#[test]
fn data_both_endiannesses() {
    for (bytes, endian) in [(DATA_LE, Endian::Little), (DATA_BE, Endian::Big)] {
        let m = round_trip(&msg(&[bytes]));
        assert_eq!(m.header.vendor_id, VendorId::CYCLONE_DDS);
        assert_eq!(m.submessages[0].endian, endian);
        let SubmessageBody::Data(d) = only(&m) else {
            panic!("not DATA")
        };
        assert_eq!(d.writer_id, EntityId([0, 0, 1, 2]));
        assert_eq!(d.reader_id, EntityId::UNKNOWN);
        assert_eq!(d.writer_sn, SequenceNumber(5));
        assert!(d.inline_qos.is_none());
        assert_eq!(d.payload_bytes().map(<[u8]>::len), Some(8));
        let text = m.to_string();
        assert!(
            text.contains("DATA writer=0x00000102 reader=0x00000000 sn=5 payload=8B"),
            "{text}"
        );
    }
}

#[test]
fn data_with_inline_qos_and_view() {
    let sub: Vec<u8> = [
        &[0x15, 0x07, 56, 0][..], // E|Q|D
        &[0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 7, 0, 0, 0],
        &[0x70, 0, 16, 0],
        &[0xaa; 16],
        &[0x71, 0, 4, 0, 0, 0, 0, 1], // STATUS_INFO = DISPOSED
        &[0x01, 0, 0, 0],             // sentinel
        &[0, 1, 0, 0],                // payload
    ]
    .concat();
    let bytes = msg(&[&sub]);
    let m = round_trip(&bytes);
    let text = m.to_string();
    assert!(text.contains("[inline qos: KEY_HASH=aaaa"), "{text}");
    assert!(text.contains("STATUS_INFO=DISPOSED] payload=4B"), "{text}");

    let view = MessageView::new_checked(&bytes).unwrap();
    let Some(Ok(SubmessageView::Data(d))) = view.submessages().next() else {
        panic!("no DATA view")
    };
    let qos = d.inline_qos().unwrap();
    assert_eq!(qos.get(pid::STATUS_INFO), Some(&[0, 0, 0, 1][..]));
    assert_eq!(qos.iter().count(), 2);
    assert_eq!(d.serialized_payload(), Some(&[0, 1, 0, 0][..]));
    // Zero-copy: the payload borrows from the input.
    let p = d.serialized_payload().unwrap();
    assert!(std::ptr::eq(p.as_ptr(), bytes[bytes.len() - 4..].as_ptr()));
}

#[test]
fn data_keeps_gap_after_octets_to_inline_qos() {
    let sub: Vec<u8> = [
        &[0x15, 0x05, 28, 0][..],
        &[0, 0, 20, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0, 0],
        &[0xde, 0xad, 0xbe, 0xef], // 4 bytes skipped by octetsToInlineQos = 20
        &[0, 1, 0, 0],
    ]
    .concat();
    let m = round_trip(&msg(&[&sub]));
    let SubmessageBody::Data(d) = only(&m) else {
        panic!()
    };
    assert_eq!(d.gap, vec![0xde, 0xad, 0xbe, 0xef]);
    assert_eq!(d.payload, DataPayload::Data(vec![0, 1, 0, 0]));
}

const HEARTBEAT_LE: &[u8] = &[
    0x07, 0x03, 28, 0, // HEARTBEAT, E|F
    0, 0, 0, 0, 0, 0, 1, 2, // reader, writer
    0, 0, 0, 0, 1, 0, 0, 0, // firstSN 1
    0, 0, 0, 0, 5, 0, 0, 0, // lastSN 5
    7, 0, 0, 0, // count
];
const HEARTBEAT_BE: &[u8] = &[
    0x07, 0x06, 0, 28, // HEARTBEAT, F|L, big endian
    0, 0, 0, 0, 0, 0, 1, 2, //
    0, 0, 0, 0, 0, 0, 0, 1, //
    0, 0, 0, 1, 0, 0, 0, 5, // lastSN = 2^32 + 5
    0, 0, 0, 7,
];

#[test]
fn heartbeat_both_endiannesses() {
    let m = round_trip(&msg(&[HEARTBEAT_LE]));
    let SubmessageBody::Heartbeat(h) = only(&m) else {
        panic!()
    };
    assert_eq!((h.first_sn.0, h.last_sn.0, h.count), (1, 5, Count(7)));
    assert!(h.is_final && !h.liveliness);
    assert!(m
        .to_string()
        .contains("HEARTBEAT writer=0x00000102 reader=0x00000000 first=1 last=5 count=7 F"));

    let m = round_trip(&msg(&[HEARTBEAT_BE]));
    let SubmessageBody::Heartbeat(h) = only(&m) else {
        panic!()
    };
    assert_eq!(h.last_sn, SequenceNumber::from_parts(1, 5));
    assert!(h.is_final && h.liveliness);
}

#[test]
fn acknack_both_endiannesses() {
    let le: &[u8] = &[
        0x06, 0x03, 28, 0, 0, 0, 1, 7, 0, 0, 1, 2, // ACKNACK E|F, reader, writer
        0, 0, 0, 0, 3, 0, 0, 0, 10, 0, 0, 0, // base 3, numBits 10
        0, 0, 0, 0xa0, // bitmap: bits 0 and 2
        2, 0, 0, 0, // count
    ];
    let be: &[u8] = &[
        0x06, 0x02, 0, 28, 0, 0, 1, 7, 0, 0, 1, 2, //
        0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 10, //
        0xa0, 0, 0, 0, //
        0, 0, 0, 2,
    ];
    for bytes in [le, be] {
        let m = round_trip(&msg(&[bytes]));
        let SubmessageBody::AckNack(a) = only(&m) else {
            panic!()
        };
        let missing: Vec<i64> = a.reader_sn_state.iter().map(|s| s.0).collect();
        assert_eq!(missing, vec![3, 5]);
        assert_eq!(a.count, Count(2));
        assert!(a.is_final);
        assert!(m.to_string().contains("state=3/10:[3 5] count=2 F"));
    }
}

#[test]
fn gap_both_endiannesses() {
    let le: &[u8] = &[
        0x08, 0x01, 28, 0, 0, 0, 0, 0, 0, 0, 1, 2, // GAP
        0, 0, 0, 0, 3, 0, 0, 0, // gapStart 3
        0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, // gapList base 6, numBits 0
    ];
    let be: &[u8] = &[
        0x08, 0x00, 0, 28, 0, 0, 0, 0, 0, 0, 1, 2, //
        0, 0, 0, 0, 0, 0, 0, 3, //
        0, 0, 0, 0, 0, 0, 0, 6, 0, 0, 0, 0,
    ];
    for bytes in [le, be] {
        let m = round_trip(&msg(&[bytes]));
        let SubmessageBody::Gap(g) = only(&m) else {
            panic!()
        };
        assert_eq!(g.gap_start.0, 3);
        assert_eq!(g.gap_list.base.0, 6);
        assert_eq!(g.gap_list.num_bits, 0);
    }
}

#[test]
fn info_ts_both_endiannesses_and_invalidate() {
    let le: &[u8] = &[0x09, 0x01, 8, 0, 0x00, 0xf1, 0x53, 0x65, 0, 0, 0, 0x80];
    let be: &[u8] = &[0x09, 0x00, 0, 8, 0x65, 0x53, 0xf1, 0x00, 0x80, 0, 0, 0];
    for bytes in [le, be] {
        let m = round_trip(&msg(&[bytes]));
        let SubmessageBody::InfoTs(t) = only(&m) else {
            panic!()
        };
        let expected = Time {
            seconds: 1_700_000_000,
            fraction: 0x8000_0000,
        };
        assert_eq!(t.timestamp, Some(expected));
        assert!(m.to_string().contains("INFO_TS 1700000000.500000000"));
    }
    // I flag, octetsToNextHeader 0 is a real (empty) length for INFO_TS.
    let m = round_trip(&msg(&[&[0x09, 0x03, 0, 0], HEARTBEAT_LE]));
    assert_eq!(m.submessages.len(), 2);
    let SubmessageBody::InfoTs(t) = &m.submessages[0].body else {
        panic!()
    };
    assert_eq!(t.timestamp, None);
}

#[test]
fn info_src_dst_reply_and_pad() {
    let src: &[u8] = &[
        0x0c, 0x01, 20, 0, 0, 0, 0, 0, 2, 5, 1, 0xf0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12,
    ];
    let dst: &[u8] = &[0x0e, 0x01, 12, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
    let mut reply = vec![0x0f, 0x03, 32, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0xe9, 0x1c, 0, 0];
    reply.extend_from_slice(&[0; 12]);
    reply.extend_from_slice(&[127, 0, 0, 1]);
    reply.extend_from_slice(&[0, 0, 0, 0]); // empty multicast list
    let reply_ip4: &[u8] = &[0x0d, 0x01, 8, 0, 1, 0, 0, 127, 0xe9, 0x1c, 0, 0];
    let pad: &[u8] = &[0x01, 0x01, 4, 0, 0, 0, 0, 0];
    let vendor: &[u8] = &[0x80, 0x01, 4, 0, 9, 9, 9, 9];
    let unknown: &[u8] = &[0x33, 0xff, 4, 0, 1, 2, 3, 4];
    let bytes = msg(&[src, dst, &reply, reply_ip4, pad, vendor, unknown]);
    let m = round_trip(&bytes);
    let text = m.to_string();
    for needle in [
        "INFO_SRC prefix=01020304:05060708:090a0b0c vendor=01f0 (Tachyon DDS) version=2.5",
        "INFO_DST prefix=01020304",
        "INFO_REPLY unicast=[udp/127.0.0.1:7401] multicast=[]",
        "INFO_REPLY_IP4 unicast=udp/127.0.0.1:7401",
        "PAD 4B",
        "VENDOR(0x80) 4B",
        "UNKNOWN(0x33) 4B flags+0xfe",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    let SubmessageBody::InfoReply(r) = &m.submessages[2].body else {
        panic!()
    };
    assert_eq!(
        r.unicast_locators[0].to_socket_addr(),
        Some("127.0.0.1:7401".parse().unwrap())
    );
}

#[test]
fn frag_submessages_round_trip() {
    let mut data_frag = vec![0x16, 0x01, 40, 0, 0, 0, 28, 0, 0, 0, 0, 0, 0, 0, 1, 2];
    data_frag.extend_from_slice(&[0, 0, 0, 0, 9, 0, 0, 0]); // sn 9
    data_frag.extend_from_slice(&[1, 0, 0, 0, 2, 0, 4, 0, 8, 0, 0, 0]); // frag 1, 2 frags of 4, 8B
    data_frag.extend_from_slice(&[1, 2, 3, 4, 5, 6, 7, 8]);
    let hb_frag: &[u8] = &[
        0x13, 0x01, 24, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 9, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0,
    ];
    let nack_frag: &[u8] = &[
        0x12, 0x01, 32, 0, 0, 0, 1, 7, 0, 0, 1, 2, 0, 0, 0, 0, 9, 0, 0, 0, // ids, sn
        1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0x40, // base 1, numBits 2, bit 1
        3, 0, 0, 0,
    ];
    let m = round_trip(&msg(&[&data_frag, hb_frag, nack_frag]));
    let SubmessageBody::NackFrag(n) = &m.submessages[2].body else {
        panic!()
    };
    assert_eq!(
        n.fragment_number_state
            .iter()
            .map(|f| f.0)
            .collect::<Vec<_>>(),
        vec![2]
    );
    let text = m.to_string();
    assert!(text.contains("DATA_FRAG writer=0x00000102 reader=0x00000000 sn=9 frag=1+2 fragsize=4 sample=8B payload=8B"), "{text}");
}

#[test]
fn zero_octets_to_next_header_extends_to_end() {
    // A HEARTBEAT with octetsToNextHeader 0 as last submessage owns the rest of the message,
    // including 4 bytes beyond its fields.
    let mut hb = HEARTBEAT_LE.to_vec();
    hb[2] = 0;
    hb.extend_from_slice(&[1, 2, 3, 4]);
    let m = round_trip(&msg(&[HEARTBEAT_LE, &hb]));
    let last = &m.submessages[1];
    assert!(last.extends_to_end);
    assert_eq!(last.trailing, vec![1, 2, 3, 4]);
    // PAD with 0 is a real length: the next header follows immediately.
    let m = round_trip(&msg(&[&[0x01, 0x01, 0, 0], HEARTBEAT_LE]));
    assert_eq!(m.submessages.len(), 2);
    assert!(!m.submessages[0].extends_to_end);
}

#[test]
fn extra_bytes_and_unknown_flags_are_kept() {
    let mut hb = HEARTBEAT_LE.to_vec();
    hb[1] |= 0x80; // a flag bit no spec version defines
    hb[2] = 36; // 8 bytes more than the fields
    hb.extend_from_slice(&[0xff; 8]);
    let m = round_trip(&msg(&[&hb]));
    assert_eq!(m.submessages[0].unknown_flags, 0x80);
    assert_eq!(m.submessages[0].trailing, vec![0xff; 8]);
    assert!(m.to_string().contains("+8B flags+0x80"));
}

#[test]
fn truncation_at_every_offset_is_an_error() {
    let sub_qos: Vec<u8> = [
        &[0x15, 0x07, 36, 0][..],
        &[0, 0, 16, 0, 0, 0, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 7, 0, 0, 0],
        &[0x71, 0, 4, 0, 0, 0, 0, 3, 0x01, 0, 0, 0, 0, 1, 0, 0],
    ]
    .concat();
    let pieces: Vec<&[u8]> = vec![
        &[0x09, 0x01, 8, 0, 1, 0, 0, 0, 2, 0, 0, 0],
        &sub_qos,
        HEARTBEAT_BE,
        DATA_LE,
    ];
    let full = msg(&pieces);
    let mut boundaries = vec![20];
    for p in &pieces {
        boundaries.push(boundaries.last().unwrap() + p.len());
    }
    for n in 0..full.len() {
        fuzz_parse_message(&full[..n]);
        let r = Message::parse(&full[..n]);
        if boundaries.contains(&n) {
            assert!(r.is_ok(), "prefix {n} ends at a submessage boundary");
        } else {
            assert!(r.is_err(), "prefix of {n} bytes parsed");
        }
    }
}

#[test]
fn malformed_inputs_give_typed_errors() {
    assert!(matches!(
        Message::parse(b"RTPX\x02\x05\x01\x10\0\0\0\0\0\0\0\0\0\0\0\0"),
        Err(WireError::BadMagic { .. })
    ));
    assert!(matches!(
        Message::parse(b"RTPS"),
        Err(WireError::Truncated {
            what: "RTPS header",
            ..
        })
    ));
    // octetsToNextHeader beyond the message.
    let mut hb = HEARTBEAT_LE.to_vec();
    hb[2] = 200;
    assert!(matches!(
        Message::parse(&msg(&[&hb])),
        Err(WireError::BadSubmessageLength {
            id: 0x07,
            octets: 200,
            offset: 20,
            ..
        })
    ));
    // Body shorter than the fields.
    let mut hb = HEARTBEAT_LE.to_vec();
    hb[2] = 20;
    let r = Message::parse(&msg(&[&hb[..24]]));
    assert!(
        matches!(
            r,
            Err(WireError::Truncated {
                what: "HEARTBEAT",
                offset: 24,
                ..
            })
        ),
        "{r:?}"
    );
    // numBits > 256.
    let mut ack = vec![
        0x06, 0x01, 28, 0, 0, 0, 1, 7, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0, 0,
    ];
    ack.extend_from_slice(&257u32.to_le_bytes());
    ack.extend_from_slice(&[0; 8]);
    assert!(matches!(
        Message::parse(&msg(&[&ack])),
        Err(WireError::NumBitsTooLarge { num_bits: 257, .. })
    ));
    // D and K together.
    let mut d = DATA_LE.to_vec();
    d[1] |= 0x08;
    assert!(matches!(
        Message::parse(&msg(&[&d])),
        Err(WireError::DataAndKeyFlags { .. })
    ));
    // octetsToInlineQos below 16.
    let mut d = DATA_LE.to_vec();
    d[6] = 12;
    assert!(matches!(
        Message::parse(&msg(&[&d])),
        Err(WireError::BadOctetsToInlineQos { value: 12, .. })
    ));
    // Inline QoS without sentinel / with an unaligned length.
    let mut d = DATA_LE.to_vec();
    d[1] = 0x03; // E|Q, no payload: the "payload" bytes are read as parameters
    assert!(matches!(
        Message::parse(&msg(&[&d])),
        Err(WireError::InlineQos { .. })
    ));
    // Locator count larger than the body.
    let reply: &[u8] = &[0x0f, 0x01, 4, 0, 0xff, 0xff, 0xff, 0xff];
    assert!(matches!(
        Message::parse(&msg(&[reply])),
        Err(WireError::Truncated {
            what: "INFO_REPLY",
            ..
        })
    ));
    // A dangling partial submessage header.
    assert!(matches!(
        Message::parse(&msg(&[HEARTBEAT_LE, &[0x07, 0x01]])),
        Err(WireError::Truncated {
            what: "submessage header",
            ..
        })
    ));
}

#[test]
fn emit_errors() {
    let m = Message::parse(&msg(&[HEARTBEAT_LE])).unwrap();
    let mut small = [0u8; 30];
    assert!(matches!(
        m.emit(&mut small),
        Err(EmitError::BufferTooSmall {
            needed: 52,
            available: 30
        })
    ));
    let mut two = Message::parse(&msg(&[HEARTBEAT_LE, HEARTBEAT_LE])).unwrap();
    two.submessages[0].extends_to_end = true;
    assert!(matches!(
        two.to_bytes(),
        Err(EmitError::ExtendsToEndNotLast { index: 0 })
    ));
    let mut big = Message::parse(&msg(&[HEARTBEAT_LE])).unwrap();
    big.submessages[0].trailing = vec![0; 70_000];
    assert!(matches!(
        big.to_bytes(),
        Err(EmitError::SubmessageTooLong { .. })
    ));
    big.submessages[0].extends_to_end = true;
    let bytes = big.to_bytes().unwrap();
    assert_eq!(Message::parse(&bytes).unwrap(), big);
}

fn pl(endian_le: bool, params: &[u8]) -> Vec<u8> {
    let mut v = vec![0, if endian_le { 3 } else { 2 }, 0, 0];
    v.extend_from_slice(params);
    v
}

#[test]
fn parameter_list_payloads() {
    let le = pl(
        true,
        &[
            &[0x05, 0, 12, 0, 6, 0, 0, 0][..],
            b"Shape\0\0\0", // TOPIC_NAME "Shape", padded
            &[0x1a, 0, 12, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x9a, 0x99], // RELIABILITY
            &[0x01, 0x80, 4, 0, 1, 2, 3, 4], // vendor PID 0x8001
            &[0x43, 0, 4, 0, 1, 0xaa, 0xbb, 0xcc], // EXPECTS_INLINE_QOS, garbage padding
            &[0x01, 0, 0, 0],
        ]
        .concat(),
    );
    let p = ParameterListPayload::parse_bytes(&le).unwrap();
    fuzz_parse_parameter_list(&le);
    let mut out = vec![0; p.buffer_len()];
    p.emit(&mut out).unwrap();
    assert_eq!(out, le);
    assert_eq!(
        p.list.parameters[0].value,
        ParameterValue::String("Shape".into())
    );
    assert_eq!(p.list.parameters[3].value, ParameterValue::Bool(true));
    assert_eq!(p.list.parameters[3].padding, vec![0xaa, 0xbb, 0xcc]);
    let text = p.to_string();
    assert!(text.contains("TOPIC_NAME=\"Shape\""), "{text}");
    assert!(text.contains("RELIABILITY=RELIABLE"), "{text}");
    assert!(text.contains("0x8001=<01020304>"), "{text}");

    // Big endian, and a string that is not NUL-terminated stays opaque but round-trips.
    let be = pl(
        false,
        &[&[0, 0x05, 0, 8, 0, 0, 0, 4][..], b"abcd", &[0, 1, 0, 0]].concat(),
    );
    let p = ParameterListPayload::parse_bytes(&be).unwrap();
    assert!(matches!(
        p.list.parameters[0].value,
        ParameterValue::Opaque(_)
    ));
    fuzz_parse_parameter_list(&be);

    assert!(matches!(
        ParameterListPayload::parse_bytes(&pl(true, &[0x05, 0, 3, 0, 1, 2, 3, 0])),
        Err(ParameterError::UnalignedLength {
            pid: 5,
            length: 3,
            offset: 4
        })
    ));
    assert!(matches!(
        ParameterListPayload::parse_bytes(&pl(true, &[0x05, 0, 4, 0, 1, 2, 3, 0])),
        Err(ParameterError::MissingSentinel { offset: 12 })
    ));
    assert!(matches!(
        ParameterListPayload::parse_bytes(&pl(true, &[0x05, 0, 8, 0, 1, 2, 3, 0])),
        Err(ParameterError::Truncated {
            offset: 8,
            needed: 8,
            available: 4
        })
    ));
    assert!(matches!(
        ParameterListPayload::parse_bytes(&[0, 1, 0, 0, 1, 0, 0, 0]),
        Err(ParameterError::NotParameterList { encapsulation: 1 })
    ));
    assert!(matches!(
        ParameterListPayload::parse_bytes(&[0, 3]),
        Err(ParameterError::NoEncapsulation { available: 2 })
    ));
}

#[test]
fn sequence_number_set_ops() {
    use tachyon_wire::SequenceNumberSet;
    let mut s = SequenceNumberSet::empty(SequenceNumber(100));
    assert!(s.insert(SequenceNumber(100)));
    assert!(s.insert(SequenceNumber(355)));
    assert!(!s.insert(SequenceNumber(356)));
    assert!(!s.insert(SequenceNumber(99)));
    assert_eq!(s.num_bits, 256);
    assert!(s.contains(SequenceNumber(355)) && !s.contains(SequenceNumber(101)));
    assert_eq!(s.iter().map(|x| x.0).collect::<Vec<_>>(), vec![100, 355]);
    assert_eq!(SequenceNumber::UNKNOWN.high(), -1);
    assert_eq!(SequenceNumber::UNKNOWN.low(), 0);
}

#[test]
fn locator_conversions() {
    use tachyon_wire::Locator;
    for addr in ["127.0.0.1:7400", "[::1]:7410"] {
        let sa: std::net::SocketAddr = addr.parse().unwrap();
        assert_eq!(Locator::from(sa).to_socket_addr(), Some(sa));
    }
    let shm = Locator {
        kind: Locator::KIND_FASTDDS_SHM,
        port: 1,
        address: [0; 16],
    };
    assert_eq!(shm.to_socket_addr(), None);
    assert_eq!(id::name(0x90), "VENDOR");
}
