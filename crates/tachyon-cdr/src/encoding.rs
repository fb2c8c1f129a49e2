//! Encapsulation identifiers, XCDR versions, byte orders and extensibility kinds.
//!
//! Every serialized payload starts with a 4-byte encapsulation header: a big-endian 16-bit
//! identifier naming the representation and byte order, then 16 bits of options whose lowest two
//! bits count the padding octets appended after the data (XTypes 1.3, 7.6.3.1.2).

use crate::error::{DecodeError, DecodeErrorKind};

/// The XCDR version a stream is written in (XTypes 1.3, 7.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum XcdrVersion {
    /// XCDR1 (the classic CDR of RTPS 2.x): 8-byte values aligned to 8, no DHEADERs.
    Xcdr1,
    /// XCDR2: 8-byte values aligned to 4, DHEADERs for appendable and mutable types.
    Xcdr2,
}

impl XcdrVersion {
    /// The largest alignment this version ever applies.
    #[inline]
    pub const fn max_align(self) -> usize {
        match self {
            XcdrVersion::Xcdr1 => 8,
            XcdrVersion::Xcdr2 => 4,
        }
    }
}

/// Byte order of a stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Endianness {
    /// Most significant byte first.
    Big,
    /// Least significant byte first.
    Little,
}

impl Endianness {
    /// The byte order of the machine running this code.
    pub const NATIVE: Endianness = if cfg!(target_endian = "big") {
        Endianness::Big
    } else {
        Endianness::Little
    };
}

/// How a type may evolve, which decides how it is laid out on the wire (XTypes 1.3, 7.2.2.4.4.4.8).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Extensibility {
    /// No evolution: members back to back (`@final`, the default of Cyclone DDS's `idlc`).
    Final,
    /// Members may be appended: XCDR2 prefixes the members with a DHEADER (`@appendable`).
    Appendable,
    /// Members may be added, removed or reordered: each member carries its id (`@mutable`).
    Mutable,
}

/// The representation named by an encapsulation identifier.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Encapsulation {
    /// `CDR_BE` (0x0000): XCDR1, final or appendable, big-endian.
    CdrBe,
    /// `CDR_LE` (0x0001): XCDR1, final or appendable, little-endian.
    CdrLe,
    /// `PL_CDR_BE` (0x0002): XCDR1 parameter list (mutable), big-endian.
    PlCdrBe,
    /// `PL_CDR_LE` (0x0003): XCDR1 parameter list (mutable), little-endian.
    PlCdrLe,
    /// `CDR2_BE` (0x0006): XCDR2 final, big-endian.
    Cdr2Be,
    /// `CDR2_LE` (0x0007): XCDR2 final, little-endian.
    Cdr2Le,
    /// `D_CDR2_BE` (0x0008): XCDR2 appendable (delimited), big-endian.
    DCdr2Be,
    /// `D_CDR2_LE` (0x0009): XCDR2 appendable (delimited), little-endian.
    DCdr2Le,
    /// `PL_CDR2_BE` (0x000a): XCDR2 mutable, big-endian.
    PlCdr2Be,
    /// `PL_CDR2_LE` (0x000b): XCDR2 mutable, little-endian.
    PlCdr2Le,
}

impl Encapsulation {
    /// All identifiers this crate reads and writes.
    pub const ALL: [Encapsulation; 10] = [
        Encapsulation::CdrBe,
        Encapsulation::CdrLe,
        Encapsulation::PlCdrBe,
        Encapsulation::PlCdrLe,
        Encapsulation::Cdr2Be,
        Encapsulation::Cdr2Le,
        Encapsulation::DCdr2Be,
        Encapsulation::DCdr2Le,
        Encapsulation::PlCdr2Be,
        Encapsulation::PlCdr2Le,
    ];

    /// The identifier a type of `extensibility` is written with in `version` and `endian`.
    pub const fn for_type(
        extensibility: Extensibility,
        version: XcdrVersion,
        endian: Endianness,
    ) -> Encapsulation {
        use Encapsulation::*;
        let big = matches!(endian, Endianness::Big);
        match (version, extensibility) {
            (XcdrVersion::Xcdr1, Extensibility::Mutable) => pick(big, PlCdrBe, PlCdrLe),
            (XcdrVersion::Xcdr1, _) => pick(big, CdrBe, CdrLe),
            (XcdrVersion::Xcdr2, Extensibility::Final) => pick(big, Cdr2Be, Cdr2Le),
            (XcdrVersion::Xcdr2, Extensibility::Appendable) => pick(big, DCdr2Be, DCdr2Le),
            (XcdrVersion::Xcdr2, Extensibility::Mutable) => pick(big, PlCdr2Be, PlCdr2Le),
        }
    }

