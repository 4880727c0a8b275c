//! `#[derive(SimState)]`: the one declaration that makes a type simulation state.
//!
//! The derive writes `rusting_engine::state::SimState` for a struct or enum: every field's
//! raw bits go into the state hasher in declaration order (an enum's variant index first), each
//! field is named for comparisons (`Health.value: 3.0 vs 3.0000002`) and non-finite reports, and
//! the type gets its stable registered name (its identifier, or `#[sim_state(name = "...")]`),
//! never `std::any::type_name`, which may change between compilers.
//!
//! Field attributes:
//! - `#[sim_state(skip = "why")]` leaves a field out; the reason is required.
//! - `#[sim_state(with = path::to::fn)]` hashes a field of another crate's type with
//!   `fn(&FieldType, &mut StateHasher)`; comparisons print it with `Debug`.
//!
//! This crate only generates code; it must never depend on the engine.

use proc_macro::TokenStream;
use proc_macro2::TokenStream as Tokens;
use quote::{format_ident, quote};
use syn::spanned::Spanned;
use syn::{
    Data, DeriveInput, Error, Expr, ExprLit, Fields, Lit, LitStr, Meta, Path, parse_macro_input,
};

/// Derives `rusting_engine::state::SimState`; see the crate docs.
#[proc_macro_derive(SimState, attributes(sim_state))]
pub fn derive_sim_state(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    match expand(&input) {
        Ok(tokens) => tokens.into(),
        Err(error) => error.to_compile_error().into(),
    }
}

/// What a field attribute asks for.
enum FieldRule {
    Hash,
    Skip,
    With(Path),
}

fn type_name(input: &DeriveInput) -> Result<LitStr, Error> {
    let mut name = LitStr::new(&input.ident.to_string(), input.ident.span());
    for attr in input
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("sim_state"))
    {
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("name") {
                name = meta.value()?.parse()?;
                if name.value().is_empty() {
                    return Err(meta.error("a registered name cannot be empty"));
                }
                Ok(())
            } else {
                Err(meta.error("expected `name = \"...\"`"))
            }
        })?;
    }
    Ok(name)
}

fn field_rule(field: &syn::Field) -> Result<FieldRule, Error> {
    let mut rule = FieldRule::Hash;
    for attr in field
        .attrs
        .iter()
        .filter(|a| a.path().is_ident("sim_state"))
    {
        if let Meta::Path(_) = attr.meta {
            return Err(Error::new(
                attr.span(),
                "expected `#[sim_state(skip = \"why\")]` or `#[sim_state(with = path)]`",
            ));
        }
        attr.parse_nested_meta(|meta| {
            if meta.path.is_ident("skip") {
                let reason: Expr = meta.value()?.parse()?;
                match reason {
                    Expr::Lit(ExprLit {
                        lit: Lit::Str(text),
                        ..
                    }) if !text.value().trim().is_empty() => {
                        rule = FieldRule::Skip;
                        Ok(())
                    }
                    other => Err(Error::new(
                        other.span(),
                        "a skipped field needs its reason: `#[sim_state(skip = \"why\")]`",
                    )),
                }
            } else if meta.path.is_ident("with") {
                rule = FieldRule::With(meta.value()?.parse()?);
                Ok(())
            } else {
                Err(meta.error("expected `skip = \"why\"` or `with = path`"))
            }
        })?;
    }
    Ok(rule)
}

