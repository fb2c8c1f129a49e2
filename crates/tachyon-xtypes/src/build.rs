//! From a type description to its TypeIdentifiers and TypeObjects, as Cyclone DDS's `idlc`
//! computes them (checked byte for byte against `interop/xtypes-vectors`).
//!
//! Choices that decide the bytes, all `idlc`'s:
//! - every struct and union member has `TRY_CONSTRUCT1`; a key adds `IS_KEY` (and not
//!   `IS_MUST_UNDERSTAND`); a union discriminator has `TRY_CONSTRUCT1 | IS_MUST_UNDERSTAND`;
//! - an enum has `IS_FINAL`, its enumerators ordered by value, and its first declared
//!   enumerator (or the one marked default) `IS_DEFAULT`;
//! - strings, sequences, arrays and maps take the small identifier form when every bound is
//!   below 256; a plain collection's header is `EK_BOTH` when its element is fully
//!   descriptive, else the representation's own kind;
//! - the dependent types are listed in the order a depth-first walk of the members first
//!   meets them, each once.

use std::collections::HashMap;

use tachyon_cdr::{EncodeError, Extensibility, Primitive, TypeDesc};

use crate::identifier::{EquivalenceKind, PlainHeader, TypeIdentifier, EK_BOTH};
use crate::information::{TypeIdWithDeps, TypeIdWithSize, TypeInformation};
use crate::object::flags::*;
use crate::object::{
    AliasDef, EnumDef, LiteralDef, MemberDetail, StructDef, StructMember, TypeDef, TypeDetail,
    TypeObject, UnionDef, UnionMember,
};
use crate::object::{BitflagDef, BitmaskDef, MemberAnnotations, TypeAnnotations};

/// Why a description has no type representation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BuildError {
    /// Two different types carry the same name.
    #[error("two different types are both named `{0}`")]
    NameClash(String),
    /// Only named types have TypeObjects.
    #[error("{0} is not a named type")]
    NotNamed(String),
    /// A name or type object could not be written (a name longer than 256 characters).
    #[error("type `{name}` cannot be represented: {source}")]
    Encode {
        /// The type.
        name: String,
        /// Why.
        source: EncodeError,
    },
}

/// A TypeObject with its identifier and serialized form.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeEntry {
    /// The identifier (the hash of `bytes`).
    pub id: TypeIdentifier,
    /// The object.
    pub object: TypeObject,
    /// Its XCDR2 serialization.
    pub bytes: Vec<u8>,
}

/// The type representation of one type in one equivalence kind: its identifier, and the
/// TypeObjects of it and of every named type it depends on.
#[derive(Debug, Clone, PartialEq)]
pub struct Representation {
    /// The type's identifier.
    pub id: TypeIdentifier,
    /// Its TypeObject (none for a type its identifier describes fully).
    pub object: Option<TypeEntry>,
    /// The named types it depends on, in `idlc`'s order.
    pub dependencies: Vec<TypeEntry>,
}

impl Representation {
    fn with_size(id: &TypeIdentifier, entry: Option<&TypeEntry>) -> TypeIdWithSize {
        TypeIdWithSize {
            id: id.clone(),
            size: entry.map_or(0, |e| u32::try_from(e.bytes.len()).unwrap_or(u32::MAX)),
        }
    }

    /// Its part of a TypeInformation.
    pub fn with_dependencies(&self) -> TypeIdWithDeps {
        TypeIdWithDeps {
            id: Self::with_size(&self.id, self.object.as_ref()),
            dependent_count: i32::try_from(self.dependencies.len()).unwrap_or(i32::MAX),
            dependents: self
                .dependencies
                .iter()
                .map(|e| Self::with_size(&e.id, Some(e)))
                .collect(),
        }
    }

    /// Every TypeObject: the type's, then its dependencies'.
    pub fn entries(&self) -> impl Iterator<Item = &TypeEntry> {
        self.object.iter().chain(self.dependencies.iter())
    }
}

