#![allow(dead_code)] // each test uses the part it needs
//! Participants with discovery on made-up addresses (10.0.0.n), for tests that hand datagrams
//! between them by hand: participant `n` has prefix `01 f0 … n` and every locator at
//! 10.0.0.n:7410; SPDP goes to 10.0.0.200 (the tests deliver it wherever they like).

use tachyon_proto::discovery::DiscoveryConfig;
use tachyon_proto::{Participant, ParticipantConfig};
use tachyon_wire::{GuidPrefix, Locator};

/// The GUID prefix of participant `n`.
pub fn prefix(n: u8) -> GuidPrefix {
    GuidPrefix([0x01, 0xf0, 0, 0, 0, 0, 0, 0, 0, 0, 0, n])
}

/// 10.0.0.n:7410 over UDPv4.
pub fn locator(n: u8) -> Locator {
    let mut address = [0u8; 16];
    address[12..].copy_from_slice(&[10, 0, 0, n]);
    Locator {
        kind: Locator::KIND_UDPV4,
        port: 7410,
        address,
    }
}

/// The discovery configuration of participant `n`.
pub fn discovery_config(n: u8) -> DiscoveryConfig {
    DiscoveryConfig {
        spdp_destinations: vec![locator(200)],
        metatraffic_unicast: vec![locator(n)],
        default_unicast: vec![locator(n)],
        ..DiscoveryConfig::default()
    }
}

/// Participant `n`, discovering.
pub fn participant(n: u8) -> Participant {
    with_config(n, discovery_config(n))
}

/// Participant `n` with discovery configured by `config`.
pub fn with_config(n: u8, config: DiscoveryConfig) -> Participant {
    Participant::with_discovery(prefix(n), ParticipantConfig::default(), config)
}
