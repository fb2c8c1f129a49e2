//! The entry point of the `type_object` fuzz target (and of the corpus replay test): bytes
//! from the network decoded as a TypeObject, a TypeInformation and a TypeLookup request and
//! reply must give a value or an
//! error, never a panic, a stack overflow or an allocation out of proportion to the input;
//! what decodes must write back to bytes that decode to the same thing.

use tachyon_cdr::Endianness;

use std::sync::Arc;

use tachyon_cdr::{
    CaseDesc, EnumDesc, EnumLiteral, Extensibility, MemberDesc, Primitive, StructDesc, TypeDesc,
    UnionDesc,
};

use crate::dynamic;
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
    fuzz_dynamic(data);
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

/// Types whose samples the dynamic decoder reads from the fuzz input: every extensibility,
/// optional members, strings, sequences, arrays, an enum and a union.
fn fuzz_types() -> Vec<TypeDesc> {
    let p = TypeDesc::Primitive;
    let inner = TypeDesc::Struct(Arc::new(StructDesc {
        name: "Inner".into(),
        extensibility: Extensibility::Appendable,
        autoid_hash: false,
        nested: false,
        base: None,
        members: vec![
            MemberDesc::new("a", 0, p(Primitive::Int16)),
            MemberDesc::new(
                "b",
                1,
                TypeDesc::String {
                    wide: false,
                    bound: 8,
                },
            ),
        ],
    }));
    let color = TypeDesc::Enum(Arc::new(EnumDesc {
        name: "Color".into(),
        bit_bound: 32,
        literals: ["RED", "GREEN", "BLUE"]
            .iter()
            .zip(0..)
            .map(|(n, v)| EnumLiteral {
                name: (*n).into(),
                value: v,
                default: false,
            })
            .collect(),
    }));
    let choice = TypeDesc::Union(Arc::new(UnionDesc {
        name: "Choice".into(),
        extensibility: Extensibility::Final,
        nested: false,
        discriminator: p(Primitive::Int32),
        discriminator_key: false,
        cases: vec![
            CaseDesc {
                name: "l".into(),
                id: 0,
                ty: p(Primitive::Int64),
                labels: vec![1],
                default: false,
                external: false,
            },
            CaseDesc {
                name: "i".into(),
                id: 1,
                ty: inner.clone(),
                labels: vec![2, 3],
                default: false,
                external: false,
            },
            CaseDesc {
                name: "s".into(),
                id: 2,
                ty: TypeDesc::String {
                    wide: false,
                    bound: 0,
                },
                labels: vec![],
                default: true,
                external: false,
            },
        ],
    }));
    let mut opt = MemberDesc::new("opt", 5, inner.clone());
    opt.optional = true;
    let members = vec![
        MemberDesc::new("flag", 0, p(Primitive::Boolean)),
        MemberDesc::new("c", 1, p(Primitive::Char8)),
        MemberDesc::new("d", 2, p(Primitive::Float64)),
        MemberDesc::new(
            "seq",
            3,
            TypeDesc::Sequence {
                element: Box::new(inner.clone()),
                bound: 4,
            },
        ),
        MemberDesc::new(
            "arr",
            4,
            TypeDesc::Array {
                element: Box::new(color.clone()),
                dims: vec![2, 2],
            },
        ),
        opt,
        MemberDesc::new("u", 6, choice),
        MemberDesc::new(
            "bytes",
            7,
            TypeDesc::Sequence {
                element: Box::new(p(Primitive::Byte)),
                bound: 0,
            },
        ),
    ];
    [
        Extensibility::Final,
        Extensibility::Appendable,
        Extensibility::Mutable,
    ]
    .into_iter()
    .map(|extensibility| {
        TypeDesc::Struct(Arc::new(StructDesc {
            name: "Fuzz".into(),
            extensibility,
            autoid_hash: false,
            nested: false,
            base: None,
            members: members.clone(),
        }))
    })
    .collect()
}

/// Reads `data` (a serialized sample, header included) as each fuzz type; what decodes
/// must encode and decode again to the same value.
fn fuzz_dynamic(data: &[u8]) {
    let Ok(header) = tachyon_cdr::EncapsulationHeader::parse(data) else {
        return;
    };
    let (version, endian) = (
        header.encapsulation.version(),
        header.encapsulation.endianness(),
    );
    for t in fuzz_types() {
        let Ok(v) = dynamic::decode(&t, data) else {
            continue;
        };
        let bytes = dynamic::encode(&t, &v, version, endian)
            .unwrap_or_else(|e| panic!("a decoded value does not encode: {e}"));
        let again = dynamic::decode(&t, &bytes)
            .unwrap_or_else(|e| panic!("a re-encoded value does not decode: {e}"));
        assert_eq!(again.to_json(), v.to_json(), "dynamic round trip");
    }
}