    /// The 16-bit identifier as it appears (big-endian) in the header.
    pub const fn id(self) -> u16 {
        use Encapsulation::*;
        match self {
            CdrBe => 0x0000,
            CdrLe => 0x0001,
            PlCdrBe => 0x0002,
            PlCdrLe => 0x0003,
            Cdr2Be => 0x0006,
            Cdr2Le => 0x0007,
            DCdr2Be => 0x0008,
            DCdr2Le => 0x0009,
            PlCdr2Be => 0x000a,
            PlCdr2Le => 0x000b,
        }
    }

    /// The identifier for a 16-bit value, if it is one of the CDR representations.
    pub const fn from_id(id: u16) -> Option<Encapsulation> {
        use Encapsulation::*;
        Some(match id {
            0x0000 => CdrBe,
            0x0001 => CdrLe,
            0x0002 => PlCdrBe,
            0x0003 => PlCdrLe,
            0x0006 => Cdr2Be,
            0x0007 => Cdr2Le,
            0x0008 => DCdr2Be,
            0x0009 => DCdr2Le,
            0x000a => PlCdr2Be,
            0x000b => PlCdr2Le,
            _ => return None,
        })
    }

    /// The name used by the XTypes specification (`CDR_LE`, `D_CDR2_BE`, …).
    pub const fn name(self) -> &'static str {
        use Encapsulation::*;
        match self {
            CdrBe => "CDR_BE",
            CdrLe => "CDR_LE",
            PlCdrBe => "PL_CDR_BE",
            PlCdrLe => "PL_CDR_LE",
            Cdr2Be => "CDR2_BE",
            Cdr2Le => "CDR2_LE",
            DCdr2Be => "D_CDR2_BE",
            DCdr2Le => "D_CDR2_LE",
            PlCdr2Be => "PL_CDR2_BE",
            PlCdr2Le => "PL_CDR2_LE",
        }
    }

    /// The XCDR version of the representation.
    pub const fn version(self) -> XcdrVersion {
        use Encapsulation::*;
        match self {
            CdrBe | CdrLe | PlCdrBe | PlCdrLe => XcdrVersion::Xcdr1,
            _ => XcdrVersion::Xcdr2,
        }
    }

    /// The byte order of the representation.
    pub const fn endianness(self) -> Endianness {
        if self.id() & 1 == 1 {
            Endianness::Little
        } else {
            Endianness::Big
        }
    }

    /// The extensibility kind this representation is meant for (XCDR1 `CDR` serves final and
    /// appendable alike; this returns [`Extensibility::Final`] for it).
    pub const fn extensibility(self) -> Extensibility {
        use Encapsulation::*;
        match self {
            CdrBe | CdrLe | Cdr2Be | Cdr2Le => Extensibility::Final,
            DCdr2Be | DCdr2Le => Extensibility::Appendable,
            PlCdrBe | PlCdrLe | PlCdr2Be | PlCdr2Le => Extensibility::Mutable,
        }
    }
}

impl core::fmt::Display for Encapsulation {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

const fn pick(big: bool, be: Encapsulation, le: Encapsulation) -> Encapsulation {
    if big {
        be
    } else {
        le
    }
}

/// The 4-byte header in front of every serialized payload.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EncapsulationHeader {
    /// The representation of the data that follows.
    pub encapsulation: Encapsulation,
    /// The options field; its two lowest bits count the padding octets at the end of the payload.
    pub options: u16,
}

impl EncapsulationHeader {
    /// Size of the header on the wire.
    pub const LEN: usize = 4;

    /// Reads the header from the first four bytes of `bytes`.
    pub fn parse(bytes: &[u8]) -> Result<EncapsulationHeader, DecodeError> {
        let Some(h) = bytes.get(..4) else {
            return Err(DecodeError::new(
                0,
                DecodeErrorKind::Truncated {
                    needed: 4,
                    remaining: bytes.len(),
                },
            ));
        };
        let id = u16::from_be_bytes([h[0], h[1]]);
        let encapsulation = Encapsulation::from_id(id)
            .ok_or_else(|| DecodeError::new(0, DecodeErrorKind::UnknownEncapsulation(id)))?;
        Ok(EncapsulationHeader {
            encapsulation,
            options: u16::from_be_bytes([h[2], h[3]]),
        })
    }

    /// The number of padding octets the options field announces at the end of the payload.
    pub const fn padding(self) -> usize {
        (self.options & 0x3) as usize
    }

    /// The header as its four wire bytes.
    pub const fn to_bytes(self) -> [u8; 4] {
        let id = self.encapsulation.id().to_be_bytes();
        let opt = self.options.to_be_bytes();
        [id[0], id[1], opt[0], opt[1]]
    }
}
