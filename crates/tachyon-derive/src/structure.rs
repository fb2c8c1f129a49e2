//! Expansion for structs: members in declaration order, keys, optional members, and the three
//! extensibility layouts.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{DataStruct, DeriveInput, Fields, Ident, Type};

use crate::attrs::{self, AutoId, ContainerAttrs, Ext};
use crate::common::{
    decode_generics, describe_generics, encode_generics, extensibility, fields_generics,
    hashed_member_id, opt_u32, option_inner, type_name,
};

struct Member<'a> {
    ident: &'a Ident,
    /// The IDL member name (content filters name members by it).
    name: String,
    /// The member's type without `Option<…>` for optional members.
    ty: &'a Type,
    optional: bool,
    key: bool,
    id: u32,
    /// `#[dds(must_understand)]`; key members of mutable types get the flag as well in XCDR2.
    must_understand: bool,
    bound: Option<u32>,
    /// `#[dds(idl = "uint8")]`
    uint8: bool,
}

pub fn expand(
    input: &DeriveInput,
    data: &DataStruct,
    krate: &syn::Path,
) -> syn::Result<TokenStream> {
    let c = attrs::container(&input.attrs, krate)?;
    if c.switch.is_some() {
        return Err(syn::Error::new_spanned(
            &input.ident,
            "`switch` applies to unions (enums with cases), not structs",
        ));
    }
    let members = members(data, &c)?;
    let k = &c.krate;
    let name = &input.ident;
    let keyed = members.iter().any(|m| m.key);

    let encode_body = encode_body(&members, &c);
    let decode_body = decode_body(&members, &c);
    let key_body = key_body(&members, keyed, k);
    let key_max_body = key_max_body(&members, keyed, k);
    let decode_key_body = decode_key_body(&members, keyed, k);
    let holder_body = key_holder_body(&members, keyed, &c);
    let decode_holder_body = decode_key_holder_body(&members, keyed, &c);
    let min_size = min_size(&members, &c);
    let decode_into = decode_into(&members, &c);
    let default_fields = members.iter().map(|m| {
        let id = m.ident;
        let ty = m.ty;
        if m.optional {
            quote!(#id: ::core::option::Option::None)
        } else {
            quote!(#id: <#ty as #k::Decode<'__de>>::default_value()?)
        }
    });

    let eg = encode_generics(&input.generics, k);
    let (eimpl, _, ewhere) = eg.split_for_impl();
    let (_, ty_generics, _) = input.generics.split_for_impl();
    let dg = decode_generics(&input.generics, k);
    let (dimpl, _, dwhere) = dg.split_for_impl();
    let tname = type_name(input, &c);
    let ext = extensibility(&c);
    let fg = fields_generics(&input.generics, k);
    let (fimpl, _, fwhere) = fg.split_for_impl();
    let fields_impl = fields_impl(&members, k);
    let describe_body = describe_body(&members, &c);
    let tg = describe_generics(&input.generics, k);
    let (timpl, _, twhere) = tg.split_for_impl();
    let assign_vars: Vec<Ident> = (0..members.len())
        .map(|i| format_ident!("__assign_{}", i))
        .collect();
    let assign_fields: Vec<&Ident> = members.iter().map(|m| m.ident).collect();
    let assign_tys: Vec<TokenStream> = members
        .iter()
        .map(|m| {
            let ty = m.ty;
            if m.optional {
                quote!(::core::option::Option<#ty>)
            } else {
                quote!(#ty)
            }
        })
        .collect();
    // Only a type without generic parameters decodes from a payload of any lifetime.
    let inspect = if input.generics.params.is_empty() {
        quote! {
            fn inspect_serialized(
                payload: &[u8],
                f: &mut dyn ::core::ops::FnMut(&dyn #k::Fields) -> bool,
            ) -> ::core::option::Option<bool> {
                let v: Self = #k::deserialize(payload).ok()?;
                ::core::option::Option::Some(f(&v))
            }
            fn transcode_serialized(
                payload: &[u8],
                version: #k::XcdrVersion,
            ) -> ::core::option::Option<::std::vec::Vec<u8>> {
                #k::transcode::<Self>(payload, version).ok()
            }
            #[inline]
            fn sharing() -> ::core::option::Option<#k::Sharing<Self>> {
                #[allow(unused_imports)]
                use #k::share::{ByClone as _, NotShareable as _};
                // Member by member, in place, when every member can be.
                #[inline]
                fn assign(into: &mut #name, from: &#name) -> bool {
                    #[allow(unused_imports)]
                    use #k::share::{AssignClone as _, AssignDeep as _, AssignNone as _};
                    #(
                        let ::core::option::Option::Some(#assign_vars) =
                            (&&&#k::share::Probe::<#assign_tys>::NEW).assigner()
                        else {
                            return false;
                        };
                    )*
                    #( #assign_vars(&mut into.#assign_fields, &from.#assign_fields); )*
                    true
                }
                ::core::option::Option::Some(
                    (&&#k::share::Probe::<Self>::NEW).sharing()?.with_assign(assign),
                )
            }
        }
    } else {
        quote!()
    };

    Ok(quote! {
        impl #eimpl #k::Encode for #name #ty_generics #ewhere {
            #[inline]
            fn encode(&self, w: &mut #k::Writer<'_>) -> ::core::result::Result<(), #k::EncodeError> {
                #encode_body
            }
            fn encode_key(&self, w: &mut #k::Writer<'_>) -> ::core::result::Result<(), #k::EncodeError> {
                #key_body
            }
            fn encode_key_holder(&self, w: &mut #k::Writer<'_>) -> ::core::result::Result<(), #k::EncodeError> {
                #holder_body
            }
            fn key_max_end(
                start: usize,
                version: #k::XcdrVersion,
                _bound: ::core::option::Option<u32>,
            ) -> ::core::option::Option<usize> {
                #key_max_body
            }
        }

        impl #dimpl #k::Decode<'__de> for #name #ty_generics #dwhere {
            const MIN_SIZE: usize = #min_size;
            #[inline]
            fn decode(r: &mut #k::Reader<'__de>) -> ::core::result::Result<Self, #k::DecodeError> {
                r.enter()?;
                let result = (|r: &mut #k::Reader<'__de>| -> ::core::result::Result<Self, #k::DecodeError> {
                    #decode_body
                })(r);
                r.leave();
                result
            }
            #decode_into
            fn decode_key(r: &mut #k::Reader<'__de>) -> ::core::result::Result<Self, #k::DecodeError> {
                #decode_key_body
            }
            fn decode_key_holder(r: &mut #k::Reader<'__de>) -> ::core::result::Result<Self, #k::DecodeError> {
                r.enter()?;
                let result = (|r: &mut #k::Reader<'__de>| -> ::core::result::Result<Self, #k::DecodeError> {
                    #decode_holder_body
                })(r);
                r.leave();
                result
            }
            fn default_value() -> ::core::option::Option<Self> {
                ::core::option::Option::Some(Self { #(#default_fields,)* })
            }
        }

        impl #fimpl #k::Fields for #name #ty_generics #fwhere {
            #fields_impl
        }

        impl #timpl #k::Describe for #name #ty_generics #twhere {
            fn describe(_: ::core::option::Option<u32>) -> #k::TypeDesc {
                #describe_body
            }
        }

        impl #timpl #k::DdsType for #name #ty_generics #twhere {
            const TYPE_NAME: &'static str = #tname;
            const EXTENSIBILITY: #k::Extensibility = #ext;
            const KEYED: bool = #keyed;
            #inspect
            fn type_desc() -> ::core::option::Option<#k::TypeDesc> {
                ::core::option::Option::Some(<Self as #k::Describe>::describe(::core::option::Option::None))
            }
        }
    })
}

