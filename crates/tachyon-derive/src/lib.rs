//! `#[derive(DdsType)]`: XCDR encoding, decoding, keys and type names generated from a Rust
//! struct or enum. The attributes are documented on [`DdsType`].
#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod attrs;
mod common;
mod enumeration;
mod structure;
mod union;

use proc_macro::TokenStream;
use syn::{parse_macro_input, Data, DeriveInput};

/// Derives `Encode`, `Decode`, `Fields` (members by name, for content filters) and `DdsType`
/// (from `tachyon_cdr`).
///
/// Type attributes, `#[dds(...)]`:
/// - `name = "Module::Type"`: the type name (default: the Rust module path and the type name,
///   joined with `::`, as IDL modules are);
/// - `final` (default, as Cyclone DDS's `idlc`), `appendable`, `mutable`, or
///   `extensibility = "…"`;
/// - `autoid = "sequential" | "hash"`: member ids of members without `id` (XTypes `@autoid`);
/// - `switch = i32`: the discriminator type of a union (default `i32`);
/// - `crate = "path"`: where `tachyon_cdr` is (default `::tachyon_cdr`; `::tachyon::cdr`
///   for the derive `tachyon` re-exports, so a crate that depends on `tachyon` alone can
///   derive).
///
/// Field attributes: `key` (or a bare `#[key]`), `id = N`, `bound = N` (for `string<N>` and
/// `sequence<T, N>`), `must_understand`, `optional` (implied by `Option<T>`), `name = "…"`
/// (the IDL member name: content filters, `autoid = "hash"` and the TypeObject use it),
/// `idl = "uint8"` (a `u8` member that is IDL `uint8`, not `octet`).
///
/// It also implements `Describe` (the type's description, from which its XTypes TypeObjects
/// are computed). Enumerators are named in `UPPER_SNAKE_CASE` and union cases in
/// `snake_case` from their variants unless `#[dds(name = "…")]` names them.
///
/// Enums whose variants carry no data are IDL enums (values from Rust discriminants or
/// `#[dds(value = N)]`); enums with `#[dds(case = …)]` on their variants are IDL unions, each
/// variant a unit (no member) or a one-field tuple (the member).
#[proc_macro_derive(DdsType, attributes(dds, key))]
pub fn derive_dds_type(input: TokenStream) -> TokenStream {
    expand(input, syn::parse_quote!(::tachyon_cdr))
}

/// The same derive, its code naming `::tachyon::cdr` (the `tachyon` crate re-exports it as
/// `tachyon::DdsType`): a crate that depends on `tachyon` alone derives with it.
#[doc(hidden)]
#[proc_macro_derive(DdsTypeViaTachyon, attributes(dds, key))]
pub fn derive_dds_type_via_tachyon(input: TokenStream) -> TokenStream {
    expand(input, syn::parse_quote!(::tachyon::cdr))
}

fn expand(input: TokenStream, krate: syn::Path) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    let krate = &krate;
    let result = match &input.data {
        Data::Struct(s) => structure::expand(&input, s, krate),
        Data::Enum(e) => {
            let is_union = e.variants.iter().any(|v| !v.fields.is_empty())
                || e.variants.iter().any(|v| {
                    v.attrs
                        .iter()
                        .any(|a| a.path().is_ident("dds") && has_case(a))
                });
            if is_union {
                union::expand(&input, e, krate)
            } else {
                enumeration::expand(&input, e, krate)
            }
        }
        Data::Union(u) => Err(syn::Error::new_spanned(
            u.union_token,
            "DdsType cannot be derived for a Rust union; use an enum with #[dds(case = …)]",
        )),
    };
    result.unwrap_or_else(|e| e.to_compile_error()).into()
}

fn has_case(a: &syn::Attribute) -> bool {
    let mut found = false;
    let _ = a.parse_nested_meta(|m| {
        if m.path.is_ident("case") {
            found = true;
        }
        if m.input.peek(syn::Token![=]) {
            let _: syn::Expr = m.value()?.parse()?;
        }
        Ok(())
    });
    found
}
