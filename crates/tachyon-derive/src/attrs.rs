//! Parsing of the `#[dds(...)]` attributes on types, fields and variants.

use syn::{Attribute, Expr, LitInt, LitStr, Path, Type};

/// The extensibility named by the container attributes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Ext {
    Final,
    Appendable,
    Mutable,
}

/// How member ids are assigned when `#[dds(id = …)]` is absent.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum AutoId {
    Sequential,
    Hash,
}

/// Attributes of the type.
pub struct ContainerAttrs {
    pub name: Option<String>,
    pub ext: Ext,
    pub autoid: AutoId,
    pub switch: Option<Type>,
    pub krate: Path,
}

/// Attributes of a struct field.
#[derive(Default)]
pub struct FieldAttrs {
    pub key: bool,
    pub id: Option<u32>,
    pub bound: Option<u32>,
    pub must_understand: bool,
    pub optional: bool,
    pub name: Option<String>,
    /// `idl = "uint8"`: the member's `u8`s are IDL `uint8`, not `octet`.
    pub uint8: bool,
}

/// Attributes of an enum variant (enumerator or union case).
#[derive(Default)]
pub struct VariantAttrs {
    pub cases: Vec<Expr>,
    pub value: Option<i64>,
    pub bound: Option<u32>,
    pub id: Option<u32>,
    pub name: Option<String>,
}

pub fn container(attrs: &[Attribute], krate: &Path) -> syn::Result<ContainerAttrs> {
    let mut c = ContainerAttrs {
        name: None,
        ext: Ext::Final,
        autoid: AutoId::Sequential,
        switch: None,
        krate: krate.clone(),
    };
    for attr in attrs.iter().filter(|a| a.path().is_ident("dds")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                c.name = Some(meta.value()?.parse::<LitStr>()?.value());
            } else if meta.path.is_ident("final") {
                c.ext = Ext::Final;
            } else if meta.path.is_ident("appendable") {
                c.ext = Ext::Appendable;
            } else if meta.path.is_ident("mutable") {
                c.ext = Ext::Mutable;
            } else if meta.path.is_ident("extensibility") {
                let s = meta.value()?.parse::<LitStr>()?;
                c.ext = match s.value().as_str() {
                    "final" => Ext::Final,
                    "appendable" => Ext::Appendable,
                    "mutable" => Ext::Mutable,
                    _ => {
                        return Err(syn::Error::new_spanned(
                            s,
                            "extensibility must be \"final\", \"appendable\" or \"mutable\"",
                        ))
                    }
                };
            } else if meta.path.is_ident("autoid") {
                let s = meta.value()?.parse::<LitStr>()?;
                c.autoid = match s.value().to_ascii_lowercase().as_str() {
                    "hash" => AutoId::Hash,
                    "sequential" => AutoId::Sequential,
                    _ => {
                        return Err(syn::Error::new_spanned(
                            s,
                            "autoid must be \"sequential\" or \"hash\"",
                        ))
                    }
                };
            } else if meta.path.is_ident("switch") {
                let v = meta.value()?;
                c.switch = Some(if v.peek(LitStr) {
                    v.parse::<LitStr>()?.parse()?
                } else {
                    v.parse()?
                });
            } else if meta.path.is_ident("crate") {
                c.krate = meta.value()?.parse::<LitStr>()?.parse()?;
            } else {
                return Err(meta.error(
                    "unknown dds attribute; expected name, final, appendable, mutable, \
                     extensibility, autoid, switch or crate",
                ));
            }
            Ok(())
        })?;
    }
    Ok(c)
}

pub fn field(attrs: &[Attribute]) -> syn::Result<FieldAttrs> {
    let mut f = FieldAttrs::default();
    for attr in attrs {
        if attr.path().is_ident("key") {
            f.key = true;
            continue;
        }
        if !attr.path().is_ident("dds") {
            continue;
        }
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("key") {
                f.key = true;
            } else if meta.path.is_ident("id") {
                f.id = Some(meta.value()?.parse::<LitInt>()?.base10_parse()?);
            } else if meta.path.is_ident("bound") {
                f.bound = Some(meta.value()?.parse::<LitInt>()?.base10_parse()?);
            } else if meta.path.is_ident("must_understand") {
                f.must_understand = true;
            } else if meta.path.is_ident("optional") {
                f.optional = true;
            } else if meta.path.is_ident("name") {
                f.name = Some(meta.value()?.parse::<LitStr>()?.value());
            } else if meta.path.is_ident("idl") {
                let s = meta.value()?.parse::<LitStr>()?;
                match s.value().as_str() {
                    "uint8" => f.uint8 = true,
                    "octet" => f.uint8 = false,
                    _ => {
                        return Err(syn::Error::new_spanned(
                            s,
                            "idl must be \"octet\" or \"uint8\" (the IDL type of a u8 member)",
                        ))
                    }
                }
            } else {
                return Err(meta.error(
                    "unknown dds field attribute; expected key, id, bound, must_understand, \
                     optional, name or idl",
                ));
            }
            Ok(())
        })?;
    }
    Ok(f)
}

pub fn variant(attrs: &[Attribute]) -> syn::Result<VariantAttrs> {
    let mut v = VariantAttrs::default();
    for attr in attrs.iter().filter(|a| a.path().is_ident("dds")) {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("case") {
                v.cases.push(meta.value()?.parse::<Expr>()?);
            } else if meta.path.is_ident("value") {
                v.value = Some(meta.value()?.parse::<LitInt>()?.base10_parse()?);
            } else if meta.path.is_ident("bound") {
                v.bound = Some(meta.value()?.parse::<LitInt>()?.base10_parse()?);
            } else if meta.path.is_ident("id") {
                v.id = Some(meta.value()?.parse::<LitInt>()?.base10_parse()?);
            } else if meta.path.is_ident("name") {
                v.name = Some(meta.value()?.parse::<LitStr>()?.value());
            } else {
                return Err(meta.error(
                    "unknown dds variant attribute; expected case, value, bound, id or name",
                ));
            }
            Ok(())
        })?;
    }
    Ok(v)
}
