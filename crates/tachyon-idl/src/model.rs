//! The meaning of the parsed IDL: every named definition by its fully qualified name,
//! names resolved by IDL's scoping rules, constants evaluated, and each type described
//! (`tachyon_cdr::TypeDesc`) as Cyclone DDS's `idlc` describes it — member ids
//! (`@id`, `@hashid`, `@autoid`), keys, optional members, extensibility, bounds, typedefs.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use tachyon_cdr::{
    AliasDesc, BitFlag, BitmaskDesc, CaseDesc, EnumDesc, EnumLiteral, Extensibility, MemberDesc,
    Primitive, StructDesc, TypeDesc, UnionDesc,
};

use crate::ast::{self, find, Annotation, Base, Def, Expr, ScopedName, TypeSpec};
use crate::error::{IdlError, Pos, Result};

/// What a name stands for.
#[derive(Clone, Debug)]
pub enum Kind {
    Struct(ast::StructDef),
    Union(ast::UnionDef),
    Enum(ast::EnumDef),
    Bitmask(ast::BitmaskDef),
    /// One declarator of a typedef.
    Typedef {
        ty: TypeSpec,
        dims: Vec<Expr>,
    },
    Const(ast::ConstDef),
    /// An enumerator of enum entry `of`, its index there.
    Enumerator {
        of: usize,
        index: usize,
    },
    Forward,
}

/// A named definition.
#[derive(Clone, Debug)]
pub struct Entry {
    /// The enclosing modules.
    pub scope: Vec<String>,
    pub name: String,
    pub kind: Kind,
    pub pos: Pos,
}

impl Entry {
    /// `Module::Name`.
    pub fn full_name(&self) -> String {
        let mut s = self.scope.join("::");
        if !s.is_empty() {
            s.push_str("::");
        }
        s.push_str(&self.name);
        s
    }
}

/// A constant's value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Int(i128),
    Float(f64),
    Str(String),
    Char(char),
    Bool(bool),
    /// An enumerator: the enum entry and the enumerator's value.
    Enumerator(usize, i32),
}

/// Deepest chain of constants referring to constants, and of nested types.
const MAX_DEPTH: usize = 64;

/// The definitions of a translation unit.
pub struct Model {
    pub entries: Vec<Entry>,
    by_name: HashMap<String, usize>,
    /// The order modules and definitions appeared in (for generated code).
    pub defs: Vec<Def>,
    default_extensibility: Extensibility,
    descs: RefCell<HashMap<usize, TypeDesc>>,
    describing: RefCell<HashSet<usize>>,
}

impl Model {
    pub fn new(defs: Vec<Def>, default_extensibility: Extensibility) -> Result<Model> {
        let mut m = Model {
            entries: Vec::new(),
            by_name: HashMap::new(),
            defs: Vec::new(),
            default_extensibility,
            descs: RefCell::new(HashMap::new()),
            describing: RefCell::new(HashSet::new()),
        };
        m.collect(&defs, &mut Vec::new())?;
        m.defs = defs;
        Ok(m)
    }

    fn add(&mut self, scope: &[String], name: &str, kind: Kind, pos: &Pos) -> Result<usize> {
        let entry = Entry {
            scope: scope.to_vec(),
            name: name.to_owned(),
            kind,
            pos: pos.clone(),
        };
        let full = entry.full_name();
        let idx = self.entries.len();
        if let Some(&old) = self.by_name.get(&full) {
            let forward = matches!(self.entries[old].kind, Kind::Forward);
            if matches!(entry.kind, Kind::Forward) {
                return Ok(old);
            }
            if !forward {
                return Err(IdlError::at(
                    pos,
                    format!(
                        "{full} is defined twice (first at {})",
                        self.entries[old].pos
                    ),
                ));
            }
        }
        self.entries.push(entry);
        self.by_name.insert(full, idx);
        Ok(idx)
    }

