//! A type description written as IDL 4: what `tachyon spy typeof` prints of a peer's type.
//!
//! Every named type the description uses comes before its first use, in modules from its
//! scoped name (`A::B::T` in `module A { module B { … }; };`); extensibility is always
//! written (`@final` too), and `@id` only where the id is not the one declaration order gives.

use std::fmt::Write as _;

use tachyon_cdr::{Extensibility, MemberDesc, TypeDesc};

/// The IDL declarations of `desc` and of every named type it uses, dependencies first.
pub fn to_idl(desc: &TypeDesc) -> String {
    let mut order: Vec<TypeDesc> = Vec::new();
    collect(desc, &mut order, 0);
    let mut out = String::new();
    let mut open: Vec<String> = Vec::new();
    for t in &order {
        let Some(full) = t.name() else { continue };
        let mut path: Vec<String> = full
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
        let local = path.pop().unwrap_or_default();
        let common = open.iter().zip(&path).take_while(|(a, b)| a == b).count();
        while open.len() > common {
            open.pop();
            let _ = writeln!(out, "{}}};", indent(open.len()));
        }
        while open.len() < path.len() {
            let m = &path[open.len()];
            let _ = writeln!(out, "{}module {m} {{", indent(open.len()));
            open.push(m.clone());
        }
        declare(&mut out, t, &local, open.len());
    }
    while !open.is_empty() {
        open.pop();
        let _ = writeln!(out, "{}}};", indent(open.len()));
    }
    out
}

fn indent(n: usize) -> String {
    "    ".repeat(n)
}

/// Appends the named types `desc` uses (post-order: dependencies first), each once.
fn collect(desc: &TypeDesc, order: &mut Vec<TypeDesc>, depth: usize) {
    if depth > 64 {
        return;
    }
    let d = depth + 1;
    match desc {
        TypeDesc::Sequence { element, .. } | TypeDesc::Array { element, .. } => {
            collect(element, order, d)
        }
        TypeDesc::Map { key, value, .. } => {
            collect(key, order, d);
            collect(value, order, d);
        }
        TypeDesc::Primitive(_) | TypeDesc::String { .. } => {}
        named => {
            if order.iter().any(|o| o.name() == named.name()) {
                return;
            }
            match named {
                TypeDesc::Struct(s) => {
                    if let Some(b) = &s.base {
                        collect(&TypeDesc::Struct(b.clone()), order, d);
                    }
                    for m in &s.members {
                        collect(&m.ty, order, d);
                    }
                }
                TypeDesc::Union(u) => {
                    collect(&u.discriminator, order, d);
                    for c in &u.cases {
                        collect(&c.ty, order, d);
                    }
                }
                TypeDesc::Alias(a) => collect(&a.target, order, d),
                _ => {}
            }
            order.push(named.clone());
        }
    }
}

/// The spelling of a type where it is used (arrays: the element; the dimensions go after
/// the member name, see [`dims`]).
fn spell(t: &TypeDesc) -> String {
    match t {
        TypeDesc::Primitive(p) => p.idl_name().to_owned(),
        TypeDesc::String { wide, bound } => {
            let s = if *wide { "wstring" } else { "string" };
            if *bound == 0 {
                s.to_owned()
            } else {
                format!("{s}<{bound}>")
            }
        }
        TypeDesc::Sequence { element, bound } => {
            if *bound == 0 {
                format!("sequence<{}>", spell_anonymous(element))
            } else {
                format!("sequence<{}, {bound}>", spell_anonymous(element))
            }
        }
        TypeDesc::Map { key, value, bound } => {
            if *bound == 0 {
                format!("map<{}, {}>", spell_anonymous(key), spell_anonymous(value))
            } else {
                format!(
                    "map<{}, {}, {bound}>",
                    spell_anonymous(key),
                    spell_anonymous(value)
                )
            }
        }
        TypeDesc::Array { element, .. } => spell(element),
        named => named.name().unwrap_or("?").to_owned(),
    }
}

/// A type inside a template (a sequence's element): an array there has no name to carry its
/// dimensions, so it is written as IDL 4 allows nowhere else; Tachyon never makes one.
fn spell_anonymous(t: &TypeDesc) -> String {
    match t {
        TypeDesc::Array { element, dims } => format!("{}{}", spell(element), dims_of(dims)),
        other => spell(other),
    }
}

fn dims_of(dims: &[u32]) -> String {
    dims.iter().map(|d| format!("[{d}]")).collect()
}

/// The dimensions written after a member's name.
fn dims(t: &TypeDesc) -> String {
    match t {
        TypeDesc::Array { dims, .. } => dims_of(dims),
        _ => String::new(),
    }
}

fn extensibility(e: Extensibility) -> &'static str {
    match e {
        Extensibility::Final => "@final",
        Extensibility::Appendable => "@appendable",
        Extensibility::Mutable => "@mutable",
    }
}

