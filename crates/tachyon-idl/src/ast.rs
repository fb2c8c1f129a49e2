//! The parsed IDL: definitions as written, names not yet resolved.

use crate::error::Pos;

/// A possibly qualified name: `a::b::C`, `::a::C`.
#[derive(Clone, Debug, PartialEq)]
pub struct ScopedName {
    /// Written with a leading `::` (from the global scope).
    pub absolute: bool,
    pub parts: Vec<String>,
}

impl std::fmt::Display for ScopedName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.absolute {
            f.write_str("::")?;
        }
        f.write_str(&self.parts.join("::"))
    }
}

/// A constant expression.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Int(u128),
    Float(f64),
    Str(String),
    Char(char),
    Bool(bool),
    /// A constant or an enumerator.
    Name(ScopedName),
    Unary(&'static str, Box<Expr>),
    Binary(&'static str, Box<Expr>, Box<Expr>),
}

/// `@name` or `@name(value)` or `@name(key = value, …)`.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation {
    pub name: String,
    /// `(None, v)` for the single unnamed value.
    pub params: Vec<(Option<String>, Expr)>,
    pub pos: Pos,
}

/// The base types IDL names with keywords.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    Boolean,
    Octet,
    Char,
    WChar,
    Int8,
    UInt8,
    Short,
    UShort,
    Long,
    ULong,
    LongLong,
    ULongLong,
    Float,
    Double,
    LongDouble,
}

/// A type as written where it is used.
#[derive(Clone, Debug, PartialEq)]
pub enum TypeSpec {
    Base(Base),
    String {
        wide: bool,
        bound: Option<Expr>,
    },
    Sequence {
        element: Box<TypeSpec>,
        bound: Option<Expr>,
    },
    Map {
        key: Box<TypeSpec>,
        value: Box<TypeSpec>,
        bound: Option<Expr>,
    },
    Named(ScopedName, Pos),
}

/// A declared name with its array dimensions (`a[2][3]`).
#[derive(Clone, Debug, PartialEq)]
pub struct Declarator {
    pub name: String,
    pub dims: Vec<Expr>,
    pub pos: Pos,
}

/// A struct member (one per declarator: `long a, b;` makes two).
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub annotations: Vec<Annotation>,
    pub ty: TypeSpec,
    pub declarator: Declarator,
}

#[derive(Clone, Debug, PartialEq)]
pub struct StructDef {
    pub name: String,
    pub annotations: Vec<Annotation>,
    pub base: Option<(ScopedName, Pos)>,
    pub members: Vec<Member>,
    pub pos: Pos,
}

/// A union case: its labels (`None` is `default:`) and member.
#[derive(Clone, Debug, PartialEq)]
pub struct Case {
    pub labels: Vec<Option<Expr>>,
    pub annotations: Vec<Annotation>,
    pub ty: TypeSpec,
    pub declarator: Declarator,
}

#[derive(Clone, Debug, PartialEq)]
pub struct UnionDef {
    pub name: String,
    pub annotations: Vec<Annotation>,
    pub discriminator: TypeSpec,
    pub discriminator_annotations: Vec<Annotation>,
    pub cases: Vec<Case>,
    pub pos: Pos,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Enumerator {
    pub name: String,
    pub annotations: Vec<Annotation>,
    pub pos: Pos,
}

#[derive(Clone, Debug, PartialEq)]
pub struct EnumDef {
    pub name: String,
    pub annotations: Vec<Annotation>,
    pub enumerators: Vec<Enumerator>,
    pub pos: Pos,
}

#[derive(Clone, Debug, PartialEq)]
pub struct BitmaskDef {
    pub name: String,
    pub annotations: Vec<Annotation>,
    pub flags: Vec<Enumerator>,
    pub pos: Pos,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TypedefDef {
    pub annotations: Vec<Annotation>,
    pub ty: TypeSpec,
    pub declarators: Vec<Declarator>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ConstDef {
    pub ty: TypeSpec,
    pub name: String,
    pub value: Expr,
    pub pos: Pos,
}

/// A definition.
#[derive(Clone, Debug, PartialEq)]
pub enum Def {
    Module {
        name: String,
        defs: Vec<Def>,
        pos: Pos,
    },
    Struct(StructDef),
    Union(UnionDef),
    Enum(EnumDef),
    Bitmask(BitmaskDef),
    Typedef(TypedefDef),
    Const(ConstDef),
    /// `struct X;` or `union X;`: declares a name defined later.
    Forward {
        name: String,
        pos: Pos,
    },
}

impl Annotation {
    /// The annotation's single value (`@id(3)`), or its `value` parameter.
    pub fn value(&self) -> Option<&Expr> {
        self.params
            .iter()
            .find(|(k, _)| k.is_none() || k.as_deref() == Some("value"))
            .map(|(_, v)| v)
    }
}

/// The annotation `name` among `list`, if present (names compared without case, as IDL
/// annotation names are used in any case by vendors).
pub fn find<'a>(list: &'a [Annotation], name: &str) -> Option<&'a Annotation> {
    list.iter().find(|a| a.name.eq_ignore_ascii_case(name))
}
