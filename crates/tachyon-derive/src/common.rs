//! Pieces shared by the struct, enum and union expansions: generics, type names, member ids.

use md5::{Digest, Md5};
use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, GenericParam, Generics, Lifetime, LifetimeParam, Path, Type};

use crate::attrs::{ContainerAttrs, Ext};

/// Generics for `impl Encode`/`impl DdsType`: every type parameter bounded by `Encode`.
pub fn encode_generics(g: &Generics, krate: &Path) -> Generics {
    let mut g = g.clone();
    for p in g.params.iter_mut() {
        if let GenericParam::Type(t) = p {
            t.bounds.push(syn::parse_quote!(#krate::Encode));
        }
    }
    g
}

/// Generics for `impl Fields` and `impl DdsType`: every type parameter bounded by `Encode`
/// and `Fields` (a struct's members are read through their own `Fields`).
pub fn fields_generics(g: &Generics, krate: &Path) -> Generics {
    let mut g = encode_generics(g, krate);
    for p in g.params.iter_mut() {
        if let GenericParam::Type(t) = p {
            t.bounds.push(syn::parse_quote!(#krate::Fields));
        }
    }
    g
}

/// Generics for `impl Decode<'de>`: a new `'de` outliving every lifetime of the type, and every
/// type parameter bounded by `Decode<'de>`.
pub fn decode_generics(g: &Generics, krate: &Path) -> Generics {
    let mut g = g.clone();
    let de: Lifetime = syn::parse_quote!('__de);
    let mut de_param = LifetimeParam::new(de.clone());
    for p in g.params.iter_mut() {
        match p {
            GenericParam::Lifetime(l) => de_param.bounds.push(l.lifetime.clone()),
            GenericParam::Type(t) => t.bounds.push(syn::parse_quote!(#krate::Decode<#de>)),
            GenericParam::Const(_) => {}
        }
    }
    g.params.insert(0, GenericParam::Lifetime(de_param));
    g
}

/// The `TYPE_NAME` expression.
pub fn type_name(input: &DeriveInput, c: &ContainerAttrs) -> TokenStream {
    match &c.name {
        Some(n) => quote!(#n),
        None => {
            let ident = input.ident.to_string();
            quote!(concat!(module_path!(), "::", #ident))
        }
    }
}

/// The `Extensibility` expression.
pub fn extensibility(c: &ContainerAttrs) -> TokenStream {
    let k = &c.krate;
    match c.ext {
        Ext::Final => quote!(#k::Extensibility::Final),
        Ext::Appendable => quote!(#k::Extensibility::Appendable),
        Ext::Mutable => quote!(#k::Extensibility::Mutable),
    }
}

/// The member id `@autoid(HASH)` gives `name` (same rule as `tachyon_cdr::member_id`).
pub fn hashed_member_id(name: &str) -> u32 {
    let d = Md5::digest(name.as_bytes());
    u32::from_le_bytes([d[0], d[1], d[2], d[3]]) & 0x0fff_ffff
}

/// `Some(T)` when `ty` is `Option<T>`.
pub fn option_inner(ty: &Type) -> Option<&Type> {
    let Type::Path(p) = ty else { return None };
    if p.qself.is_some() {
        return None;
    }
    let seg = p.path.segments.last()?;
    if seg.ident != "Option" {
        return None;
    }
    let syn::PathArguments::AngleBracketed(args) = &seg.arguments else {
        return None;
    };
    match args.args.first()? {
        syn::GenericArgument::Type(t) if args.args.len() == 1 => Some(t),
        _ => None,
    }
}

/// `Some(N)` or `None` as tokens.
pub fn opt_u32(v: Option<u32>) -> TokenStream {
    match v {
        Some(n) => quote!(::core::option::Option::Some(#n)),
        None => quote!(::core::option::Option::None),
    }
}

/// Generics for `impl Describe` and `impl DdsType`: every type parameter bounded by `Encode`,
/// `Fields` and `Describe`.
pub fn describe_generics(g: &Generics, krate: &Path) -> Generics {
    let mut g = fields_generics(g, krate);
    for p in g.params.iter_mut() {
        if let GenericParam::Type(t) = p {
            t.bounds.push(syn::parse_quote!(#krate::Describe));
        }
    }
    g
}

/// `LongValue` → `long_value`: the IDL name of a union case from its Rust variant.
pub fn snake_case(ident: &str) -> String {
    let mut out = String::with_capacity(ident.len() + 4);
    let chars: Vec<char> = ident.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            let prev_lower =
                i > 0 && (chars[i - 1].is_lowercase() || chars[i - 1].is_ascii_digit());
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let prev_upper = i > 0 && chars[i - 1].is_uppercase();
            if i > 0 && (prev_lower || (prev_upper && next_lower)) && !out.ends_with('_') {
                out.push('_');
            }
            out.extend(c.to_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `DarkRed` → `DARK_RED`: the IDL name of an enumerator from its Rust variant.
pub fn screaming_snake_case(ident: &str) -> String {
    snake_case(ident).to_uppercase()
}