/// The layout entries of a list of fields, their paths starting with `prefix` (`Variant.` in an
/// enum).
fn layout_code(fields: &Fields, prefix: &str) -> Result<Tokens, Error> {
    let mut layout = Tokens::new();
    for (k, field) in fields.iter().enumerate() {
        if matches!(field_rule(field)?, FieldRule::Skip) {
            continue;
        }
        let label = match &field.ident {
            Some(ident) => format!("{prefix}{ident}"),
            None => format!("{prefix}{k}"),
        };
        let ty = &field.ty;
        let written = quote!(#ty).to_string().replace(' ', "");
        layout.extend(quote! {
            out(
                &::rusting_engine::state::sim_state::join(path, #label),
                #written,
                ::core::mem::size_of::<#ty>(),
            );
        });
    }
    Ok(layout)
}

/// The hash and visit code for a list of fields bound to `bindings`.
fn fields_code(fields: &Fields, bindings: &[Tokens]) -> Result<(Tokens, Tokens), Error> {
    let mut hash = Tokens::new();
    let mut visit = Tokens::new();
    for (k, (field, binding)) in fields.iter().zip(bindings).enumerate() {
        let label = match &field.ident {
            Some(ident) => ident.to_string(),
            None => k.to_string(),
        };
        match field_rule(field)? {
            FieldRule::Skip => {}
            FieldRule::Hash => {
                // No field path on the hot path: a non-finite value is located afterwards, from
                // `visit_fields`, on the rare tick that has one.
                hash.extend(quote! {
                    ::rusting_engine::state::SimState::hash_state(#binding, hasher);
                });
                visit.extend(quote! {
                    ::rusting_engine::state::SimState::visit_fields(
                        #binding,
                        &::rusting_engine::state::sim_state::join(path, #label),
                        out,
                    );
                });
            }
            FieldRule::With(function) => {
                hash.extend(quote! {
                    #function(#binding, hasher);
                });
                visit.extend(quote! {
                    out(
                        &::rusting_engine::state::sim_state::join(path, #label),
                        ::std::format!("{:?}", #binding),
                    );
                });
            }
        }
    }
    Ok((hash, visit))
}

fn bindings(fields: &Fields) -> Vec<Tokens> {
    fields
        .iter()
        .enumerate()
        .map(|(k, field)| {
            // Prefixed, so a field called `path`, `out` or `hasher` never shadows the generated
            // functions' parameters.
            let ident = match &field.ident {
                Some(ident) => format_ident!("__sim_{}", ident),
                None => format_ident!("__sim_field_{}", k),
            };
            quote!(#ident)
        })
        .collect()
}

/// The pattern that binds every field of `fields` by reference.
fn pattern(fields: &Fields, bindings: &[Tokens]) -> Tokens {
    match fields {
        Fields::Named(named) => {
            let names = named.named.iter().map(|field| &field.ident);
            quote!({ #(#names: #bindings),* })
        }
        Fields::Unnamed(_) => quote!(( #(#bindings),* )),
        Fields::Unit => quote!(),
    }
}

fn expand(input: &DeriveInput) -> Result<Tokens, Error> {
    let name = type_name(input)?;
    let ident = &input.ident;
    let mut layout_body = Tokens::new();
    let (hash_body, visit_body) = match &input.data {
        Data::Struct(data) => {
            let bound = bindings(&data.fields);
            let (hash, visit) = fields_code(&data.fields, &bound)?;
            layout_body = layout_code(&data.fields, "")?;
            let pattern = pattern(&data.fields, &bound);
            (
                quote! { let #ident #pattern = self; #hash },
                quote! { let #ident #pattern = self; #visit },
            )
        }
        Data::Enum(data) => {
            let mut hash_arms = Tokens::new();
            let mut visit_arms = Tokens::new();
            for (index, variant) in data.variants.iter().enumerate() {
                let index = index as u32;
                let variant_ident = &variant.ident;
                let variant_name = variant_ident.to_string();
                // Each variant is an entry (its number is what the hash feeds), then its fields.
                let variant_entry = format!("variant {index}");
                layout_body.extend(quote! {
                    out(
                        &::rusting_engine::state::sim_state::join(path, #variant_name),
                        #variant_entry,
                        0,
                    );
                });
                layout_body.extend(layout_code(&variant.fields, &format!("{variant_name}."))?);
                let bound = bindings(&variant.fields);
                let (hash, visit) = fields_code(&variant.fields, &bound)?;
                let pattern = pattern(&variant.fields, &bound);
                hash_arms.extend(quote! {
                    #ident::#variant_ident #pattern => { hasher.u32(#index); #hash }
                });
                visit_arms.extend(quote! {
                    #ident::#variant_ident #pattern => {
                        out(path, ::std::string::String::from(#variant_name));
                        #visit
                    }
                });
            }
            (
                quote! {
                    #[allow(unused_variables)]
                    match self { #hash_arms }
                },
                quote! {
                    #[allow(unused_variables)]
                    match self { #visit_arms }
                },
            )
        }
        Data::Union(_) => {
            return Err(Error::new(
                input.span(),
                "SimState cannot be derived for a union: its bits have no single meaning",
            ));
        }
    };
    let mut generics = input.generics.clone();
    for param in generics.type_params_mut() {
        param
            .bounds
            .push(syn::parse_quote!(::rusting_engine::state::SimState));
    }
    let (impl_generics, type_generics, where_clause) = generics.split_for_impl();
    Ok(quote! {
        impl #impl_generics ::rusting_engine::state::SimState for #ident #type_generics
        #where_clause
        {
            const NAME: &'static str = #name;

            #[allow(unused_variables, non_shorthand_field_patterns)]
            #[inline]
            fn hash_state(&self, hasher: &mut ::rusting_engine::state::StateHasher) {
                #hash_body
            }

            #[allow(unused_variables, non_shorthand_field_patterns)]
            fn visit_fields(
                &self,
                path: &str,
                out: &mut dyn ::core::ops::FnMut(&str, ::std::string::String),
            ) {
                #visit_body
            }

            #[allow(unused_variables)]
            fn layout(
                path: &str,
                out: &mut dyn ::core::ops::FnMut(&str, &'static str, usize),
            ) {
                #layout_body
            }
        }
    })
}