/// `Describe`: the struct's members with their ids, annotations and types.
fn describe_body(members: &[Member], c: &ContainerAttrs) -> TokenStream {
    let k = &c.krate;
    let ext = extensibility(c);
    let autoid_hash = c.autoid == AutoId::Hash;
    let items = members.iter().map(|m| {
        let ty = m.ty;
        let name = &m.name;
        let id = m.id;
        let bound = opt_u32(m.bound);
        let (key, optional, mu) = (m.key, m.optional, m.must_understand);
        let uint8 = if m.uint8 {
            quote!(.octets_as_uint8())
        } else {
            quote!()
        };
        quote! {{
            let mut m = #k::MemberDesc::new(#name, #id, <#ty as #k::Describe>::describe(#bound)#uint8);
            m.key = #key;
            m.optional = #optional;
            m.must_understand = #mu;
            m
        }}
    });
    quote! {
        #k::TypeDesc::Struct(::std::sync::Arc::new(#k::StructDesc {
            name: ::std::string::String::from(<Self as #k::DdsType>::TYPE_NAME),
            extensibility: #ext,
            autoid_hash: #autoid_hash,
            nested: false,
            base: ::core::option::Option::None,
            members: ::std::vec![#(#items),*],
        }))
    }
}

/// `Fields`: members by IDL name; an optional member reads as absent when it is.
fn fields_impl(members: &[Member], k: &syn::Path) -> TokenStream {
    let names: Vec<&str> = members.iter().map(|m| m.name.as_str()).collect();
    let value_arms = members.iter().map(|m| {
        let id = m.ident;
        let name = &m.name;
        if m.optional {
            quote!(#name => self.#id.as_ref().and_then(|v| #k::Fields::field(v, rest)),)
        } else {
            quote!(#name => #k::Fields::field(&self.#id, rest),)
        }
    });
    let kind_arms = members.iter().map(|m| {
        let ty = m.ty;
        let name = &m.name;
        quote!(#name => <#ty as #k::Fields>::field_kind(rest),)
    });
    quote! {
        fn field(&self, path: &[&str]) -> ::core::option::Option<#k::FieldValue<'_>> {
            let (first, rest) = path.split_first()?;
            match *first {
                #(#value_arms)*
                _ => ::core::option::Option::None,
            }
        }
        fn field_kind(path: &[&str]) -> ::core::option::Option<#k::FieldKind> {
            let ::core::option::Option::Some((first, rest)) = path.split_first() else {
                return ::core::option::Option::Some(#k::FieldKind::Struct(&[#(#names),*]));
            };
            match *first {
                #(#kind_arms)*
                _ => ::core::option::Option::None,
            }
        }
    }
}

fn members<'a>(data: &'a DataStruct, c: &ContainerAttrs) -> syn::Result<Vec<Member<'a>>> {
    let Fields::Named(named) = &data.fields else {
        return Err(syn::Error::new_spanned(
            &data.fields,
            "DdsType structs need named fields (IDL members have names)",
        ));
    };
    let mut next_id: u32 = 0;
    let mut out = Vec::new();
    for f in &named.named {
        let a = attrs::field(&f.attrs)?;
        let ident = f.ident.as_ref().expect("named fields have identifiers");
        let inner = option_inner(&f.ty);
        let optional = a.optional || inner.is_some();
        let ty = inner.unwrap_or(&f.ty);
        if optional && inner.is_none() {
            return Err(syn::Error::new_spanned(
                &f.ty,
                "an optional member must have type Option<T>",
            ));
        }
        if optional && a.key {
            return Err(syn::Error::new_spanned(
                &f.ty,
                "a key member cannot be optional",
            ));
        }
        let idl_name = a.name.clone().unwrap_or_else(|| {
            let s = ident.to_string();
            s.strip_prefix("r#").map_or(s.clone(), str::to_owned)
        });
        let id = match (a.id, c.autoid) {
            (Some(id), _) => id,
            (None, AutoId::Sequential) => next_id,
            (None, AutoId::Hash) => hashed_member_id(&idl_name),
        };
        if id > 0x0fff_ffff {
            return Err(syn::Error::new_spanned(
                ident,
                "member ids are 28 bits (at most 0x0fffffff)",
            ));
        }
        next_id = id.wrapping_add(1);
        out.push(Member {
            ident,
            name: idl_name,
            ty,
            optional,
            key: a.key,
            id,
            must_understand: a.must_understand,
            bound: a.bound,
            uint8: a.uint8,
        });
    }
    for (i, m) in out.iter().enumerate() {
        if out[..i].iter().any(|o| o.id == m.id) {
            return Err(syn::Error::new_spanned(
                m.ident,
                format!("member id {} is used twice", m.id),
            ));
        }
    }
    Ok(out)
}

