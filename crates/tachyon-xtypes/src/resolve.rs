//! From TypeObjects back to a type description ([`TypeDesc`], a dynamic type): how a type
//! learnt from a peer (TypeLookup) becomes something to print as IDL or to read samples with.
//!
//! Complete objects give the names; minimal ones only name hashes, which become names such as
//! `m_0cc175b9` (the hash in hex) and type names such as `T_45e35f8b112092d0` (the start of
//! the equivalence hash). What comes from the network is followed to a bounded depth, and a
//! kind a description cannot hold (bitsets, annotation types as member types) is an error.

use std::collections::HashMap;
use std::sync::Arc;

use tachyon_cdr::{
    AliasDesc, BitFlag, BitmaskDesc, CaseDesc, EnumDesc, EnumLiteral, Extensibility, MemberDesc,
    StructDesc, TypeDesc, UnionDesc,
};

use crate::identifier::TypeIdentifier;
use crate::library::TypeLibrary;
use crate::object::flags::*;
use crate::object::{MemberDetail, TypeDef, TypeObject};

/// Why a type cannot be described.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ResolveError {
    /// A type it uses is not in the library (ask its owner with TypeLookup).
    #[error("type {0} is not known")]
    Unresolved(String),
    /// It uses a kind a type description cannot hold.
    #[error("{0} is not supported")]
    Unsupported(&'static str),
    /// It nests deeper than followed.
    #[error("types nest deeper than {0} levels")]
    TooDeep(usize),
    /// A reference of the wrong kind (a struct's base that is no struct).
    #[error("{0}")]
    Invalid(&'static str),
}

const MAX_DEPTH: usize = 64;

/// The description of type `id`, whose objects (it and all it uses) are in `lib`.
pub fn describe(lib: &TypeLibrary, id: &TypeIdentifier) -> Result<TypeDesc, ResolveError> {
    Resolver {
        lib,
        done: HashMap::new(),
    }
    .desc(id, 0)
}

struct Resolver<'a> {
    lib: &'a TypeLibrary,
    done: HashMap<TypeIdentifier, TypeDesc>,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn member_name(d: &MemberDetail) -> String {
    match d.name() {
        Some(n) => n.to_owned(),
        None => format!("m_{}", hex(&d.name_hash())),
    }
}

fn extensibility(flags: u16) -> Extensibility {
    if flags & IS_MUTABLE != 0 {
        Extensibility::Mutable
    } else if flags & IS_APPENDABLE != 0 {
        Extensibility::Appendable
    } else {
        Extensibility::Final
    }
}

impl Resolver<'_> {
    fn desc(&mut self, id: &TypeIdentifier, depth: usize) -> Result<TypeDesc, ResolveError> {
        if depth > MAX_DEPTH {
            return Err(ResolveError::TooDeep(MAX_DEPTH));
        }
        let d = depth + 1;
        Ok(match id {
            TypeIdentifier::None => return Err(ResolveError::Invalid("a member of no type")),
            TypeIdentifier::Primitive(p) => TypeDesc::Primitive(*p),
            TypeIdentifier::String { wide, bound, .. } => TypeDesc::String {
                wide: *wide,
                bound: *bound,
            },
            TypeIdentifier::PlainSequence { element, bound, .. } => TypeDesc::Sequence {
                element: Box::new(self.desc(element, d)?),
                bound: *bound,
            },
            TypeIdentifier::PlainArray { element, dims, .. } => TypeDesc::Array {
                element: Box::new(self.desc(element, d)?),
                dims: dims.clone(),
            },
            TypeIdentifier::PlainMap {
                element,
                key,
                bound,
                ..
            } => TypeDesc::Map {
                key: Box::new(self.desc(key, d)?),
                value: Box::new(self.desc(element, d)?),
                bound: *bound,
            },
            TypeIdentifier::StronglyConnected { .. } => {
                return Err(ResolveError::Unsupported("a recursive type"))
            }
            TypeIdentifier::Minimal(h) | TypeIdentifier::Complete(h) => {
                if let Some(done) = self.done.get(id) {
                    return Ok(done.clone());
                }
                let Some(k) = self.lib.get_shared(id) else {
                    return Err(ResolveError::Unresolved(id.to_string()));
                };
                let fallback = format!("T_{}", hex(&h[..8]));
                let desc = self.object(&k.object, fallback, d)?;
                self.done.insert(id.clone(), desc.clone());
                desc
            }
        })
    }

    fn object(
        &mut self,
        o: &TypeObject,
        fallback: String,
        d: usize,
    ) -> Result<TypeDesc, ResolveError> {
        let name = o.type_name().map_or(fallback, str::to_owned);
        Ok(match &o.def {
            TypeDef::Struct(s) => {
                let base = match &s.base {
                    TypeIdentifier::None => None,
                    b => match self.desc(b, d)? {
                        TypeDesc::Struct(b) => Some(b),
                        _ => return Err(ResolveError::Invalid("a struct's base is no struct")),
                    },
                };
                let mut members = Vec::with_capacity(s.members.len());
                for m in &s.members {
                    members.push(MemberDesc {
                        name: member_name(&m.detail),
                        id: m.id,
                        ty: self.desc(&m.type_id, d)?,
                        key: m.flags & IS_KEY != 0,
                        optional: m.flags & IS_OPTIONAL != 0,
                        must_understand: m.flags & IS_MUST_UNDERSTAND != 0,
                        external: m.flags & IS_EXTERNAL != 0,
                    });
                }
                TypeDesc::Struct(Arc::new(StructDesc {
                    name,
                    extensibility: extensibility(s.flags),
                    autoid_hash: s.flags & IS_AUTOID_HASH != 0,
                    nested: s.flags & IS_NESTED != 0,
                    base,
                    members,
                }))
            }
            TypeDef::Union(u) => {
                let mut cases = Vec::with_capacity(u.members.len());
                for m in &u.members {
                    cases.push(CaseDesc {
                        name: member_name(&m.detail),
                        id: m.id,
                        ty: self.desc(&m.type_id, d)?,
                        labels: m.labels.clone(),
                        default: m.flags & IS_DEFAULT != 0,
                        external: m.flags & IS_EXTERNAL != 0,
                    });
                }
                TypeDesc::Union(Arc::new(UnionDesc {
                    name,
                    extensibility: extensibility(u.flags),
                    nested: u.flags & IS_NESTED != 0,
                    discriminator: self.desc(&u.discriminator, d)?,
                    discriminator_key: u.discriminator_flags & IS_KEY != 0,
                    cases,
                }))
            }
            TypeDef::Enum(e) => TypeDesc::Enum(Arc::new(EnumDesc {
                name,
                bit_bound: e.bit_bound,
                literals: e
                    .literals
                    .iter()
                    .enumerate()
                    // The first enumerator is the default unless another is marked.
                    .map(|(i, l)| EnumLiteral {
                        name: member_name(&l.detail),
                        value: l.value,
                        default: i > 0 && l.flags & IS_DEFAULT != 0,
                    })
                    .collect(),
            })),
            TypeDef::Bitmask(b) => TypeDesc::Bitmask(Arc::new(BitmaskDesc {
                name,
                bit_bound: b.bit_bound,
                flags: b
                    .bitflags
                    .iter()
                    .map(|f| BitFlag {
                        name: member_name(&f.detail),
                        position: f.position,
                    })
                    .collect(),
            })),
            TypeDef::Alias(a) => TypeDesc::Alias(Arc::new(AliasDesc {
                name,
                target: self.desc(&a.related, d)?,
            })),
            TypeDef::Sequence(s) => TypeDesc::Sequence {
                element: Box::new(self.desc(&s.element.type_id, d)?),
                bound: s.bound,
            },
            TypeDef::Array(a) => TypeDesc::Array {
                element: Box::new(self.desc(&a.element.type_id, d)?),
                dims: a.bounds.clone(),
            },
            TypeDef::Map(m) => TypeDesc::Map {
                key: Box::new(self.desc(&m.key.type_id, d)?),
                value: Box::new(self.desc(&m.element.type_id, d)?),
                bound: m.bound,
            },
            TypeDef::Bitset(_) => return Err(ResolveError::Unsupported("a bitset")),
            TypeDef::Annotation(_) => {
                return Err(ResolveError::Unsupported(
                    "an annotation type as a member type",
                ))
            }
        })
    }
}
