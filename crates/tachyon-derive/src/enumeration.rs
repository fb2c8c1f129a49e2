//! Expansion for field-less enums: IDL enumerations, written as 32-bit values.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DataEnum, DeriveInput, Expr, ExprLit, ExprUnary, Lit, UnOp};

use crate::attrs;
use crate::common::{extensibility, screaming_snake_case, type_name};

pub fn expand(input: &DeriveInput, data: &DataEnum, krate: &syn::Path) -> syn::Result<TokenStream> {
    let c = attrs::container(&input.attrs, krate)?;
    let name = &input.ident;
    if !input.generics.params.is_empty() {
        return Err(syn::Error::new_spanned(
            &input.generics,
            "an IDL enumeration cannot be generic",
        ));
    }
    if data.variants.is_empty() {
        return Err(syn::Error::new_spanned(
            name,
            "an IDL enumeration needs at least one enumerator",
        ));
    }
    let mut next: i64 = 0;
    let mut values = Vec::new();
    let mut idl_names = Vec::new();
    for v in &data.variants {
        let a = attrs::variant(&v.attrs)?;
        let value = match (a.value, &v.discriminant) {
            (Some(n), _) => n,
            (None, Some((_, e))) => literal_i64(e)?,
            (None, None) => next,
        };
        if i32::try_from(value).is_err() {
            return Err(syn::Error::new_spanned(
                v,
                "enumerator values are 32-bit on the wire",
            ));
        }
        next = value + 1;
        values.push((&v.ident, value as i32));
        idl_names.push(
            a.name
                .unwrap_or_else(|| screaming_snake_case(&v.ident.to_string())),
        );
    }
    Ok(expand_tokens(input, &values, &idl_names, &c))
}

fn expand_tokens(
    input: &DeriveInput,
    values: &[(&syn::Ident, i32)],
    idl_names: &[String],
    c: &attrs::ContainerAttrs,
) -> TokenStream {
    let k = &c.krate;
    let name = &input.ident;
    let enc_arms: Vec<TokenStream> = values
        .iter()
        .map(|(id, v)| quote!(#name::#id => #v,))
        .collect();
    let dec_arms = values.iter().map(|(id, v)| quote!(#v => #name::#id,));
    let field_arms = values.iter().map(|(id, v)| {
        let n = id.to_string();
        quote!(#name::#id => (#v, #n),)
    });
    let enumerators = values.iter().map(|(id, v)| {
        let n = id.to_string();
        quote!((#n, #v))
    });
    let literals = values.iter().zip(idl_names).map(|((_, v), n)| {
        quote!(#k::EnumLiteral { name: ::std::string::String::from(#n), value: #v, default: false })
    });
    let first = values[0].0;
    let tname = type_name(input, c);
    let ext = extensibility(c);
    quote! {
        impl #k::Encode for #name {
            const FIXED_SIZE: ::core::option::Option<usize> = ::core::option::Option::Some(4);
            const LENGTH_CODE: u8 = 2;
            #[inline]
            fn encode(&self, w: &mut #k::Writer<'_>) -> ::core::result::Result<(), #k::EncodeError> {
                let v: i32 = match self { #(#enc_arms)* };
                w.write_i32(v)
            }
            fn key_max_end(
                start: usize,
                _version: #k::XcdrVersion,
                _bound: ::core::option::Option<u32>,
            ) -> ::core::option::Option<usize> {
                ::core::option::Option::Some(start.div_ceil(4) * 4 + 4)
            }
        }

        impl<'__de> #k::Decode<'__de> for #name {
            const MIN_SIZE: usize = 4;
            #[inline]
            fn decode(r: &mut #k::Reader<'__de>) -> ::core::result::Result<Self, #k::DecodeError> {
                let v = r.read_i32()?;
                ::core::result::Result::Ok(match v {
                    #(#dec_arms)*
                    other => {
                        return ::core::result::Result::Err(r.error(
                            #k::DecodeErrorKind::UnknownEnumValue {
                                type_name: <Self as #k::DdsType>::TYPE_NAME,
                                value: other as i64,
                            },
                        ))
                    }
                })
            }
            fn default_value() -> ::core::option::Option<Self> {
                ::core::option::Option::Some(#name::#first)
            }
        }

        impl #k::Fields for #name {
            #[inline]
            fn field(&self, path: &[&str]) -> ::core::option::Option<#k::FieldValue<'_>> {
                if !path.is_empty() {
                    return ::core::option::Option::None;
                }
                let (value, name): (i32, &'static str) = match self { #(#field_arms)* };
                ::core::option::Option::Some(#k::FieldValue::Enum { value, name })
            }
            fn field_kind(path: &[&str]) -> ::core::option::Option<#k::FieldKind> {
                path.is_empty().then_some(#k::FieldKind::Enum(&[#(#enumerators),*]))
            }
        }

        impl #k::Describe for #name {
            fn describe(_: ::core::option::Option<u32>) -> #k::TypeDesc {
                #k::TypeDesc::Enum(::std::sync::Arc::new(#k::EnumDesc {
                    name: ::std::string::String::from(<Self as #k::DdsType>::TYPE_NAME),
                    bit_bound: 32,
                    literals: ::std::vec![#(#literals),*],
                }))
            }
        }

        impl #k::DdsType for #name {
            const TYPE_NAME: &'static str = #tname;
            const EXTENSIBILITY: #k::Extensibility = #ext;
            const KEYED: bool = false;
            fn type_desc() -> ::core::option::Option<#k::TypeDesc> {
                ::core::option::Option::Some(<Self as #k::Describe>::describe(::core::option::Option::None))
            }
        }

        impl #k::Discriminator for #name {
            fn to_i64(&self) -> i64 {
                let v: i32 = match self { #(#enc_arms)* };
                v as i64
            }
        }
    }
}

fn literal_i64(e: &Expr) -> syn::Result<i64> {
    match e {
        Expr::Lit(ExprLit {
            lit: Lit::Int(i), ..
        }) => i.base10_parse(),
        Expr::Unary(ExprUnary {
            op: UnOp::Neg(_),
            expr,
            ..
        }) => literal_i64(expr).map(|v| -v),
        _ => Err(syn::Error::new_spanned(
            e,
            "enumerator values must be integer literals (or use #[dds(value = N)])",
        )),
    }
}
