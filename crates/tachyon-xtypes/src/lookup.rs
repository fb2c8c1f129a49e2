//! The TypeLookup service's messages (XTypes 1.3, 7.6.3.3): `TypeLookup_Request` and
//! `TypeLookup_Reply`, as Cyclone DDS 11 and Fast DDS 3 put them on the wire: XCDR2 with a
//! `CDR2_LE` encapsulation, the request and reply and their RPC headers `@final`, the call,
//! return and result unions `@appendable` (a DHEADER before the discriminator), the `_In` and
//! `_Out` structs `@mutable` with hashed member ids, and the reply carrying a `ReplyHeader`
//! (the spec's IDL says `RequestHeader`, a known typo both peers correct).

use tachyon_cdr::{DecodeError, DecodeErrorKind, EncodeError, Endianness, Reader, Writer};

use crate::codec::{appendable, read_appendable, read_seq, read_seq_with, write_seq_with, Codec};
use crate::identifier::TypeIdentifier;
use crate::information::TypeIdWithSize;
use crate::object::TypeObject;

/// The discriminator of `getTypes` (`@hashid("getTypes")`).
pub const GET_TYPES: i32 = 0x018252d3;
/// The discriminator of `getTypeDependencies` (`@hashid("getDependencies")`).
pub const GET_DEPENDENCIES: i32 = 0x05aafb31;

const M_TYPE_IDS: u32 = 0x0c536065;
const M_CONTINUATION: u32 = 0x0508e3d2;
const M_TYPES: u32 = 0x02804ad1;
const M_COMPLETE_TO_MINIMAL: u32 = 0x0b8e6577;
const M_DEPENDENT_TYPEIDS: u32 = 0x0ba4dfc9;

/// `InstanceName` is a `string<255>`.
const INSTANCE_NAME_MAX: u32 = 255;
/// `continuation_point` is a `sequence<octet, 32>`.
const CONTINUATION_MAX: u32 = 32;

/// `RemoteExceptionCode`
pub mod remote_ex {
    /// `REMOTE_EX_OK`
    pub const OK: u32 = 0;
    /// `REMOTE_EX_UNSUPPORTED`
    pub const UNSUPPORTED: u32 = 1;
    /// `REMOTE_EX_INVALID_ARGUMENT`
    pub const INVALID_ARGUMENT: u32 = 2;
    /// `REMOTE_EX_OUT_OF_RESOURCES`
    pub const OUT_OF_RESOURCES: u32 = 3;
    /// `REMOTE_EX_UNKNOWN_OPERATION`
    pub const UNKNOWN_OPERATION: u32 = 4;
    /// `REMOTE_EX_UNKNOWN_EXCEPTION`
    pub const UNKNOWN_EXCEPTION: u32 = 5;
}

/// Identifies a request (DDS-RPC `SampleIdentity`): the requesting writer's GUID and a
/// sequence number the requester chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SampleIdentity {
    /// The request writer's GUID, in wire order.
    pub writer_guid: [u8; 16],
    /// The request's sequence number.
    pub sequence: i64,
}

impl SampleIdentity {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        w.write_bytes(&self.writer_guid)?;
        w.write_i32((self.sequence >> 32) as i32)?;
        w.write_u32(self.sequence as u32)
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        let writer_guid = crate::codec::read_array(r)?;
        let high = r.read_i32()?;
        let low = r.read_u32()?;
        Ok(SampleIdentity {
            writer_guid,
            sequence: (i64::from(high) << 32) | i64::from(low),
        })
    }
}

/// What a request asks.
#[derive(Debug, Clone, PartialEq)]
pub enum LookupCall {
    /// `getTypes`: the TypeObjects of these identifiers.
    GetTypes(Vec<TypeIdentifier>),
    /// `getTypeDependencies`: the identifiers these types depend on, a page at a time.
    GetDependencies {
        /// The types.
        ids: Vec<TypeIdentifier>,
        /// Where the previous page ended (empty for the first).
        continuation: Vec<u8>,
    },
    /// An operation this implementation does not know (its discriminator).
    Unknown(i32),
}

