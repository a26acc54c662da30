//! How the borrowed envelope view (`EnvelopeRef`, emitted by `scan.rs`) holds each envelope
//! member: one decision that the scanner filling it and the owned conversion in `rust.rs` share.

use crate::model::{Field, JsonType, Model};

/// How the borrowed envelope view (`EnvelopeRef`) holds a member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum MemberRepr {
    /// The body member: its checked JSON text.
    Body,
    /// A string: `Cow<'a, str>`.
    Str,
    /// An integer with a non-negative minimum: `u64`.
    U64,
    /// Any other integer: `i128`.
    I128,
    /// Anything else: its checked JSON text.
    Raw,
}

/// How `EnvelopeRef` holds envelope member `f` (the scanner and the owned conversion agree
/// through this one decision).
pub(crate) fn member_repr(model: &Model, f: &Field) -> MemberRepr {
    let env = &model.envelope;
    let resolved = model.resolve(&f.shape);
    if f.json_name == env.body_member {
        MemberRepr::Body
    } else if f.json_name == env.kind_member
        || resolved.types == [JsonType::String] && resolved.object.is_none()
    {
        MemberRepr::Str
    } else if resolved.types == [JsonType::Integer] {
        if resolved
            .constraints
            .minimum
            .as_deref()
            .is_some_and(|m| !m.starts_with('-') || m.bytes().all(|b| !(b'1'..=b'9').contains(&b)))
        {
            MemberRepr::U64
        } else {
            MemberRepr::I128
        }
    } else {
        MemberRepr::Raw
    }
}

/// Whether `EnvelopeRef` holds envelope member `f` as an `Option` (not required, or nullable).
pub(crate) fn member_optional(model: &Model, f: &Field) -> bool {
    !f.required || f.shape.nullable || model.resolve(&f.shape).nullable
}

