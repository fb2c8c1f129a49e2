//! Other vendors' deviations from the spec (or from what every other peer does), in one place,
//! as Cyclone DDS's `ddsi_vendor.h` keeps them: each a named predicate on the peer's vendor
//! id, with the peer and version it was seen in and the test or capture that shows it. Code
//! elsewhere asks these questions instead of comparing vendor ids itself, so a reader sees
//! every special case here at a glance.

use tachyon_cdr::KeyForm;
use tachyon_wire::{EntityId, VendorId};

use crate::discovery::ProductVersion;
use crate::Participant;

/// The peer never announces DATA_REPRESENTATION and reads and writes XCDR1 only, whatever its
/// application asked.
///
/// Seen in: Fast DDS 2.9.1 (its discovery code has the parameter commented out, "TODO -
/// Enable when implement XCDR, XCDR2"); Fast DDS 3 announces it and is held to the spec.
/// Evidence: `tests/discovery_data.rs::fastdds_publication` (the capture has no PID) and the
/// interop matrix's `xcdr2` and `large` cases against Fast DDS (docs/interop.md).
/// Used by: SEDP matching (`compat::Unannounced`: such an endpoint matches in XCDR1, and a
/// Tachyon XCDR2 writer converts each sample for such a reader).
pub fn omits_data_representation(vendor: VendorId) -> bool {
    vendor == VendorId::FAST_DDS
}

/// The bitmap base of a pre-emptive ACKNACK (nothing received, nothing requested yet) sent to
/// a writer of `vendor`. The spec wants 1; Fast DDS and RTI Connext send 0 themselves, and Fast
/// DDS answers at once with a HEARTBEAT only that form (to base 1 it restarts its periodic
/// heartbeat timer: 3 s on its discovery endpoints, which is how long a lost SEDP sample then
/// takes to come back). Cyclone DDS accepts base 0 from those two vendors only.
///
/// Seen in: Fast DDS 2.9.1 (a lost Fast DDS DATA(w) came back after 3 s).
/// Evidence: `tests/reader_preemptive_acknack.rs::fast_dds_writers_get_the_form_they_answer`.
pub fn preemptive_acknack_base(vendor: VendorId) -> i64 {
    if vendor == VendorId::FAST_DDS || vendor == VendorId::RTI_CONNEXT {
        0
    } else {
        1
    }
}

/// Disposes and unregisters for a reader of `vendor` carry the key hash only, without the
/// serialized key: the peer derives the instance of a DATA with a serialized key through its
/// type's full deserializer (which fails on a key-only payload) instead of the inline key
/// hash, and so reports the change on a wrong instance. Cyclone DDS needs the serialized key
/// when the key hash is an MD5, so it gets it whenever one of its readers is matched: the
/// writer sends key-hash-only changes when [`every_matched_reader`] has this quirk.
///
/// Seen in: Fast DDS 2.9.1. Evidence: the interop matrix's `dispose` case T>F
/// (docs/interop.md).
pub fn needs_key_hash_only_disposes(vendor: VendorId) -> bool {
    vendor == VendorId::FAST_DDS
}

/// The form of key-only payloads (the serialized key of a dispose or unregister) that a reader
/// of `vendor` at `version` requires, if it requires one: Cyclone DDS 0.10 reads the bare key
/// members only, Cyclone DDS 0.11 and later the key holder of XTypes 1.3 7.2.2.4.7 only
/// (framed as the type frames its members: a DHEADER for an appendable type in XCDR2). Other
/// readers take either (Tachyon's read both; Fast DDS goes by the inline key hash). A writer
/// sends the bare form only when some reader requires it and none requires the other
/// ([`KeyForm::Framed`], the spec's, otherwise).
///
/// Seen in: Cyclone DDS 11.0.1 (a bare appendable key: "deserialization … failed", the
/// dispose dropped) and 0.10.2 (writes and reads bare keys). Evidence: the interop matrix's
/// `dispose_appendable` case against both (docs/interop.md).
pub fn key_payload_form(vendor: VendorId, version: Option<ProductVersion>) -> Option<KeyForm> {
    if vendor != VendorId::CYCLONE_DDS {
        return None;
    }
    match version {
        Some(v) if v < ProductVersion::new(0, 11, 0) => Some(KeyForm::Bare),
        _ => Some(KeyForm::Framed),
    }
}