/// `TypeLookup_Request`
#[derive(Debug, Clone, PartialEq)]
pub struct LookupRequest {
    /// The request's identity, copied into the reply.
    pub id: SampleIdentity,
    /// `dds.builtin.TOS.` and the GUID of the participant asked, in hex (Fast DDS 3 drops
    /// requests whose first 40 characters do not name it).
    pub instance_name: String,
    /// The call.
    pub call: LookupCall,
}

/// What a reply returns.
#[derive(Debug, Clone, PartialEq)]
pub enum LookupReturn {
    /// `getTypes`: the TypeObjects the replier knows of those asked.
    Types {
        /// Identifier and object pairs.
        types: Vec<(TypeIdentifier, TypeObject)>,
        /// Complete identifiers with their minimal ones (Fast DDS 3 answers a minimal
        /// request with the complete object and this pair).
        complete_to_minimal: Vec<(TypeIdentifier, TypeIdentifier)>,
    },
    /// `getTypeDependencies`: a page of the dependencies.
    Dependencies {
        /// The dependencies' identifiers and sizes.
        ids: Vec<TypeIdWithSize>,
        /// Where this page ended (empty when it is the last).
        continuation: Vec<u8>,
    },
    /// The operation failed (`operation` is its discriminator, `code` the DDS return code).
    Failed {
        /// The operation's discriminator.
        operation: i32,
        /// The result union's discriminator (a DDS return code, not 0).
        code: i32,
    },
    /// An operation this implementation does not know.
    Unknown(i32),
}

/// `TypeLookup_Reply`
#[derive(Debug, Clone, PartialEq)]
pub struct LookupReply {
    /// The identity of the request answered.
    pub related: SampleIdentity,
    /// A [`remote_ex`] code.
    pub remote_ex: u32,
    /// What it returns.
    pub ret: LookupReturn,
}

/// Writes the 4-byte `CDR2_LE` encapsulation header and the body `f` writes, padded to a
/// multiple of 4 (the padding counted in the options, as XTypes 7.6.3.1.2 asks).
fn payload(f: impl Fn(&mut Writer<'_>) -> Result<(), EncodeError>) -> Result<Vec<u8>, EncodeError> {
    let body = crate::codec::to_bytes(f)?;
    let pad = (4 - body.len() % 4) % 4;
    let mut out = Vec::with_capacity(4 + body.len() + pad);
    out.extend_from_slice(&[0x00, 0x07, 0x00, pad as u8]);
    out.extend_from_slice(&body);
    out.resize(out.len() + pad, 0);
    Ok(out)
}

/// Checks the encapsulation header (any XCDR2 one, either byte order) and returns a reader
/// of the body.
fn body(bytes: &[u8]) -> Result<Reader<'_>, DecodeError> {
    if bytes.len() < 4 {
        return Err(DecodeError::new(
            0,
            DecodeErrorKind::Truncated {
                needed: 4,
                remaining: bytes.len(),
            },
        ));
    }
    let id = u16::from_be_bytes([bytes[0], bytes[1]]);
    // CDR2_BE/LE, D_CDR2_BE/LE, PL_CDR2_BE/LE: the same body in all three for these types.
    if !(0x0006..=0x000b).contains(&id) {
        return Err(DecodeError::new(
            0,
            DecodeErrorKind::UnknownEncapsulation(id),
        ));
    }
    let endian = if id & 1 == 1 {
        Endianness::Little
    } else {
        Endianness::Big
    };
    let pad = usize::from(bytes[3] & 3);
    let end = bytes.len().saturating_sub(pad).max(4);
    Ok(Reader::new(
        &bytes[4..end],
        tachyon_cdr::XcdrVersion::Xcdr2,
        endian,
        4,
    ))
}