fn member_annotations(m: &MemberDesc, expected_id: Option<u32>) -> String {
    let mut a = String::new();
    if m.key {
        a.push_str("@key ");
    }
    if m.optional {
        a.push_str("@optional ");
    }
    if m.must_understand {
        a.push_str("@must_understand ");
    }
    if m.external {
        a.push_str("@external ");
    }
    if expected_id != Some(m.id) {
        let _ = write!(a, "@id({}) ", m.id);
    }
    a
}

fn declare(out: &mut String, t: &TypeDesc, local: &str, level: usize) {
    let i = indent(level);
    let i2 = indent(level + 1);
    match t {
        TypeDesc::Struct(s) => {
            let mut head = extensibility(s.extensibility).to_owned();
            if s.autoid_hash {
                head.push_str(" @autoid(HASH)");
            }
            if s.nested {
                head.push_str(" @nested");
            }
            let base = s
                .base
                .as_ref()
                .map(|b| format!(" : {}", b.name))
                .unwrap_or_default();
            let _ = writeln!(out, "{i}{head}\n{i}struct {local}{base} {{");
            let mut next = Some(0u32);
            for m in &s.members {
                let expected = if s.autoid_hash {
                    Some(crate::hash::hashed_member_id(&m.name))
                } else {
                    next
                };
                let _ = writeln!(
                    out,
                    "{i2}{}{} {}{};",
                    member_annotations(m, expected),
                    spell(&m.ty),
                    m.name,
                    dims(&m.ty)
                );
                next = m.id.checked_add(1);
            }
            let _ = writeln!(out, "{i}}};");
        }
        TypeDesc::Union(u) => {
            let key = if u.discriminator_key { "@key " } else { "" };
            let _ = writeln!(
                out,
                "{i}{}\n{i}union {local} switch ({key}{}) {{",
                extensibility(u.extensibility),
                spell(&u.discriminator)
            );
            let mut next = 0u32;
            for c in &u.cases {
                for l in &c.labels {
                    let _ = writeln!(out, "{i2}case {}:", label(&u.discriminator, *l));
                }
                if c.default {
                    let _ = writeln!(out, "{i2}default:");
                }
                let id = if c.id == next {
                    String::new()
                } else {
                    format!("@id({}) ", c.id)
                };
                let _ = writeln!(
                    out,
                    "{i2}    {id}{}{} {}{};",
                    if c.external { "@external " } else { "" },
                    spell(&c.ty),
                    c.name,
                    dims(&c.ty)
                );
                next = c.id.wrapping_add(1);
            }
            let _ = writeln!(out, "{i}}};");
        }
        TypeDesc::Enum(e) => {
            if e.bit_bound != 32 {
                let _ = writeln!(out, "{i}@bit_bound({})", e.bit_bound);
            }
            let _ = writeln!(out, "{i}enum {local} {{");
            let mut next = 0i64;
            let n = e.literals.len();
            for (k, l) in e.literals.iter().enumerate() {
                let mut a = String::new();
                if i64::from(l.value) != next {
                    let _ = write!(a, "@value({}) ", l.value);
                }
                if l.default {
                    a.push_str("@default_literal ");
                }
                let comma = if k + 1 < n { "," } else { "" };
                let _ = writeln!(out, "{i2}{a}{}{comma}", l.name);
                next = i64::from(l.value) + 1;
            }
            let _ = writeln!(out, "{i}}};");
        }
        TypeDesc::Bitmask(b) => {
            if b.bit_bound != 32 {
                let _ = writeln!(out, "{i}@bit_bound({})", b.bit_bound);
            }
            let _ = writeln!(out, "{i}bitmask {local} {{");
            let n = b.flags.len();
            for (k, f) in b.flags.iter().enumerate() {
                let comma = if k + 1 < n { "," } else { "" };
                let _ = writeln!(out, "{i2}@position({}) {}{comma}", f.position, f.name);
            }
            let _ = writeln!(out, "{i}}};");
        }
        TypeDesc::Alias(a) => {
            let _ = writeln!(
                out,
                "{i}typedef {} {local}{};",
                spell(&a.target),
                dims(&a.target)
            );
        }
        _ => {}
    }
}

/// A case label: an enumerator's name for an enum discriminator, else the number (a
/// character for `char`, TRUE/FALSE for `boolean`).
fn label(discriminator: &TypeDesc, value: i32) -> String {
    use tachyon_cdr::Primitive;
    match discriminator {
        TypeDesc::Enum(e) => e
            .literals
            .iter()
            .find(|l| l.value == value)
            .map_or(value.to_string(), |l| l.name.clone()),
        TypeDesc::Primitive(Primitive::Boolean) => {
            if value != 0 { "TRUE" } else { "FALSE" }.to_owned()
        }
        TypeDesc::Primitive(Primitive::Char8) => match u8::try_from(value) {
            Ok(c) if c.is_ascii_graphic() && c != b'\'' && c != b'\\' => {
                format!("'{}'", c as char)
            }
            _ => value.to_string(),
        },
        TypeDesc::Alias(a) => label(&a.target, value),
        _ => value.to_string(),
    }
}