/// Whether a participant of `vendor` at `version` knows XTypes 1.2's integer kinds only, not
/// 1.3's `int8` and `uint8` (TK_INT8, TK_UINT8). Such a peer describes a `uint8` as `octet`
/// and an `int8` as `char`, so its types are checked with each pair as one primitive
/// ([`tachyon_xtypes::AssignOptions::xtypes_1_2_integers`]: on the wire each is one octet); and it
/// refuses a TypeObject holding TK_UINT8 ("invalid type object") and never matches its
/// endpoint, so it gets our SEDP announcements on its own, without the TypeInformation of
/// such a type (`discovery/older_types.rs`): it then matches by type name.
///
/// Seen in: Cyclone DDS 0.10.2 (the OMG suite's ShapeType, whose `sequence<uint8>
/// additional_payload_size` its idlc announces as `sequence<octet>`, as `tachyon spy typeof`
/// prints; Cyclone DDS 11 announces `uint8`; its idlc writes an `int8` member as TK_CHAR8).
/// Evidence: the OMG suite's T>C and C>T pairs, where every case failed with
/// TYPE_CONSISTENCY_ENFORCEMENT before, and the interop matrix's `uint8` case, where the 0.10
/// peer crashed (docs/interop.md).
pub fn knows_no_xtypes_1_3_integers(vendor: VendorId, version: Option<ProductVersion>) -> bool {
    vendor == VendorId::CYCLONE_DDS
        && matches!(version, Some(v) if v < ProductVersion::new(0, 11, 0))
}

/// A reader of `vendor` learns that a deleted writer's instances are unregistered only for
/// the instances still holding samples, unless the writer sends an unregistration per
/// instance before it goes (as the peer's own writers do). Tachyon's writers do so when
/// [`every_matched_reader`] has this quirk (an unregistration, not a dispose: deleting a
/// writer does not dispose, as RTI Connext, Fast DDS and the OMG suite expect).
///
/// Seen in: Fast DDS 2.9.1 (NOT_ALIVE_NO_WRITERS missing for emptied instances). Evidence:
/// the OMG suite's FinalInstanceState cases T>F (docs/interop.md, docs/qos.md).
pub fn needs_unregister_on_writer_deletion(vendor: VendorId) -> bool {
    vendor == VendorId::FAST_DDS
}

/// Whether local writer `writer` has matched readers and every one of them belongs to a
/// participant whose vendor has `quirk`.
pub fn every_matched_reader(
    p: &Participant,
    writer: EntityId,
    quirk: fn(VendorId) -> bool,
) -> bool {
    let readers = p.matched_readers(writer);
    !readers.is_empty()
        && readers.iter().all(|g| {
            p.discovered_participant(&g.prefix)
                .is_some_and(|d| quirk(d.data.vendor_id))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_quirk_names_its_vendors_only() {
        let others = [
            VendorId::TACHYON,
            VendorId::UNKNOWN,
            VendorId::RTI_CONNEXT,
            VendorId::CYCLONE_DDS,
        ];
        for q in [
            omits_data_representation,
            needs_key_hash_only_disposes,
            needs_unregister_on_writer_deletion,
        ] {
            assert!(q(VendorId::FAST_DDS));
            assert!(others.iter().all(|v| !q(*v)));
        }
        assert_eq!(preemptive_acknack_base(VendorId::FAST_DDS), 0);
        assert_eq!(preemptive_acknack_base(VendorId::RTI_CONNEXT), 0);
        assert_eq!(preemptive_acknack_base(VendorId::CYCLONE_DDS), 1);
        assert_eq!(preemptive_acknack_base(VendorId::TACHYON), 1);
    }

    #[test]
    fn cyclone_releases_require_the_key_form_they_write() {
        let cyclone = |v| key_payload_form(VendorId::CYCLONE_DDS, ProductVersion::parse(v));
        assert_eq!(cyclone("0.10.2"), Some(KeyForm::Bare));
        assert_eq!(cyclone("0.11.0"), Some(KeyForm::Framed));
        assert_eq!(cyclone("11.0.1"), Some(KeyForm::Framed));
        // A Cyclone DDS that does not say: the spec's form.
        assert_eq!(
            key_payload_form(VendorId::CYCLONE_DDS, None),
            Some(KeyForm::Framed)
        );
        assert_eq!(key_payload_form(VendorId::FAST_DDS, None), None);
        assert_eq!(key_payload_form(VendorId::TACHYON, None), None);
    }
}
