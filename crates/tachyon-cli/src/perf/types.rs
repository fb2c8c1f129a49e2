//! The sample types `tachyon perf` sends, and the topic names they travel on.
//!
//! `simple` is Cyclone DDS `ddsperf`'s default type, `KeyedSeq`, on `ddsperf`'s topics, so
//! `tachyon perf` and `ddsperf` answer each other. `unkeyed` (sequence number and octets) and
//! `complex` (strings and integers in a sequence of structs, costlier to serialize) are
//! Tachyon's own, as is their topic family.

use tachyon::{DdsType, Decode};

/// `ddsperf`'s `KeyedSeq`: `@final struct KeyedSeq { unsigned long seq; @key unsigned long
/// keyval; sequence<octet> baggage; }`.
#[derive(DdsType, Clone, Debug, PartialEq)]
#[dds(name = "KeyedSeq", final)]
pub struct KeyedSeq {
    pub seq: u32,
    #[dds(key)]
    pub keyval: u32,
    pub baggage: Vec<u8>,
}

/// The unkeyed type: `@final struct UnkeyedSeq { unsigned long seq; sequence<octet> baggage; }`
/// (every sample the same instance, no key hash to compute).
#[derive(DdsType, Clone, Debug, PartialEq)]
#[dds(name = "UnkeyedSeq", final)]
pub struct UnkeyedSeq {
    pub seq: u32,
    pub baggage: Vec<u8>,
}

/// One element of [`PerfComplex`].
#[derive(DdsType, Clone, Debug, PartialEq)]
#[dds(name = "PerfItem", final)]
pub struct PerfItem {
    pub name: String,
    pub value: i64,
    pub flags: u32,
}

/// The complex type: `@final struct PerfComplex { unsigned long seq; @key unsigned long
/// keyval; sequence<PerfItem> items; }`.
#[derive(DdsType, Clone, Debug, PartialEq)]
#[dds(name = "PerfComplex", final)]
pub struct PerfComplex {
    pub seq: u32,
    #[dds(key)]
    pub keyval: u32,
    pub items: Vec<PerfItem>,
}

/// Serialized octets of one [`PerfItem`] whose name has 11 characters, in XCDR2 (Tachyon's
/// default): length (4), 12 characters with the terminating NUL, value (8, aligned to 4),
/// flags (4).
const ITEM_BYTES: u32 = 28;

/// What the benchmark needs of a sample type.
pub trait PerfSample: DdsType + for<'de> Decode<'de> + Clone + Send + Sync + 'static {
    /// The topic family: `DDSPerf` (ddsperf's) or `TachyonPerf`.
    const PREFIX: &'static str;
    /// ddsperf's topic suffix (`KS` for KeyedSeq).
    const SUFFIX: &'static str;

    /// A sample whose payload is `size` octets, sequence number and key included (as
    /// ddsperf's `size`: at least their 12 octets, or 0 for the smallest), part of it random
    /// so that no layer can compress it.
    fn with_size(size: u32) -> Self;
    fn seq(&self) -> u32;
    fn set_seq(&mut self, seq: u32);
    fn keyval(&self) -> u32;
    fn set_keyval(&mut self, key: u32);
    /// Payload octets counted for throughput (ddsperf's count for `KeyedSeq`: 12 + size;
    /// the XCDR2 serialized size, header excluded, for `PerfComplex`).
    fn payload_bytes(&self) -> u64;
}

/// Topic name of `kind` (`Ping`, `Pong`, `Data`) for type `T` and reliability: as ddsperf
/// names them, `DDSPerfRPingKS` (`U` for best effort).
pub fn topic_name<T: PerfSample>(kind: &str, reliable: bool) -> String {
    format!(
        "{}{}{}{}",
        T::PREFIX,
        if reliable { 'R' } else { 'U' },
        kind,
        T::SUFFIX
    )
}

/// A small xorshift generator: the random part of payloads.
fn random_bytes(n: usize, seed: u64) -> impl Iterator<Item = u8> {
    let mut x = seed | 1;
    (0..n).map(move |_| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x as u8
    })
}

/// `n` octets of baggage: the first half 0xee as ddsperf fills it, the second half random.
fn baggage(n: usize) -> Vec<u8> {
    let mut b = vec![0xee; n / 2];
    b.extend(random_bytes(n - n / 2, 0x9e37_79b9_7f4a_7c15));
    b
}

