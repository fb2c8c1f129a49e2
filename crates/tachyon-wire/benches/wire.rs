//! Parse of a DATA message and of an SPDP parameter list taken from real Cyclone DDS traffic
//! (`benches/data/*.bin`, cut from `interop/captures/cyclone-ddsperf.pcap`), side by side with
//! the same work done through the serde-based `cdr` crate (what RustDDS uses for CDR).
//!
//! Run: `cargo bench -p tachyon-wire --bench wire`. Ratios matter, not absolute times.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use serde::Deserialize;
use tachyon_wire::{
    Message, MessageView, ParameterListPayload, ParameterListPayloadView, SubmessageView,
};

const DATA_MSG: &[u8] = include_bytes!("data/cyclone_data_message.bin");
const SPDP: &[u8] = include_bytes!("data/cyclone_spdp_payload.bin");

fn bench_data(c: &mut Criterion) {
    let mut g = c.benchmark_group("DataMessage");
    g.bench_function("view/tachyon", |b| {
        b.iter(|| {
            let view = MessageView::new_checked(black_box(DATA_MSG)).unwrap();
            let mut n = 0usize;
            for sub in view.submessages() {
                if let SubmessageView::Data(d) = sub.unwrap() {
                    n += d.serialized_payload().map_or(0, <[u8]>::len);
                    n += d.writer_sn().0 as usize;
                }
            }
            n
        })
    });
    g.bench_function("parse/tachyon", |b| {
        b.iter(|| Message::parse(black_box(DATA_MSG)).unwrap())
    });
    assert_eq!(cdr_crate::parse_message(DATA_MSG).0, 3);
    g.bench_function("parse/cdr-crate", |b| {
        b.iter(|| cdr_crate::parse_message(black_box(DATA_MSG)))
    });
    g.finish();
}

fn bench_spdp(c: &mut Criterion) {
    let mut g = c.benchmark_group("SpdpParameterList");
    g.bench_function("view/tachyon", |b| {
        b.iter(|| {
            let v = ParameterListPayloadView::parse(black_box(SPDP)).unwrap();
            v.list().iter().map(|p| p.value.len()).sum::<usize>()
        })
    });
    g.bench_function("parse/tachyon", |b| {
        b.iter(|| ParameterListPayload::parse_bytes(black_box(SPDP)).unwrap())
    });
    assert!(cdr_crate::parse_parameter_list(SPDP).len() > 10);
    g.bench_function("parse/cdr-crate", |b| {
        b.iter(|| cdr_crate::parse_parameter_list(black_box(SPDP)))
    });
    g.finish();
}

/// The same parsing written the way a serde-based stack does it: each fixed-layout element is
/// a `#[derive(Deserialize)]` struct read with `cdr::Deserializer`; variable parts are sliced.
#[allow(dead_code)] // Fields are decoded by serde, as a real parser would; not all are used here.
mod cdr_crate {
    use super::Deserialize;
    use cdr::{BigEndian, Infinite, LittleEndian};

    #[derive(Deserialize)]
    pub struct Header {
        pub magic: [u8; 4],
        pub version: [u8; 2],
        pub vendor: [u8; 2],
        pub prefix: [u8; 12],
    }

    #[derive(Deserialize)]
    pub struct SubHeader {
        pub id: u8,
        pub flags: u8,
    }

    #[derive(Deserialize)]
    pub struct InfoTs {
        pub seconds: i32,
        pub fraction: u32,
    }

    #[derive(Deserialize)]
    pub struct DataFixed {
        pub extra_flags: u16,
        pub octets_to_inline_qos: u16,
        pub reader: [u8; 4],
        pub writer: [u8; 4],
        pub sn_high: i32,
        pub sn_low: u32,
    }

    #[derive(Deserialize)]
    pub struct Heartbeat {
        pub reader: [u8; 4],
        pub writer: [u8; 4],
        pub first_high: i32,
        pub first_low: u32,
        pub last_high: i32,
        pub last_low: u32,
        pub count: i32,
    }

    #[derive(Deserialize)]
    pub struct Locator {
        pub kind: i32,
        pub port: u32,
        pub address: [u8; 16],
    }

    #[derive(Deserialize)]
    pub struct Duration {
        pub seconds: i32,
        pub fraction: u32,
    }

    pub enum Value<'a> {
        Guid([u8; 16]),
        Locator(Locator),
        Duration(Duration),
        U32(u32),
        Pair([u8; 2]),
        Text(String),
        Raw(&'a [u8]),
    }