/// A type's minimal and complete representations.
#[derive(Debug, Clone, PartialEq)]
pub struct TypeRepresentations {
    /// Minimal.
    pub minimal: Representation,
    /// Complete.
    pub complete: Representation,
    /// Whether the type uses `int8` or `uint8` (TK_INT8, TK_UINT8: added by XTypes 1.3), which
    /// older implementations cannot read in a TypeObject (Cyclone DDS 0.10 refuses it, and
    /// its idlc writes `uint8` as `octet`).
    pub xtypes_1_3_integers: bool,
}

impl TypeRepresentations {
    /// Computes both representations of `desc`.
    pub fn of(desc: &TypeDesc) -> Result<TypeRepresentations, BuildError> {
        Ok(TypeRepresentations {
            minimal: represent(desc, EquivalenceKind::Minimal)?,
            complete: represent(desc, EquivalenceKind::Complete)?,
            xtypes_1_3_integers: uses_1_3_integers(desc, &mut Vec::new()),
        })
    }

    /// The TypeInformation endpoints of this type announce in discovery.
    pub fn type_information(&self) -> TypeInformation {
        TypeInformation {
            minimal: self.minimal.with_dependencies(),
            complete: self.complete.with_dependencies(),
        }
    }

    /// The TypeObject with identifier `id`, in either representation.
    pub fn find(&self, id: &TypeIdentifier) -> Option<&TypeEntry> {
        self.minimal
            .entries()
            .chain(self.complete.entries())
            .find(|e| &e.id == id)
    }
}

/// Whether `int8` or `uint8` appear anywhere in `desc` (`seen`: the named types walked, so
/// that a recursive type ends).
fn uses_1_3_integers(desc: &TypeDesc, seen: &mut Vec<String>) -> bool {
    match desc {
        TypeDesc::Primitive(p) => matches!(p, Primitive::Int8 | Primitive::UInt8),
        TypeDesc::String { .. } | TypeDesc::Enum(_) | TypeDesc::Bitmask(_) => false,
        TypeDesc::Sequence { element, .. } | TypeDesc::Array { element, .. } => {
            uses_1_3_integers(element, seen)
        }
        TypeDesc::Map { key, value, .. } => {
            uses_1_3_integers(key, seen) || uses_1_3_integers(value, seen)
        }
        TypeDesc::Alias(a) => first(seen, &a.name) && uses_1_3_integers(&a.target, seen),
        TypeDesc::Union(u) => {
            first(seen, &u.name)
                && (uses_1_3_integers(&u.discriminator, seen)
                    || u.cases.iter().any(|c| uses_1_3_integers(&c.ty, seen)))
        }
        TypeDesc::Struct(s) => {
            let mut next = Some(s);
            while let Some(s) = next {
                if !first(seen, &s.name) {
                    return false;
                }
                if s.members.iter().any(|m| uses_1_3_integers(&m.ty, seen)) {
                    return true;
                }
                next = s.base.as_ref();
            }
            false
        }
    }
}

/// Whether the named type `name` is met for the first time (and notes it).
fn first(seen: &mut Vec<String>, name: &str) -> bool {
    if seen.iter().any(|n| n == name) {
        return false;
    }
    seen.push(name.to_owned());
    true
}

/// Computes the representation of `desc` in `kind`.
pub fn represent(desc: &TypeDesc, kind: EquivalenceKind) -> Result<Representation, BuildError> {
    let mut b = Builder {
        kind,
        by_name: HashMap::new(),
        order: Vec::new(),
    };
    let id = b.id_of(desc)?;
    let mut entries: Vec<TypeEntry> = Vec::new();
    for name in &b.order {
        if let Some(Slot::Done(_, entry)) = b.by_name.get(name) {
            if !entries.iter().any(|e| e.id == entry.id) {
                entries.push((**entry).clone());
            }
        }
    }
    let object = match entries.first() {
        Some(first) if first.id == id => Some(entries.remove(0)),
        _ => None,
    };
    Ok(Representation {
        id,
        object,
        dependencies: entries,
    })
}

enum Slot {
    /// Being built (its members are being walked).
    Building,
    /// Built: its description and entry.
    Done(TypeDesc, Box<TypeEntry>),
}

