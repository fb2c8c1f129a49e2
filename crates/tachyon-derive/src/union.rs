//! Expansion for enums with `#[dds(case = …)]` variants: IDL unions (discriminator, then the
//! selected member).

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DataEnum, DeriveInput, Fields, Type};

use crate::attrs::{self, Ext};
use crate::common::{
    decode_generics, describe_generics, encode_generics, extensibility, opt_u32, snake_case,
    type_name,
};

pub fn expand(input: &DeriveInput, data: &DataEnum, krate: &syn::Path) -> syn::Result<TokenStream> {
    let c = attrs::container(&input.attrs, krate)?;
    let k = &c.krate;
    let name = &input.ident;
    if c.ext == Ext::Mutable {
        return Err(syn::Error::new_spanned(
            name,
            "mutable unions are not supported yet; use final or appendable",
        ));
    }
    let switch: Type = c.switch.clone().unwrap_or_else(|| syn::parse_quote!(i32));

    let mut enc_arms = Vec::new();
    let mut dec_branches = Vec::new();
    let mut cases_desc = Vec::new();
    let mut next_id: u32 = 0;
    for v in &data.variants {
        let a = attrs::variant(&v.attrs)?;
        if a.cases.is_empty() {
            return Err(syn::Error::new_spanned(
                v,
                "each union variant needs #[dds(case = …)] naming its discriminator value(s)",
            ));
        }
        let vid = &v.ident;
        let first = &a.cases[0];
        let cases = &a.cases;
        let cond = quote!(#( d == (#cases) )||*);
        match &v.fields {
            Fields::Unit => {
                enc_arms.push(quote! {
                    #name::#vid => {
                        let d: #switch = #first;
                        #k::Encode::encode(&d, w)?;
                    }
                });
                dec_branches.push(quote!(if #cond { #name::#vid }));
            }
            Fields::Unnamed(f) if f.unnamed.len() == 1 => {
                let ty = &f.unnamed[0].ty;
                let id = a.id.unwrap_or(next_id);
                next_id = id.wrapping_add(1);
                let case_name = a
                    .name
                    .clone()
                    .unwrap_or_else(|| snake_case(&v.ident.to_string()));
                let bound = opt_u32(a.bound);
                cases_desc.push(quote! {
                    #k::CaseDesc {
                        name: ::std::string::String::from(#case_name),
                        id: #id,
                        ty: <#ty as #k::Describe>::describe(#bound),
                        labels: ::std::vec![#( {
                            let d: #switch = #cases;
                            #k::Discriminator::to_i64(&d) as i32
                        } ),*],
                        default: false,
                        external: false,
                    }
                });
                let (enc, dec) = match a.bound {
                    Some(b) => (
                        quote!(#k::Encode::encode_bounded(v, w, #b)?;),
                        quote!(<#ty as #k::Decode<'__de>>::decode_bounded(r, #b)?),
                    ),
                    None => (
                        quote!(#k::Encode::encode(v, w)?;),
                        quote!(<#ty as #k::Decode<'__de>>::decode(r)?),
                    ),
                };
                enc_arms.push(quote! {
                    #name::#vid(v) => {
                        let d: #switch = #first;
                        #k::Encode::encode(&d, w)?;
                        #enc
                    }
                });
                dec_branches.push(quote!(if #cond { #name::#vid(#dec) }));
            }
            _ => {
                return Err(syn::Error::new_spanned(
                    v,
                    "a union variant is a unit (no member) or a one-field tuple (the member)",
                ))
            }
        }
    }

    let appendable = c.ext == Ext::Appendable;
    let eg = encode_generics(&input.generics, k);
    let (eimpl, _, ewhere) = eg.split_for_impl();
    let (_, ty_generics, _) = input.generics.split_for_impl();
    let dg = decode_generics(&input.generics, k);
    let (dimpl, _, dwhere) = dg.split_for_impl();
    let tname = type_name(input, &c);
    let ext = extensibility(&c);
    let tg = describe_generics(&input.generics, k);
    let (timpl, _, twhere) = tg.split_for_impl();

    Ok(quote! {
        impl #eimpl #k::Encode for #name #ty_generics #ewhere {
            fn encode(&self, w: &mut #k::Writer<'_>) -> ::core::result::Result<(), #k::EncodeError> {
                let mark = if #appendable { ::core::option::Option::Some(w.begin_dheader()?) } else { ::core::option::Option::None };
                match self { #(#enc_arms)* }
                if let ::core::option::Option::Some(mark) = mark {
                    w.end_dheader(mark)?;
                }
                ::core::result::Result::Ok(())
            }
        }

        impl #dimpl #k::Decode<'__de> for #name #ty_generics #dwhere {
            const MIN_SIZE: usize = <#switch as #k::Decode<'__de>>::MIN_SIZE;
            fn decode(r: &mut #k::Reader<'__de>) -> ::core::result::Result<Self, #k::DecodeError> {
                r.enter()?;
                let region = if #appendable { ::core::option::Option::Some(r.begin_delimited()) } else { ::core::option::Option::None };
                let result = (|r: &mut #k::Reader<'__de>| -> ::core::result::Result<Self, #k::DecodeError> {
                    let d = <#switch as #k::Decode<'__de>>::decode(r)?;
                    ::core::result::Result::Ok(
                        #(#dec_branches else)* {
                            return ::core::result::Result::Err(r.error(
                                #k::DecodeErrorKind::UnknownDiscriminator {
                                    type_name: <Self as #k::DdsType>::TYPE_NAME,
                                    value: #k::Discriminator::to_i64(&d),
                                },
                            ));
                        }
                    )
                });
                let result = match region {
                    ::core::option::Option::Some(::core::result::Result::Err(e)) => ::core::result::Result::Err(e),
                    ::core::option::Option::Some(::core::result::Result::Ok(region)) => {
                        let v = result(r);
                        r.end_region(region);
                        v
                    }
                    ::core::option::Option::None => result(r),
                };
                r.leave();
                result
            }
        }

        impl #eimpl #k::Fields for #name #ty_generics #ewhere {
            fn field_kind(_: &[&str]) -> ::core::option::Option<#k::FieldKind> {
                ::core::option::Option::Some(#k::FieldKind::Unsupported("union"))
            }
        }

        impl #timpl #k::Describe for #name #ty_generics #twhere {
            fn describe(_: ::core::option::Option<u32>) -> #k::TypeDesc {
                #k::TypeDesc::Union(::std::sync::Arc::new(#k::UnionDesc {
                    name: ::std::string::String::from(<Self as #k::DdsType>::TYPE_NAME),
                    extensibility: #ext,
                    nested: false,
                    discriminator: <#switch as #k::Describe>::describe(::core::option::Option::None),
                    discriminator_key: false,
                    cases: ::std::vec![#(#cases_desc),*],
                }))
            }
        }

        impl #timpl #k::DdsType for #name #ty_generics #twhere {
            const TYPE_NAME: &'static str = #tname;
            const EXTENSIBILITY: #k::Extensibility = #ext;
            const KEYED: bool = false;
            fn type_desc() -> ::core::option::Option<#k::TypeDesc> {
                ::core::option::Option::Some(<Self as #k::Describe>::describe(::core::option::Option::None))
            }
        }
    })
}