    fn de<T: serde::de::DeserializeOwned>(bytes: &[u8], little: bool) -> Option<T> {
        if little {
            let mut d = cdr::Deserializer::<_, _, LittleEndian>::new(bytes, Infinite);
            T::deserialize(&mut d).ok()
        } else {
            let mut d = cdr::Deserializer::<_, _, BigEndian>::new(bytes, Infinite);
            T::deserialize(&mut d).ok()
        }
    }

    /// Returns (submessage count, payload bytes seen).
    pub fn parse_message(msg: &[u8]) -> (usize, usize) {
        let _h: Header = de(&msg[..20], false).unwrap();
        let mut off = 20;
        let (mut count, mut payload) = (0, 0);
        while off + 4 <= msg.len() {
            let sh: SubHeader = de(&msg[off..off + 2], false).unwrap();
            let little = sh.flags & 1 == 1;
            let len: u16 = de(&msg[off + 2..off + 4], little).unwrap();
            let body = &msg[off + 4..off + 4 + len as usize];
            match sh.id {
                0x09 => {
                    let _t: InfoTs = de(body, little).unwrap();
                }
                0x15 => {
                    let d: DataFixed = de(&body[..20], little).unwrap();
                    payload += body.len() - 4 - d.octets_to_inline_qos as usize;
                }
                0x07 => {
                    let _h: Heartbeat = de(body, little).unwrap();
                }
                _ => {}
            }
            count += 1;
            off += 4 + len as usize;
        }
        (count, payload)
    }

    pub fn parse_parameter_list(payload: &[u8]) -> Vec<(u16, Value<'_>)> {
        let little = payload[1] & 1 == 1;
        let mut out = Vec::new();
        let mut off = 4;
        while off + 4 <= payload.len() {
            let (pid, len): (u16, u16) = de(&payload[off..off + 4], little).unwrap();
            if pid == 1 {
                break;
            }
            let v = &payload[off + 4..off + 4 + len as usize];
            let value = match pid {
                0x0050 | 0x005a => Value::Guid(de(v, little).unwrap()),
                0x0031 | 0x0032 | 0x0033 | 0x0048 => Value::Locator(de(v, little).unwrap()),
                0x0002 => Value::Duration(de(v, little).unwrap()),
                0x0058 | 0x0077 | 0x000f | 0x0034 => Value::U32(de(v, little).unwrap()),
                0x0015 | 0x0016 => Value::Pair(de(v, little).unwrap()),
                0x0062 | 0x4014 => Value::Text(de(v, little).unwrap_or_default()),
                _ => Value::Raw(v),
            };
            out.push((pid, value));
            off += 4 + len as usize;
        }
        out
    }
}

fn bench_build(c: &mut Criterion) {
    use tachyon_wire::{
        Count, DataSpec, EntityId, GuidPrefix, Header, MessageBuilder, PayloadKind,
        ProtocolVersion, SequenceNumber, Time, VendorId,
    };
    let header = Header {
        protocol_version: ProtocolVersion::V2_5,
        vendor_id: VendorId::TACHYON,
        guid_prefix: GuidPrefix([1; 12]),
    };
    let payload = [0u8; 36];
    let writer = EntityId([0, 0, 1, 0x03]);
    let mut buf = vec![0u8; 1500];
    let mut sn = 0i64;
    c.bench_function("BuildDataMessage/tachyon", |b| {
        b.iter(|| {
            sn += 1;
            let seq = SequenceNumber::from_parts((sn >> 32) as i32, sn as u32);
            let mut m = MessageBuilder::new(&mut buf, &header).unwrap();
            m.info_ts(Some(Time {
                seconds: 1,
                fraction: sn as u32,
            }))
            .unwrap();
            m.data(&DataSpec {
                reader_id: EntityId::UNKNOWN,
                writer_id: writer,
                writer_sn: seq,
                inline_qos: None,
                kind: PayloadKind::Data,
                payload: black_box(&payload),
            })
            .unwrap();
            m.heartbeat(
                EntityId::UNKNOWN,
                writer,
                seq,
                seq,
                Count(sn as i32),
                false,
                false,
            )
            .unwrap();
            let n = m.finish();
            black_box(&buf);
            n
        })
    });
}

criterion_group!(benches, bench_data, bench_spdp, bench_build);
criterion_main!(benches);
