//! `#[derive(Body)]`: attaches AGH Network kind rules to a body type.
//!
//! The derive reads one or more `#[agh(...)]` attributes on the type and implements
//! `agh_protocol::Body` with the matching `KindRules`. Every key, its values and its default are
//! listed in the documentation of [`macro@Body`].

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::quote;
use syn::{parse_macro_input, Data, DeriveInput, Error, Result};

mod attr;
mod generated;
#[cfg(test)]
mod tests;

use attr::{Errors, Presence, Rules};

/// Derives `agh_protocol::Body` from `#[agh(...)]` attributes on a struct or an enum.
///
/// ```text
/// #[derive(serde::Serialize, serde::Deserialize, agh_protocol::Body)]
/// #[agh(kind = "whois", surface = forbidden, work_id = forbidden,
///       envelope_match(body = "/peer_card/peer_id", envelope = "from"))]
/// pub struct WhoisBody { /* ... */ }
/// ```
///
/// | key | values | default |
/// | --- | --- | --- |
/// | `kind` | string, `^[a-z][a-z0-9_.-]*$`, not `direct` | required |
/// | `profile` | string without white space | `"agh-network/v0"` |
/// | `surface` | `required`, `forbidden` | `required` |
/// | `work_id` | `required`, `optional`, `forbidden` | `optional` |
/// | `to`, `reply_to` | `required`, `recommended`, `optional`, `forbidden` | `optional` |
/// | `body` | `required`, `optional` (the kind may carry no body) | `required` |
/// | `work` | `none`, `opens`, `updates` | `none` |
/// | `envelope_match(body = "/ptr", envelope = "member")` | repeatable | none |
/// | `verify(body = "/ptr", recipe = "name", reason_code = "code")` | repeatable | none |
/// | `crate` | path to the `agh_protocol` crate, as a string | `"::agh_protocol"` |
///
/// Several `#[agh(...)]` attributes merge; giving a key twice is an error. Contradictory rules are
/// refused: `surface = forbidden` needs `work_id = forbidden` (work lives in a conversation
/// container), `work = opens | updates` needs a `work_id`, `work = updates` needs
/// `work_id = required`, and `envelope_match` may not name a member the rules forbid.
///
/// Generic types are supported: the implementation carries the type's generics and where-clause
/// and adds `Self: Serialize + DeserializeOwned`. Unions are refused.
#[proc_macro_derive(Body, attributes(agh))]
pub fn derive_body(input: TokenStream) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    expand(input)
        .unwrap_or_else(Error::into_compile_error)
        .into()
}

/// Expands the derive: checks the item and its attributes, then emits the `Body` implementation.
fn expand(mut input: DeriveInput) -> Result<TokenStream2> {
    let mut errors = Errors::default();
    check_item(&input, &mut errors);
    let rules = attr::parse(&input.attrs, errors)?;

    let krate = &rules.krate;
    if !input.generics.params.is_empty() {
        input
            .generics
            .make_where_clause()
            .predicates
            .push(syn::parse_quote!(
                Self: #krate::__private::serde::Serialize
                    + #krate::__private::serde::de::DeserializeOwned
            ));
    }
    let ident = &input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let rules = rules_tokens(&rules);
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #krate::kind::Body for #ident #ty_generics #where_clause {
            const RULES: #krate::kind::KindRules = #rules;
        }
    })
}

/// Refuses unions and `#[agh]` on fields or variants (it belongs on the type).
fn check_item(input: &DeriveInput, errors: &mut Errors) {
    let misplaced = |attrs: &[syn::Attribute], errors: &mut Errors, place: &str| {
        for attr in attrs.iter().filter(|a| a.path().is_ident("agh")) {
            errors.push(Error::new_spanned(
                attr,
                format!("#[agh(...)] belongs on the type, not on {place}"),
            ));
        }
    };
    match &input.data {
        Data::Struct(data) => {
            for field in &data.fields {
                misplaced(&field.attrs, errors, "a field");
            }
        }
        Data::Enum(data) => {
            for variant in &data.variants {
                misplaced(&variant.attrs, errors, "a variant");
                for field in &variant.fields {
                    misplaced(&field.attrs, errors, "a field");
                }
            }
        }
        Data::Union(data) => errors.push(Error::new_spanned(
            data.union_token,
            "#[derive(Body)] supports structs and enums, not unions",
        )),
    }
}

/// The `KindRules { ... }` expression.
fn rules_tokens(rules: &Rules) -> TokenStream2 {
    let krate = &rules.krate;
    let presence = |p: Presence| {
        let variant = syn::Ident::new(p.variant(), proc_macro2::Span::call_site());
        quote!(#krate::kind::Presence::#variant)
    };
    let work = syn::Ident::new(rules.work.variant(), proc_macro2::Span::call_site());
    let work = quote!(#krate::kind::WorkRole::#work);
    let (kind, profile) = (&rules.kind, &rules.profile);
    let (surface, work_id) = (presence(rules.surface), presence(rules.work_id));
    let (to, reply_to) = (presence(rules.to), presence(rules.reply_to));
    let body = presence(rules.body);
    let matches = rules.envelope_match.iter().map(|m| {
        let (body, envelope) = (&m.body, &m.envelope);
        quote!(#krate::kind::EnvelopeMatch { body: #body, envelope: #envelope })
    });
    let verify = rules.verify.iter().map(|v| {
        let (body, recipe, reason_code) = (&v.body, &v.recipe, &v.reason_code);
        quote!(#krate::kind::Verify { body: #body, recipe: #recipe, reason_code: #reason_code })
    });
    quote! {
        #krate::kind::KindRules {
            kind: #kind,
            profile: #profile,
            surface: #surface,
            work_id: #work_id,
            to: #to,
            reply_to: #reply_to,
            body: #body,
            work: #work,
            envelope_match: &[#(#matches),*],
            verify: &[#(#verify),*],
        }
    }
}
