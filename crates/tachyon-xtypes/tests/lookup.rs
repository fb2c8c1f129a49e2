//! TypeLookup requests and replies: their layout (what Cyclone DDS 11 and Fast DDS 3 put on
//! the wire), round trips, and refusal of what does not decode.

use tachyon_cdr::DdsType;
use tachyon_xtypes::lookup::{instance_name, remote_ex, GET_DEPENDENCIES, GET_TYPES};
use tachyon_xtypes::{
    LookupCall, LookupReply, LookupRequest, LookupReturn, SampleIdentity, TypeIdWithSize,
    TypeRepresentations,
};

#[derive(DdsType)]
#[dds(name = "Inner")]
struct Inner {
    a: i16,
    b: f64,
}

#[derive(DdsType)]
#[dds(name = "Outer", appendable)]
struct Outer {
    #[dds(key)]
    id: i32,
    inners: Vec<Inner>,
}

fn reps() -> TypeRepresentations {
    TypeRepresentations::of(&Outer::type_desc().expect("described")).expect("representable")
}

fn id() -> SampleIdentity {
    SampleIdentity {
        writer_guid: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0, 3, 0, 0xc3],
        sequence: (7 << 32) | 5,
    }
}

#[test]
fn a_get_types_request_is_laid_out_as_cyclone_writes_it() {
    let r = reps();
    let req = LookupRequest {
        id: id(),
        instance_name: instance_name(&[0xab; 12]),
        call: LookupCall::GetTypes(vec![r.minimal.id.clone()]),
    };
    let b = req.to_payload().expect("encodes");
    // CDR2_LE, options holding the padding count.
    assert_eq!(&b[..3], &[0x00, 0x07, 0x00]);
    assert!(
        b[3] <= 3 && b.len() % 4 == 0,
        "padded to 4, the padding counted"
    );
    // SampleIdentity: the GUID in wire order, then high and low of the sequence number.
    assert_eq!(&b[4..20], &id().writer_guid);
    assert_eq!(&b[20..24], &7i32.to_le_bytes());
    assert_eq!(&b[24..28], &5u32.to_le_bytes());
    // InstanceName: "dds.builtin.TOS." + 24 hex of the prefix + "000001c1", with its NUL.
    let name = "dds.builtin.TOS.abababababababababababab000001c1";
    assert_eq!(&b[28..32], &(name.len() as u32 + 1).to_le_bytes());
    assert_eq!(&b[32..32 + name.len()], name.as_bytes());
    // Then (aligned) the call union's DHEADER, the getTypes discriminator, the _In struct's
    // DHEADER and the EMHEADER of type_ids with LC 5.
    let at = (32 + name.len() + 1 + 3) & !3;
    assert_eq!(&b[at + 4..at + 8], &GET_TYPES.to_le_bytes());
    assert_eq!(&b[at + 12..at + 16], &0x5c53_6065u32.to_le_bytes());
    assert_eq!(LookupRequest::from_payload(&b).expect("decodes"), req);
}

#[test]
fn replies_round_trip() {
    let r = reps();
    let types: Vec<_> = r
        .minimal
        .entries()
        .chain(r.complete.entries())
        .map(|e| (e.id.clone(), e.object.clone()))
        .collect();
    assert_eq!(types.len(), 4);
    for ret in [
        LookupReturn::Types {
            types,
            complete_to_minimal: vec![(r.complete.id.clone(), r.minimal.id.clone())],
        },
        LookupReturn::Dependencies {
            ids: vec![TypeIdWithSize {
                id: r.minimal.dependencies[0].id.clone(),
                size: 55,
            }],
            continuation: vec![0, 0, 0, 1],
        },
        LookupReturn::Failed {
            operation: GET_DEPENDENCIES,
            code: 1,
        },
    ] {
        let reply = LookupReply {
            related: id(),
            remote_ex: remote_ex::OK,
            ret,
        };
        let b = reply.to_payload().expect("encodes");
        assert_eq!(LookupReply::from_payload(&b).expect("decodes"), reply);
    }
}

#[test]
fn dependencies_requests_round_trip() {
    let r = reps();
    let req = LookupRequest {
        id: id(),
        instance_name: instance_name(&[1; 12]),
        call: LookupCall::GetDependencies {
            ids: vec![r.complete.id.clone()],
            continuation: Vec::new(),
        },
    };
    let b = req.to_payload().expect("encodes");
    assert_eq!(LookupRequest::from_payload(&b).expect("decodes"), req);
}

#[test]
fn what_is_not_a_type_lookup_message_is_an_error() {
    assert!(LookupRequest::from_payload(&[]).is_err());
    assert!(LookupRequest::from_payload(&[0, 1, 0, 0, 1, 2, 3]).is_err());
    let r = reps();
    let req = LookupRequest {
        id: id(),
        instance_name: instance_name(&[1; 12]),
        call: LookupCall::GetTypes(vec![r.minimal.id.clone()]),
    };
    let b = req.to_payload().expect("encodes");
    for cut in 4..b.len() - 4 {
        let _ = LookupRequest::from_payload(&b[..cut]);
        let _ = LookupReply::from_payload(&b[..cut]);
    }
}
