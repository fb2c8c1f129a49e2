//! The RTPS port mapping (DDSI-RTPS 2.5, 9.6.1.1): which UDP port a domain and participant use.

use crate::error::TransportError;

/// Parameters of the well-known port formula: `base + domain_gain × domain + d_x`
/// (+ `participant_gain × participant_index` for unicast ports).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PortMapping {
    /// PB: the port of domain 0's SPDP multicast.
    pub base: u32,
    /// DG: distance between two domains.
    pub domain_gain: u32,
    /// PG: distance between two participant indices.
    pub participant_gain: u32,
    /// d0: offset of the SPDP (metatraffic) multicast port.
    pub d0: u32,
    /// d1: offset of the metatraffic unicast port.
    pub d1: u32,
    /// d2: offset of the user-data multicast port.
    pub d2: u32,
    /// d3: offset of the user-data unicast port.
    pub d3: u32,
}

impl Default for PortMapping {
    fn default() -> Self {
        PortMapping {
            base: 7400,
            domain_gain: 250,
            participant_gain: 2,
            d0: 0,
            d1: 10,
            d2: 1,
            d3: 11,
        }
    }
}

/// Which of the four well-known ports a computation is for (used in error messages).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PortKind {
    /// SPDP / metatraffic multicast (d0).
    SpdpMulticast,
    /// Metatraffic unicast (d1).
    SpdpUnicast,
    /// User-data multicast (d2).
    UserMulticast,
    /// User-data unicast (d3).
    UserUnicast,
}

impl std::fmt::Display for PortKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PortKind::SpdpMulticast => "metatraffic multicast",
            PortKind::SpdpUnicast => "metatraffic unicast",
            PortKind::UserMulticast => "user-data multicast",
            PortKind::UserUnicast => "user-data unicast",
        })
    }
}

impl PortMapping {
    /// The largest domain id the spec's port mapping allows (with the default parameters it is
    /// the last domain whose ports stay below 65536).
    pub const MAX_DOMAIN_ID: u32 = 232;

    /// The SPDP multicast port of `domain` (7400 + 250·domain with the defaults).
    pub fn spdp_multicast(&self, domain: u32) -> Result<u16, TransportError> {
        self.port(PortKind::SpdpMulticast, domain, None)
    }

    /// The metatraffic unicast port of participant `participant_index` in `domain`.
    pub fn spdp_unicast(&self, domain: u32, participant_index: u32) -> Result<u16, TransportError> {
        self.port(PortKind::SpdpUnicast, domain, Some(participant_index))
    }

    /// The user-data multicast port of `domain`.
    pub fn user_multicast(&self, domain: u32) -> Result<u16, TransportError> {
        self.port(PortKind::UserMulticast, domain, None)
    }

    /// The user-data unicast port of participant `participant_index` in `domain`.
    pub fn user_unicast(&self, domain: u32, participant_index: u32) -> Result<u16, TransportError> {
        self.port(PortKind::UserUnicast, domain, Some(participant_index))
    }

    /// Any of the four ports; `participant_index` is ignored for the multicast ones.
    pub fn port(
        &self,
        kind: PortKind,
        domain: u32,
        participant_index: Option<u32>,
    ) -> Result<u16, TransportError> {
        let (offset, index) = match kind {
            PortKind::SpdpMulticast => (self.d0, 0),
            PortKind::UserMulticast => (self.d2, 0),
            PortKind::SpdpUnicast => (self.d1, participant_index.unwrap_or(0)),
            PortKind::UserUnicast => (self.d3, participant_index.unwrap_or(0)),
        };
        // u64 arithmetic cannot overflow: every term is below 2^32 · 2^32.
        let port = u64::from(self.base)
            + u64::from(self.domain_gain) * u64::from(domain)
            + u64::from(self.participant_gain) * u64::from(index)
            + u64::from(offset);
        if domain > Self::MAX_DOMAIN_ID {
            return Err(TransportError::DomainIdOutOfRange {
                domain_id: domain,
                kind,
                port,
            });
        }
        match u16::try_from(port) {
            Ok(p) if p != 0 => Ok(p),
            _ => Err(TransportError::PortOutOfRange {
                domain_id: domain,
                participant_index,
                kind,
                port,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_mapping_matches_the_spec_table() {
        let m = PortMapping::default();
        assert_eq!(m.spdp_multicast(0).unwrap(), 7400);
        assert_eq!(m.user_multicast(0).unwrap(), 7401);
        assert_eq!(m.spdp_unicast(0, 0).unwrap(), 7410);
        assert_eq!(m.user_unicast(0, 0).unwrap(), 7411);
        assert_eq!(m.spdp_unicast(0, 1).unwrap(), 7412);
        assert_eq!(m.user_unicast(0, 1).unwrap(), 7413);
        assert_eq!(m.spdp_unicast(0, 9).unwrap(), 7428);
        assert_eq!(m.user_unicast(0, 9).unwrap(), 7429);
        assert_eq!(m.spdp_multicast(1).unwrap(), 7650);
        assert_eq!(m.user_unicast(1, 2).unwrap(), 7665);
        assert_eq!(m.spdp_multicast(232).unwrap(), 65400);
        assert_eq!(m.user_unicast(232, 0).unwrap(), 65411);
    }

    #[test]
    fn domain_above_232_is_an_error_naming_domain_and_port() {
        let err = PortMapping::default().spdp_multicast(233).unwrap_err();
        assert!(matches!(
            err,
            TransportError::DomainIdOutOfRange {
                domain_id: 233,
                port: 65650,
                ..
            }
        ));
        let msg = err.to_string();
        assert!(msg.contains("233") && msg.contains("65650"), "{msg}");
    }

    #[test]
    fn port_above_65535_is_an_error_naming_domain_and_port() {
        let err = PortMapping::default().user_unicast(232, 100).unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(err, TransportError::PortOutOfRange { port: 65611, .. }),
            "{msg}"
        );
        assert!(msg.contains("232") && msg.contains("65611"), "{msg}");
        let custom = PortMapping {
            base: 65000,
            ..PortMapping::default()
        };
        assert!(custom.spdp_multicast(3).is_err());
        assert!(PortMapping::default().spdp_unicast(0, u32::MAX).is_err());
    }
}
