//! Unit tests of the expansion and the attribute parser, on token streams.

use quote::quote;
use syn::{parse_quote, DeriveInput};

use crate::{attr, expand};

/// The error messages of an expansion that must fail.
fn errors(input: DeriveInput) -> Vec<String> {
    match expand(input) {
        Ok(tokens) => panic!("expected errors, got {tokens}"),
        Err(error) => error.into_iter().map(|e| e.to_string()).collect(),
    }
}

#[test]
fn expands_every_key_with_defaults() {
    let input: DeriveInput = parse_quote! {
        #[agh(kind = "greet")]
        struct Greet { text: String }
    };
    let expected = quote! {
        #[automatically_derived]
        impl ::agh_protocol::kind::Body for Greet {
            const RULES: ::agh_protocol::kind::KindRules = ::agh_protocol::kind::KindRules {
                kind: "greet",
                profile: "agh-network/v0",
                surface: ::agh_protocol::kind::Presence::Required,
                work_id: ::agh_protocol::kind::Presence::Optional,
                to: ::agh_protocol::kind::Presence::Optional,
                reply_to: ::agh_protocol::kind::Presence::Optional,
                body: ::agh_protocol::kind::Presence::Required,
                work: ::agh_protocol::kind::WorkRole::None,
                envelope_match: &[],
                verify: &[],
            };
        }
    };
    let tokens = expand(input).expect("expands");
    assert_eq!(tokens.to_string(), expected.to_string());
}

#[test]
fn merges_attributes_and_honours_crate_path() {
    let input: DeriveInput = parse_quote! {
        #[agh(kind = "receipt", work_id = required, work = updates)]
        #[agh(crate = "crate::proto", to = recommended, reply_to = required)]
        #[agh(verify(body = "/x", recipe = "r-v0", reason_code = "verification_failed"))]
        #[agh(envelope_match(body = "/a~1b", envelope = "from"))]
        struct Receipt;
    };
    let tokens = expand(input).expect("expands").to_string();
    for part in [
        quote!(impl crate::proto::kind::Body for Receipt),
        quote!(work_id: crate::proto::kind::Presence::Required),
        quote!(to: crate::proto::kind::Presence::Recommended),
        quote!(reply_to: crate::proto::kind::Presence::Required),
        quote!(work: crate::proto::kind::WorkRole::Updates),
        quote!(envelope_match: &[crate::proto::kind::EnvelopeMatch { body: "/a~1b", envelope: "from" }]),
        quote!(verify: &[crate::proto::kind::Verify { body: "/x", recipe: "r-v0", reason_code: "verification_failed" }]),
    ] {
        let part = part.to_string();
        assert!(tokens.contains(&part), "{part} not in {tokens}");
    }
}

#[test]
fn generics_get_a_serde_bound() {
    let input: DeriveInput = parse_quote! {
        #[agh(kind = "wrap")]
        struct Wrap<'a, T: Clone> where T: Default { inner: std::borrow::Cow<'a, T> }
    };
    let tokens = expand(input).expect("expands").to_string();
    let header = quote! {
        impl<'a, T: Clone> ::agh_protocol::kind::Body for Wrap<'a, T>
        where
            T: Default,
            Self: ::agh_protocol::__private::serde::Serialize
                + ::agh_protocol::__private::serde::de::DeserializeOwned
    };
    assert!(tokens.contains(&header.to_string()), "{tokens}");
}

#[test]
fn collects_every_error_in_one_pass() {
    let messages = errors(parse_quote! {
        #[agh(kind = "Bad", surfce = required, work_id = maybe)]
        #[agh(to = "optional", kind = "again")]
        struct Many;
    });
    assert_eq!(
        messages,
        [
            "`kind` must match `^[a-z][a-z0-9_.-]*$` (lowercase ASCII letter first), not \"Bad\"",
            "unknown key `surfce` in #[agh(...)]; did you mean `surface`?",
            "`work_id` must be `required`, `optional` or `forbidden`, not `maybe`",
            "`to` must be `required`, `recommended`, `optional` or `forbidden`, not `\"optional\"` (write `to = optional` without quotes)",
            "duplicate key `kind`: each key may be given once across all #[agh(...)] attributes",
        ]
    );
}

