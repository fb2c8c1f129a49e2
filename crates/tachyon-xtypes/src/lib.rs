//! XTypes 1.3 type representation for Tachyon DDS: the TypeIdentifiers, TypeObjects and
//! TypeInformation by which DDS implementations describe their types to each other.
//!
//! - [`TypeRepresentations::of`] computes a type's minimal and complete TypeObjects and
//!   identifiers from its description ([`tachyon_cdr::TypeDesc`], which `#[derive(DdsType)]`
//!   provides), byte for byte as Cyclone DDS's `idlc` computes them for the same IDL;
//! - [`TypeInformation`] is what endpoints announce in SEDP (PID_TYPE_INFORMATION);
//! - [`TypeObject::from_bytes`] and [`TypeInformation::from_bytes`] decode what peers send,
//!   refusing hostile input (deep nesting, huge counts, unknown kinds) with an error.
//!
//! Everything is XCDR2 little endian without an encapsulation header, as the standard says
//! and the peers do.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod assign;
mod build;
mod codec;
pub mod dynamic;
#[doc(hidden)]
pub mod fuzzing;
pub mod hash;
mod identifier;
pub mod idl;
mod information;
mod library;
pub mod lookup;
pub mod object;
mod resolve;

pub use assign::{is_assignable, AssignOptions, NotAssignable, Reason};
pub use build::{represent, BuildError, Representation, TypeEntry, TypeRepresentations};
pub use codec::Codec;
pub use identifier::{
    primitive_code, primitive_of, EquivalenceHash, EquivalenceKind, PlainHeader, TypeIdentifier,
    EK_BOTH, EK_COMPLETE, EK_MINIMAL,
};
pub use information::{TypeIdWithDeps, TypeIdWithSize, TypeInformation, MAX_DEPENDENCIES};
pub use library::{hashed_in, references, KnownType, LibraryError, TypeLibrary};
pub use lookup::{LookupCall, LookupReply, LookupRequest, LookupReturn, SampleIdentity};
pub use object::{MemberDetail, TypeDef, TypeDetail, TypeObject};
pub use resolve::{describe, ResolveError};
