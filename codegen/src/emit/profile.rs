//! Emits `profile.rs`: the schema set as a runtime profile. A unit type `Profile` implements
//! `agh_runtime::profile::Profile` with the set's tables (`SPEC`: kinds, roles, limits,
//! exchanges, refusal codes) and the generated envelope scanner, validator and types, so that the
//! runtime's generic parser (`agh_runtime::profile::parse`) and correlation tracker work for the
//! set without a line of hand-written Rust.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::Model;

/// The tokens of `profile.rs`.
pub fn emit_profile(model: &Model) -> TokenStream {
    let rt = &crate::emit::paths::runtime();
    let env = &model.envelope;
    let name = env.profile.clone().unwrap_or_default();
    let opt = |v: Option<&str>| match v {
        Some(v) => quote!(Some(#v)),
        None => quote!(None),
    };
    let profile_member = opt(env.profile_member.as_deref());
    let profile_value = env
        .profile_member
        .as_deref()
        .and_then(|m| env.member(m))
        .and_then(|f| model.resolve(&f.shape).constraints.const_value.as_ref())
        .map(|v| v.to_string());
    let profile_value = opt(profile_value.as_deref());
    let (kind_member, body_member) = (&env.kind_member, &env.body_member);
    let (surface_member, containers) = match &model.containers {
        Some(c) => {
            let m = &c.member;
            (quote!(Some(#m)), quote!(super::rules::CONTAINERS))
        }
        None => (quote!(None), quote!(&[])),
    };
    let exchanges = if model.kinds.iter().any(|k| k.exchange.is_some()) {
        quote!(super::rules::EXCHANGES)
    } else {
        quote!(&[])
    };
    let answers_any = if model.kinds.iter().any(|k| k.answers_any) {
        quote!(super::rules::ANSWERS_ANY)
    } else {
        quote!(&[])
    };
    let refusal_codes = if model.refusal_codes.is_some() {
        quote!(super::rules::REFUSAL_CODES)
    } else {
        quote!(&[])
    };
    let binding = emit_binding(model);
    let envelope_ty = format_ident!("{}", env.type_name);
    let envelope_ref = format_ident!("{}Ref", env.type_name);
    let check = crate::emit::checks::check_fn(&env.type_name);
    let body_field = env
        .member(body_member)
        .map(|f| (format_ident!("{}", f.rust_name), f))
        .map(|(ident, f)| {
            if crate::emit::envelope_ref::member_optional(model, f) {
                quote!(envelope.#ident)
            } else {
                quote!(Some(envelope.#ident))
            }
        })
        .unwrap_or_else(|| quote!(None));
    // The same member read from an owned message's spans, without rebuilding its view.
    let body_span = env
        .member(body_member)
        .map(|f| {
            let ident = format_ident!("{}", f.rust_name);
            if crate::emit::envelope_ref::member_optional(model, f) {
                quote!(spans.#ident.as_ref().map(|v| v.get(text)))
            } else {
                quote!(Some(spans.#ident.get(text)))
            }
        })
        .unwrap_or_else(|| quote!(None));
    // A closed envelope: from the scanned view; an open one: from the checked text (its unknown
    // members are not in the view).
    let (view, text, to_envelope) = match env.open {
        true => (
            quote!(_view),
            quote!(text),
            quote!(super::types::#envelope_ty::decode_open(text)),
        ),
        false => (quote!(view), quote!(_text), quote!(view.to_envelope())),
    };
    let spans = crate::emit::envelope_ref::emit_spans(model);
    let doc = format!(
        " The `{name}` profile: this schema set as the runtime sees it (`agh_runtime::profile`)."
    );
    quote! {
        //! The schema set as a runtime profile: its tables and the generated code the runtime's
        //! generic parser and correlation tracker call.
        use #rt::problem::Problems;
        use #rt::profile as p;
        use #rt::scan::{RawJson, Scanner};
        use serde_json::Value;

        #[doc = #doc]
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct Profile;

        /// Everything the runtime reads of this schema set.
        pub const SPEC: p::Spec<super::checks::KnownBody> = p::Spec {
            name: #name,
            profile_member: #profile_member,
            profile_value: #profile_value,
            layout: p::Layout {
                kind_member: #kind_member,
                body_member: #body_member,
                roles: super::rules::ROLES,
                surface_member: #surface_member,
                containers: #containers,
            },
            kinds: super::rules::KINDS,
            forbidden_kinds: super::rules::FORBIDDEN_KINDS,
            max_bytes: super::rules::MAX_ENVELOPE_BYTES,
            max_depth: super::rules::MAX_DEPTH,
            replay_age_secs: super::rules::DEFAULT_REPLAY_AGE_SECS,
            exchanges: #exchanges,
            answers_any: #answers_any,
            refusal_codes: #refusal_codes,
            binding: #binding,
        };

        impl p::Profile for Profile {
            type Envelope = super::types::#envelope_ty;
            type EnvelopeRef<'a> = super::scan::#envelope_ref<'a>;
            type Spans = EnvelopeSpans;
            type Body = super::checks::KnownBody;
            type BodyRef<'a> = super::view::BodyRef<'a>;
            type Extra = ();
            const SPEC: p::Spec<Self::Body> = SPEC;

            fn scan_envelope<'a>(
                s: &mut Scanner<'a>,
                body: &mut dyn FnMut(&mut Scanner<'a>, Option<&str>) -> Option<()>,
            ) -> Option<Self::EnvelopeRef<'a>> {
                super::scan::scan_envelope(s, body)
            }

            fn check_envelope(v: &Value, at: &mut String, out: &mut Problems) {
                super::checks::#check(v, at, out)
            }

            #[inline]
            fn spans_of(view: &Self::EnvelopeRef<'_>, text: &str) -> EnvelopeSpans {
                EnvelopeSpans::of(view, text)
            }

            #[inline]
            fn view_of<'s>(spans: &'s EnvelopeSpans, text: &'s str) -> Self::EnvelopeRef<'s> {
                spans.view(text)
            }

            #[inline]
            fn str_of<'s>(spans: &'s EnvelopeSpans, text: &'s str, name: &str) -> Option<&'s str> {
                spans.str_of(text, name)
            }

            fn body_of<'a>(envelope: &Self::EnvelopeRef<'a>) -> Option<RawJson<'a>> {
                #body_field
            }

            #[inline]
            fn body_json_of<'s>(spans: &'s EnvelopeSpans, text: &'s str) -> Option<RawJson<'s>> {
                #body_span
            }

            #[inline]
            fn body_ref<'a>(kind: &str, body: RawJson<'a>) -> Self::BodyRef<'a> {
                super::view::BodyRef::of(kind, body)
            }

            fn to_envelope(
                #view: &Self::EnvelopeRef<'_>,
                #text: &str,
            ) -> Result<Self::Envelope, String> {
                #to_envelope
            }
        }

        #spans
    }
}

/// `Spec::binding`: the set's `x-agh-binding` as runtime tables.
fn emit_binding(model: &Model) -> TokenStream {
    use crate::model::{SubjectSegment, SubjectTemplate};
    let rt = &crate::emit::paths::runtime();
    let Some(b) = &model.binding else {
        return quote!(None);
    };
    let subject = |t: &SubjectTemplate| {
        let template = &t.template;
        let segments = t.segments.iter().map(|s| match s {
            SubjectSegment::Text(text) => quote!(#rt::binding::Segment::Text(#text)),
            SubjectSegment::Member { member, recipe } => {
                let recipe = match recipe {
                    Some(r) => quote!(Some(#r)),
                    None => quote!(None),
                };
                quote!(#rt::binding::Segment::Member { member: #member, recipe: #recipe })
            }
        });
        quote!(#rt::binding::Subject { template: #template, segments: &[#(#segments),*] })
    };
    let transport = &b.transport;
    let direct = subject(&b.direct);
    let broadcast = match &b.broadcast {
        Some(t) => {
            let t = subject(t);
            quote!(Some(#t))
        }
        None => quote!(None),
    };
    let request_reply = &b.request_reply;
    quote!(Some(#rt::binding::Binding {
        transport: #transport,
        direct: #direct,
        broadcast: #broadcast,
        request_reply: &[#(#request_reply),*],
    }))
}
