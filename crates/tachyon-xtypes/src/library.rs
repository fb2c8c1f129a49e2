//! A participant's type library: the TypeObjects it knows by identifier, its own types' and
//! those peers sent it (TypeLookup replies), and what a peer's TypeInformation names that it
//! does not know yet.
//!
//! What comes from the network is checked before it is kept: the object must hash to the
//! identifier it came with (so a peer cannot make an identifier mean another type), and the
//! library holds at most [`TypeLibrary::max_objects`] objects.

use std::collections::HashMap;
use std::sync::Arc;

use crate::build::TypeRepresentations;
use crate::identifier::{EquivalenceKind, TypeIdentifier};
use crate::information::TypeIdWithDeps;
use crate::object::{TypeDef, TypeObject};

/// Why a received TypeObject was not kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LibraryError {
    /// The identifier is not a hash (primitives and plain collections have no object).
    #[error("{0} is not a hashed type identifier")]
    NotHashed(String),
    /// The object's kind (minimal, complete) is not the identifier's.
    #[error("the TypeObject for {0} is of the other equivalence kind")]
    KindMismatch(String),
    /// The object does not hash to the identifier it came with.
    #[error("the TypeObject sent for {id} hashes to {actual}")]
    HashMismatch {
        /// The identifier it came with.
        id: String,
        /// What it hashes to.
        actual: String,
    },
    /// The object does not encode (a name too long).
    #[error("the TypeObject for {0} cannot be encoded")]
    Unencodable(String),
    /// The library is full.
    #[error("the type library is full ({0} objects)")]
    Full(usize),
}

/// A known TypeObject.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownType {
    /// The object.
    pub object: TypeObject,
    /// Its serialized form (what its identifier is the hash of).
    pub bytes: Vec<u8>,
    /// Whether it came from this participant's own types.
    pub local: bool,
}

/// TypeObjects by identifier.
#[derive(Debug, Clone)]
pub struct TypeLibrary {
    objects: HashMap<TypeIdentifier, Arc<KnownType>>,
    /// Most objects kept (default 8192).
    pub max_objects: usize,
}

impl Default for TypeLibrary {
    fn default() -> TypeLibrary {
        TypeLibrary {
            objects: HashMap::new(),
            max_objects: 8192,
        }
    }
}

impl TypeLibrary {
    /// An empty library.
    pub fn new() -> TypeLibrary {
        TypeLibrary::default()
    }

    /// How many objects it holds.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// Adds a local type's objects (both representations, dependencies included).
    pub fn add_local(&mut self, reps: &TypeRepresentations) {
        for e in reps.minimal.entries().chain(reps.complete.entries()) {
            self.objects.entry(e.id.clone()).or_insert_with(|| {
                Arc::new(KnownType {
                    object: e.object.clone(),
                    bytes: e.bytes.clone(),
                    local: true,
                })
            });
        }
    }

    /// Adds an object received for `id`, after checking that it is of `id`'s kind and hashes
    /// to it. Returns whether it was new.
    pub fn add_received(
        &mut self,
        id: &TypeIdentifier,
        object: TypeObject,
    ) -> Result<bool, LibraryError> {
        let Some((kind, hash)) = id.hash() else {
            return Err(LibraryError::NotHashed(id.to_string()));
        };
        if object.kind != kind {
            return Err(LibraryError::KindMismatch(id.to_string()));
        }
        if self.objects.contains_key(id) {
            return Ok(false);
        }
        let bytes = object
            .to_bytes()
            .map_err(|_| LibraryError::Unencodable(id.to_string()))?;
        let actual = crate::hash::equivalence_hash(&bytes);
        if &actual != hash {
            let actual = match kind {
                EquivalenceKind::Minimal => TypeIdentifier::Minimal(actual),
                EquivalenceKind::Complete => TypeIdentifier::Complete(actual),
            };
            return Err(LibraryError::HashMismatch {
                id: id.to_string(),
                actual: actual.to_string(),
            });
        }
        if self.objects.len() >= self.max_objects {
            return Err(LibraryError::Full(self.max_objects));
        }
        self.objects.insert(
            id.clone(),
            Arc::new(KnownType {
                object,
                bytes,
                local: false,
            }),
        );
        Ok(true)
    }