#[test]
fn missing_kind_and_missing_attribute() {
    assert_eq!(
        errors(parse_quote!(
            #[agh(surface = required)]
            struct A;
        )),
        ["missing `kind`: add `kind = \"...\"` to #[agh(...)]"]
    );
    assert_eq!(
        errors(parse_quote!(
            struct A;
        )),
        ["#[derive(Body)] needs an #[agh(kind = \"...\")] attribute"]
    );
}

#[test]
fn contradictions() {
    let cases: [(DeriveInput, &str); 6] = [
        (
            parse_quote!(#[agh(kind = "k", surface = forbidden)] struct A;),
            "`surface = forbidden` needs `work_id = forbidden`",
        ),
        (
            parse_quote!(#[agh(kind = "k", surface = forbidden, work_id = required)] struct A;),
            "`surface = forbidden` leaves no conversation container",
        ),
        (
            parse_quote!(#[agh(kind = "k", work = opens, work_id = forbidden)] struct A;),
            "`work = opens` needs a `work_id`, but `work_id = forbidden`",
        ),
        (
            parse_quote!(#[agh(kind = "k", work = updates)] struct A;),
            "`work = updates` needs `work_id = required` (the default is `optional`)",
        ),
        (
            parse_quote!(#[agh(kind = "k", to = forbidden, envelope_match(body = "/p", envelope = "to"))] struct A;),
            "`envelope_match` names `to`, which `to = forbidden` keeps out of the envelope",
        ),
        (
            parse_quote!(#[agh(kind = "k", surface = forbidden, work_id = forbidden, envelope_match(body = "/p", envelope = "thread_id"))] struct A;),
            "`envelope_match` names `thread_id`, which `surface = forbidden` keeps out of the envelope",
        ),
    ];
    for (input, expected) in cases {
        let messages = errors(input);
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(messages[0].starts_with(expected), "{messages:?}");
    }
}

#[test]
fn nested_lists_are_checked() {
    let messages = errors(parse_quote! {
        #[agh(kind = "k",
              envelope_match(body = "peer_id", envelope = "sender"),
              envelope_match(body = "/a~2", envelope = "from", bdy = "/x"),
              verify(body = "/c", recipe = "Cap"),
              envelope_match(body = "/p", envelope = "from"),
              envelope_match(body = "/p", envelope = "from"))]
        struct A;
    });
    assert_eq!(
        messages,
        [
            "`body` must be a JSON Pointer into the body, starting with `/` (e.g. \"/peer_card/peer_id\"), not \"peer_id\"",
            "`envelope` must name a top-level envelope string member, not \"sender\"; expected one of `id`, `workspace_id`, `channel`, `thread_id`, `direct_id`, `from`, `to`, `work_id`, `reply_to`, `trace_id`, `causation_id`",
            "unknown key `bdy` in `envelope_match(...)`; did you mean `body`?",
            "invalid JSON Pointer \"/a~2\": `~` must be followed by `0` or `1` (RFC 6901)",
            "`verify(...)` needs `reason_code = \"...\"`",
            "duplicate `envelope_match`",
        ]
    );
}

#[test]
fn items_and_misplaced_attributes() {
    assert_eq!(
        errors(parse_quote!(#[agh(kind = "k")] union U { a: u8 })),
        ["#[derive(Body)] supports structs and enums, not unions"]
    );
    assert_eq!(
        errors(parse_quote!(
            #[agh(kind = "k")]
            enum E {
                #[agh(kind = "x")]
                A,
            }
        )),
        ["#[agh(...)] belongs on the type, not on a variant"]
    );
    let input: DeriveInput = parse_quote!(
        #[agh(kind = "k")]
        #[serde(untagged)]
        enum E {
            A(u8),
            B(String),
        }
    );
    assert!(expand(input).is_ok());
}

#[test]
fn value_checks() {
    assert_eq!(
        errors(parse_quote!(#[agh(kind = "direct")] struct A;)),
        ["`direct` is not a kind: a direct-room message is `say` (or another conversation-bearing kind) with `surface: \"direct\"`"]
    );
    assert_eq!(
        errors(parse_quote!(
            #[agh(kind = "k", profile = "", crate = "not a path")]
            struct A;
        )),
        [
            "`profile` must be a non-empty name without white space, e.g. \"agh-network/v0\"",
            "`crate` must be a path to the agh_protocol crate, e.g. `crate = \"::agh_protocol\"`",
        ]
    );
    assert_eq!(
        errors(parse_quote!(
            #[agh(kind = k)]
            struct A;
        )),
        ["`kind` takes a string literal: `kind = \"...\"`"]
    );
}

#[test]
fn suggestions() {
    let keys = ["kind", "work_id", "reply_to", "envelope_match"];
    assert_eq!(attr::closest("knd", &keys), Some("kind"));
    assert_eq!(attr::closest("work_di", &keys), Some("work_id"));
    assert_eq!(attr::closest("reply", &keys), Some("reply_to"));
    assert_eq!(attr::closest("envelope", &keys), Some("envelope_match"));
    assert_eq!(attr::closest("rename", &keys), None);
    // A swap of two adjacent letters is one edit.
    assert_eq!(attr::closest("form", &["from", "to", "id"]), Some("from"));
    assert_eq!(attr::closest("kidn", &keys), Some("kind"));
}

#[test]
fn a_syntax_error_is_not_followed_by_cascading_errors() {
    // The parse stops at `body)`: `kind` and `work_id` are never read, so neither "missing `kind`"
    // nor the `surface = forbidden` rule may be reported.
    assert_eq!(
        errors(parse_quote!(
            #[agh(surface = forbidden, envelope_match(body = "/a", envelope = "from") + 1, kind = "k", work_id = forbidden)]
            struct A;
        )),
        ["expected `,`"]
    );
    assert_eq!(
        errors(parse_quote!(
            #[agh]
            struct A;
        )),
        ["expected attribute arguments in parentheses: #[agh(...)]"]
    );
}

#[test]
fn a_key_without_its_value_is_named() {
    assert_eq!(
        errors(parse_quote!(
            #[agh(kind, surface, envelope_match = "from", verify, frob = 1)]
            #[agh(kind = "k", envelope_match(body, envelope = "from"))]
            struct A;
        )),
        [
            "`kind` needs a value: `kind = \"...\"`",
            "`surface` needs a value: `surface = required | forbidden`",
            "`envelope_match` takes a list: `envelope_match(body = \"/ptr\", envelope = \"member\")`",
            "`verify` takes a list: `verify(body = \"/ptr\", recipe = \"name\", reason_code = \"code\")`",
            "unknown key `frob` in #[agh(...)]; expected one of `kind`, `profile`, `surface`, `work_id`, `to`, `reply_to`, `body`, `work`, `envelope_match`, `verify`, `crate`",
            "duplicate key `kind`: each key may be given once across all #[agh(...)] attributes",
            "`body` needs a value: `body = \"...\"`",
        ]
    );
}

#[test]
fn a_bad_work_id_is_not_judged_as_the_default() {
    for input in [
        parse_quote!(
            #[agh(kind = "k", surface = forbidden, work_id = maybe)]
            struct A;
        ),
        parse_quote!(
            #[agh(kind = "k", work = updates, work_id)]
            struct A;
        ),
    ] {
        let messages = errors(input);
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert!(messages[0].starts_with("`work_id`"), "{messages:?}");
    }
}
