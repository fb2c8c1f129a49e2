//! Type assignability (XTypes 1.3, 7.2.4): may a reader of type T1 read what a writer of type
//! T2 writes? Decided on the minimal TypeObjects of both (member names seen as name hashes),
//! with the rules Cyclone DDS 11 applies, so that the two implementations match the same
//! pairs:
//!
//! - aliases are resolved; identical (minimal-equivalent) types are assignable;
//! - primitives only to the same primitive (no widening; with
//!   [`AssignOptions::xtypes_1_2_integers`], `uint8` is `octet` and `int8` is `char`, for
//!   peers that describe them so), strings of the same character type (bounds ignored unless `ignore_string_bounds` is off), a bitmask to a bitmask of
//!   the same bit bound or to the unsigned integer of its size;
//! - enums of the same extensibility whose common values have the same names; a final
//!   enum needs the same enumerators;
//! - sequences (bounds as strings), arrays (same dimensions) and maps whose elements are
//!   *strongly* assignable: equivalent, or assignable and delimited (a final struct or
//!   union element must be the same type);
//! - structs of the same extensibility, members matched by id: same name hash (unless
//!   `ignore_member_names`), assignable types, keys and must-understand members on both
//!   sides; appendable ones a prefix of each other, final ones the same members; at least
//!   one member in common;
//! - unions of the same extensibility with a strongly assignable discriminator, cases
//!   matched by label, at least one label in common.
//!
//! Where Cyclone DDS 11.0.1 has known bugs (`prevent_type_widening`, union labels), the rule
//! is the one its later fixes and the spec give.

use core::fmt;

use tachyon_cdr::Primitive;

use crate::identifier::TypeIdentifier;
use crate::library::TypeLibrary;
use crate::object::flags::*;
use crate::object::{EnumDef, StructDef, StructMember, TypeDef, UnionDef};

/// How strict assignability is (the TYPE_CONSISTENCY_ENFORCEMENT options of the reader).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AssignOptions {
    /// Sequence bounds do not matter (default true).
    pub ignore_sequence_bounds: bool,
    /// String bounds do not matter (default true).
    pub ignore_string_bounds: bool,
    /// Members with the same id may have different names (default false).
    pub ignore_member_names: bool,
    /// The writer's type may not have members the reader's lacks (default false).
    pub prevent_type_widening: bool,
    /// `uint8` and `octet` are one primitive, and `int8` and `char` (default false): for a
    /// peer that knows XTypes 1.2's kinds only and describes an IDL `uint8` as `octet` and an
    /// `int8` as `char` (Cyclone DDS 0.10's idlc; each pair is one octet on the wire). Not a
    /// TYPE_CONSISTENCY_ENFORCEMENT option: set from what the peer is
    /// (`tachyon_proto::quirks::knows_no_xtypes_1_3_integers`).
    pub xtypes_1_2_integers: bool,
}

impl Default for AssignOptions {
    fn default() -> AssignOptions {
        AssignOptions {
            ignore_sequence_bounds: true,
            ignore_string_bounds: true,
            ignore_member_names: false,
            prevent_type_widening: false,
            xtypes_1_2_integers: false,
        }
    }
}

/// Why a type is not assignable from another.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    /// A type (or one it uses) is not known: ask for it with TypeLookup.
    Unresolved,
    /// Different kinds of type, or different primitives.
    IncompatibleType,
    /// Final, appendable and mutable do not mix.
    DifferentExtensibility,
    /// A final struct or union where only the same type will do (a collection element, a
    /// member of a final or appendable struct compared by position).
    NotDelimited,
    /// Members (or enumerators) with the same id (value) have different names.
    NameDiffers,
    /// An enumerator or union case on one side only, where that is not allowed.
    MissingCase,
    /// A final type with another number of members or enumerators.
    NumberOfMembers,
    /// A key member on one side only, or a different key.
    KeyDiffers,
    /// Nothing in common.
    NoOverlap,
    /// A must-understand member on one side only.
    MustUnderstand,
    /// A member optional on one side, not the other.
    Optional,
    /// Members at the same position with different ids.
    MemberMismatch,
    /// A bound too small (a string, a sequence, an array's dimensions, a bitmask).
    Bound,
    /// The writer's type has members the reader's lacks (`prevent_type_widening`).
    Widening,
    /// Types nest deeper than this implementation follows.
    TooDeep,
}

