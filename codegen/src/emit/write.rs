//! The writers (`write.rs`): an envelope's bytes put together directly from typed parts, no JSON
//! tree (issue 34). One `EnvelopeParts<'a>` from the envelope's members (borrowed strings,
//! integers, open members as `Value`s) whose `write` puts the members in schema order, the
//! profile member's constant, `kind`, the body through its `Serialize`, and the members marked
//! `x-agh-serialize-null` as `null` when absent; then, per kind, `write_<kind>` over the kind's
//! body type (the kind is the body type's, by construction) and `KnownBody::write_envelope`. What
//! the writer cannot guarantee (grammars, the kind's envelope rules) the parser checks on the
//! written bytes: the caller runs them through `parse_ref`.

use heck::ToSnakeCase;
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::checks::variant;
use super::envelope_ref::{member_repr, MemberRepr};
use super::paths::runtime;
use crate::error::{Error, Result};
use crate::model::{Field, Model};

/// `,"name":` followed by `then`, as a byte-string literal (the name escaped as JSON).
fn key(name: &str, then: &str) -> Result<Literal> {
    let json = serde_json::to_string(name)
        .map_err(|e| Error::new("write.rs", "", format!("member name {name:?}: {e}")))?;
    Ok(Literal::byte_string(format!(",{json}:{then}").as_bytes()))
}

/// The string `const` of the profile member, as JSON text: the writer writes it as it stands.
fn profile_const(model: &Model, f: &Field) -> Option<String> {
    let env = &model.envelope;
    if env.profile_member.as_deref() != Some(f.json_name.as_str()) {
        return None;
    }
    let value = model.resolve(&f.shape).constraints.const_value.as_ref()?;
    value.is_string().then(|| value.to_string())
}