fn encode_value(m: &Member, value: TokenStream, k: &syn::Path) -> TokenStream {
    match m.bound {
        Some(b) => quote!(#k::Encode::encode_bounded(#value, w, #b)?;),
        None => quote!(#k::Encode::encode(#value, w)?;),
    }
}

fn encode_body(members: &[Member], c: &ContainerAttrs) -> TokenStream {
    let k = &c.krate;
    match c.ext {
        Ext::Final | Ext::Appendable => {
            let fields = members.iter().map(|m| {
                let id = m.ident;
                if m.optional {
                    let mid = m.id;
                    let mu = m.must_understand;
                    let bound = opt_u32(m.bound);
                    quote!(#k::encode_optional(w, &self.#id, #mid, #mu, #bound)?;)
                } else {
                    encode_value(m, quote!(&self.#id), k)
                }
            });
            if c.ext == Ext::Appendable {
                quote! {
                    let mark = w.begin_dheader()?;
                    #(#fields)*
                    w.end_dheader(mark)
                }
            } else {
                quote! {
                    #(#fields)*
                    ::core::result::Result::Ok(())
                }
            }
        }
        Ext::Mutable => {
            let fields = members.iter().map(|m| {
                let id = m.ident;
                let ty = m.ty;
                let mid = m.id;
                let mu = m.must_understand;
                let key = m.key;
                let enc = encode_value(m, quote!(v), k);
                // XCDR2 flags key members must-understand, as Cyclone DDS 0.10 does; XCDR1 does
                // not, since Fast-CDR reads that flag into the member id of extended headers.
                let one = quote! {
                    let member = w.begin_member(
                        #mid,
                        #mu || (#key && w.is_xcdr2()),
                        <#ty as #k::Encode>::LENGTH_CODE,
                    )?;
                    #enc
                    w.end_member(member)?;
                };
                if m.optional {
                    quote!(if let ::core::option::Option::Some(v) = &self.#id { #one })
                } else {
                    quote!({ let v = &self.#id; #one })
                }
            });
            quote! {
                let mark = w.begin_dheader()?;
                #(#fields)*
                w.end_parameter_list()?;
                w.end_dheader(mark)
            }
        }
    }
}

fn decode_value(m: &Member, k: &syn::Path) -> TokenStream {
    let ty = m.ty;
    match m.bound {
        Some(b) => quote!(<#ty as #k::Decode<'__de>>::decode_bounded(r, #b)),
        None => quote!(<#ty as #k::Decode<'__de>>::decode(r)),
    }
}

fn missing(m: &Member, k: &syn::Path) -> TokenStream {
    let ty = m.ty;
    let mid = m.id;
    quote! {
        match <#ty as #k::Decode<'__de>>::default_value() {
            ::core::option::Option::Some(v) => v,
            ::core::option::Option::None => {
                return ::core::result::Result::Err(
                    r.error(#k::DecodeErrorKind::MissingMember { member_id: #mid }),
                )
            }
        }
    }
}

/// `decode_into` for a `@final` struct whose members are neither optional nor bounded: each
/// member decoded into itself, in order (what it owns is reused). Other structs keep the
/// default (`*self = decode(r)?`): an appendable or mutable encoding may leave members out.
fn decode_into(members: &[Member], c: &ContainerAttrs) -> TokenStream {
    let k = &c.krate;
    if c.ext != Ext::Final || members.iter().any(|m| m.optional || m.bound.is_some()) {
        return quote!();
    }
    let steps = members.iter().map(|m| {
        let id = m.ident;
        let ty = m.ty;
        quote!(<#ty as #k::Decode<'__de>>::decode_into(&mut self.#id, r)?;)
    });
    quote! {
        #[inline]
        fn decode_into(&mut self, r: &mut #k::Reader<'__de>) -> ::core::result::Result<(), #k::DecodeError> {
            r.enter()?;
            let result = (|r: &mut #k::Reader<'__de>| -> ::core::result::Result<(), #k::DecodeError> {
                #(#steps)*
                ::core::result::Result::Ok(())
            })(r);
            r.leave();
            result
        }
    }
}

fn decode_body(members: &[Member], c: &ContainerAttrs) -> TokenStream {
    let k = &c.krate;
    match c.ext {
        Ext::Final => {
            let fields = members.iter().map(|m| {
                let id = m.ident;
                if m.optional {
                    let bound = opt_u32(m.bound);
                    let mid = m.id;
                    quote!(#id: #k::decode_optional(r, #mid, #bound)?)
                } else {
                    let v = decode_value(m, k);
                    quote!(#id: #v?)
                }
            });
            quote!(::core::result::Result::Ok(Self { #(#fields,)* }))
        }
        Ext::Appendable => {
            let fields = members.iter().map(|m| {
                let id = m.ident;
                if m.optional {
                    let bound = opt_u32(m.bound);
                    let mid = m.id;
                    quote! {
                        #id: if r.at_end() {
                            ::core::option::Option::None
                        } else {
                            #k::decode_optional(r, #mid, #bound)?
                        }
                    }
                } else {
                    let v = decode_value(m, k);
                    let miss = missing(m, k);
                    // At the end of the DHEADER's region (XCDR2), or of the body (XCDR1, no
                    // DHEADER: a writer of an older version of the type ended there).
                    quote!(#id: if r.at_end() { #miss } else { #v? })
                }
            });
            quote! {
                let region = r.begin_delimited()?;
                let value = (|r: &mut #k::Reader<'__de>| -> ::core::result::Result<Self, #k::DecodeError> {
                    ::core::result::Result::Ok(Self { #(#fields,)* })
                })(r);
                r.end_region(region);
                value
            }
        }
        Ext::Mutable => {
            let locals: Vec<Ident> = members
                .iter()
                .map(|m| format_ident!("__m_{}", m.ident))
                .collect();
            let decls = members.iter().zip(&locals).map(|(m, l)| {
                let ty = m.ty;
                quote!(let mut #l: ::core::option::Option<#ty> = ::core::option::Option::None;)
            });
            let arms = members.iter().zip(&locals).map(|(m, l)| {
                let mid = m.id;
                let v = decode_value(m, k);
                quote! {
                    #mid => {
                        #l = ::core::option::Option::Some(r.member_value(&member, |r| #v)?);
                    }
                }
            });
            let fields = members.iter().zip(&locals).map(|(m, l)| {
                let id = m.ident;
                if m.optional {
                    quote!(#id: #l)
                } else {
                    let miss = missing(m, k);
                    quote!(#id: match #l { ::core::option::Option::Some(v) => v, ::core::option::Option::None => #miss })
                }
            });
            quote! {
                let region = r.begin_delimited()?;
                #(#decls)*
                let scan = (|r: &mut #k::Reader<'__de>| -> ::core::result::Result<(), #k::DecodeError> {
                    while let ::core::option::Option::Some(member) = r.next_member()? {
                        match member.id {
                            #(#arms)*
                            _ => r.skip_member(&member)?,
                        }
                    }
                    ::core::result::Result::Ok(())
                })(r);
                r.end_region(region);
                scan?;
                ::core::result::Result::Ok(Self { #(#fields,)* })
            }
        }
    }
}

/// The members of the key-only form, in member-id order (XTypes 1.3 7.6.8).
fn key_members<'a, 'b>(members: &'b [Member<'a>], keyed: bool) -> Vec<&'b Member<'a>> {
    let mut keys: Vec<_> = members.iter().filter(|m| m.key || !keyed).collect();
    keys.sort_by_key(|m| m.id);
    keys
}

fn key_body(members: &[Member], keyed: bool, k: &syn::Path) -> TokenStream {
    let keys = key_members(members, keyed).into_iter().map(|m| {
        let id = m.ident;
        if m.optional {
            // Optional members of a nested key struct: the present octet, then the value.
            quote! {
                w.write_bool(self.#id.is_some())?;
                if let ::core::option::Option::Some(v) = &self.#id {
                    #k::Encode::encode_key(v, w)?;
                }
            }
        } else {
            quote!(#k::Encode::encode_key(&self.#id, w)?;)
        }
    });
    quote! {
        #(#keys)*
        ::core::result::Result::Ok(())
    }
}

/// Reads the key-only form `key_body` writes; the other members take their default values.
fn decode_key_body(members: &[Member], keyed: bool, k: &syn::Path) -> TokenStream {
    let keys = key_members(members, keyed);
    let reads = keys.iter().map(|m| {
        let id = m.ident;
        let ty = m.ty;
        let value = match m.bound {
            Some(b) => quote!(<#ty as #k::Decode<'__de>>::decode_bounded(r, #b)?),
            None => quote!(<#ty as #k::Decode<'__de>>::decode_key(r)?),
        };
        if m.optional {
            quote! {
                let #id = if r.read_bool()? {
                    ::core::option::Option::Some(#value)
                } else {
                    ::core::option::Option::None
                };
            }
        } else {
            quote!(let #id = #value;)
        }
    });
    let fields = members.iter().map(|m| {
        let id = m.ident;
        let ty = m.ty;
        let mid = m.id;
        if keys.iter().any(|key| key.ident == m.ident) {
            quote!(#id)
        } else if m.optional {
            quote!(#id: ::core::option::Option::None)
        } else {
            quote! {
                #id: <#ty as #k::Decode<'__de>>::default_value()
                    .ok_or_else(|| r.error(#k::DecodeErrorKind::MissingMember { member_id: #mid }))?
            }
        }
    });
    quote! {
        #(#reads)*
        ::core::result::Result::Ok(Self { #(#fields,)* })
    }
}

/// The members of the key holder (XTypes 1.3 7.2.2.4.7), in declaration order, as Cyclone
/// DDS 11 writes them: the key members, or every member of a type without keys.
fn holder_members<'a, 'b>(members: &'b [Member<'a>], keyed: bool) -> Vec<&'b Member<'a>> {
    members.iter().filter(|m| m.key || !keyed).collect()
}

/// `encode_key_holder`: the key members framed as the type frames its members (a DHEADER
/// for an appendable or mutable struct in XCDR2, a member header each and the sentinel for a
/// mutable one), each nested key member in its own holder form.
fn key_holder_body(members: &[Member], keyed: bool, c: &ContainerAttrs) -> TokenStream {
    let k = &c.krate;
    let keys = holder_members(members, keyed);
    match c.ext {
        Ext::Final | Ext::Appendable => {
            let fields = keys.iter().map(|m| {
                let id = m.ident;
                if m.optional {
                    quote! {
                        w.write_bool(self.#id.is_some())?;
                        if let ::core::option::Option::Some(v) = &self.#id {
                            #k::Encode::encode_key_holder(v, w)?;
                        }
                    }
                } else {
                    quote!(#k::Encode::encode_key_holder(&self.#id, w)?;)
                }
            });
            if c.ext == Ext::Appendable {
                quote! {
                    let mark = w.begin_dheader()?;
                    #(#fields)*
                    w.end_dheader(mark)
                }
            } else {
                quote! {
                    #(#fields)*
                    ::core::result::Result::Ok(())
                }
            }
        }
        Ext::Mutable => {
            let fields = keys.iter().map(|m| {
                let id = m.ident;
                let ty = m.ty;
                let mid = m.id;
                let mu = m.must_understand;
                let key = m.key;
                let one = quote! {
                    let member = w.begin_member(
                        #mid,
                        #mu || (#key && w.is_xcdr2()),
                        <#ty as #k::Encode>::LENGTH_CODE,
                    )?;
                    #k::Encode::encode_key_holder(v, w)?;
                    w.end_member(member)?;
                };
                if m.optional {
                    quote!(if let ::core::option::Option::Some(v) = &self.#id { #one })
                } else {
                    quote!({ let v = &self.#id; #one })
                }
            });
            quote! {
                let mark = w.begin_dheader()?;
                #(#fields)*
                w.end_parameter_list()?;
                w.end_dheader(mark)
            }
        }
    }
}

/// `decode_key_holder`: reads what `key_holder_body` writes (and what Cyclone DDS 11 sends);
/// the members outside the key take their default values.
fn decode_key_holder_body(members: &[Member], keyed: bool, c: &ContainerAttrs) -> TokenStream {
    let k = &c.krate;
    let keys = holder_members(members, keyed);
    let is_key = |m: &Member| keys.iter().any(|key| key.ident == m.ident);
    let value = |m: &Member| {
        let ty = m.ty;
        match m.bound {
            Some(b) => quote!(<#ty as #k::Decode<'__de>>::decode_bounded(r, #b)),
            None => quote!(<#ty as #k::Decode<'__de>>::decode_key_holder(r)),
        }
    };
    let others = |m: &Member| {
        let id = m.ident;
        let ty = m.ty;
        let mid = m.id;
        if m.optional {
            quote!(let #id = ::core::option::Option::None;)
        } else {
            quote! {
                let #id = <#ty as #k::Decode<'__de>>::default_value()
                    .ok_or_else(|| r.error(#k::DecodeErrorKind::MissingMember { member_id: #mid }))?;
            }
        }
    };
    let all = members.iter().map(|m| m.ident);
    match c.ext {
        Ext::Final | Ext::Appendable => {
            let reads = members.iter().map(|m| {
                let id = m.ident;
                if !is_key(m) {
                    return others(m);
                }
                let v = value(m);
                let read = if m.optional {
                    quote! {
                        if r.read_bool()? {
                            ::core::option::Option::Some(#v?)
                        } else {
                            ::core::option::Option::None
                        }
                    }
                } else {
                    quote!(#v?)
                };
                if c.ext == Ext::Appendable {
                    let miss = if m.optional {
                        quote!(::core::option::Option::None)
                    } else {
                        missing(m, k)
                    };
                    quote!(let #id = if r.at_end() { #miss } else { #read };)
                } else {
                    quote!(let #id = #read;)
                }
            });
            if c.ext == Ext::Appendable {
                quote! {
                    let region = r.begin_delimited()?;
                    let value = (|r: &mut #k::Reader<'__de>| -> ::core::result::Result<Self, #k::DecodeError> {
                        #(#reads)*
                        ::core::result::Result::Ok(Self { #(#all,)* })
                    })(r);
                    r.end_region(region);
                    value
                }
            } else {
                quote! {
                    #(#reads)*
                    ::core::result::Result::Ok(Self { #(#all,)* })
                }
            }
        }
        Ext::Mutable => {
            let locals: Vec<Ident> = keys
                .iter()
                .map(|m| format_ident!("__m_{}", m.ident))
                .collect();
            let decls = keys.iter().zip(&locals).map(|(m, l)| {
                let ty = m.ty;
                quote!(let mut #l: ::core::option::Option<#ty> = ::core::option::Option::None;)
            });
            let arms = keys.iter().zip(&locals).map(|(m, l)| {
                let mid = m.id;
                let v = value(m);
                quote! {
                    #mid => {
                        #l = ::core::option::Option::Some(r.member_value(&member, |r| #v)?);
                    }
                }
            });
            let fields = members.iter().map(|m| {
                let id = m.ident;
                match keys.iter().position(|key| key.ident == m.ident) {
                    None => others(m),
                    Some(_) if m.optional => {
                        let l = format_ident!("__m_{}", m.ident);
                        quote!(let #id = #l;)
                    }
                    Some(_) => {
                        let l = format_ident!("__m_{}", m.ident);
                        let miss = missing(m, k);
                        quote!(let #id = match #l { ::core::option::Option::Some(v) => v, ::core::option::Option::None => #miss };)
                    }
                }
            });
            quote! {
                let region = r.begin_delimited()?;
                #(#decls)*
                let scan = (|r: &mut #k::Reader<'__de>| -> ::core::result::Result<(), #k::DecodeError> {
                    while let ::core::option::Option::Some(member) = r.next_member()? {
                        match member.id {
                            #(#arms)*
                            _ => r.skip_member(&member)?,
                        }
                    }
                    ::core::result::Result::Ok(())
                })(r);
                r.end_region(region);
                scan?;
                #(#fields)*
                ::core::result::Result::Ok(Self { #(#all,)* })
            }
        }
    }
}

fn key_max_body(members: &[Member], keyed: bool, k: &syn::Path) -> TokenStream {
    let keys = key_members(members, keyed);
    if keys.iter().any(|m| m.optional) {
        return quote!(let _ = (start, version); ::core::option::Option::None);
    }
    let steps = keys.into_iter().map(|m| {
        let ty = m.ty;
        let bound = opt_u32(m.bound);
        quote!(let pos = <#ty as #k::Encode>::key_max_end(pos, version, #bound)?;)
    });
    quote! {
        let pos = start;
        #(#steps)*
        ::core::option::Option::Some(pos)
    }
}

fn min_size(members: &[Member], c: &ContainerAttrs) -> TokenStream {
    let k = &c.krate;
    if c.ext != Ext::Final {
        return quote!(1);
    }
    let parts = members.iter().map(|m| {
        let ty = m.ty;
        if m.optional {
            quote!(1)
        } else {
            quote!(<#ty as #k::Decode<'__de>>::MIN_SIZE)
        }
    });
    quote!(0 #(+ #parts)*)
}
