//! A type's description as a tree: what XTypes calls a DynamicType, without its API. The
//! derive macro describes every type it implements ([`Describe`]); `tachyon-xtypes` turns a
//! description into TypeObjects and TypeIdentifiers (and back, for types learnt from the
//! network), checks assignability and reads samples of it dynamically.
//!
//! Named types (structs, unions, enums, bitmasks, aliases) are shared through `Arc`, so a type
//! used by many members is described once. A description is a tree: recursive types cannot be
//! described (the derive macro cannot express them either).

use std::sync::Arc;

use crate::encoding::Extensibility;

/// The primitive types of XTypes 1.3 (7.2.2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Primitive {
    /// `boolean`
    Boolean,
    /// `octet` (Rust `u8` by default)
    Byte,
    /// `int8`
    Int8,
    /// `uint8` (Rust `u8` with `#[dds(idl = "uint8")]`)
    UInt8,
    /// `short`
    Int16,
    /// `unsigned short`
    UInt16,
    /// `long`
    Int32,
    /// `unsigned long`
    UInt32,
    /// `long long`
    Int64,
    /// `unsigned long long`
    UInt64,
    /// `float`
    Float32,
    /// `double`
    Float64,
    /// `long double`
    Float128,
    /// `char`
    Char8,
    /// `wchar`
    Char16,
}

impl Primitive {
    /// The IDL spelling.
    pub fn idl_name(self) -> &'static str {
        match self {
            Primitive::Boolean => "boolean",
            Primitive::Byte => "octet",
            Primitive::Int8 => "int8",
            Primitive::UInt8 => "uint8",
            Primitive::Int16 => "short",
            Primitive::UInt16 => "unsigned short",
            Primitive::Int32 => "long",
            Primitive::UInt32 => "unsigned long",
            Primitive::Int64 => "long long",
            Primitive::UInt64 => "unsigned long long",
            Primitive::Float32 => "float",
            Primitive::Float64 => "double",
            Primitive::Float128 => "long double",
            Primitive::Char8 => "char",
            Primitive::Char16 => "wchar",
        }
    }

    /// The size of one value in bytes.
    pub fn size(self) -> usize {
        match self {
            Primitive::Boolean
            | Primitive::Byte
            | Primitive::Int8
            | Primitive::UInt8
            | Primitive::Char8 => 1,
            Primitive::Int16 | Primitive::UInt16 | Primitive::Char16 => 2,
            Primitive::Int32 | Primitive::UInt32 | Primitive::Float32 => 4,
            Primitive::Int64 | Primitive::UInt64 | Primitive::Float64 => 8,
            Primitive::Float128 => 16,
        }
    }
}

/// A type, described.
#[derive(Debug, Clone, PartialEq)]
pub enum TypeDesc {
    /// A primitive.
    Primitive(Primitive),
    /// `string` (`wide`: `wstring`), `bound` 0 when unbounded.
    String {
        /// `wstring` rather than `string`.
        wide: bool,
        /// The most characters, 0 for unbounded.
        bound: u32,
    },
    /// `sequence<element, bound>`, `bound` 0 when unbounded.
    Sequence {
        /// The element type.
        element: Box<TypeDesc>,
        /// The most elements, 0 for unbounded.
        bound: u32,
    },
    /// `element name[d0][d1]…`: one array of all dimensions, outermost first.
    Array {
        /// The element type (never an array itself).
        element: Box<TypeDesc>,
        /// The dimensions, outermost first.
        dims: Vec<u32>,
    },
    /// `map<key, value, bound>`, `bound` 0 when unbounded.
    Map {
        /// The key type.
        key: Box<TypeDesc>,
        /// The value type.
        value: Box<TypeDesc>,
        /// The most entries, 0 for unbounded.
        bound: u32,
    },
    /// A struct.
    Struct(Arc<StructDesc>),
    /// A union.
    Union(Arc<UnionDesc>),
    /// An enum.
    Enum(Arc<EnumDesc>),
    /// A bitmask.
    Bitmask(Arc<BitmaskDesc>),
    /// A typedef.
    Alias(Arc<AliasDesc>),
}