fn write_ids(w: &mut Writer<'_>, ids: &[TypeIdentifier]) -> Result<(), EncodeError> {
    let m = w.begin_member(M_TYPE_IDS, false, 5)?;
    crate::codec::write_seq(w, ids)?;
    w.end_member(m)
}

fn write_continuation(w: &mut Writer<'_>, c: &[u8]) -> Result<(), EncodeError> {
    let m = w.begin_member(M_CONTINUATION, false, 5)?;
    w.write_len(c.len())?;
    w.write_bytes(c)?;
    w.end_member(m)
}

fn read_continuation(r: &mut Reader<'_>) -> Result<Vec<u8>, DecodeError> {
    let n = r.read_count("continuation point", 1, Some(CONTINUATION_MAX))?;
    Ok(r.read_bytes(n)?.to_vec())
}

impl LookupRequest {
    /// The request's serialized payload (encapsulation header included).
    pub fn to_payload(&self) -> Result<Vec<u8>, EncodeError> {
        payload(|w| {
            self.id.encode(w)?;
            w.write_string(&self.instance_name, Some(INSTANCE_NAME_MAX))?;
            appendable(w, |w| match &self.call {
                LookupCall::GetTypes(ids) => {
                    w.write_i32(GET_TYPES)?;
                    appendable(w, |w| write_ids(w, ids))
                }
                LookupCall::GetDependencies { ids, continuation } => {
                    w.write_i32(GET_DEPENDENCIES)?;
                    appendable(w, |w| {
                        write_ids(w, ids)?;
                        write_continuation(w, continuation)
                    })
                }
                LookupCall::Unknown(d) => w.write_i32(*d),
            })
        })
    }

    /// Decodes a request payload.
    pub fn from_payload(bytes: &[u8]) -> Result<LookupRequest, DecodeError> {
        let mut r = body(bytes)?;
        let id = SampleIdentity::decode(&mut r)?;
        let instance_name = r.read_str(Some(INSTANCE_NAME_MAX))?.to_owned();
        let call = read_appendable(&mut r, |r| {
            let d = r.read_i32()?;
            match d {
                GET_TYPES | GET_DEPENDENCIES => read_appendable(r, |r| {
                    let mut ids = Vec::new();
                    let mut continuation = Vec::new();
                    while let Some(m) = r.next_member()? {
                        match m.id {
                            M_TYPE_IDS => ids = r.member_value(&m, |r| read_seq(r, "type ids"))?,
                            M_CONTINUATION => {
                                continuation = r.member_value(&m, read_continuation)?
                            }
                            _ => r.skip_member(&m)?,
                        }
                    }
                    Ok(if d == GET_TYPES {
                        LookupCall::GetTypes(ids)
                    } else {
                        LookupCall::GetDependencies { ids, continuation }
                    })
                }),
                other => Ok(LookupCall::Unknown(other)),
            }
        })?;
        Ok(LookupRequest {
            id,
            instance_name,
            call,
        })
    }
}

