//! Members of a value by name, for content filters (DDS content-filtered topics and query
//! conditions read a sample's members by their IDL names, `a.b.c`).
//!
//! [`Fields`] is a supertrait of [`DdsType`](crate::DdsType): `#[derive(DdsType)]` implements
//! it for structs (members by IDL name, nested structs recursively, optional members when
//! present), enumerations (their value and enumerator name) and unions (not readable by a
//! filter). The primitives and strings are leaves; sequences and arrays are not readable by a
//! filter. A hand-written `DdsType` (or a hand-written member type of a derived struct) needs
//! `impl Fields for MyType {}`: every method has a default that says "no readable members".

/// The value of one member, as a content filter reads it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum FieldValue<'a> {
    /// `boolean`.
    Bool(bool),
    /// `char` (one octet, Latin-1).
    Char(char),
    /// A signed integer of any width.
    Int(i64),
    /// An unsigned integer of any width.
    UInt(u64),
    /// `float` or `double`.
    Float(f64),
    /// `string`.
    Str(&'a str),
    /// An enumeration: its value and the name of its enumerator.
    Enum {
        /// The enumerator's value.
        value: i32,
        /// The enumerator's name.
        name: &'a str,
    },
}

/// What kind of value a member path names, known from the type alone (a filter is checked
/// against it when it is created).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// `boolean`.
    Bool,
    /// `char`.
    Char,
    /// A signed integer.
    Int,
    /// An unsigned integer.
    UInt,
    /// `float` or `double`.
    Float,
    /// `string`.
    String,
    /// An enumeration and its enumerators (name, value).
    Enum(&'static [(&'static str, i32)]),
    /// A struct and the names of its members: not a value itself, a path goes on into it.
    Struct(&'static [&'static str]),
    /// A member a filter cannot read, and what it is (`"sequence"`, `"array"`, `"union"`, …).
    Unsupported(&'static str),
}

impl FieldKind {
    /// Whether a filter can compare a member of this kind (not a struct, not unsupported).
    pub fn is_value(&self) -> bool {
        !matches!(self, FieldKind::Struct(_) | FieldKind::Unsupported(_))
    }

    /// A short name of the kind, for error messages.
    pub fn describe(&self) -> &'static str {
        match self {
            FieldKind::Bool => "boolean",
            FieldKind::Char => "char",
            FieldKind::Int => "signed integer",
            FieldKind::UInt => "unsigned integer",
            FieldKind::Float => "floating-point number",
            FieldKind::String => "string",
            FieldKind::Enum(_) => "enumeration",
            FieldKind::Struct(_) => "struct",
            FieldKind::Unsupported(what) => what,
        }
    }
}

/// Access to a value's members by name, for content filters.
pub trait Fields {
    /// The value at `path` (member names from this value down; empty: this value itself), or
    /// `None` when there is no such member, it is an absent optional member, or a filter
    /// cannot read it.
    #[inline]
    fn field(&self, path: &[&str]) -> Option<FieldValue<'_>> {
        let _ = path;
        None
    }

    /// The kind of the member at `path` (empty: this type), or `None` when the type has no
    /// such member.
    fn field_kind(path: &[&str]) -> Option<FieldKind>
    where
        Self: Sized,
    {
        let _ = path;
        Some(FieldKind::Unsupported("a type without readable members"))
    }
}

macro_rules! leaf {
    ($($t:ty => $kind:ident, $v:ident => $value:expr;)*) => {$(
        impl Fields for $t {
            #[inline]
            fn field(&self, path: &[&str]) -> Option<FieldValue<'_>> {
                let $v = self;
                path.is_empty().then(|| $value)
            }
            fn field_kind(path: &[&str]) -> Option<FieldKind> {
                path.is_empty().then_some(FieldKind::$kind)
            }
        }
    )*};
}

/// Borrowed and boxed strings are strings.
macro_rules! string_ptr {
    ($($t:ty),*) => {$(
        impl Fields for $t {
            #[inline]
            fn field(&self, path: &[&str]) -> Option<FieldValue<'_>> {
                path.is_empty().then_some(FieldValue::Str(self))
            }
            fn field_kind(path: &[&str]) -> Option<FieldKind> {
                path.is_empty().then_some(FieldKind::String)
            }
        }
    )*};
}

string_ptr!(&str, Box<str>);

leaf! {
    bool => Bool, v => FieldValue::Bool(*v);
    char => Char, v => FieldValue::Char(*v);
    i8 => Int, v => FieldValue::Int(i64::from(*v));
    i16 => Int, v => FieldValue::Int(i64::from(*v));
    i32 => Int, v => FieldValue::Int(i64::from(*v));
    i64 => Int, v => FieldValue::Int(*v);
    u8 => UInt, v => FieldValue::UInt(u64::from(*v));
    u16 => UInt, v => FieldValue::UInt(u64::from(*v));
    u32 => UInt, v => FieldValue::UInt(u64::from(*v));
    u64 => UInt, v => FieldValue::UInt(*v);
    f32 => Float, v => FieldValue::Float(f64::from(*v));
    f64 => Float, v => FieldValue::Float(*v);
    String => String, v => FieldValue::Str(v.as_str());
}

/// References and boxes read through to the pointee.
macro_rules! forward {
    ($($ptr:ty),*) => {$(
        impl<T: Fields> Fields for $ptr {
            #[inline]
            fn field(&self, path: &[&str]) -> Option<FieldValue<'_>> {
                (**self).field(path)
            }
            fn field_kind(path: &[&str]) -> Option<FieldKind> {
                T::field_kind(path)
            }
        }
    )*};
}

forward!(&T, Box<T>);

impl<T: Fields> Fields for Option<T> {
    #[inline]
    fn field(&self, path: &[&str]) -> Option<FieldValue<'_>> {
        self.as_ref()?.field(path)
    }
    fn field_kind(path: &[&str]) -> Option<FieldKind> {
        T::field_kind(path)
    }
}

impl<T> Fields for &[T] {
    fn field_kind(_: &[&str]) -> Option<FieldKind> {
        Some(FieldKind::Unsupported("sequence"))
    }
}

impl<T> Fields for Box<[T]> {
    fn field_kind(_: &[&str]) -> Option<FieldKind> {
        Some(FieldKind::Unsupported("sequence"))
    }
}

impl<T> Fields for Vec<T> {
    fn field_kind(_: &[&str]) -> Option<FieldKind> {
        Some(FieldKind::Unsupported("sequence"))
    }
}

impl<T, const N: usize> Fields for [T; N] {
    fn field_kind(_: &[&str]) -> Option<FieldKind> {
        Some(FieldKind::Unsupported("array"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn leaves_have_no_members() {
        assert_eq!(5i32.field(&[]), Some(FieldValue::Int(5)));
        assert_eq!(5i32.field(&["x"]), None);
        assert_eq!(<u16 as Fields>::field_kind(&[]), Some(FieldKind::UInt));
        assert_eq!(<u16 as Fields>::field_kind(&["x"]), None);
        assert_eq!("a".to_owned().field(&[]), Some(FieldValue::Str("a")));
        assert_eq!(Some(2.5f32).field(&[]), Some(FieldValue::Float(2.5)));
        assert_eq!(None::<i8>.field(&[]), None);
        assert_eq!(
            <Vec<u8> as Fields>::field_kind(&[]),
            Some(FieldKind::Unsupported("sequence"))
        );
        assert_eq!(vec![1u8].field(&[]), None);
    }
}