/// `EnvelopeSpans` (in `profile.rs`): where each member of a checked `EnvelopeRef` stands in the
/// envelope text, so that an owned message rebuilds the view from its bytes without scanning them
/// again (`Profile::spans_of` / `Profile::view_of`); one field per envelope member, as the view,
/// 8 bytes a string or raw member (`StrSpan`, `RawSpan`), and the decoded values of the strings
/// that had escapes in one buffer beside them (empty, not allocated, for most envelopes): the
/// owned message stays small to move.
pub(crate) fn emit_spans(model: &Model) -> proc_macro2::TokenStream {
    use quote::{format_ident, quote};
    let rt = &crate::emit::paths::runtime();
    let env = &model.envelope;
    let ref_ty = format_ident!("{}Ref", env.type_name);
    let (mut fields, mut ofs, mut views, mut idents) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut strs, mut accessors) = (Vec::new(), Vec::new());
    for f in &env.members {
        let ident = format_ident!("{}", f.rust_name);
        let (ty, of, view) = match member_repr(model, f) {
            MemberRepr::Str => (
                quote!(#rt::profile::spans::StrSpan),
                quote!(#rt::profile::spans::StrSpan::of(text, v, &mut decoded)),
                quote!(v.get(text, &self.__decoded)),
            ),
            MemberRepr::Body | MemberRepr::Raw => (
                quote!(#rt::profile::spans::RawSpan),
                quote!(#rt::profile::spans::RawSpan::of(text, *v)),
                quote!(v.get(text)),
            ),
            MemberRepr::U64 => (quote!(u64), quote!(*v), quote!(*v)),
            MemberRepr::I128 => (quote!(i128), quote!(*v), quote!(*v)),
        };
        let doc = format!(" `{}`.", f.json_name);
        let name = &f.json_name;
        let optional = member_optional(model, f);
        if member_repr(model, f) == MemberRepr::Str {
            let doc =
                format!(" The `{name}` member over `text`, the text the spans were recorded over.");
            accessors.push(match optional {
                true => quote! {
                    #[doc = #doc]
                    #[inline(always)]
                    pub fn #ident<'s>(&'s self, text: &'s str) -> Option<&'s str> {
                        self.#ident.as_ref().map(|v| v.str(text, &self.__decoded))
                    }
                },
                false => quote! {
                    #[doc = #doc]
                    #[inline(always)]
                    pub fn #ident<'s>(&'s self, text: &'s str) -> &'s str {
                        self.#ident.str(text, &self.__decoded)
                    }
                },
            });
            strs.push(match optional {
                true => quote!(#name => self.#ident(text),),
                false => quote!(#name => Some(self.#ident(text)),),
            });
        }
        if optional {
            fields.push(quote!(#[doc = #doc] pub #ident: Option<#ty>,));
            ofs.push(quote!(let #ident = view.#ident.as_ref().map(|v| #of);));
            views.push(quote!(#ident: self.#ident.as_ref().map(|v| #view),));
        } else {
            fields.push(quote!(#[doc = #doc] pub #ident: #ty,));
            ofs.push(quote!(let #ident = { let v = &view.#ident; #of };));
            views.push(quote!(#ident: { let v = &self.#ident; #view },));
        }
        idents.push(ident);
    }
    quote! {
        /// Where each member of a checked envelope stands in its text (strings with escapes: their
        /// value, in one buffer): what an owned message keeps to give out the borrowed view again
        /// without reading its bytes a second time.
        #[derive(Clone, Debug, PartialEq)]
        pub struct EnvelopeSpans {
            #(#fields)*
            /// The decoded values of the strings that had escapes, one after the other.
            pub __decoded: Box<str>,
        }

        impl EnvelopeSpans {
            /// The spans of `view`, a view the scanner read from `text`.
            pub fn of(view: &super::scan::#ref_ty<'_>, text: &str) -> Self {
                let mut decoded = String::new();
                #(#ofs)*
                EnvelopeSpans { #(#idents,)* __decoded: decoded.into_boxed_str() }
            }

            /// The string member `name` over `text` (`None`: absent, `null` or no string), for a
            /// name known only at run time (a member a schema names); code that knows the member
            /// calls its accessor (`spans.to(text)`). Always inlined: where `name` is a constant
            /// the match folds to the member's span.
            #[inline(always)]
            pub fn str_of<'s>(&'s self, text: &'s str, name: &str) -> Option<&'s str> {
                match name {
                    #(#strs)*
                    _ => None,
                }
            }

            /// The view again, over `text`: the text the spans were recorded over.
            pub fn view<'s>(&'s self, text: &'s str) -> super::scan::#ref_ty<'s> {
                super::scan::#ref_ty { #(#views)* }
            }

            #(#accessors)*
        }
    }
}

/// The v0 profile's typed accessors on `agh_protocol::Message` (emitted into the reference set's
/// `profile.rs`, an `impl crate::Message` block, `paths::protocol_message`): one per string member of the envelope
/// but the kind member (`Message::kind`, the parser's `&'static str`), each reading its recorded
/// span through the `EnvelopeSpans` accessor of the same name (`&str` for a required member,
/// `Option<&str>` for an optional or nullable one).
pub(crate) fn emit_message_accessors(model: &Model) -> proc_macro2::TokenStream {
    use quote::{format_ident, quote};
    let env = &model.envelope;
    let accessors = env
        .members
        .iter()
        .filter(|f| member_repr(model, f) == MemberRepr::Str && f.json_name != env.kind_member)
        .map(|f| {
            let ident = format_ident!("{}", f.rust_name);
            let ty = match member_optional(model, f) {
                true => quote!(Option<&str>),
                false => quote!(&str),
            };
            let doc = format!(
                " The envelope `{}`, read from its recorded span.",
                f.json_name
            );
            quote! {
                #[doc = #doc]
                #[inline]
                pub fn #ident(&self) -> #ty {
                    self.inner.spans().#ident(self.inner.text())
                }
            }
        });
    let message = crate::emit::paths::protocol_message();
    quote! {
        /// The envelope's string members, one accessor each (generated from the envelope schema).
        impl #message {
            #(#accessors)*
        }
    }
}