impl Reason {
    fn text(self) -> &'static str {
        match self {
            Reason::Unresolved => "type unresolved",
            Reason::IncompatibleType => "incompatible type",
            Reason::DifferentExtensibility => "different extensibility",
            Reason::NotDelimited => "writer type not delimited (a final type must be the same)",
            Reason::NameDiffers => "member name differs",
            Reason::MissingCase => "missing case or enumerator",
            Reason::NumberOfMembers => "different number of members or enumerators",
            Reason::KeyDiffers => "key differs",
            Reason::NoOverlap => "no common members or labels",
            Reason::MustUnderstand => "must-understand member missing",
            Reason::Optional => "optional on one side only",
            Reason::MemberMismatch => "members differ",
            Reason::Bound => "incompatible bound",
            Reason::Widening => "writer type has members the reader lacks (prevent_type_widening)",
            Reason::TooDeep => "types nest too deeply",
        }
    }
}

/// A type that is not assignable from another: why, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotAssignable {
    /// Why.
    pub reason: Reason,
    /// Where: a path of member ids from the top-level type (`.id3.id0`), empty for the top.
    pub path: String,
}

impl fmt::Display for NotAssignable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "{}", self.reason.text())
        } else {
            write!(f, "{} at member {}", self.reason.text(), self.path)
        }
    }
}

impl std::error::Error for NotAssignable {}

/// The deepest nesting followed.
const MAX_DEPTH: usize = 64;

/// Whether a reader of type `reader` can read what a writer of type `writer` writes, both
/// minimal (or complete) identifiers whose objects are in `lib`.
pub fn is_assignable(
    lib: &TypeLibrary,
    reader: &TypeIdentifier,
    writer: &TypeIdentifier,
    options: &AssignOptions,
) -> Result<(), NotAssignable> {
    let cx = Cx { lib, o: options };
    cx.assignable(reader, writer, false, 0)
        .map_err(|(reason, mut path)| {
            path.reverse();
            NotAssignable {
                reason,
                path: path.concat(),
            }
        })
}

type Fail = (Reason, Vec<String>);
type Res = Result<(), Fail>;

fn fail(r: Reason) -> Res {
    Err((r, Vec::new()))
}

fn at(id: u32, r: Res) -> Res {
    r.map_err(|(reason, mut path)| {
        path.push(format!(".id{id}"));
        (reason, path)
    })
}

/// A type seen through its identifier and (for hashed ones) its object, aliases resolved.
enum View<'a> {
    None,
    Prim(Primitive),
    Str {
        wide: bool,
        bound: u32,
    },
    Seq {
        element: &'a TypeIdentifier,
        bound: u32,
    },
    Array {
        element: &'a TypeIdentifier,
        dims: &'a [u32],
    },
    Map {
        key: &'a TypeIdentifier,
        element: &'a TypeIdentifier,
    },
    Obj(&'a TypeDef),
}

struct Cx<'a> {
    lib: &'a TypeLibrary,
    o: &'a AssignOptions,
}