    fn collect(&mut self, defs: &[Def], scope: &mut Vec<String>) -> Result<()> {
        for d in defs {
            match d {
                Def::Module { name, defs, .. } => {
                    scope.push(name.clone());
                    self.collect(defs, scope)?;
                    scope.pop();
                }
                Def::Struct(s) => {
                    self.add(scope, &s.name, Kind::Struct(s.clone()), &s.pos)?;
                }
                Def::Union(u) => {
                    self.add(scope, &u.name, Kind::Union(u.clone()), &u.pos)?;
                }
                Def::Enum(e) => {
                    let of = self.add(scope, &e.name, Kind::Enum(e.clone()), &e.pos)?;
                    // Enumerators live in the scope that encloses their enum.
                    for (index, l) in e.enumerators.iter().enumerate() {
                        self.add(scope, &l.name, Kind::Enumerator { of, index }, &l.pos)?;
                    }
                }
                Def::Bitmask(b) => {
                    self.add(scope, &b.name, Kind::Bitmask(b.clone()), &b.pos)?;
                }
                Def::Typedef(t) => {
                    for decl in &t.declarators {
                        let kind = Kind::Typedef {
                            ty: t.ty.clone(),
                            dims: decl.dims.clone(),
                        };
                        self.add(scope, &decl.name, kind, &decl.pos)?;
                    }
                }
                Def::Const(c) => {
                    self.add(scope, &c.name, Kind::Const(c.clone()), &c.pos)?;
                }
                Def::Forward { name, pos } => {
                    self.add(scope, name, Kind::Forward, pos)?;
                }
            }
        }
        Ok(())
    }

    /// The entry `name` names from `scope` (the innermost enclosing scope that has it).
    pub fn resolve(&self, scope: &[String], name: &ScopedName, pos: &Pos) -> Result<usize> {
        let joined = name.parts.join("::");
        let found = if name.absolute {
            self.by_name.get(&joined).copied()
        } else {
            (0..=scope.len()).rev().find_map(|i| {
                let mut full = scope[..i].join("::");
                if !full.is_empty() {
                    full.push_str("::");
                }
                full.push_str(&joined);
                self.by_name.get(&full).copied()
            })
        };
        found.ok_or_else(|| IdlError::at(pos, format!("{name} is not declared")))
    }

    /// The entry of a fully qualified name (`A::B`, or `B` when only one entry has that
    /// last part).
    pub fn lookup(&self, name: &str) -> Option<usize> {
        let name = name.trim_start_matches("::");
        if let Some(&i) = self.by_name.get(name) {
            return Some(i);
        }
        let mut hits =
            self.entries.iter().enumerate().filter(|(_, e)| {
                e.name == name && matches!(e.kind, Kind::Struct(_) | Kind::Union(_))
            });
        let first = hits.next()?;
        hits.next().is_none().then_some(first.0)
    }

    /// The value of constant entry `i`, converted to its declared type.
    pub fn const_value(&self, i: usize) -> Result<Value> {
        let e = &self.entries[i];
        match &e.kind {
            Kind::Const(c) => {
                let v = self.eval(&e.scope, &c.value, &c.pos)?;
                self.convert(&e.scope, &c.ty, v, &c.pos)
            }
            _ => Err(IdlError::at(
                &e.pos,
                format!("{} is not a constant", e.full_name()),
            )),
        }
    }

    /// Evaluates a constant expression in `scope`.
    pub fn eval(&self, scope: &[String], e: &Expr, pos: &Pos) -> Result<Value> {
        self.eval_at(scope, e, pos, 0)
    }