/// A struct type.
#[derive(Debug, Clone, PartialEq)]
pub struct StructDesc {
    /// Fully qualified name (`Module::Type`).
    pub name: String,
    /// `@final`, `@appendable` or `@mutable`.
    pub extensibility: Extensibility,
    /// `@autoid(HASH)`: member ids without `@id` are hashes of the member names.
    pub autoid_hash: bool,
    /// `@nested`: not meant to be a topic type on its own.
    pub nested: bool,
    /// The base struct (`struct T : Base`), its members coming first.
    pub base: Option<Arc<StructDesc>>,
    /// The members in declaration order.
    pub members: Vec<MemberDesc>,
}

/// A member of a struct.
#[derive(Debug, Clone, PartialEq)]
pub struct MemberDesc {
    /// The IDL name.
    pub name: String,
    /// The member id (`@id`, sequential or hashed).
    pub id: u32,
    /// The type.
    pub ty: TypeDesc,
    /// `@key`
    pub key: bool,
    /// `@optional`
    pub optional: bool,
    /// `@must_understand`
    pub must_understand: bool,
    /// `@external`
    pub external: bool,
}

impl MemberDesc {
    /// A plain member (no annotations).
    pub fn new(name: impl Into<String>, id: u32, ty: TypeDesc) -> MemberDesc {
        MemberDesc {
            name: name.into(),
            id,
            ty,
            key: false,
            optional: false,
            must_understand: false,
            external: false,
        }
    }
}

/// A union type.
#[derive(Debug, Clone, PartialEq)]
pub struct UnionDesc {
    /// Fully qualified name.
    pub name: String,
    /// `@final`, `@appendable` or `@mutable`.
    pub extensibility: Extensibility,
    /// `@nested`
    pub nested: bool,
    /// The discriminator type (an integer, `boolean`, `char`, `octet` or an enum).
    pub discriminator: TypeDesc,
    /// `@key` on the discriminator.
    pub discriminator_key: bool,
    /// The cases in declaration order.
    pub cases: Vec<CaseDesc>,
}

/// A case (member) of a union.
#[derive(Debug, Clone, PartialEq)]
pub struct CaseDesc {
    /// The member name.
    pub name: String,
    /// The member id.
    pub id: u32,
    /// The member type.
    pub ty: TypeDesc,
    /// The discriminator values that select it.
    pub labels: Vec<i32>,
    /// `default:` selects it too.
    pub default: bool,
    /// `@external`
    pub external: bool,
}

/// An enum type.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumDesc {
    /// Fully qualified name.
    pub name: String,
    /// `@bit_bound` (32 unless annotated).
    pub bit_bound: u16,
    /// The enumerators in declaration order.
    pub literals: Vec<EnumLiteral>,
}

/// An enumerator.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumLiteral {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: i32,
    /// `@default_literal` (else the first enumerator is the default).
    pub default: bool,
}

/// A bitmask type.
#[derive(Debug, Clone, PartialEq)]
pub struct BitmaskDesc {
    /// Fully qualified name.
    pub name: String,
    /// `@bit_bound` (32 unless annotated).
    pub bit_bound: u16,
    /// The flags, by position.
    pub flags: Vec<BitFlag>,
}

/// A flag of a bitmask.
#[derive(Debug, Clone, PartialEq)]
pub struct BitFlag {
    /// Its name.
    pub name: String,
    /// Its bit.
    pub position: u16,
}

/// A typedef.
#[derive(Debug, Clone, PartialEq)]
pub struct AliasDesc {
    /// Fully qualified name.
    pub name: String,
    /// The aliased type.
    pub target: TypeDesc,
}