impl<'a> Cx<'a> {
    /// The identifier with aliases followed, and its view.
    fn view(
        &self,
        id: &'a TypeIdentifier,
        depth: usize,
    ) -> Result<(&'a TypeIdentifier, View<'a>), Fail> {
        if depth > MAX_DEPTH {
            return Err((Reason::TooDeep, Vec::new()));
        }
        Ok(match id {
            TypeIdentifier::None => (id, View::None),
            TypeIdentifier::Primitive(p) => (id, View::Prim(*p)),
            TypeIdentifier::String { wide, bound, .. } => (
                id,
                View::Str {
                    wide: *wide,
                    bound: *bound,
                },
            ),
            TypeIdentifier::PlainSequence { element, bound, .. } => (
                id,
                View::Seq {
                    element,
                    bound: *bound,
                },
            ),
            TypeIdentifier::PlainArray { element, dims, .. } => (id, View::Array { element, dims }),
            TypeIdentifier::PlainMap { element, key, .. } => (id, View::Map { key, element }),
            TypeIdentifier::StronglyConnected { .. } => {
                return Err((Reason::Unresolved, Vec::new()))
            }
            TypeIdentifier::Minimal(_) | TypeIdentifier::Complete(_) => {
                let Some(k) = self.lib.get(id) else {
                    return Err((Reason::Unresolved, Vec::new()));
                };
                match &k.object.def {
                    TypeDef::Alias(a) => return self.view(&a.related, depth + 1),
                    TypeDef::Sequence(s) => (
                        id,
                        View::Seq {
                            element: &s.element.type_id,
                            bound: s.bound,
                        },
                    ),
                    TypeDef::Array(a) => (
                        id,
                        View::Array {
                            element: &a.element.type_id,
                            dims: &a.bounds,
                        },
                    ),
                    TypeDef::Map(m) => (
                        id,
                        View::Map {
                            key: &m.key.type_id,
                            element: &m.element.type_id,
                        },
                    ),
                    def => (id, View::Obj(def)),
                }
            }
        })
    }

    fn assignable(
        &self,
        t1: &'a TypeIdentifier,
        t2: &'a TypeIdentifier,
        erase_keys: bool,
        depth: usize,
    ) -> Res {
        let (i1, v1) = self.view(t1, depth)?;
        let (i2, v2) = self.view(t2, depth)?;
        if i1 == i2 {
            return Ok(());
        }
        let d = depth + 1;
        match (v1, v2) {
            (View::Obj(TypeDef::Bitmask(b1)), View::Obj(TypeDef::Bitmask(b2))) => {
                if b1.bit_bound == b2.bit_bound {
                    Ok(())
                } else {
                    fail(Reason::Bound)
                }
            }
            (View::Obj(TypeDef::Bitmask(b)), View::Prim(p))
            | (View::Prim(p), View::Obj(TypeDef::Bitmask(b))) => bitmask_fits(b.bit_bound, p),
            (View::Obj(TypeDef::Enum(e1)), View::Obj(TypeDef::Enum(e2))) => enums(e1, e2),
            (
                View::Str {
                    wide: w1,
                    bound: b1,
                },
                View::Str {
                    wide: w2,
                    bound: b2,
                },
            ) => {
                if w1 != w2 {
                    fail(Reason::IncompatibleType)
                } else if !self.o.ignore_string_bounds && !bound_ok(b1, b2) {
                    fail(Reason::Bound)
                } else {
                    Ok(())
                }
            }
            (
                View::Array {
                    element: e1,
                    dims: d1,
                },
                View::Array {
                    element: e2,
                    dims: d2,
                },
            ) => {
                if d1 != d2 {
                    return fail(Reason::Bound);
                }
                self.strongly(e1, e2, d)
            }
            (
                View::Seq {
                    element: e1,
                    bound: b1,
                },
                View::Seq {
                    element: e2,
                    bound: b2,
                },
            ) => {
                if !self.o.ignore_sequence_bounds && !bound_ok(b1, b2) {
                    return fail(Reason::Bound);
                }
                self.strongly(e1, e2, d)
            }
            (
                View::Map {
                    key: k1,
                    element: e1,
                },
                View::Map {
                    key: k2,
                    element: e2,
                },
            ) => {
                self.strongly(k1, k2, d)?;
                self.strongly(e1, e2, d)
            }
            (View::Obj(TypeDef::Union(u1)), View::Obj(TypeDef::Union(u2))) => {
                self.unions(u1, u2, d)
            }
            (View::Obj(TypeDef::Struct(s1)), View::Obj(TypeDef::Struct(s2))) => {
                self.structs(s1, s2, erase_keys, d)
            }
            (View::Prim(p1), View::Prim(p2)) if p1 == p2 => Ok(()),
            (
                View::Prim(Primitive::Byte | Primitive::UInt8),
                View::Prim(Primitive::Byte | Primitive::UInt8),
            )
            | (
                View::Prim(Primitive::Char8 | Primitive::Int8),
                View::Prim(Primitive::Char8 | Primitive::Int8),
            ) if self.o.xtypes_1_2_integers => Ok(()),
            _ => fail(Reason::IncompatibleType),
        }
    }