    fn eval_at(&self, scope: &[String], e: &Expr, pos: &Pos, depth: usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            return Err(IdlError::at(
                pos,
                "constants refer to each other without end",
            ));
        }
        let d = depth + 1;
        let int = |v: &Value| match v {
            Value::Int(n) => Ok(*n),
            Value::Char(c) => Ok(i128::from(u32::from(*c))),
            _ => Err(IdlError::at(pos, format!("{v:?} is not an integer"))),
        };
        Ok(match e {
            Expr::Int(n) => Value::Int(
                i128::try_from(*n)
                    .map_err(|_| IdlError::at(pos, "an integer literal too large"))?,
            ),
            Expr::Float(f) => Value::Float(*f),
            Expr::Str(s) => Value::Str(s.clone()),
            Expr::Char(c) => Value::Char(*c),
            Expr::Bool(b) => Value::Bool(*b),
            Expr::Name(n) => {
                let i = self.resolve(scope, n, pos)?;
                let entry = &self.entries[i];
                match &entry.kind {
                    Kind::Const(c) => {
                        let v = self.eval_at(&entry.scope, &c.value, &c.pos, d)?;
                        self.convert(&entry.scope, &c.ty, v, &c.pos)?
                    }
                    Kind::Enumerator { of, index } => {
                        Value::Enumerator(*of, self.enumerator_values(*of)?[*index])
                    }
                    _ => {
                        return Err(IdlError::at(
                            pos,
                            format!("{n} is not a constant or an enumerator"),
                        ))
                    }
                }
            }
            Expr::Unary(op, x) => {
                let v = self.eval_at(scope, x, pos, d)?;
                match (*op, v) {
                    ("-", Value::Float(f)) => Value::Float(-f),
                    ("+", Value::Float(f)) => Value::Float(f),
                    ("-", v) => Value::Int(-int(&v)?),
                    ("+", v) => Value::Int(int(&v)?),
                    (_, v) => Value::Int(!int(&v)?),
                }
            }
            Expr::Binary(op, a, b) => {
                let a = self.eval_at(scope, a, pos, d)?;
                let b = self.eval_at(scope, b, pos, d)?;
                if let (Value::Float(_), _) | (_, Value::Float(_)) = (&a, &b) {
                    let f = |v: &Value| match v {
                        Value::Float(f) => Ok(*f),
                        v => int(v).map(|n| n as f64),
                    };
                    let (x, y) = (f(&a)?, f(&b)?);
                    return Ok(Value::Float(match *op {
                        "+" => x + y,
                        "-" => x - y,
                        "*" => x * y,
                        "/" => x / y,
                        _ => return Err(IdlError::at(pos, format!("`{op}` on floating point"))),
                    }));
                }
                let (x, y) = (int(&a)?, int(&b)?);
                let overflow = || IdlError::at(pos, format!("`{op}` overflows or divides by zero"));
                Value::Int(match *op {
                    "+" => x.checked_add(y).ok_or_else(overflow)?,
                    "-" => x.checked_sub(y).ok_or_else(overflow)?,
                    "*" => x.checked_mul(y).ok_or_else(overflow)?,
                    "/" => x.checked_div(y).ok_or_else(overflow)?,
                    "%" => x.checked_rem(y).ok_or_else(overflow)?,
                    "<<" => u32::try_from(y)
                        .ok()
                        .and_then(|s| x.checked_shl(s))
                        .ok_or_else(overflow)?,
                    ">>" => u32::try_from(y)
                        .ok()
                        .and_then(|s| x.checked_shr(s))
                        .ok_or_else(overflow)?,
                    "&" => x & y,
                    "|" => x | y,
                    _ => x ^ y,
                })
            }
        })
    }

    /// A constant's value as its declared type holds it (integers range-checked).
    fn convert(&self, scope: &[String], ty: &TypeSpec, v: Value, pos: &Pos) -> Result<Value> {
        let range = |lo: i128, hi: i128, v: Value| match v {
            Value::Int(n) if (lo..=hi).contains(&n) => Ok(Value::Int(n)),
            Value::Int(n) => Err(IdlError::at(
                pos,
                format!("{n} does not fit the constant's type"),
            )),
            other => Err(IdlError::at(
                pos,
                format!("{other:?} does not fit the constant's type"),
            )),
        };
        match self.unalias_spec(scope, ty, pos)? {
            TypeSpec::Base(b) => match b {
                Base::Int8 => range(i8::MIN.into(), i8::MAX.into(), v),
                Base::Octet | Base::UInt8 => range(0, u8::MAX.into(), v),
                Base::Short => range(i16::MIN.into(), i16::MAX.into(), v),
                Base::UShort => range(0, u16::MAX.into(), v),
                Base::Long => range(i32::MIN.into(), i32::MAX.into(), v),
                Base::ULong => range(0, u32::MAX.into(), v),
                Base::LongLong => range(i64::MIN.into(), i64::MAX.into(), v),
                Base::ULongLong => range(0, u64::MAX.into(), v),
                Base::Float | Base::Double | Base::LongDouble => Ok(match v {
                    Value::Int(n) => Value::Float(n as f64),
                    v => v,
                }),
                _ => Ok(v),
            },
            _ => Ok(v),
        }
    }

    /// The type spec a typedef chain ends in (for constants' types).
    fn unalias_spec(&self, scope: &[String], ty: &TypeSpec, pos: &Pos) -> Result<TypeSpec> {
        let mut ty = ty.clone();
        let mut scope = scope.to_vec();
        for _ in 0..MAX_DEPTH {
            let TypeSpec::Named(n, p) = &ty else {
                return Ok(ty);
            };
            let i = self.resolve(&scope, n, p)?;
            match &self.entries[i].kind {
                Kind::Typedef { ty: t, dims, .. } if dims.is_empty() => {
                    scope.clone_from(&self.entries[i].scope);
                    ty = t.clone();
                }
                _ => return Ok(ty),
            }
        }
        Err(IdlError::at(pos, "typedefs nest too deeply"))
    }

    /// An integer constant expression that must be a positive bound or dimension.
    pub fn eval_u32(&self, scope: &[String], e: &Expr, pos: &Pos, what: &str) -> Result<u32> {
        match self.eval(scope, e, pos)? {
            Value::Int(n) if n > 0 && n <= i128::from(u32::MAX) => Ok(n as u32),
            v => Err(IdlError::at(
                pos,
                format!("{what} must be a positive integer, not {v:?}"),
            )),
        }
    }

    /// The values of an enum's enumerators (`@value(N)`, else one more than the previous).
    pub fn enumerator_values(&self, of: usize) -> Result<Vec<i32>> {
        let Kind::Enum(e) = &self.entries[of].kind else {
            return Ok(Vec::new());
        };
        let scope = &self.entries[of].scope;
        let mut next: i64 = 0;
        let mut out = Vec::new();
        for l in &e.enumerators {
            if let Some(a) = find(&l.annotations, "value") {
                let v = a
                    .value()
                    .ok_or_else(|| IdlError::at(&a.pos, "@value needs a value"))?;
                match self.eval(scope, v, &a.pos)? {
                    Value::Int(n) => next = n as i64,
                    v => {
                        return Err(IdlError::at(
                            &a.pos,
                            format!("@value({v:?}): not an integer"),
                        ))
                    }
                }
            }
            let v = i32::try_from(next)
                .map_err(|_| IdlError::at(&l.pos, "an enumerator value beyond 32 bits"))?;
            out.push(v);
            next += 1;
        }
        Ok(out)
    }

    /// Whether annotation `name` is present and not set to FALSE.
    pub fn flag(&self, list: &[Annotation], name: &str) -> Result<bool> {
        let Some(a) = find(list, name) else {
            return Ok(false);
        };
        match a.value() {
            None => Ok(true),
            Some(e) => match self.eval(&[], e, &a.pos)? {
                Value::Bool(b) => Ok(b),
                Value::Int(n) => Ok(n != 0),
                v => Err(IdlError::at(
                    &a.pos,
                    format!("@{name}({v:?}): TRUE or FALSE"),
                )),
            },
        }
    }

    /// The extensibility annotations name (`@final`, `@appendable`, `@mutable`,
    /// `@extensibility(…)`), else the default.
    pub fn extensibility(&self, list: &[Annotation]) -> Result<Extensibility> {
        if let Some(a) = find(list, "extensibility") {
            let word = match a.value() {
                Some(Expr::Name(n)) => n.parts.last().cloned().unwrap_or_default(),
                _ => String::new(),
            };
            return match word.to_ascii_uppercase().as_str() {
                "FINAL" => Ok(Extensibility::Final),
                "APPENDABLE" => Ok(Extensibility::Appendable),
                "MUTABLE" => Ok(Extensibility::Mutable),
                _ => Err(IdlError::at(
                    &a.pos,
                    "@extensibility takes FINAL, APPENDABLE or MUTABLE",
                )),
            };
        }
        Ok(if self.flag(list, "mutable")? {
            Extensibility::Mutable
        } else if self.flag(list, "appendable")? {
            Extensibility::Appendable
        } else if self.flag(list, "final")? {
            Extensibility::Final
        } else {
            self.default_extensibility
        })
    }

    /// Whether members without `@id` get hashed ids (`@autoid(HASH)`).
    pub fn autoid_hash(&self, list: &[Annotation]) -> Result<bool> {
        let Some(a) = find(list, "autoid") else {
            return Ok(false);
        };
        match a.value() {
            None => Ok(true),
            Some(Expr::Name(n)) => {
                match n.parts.last().map(|s| s.to_ascii_uppercase()).as_deref() {
                    Some("HASH") => Ok(true),
                    Some("SEQUENTIAL") => Ok(false),
                    _ => Err(IdlError::at(&a.pos, "@autoid takes SEQUENTIAL or HASH")),
                }
            }
            Some(_) => Err(IdlError::at(&a.pos, "@autoid takes SEQUENTIAL or HASH")),
        }
    }

    /// A member's id: `@id(N)`, `@hashid`/`@hashid("name")`, a hash under `@autoid(HASH)`,
    /// else `next`.
    pub fn member_id(
        &self,
        scope: &[String],
        list: &[Annotation],
        name: &str,
        hash: bool,
        next: u32,
    ) -> Result<u32> {
        if let Some(a) = find(list, "id") {
            let e = a
                .value()
                .ok_or_else(|| IdlError::at(&a.pos, "@id needs a value"))?;
            return match self.eval(scope, e, &a.pos)? {
                Value::Int(n) if (0..=0x0fff_ffff).contains(&n) => Ok(n as u32),
                v => Err(IdlError::at(
                    &a.pos,
                    format!("@id({v:?}): an integer below 2^28"),
                )),
            };
        }
        if let Some(a) = find(list, "hashid") {
            let key = match a.value() {
                Some(Expr::Str(s)) => s.clone(),
                Some(_) => return Err(IdlError::at(&a.pos, "@hashid takes a string")),
                None => name.to_owned(),
            };
            return Ok(tachyon_cdr::member_id::hashed_member_id(&key));
        }
        Ok(if hash {
            tachyon_cdr::member_id::hashed_member_id(name)
        } else {
            next
        })
    }

    /// The description of entry `i` (a named type).
    pub fn describe(&self, i: usize) -> Result<TypeDesc> {
        if let Some(d) = self.descs.borrow().get(&i) {
            return Ok(d.clone());
        }
        let entry = &self.entries[i];
        if !self.describing.borrow_mut().insert(i) {
            return Err(IdlError::at(
                &entry.pos,
                format!(
                    "{} refers to itself: recursive types are not supported",
                    entry.full_name()
                ),
            ));
        }
        let d = self.describe_entry(entry);
        self.describing.borrow_mut().remove(&i);
        let d = d?;
        self.descs.borrow_mut().insert(i, d.clone());
        Ok(d)
    }

    fn describe_entry(&self, entry: &Entry) -> Result<TypeDesc> {
        let scope = &entry.scope;
        let name = entry.full_name();
        Ok(match &entry.kind {
            Kind::Struct(s) => {
                let base = match &s.base {
                    Some((n, p)) => {
                        let b = self.resolve(scope, n, p)?;
                        match unalias(self.describe(b)?) {
                            TypeDesc::Struct(b) => Some(b),
                            _ => return Err(IdlError::at(p, format!("{n} is not a struct"))),
                        }
                    }
                    None => None,
                };
                let hash = self.autoid_hash(&s.annotations)?;
                let mut next = base
                    .as_ref()
                    .and_then(|b| last_id(b))
                    .map_or(0, |id| id + 1);
                let mut members = Vec::with_capacity(s.members.len());
                for m in &s.members {
                    let a = &m.annotations;
                    let d = &m.declarator;
                    let id = self.member_id(scope, a, &d.name, hash, next)?;
                    next = id.wrapping_add(1);
                    if members.iter().any(|x: &MemberDesc| x.name == d.name) {
                        return Err(IdlError::at(
                            &d.pos,
                            format!("member {} is declared twice", d.name),
                        ));
                    }
                    members.push(MemberDesc {
                        name: d.name.clone(),
                        id,
                        ty: self.member_type(scope, &m.ty, &d.dims, &d.pos)?,
                        key: self.flag(a, "key")?,
                        optional: self.flag(a, "optional")?,
                        must_understand: self.flag(a, "must_understand")?,
                        external: self.flag(a, "external")?,
                    });
                }
                TypeDesc::Struct(Arc::new(StructDesc {
                    name,
                    extensibility: self.extensibility(&s.annotations)?,
                    autoid_hash: hash,
                    nested: self.flag(&s.annotations, "nested")?,
                    base,
                    members,
                }))
            }
            Kind::Union(u) => {
                let discriminator = self.type_of(scope, &u.discriminator, &u.pos)?;
                let mut cases = Vec::with_capacity(u.cases.len());
                let mut next = 0u32;
                let hash = self.autoid_hash(&u.annotations)?;
                for c in &u.cases {
                    let d = &c.declarator;
                    let id = self.member_id(scope, &c.annotations, &d.name, hash, next)?;
                    next = id.wrapping_add(1);
                    let mut labels = Vec::new();
                    let mut default = false;
                    for l in &c.labels {
                        match l {
                            None => default = true,
                            Some(e) => labels.push(self.label(scope, e, &d.pos)?),
                        }
                    }
                    cases.push(CaseDesc {
                        name: d.name.clone(),
                        id,
                        ty: self.member_type(scope, &c.ty, &d.dims, &d.pos)?,
                        labels,
                        default,
                        external: self.flag(&c.annotations, "external")?,
                    });
                }
                TypeDesc::Union(Arc::new(UnionDesc {
                    name,
                    extensibility: self.extensibility(&u.annotations)?,
                    nested: self.flag(&u.annotations, "nested")?,
                    discriminator,
                    discriminator_key: self.flag(&u.discriminator_annotations, "key")?,
                    cases,
                }))
            }
            Kind::Enum(e) => {
                let values = self.enumerator_values(self.by_name[&name])?;
                TypeDesc::Enum(Arc::new(EnumDesc {
                    name,
                    bit_bound: self.bit_bound(scope, &e.annotations, 32)?,
                    literals: e
                        .enumerators
                        .iter()
                        .zip(values)
                        .map(|(l, value)| {
                            Ok(EnumLiteral {
                                name: l.name.clone(),
                                value,
                                default: self.flag(&l.annotations, "default_literal")?,
                            })
                        })
                        .collect::<Result<_>>()?,
                }))
            }
            Kind::Bitmask(b) => {
                let bit_bound = self.bit_bound(scope, &b.annotations, 32)?;
                let mut next = 0u16;
                let mut flags = Vec::new();
                for f in &b.flags {
                    if let Some(a) = find(&f.annotations, "position") {
                        let e = a
                            .value()
                            .ok_or_else(|| IdlError::at(&a.pos, "@position needs a value"))?;
                        next = match self.eval(scope, e, &a.pos)? {
                            Value::Int(n) if (0..i128::from(bit_bound)).contains(&n) => n as u16,
                            v => {
                                return Err(IdlError::at(
                                    &a.pos,
                                    format!("@position({v:?}): below the bit bound"),
                                ))
                            }
                        };
                    }
                    if next >= bit_bound {
                        return Err(IdlError::at(&f.pos, "more flags than the bit bound"));
                    }
                    flags.push(BitFlag {
                        name: f.name.clone(),
                        position: next,
                    });
                    next += 1;
                }
                TypeDesc::Bitmask(Arc::new(BitmaskDesc {
                    name,
                    bit_bound,
                    flags,
                }))
            }
            Kind::Typedef { ty, dims, .. } => TypeDesc::Alias(Arc::new(AliasDesc {
                name,
                target: self.member_type(scope, ty, dims, &entry.pos)?,
            })),
            Kind::Const(_) | Kind::Enumerator { .. } => {
                return Err(IdlError::at(&entry.pos, format!("{name} is not a type")))
            }
            Kind::Forward => {
                return Err(IdlError::at(
                    &entry.pos,
                    format!("{name} is declared but never defined"),
                ))
            }
        })
    }

    fn bit_bound(&self, scope: &[String], list: &[Annotation], default: u16) -> Result<u16> {
        let Some(a) = find(list, "bit_bound") else {
            return Ok(default);
        };
        let e = a
            .value()
            .ok_or_else(|| IdlError::at(&a.pos, "@bit_bound needs a value"))?;
        match self.eval(scope, e, &a.pos)? {
            Value::Int(n) if (1..=64).contains(&n) => Ok(n as u16),
            v => Err(IdlError::at(&a.pos, format!("@bit_bound({v:?}): 1 to 64"))),
        }
    }

    /// A union label's discriminator value.
    fn label(&self, scope: &[String], e: &Expr, pos: &Pos) -> Result<i32> {
        let v = match self.eval(scope, e, pos)? {
            Value::Int(n) => n,
            Value::Char(c) => i128::from(u32::from(c)),
            Value::Bool(b) => i128::from(b),
            Value::Enumerator(_, v) => i128::from(v),
            v => {
                return Err(IdlError::at(
                    pos,
                    format!("case {v:?}: not a discriminator value"),
                ))
            }
        };
        i32::try_from(v)
            .or_else(|_| u32::try_from(v).map(|u| u as i32))
            .map_err(|_| IdlError::at(pos, format!("case {v}: beyond 32 bits")))
    }

    /// A member's type: its type spec, made an array by the declarator's dimensions.
    pub fn member_type(
        &self,
        scope: &[String],
        ty: &TypeSpec,
        dims: &[Expr],
        pos: &Pos,
    ) -> Result<TypeDesc> {
        let element = self.type_of(scope, ty, pos)?;
        if dims.is_empty() {
            return Ok(element);
        }
        let dims = dims
            .iter()
            .map(|d| self.eval_u32(scope, d, pos, "an array dimension"))
            .collect::<Result<Vec<_>>>()?;
        Ok(TypeDesc::Array {
            element: Box::new(element),
            dims,
        })
    }

    /// The description of a type as written.
    pub fn type_of(&self, scope: &[String], ty: &TypeSpec, at: &Pos) -> Result<TypeDesc> {
        Ok(match ty {
            TypeSpec::Base(b) => TypeDesc::Primitive(primitive(*b)),
            TypeSpec::String { wide, bound } => TypeDesc::String {
                wide: *wide,
                bound: match bound {
                    Some(e) => self.eval_u32(scope, e, at, "a string bound")?,
                    None => 0,
                },
            },
            TypeSpec::Sequence { element, bound } => TypeDesc::Sequence {
                element: Box::new(self.type_of(scope, element, at)?),
                bound: match bound {
                    Some(e) => self.eval_u32(scope, e, at, "a sequence bound")?,
                    None => 0,
                },
            },
            TypeSpec::Map { key, value, bound } => TypeDesc::Map {
                key: Box::new(self.type_of(scope, key, at)?),
                value: Box::new(self.type_of(scope, value, at)?),
                bound: match bound {
                    Some(e) => self.eval_u32(scope, e, at, "a map bound")?,
                    None => 0,
                },
            },
            TypeSpec::Named(n, pos) => {
                let i = self.resolve(scope, n, pos)?;
                match &self.entries[i].kind {
                    Kind::Const(_) | Kind::Enumerator { .. } => {
                        return Err(IdlError::at(pos, format!("{n} is a constant, not a type")))
                    }
                    _ => self.describe(i)?,
                }
            }
        })
    }
}

fn unalias(mut t: TypeDesc) -> TypeDesc {
    for _ in 0..MAX_DEPTH {
        match t {
            TypeDesc::Alias(a) => t = a.target.clone(),
            other => return other,
        }
    }
    t
}

fn last_id(s: &StructDesc) -> Option<u32> {
    s.members
        .last()
        .map(|m| m.id)
        .or_else(|| s.base.as_deref().and_then(last_id))
}

pub fn primitive(b: Base) -> Primitive {
    match b {
        Base::Boolean => Primitive::Boolean,
        Base::Octet => Primitive::Byte,
        Base::Char => Primitive::Char8,
        Base::WChar => Primitive::Char16,
        Base::Int8 => Primitive::Int8,
        Base::UInt8 => Primitive::UInt8,
        Base::Short => Primitive::Int16,
        Base::UShort => Primitive::UInt16,
        Base::Long => Primitive::Int32,
        Base::ULong => Primitive::UInt32,
        Base::LongLong => Primitive::Int64,
        Base::ULongLong => Primitive::UInt64,
        Base::Float => Primitive::Float32,
        Base::Double => Primitive::Float64,
        Base::LongDouble => Primitive::Float128,
    }
}
