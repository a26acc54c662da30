//! The validators of the applicators (`allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`,
//! `dependentSchemas`, `$ref` beside other keywords): conjuncts report their own problems, a
//! union that fails says which shapes failed and why.

use proc_macro2::TokenStream;
use quote::quote;

use super::{label, Emitter};
use crate::error::Result;
use crate::model::Shape;

impl Emitter<'_> {
    /// An expression that checks `v` against `shape` into a scratch list and yields its first
    /// problem (`None`: `v` matches), at `v`'s own pointer.
    pub(super) fn trial(&mut self, shape: &Shape, rule: &str, depth: usize) -> Result<TokenStream> {
        let inner = self.shape(shape, rule, false, depth + 1)?;
        let inner = if inner.is_empty() {
            quote!(let _ = (&out, &at);)
        } else {
            inner
        };
        let inner_label = label(depth + 1);
        Ok(quote! {{
            let mut scratch = Problems::first_only();
            let mut here = at.clone();
            {
                let out = &mut scratch;
                let at = &mut here;
                #inner_label: { #inner }
            }
            scratch.into_vec().into_iter().next()
        }})
    }

    /// Checks of `v` against the subschemas `shape` combines (`$ref` beside other keywords,
    /// `allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`, `dependentSchemas`): conjuncts report
    /// their own problems; a failed union says which shapes failed and why.
    pub(super) fn applicators(
        &mut self,
        shape: &Shape,
        rule: &str,
        depth: usize,
    ) -> Result<TokenStream> {
        let a = &shape.applicators;
        let mut body = TokenStream::new();
        let malformed = self.reason(None, rule)?;
        let (label, inner_label) = (label(depth), label(depth + 1));
        let mut conjuncts: Vec<(String, &Shape)> = Vec::new();
        if let Some(target) = &a.reference {
            conjuncts.push((format!("{rule}/$ref"), target));
        }
        for (i, s) in a.conjuncts() {
            conjuncts.push((format!("{rule}/allOf/{i}"), s));
        }
        for (r, s) in conjuncts {
            let inner = self.shape(s, &r, false, depth + 1)?;
            body.extend(quote! {
                #inner_label: { #inner }
                if out.is_done() { break #label; }
            });
        }
        for (key, union) in [("anyOf", &a.any_of), ("oneOf", &a.one_of)] {
            if union.is_empty() {
                continue;
            }
            let rule = format!("{rule}/{key}");
            let mut trials = Vec::new();
            for (i, s) in union.iter().enumerate() {
                trials.push(self.trial(s, &format!("{rule}/{i}"), depth)?);
            }
            let several = if key == "oneOf" {
                quote! {
                    if matched.len() > 1 {
                        c::several_branches(out, #malformed, at, #rule, &matched, v);
                        break #label;
                    }
                }
            } else {
                quote!()
            };
            body.extend(quote! {
                let failures = [#(#trials),*];
                let matched: Vec<usize> = (0..failures.len()).filter(|i| failures[*i].is_none()).collect();
                if matched.is_empty() {
                    c::no_branch(out, #malformed, at, #rule, &failures, v);
                    break #label;
                }
                #several
            });
        }
        if let Some(cond) = &a.conditional {
            let hit = self.trial(&cond.condition, &format!("{rule}/if"), depth)?;
            let mut branch = |s: &Option<Shape>, key: &str| -> Result<TokenStream> {
                Ok(match s {
                    Some(s) => {
                        let inner = self.shape(s, &format!("{rule}/{key}"), false, depth + 1)?;
                        quote!(#inner_label: { #inner } if out.is_done() { break #label; })
                    }
                    None => quote!(),
                })
            };
            let then = branch(&cond.then, "then")?;
            let otherwise = branch(&cond.otherwise, "else")?;
            body.extend(quote! {
                let hit = #hit.is_none();
                if hit { #then } else { #otherwise }
            });
        }
        for (name, s) in &a.dependent {
            let r = format!(
                "{rule}/dependentSchemas/{}",
                crate::error::escape_token(name)
            );
            let inner = self.shape(s, &r, false, depth + 1)?;
            body.extend(quote! {
                if v.as_object().is_some_and(|m| m.contains_key(#name)) {
                    #inner_label: { #inner }
                    if out.is_done() { break #label; }
                }
            });
        }
        Ok(body)
    }
}
