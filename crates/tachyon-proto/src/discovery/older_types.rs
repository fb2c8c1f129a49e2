//! Endpoint announcements for peers that know XTypes 1.2's integer kinds only.
//!
//! XTypes 1.3 added `int8` and `uint8` (TK_INT8, TK_UINT8). Cyclone DDS 0.10 predates them: its
//! idlc describes a `uint8` as `octet` and an `int8` as `char` (TK_BYTE, TK_CHAR8), and a
//! TypeObject holding TK_UINT8 is "invalid" to it (the interop matrix's 0.10 peer crashed on one),
//! so it never matches an endpoint that announces such a type (it asks for the TypeObject with
//! TypeLookup and refuses what it gets; some 0.10.2 builds are reported to crash on it).
//!
//! Such a peer ([`crate::quirks::knows_no_xtypes_1_3_integers`]) therefore gets our SEDP
//! announcements on its own (served alone, as a discovery server serves each client, through
//! the SEDP writers' transcoder), and the announcement of an endpoint whose type uses `int8` or
//! `uint8` reaches it without PID_TYPE_INFORMATION: it matches by type name, as with a peer
//! that announces no type (Fast DDS 2.x). Every other announcement, and everything to other
//! peers, is unchanged. On our side the check of its types takes `uint8` for `octet` and
//! `int8` for `char` ([`tachyon_xtypes::AssignOptions::xtypes_1_2_integers`]).

use std::collections::HashSet;
use std::sync::{Arc, RwLock};

use tachyon_wire::parameter::payload::ParameterListPayloadView;
use tachyon_wire::parameter::pid;
use tachyon_wire::{Endian, GuidPrefix};

use super::server::sedp_pairs;
use super::Discovery;
use crate::participant::Participant;
use crate::qos::DataRepresentation;
use crate::time::Instant;
use crate::writer::Transcoder;

/// What the SEDP writers' transcoder leaves out, and for whom; shared with it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Unreadable(Arc<RwLock<State>>);

#[derive(Debug, Default)]
struct State {
    /// The encoded TypeInformation of each local type that uses `int8` or `uint8`.
    types: Vec<Vec<u8>>,
    /// The participants that know XTypes 1.2's integers only.
    peers: HashSet<GuidPrefix>,
}

impl Unreadable {
    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.0.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Notes a local type's TypeInformation (as announced: `TypeInformation::to_bytes`).
    pub(crate) fn add_type(&self, encoded: Vec<u8>) {
        let mut s = self.write();
        if !s.types.contains(&encoded) {
            s.types.push(encoded);
        }
    }

    /// Participant `prefix` knows XTypes 1.2's integers only (`true`), or is gone (`false`).
    pub(crate) fn set_peer(&self, prefix: GuidPrefix, older: bool) {
        let mut s = self.write();
        if older {
            s.peers.insert(prefix);
        } else {
            s.peers.remove(&prefix);
        }
    }

    /// The SEDP writers' transcoder: for a reader of a participant that knows XTypes 1.2's
    /// integers only, an announcement without the TypeInformation of a type noted here;
    /// anything else, and for any other reader (a discovery server serves each client through
    /// it), as it is.
    pub(crate) fn transcoder(&self) -> Transcoder {
        let shared = self.clone();
        Arc::new(move |payload, _, reader| {
            let s = shared.0.read().unwrap_or_else(|e| e.into_inner());
            let stripped = if s.peers.contains(&reader.prefix) {
                without_type_information(payload, &s.types)
            } else {
                None
            };
            Some(stripped.unwrap_or_else(|| payload.to_vec()))
        })
    }
}

