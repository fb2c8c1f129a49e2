//! A sample's value, by its type's structure.

use core::fmt;

/// A value of a described type.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `boolean`
    Bool(bool),
    /// `octet`
    Byte(u8),
    /// `int8`
    Int8(i8),
    /// `uint8`
    UInt8(u8),
    /// `short`
    Int16(i16),
    /// `unsigned short`
    UInt16(u16),
    /// `long`
    Int32(i32),
    /// `unsigned long`
    UInt32(u32),
    /// `long long`
    Int64(i64),
    /// `unsigned long long`
    UInt64(u64),
    /// `float`
    Float32(f32),
    /// `double`
    Float64(f64),
    /// `long double`, its 16 bytes as received.
    Float128([u8; 16]),
    /// `char` (one octet, Latin-1)
    Char8(char),
    /// `wchar`
    Char16(u16),
    /// `string` or `wstring`
    String(String),
    /// An enumerator: its value, and its name when the type has one for it.
    Enum {
        /// The value.
        value: i32,
        /// The enumerator's name.
        name: Option<String>,
    },
    /// A bitmask's bits.
    Bitmask(u64),
    /// A sequence's or array's elements (a multi-dimensional array: nested, outermost first).
    List(Vec<Value>),
    /// A map's entries.
    Map(Vec<(Value, Value)>),
    /// A struct's members by name, in declaration order; `None` for an absent optional one.
    Struct(Vec<(String, Option<Value>)>),
    /// A union: its discriminator and the selected member, if any.
    Union {
        /// The discriminator.
        discriminator: Box<Value>,
        /// The selected member's name and value.
        member: Option<(String, Box<Value>)>,
    },
}

impl Value {
    /// The member `name` of a struct value (`None` when absent or not a struct).
    pub fn field(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Struct(m) => m.iter().find(|(n, _)| n == name)?.1.as_ref(),
            _ => None,
        }
    }

    /// The value as an integer, for discriminators and enumerators.
    pub fn as_i64(&self) -> Option<i64> {
        Some(match self {
            Value::Bool(b) => i64::from(*b),
            Value::Byte(v) | Value::UInt8(v) => i64::from(*v),
            Value::Int8(v) => i64::from(*v),
            Value::Int16(v) => i64::from(*v),
            Value::UInt16(v) | Value::Char16(v) => i64::from(*v),
            Value::Int32(v) => i64::from(*v),
            Value::UInt32(v) => i64::from(*v),
            Value::Int64(v) => *v,
            Value::UInt64(v) => *v as i64,
            Value::Char8(c) => i64::from(u32::from(*c)),
            Value::Enum { value, .. } => i64::from(*value),
            _ => return None,
        })
    }

    /// The value as JSON text (enumerators by name, optional members absent as `null`,
    /// unions as `{"discriminator": …, "member": value}`), for tools.
    pub fn to_json(&self) -> String {
        let mut s = String::new();
        json(self, &mut s);
        s
    }
}

fn json_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

fn json_f64(v: f64, out: &mut String) {
    if v.is_finite() {
        out.push_str(&format!("{v}"));
    } else {
        // JSON has no NaN or infinity.
        json_str(&format!("{v}"), out);
    }
}

