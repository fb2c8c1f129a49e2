//! `TypeInformation` (XTypes 1.3, 7.6.3.2.2): what a writer or reader announces in SEDP
//! (PID_TYPE_INFORMATION): its type's minimal and complete identifiers, with the sizes of
//! their TypeObjects and the identifiers of the types they depend on.
//!
//! On the wire the value is the bare XCDR2 serialization, in the byte order of the parameter
//! list, without an encapsulation header (Cyclone DDS, Fast DDS). Cyclone DDS 11 sends 0 for
//! the two top-level `typeobject_serialized_size` fields (`ddsi_typeinfo_dup` does not copy
//! them): a size is a hint, never a reason to refuse.

use tachyon_cdr::{DecodeError, DecodeErrorKind, EncodeError, Endianness, Reader, Writer};

use crate::codec::{appendable, read_appendable, read_seq, write_seq, Codec};
use crate::identifier::TypeIdentifier;

/// The member id of `minimal`.
const ID_MINIMAL: u32 = 0x1001;
/// The member id of `complete`.
const ID_COMPLETE: u32 = 0x1002;
/// The most dependent identifiers one announcement may list (Cyclone DDS and Fast DDS list
/// all; a list this long is hostile or broken).
pub const MAX_DEPENDENCIES: usize = 4096;

/// A TypeIdentifier with the size of its serialized TypeObject.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TypeIdWithSize {
    /// The identifier.
    pub id: TypeIdentifier,
    /// The TypeObject's serialized size in bytes (0 when not known).
    pub size: u32,
}

impl Codec for TypeIdWithSize {
    const MIN_SIZE: usize = 9;
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        appendable(w, |w| {
            self.id.encode(w)?;
            w.write_u32(self.size)
        })
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        read_appendable(r, |r| {
            Ok(TypeIdWithSize {
                id: TypeIdentifier::decode(r)?,
                size: r.read_u32()?,
            })
        })
    }
}

/// A type's identifier and those of the types it depends on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TypeIdWithDeps {
    /// The type.
    pub id: TypeIdWithSize,
    /// How many types it depends on in all (`dependents` may list fewer).
    pub dependent_count: i32,
    /// The types it depends on.
    pub dependents: Vec<TypeIdWithSize>,
}

impl TypeIdWithDeps {
    /// No type: what an announcement without this representation holds.
    pub fn none() -> TypeIdWithDeps {
        TypeIdWithDeps {
            id: TypeIdWithSize {
                id: TypeIdentifier::None,
                size: 0,
            },
            dependent_count: 0,
            dependents: Vec::new(),
        }
    }
}

impl Codec for TypeIdWithDeps {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        appendable(w, |w| {
            self.id.encode(w)?;
            w.write_i32(self.dependent_count)?;
            write_seq(w, &self.dependents)
        })
    }
    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        read_appendable(r, |r| {
            let id = TypeIdWithSize::decode(r)?;
            let dependent_count = r.read_i32()?;
            let dependents: Vec<TypeIdWithSize> = read_seq(r, "dependent type ids")?;
            if dependents.len() > MAX_DEPENDENCIES {
                return Err(r.error(DecodeErrorKind::BoundExceeded {
                    what: "dependent type ids",
                    len: u32::try_from(dependents.len()).unwrap_or(u32::MAX),
                    bound: MAX_DEPENDENCIES as u32,
                }));
            }
            Ok(TypeIdWithDeps {
                id,
                dependent_count,
                dependents,
            })
        })
    }
}

/// What an endpoint announces about its type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TypeInformation {
    /// The minimal representation ([`TypeIdentifier::None`] when not announced).
    pub minimal: TypeIdWithDeps,
    /// The complete representation ([`TypeIdentifier::None`] when not announced).
    pub complete: TypeIdWithDeps,
}

impl TypeInformation {
    /// The serialized value of PID_TYPE_INFORMATION (XCDR2 little endian, no header).
    pub fn to_bytes(&self) -> Result<Vec<u8>, EncodeError> {
        crate::codec::to_bytes(|w| self.encode(w))
    }

    /// Decodes the value of PID_TYPE_INFORMATION, in the parameter list's byte order.
    pub fn from_bytes(bytes: &[u8], endian: Endianness) -> Result<TypeInformation, DecodeError> {
        let mut r = crate::codec::reader(bytes, endian);
        TypeInformation::decode(&mut r)
    }
}

impl Codec for TypeInformation {
    fn encode(&self, w: &mut Writer<'_>) -> Result<(), EncodeError> {
        appendable(w, |w| {
            // Cyclone DDS writes both members with a NEXTINT length (LC 4).
            let m = w.begin_member(ID_MINIMAL, false, 4)?;
            self.minimal.encode(w)?;
            w.end_member(m)?;
            let m = w.begin_member(ID_COMPLETE, false, 4)?;
            self.complete.encode(w)?;
            w.end_member(m)
        })
    }

    fn decode(r: &mut Reader<'_>) -> Result<Self, DecodeError> {
        read_appendable(r, |r| {
            let mut info = TypeInformation {
                minimal: TypeIdWithDeps::none(),
                complete: TypeIdWithDeps::none(),
            };
            while let Some(m) = r.next_member()? {
                match m.id {
                    ID_MINIMAL => info.minimal = r.member_value(&m, TypeIdWithDeps::decode)?,
                    ID_COMPLETE => info.complete = r.member_value(&m, TypeIdWithDeps::decode)?,
                    _ => r.skip_member(&m)?,
                }
            }
            Ok(info)
        })
    }
}