struct Builder {
    kind: EquivalenceKind,
    by_name: HashMap<String, Slot>,
    /// Named types in the order first met.
    order: Vec<String>,
}

impl Builder {
    fn id_of(&mut self, desc: &TypeDesc) -> Result<TypeIdentifier, BuildError> {
        Ok(match desc {
            TypeDesc::Primitive(p) => TypeIdentifier::primitive(*p),
            TypeDesc::String { wide, bound } => TypeIdentifier::String {
                wide: *wide,
                bound: *bound,
                large: *bound > 255,
            },
            TypeDesc::Sequence { element, bound } => {
                let element = self.id_of(element)?;
                TypeIdentifier::PlainSequence {
                    header: self.plain_header(&element),
                    bound: *bound,
                    large: *bound > 255,
                    element: Box::new(element),
                }
            }
            TypeDesc::Array { element, dims } => {
                let element = self.id_of(element)?;
                TypeIdentifier::PlainArray {
                    header: self.plain_header(&element),
                    dims: dims.clone(),
                    large: dims.iter().any(|d| *d > 255),
                    element: Box::new(element),
                }
            }
            TypeDesc::Map { key, value, bound } => {
                let key = self.id_of(key)?;
                let element = self.id_of(value)?;
                let mut header = self.plain_header(&element);
                if !key.is_fully_descriptive() {
                    header.equiv_kind = self.kind.code();
                }
                TypeIdentifier::PlainMap {
                    header,
                    bound: *bound,
                    large: *bound > 255,
                    element: Box::new(element),
                    key_flags: TRY_CONSTRUCT1,
                    key: Box::new(key),
                }
            }
            named => self.named(named)?,
        })
    }

    fn plain_header(&self, element: &TypeIdentifier) -> PlainHeader {
        PlainHeader {
            equiv_kind: if element.is_fully_descriptive() {
                EK_BOTH
            } else {
                self.kind.code()
            },
            element_flags: TRY_CONSTRUCT1,
        }
    }

    fn named(&mut self, desc: &TypeDesc) -> Result<TypeIdentifier, BuildError> {
        let name = desc.name().unwrap_or_default().to_owned();
        match self.by_name.get(&name) {
            Some(Slot::Done(d, entry)) => {
                return if d == desc {
                    Ok(entry.id.clone())
                } else {
                    Err(BuildError::NameClash(name))
                };
            }
            // A description is a tree, so a type cannot contain itself; two different
            // types with one name can.
            Some(Slot::Building) => return Err(BuildError::NameClash(name)),
            None => {}
        }
        self.by_name.insert(name.clone(), Slot::Building);
        self.order.push(name.clone());
        let def = self.definition(desc)?;
        let object = TypeObject {
            kind: self.kind,
            def,
        };
        let bytes = object.to_bytes().map_err(|source| BuildError::Encode {
            name: name.clone(),
            source,
        })?;
        let hash = crate::hash::equivalence_hash(&bytes);
        let id = match self.kind {
            EquivalenceKind::Minimal => TypeIdentifier::Minimal(hash),
            EquivalenceKind::Complete => TypeIdentifier::Complete(hash),
        };
        let entry = TypeEntry {
            id: id.clone(),
            object,
            bytes,
        };
        self.by_name
            .insert(name, Slot::Done(desc.clone(), Box::new(entry)));
        Ok(id)
    }

    fn detail(&self, name: &str) -> Option<TypeDetail> {
        (self.kind == EquivalenceKind::Complete).then(|| TypeDetail::named(name))
    }