fn json(v: &Value, out: &mut String) {
    match v {
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Byte(x) | Value::UInt8(x) => out.push_str(&x.to_string()),
        Value::Int8(x) => out.push_str(&x.to_string()),
        Value::Int16(x) => out.push_str(&x.to_string()),
        Value::UInt16(x) | Value::Char16(x) => out.push_str(&x.to_string()),
        Value::Int32(x) => out.push_str(&x.to_string()),
        Value::UInt32(x) => out.push_str(&x.to_string()),
        Value::Int64(x) => out.push_str(&x.to_string()),
        Value::UInt64(x) => out.push_str(&x.to_string()),
        Value::Bitmask(x) => out.push_str(&x.to_string()),
        Value::Float32(x) => json_f64(f64::from(*x), out),
        Value::Float64(x) => json_f64(*x, out),
        Value::Float128(b) => json_str(
            &b.iter().map(|x| format!("{x:02x}")).collect::<String>(),
            out,
        ),
        Value::Char8(c) => json_str(&c.to_string(), out),
        Value::String(s) => json_str(s, out),
        Value::Enum { value, name } => match name {
            Some(n) => json_str(n, out),
            None => out.push_str(&value.to_string()),
        },
        Value::List(items) => {
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                json(x, out);
            }
            out.push(']');
        }
        Value::Map(entries) => {
            out.push('[');
            for (i, (k, x)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                out.push('[');
                json(k, out);
                out.push_str(", ");
                json(x, out);
                out.push(']');
            }
            out.push(']');
        }
        Value::Struct(members) => {
            out.push('{');
            for (i, (n, x)) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                json_str(n, out);
                out.push_str(": ");
                match x {
                    Some(x) => json(x, out),
                    None => out.push_str("null"),
                }
            }
            out.push('}');
        }
        Value::Union {
            discriminator,
            member,
        } => {
            out.push_str("{\"discriminator\": ");
            json(discriminator, out);
            if let Some((n, x)) = member {
                out.push_str(", ");
                json_str(n, out);
                out.push_str(": ");
                json(x, out);
            }
            out.push('}');
        }
    }
}

/// Whether the value is written as a block of its own lines in YAML (a struct or union, or
/// a non-empty list of them); everything else is one flow value.
fn yaml_is_block(v: &Value) -> bool {
    match v {
        Value::Struct(m) => !m.is_empty(),
        Value::Union { .. } => true,
        Value::List(items) => items.first().is_some_and(yaml_is_block),
        _ => false,
    }
}

/// The lines of a block value, each indented by `indent` spaces.
fn yaml_block(v: &Value, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Value::Struct(members) => {
            for (n, x) in members {
                out.push_str(&pad);
                out.push_str(n);
                out.push(':');
                match x {
                    Some(x) => yaml_member(x, indent, out),
                    None => out.push_str(" null\n"),
                }
            }
        }
        Value::Union {
            discriminator,
            member,
        } => {
            out.push_str(&pad);
            out.push_str("discriminator:");
            yaml_member(discriminator, indent, out);
            if let Some((n, x)) = member {
                out.push_str(&pad);
                out.push_str(n);
                out.push(':');
                yaml_member(x, indent, out);
            }
        }
        Value::List(items) => {
            for x in items {
                let mut item = String::new();
                if yaml_is_block(x) {
                    yaml_block(x, indent + 2, &mut item);
                    // The first line's indentation carries the dash.
                    out.push_str(&pad);
                    out.push_str("- ");
                    out.push_str(&item[indent + 2..]);
                } else {
                    json(x, &mut item);
                    out.push_str(&pad);
                    out.push_str("- ");
                    out.push_str(&item);
                    out.push('\n');
                }
            }
        }
        other => {
            out.push_str(&pad);
            json(other, out);
            out.push('\n');
        }
    }
}

/// A member's value after its `name:`: on the same line, or as an indented block.
fn yaml_member(x: &Value, indent: usize, out: &mut String) {
    if yaml_is_block(x) {
        out.push('\n');
        yaml_block(x, indent + 2, out);
    } else {
        out.push(' ');
        json(x, out);
        out.push('\n');
    }
}

impl Value {
    /// The value as YAML (block style, as `ros2 topic echo` prints a message): a struct's
    /// members one per line, nested structs and unions indented, lists of scalars in flow
    /// style; strings double-quoted.
    pub fn to_yaml(&self) -> String {
        let mut s = String::new();
        if yaml_is_block(self) {
            yaml_block(self, 0, &mut s);
        } else {
            json(self, &mut s);
            s.push('\n');
        }
        s
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json())
    }
}