impl LookupReply {
    /// The reply's serialized payload (encapsulation header included).
    pub fn to_payload(&self) -> Result<Vec<u8>, EncodeError> {
        payload(|w| {
            self.related.encode(w)?;
            w.write_u32(self.remote_ex)?;
            appendable(w, |w| match &self.ret {
                LookupReturn::Types {
                    types,
                    complete_to_minimal,
                } => {
                    w.write_i32(GET_TYPES)?;
                    appendable(w, |w| {
                        w.write_i32(0)?;
                        appendable(w, |w| {
                            let m = w.begin_member(M_TYPES, false, 5)?;
                            write_seq_with(w, types, |w, (id, obj)| {
                                id.encode(w)?;
                                obj.encode(w)
                            })?;
                            w.end_member(m)?;
                            let m = w.begin_member(M_COMPLETE_TO_MINIMAL, false, 5)?;
                            write_seq_with(w, complete_to_minimal, |w, (a, b)| {
                                a.encode(w)?;
                                b.encode(w)
                            })?;
                            w.end_member(m)
                        })
                    })
                }
                LookupReturn::Dependencies { ids, continuation } => {
                    w.write_i32(GET_DEPENDENCIES)?;
                    appendable(w, |w| {
                        w.write_i32(0)?;
                        appendable(w, |w| {
                            let m = w.begin_member(M_DEPENDENT_TYPEIDS, false, 5)?;
                            crate::codec::write_seq(w, ids)?;
                            w.end_member(m)?;
                            write_continuation(w, continuation)
                        })
                    })
                }
                LookupReturn::Failed { operation, code } => {
                    w.write_i32(*operation)?;
                    appendable(w, |w| w.write_i32(*code))
                }
                LookupReturn::Unknown(d) => w.write_i32(*d),
            })
        })
    }

    /// Decodes a reply payload.
    pub fn from_payload(bytes: &[u8]) -> Result<LookupReply, DecodeError> {
        let mut r = body(bytes)?;
        let related = SampleIdentity::decode(&mut r)?;
        let remote_ex = r.read_u32()?;
        let ret = read_appendable(&mut r, |r| {
            if r.at_end() {
                // An exception reply may carry no return at all.
                return Ok(LookupReturn::Unknown(0));
            }
            let operation = r.read_i32()?;
            match operation {
                GET_TYPES | GET_DEPENDENCIES => read_appendable(r, |r| {
                    let code = r.read_i32()?;
                    if code != 0 {
                        return Ok(LookupReturn::Failed { operation, code });
                    }
                    read_appendable(r, |r| read_out(r, operation))
                }),
                other => Ok(LookupReturn::Unknown(other)),
            }
        })?;
        Ok(LookupReply {
            related,
            remote_ex,
            ret,
        })
    }
}

/// Reads a `getTypes_Out` or `getTypeDependencies_Out` (mutable: members by id).
fn read_out(r: &mut Reader<'_>, operation: i32) -> Result<LookupReturn, DecodeError> {
    let mut types = Vec::new();
    let mut complete_to_minimal = Vec::new();
    let mut ids = Vec::new();
    let mut continuation = Vec::new();
    while let Some(m) = r.next_member()? {
        match m.id {
            M_TYPES => {
                types = r.member_value(&m, |r| {
                    read_seq_with(r, "type objects", 12, |r| {
                        Ok((TypeIdentifier::decode(r)?, TypeObject::decode(r)?))
                    })
                })?
            }
            M_COMPLETE_TO_MINIMAL => {
                complete_to_minimal = r.member_value(&m, |r| {
                    read_seq_with(r, "identifier pairs", 2, |r| {
                        Ok((TypeIdentifier::decode(r)?, TypeIdentifier::decode(r)?))
                    })
                })?
            }
            M_DEPENDENT_TYPEIDS => {
                ids = r.member_value(&m, |r| read_seq(r, "dependent type ids"))?
            }
            M_CONTINUATION => continuation = r.member_value(&m, read_continuation)?,
            _ => r.skip_member(&m)?,
        }
    }
    Ok(if operation == GET_TYPES {
        LookupReturn::Types {
            types,
            complete_to_minimal,
        }
    } else {
        LookupReturn::Dependencies { ids, continuation }
    })
}

/// The `instanceName` of a request to the participant with GUID prefix `prefix`: what
/// Cyclone DDS writes (`dds.builtin.TOS.`, the prefix and the participant entity id in lower
/// case hex) and what Fast DDS 3 checks (the first 40 characters).
pub fn instance_name(prefix: &[u8; 12]) -> String {
    let mut s = String::from("dds.builtin.TOS.");
    for b in prefix {
        s.push_str(&format!("{b:02x}"));
    }
    s.push_str("000001c1");
    s
}
