//! The kinds' body scanners: each kind's body type scanner plus its conditional rules (the
//! restricted `if`/`then` rules recognized on the body's `allOf`), returning the envelope rules
//! they override and the members the cross checks read.

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use serde_json::Value;

use super::fields::fields_fn;
use super::{
    body_scan_fn, first_token, plain_object, raw_type_test, scan_fn, value_eq, Emitter, KEPT_MAX,
};
use crate::error::{Error, Result};
use crate::model::{Conditional, JsonType};

impl Emitter<'_> {
    pub(super) fn conditional(&self, cond: &Conditional, names: &[String]) -> TokenStream {
        let slot = |name: &str| {
            let i = names.iter().position(|n| n == name).unwrap_or_default();
            format_ident!("m{i}")
        };
        let when = slot(&cond.when.member);
        // String values are compared with the member's string, decoded once.
        let eqs: Vec<TokenStream> = cond
            .when
            .values
            .iter()
            .map(|value| match value {
                Value::String(s) => quote!(text.as_deref() == Some(#s)),
                other => {
                    let eq = value_eq(other);
                    quote!({ let v = v.to_value(); #eq })
                }
            })
            .collect();
        let mut then = TokenStream::new();
        for r in &cond.required {
            let m = slot(r);
            then.extend(quote!(if #m.is_none_or(|v| v.is_null()) { return None; }));
        }
        for r in &cond.absent {
            let m = slot(r);
            then.extend(quote!(if #m.is_some_and(|v| !v.is_null()) { return None; }));
        }
        for (r, t) in &cond.typed {
            let m = slot(r);
            let test = if *t == JsonType::Integer && crate::emit::stance::big(self.model, None) {
                self.big.set(true);
                quote!(raw_is_big_integer(v.get()))
            } else {
                raw_type_test(*t)
            };
            then.extend(quote! {
                if let Some(v) = #m {
                    if !v.is_null() && !(#test) { return None; }
                }
            });
        }
        then.extend(crate::emit::checks::overrides(&cond.envelope));
        quote! {
            if #when.is_some_and(|v| { let text = v.as_str(); #(#eqs)||* }) { #then }
        }
    }

    pub(super) fn kinds(&self) -> Result<TokenStream> {
        let mut out = TokenStream::new();
        for kind in &self.model.kinds {
            let f = body_scan_fn(kind);
            let ty = scan_fn(&kind.body_type);
            let doc = format!(
                " Reads the body of a `{}` envelope: `{}` and the kind's conditional rules. Returns the envelope rules those conditions override and the top-level members the conditions and cross checks read; `None` declines.",
                kind.name, kind.body_type
            );
            // The members to keep: those the conditions read, and the first member of each
            // pointer the cross checks (`envelope_match`, `verify`) follow.
            let mut names: Vec<String> = Vec::new();
            let mut keep = |n: &str| {
                if !n.is_empty() && !names.iter().any(|x| x == n) {
                    names.push(n.to_owned());
                }
            };
            for cond in &kind.conditionals {
                keep(&cond.when.member);
                cond.required.iter().for_each(|n| keep(n));
                cond.absent.iter().for_each(|n| keep(n));
                cond.typed.iter().for_each(|(n, _)| keep(n));
            }
            let pointers = kind.rules.envelope_match.iter().map(|m| &m.body);
            for p in pointers.chain(kind.rules.verify.iter().map(|v| &v.body)) {
                keep(&first_token(p).0);
            }
            if names.len() > KEPT_MAX {
                return Err(Error::new(
                    &kind.body_file,
                    "",
                    format!(
                        "the `{}` checks read more than {KEPT_MAX} body members",
                        kind.name
                    ),
                ));
            }
            // The kept members are written to `kept` (unused when there are none).
            let kept = format_ident!("{}", if names.is_empty() { "_kept" } else { "kept" });
            let body = if names.is_empty() {
                quote! {
                    #ty(s)?;
                    Some(BodyOverrides::default())
                }
            } else {
                let slots: Vec<_> = (0..names.len()).map(|i| format_ident!("m{i}")).collect();
                let conds: Vec<TokenStream> = kind
                    .conditionals
                    .iter()
                    .map(|c| self.conditional(c, &names))
                    .collect();
                // A plain object type that declares every member to keep: keep them while
                // reading the body; otherwise find them in it afterwards.
                let shape = self
                    .model
                    .named(&kind.body_type)
                    .and_then(|t| plain_object(&t.shape))
                    .filter(|o| {
                        names
                            .iter()
                            .all(|n| o.fields.iter().any(|f| f.json_name == *n))
                    });
                // The declared members of the object a `verify` recipe reads, kept by its fields
                // scanner while the body is read.
                let mut reads = BTreeMap::new();
                if let (Some((pointer, field, t)), Some(_)) = (self.verify_fields(kind), shape) {
                    let f = fields_fn(&t.rust_name);
                    let read = quote!(#f(s, kept.fields_for(#pointer))?;);
                    let read = if field.shape.nullable {
                        quote!(if !s.null() { #read })
                    } else {
                        read
                    };
                    reads.insert(field.json_name.clone(), read);
                }
                let read = match shape {
                    Some(obj) => {
                        let read = self.object_capturing(obj, &names, "m", &reads)?;
                        quote! {
                            #(let mut #slots: Option<RawJson<'a>> = None;)*
                            #read
                        }
                    }
                    None => quote! {
                        let start = s.mark();
                        #ty(s)?;
                        let [#(#slots),*] = scan::members(s.since(start), [#(#names),*]);
                    },
                };
                quote! {
                    #read
                    let mut overrides = BodyOverrides::default();
                    #(#conds)*
                    kept.keep(&[#(#names),*], [#(#slots),*]);
                    Some(overrides)
                }
            };
            out.extend(quote! {
                #[doc = #doc]
                pub fn #f<'a>(s: &mut Scanner<'a>, #kept: &mut Kept<'a>) -> Option<BodyOverrides> {
                    #body
                }
            });
        }
        Ok(out)
    }
}
