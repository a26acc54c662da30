//! Emits `rules.rs`: reason codes, envelope limits, kind rules, containers, value descriptions and
//! the lifecycle, as `pub const` data built from the model.

use heck::{ToShoutySnakeCase, ToUpperCamelCase};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use crate::model::{EnumValue, KnownValues, Model, Sender};

fn value_docs(values: &[EnumValue]) -> TokenStream {
    let rt = &crate::emit::paths::runtime();
    let items = values.iter().map(|v| {
        let (value, description) = (&v.value, &v.description);
        quote! { #rt::model::ValueDoc { value: #value, description: #description } }
    });
    quote! { &[#(#items),*] }
}

/// A known-values enum (`x-agh-known-values`) with its spellings and meanings.
pub(crate) fn known_enum(k: &KnownValues) -> TokenStream {
    let name = format_ident!("{}", k.type_name);
    let doc = format!(
        " {} The known values (`x-agh-known-values`) in schema order.",
        k.description
    );
    let variants: Vec<_> = k
        .values
        .iter()
        .map(|v| format_ident!("{}", v.value.to_upper_camel_case()))
        .collect();
    let docs: Vec<String> = k
        .values
        .iter()
        .map(|v| format!(" `{}`: {}", v.value, v.description))
        .collect();
    let strs: Vec<&String> = k.values.iter().map(|v| &v.value).collect();
    let meanings: Vec<&String> = k.values.iter().map(|v| &v.description).collect();
    quote! {
        #[doc = #doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum #name {
            #( #[doc = #docs] #variants, )*
        }

        impl #name {
            /// Every value, in schema order.
            pub const ALL: &[#name] = &[#(#name::#variants),*];

            /// The wire spelling.
            pub const fn as_str(self) -> &'static str {
                match self {
                    #( #name::#variants => #strs, )*
                }
            }

            /// The value with this wire spelling, if it is a known one.
            pub fn parse(s: &str) -> Option<Self> {
                match s {
                    #( #strs => Some(#name::#variants), )*
                    _ => None,
                }
            }

            /// What the value means.
            pub const fn meaning(self) -> &'static str {
                match self {
                    #( #name::#variants => #meanings, )*
                }
            }
        }

        impl ::std::fmt::Display for #name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    }
}

/// The tokens of `rules.rs`.
pub fn emit_rules(model: &Model) -> TokenStream {
    emit_rules_with(model, false)
}

/// The tokens of `rules.rs`; with `runtime_owns_known_values` (the reference set), its
/// known-values enums are the runtime's (`runtime/src/generated`, [`crate::emit::runtime`]) and
/// re-exported here instead of defined.
pub fn emit_rules_with(model: &Model, runtime_owns_known_values: bool) -> TokenStream {
    let rt = &crate::emit::paths::runtime();
    let mut out = TokenStream::new();
    for k in &model.known_values {
        if runtime_owns_known_values {
            let name = format_ident!("{}", k.type_name);
            out.extend(quote! { pub use ::agh_runtime::generated::#name; });
        } else {
            out.extend(known_enum(k));
        }
    }

    let env = &model.envelope;
    let max_bytes = env.limits.max_bytes as usize;
    let replay = env.limits.replay_age_seconds;
    let (max_depth, depth_doc) = crate::emit::stance::max_depth(model);
    let forbidden = |list: &[crate::model::Forbidden]| {
        let items = list.iter().map(|f| {
            let (n, m) = (&f.name, &f.message);
            quote! { #rt::model::Forbidden { name: #n, message: #m } }
        });
        quote! { &[#(#items),*] }
    };
    let fm = forbidden(&env.limits.forbidden_members);
    let fk = forbidden(&env.limits.forbidden_kinds);
    let order = &env.limits.validation_order;
    let members: Vec<&String> = env.members.iter().map(|m| &m.json_name).collect();
    let required: Vec<&String> = env
        .members
        .iter()
        .filter(|m| m.required)
        .map(|m| &m.json_name)
        .collect();
    let (kind_member, body_member) = (&env.kind_member, &env.body_member);
    let trust = env.members.iter().flat_map(|m| {
        let member = &m.json_name;
        m.trust.iter().map(move |t| {
            let (profile, proof_type, recipe) = (&t.profile, &t.proof_type, &t.recipe);
            quote! {
                #rt::model::TrustProfile {
                    member: #member, profile: #profile, proof_type: #proof_type, recipe: #recipe,
                }
            }
        })
    });
    out.extend(quote! {
        /// The trust profiles whose proofs envelope members carry (`x-agh-trust`).
        pub const TRUST_PROFILES: &[#rt::model::TrustProfile] = &[#(#trust),*];
    });
    out.extend(quote! {
        /// Maximum serialized envelope size in bytes (`x-agh-envelope.max_bytes`).
        pub const MAX_ENVELOPE_BYTES: usize = #max_bytes;
        #[doc = #depth_doc]
        pub const MAX_DEPTH: usize = #max_depth;
        /// Default replay age in seconds when `expires_at` is absent (`x-agh-envelope.replay_age_seconds`).
        pub const DEFAULT_REPLAY_AGE_SECS: u64 = #replay;
        /// Envelope members rejected with a specific message.
        pub const FORBIDDEN_MEMBERS: &[#rt::model::Forbidden] = #fm;
        /// Kind names rejected with a specific message.
        pub const FORBIDDEN_KINDS: &[#rt::model::Forbidden] = #fk;
        /// The receiver validation order (docs).
        pub const VALIDATION_ORDER: &[&str] = &[#(#order),*];
        /// Every declared envelope member, in schema order.
        pub const ENVELOPE_MEMBERS: &[&str] = &[#(#members),*];
        /// The required envelope members, in schema order.
        pub const REQUIRED_ENVELOPE_MEMBERS: &[&str] = &[#(#required),*];
        /// The envelope member that selects the body schema.
        pub const KIND_MEMBER: &str = #kind_member;
        /// The envelope member that holds the body.
        pub const BODY_MEMBER: &str = #body_member;
    });
    if let Some(p) = &env.profile {
        out.extend(quote! {
            /// The protocol profile constant of the envelope.
            pub const PROFILE: &str = #p;
        });
    }
    if let Some(m) = &env.profile_member {
        out.extend(quote! {
            /// The envelope member whose constant names the profile (what tells this profile's
            /// envelopes from another's).
            pub const PROFILE_MEMBER: &str = #m;
        });
    }
    let roles = &env.roles;
    let role = |m: &Option<String>| match m {
        Some(m) => quote!(Some(#m)),
        None => quote!(None),
    };
    let (id, from, to, reply_to, work_id, sent_at, expires_at) = (
        role(&roles.id),
        role(&roles.from),
        role(&roles.to),
        role(&roles.reply_to),
        role(&roles.work_id),
        role(&roles.sent_at),
        role(&roles.expires_at),
    );
    let clock = format_ident!("{}", env.clock.variant());
    out.extend(quote! {
        /// Which envelope member plays each runtime role (`x-agh-envelope.roles`), and the
        /// unit of the time roles (`x-agh-envelope.clock`).
        pub const ROLES: #rt::model::Roles = #rt::model::Roles {
            id: #id,
            from: #from,
            to: #to,
            reply_to: #reply_to,
            work_id: #work_id,
            sent_at: #sent_at,
            expires_at: #expires_at,
            clock: #rt::model::Clock::#clock,
        };
    });

    let infos = model.kinds.iter().map(|k| {
        let r = &k.rules;
        let (kind, profile) = (&r.kind, &r.profile);
        let pr = |p: crate::model::Presence| {
            let v = format_ident!("{}", p.variant());
            quote! { #rt::kind::Presence::#v }
        };
        let (surface, work_id, to, reply_to, body) = (
            pr(r.surface),
            pr(r.work_id),
            pr(r.to),
            pr(r.reply_to),
            pr(r.body),
        );
        let work = format_ident!("{}", r.work.variant());
        let em = r.envelope_match.iter().map(|m| {
            let (b, e) = (&m.body, &m.envelope);
            quote! { #rt::kind::EnvelopeMatch { body: #b, envelope: #e } }
        });
        let ve = r.verify.iter().map(|v| {
            let (b, rc, code) = (&v.body, &v.recipe, &v.reason_code);
            quote! { #rt::kind::Verify { body: #b, recipe: #rc, reason_code: #code } }
        });
        let (purpose, body_type) = (&k.purpose, &k.body_type);
        let check = crate::emit::checks::body_check_fn(k);
        let decode = crate::emit::checks::decode_fn(k);
        let scan = crate::emit::scan::body_scan_fn(k);
        quote! {
            #rt::model::KindInfo {
                rules: #rt::kind::KindRules {
                    kind: #kind,
                    profile: #profile,
                    surface: #surface,
                    work_id: #work_id,
                    to: #to,
                    reply_to: #reply_to,
                    body: #body,
                    work: #rt::kind::WorkRole::#work,
                    envelope_match: &[#(#em),*],
                    verify: &[#(#ve),*],
                },
                purpose: #purpose,
                body_type: #body_type,
                check: super::checks::#check,
                decode: super::checks::#decode,
                scan: super::scan::#scan,
            }
        }
    });
    out.extend(quote! {
        /// Every kind of the schema set, in envelope `kind` enum order, with its rules
        /// (`x-agh-kind`). The generated body types carry the same values through `#[derive(Body)]`.
        pub const KINDS: &[#rt::model::KindInfo<super::checks::KnownBody>] = &[#(#infos),*];

        /// The rules of `kind`, if the schema set defines it.
        pub fn kind_rules(kind: &str) -> Option<&'static #rt::kind::KindRules> {
            KINDS.iter().find(|k| k.rules.kind == kind).map(|k| &k.rules)
        }
    });

    if let Some(c) = &model.containers {
        let member = &c.member;
        let entries = c.entries.iter().map(|(s, m)| {
            quote! { #rt::model::Container { surface: #s, member: #m } }
        });
        out.extend(quote! {
            /// The envelope member that names the conversation surface.
            pub const SURFACE_MEMBER: &str = #member;
            /// The container member each surface value requires (`x-agh-container`).
            pub const CONTAINERS: &[#rt::model::Container] = &[#(#entries),*];
        });
    }

    for e in &model.enums {
        let name = format_ident!("{}_VALUES", e.type_name.to_shouty_snake_case());
        let doc = format!(
            " {} Values and meanings (`x-agh-enum-descriptions`).",
            e.description
        );
        let vals = value_docs(&e.values);
        out.extend(quote! {
            #[doc = #doc]
            pub const #name: &[#rt::model::ValueDoc] = #vals;
        });
    }

    let exchanges: Vec<TokenStream> = model
        .kinds
        .iter()
        .filter_map(|k| k.exchange.as_ref().map(|e| (k, e)))
        .map(|(k, e)| {
            let kind = &k.name;
            let expects = e.expects_reply;
            let deadline = match &e.deadline {
                Some(d) => quote!(Some(#d)),
                None => quote!(None),
            };
            let default = match e.default_deadline {
                Some(d) => quote!(Some(#d)),
                None => quote!(None),
            };
            let states = e.states.iter().map(|s| {
                let (name, description, awaiting) = (&s.name, &s.description, s.awaiting);
                quote! {
                    #rt::model::ExchangeState { name: #name, description: #description, awaiting: #awaiting }
                }
            });
            let conds = |list: &[crate::model::MemberIs]| {
                let items = list.iter().map(|c| {
                    let (m, v) = (&c.member, c.value.to_string());
                    quote!(#rt::model::MemberIs { member: #m, value: #v })
                });
                quote!(&[#(#items),*])
            };
            let replies = e.replies.iter().map(|r| {
                let (kind, states, to) = (&r.kind, &r.states, &r.to);
                let (when, request) = (conds(&r.when), conds(&r.request));
                quote! {
                    #rt::model::ReplyRule {
                        kind: #kind, states: &[#(#states),*], when: #when, request: #request, to: #to,
                    }
                }
            });
            let refers = &k.refers_to;
            quote! {
                #rt::model::Exchange {
                    kind: #kind,
                    expects_reply: #expects,
                    deadline: #deadline,
                    default_deadline_ms: #default,
                    states: &[#(#states),*],
                    replies: &[#(#replies),*],
                    refers_to: &[#(#refers),*],
                }
            }
        })
        .collect();
    if !exchanges.is_empty() {
        out.extend(quote! {
            /// The request/response exchanges of the request kinds (`x-agh-kind.exchange`), in
            /// kind order: the correlation tracker's table.
            pub const EXCHANGES: &[#rt::model::Exchange] = &[#(#exchanges),*];
        });
    }
    let answers_any: Vec<&str> = model
        .kinds
        .iter()
        .filter(|k| k.answers_any)
        .map(|k| k.name.as_str())
        .collect();
    if !answers_any.is_empty() {
        out.extend(quote! {
            /// The kinds whose correlation member may name any message (`x-agh-kind.answers_any`):
            /// they move the exchange they name when a reply rule takes them, and are delivered
            /// unrelated otherwise.
            pub const ANSWERS_ANY: &[&str] = &[#(#answers_any),*];
        });
    }
    if let Some(r) = &model.refusal_codes {
        let entries = r.entries.iter().map(
            |(refusal, code)| quote!(#rt::model::RefusalCode { refusal: #refusal, code: #code }),
        );
        let doc = format!(
            " How this profile spells the runtime's refusals (`x-agh-refusal-codes` on `{}`).",
            r.type_name
        );
        out.extend(quote! {
            #[doc = #doc]
            pub const REFUSAL_CODES: &[#rt::model::RefusalCode] = &[#(#entries),*];
        });
    }

    if let Some(l) = &model.lifecycle {
        let states = value_docs(&l.states);
        let initial = &l.initial;
        let terminal = &l.terminal;
        let opened_by = &l.opened_by;
        let transitions = l.transitions.iter().map(|t| {
            let (from, to) = (&t.from, &t.to);
            let on = t.on.iter().map(|g| {
                let kind = &g.kind;
                let body = match &g.body_match {
                    Some((m, v)) => {
                        quote! { Some(#rt::model::BodyMatch { member: #m, value: #v }) }
                    }
                    None => quote! { None },
                };
                let sender = match g.sender {
                    Some(Sender::Initiator) => quote! { Some(#rt::model::Sender::Initiator) },
                    Some(Sender::Target) => quote! { Some(#rt::model::Sender::Target) },
                    None => quote! { None },
                };
                quote! { #rt::model::Trigger { kind: #kind, body: #body, sender: #sender } }
            });
            quote! { #rt::model::Transition { from: #from, to: #to, on: &[#(#on),*] } }
        });
        out.extend(quote! {
            /// The work lifecycle (`x-agh-lifecycle`).
            pub const LIFECYCLE: #rt::model::Lifecycle = #rt::model::Lifecycle {
                states: #states,
                initial: #initial,
                terminal: &[#(#terminal),*],
                opened_by: &[#(#opened_by),*],
                transitions: &[#(#transitions),*],
            };
        });
    }
    out
}