/// The writer file of a model.
pub fn emit_write(model: &Model) -> Result<TokenStream> {
    let rt = runtime();
    let env = &model.envelope;
    let mut fields = TokenStream::new();
    let mut writes = TokenStream::new();
    let mut str_arms = TokenStream::new();
    let mut int_arms = TokenStream::new();
    let mut raw_arms = TokenStream::new();
    for f in &env.members {
        let name = &f.json_name;
        let field = format_ident!("{}", f.rust_name);
        let k = key(name, "")?;
        let null = if f.serialize_null {
            let text = key(name, "null")?;
            quote!(None => out.extend_from_slice(#text),)
        } else {
            quote!(None => {})
        };
        let doc = format!(" `{name}`: {}", f.description);
        if name == &env.kind_member {
            writes.extend(quote! {
                out.extend_from_slice(#k);
                w::string(out, kind);
            });
            continue;
        }
        if let Some(text) = profile_const(model, f) {
            let text = key(name, &text)?;
            writes.extend(quote!(out.extend_from_slice(#text);));
            continue;
        }
        match member_repr(model, f) {
            MemberRepr::Body => {
                writes.extend(quote! {
                    match body {
                        Some(b) => {
                            out.extend_from_slice(#k);
                            w::value(out, b)?;
                        }
                        #null
                    }
                });
                continue;
            }
            MemberRepr::Str => {
                fields.extend(quote!(#[doc = #doc] pub #field: Option<&'a str>,));
                str_arms.extend(quote!(#name => { self.#field = Some(value); true }));
                writes.extend(quote! {
                    match self.#field {
                        Some(v) => {
                            out.extend_from_slice(#k);
                            w::string(out, v);
                        }
                        #null
                    }
                });
            }
            repr @ (MemberRepr::U64 | MemberRepr::I128) => {
                let ty = if repr == MemberRepr::U64 {
                    quote!(i64)
                } else {
                    quote!(i128)
                };
                fields.extend(quote!(#[doc = #doc] pub #field: Option<#ty>,));
                int_arms.extend(quote!(#name => { self.#field = Some(value.into()); true }));
                writes.extend(quote! {
                    match self.#field {
                        Some(v) => {
                            out.extend_from_slice(#k);
                            w::integer(out, v);
                        }
                        #null
                    }
                });
            }
            MemberRepr::Raw => {
                fields.extend(quote!(#[doc = #doc] pub #field: Option<&'a ::serde_json::Value>,));
                raw_arms.extend(quote!(#name => { self.#field = Some(value); true }));
                writes.extend(quote! {
                    match self.#field {
                        Some(v) => {
                            out.extend_from_slice(#k);
                            w::value(out, v)?;
                        }
                        #null
                    }
                });
            }
        }
    }

    let mut kinds = TokenStream::new();
    let mut write_arms = Vec::new();
    for kind in &model.kinds {
        let f = format_ident!("write_{}", kind.name.to_snake_case());
        let body_type = format_ident!("{}", kind.body_type);
        let var = variant(kind);
        let doc = format!(
            " Writes a `{}` envelope with `parts` and `body` to `out` (see [`EnvelopeParts::write`]).",
            kind.name
        );
        let name = &kind.name;
        kinds.extend(quote! {
            #[doc = #doc]
            pub fn #f(
                parts: &EnvelopeParts<'_>,
                body: &super::types::#body_type,
                out: &mut Vec<u8>,
            ) -> Result<(), serde_json::Error> {
                parts.write(#name, Some(body), out)
            }
        });
        write_arms.push(quote!(KnownBody::#var(b) => #f(parts, b, out)));
    }
    let known = if model.kinds.is_empty() {
        quote!()
    } else {
        quote! {
            impl KnownBody {
                /// Writes the envelope of this body's kind with `parts` to `out` (the kind's
                /// `write_<kind>`).
                pub fn write_envelope(
                    &self,
                    parts: &EnvelopeParts<'_>,
                    out: &mut Vec<u8>,
                ) -> Result<(), serde_json::Error> {
                    match self { #(#write_arms,)* }
                }
            }
        }
    };
    let parts_doc = format!(
        " The members of an envelope (`{}`) that a writer takes: every member but the profile's constant, the kind and the body, which the writer writes itself. Strings are borrowed: putting an envelope together copies nothing but into its bytes.",
        env.type_name
    );
    Ok(quote! {
        use #rt::json::write as w;
        use super::checks::KnownBody;

        #[doc = #parts_doc]
        #[derive(Clone, Copy, Debug, Default)]
        pub struct EnvelopeParts<'a> {
            #fields
        }

        impl<'a> EnvelopeParts<'a> {
            /// Sets the string member `name` (its JSON name); `false` when there is none.
            pub fn set_str(&mut self, name: &str, value: &'a str) -> bool {
                // A set without such members reads no value.
                let _ = &value;
                match name {
                    #str_arms
                    _ => false,
                }
            }

            /// Sets the integer member `name`; `false` when there is none.
            pub fn set_integer(&mut self, name: &str, value: i64) -> bool {
                // A set without such members reads no value.
                let _ = &value;
                match name {
                    #int_arms
                    _ => false,
                }
            }

            /// Sets the open member `name` (an object or other JSON value); `false` when there
            /// is none.
            pub fn set_value(&mut self, name: &str, value: &'a ::serde_json::Value) -> bool {
                // A set without such members reads no value.
                let _ = &value;
                match name {
                    #raw_arms
                    _ => false,
                }
            }

            /// Appends the envelope of kind `kind` with `body` to `out` as compact JSON: the
            /// members in schema order (an absent member is left out, or written `null` where
            /// the schema says a sender writes it so), strings escaped exactly, the body through
            /// its `Serialize` (no tree). Valid by construction: the JSON, the order, the
            /// profile's constant; the rest is the parser's to check on these bytes.
            pub fn write<T: ::serde::Serialize + ?Sized>(
                &self,
                kind: &str,
                body: Option<&T>,
                out: &mut Vec<u8>,
            ) -> Result<(), serde_json::Error> {
                let start = out.len();
                #writes
                // Every member was written with a leading comma: the first becomes the brace.
                if out.len() == start {
                    out.push(b'{');
                } else {
                    out[start] = b'{';
                }
                out.push(b'}');
                Ok(())
            }
        }

        #kinds

        #known
    })
}
