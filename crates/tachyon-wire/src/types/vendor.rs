//! Vendor ids (OMG-assigned) and the RTPS protocol version.

use crate::bytes::{Codec, Reader, Writer};
use crate::error::{EmitError, WireError};
use std::fmt;

/// The 2-byte vendor id of the implementation that sent a message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct VendorId(pub [u8; 2]);

impl VendorId {
    /// VENDORID_UNKNOWN.
    pub const UNKNOWN: VendorId = VendorId([0x00, 0x00]);
    /// RTI Connext DDS.
    pub const RTI_CONNEXT: VendorId = VendorId([0x01, 0x01]);
    /// ADLINK OpenSplice DDS.
    pub const OPENSPLICE: VendorId = VendorId([0x01, 0x02]);
    /// Object Computing OpenDDS.
    pub const OPENDDS: VendorId = VendorId([0x01, 0x03]);
    /// MilSoft Mil-DDS.
    pub const MILDDS: VendorId = VendorId([0x01, 0x04]);
    /// Kongsberg InterCOM DDS.
    pub const INTERCOM_DDS: VendorId = VendorId([0x01, 0x05]);
    /// Twin Oaks CoreDX DDS.
    pub const COREDX: VendorId = VendorId([0x01, 0x06]);
    /// Lakota Technical Solutions.
    pub const LAKOTA: VendorId = VendorId([0x01, 0x07]);
    /// ICOUP Consulting.
    pub const ICOUP: VendorId = VendorId([0x01, 0x08]);
    /// ETRI Diamond DDS.
    pub const DIAMOND_DDS: VendorId = VendorId([0x01, 0x09]);
    /// RTI Connext DDS Micro.
    pub const RTI_CONNEXT_MICRO: VendorId = VendorId([0x01, 0x0a]);
    /// ADLINK Vortex Cafe.
    pub const VORTEX_CAFE: VendorId = VendorId([0x01, 0x0b]);
    /// ADLINK Vortex Gateway.
    pub const VORTEX_GATEWAY: VendorId = VendorId([0x01, 0x0c]);
    /// ADLINK Vortex Lite.
    pub const VORTEX_LITE: VendorId = VendorId([0x01, 0x0d]);
    /// Technicolor Qeo.
    pub const QEO: VendorId = VendorId([0x01, 0x0e]);
    /// eProsima Fast DDS.
    pub const FAST_DDS: VendorId = VendorId([0x01, 0x0f]);
    /// Eclipse Cyclone DDS.
    pub const CYCLONE_DDS: VendorId = VendorId([0x01, 0x10]);
    /// GurumNetworks GurumDDS.
    pub const GURUM_DDS: VendorId = VendorId([0x01, 0x11]);
    /// Atostek RustDDS.
    pub const RUSTDDS: VendorId = VendorId([0x01, 0x12]);
    /// Zhenrong Data Technology ZRDDS.
    pub const ZRDDS: VendorId = VendorId([0x01, 0x13]);
    /// Dust Technologies Dust DDS.
    pub const DUST_DDS: VendorId = VendorId([0x01, 0x14]);
    /// Tachyon DDS. 0x01F0 is not assigned by the OMG; it is a placeholder chosen far above the
    /// assigned range until the project requests an official id.
    pub const TACHYON: VendorId = VendorId([0x01, 0xf0]);

    /// The vendor's product name if the id is known.
    #[inline]
    pub fn name(self) -> Option<&'static str> {
        Some(match self {
            Self::UNKNOWN => "unknown",
            Self::RTI_CONNEXT => "RTI Connext DDS",
            Self::OPENSPLICE => "OpenSplice DDS",
            Self::OPENDDS => "OpenDDS",
            Self::MILDDS => "Mil-DDS",
            Self::INTERCOM_DDS => "InterCOM DDS",
            Self::COREDX => "CoreDX DDS",
            Self::LAKOTA => "Lakota",
            Self::ICOUP => "ICOUP",
            Self::DIAMOND_DDS => "Diamond DDS",
            Self::RTI_CONNEXT_MICRO => "RTI Connext Micro",
            Self::VORTEX_CAFE => "Vortex Cafe",
            Self::VORTEX_GATEWAY => "Vortex Gateway",
            Self::VORTEX_LITE => "Vortex Lite",
            Self::QEO => "Qeo",
            Self::FAST_DDS => "Fast DDS",
            Self::CYCLONE_DDS => "Cyclone DDS",
            Self::GURUM_DDS => "GurumDDS",
            Self::RUSTDDS => "RustDDS",
            Self::ZRDDS => "ZRDDS",
            Self::DUST_DDS => "Dust DDS",
            Self::TACHYON => "Tachyon DDS",
            _ => return None,
        })
    }
}

/// The RTPS protocol version (major, minor).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ProtocolVersion {
    /// Major version (2 for every RTPS 2.x).
    pub major: u8,
    /// Minor version.
    pub minor: u8,
}

impl ProtocolVersion {
    /// RTPS 2.1.
    pub const V2_1: ProtocolVersion = ProtocolVersion { major: 2, minor: 1 };
    /// RTPS 2.2.
    pub const V2_2: ProtocolVersion = ProtocolVersion { major: 2, minor: 2 };
    /// RTPS 2.3.
    pub const V2_3: ProtocolVersion = ProtocolVersion { major: 2, minor: 3 };
    /// RTPS 2.4.
    pub const V2_4: ProtocolVersion = ProtocolVersion { major: 2, minor: 4 };
    /// RTPS 2.5, the version this crate implements.
    pub const V2_5: ProtocolVersion = ProtocolVersion { major: 2, minor: 5 };
}

impl Codec for VendorId {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        Ok(VendorId(r.array()?))
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put(&self.0)
    }
}

impl Codec for ProtocolVersion {
    #[inline]
    fn decode(r: &mut Reader<'_>) -> Result<Self, WireError> {
        let [major, minor] = r.array()?;
        Ok(ProtocolVersion { major, minor })
    }
    #[inline]
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EmitError> {
        w.put(&[self.major, self.minor])
    }
}

impl fmt::Display for VendorId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02x}{:02x}", self.0[0], self.0[1])?;
        if let Some(name) = self.name() {
            write!(f, " ({name})")?;
        }
        Ok(())
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}