    /// Equivalent, or assignable and the writer's type delimited.
    fn strongly(&self, t1: &'a TypeIdentifier, t2: &'a TypeIdentifier, depth: usize) -> Res {
        let (i1, _) = self.view(t1, depth)?;
        let (i2, _) = self.view(t2, depth)?;
        if i1 == i2 {
            return Ok(());
        }
        if !self.delimited(t2, depth)? {
            return fail(Reason::NotDelimited);
        }
        self.assignable(t1, t2, false, depth)
    }

    /// Whether a value of the type carries its own length (XCDR2): everything but final
    /// structs and unions and collections of them.
    fn delimited(&self, t: &'a TypeIdentifier, depth: usize) -> Result<bool, Fail> {
        if depth > MAX_DEPTH {
            return Err((Reason::TooDeep, Vec::new()));
        }
        let (_, v) = self.view(t, depth)?;
        Ok(match v {
            View::Seq { element, .. } | View::Array { element, .. } => {
                self.delimited(element, depth + 1)?
            }
            View::Map { key, element } => {
                self.delimited(key, depth + 1)? && self.delimited(element, depth + 1)?
            }
            View::Obj(TypeDef::Struct(s)) => s.flags & IS_FINAL == 0,
            View::Obj(TypeDef::Union(u)) => u.flags & IS_FINAL == 0,
            _ => true,
        })
    }