/// `payload` (a PL_CDR SEDP announcement) without its PID_TYPE_INFORMATION when that is one
/// of `unreadable`; `None` when it is not such an announcement, or keeps it.
fn without_type_information(payload: &[u8], unreadable: &[Vec<u8>]) -> Option<Vec<u8>> {
    let view = ParameterListPayloadView::parse(payload).ok()?;
    let list = view.list();
    let is_type_info = |p: u16| p & 0x3fff == pid::TYPE_INFORMATION && p & 0x8000 == 0;
    let found = list
        .iter()
        .any(|p| is_type_info(p.pid) && unreadable.iter().any(|u| p.value.starts_with(u)));
    if !found {
        return None;
    }
    let endian = list.endian();
    let u16_bytes = |v: u16| match endian {
        Endian::Little => v.to_le_bytes(),
        Endian::Big => v.to_be_bytes(),
    };
    let mut out = Vec::with_capacity(payload.len());
    out.extend_from_slice(payload.get(..4)?);
    for p in list.iter().filter(|p| !is_type_info(p.pid)) {
        out.extend_from_slice(&u16_bytes(p.pid));
        out.extend_from_slice(&u16_bytes(u16::try_from(p.value.len()).ok()?));
        out.extend_from_slice(p.value);
    }
    out.extend_from_slice(&u16_bytes(pid::SENTINEL));
    out.extend_from_slice(&u16_bytes(list.sentinel_length()));
    out.extend_from_slice(view.trailing());
    Some(out)
}

impl Participant {
    /// Participant `prefix` knows XTypes 1.2's integer kinds only: its SEDP readers are served
    /// alone, through the transcoder that leaves out what it cannot read.
    pub(super) fn serve_sedp_alone(&mut self, now: Instant, d: &Discovery, prefix: GuidPrefix) {
        d.types.unreadable.set_peer(prefix, true);
        for (writer, reader) in sedp_pairs(prefix) {
            self.set_reader_representation(now, writer, &reader, Some(DataRepresentation::Xcdr1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tachyon_wire::parameter::payload::encapsulation;
    use tachyon_wire::{EntityId, Guid};

    fn param(out: &mut Vec<u8>, pid: u16, value: &[u8]) {
        out.extend_from_slice(&pid.to_le_bytes());
        out.extend_from_slice(&(value.len() as u16).to_le_bytes());
        out.extend_from_slice(value);
    }

    fn announcement(type_info: &[u8]) -> Vec<u8> {
        let mut p = encapsulation::PL_CDR_LE.to_be_bytes().to_vec();
        p.extend_from_slice(&[0, 0]);
        param(
            &mut p,
            pid::TOPIC_NAME,
            &[7, 0, 0, 0, b'S', b'q', b'u', b'a', b'r', b'e', 0, 0],
        );
        param(&mut p, pid::TYPE_INFORMATION, type_info);
        param(&mut p, pid::TYPE_NAME, &[2, 0, 0, 0, b'T', 0, 0, 0]);
        param(&mut p, pid::SENTINEL, &[]);
        p
    }

    #[test]
    fn only_the_type_information_of_an_unreadable_type_is_left_out() {
        let uint8 = vec![0xaa; 16];
        let other = vec![0xbb; 16];
        let with = announcement(&uint8);
        let stripped =
            without_type_information(&with, std::slice::from_ref(&uint8)).expect("left out");
        let view = ParameterListPayloadView::parse(&stripped).expect("still a list");
        let pids: Vec<u16> = view.list().iter().map(|p| p.pid).collect();
        assert_eq!(pids, vec![pid::TOPIC_NAME, pid::TYPE_NAME]);
        assert_eq!(stripped.len(), with.len() - 4 - 16);
        // Another type's, or no list of such types: unchanged.
        assert_eq!(
            without_type_information(&announcement(&other), std::slice::from_ref(&uint8)),
            None
        );
        assert_eq!(without_type_information(&with, &[]), None);
        // The transcoder passes everything else through as it is, and everything to the
        // readers of other participants (a discovery server's clients).
        let (older, newer) = (GuidPrefix([1; 12]), GuidPrefix([2; 12]));
        let reader = |prefix| Guid::new(prefix, EntityId::SEDP_PUBLICATIONS_READER);
        let u = Unreadable::default();
        let t = u.transcoder();
        let x1 = DataRepresentation::Xcdr1;
        u.set_peer(older, true);
        assert_eq!(t(&with, x1, &reader(older)), Some(with.clone()));
        u.add_type(uint8.clone());
        u.add_type(uint8);
        assert_eq!(u.0.read().expect("lock").types.len(), 1, "noted once");
        assert_eq!(t(&with, x1, &reader(older)), Some(stripped));
        assert_eq!(t(&with, x1, &reader(newer)), Some(with.clone()));
        let garbage = vec![0u8, 3, 0, 0, 9];
        assert_eq!(t(&garbage, x1, &reader(older)), Some(garbage.clone()));
        u.set_peer(older, false);
        assert_eq!(t(&with, x1, &reader(older)), Some(with));
    }
}
