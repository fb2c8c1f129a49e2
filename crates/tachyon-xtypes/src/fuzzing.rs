//! The entry point of the `type_object` fuzz target (and of the corpus replay test): bytes
//! from the network decoded as a TypeObject, a TypeInformation and a TypeLookup request and
//! reply must give a value or an
//! error, never a panic, a stack overflow or an allocation out of proportion to the input;
//! what decodes must write back to bytes that decode to the same thing.

use tachyon_cdr::Endianness;

use crate::{LookupReply, LookupRequest, TypeInformation, TypeObject};

/// Decodes `data` (after a first byte choosing the byte order) as a TypeObject and as a
/// TypeInformation, and checks that whatever decodes survives a round trip.
pub fn fuzz_type_object(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let endian = if first & 1 == 0 {
        Endianness::Little
    } else {
        Endianness::Big
    };
    if let Ok(obj) = TypeObject::from_bytes(rest, endian) {
        let bytes = match obj.to_bytes() {
            Ok(b) => b,
            Err(e) => panic!("a decoded TypeObject does not encode: {e}"),
        };
        let again = TypeObject::from_bytes(&bytes, Endianness::Little)
            .unwrap_or_else(|e| panic!("a re-encoded TypeObject does not decode: {e}"));
        assert_eq!(again.to_bytes().ok(), Some(bytes), "TypeObject round trip");
    }
    if let Ok(info) = TypeInformation::from_bytes(rest, endian) {
        let bytes = info
            .to_bytes()
            .unwrap_or_else(|e| panic!("a decoded TypeInformation does not encode: {e}"));
        let again = TypeInformation::from_bytes(&bytes, Endianness::Little)
            .unwrap_or_else(|e| panic!("a re-encoded TypeInformation does not decode: {e}"));
        assert_eq!(again, info, "TypeInformation round trip");
    }
    // TypeLookup messages carry their own encapsulation header.
    if let Ok(req) = LookupRequest::from_payload(data) {
        let bytes = req
            .to_payload()
            .unwrap_or_else(|e| panic!("a decoded TypeLookup request does not encode: {e}"));
        let again = LookupRequest::from_payload(&bytes)
            .unwrap_or_else(|e| panic!("a re-encoded TypeLookup request does not decode: {e}"));
        assert_eq!(again.to_payload().ok(), Some(bytes), "request round trip");
    }
    if let Ok(reply) = LookupReply::from_payload(data) {
        let bytes = reply
            .to_payload()
            .unwrap_or_else(|e| panic!("a decoded TypeLookup reply does not encode: {e}"));
        let again = LookupReply::from_payload(&bytes)
            .unwrap_or_else(|e| panic!("a re-encoded TypeLookup reply does not decode: {e}"));
        assert_eq!(again.to_payload().ok(), Some(bytes), "reply round trip");
    }
}