    /// The struct's members with its bases' first.
    fn flattened(&self, s: &'a StructDef, depth: usize) -> Result<Vec<&'a StructMember>, Fail> {
        let mut out = Vec::new();
        if s.base != TypeIdentifier::None {
            match self.view(&s.base, depth)? {
                (_, View::Obj(TypeDef::Struct(b))) => out = self.flattened(b, depth + 1)?,
                _ => return Err((Reason::IncompatibleType, Vec::new())),
            }
        }
        out.extend(s.members.iter());
        Ok(out)
    }

    fn structs(&self, s1: &'a StructDef, s2: &'a StructDef, erase_keys: bool, depth: usize) -> Res {
        let ext = |f: u16| f & (IS_FINAL | IS_APPENDABLE | IS_MUTABLE);
        if ext(s1.flags) != ext(s2.flags) {
            return fail(Reason::DifferentExtensibility);
        }
        let final_ = s1.flags & IS_FINAL != 0;
        let appendable = s1.flags & IS_APPENDABLE != 0;
        let m1 = self.flattened(s1, depth)?;
        let m2 = self.flattened(s2, depth)?;
        let is_key = |m: &StructMember| !erase_keys && m.flags & IS_KEY != 0;
        let must =
            |m: &StructMember| m.flags & IS_MUST_UNDERSTAND != 0 && m.flags & IS_OPTIONAL == 0;
        let mut common = 0;
        for (i, a) in m1.iter().enumerate() {
            let b = m2.iter().find(|b| b.id == a.id);
            match b {
                Some(b) => {
                    common += 1;
                    if !self.o.ignore_member_names && a.detail.name_hash() != b.detail.name_hash() {
                        return at(a.id, fail(Reason::NameDiffers));
                    }
                    at(a.id, self.assignable(&a.type_id, &b.type_id, true, depth))?;
                    if is_key(b) {
                        at(a.id, self.key_member(&a.type_id, &b.type_id, depth))?;
                    }
                }
                None => {
                    if must(a) {
                        return at(a.id, fail(Reason::MustUnderstand));
                    }
                    if is_key(a) {
                        return at(a.id, fail(Reason::KeyDiffers));
                    }
                    if final_ {
                        return at(a.id, fail(Reason::NumberOfMembers));
                    }
                }
            }
            if final_ || appendable {
                match m2.get(i) {
                    Some(b) => {
                        if b.id != a.id {
                            return at(a.id, fail(Reason::MemberMismatch));
                        }
                        if (a.flags & IS_OPTIONAL) != (b.flags & IS_OPTIONAL) {
                            return at(a.id, fail(Reason::Optional));
                        }
                        at(a.id, self.strongly(&a.type_id, &b.type_id, depth))?;
                    }
                    None if final_ => return at(a.id, fail(Reason::NumberOfMembers)),
                    None => {}
                }
            }
        }
        for b in &m2 {
            if m1.iter().any(|a| a.id == b.id) {
                continue;
            }
            if must(b) {
                return at(b.id, fail(Reason::MustUnderstand));
            }
            if is_key(b) {
                return at(b.id, fail(Reason::KeyDiffers));
            }
            if final_ {
                return at(b.id, fail(Reason::NumberOfMembers));
            }
            if self.o.prevent_type_widening && b.flags & IS_OPTIONAL == 0 {
                return at(b.id, fail(Reason::Widening));
            }
        }
        if common == 0 {
            return fail(Reason::NoOverlap);
        }
        Ok(())
    }

    /// The extra rules for a key member: bounds always count, a reader's enum has every
    /// value the writer's may send, and nested keys are compared as key holders.
    fn key_member(&self, t1: &'a TypeIdentifier, t2: &'a TypeIdentifier, depth: usize) -> Res {
        let (_, v1) = self.view(t1, depth)?;
        let (_, v2) = self.view(t2, depth)?;
        match (v1, v2) {
            (View::Str { bound: b1, .. }, View::Str { bound: b2, .. })
            | (View::Seq { bound: b1, .. }, View::Seq { bound: b2, .. }) => {
                if bound_ok(b1, b2) {
                    Ok(())
                } else {
                    fail(Reason::Bound)
                }
            }
            (View::Obj(TypeDef::Enum(e1)), View::Obj(TypeDef::Enum(e2))) => {
                if e2
                    .literals
                    .iter()
                    .all(|l2| e1.literals.iter().any(|l1| l1.value == l2.value))
                {
                    Ok(())
                } else {
                    fail(Reason::KeyDiffers)
                }
            }
            (View::Obj(TypeDef::Struct(s1)), View::Obj(TypeDef::Struct(s2))) => {
                let k1 = self.key_holder(s1, depth)?;
                let k2 = self.key_holder(s2, depth)?;
                if k1.len() != k2.len() {
                    return fail(Reason::KeyDiffers);
                }
                for (a, b) in k1.iter().zip(&k2) {
                    if a.id != b.id {
                        return at(a.id, fail(Reason::KeyDiffers));
                    }
                    at(
                        a.id,
                        self.assignable(&a.type_id, &b.type_id, false, depth + 1),
                    )?;
                    at(a.id, self.key_member(&a.type_id, &b.type_id, depth + 1))?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The members of a struct's key holder: its key members, or all when it has none.
    fn key_holder(&self, s: &'a StructDef, depth: usize) -> Result<Vec<&'a StructMember>, Fail> {
        let all = self.flattened(s, depth)?;
        let keys: Vec<&StructMember> = all
            .iter()
            .copied()
            .filter(|m| m.flags & IS_KEY != 0)
            .collect();
        Ok(if keys.is_empty() { all } else { keys })
    }

    fn unions(&self, u1: &'a UnionDef, u2: &'a UnionDef, depth: usize) -> Res {
        let ext = |f: u16| f & (IS_FINAL | IS_APPENDABLE | IS_MUTABLE);
        if ext(u1.flags) != ext(u2.flags) {
            return fail(Reason::DifferentExtensibility);
        }
        self.strongly(&u1.discriminator, &u2.discriminator, depth)?;
        if (u1.discriminator_flags & IS_KEY) != (u2.discriminator_flags & IS_KEY) {
            return fail(Reason::KeyDiffers);
        }
        let strict = u1.flags & IS_FINAL != 0 || self.o.prevent_type_widening;
        let default1 = u1.members.iter().find(|m| m.flags & IS_DEFAULT != 0);
        let default2 = u2.members.iter().find(|m| m.flags & IS_DEFAULT != 0);
        let mut overlap = false;
        for a in &u1.members {
            let same_id = u2.members.iter().find(|b| b.id == a.id);
            if let Some(b) = same_id {
                if !self.o.ignore_member_names && a.detail.name_hash() != b.detail.name_hash() {
                    return at(a.id, fail(Reason::NameDiffers));
                }
            }
            let shares = u2
                .members
                .iter()
                .any(|b| b.labels.iter().any(|l| a.labels.contains(l)));
            overlap |= shares;
            if a.flags & IS_DEFAULT == 0 && !shares {
                if let Some(d2) = default2 {
                    at(a.id, self.assignable(&a.type_id, &d2.type_id, false, depth))?;
                }
            }
            if strict {
                match same_id {
                    Some(b) if b.labels == a.labels => {}
                    _ => return at(a.id, fail(Reason::MissingCase)),
                }
            }
        }
        if strict && u1.members.len() != u2.members.len() {
            return fail(Reason::NumberOfMembers);
        }
        for b in &u2.members {
            if b.flags & IS_DEFAULT != 0 {
                if let Some(d1) = default1 {
                    at(b.id, self.assignable(&d1.type_id, &b.type_id, false, depth))?;
                }
                continue;
            }
            let target = u1
                .members
                .iter()
                .find(|a| a.labels.iter().any(|l| b.labels.contains(l)))
                .or(default1);
            match target {
                Some(a) => at(b.id, self.assignable(&a.type_id, &b.type_id, false, depth))?,
                None if self.o.prevent_type_widening => return at(b.id, fail(Reason::MissingCase)),
                None => {}
            }
        }
        if !overlap {
            return fail(Reason::NoOverlap);
        }
        Ok(())
    }
}

/// `reader` bound admits `writer` bound (0 = unbounded).
fn bound_ok(reader: u32, writer: u32) -> bool {
    reader == 0 || (writer != 0 && reader >= writer)
}

fn bitmask_fits(bit_bound: u16, p: Primitive) -> Res {
    let range = match p {
        Primitive::UInt8 => 1..=8,
        Primitive::UInt16 => 9..=16,
        Primitive::UInt32 => 17..=32,
        Primitive::UInt64 => 33..=64,
        _ => return fail(Reason::IncompatibleType),
    };
    if range.contains(&bit_bound) {
        Ok(())
    } else {
        fail(Reason::Bound)
    }
}

fn enums(e1: &EnumDef, e2: &EnumDef) -> Res {
    // Enum flags are "unused" in the spec; Cyclone DDS sets FINAL or APPENDABLE, Fast DDS 0
    // (read as final).
    let ext = |f: u16| {
        if f & IS_APPENDABLE != 0 {
            IS_APPENDABLE
        } else {
            IS_FINAL
        }
    };
    if ext(e1.flags) != ext(e2.flags) {
        return fail(Reason::DifferentExtensibility);
    }
    for a in &e1.literals {
        if let Some(b) = e2.literals.iter().find(|b| b.value == a.value) {
            if a.detail.name_hash() != b.detail.name_hash() {
                return fail(Reason::NameDiffers);
            }
        }
    }
    if ext(e1.flags) == IS_FINAL {
        let same = e1.literals.len() == e2.literals.len()
            && e1
                .literals
                .iter()
                .all(|a| e2.literals.iter().any(|b| b.value == a.value));
        if !same {
            return fail(Reason::MissingCase);
        }
    }
    Ok(())
}