    /// The object of `id`, if known.
    pub fn get(&self, id: &TypeIdentifier) -> Option<&KnownType> {
        self.objects.get(id).map(|k| &**k)
    }

    /// The object of `id` (an `Arc`, to keep while the library changes).
    pub fn get_shared(&self, id: &TypeIdentifier) -> Option<Arc<KnownType>> {
        self.objects.get(id).cloned()
    }

    /// Whether `id` is known together with every type it refers to, transitively: all that
    /// assignability or a dynamic type needs. Identifiers that describe themselves are
    /// always resolved.
    pub fn is_resolved(&self, id: &TypeIdentifier) -> bool {
        self.unresolved(id).is_empty()
    }

    /// The hashed identifiers reachable from `id` that are not known (empty when `id` is
    /// resolved).
    pub fn unresolved(&self, id: &TypeIdentifier) -> Vec<TypeIdentifier> {
        let mut missing = Vec::new();
        let mut seen: Vec<TypeIdentifier> = Vec::new();
        let mut stack = vec![id.clone()];
        while let Some(id) = stack.pop() {
            for h in hashed_in(&id) {
                if seen.contains(&h) {
                    continue;
                }
                seen.push(h.clone());
                match self.objects.get(&h) {
                    Some(k) => stack.extend(references(&k.object)),
                    None => missing.push(h),
                }
            }
        }
        missing
    }

    /// The identifiers of a TypeInformation part that are not known: what to ask a peer for.
    pub fn missing(&self, info: &TypeIdWithDeps) -> Vec<TypeIdentifier> {
        let mut out = Vec::new();
        for id in std::iter::once(&info.id.id).chain(info.dependents.iter().map(|d| &d.id)) {
            for h in hashed_in(id) {
                if !self.objects.contains_key(&h) && !out.contains(&h) {
                    out.push(h);
                }
            }
        }
        out
    }

    /// The objects of `ids` this library knows, with their identifiers (what a TypeLookup
    /// getTypes reply carries).
    pub fn lookup<'a>(
        &'a self,
        ids: &'a [TypeIdentifier],
    ) -> impl Iterator<Item = (&'a TypeIdentifier, &'a KnownType)> + 'a {
        ids.iter()
            .filter_map(|id| self.objects.get(id).map(|k| (id, &**k)))
    }
}

/// The hashed identifiers inside `id` (itself, or the elements of a plain collection).
pub fn hashed_in(id: &TypeIdentifier) -> Vec<TypeIdentifier> {
    let mut out = Vec::new();
    let mut stack = vec![id];
    while let Some(id) = stack.pop() {
        match id {
            TypeIdentifier::Minimal(_) | TypeIdentifier::Complete(_) => out.push(id.clone()),
            TypeIdentifier::PlainSequence { element, .. }
            | TypeIdentifier::PlainArray { element, .. } => stack.push(element),
            TypeIdentifier::PlainMap { element, key, .. } => {
                stack.push(element);
                stack.push(key);
            }
            _ => {}
        }
    }
    out
}

/// The identifiers a TypeObject refers to (member types, base, discriminator, elements).
pub fn references(object: &TypeObject) -> Vec<TypeIdentifier> {
    match &object.def {
        TypeDef::Struct(s) => std::iter::once(s.base.clone())
            .chain(s.members.iter().map(|m| m.type_id.clone()))
            .collect(),
        TypeDef::Union(u) => std::iter::once(u.discriminator.clone())
            .chain(u.members.iter().map(|m| m.type_id.clone()))
            .collect(),
        TypeDef::Alias(a) => vec![a.related.clone()],
        TypeDef::Sequence(s) => vec![s.element.type_id.clone()],
        TypeDef::Array(a) => vec![a.element.type_id.clone()],
        TypeDef::Map(m) => vec![m.key.type_id.clone(), m.element.type_id.clone()],
        TypeDef::Annotation(a) => a.params.iter().map(|p| p.type_id.clone()).collect(),
        TypeDef::Enum(_) | TypeDef::Bitmask(_) | TypeDef::Bitset(_) => Vec::new(),
    }
}