impl PerfSample for KeyedSeq {
    const PREFIX: &'static str = "DDSPerf";
    const SUFFIX: &'static str = "KS";

    fn with_size(size: u32) -> Self {
        KeyedSeq {
            seq: 0,
            keyval: 0,
            baggage: baggage(size.saturating_sub(12) as usize),
        }
    }
    fn seq(&self) -> u32 {
        self.seq
    }
    fn set_seq(&mut self, seq: u32) {
        self.seq = seq;
    }
    fn keyval(&self) -> u32 {
        self.keyval
    }
    fn set_keyval(&mut self, key: u32) {
        self.keyval = key;
    }
    fn payload_bytes(&self) -> u64 {
        12 + self.baggage.len() as u64
    }
}

impl PerfSample for UnkeyedSeq {
    const PREFIX: &'static str = "TachyonPerf";
    const SUFFIX: &'static str = "US";

    fn with_size(size: u32) -> Self {
        UnkeyedSeq {
            seq: 0,
            baggage: baggage(size.saturating_sub(8) as usize),
        }
    }
    fn seq(&self) -> u32 {
        self.seq
    }
    fn set_seq(&mut self, seq: u32) {
        self.seq = seq;
    }
    fn keyval(&self) -> u32 {
        0
    }
    fn set_keyval(&mut self, _key: u32) {}
    fn payload_bytes(&self) -> u64 {
        8 + self.baggage.len() as u64
    }
}

impl PerfSample for PerfComplex {
    const PREFIX: &'static str = "TachyonPerf";
    const SUFFIX: &'static str = "CX";

    fn with_size(size: u32) -> Self {
        let mut rnd = random_bytes(size as usize, 0x2545_f491_4f6c_dd1d);
        let items = (0..size.saturating_sub(16).div_ceil(ITEM_BYTES))
            .map(|i| PerfItem {
                name: format!("item-{i:06}"),
                value: i64::from(rnd.next().unwrap_or(0)) << 40 | i64::from(i),
                flags: u32::from(rnd.next().unwrap_or(0)),
            })
            .collect();
        PerfComplex {
            seq: 0,
            keyval: 0,
            items,
        }
    }
    fn seq(&self) -> u32 {
        self.seq
    }
    fn set_seq(&mut self, seq: u32) {
        self.seq = seq;
    }
    fn keyval(&self) -> u32 {
        self.keyval
    }
    fn set_keyval(&mut self, key: u32) {
        self.keyval = key;
    }
    fn payload_bytes(&self) -> u64 {
        // seq, keyval, the sequence's DHEADER (XCDR2: its elements are structs) and length.
        16 + u64::from(ITEM_BYTES) * self.items.len() as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tachyon_cdr::{serialized_size, XcdrVersion};

    #[test]
    fn topic_names_are_ddsperfs() {
        assert_eq!(topic_name::<KeyedSeq>("Ping", true), "DDSPerfRPingKS");
        assert_eq!(topic_name::<KeyedSeq>("Data", false), "DDSPerfUDataKS");
        assert_eq!(
            topic_name::<PerfComplex>("Pong", true),
            "TachyonPerfRPongCX"
        );
    }

    #[test]
    fn payload_bytes_match_the_serialized_size() {
        for size in [0u32, 12, 13, 32, 1000, 4096] {
            let s = KeyedSeq::with_size(size);
            assert_eq!(s.baggage.len(), size.saturating_sub(12) as usize);
            assert_eq!(s.payload_bytes(), u64::from(size.max(12)));
            // serialized_size counts the 4-octet encapsulation header and the padding to 4.
            let padded = |n: u64| n.div_ceil(4) * 4 + 4;
            for v in [XcdrVersion::Xcdr1, XcdrVersion::Xcdr2] {
                let cdr = serialized_size(&s, v).unwrap() as u64;
                assert_eq!(cdr, padded(s.payload_bytes()), "KeyedSeq size {size}");
            }
            let u = UnkeyedSeq::with_size(size);
            let cdr = serialized_size(&u, XcdrVersion::Xcdr2).unwrap() as u64;
            assert_eq!(cdr, padded(u.payload_bytes()), "UnkeyedSeq size {size}");
            let c = PerfComplex::with_size(size);
            let cdr = serialized_size(&c, XcdrVersion::Xcdr2).unwrap() as u64;
            assert_eq!(cdr, padded(c.payload_bytes()), "PerfComplex size {size}");
            assert!(c.payload_bytes() >= u64::from(size));
        }
    }
}
