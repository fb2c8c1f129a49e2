//! XCDR1 encodings that Cyclone DDS 0.10.2 cannot produce (optional members), checked against
//! the hand-written vectors of Cyclone DDS master's own test suite
//! (`src/core/ddsc/tests/cdrstream.c`, `check_xcdr1_optional_valid` and
//! `check_xcdr1_optional_trusted_read_without_mid_table`, types of `CdrStreamXcdr1Opt.idl`).
//!
//! The rules they pin down: an optional member of a final type is a parameter header carrying
//! the member id and the value's exact length (0 when absent); the value aligns from its own
//! start; after it, alignment counts from the stream start again. Cyclone writes the extended
//! header form, we write the short form when the id allows; both must decode.

use tachyon_cdr::{deserialize, serialize_to_vec, DdsType, Endianness, XcdrVersion};

#[derive(DdsType, Debug, PartialEq)]
#[dds(name = "CdrStreamXcdr1Optional::t1")]
struct T1 {
    f1: Option<i32>,
    #[dds(key)]
    k: u32,
}

#[derive(DdsType, Debug, PartialEq)]
#[dds(name = "CdrStreamXcdr1Optional::t2")]
struct T2 {
    f0: u32,
    f1: Option<i32>,
    f2: u64,
    #[dds(key)]
    k: u32,
}

#[derive(DdsType, Debug, PartialEq)]
#[dds(name = "CdrStreamXcdr1Optional::t3")]
struct T3 {
    f1: Option<i64>,
    f2: u64,
    #[dds(key)]
    k: u32,
}

/// Builds a CDR_LE payload from Cyclone's test notation.
struct Cdr(Vec<u8>);
impl Cdr {
    fn new() -> Self {
        Cdr(vec![0x00, 0x01, 0x00, 0x00])
    }
    fn u16(mut self, v: u16) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u32(mut self, v: u32) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    fn u64(mut self, v: u64) -> Self {
        self.0.extend_from_slice(&v.to_le_bytes());
        self
    }
    /// `PHDR(pid, len)`: short parameter header.
    fn phdr(self, pid: u16, len: u16) -> Self {
        self.u16(pid).u16(len)
    }
    /// `PHDR_EXT(pid, len)`: extended header (PID_EXTENDED with must-understand, length 8).
    fn phdr_ext(self, pid: u32, len: u32) -> Self {
        self.u16(0x3f01 | 0x4000).u16(8).u32(pid).u32(len)
    }
    fn pad4(self) -> Self {
        self.u32(0)
    }
}

fn check<T>(cyclone: Vec<u8>, ours_short_form: Option<Vec<u8>>, value: T)
where
    T: DdsType + for<'a> tachyon_cdr::Decode<'a> + PartialEq + std::fmt::Debug,
{
    assert_eq!(
        deserialize::<T>(&cyclone).unwrap(),
        value,
        "decode Cyclone's bytes"
    );
    let ours = serialize_to_vec(&value, XcdrVersion::Xcdr1, Endianness::Little).unwrap();
    if let Some(expected) = ours_short_form {
        assert_eq!(ours, expected, "encode (short headers)");
    }
    assert_eq!(deserialize::<T>(&ours).unwrap(), value, "decode our bytes");
}

#[test]
fn t1_optional_first() {
    check(
        Cdr::new().phdr_ext(0, 4).u32(1).u32(2).0,
        Some(Cdr::new().phdr(0, 4).u32(1).u32(2).0),
        T1 { f1: Some(1), k: 2 },
    );
    check(
        Cdr::new().phdr_ext(0, 0).u32(2).0,
        Some(Cdr::new().phdr(0, 0).u32(2).0),
        T1 { f1: None, k: 2 },
    );
    // Cyclone's trusted-read vector, short header.
    check(
        Cdr::new().phdr(0, 4).u32(11).u32(2).0,
        None,
        T1 { f1: Some(11), k: 2 },
    );
}

#[test]
fn t2_alignment_returns_to_the_stream_origin_after_an_optional() {
    let v = T2 {
        f0: 1,
        f1: Some(1),
        f2: 3,
        k: 2,
    };
    check(
        Cdr::new()
            .u32(1)
            .phdr_ext(1, 4)
            .u32(1)
            .pad4()
            .u64(3)
            .u32(2)
            .0,
        Some(Cdr::new().u32(1).phdr(1, 4).u32(1).pad4().u64(3).u32(2).0),
        v,
    );
    check(
        Cdr::new().u32(1).phdr_ext(1, 0).u64(3).u32(2).0,
        None,
        T2 {
            f0: 1,
            f1: None,
            f2: 3,
            k: 2,
        },
    );
}

#[test]
fn t3_eight_byte_optional_aligns_from_its_own_start() {
    check(
        Cdr::new().phdr_ext(0, 8).u64(1).pad4().u64(3).u32(2).0,
        // Short header: the value starts at offset 4 and needs no padding (origin reset);
        // then f2 aligns to 8 from the stream start: offset 12 → 16.
        Some(Cdr::new().phdr(0, 8).u64(1).pad4().u64(3).u32(2).0),
        T3 {
            f1: Some(1),
            f2: 3,
            k: 2,
        },
    );
    check(
        Cdr::new().phdr_ext(0, 0).pad4().u64(3).u32(2).0,
        None,
        T3 {
            f1: None,
            f2: 3,
            k: 2,
        },
    );
}

#[test]
fn optional_header_with_another_members_id_is_rejected() {
    // Cyclone's normalize rejects `PHDR(1, 4)` where member 0 is expected; so do we.
    let e = deserialize::<T1>(&Cdr::new().phdr(1, 4).u32(1).u32(2).0).unwrap_err();
    assert!(e.to_string().contains("another member's id"), "{e}");
}

#[derive(DdsType, Debug, PartialEq)]
#[dds(name = "ZeroLengthMembers", mutable)]
struct Mutable {
    #[dds(id = 1)]
    f1: u32,
    #[dds(id = 2)]
    f2: Vec<u32>,
}

#[test]
fn xcdr1_mutable_zero_length_members() {
    // From Cyclone master's `check_xcdr1_mutable_zero_length_member_normalize`.
    let end = |c: Cdr| c.phdr(0x3f02, 0).0;
    // An unknown member of length 0 is skipped…
    let v = deserialize::<Mutable>(&end(Cdr::new().phdr(3, 0))).unwrap();
    assert_eq!(v, Mutable { f1: 0, f2: vec![] });
    // …unless it is must-understand.
    assert!(deserialize::<Mutable>(&end(Cdr::new().phdr(0x4000 | 3, 0))).is_err());
    // A known member cannot be empty.
    assert!(deserialize::<Mutable>(&end(Cdr::new().phdr(1, 0))).is_err());
    assert!(deserialize::<Mutable>(&end(Cdr::new().phdr(2, 0))).is_err());
    let v = deserialize::<Mutable>(&end(Cdr::new().phdr(1, 4).u32(7))).unwrap();
    assert_eq!(v, Mutable { f1: 7, f2: vec![] });
    // Our encoding: exact lengths, list end with the must-understand flag (0x7f02).
    let ours = serialize_to_vec(
        &Mutable { f1: 7, f2: vec![1] },
        XcdrVersion::Xcdr1,
        Endianness::Little,
    )
    .unwrap();
    let expected = Cdr::new()
        .phdr(1, 4)
        .u32(7)
        .phdr(2, 8)
        .u32(1)
        .u32(1)
        .phdr(0x7f02, 0)
        .0;
    assert_eq!(ours[..4], [0x00, 0x03, 0x00, 0x00]);
    assert_eq!(ours[4..], expected[4..]);
}
