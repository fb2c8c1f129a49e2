//! The matrix's types (`interop/peers/interop.idl`) and the sample pattern every peer writes
//! and checks.

use tachyon::DdsType;

use crate::options::Options;

/// The OMG interoperability suite's type.
#[derive(DdsType, Debug, Clone)]
#[dds(name = "ShapeType")]
pub struct ShapeType {
    #[dds(key, bound = 128)]
    pub color: String,
    pub x: i32,
    pub y: i32,
    pub shapesize: i32,
}

/// The OMG interoperability suite's ShapeType as the suite declares it, `@appendable`: in
/// XCDR2 its key-only payloads differ between the vendors' releases, and its `string<128>`
/// key hashes by MD5, so a reader needs the serialized key of a dispose.
#[derive(DdsType, Debug, Clone)]
#[dds(name = "AppendableShape", appendable)]
pub struct AppendableShape {
    #[dds(key, bound = 128)]
    pub color: String,
    pub x: i32,
    pub y: i32,
    pub shapesize: i32,
}

/// A keyed type with an unbounded sequence, for large samples; `@appendable` (XCDR2 by
/// default, converted to XCDR1 for Fast DDS 2.x readers).
#[derive(DdsType, Debug, Clone)]
#[dds(name = "LargeData", appendable)]
pub struct LargeData {
    #[key]
    pub id: i32,
    pub seq: u32,
    pub data: Vec<u8>,
}

/// The OMG suite's ShapeType exactly, as its `shape.idl` declares it (`--type sshape`): with
/// `sequence<uint8> additional_payload_size`, which Cyclone DDS 0.10's idlc describes as
/// `sequence<octet>` (and it cannot read a TypeObject with `uint8`).
#[derive(DdsType, Debug, Clone)]
#[dds(name = "SuiteShape", appendable)]
pub struct SuiteShape {
    #[dds(key, bound = 128)]
    pub color: String,
    pub x: i32,
    pub y: i32,
    pub shapesize: i32,
    #[dds(idl = "uint8")]
    pub additional_payload_size: Vec<u8>,
}

/// How a type takes part in the matrix.
pub trait PeerType: Sized {
    /// Sample `i` of the pattern.
    fn make(i: u64, o: &Options) -> Self;
    /// Key, sequence number, length and whether the content follows the pattern.
    fn describe(&self, o: &Options) -> (String, u64, usize, bool);
}

/// `AppendableShape` with a member appended (`--type ashape5`): readers of either version
/// read writers of the other (XTypes assignability; the missing member takes its default).
#[derive(DdsType, Debug, Clone)]
#[dds(name = "AppendableShape", appendable)]
pub struct AppendableShape5 {
    #[dds(key, bound = 128)]
    pub color: String,
    pub x: i32,
    pub y: i32,
    pub shapesize: i32,
    pub z: i32,
}

/// `AppendableShape` with `x` a `long long` (`--type ashape_x64`): not assignable either way.
#[derive(DdsType, Debug, Clone)]
#[dds(name = "AppendableShape", appendable)]
pub struct AppendableShapeX64 {
    #[dds(key, bound = 128)]
    pub color: String,
    pub x: i64,
    pub y: i32,
    pub shapesize: i32,
}

impl ShapeType {
    /// The four members another shape type shares with this one.
    fn of(color: &str, x: i32, y: i32, shapesize: i32) -> ShapeType {
        ShapeType {
            color: color.to_owned(),
            x,
            y,
            shapesize,
        }
    }
}

impl PeerType for ShapeType {
    fn make(i: u64, o: &Options) -> Self {
        ShapeType {
            color: format!("{}{}", o.prefix, i % o.instances),
            x: i as i32,
            y: 2 * i as i32 + 1,
            shapesize: o.shapesize,
        }
    }

    fn describe(&self, _: &Options) -> (String, u64, usize, bool) {
        let ok = self.y == 2 * self.x + 1;
        (
            self.color.clone(),
            self.x as u64,
            self.shapesize as usize,
            ok,
        )
    }
}

impl PeerType for AppendableShape {
    fn make(i: u64, o: &Options) -> Self {
        let s = ShapeType::make(i, o);
        AppendableShape {
            color: s.color,
            x: s.x,
            y: s.y,
            shapesize: s.shapesize,
        }
    }

    fn describe(&self, o: &Options) -> (String, u64, usize, bool) {
        let s = ShapeType {
            color: self.color.clone(),
            x: self.x,
            y: self.y,
            shapesize: self.shapesize,
        };
        s.describe(o)
    }
}

/// The byte at offset `j` of sample `i`'s payload.
fn large_byte(j: usize, i: u64) -> u8 {
    (7u64.wrapping_mul(j as u64).wrapping_add(i) & 0xff) as u8
}

impl PeerType for LargeData {
    fn make(i: u64, o: &Options) -> Self {
        LargeData {
            id: (i % o.instances) as i32,
            seq: i as u32,
            data: (0..o.size).map(|j| large_byte(j, i)).collect(),
        }
    }

    fn describe(&self, _: &Options) -> (String, u64, usize, bool) {
        let seq = u64::from(self.seq);
        let ok = self
            .data
            .iter()
            .enumerate()
            .all(|(j, b)| *b == large_byte(j, seq));
        (self.id.to_string(), seq, self.data.len(), ok)
    }
}

impl PeerType for AppendableShape5 {
    fn make(i: u64, o: &Options) -> Self {
        let s = ShapeType::make(i, o);
        AppendableShape5 {
            color: s.color,
            x: s.x,
            y: s.y,
            shapesize: s.shapesize,
            z: 3 * s.x,
        }
    }

    fn describe(&self, o: &Options) -> (String, u64, usize, bool) {
        // z is 0 from a writer of the four-member version.
        let (k, seq, size, ok) =
            ShapeType::of(&self.color, self.x, self.y, self.shapesize).describe(o);
        (k, seq, size, ok && (self.z == 3 * self.x || self.z == 0))
    }
}

impl PeerType for AppendableShapeX64 {
    fn make(i: u64, o: &Options) -> Self {
        let s = ShapeType::make(i, o);
        AppendableShapeX64 {
            color: s.color,
            x: i64::from(s.x),
            y: s.y,
            shapesize: s.shapesize,
        }
    }

    fn describe(&self, o: &Options) -> (String, u64, usize, bool) {
        ShapeType::of(&self.color, self.x as i32, self.y, self.shapesize).describe(o)
    }
}

impl PeerType for SuiteShape {
    fn make(i: u64, o: &Options) -> Self {
        let s = ShapeType::make(i, o);
        SuiteShape {
            color: s.color,
            x: s.x,
            y: s.y,
            shapesize: s.shapesize,
            additional_payload_size: vec![(i & 0xff) as u8; 4],
        }
    }

    fn describe(&self, o: &Options) -> (String, u64, usize, bool) {
        // Four octets, each the sequence number's low octet.
        let (k, seq, size, ok) =
            ShapeType::of(&self.color, self.x, self.y, self.shapesize).describe(o);
        let payload_ok = self.additional_payload_size == vec![(seq & 0xff) as u8; 4];
        (k, seq, size, ok && payload_ok)
    }
}