impl TypeDesc {
    /// The name of a named type (struct, union, enum, bitmask, alias).
    pub fn name(&self) -> Option<&str> {
        match self {
            TypeDesc::Struct(s) => Some(&s.name),
            TypeDesc::Union(u) => Some(&u.name),
            TypeDesc::Enum(e) => Some(&e.name),
            TypeDesc::Bitmask(b) => Some(&b.name),
            TypeDesc::Alias(a) => Some(&a.name),
            _ => None,
        }
    }

    /// An array of `n` of `element` (an array of arrays becomes one array, `n` outermost).
    pub fn array_of(element: TypeDesc, n: u32) -> TypeDesc {
        match element {
            TypeDesc::Array { element, mut dims } => {
                dims.insert(0, n);
                TypeDesc::Array { element, dims }
            }
            element => TypeDesc::Array {
                element: Box::new(element),
                dims: vec![n],
            },
        }
    }

    /// This type with its anonymous parts' `octet`s read as `uint8` (how `#[dds(idl =
    /// "uint8")]` applies to `u8`, `Vec<u8>` and `[u8; N]`).
    pub fn octets_as_uint8(self) -> TypeDesc {
        match self {
            TypeDesc::Primitive(Primitive::Byte) => TypeDesc::Primitive(Primitive::UInt8),
            TypeDesc::Sequence { element, bound } => TypeDesc::Sequence {
                element: Box::new(element.octets_as_uint8()),
                bound,
            },
            TypeDesc::Array { element, dims } => TypeDesc::Array {
                element: Box::new(element.octets_as_uint8()),
                dims,
            },
            other => other,
        }
    }
}

/// A type that can describe itself. `#[derive(DdsType)]` implements it; the library does for
/// the primitives, strings, `Vec<T>`, `[T; N]`, `Option<T>` and `Box<T>`.
pub trait Describe {
    /// The description; `bound` is the `#[dds(bound = N)]` of the member (strings and
    /// sequences take it, arrays hand it to their elements, others ignore it).
    fn describe(bound: Option<u32>) -> TypeDesc;
}

macro_rules! describe_primitive {
    ($($t:ty => $p:ident),* $(,)?) => {$(
        impl Describe for $t {
            fn describe(_: Option<u32>) -> TypeDesc {
                TypeDesc::Primitive(Primitive::$p)
            }
        }
    )*};
}

describe_primitive!(
    bool => Boolean, u8 => Byte, i8 => Int8, i16 => Int16, u16 => UInt16, i32 => Int32,
    u32 => UInt32, i64 => Int64, u64 => UInt64, f32 => Float32, f64 => Float64, char => Char8,
);

impl Describe for str {
    fn describe(bound: Option<u32>) -> TypeDesc {
        TypeDesc::String {
            wide: false,
            bound: bound.unwrap_or(0),
        }
    }
}

impl Describe for String {
    fn describe(bound: Option<u32>) -> TypeDesc {
        str::describe(bound)
    }
}

impl<T: Describe> Describe for [T] {
    fn describe(bound: Option<u32>) -> TypeDesc {
        TypeDesc::Sequence {
            element: Box::new(T::describe(None)),
            bound: bound.unwrap_or(0),
        }
    }
}

impl<T: Describe> Describe for Vec<T> {
    fn describe(bound: Option<u32>) -> TypeDesc {
        <[T]>::describe(bound)
    }
}

impl<T: Describe, const N: usize> Describe for [T; N] {
    fn describe(bound: Option<u32>) -> TypeDesc {
        TypeDesc::array_of(T::describe(bound), u32::try_from(N).unwrap_or(u32::MAX))
    }
}

impl<T: Describe + ?Sized> Describe for &T {
    fn describe(bound: Option<u32>) -> TypeDesc {
        T::describe(bound)
    }
}

impl<T: Describe + ?Sized> Describe for Box<T> {
    fn describe(bound: Option<u32>) -> TypeDesc {
        T::describe(bound)
    }
}

impl<T: Describe> Describe for Option<T> {
    fn describe(bound: Option<u32>) -> TypeDesc {
        T::describe(bound)
    }
}