    fn definition(&mut self, desc: &TypeDesc) -> Result<TypeDef, BuildError> {
        let k = self.kind;
        Ok(match desc {
            TypeDesc::Struct(s) => {
                let base = match &s.base {
                    Some(b) => self.id_of(&TypeDesc::Struct(b.clone()))?,
                    None => TypeIdentifier::None,
                };
                let mut members = Vec::with_capacity(s.members.len());
                for m in &s.members {
                    let mut flags = TRY_CONSTRUCT1;
                    if m.key {
                        flags |= IS_KEY;
                    }
                    if m.optional {
                        flags |= IS_OPTIONAL;
                    }
                    if m.must_understand {
                        flags |= IS_MUST_UNDERSTAND;
                    }
                    if m.external {
                        flags |= IS_EXTERNAL;
                    }
                    members.push(StructMember {
                        id: m.id,
                        flags,
                        type_id: self.id_of(&m.ty)?,
                        detail: MemberDetail::new(k, &m.name),
                    });
                }
                let mut flags = extensibility_flag(s.extensibility);
                if s.nested {
                    flags |= IS_NESTED;
                }
                if s.autoid_hash {
                    flags |= IS_AUTOID_HASH;
                }
                TypeDef::Struct(StructDef {
                    flags,
                    base,
                    detail: self.detail(&s.name),
                    members,
                })
            }
            TypeDesc::Union(u) => {
                let discriminator = self.id_of(&u.discriminator)?;
                let mut members = Vec::with_capacity(u.cases.len());
                for c in &u.cases {
                    let mut flags = TRY_CONSTRUCT1;
                    if c.default {
                        flags |= IS_DEFAULT;
                    }
                    if c.external {
                        flags |= IS_EXTERNAL;
                    }
                    let mut labels = c.labels.clone();
                    labels.sort_unstable();
                    members.push(UnionMember {
                        id: c.id,
                        flags,
                        type_id: self.id_of(&c.ty)?,
                        labels,
                        detail: MemberDetail::new(k, &c.name),
                    });
                }
                let mut flags = extensibility_flag(u.extensibility);
                if u.nested {
                    flags |= IS_NESTED;
                }
                let mut discriminator_flags = TRY_CONSTRUCT1 | IS_MUST_UNDERSTAND;
                if u.discriminator_key {
                    discriminator_flags |= IS_KEY;
                }
                TypeDef::Union(UnionDef {
                    flags,
                    detail: self.detail(&u.name),
                    discriminator_flags,
                    discriminator,
                    discriminator_annotations: TypeAnnotations::default(),
                    members,
                })
            }
            TypeDesc::Enum(e) => {
                let default = e.literals.iter().position(|l| l.default).unwrap_or(0);
                TypeDef::Enum(EnumDef {
                    flags: IS_FINAL,
                    bit_bound: e.bit_bound,
                    detail: self.detail(&e.name),
                    literals: {
                        let mut literals: Vec<LiteralDef> = e
                            .literals
                            .iter()
                            .enumerate()
                            .map(|(i, l)| LiteralDef {
                                value: l.value,
                                flags: if i == default { IS_DEFAULT } else { 0 },
                                detail: MemberDetail::new(k, &l.name),
                            })
                            .collect();
                        // Ordered by value, as the TypeObject IDL says and idlc does.
                        literals.sort_by_key(|l| l.value);
                        literals
                    },
                })
            }
            TypeDesc::Bitmask(b) => TypeDef::Bitmask(BitmaskDef {
                flags: 0,
                bit_bound: b.bit_bound,
                detail: self.detail(&b.name),
                bitflags: b
                    .flags
                    .iter()
                    .map(|f| BitflagDef {
                        position: f.position,
                        flags: 0,
                        detail: MemberDetail::new(k, &f.name),
                    })
                    .collect(),
            }),
            TypeDesc::Alias(a) => TypeDef::Alias(AliasDef {
                flags: 0,
                detail: self.detail(&a.name),
                related_flags: 0,
                related: self.id_of(&a.target)?,
                annotations: MemberAnnotations::default(),
            }),
            // Anonymous types have plain identifiers; `named` is only called for named ones.
            other => return Err(BuildError::NotNamed(format!("{other:?}"))),
        })
    }
}

fn extensibility_flag(e: Extensibility) -> u16 {
    match e {
        Extensibility::Final => IS_FINAL,
        Extensibility::Appendable => IS_APPENDABLE,
        Extensibility::Mutable => IS_MUTABLE,
    }
}
