//! `#[derive(Body)]`: the derived `RULES` carry every value of the attribute, defaults included.

use agh_protocol::kind::{EnvelopeMatch, KindRules, Presence, Verify, WorkRole};
// One import brings both the trait and the derive, as downstream crates write it.
use agh_protocol::Body;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "whois", profile = "agh-network/v0", surface = forbidden, work_id = forbidden, to = optional, reply_to = optional, work = none,
      envelope_match(body = "/peer_card/peer_id", envelope = "from"),
      verify(body = "/capability", recipe = "capability-v0", reason_code = "verification_failed"))]
struct Whois {
    query: String,
}

#[test]
fn every_key_is_carried() {
    assert_eq!(
        Whois::RULES,
        KindRules {
            kind: "whois",
            profile: "agh-network/v0",
            surface: Presence::Forbidden,
            work_id: Presence::Forbidden,
            to: Presence::Optional,
            reply_to: Presence::Optional,
            body: Presence::Required,
            work: WorkRole::None,
            envelope_match: &[EnvelopeMatch {
                body: "/peer_card/peer_id",
                envelope: "from",
            }],
            verify: &[Verify {
                body: "/capability",
                recipe: "capability-v0",
                reason_code: "verification_failed",
            }],
        }
    );
}

#[derive(Serialize, Deserialize, agh_protocol::Body)]
#[agh(kind = "acme.note")]
struct Note {
    text: String,
}

#[test]
fn defaults_fill_every_other_key() {
    assert_eq!(
        Note::RULES,
        KindRules {
            kind: "acme.note",
            profile: "agh-network/v0",
            surface: Presence::Required,
            work_id: Presence::Optional,
            to: Presence::Optional,
            reply_to: Presence::Optional,
            body: Presence::Required,
            work: WorkRole::None,
            envelope_match: &[],
            verify: &[],
        }
    );
}

/// Several attributes merge; lists keep their order.
#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.report", profile = "acme/v1")]
#[agh(work_id = required, work = updates, to = required, reply_to = recommended)]
#[agh(envelope_match(body = "/author", envelope = "from"))]
#[agh(envelope_match(body = "/work/id", envelope = "work_id"))]
#[agh(verify(
    body = "/digest",
    recipe = "acme-v1",
    reason_code = "verification_failed"
))]
#[agh(verify(body = "/sig", recipe = "acme-sig", reason_code = "acme.bad_sig"))]
struct Report {
    author: String,
}

#[test]
fn merged_attributes_keep_list_order() {
    let rules = Report::RULES;
    assert_eq!(rules.kind, "acme.report");
    assert_eq!(rules.profile, "acme/v1");
    assert_eq!(rules.surface, Presence::Required);
    assert_eq!(rules.work_id, Presence::Required);
    assert_eq!(rules.to, Presence::Required);
    assert_eq!(rules.reply_to, Presence::Recommended);
    assert_eq!(rules.work, WorkRole::Updates);
    let bodies: Vec<_> = rules
        .envelope_match
        .iter()
        .map(|m| (m.body, m.envelope))
        .collect();
    assert_eq!(bodies, [("/author", "from"), ("/work/id", "work_id")]);
    let checks: Vec<_> = rules
        .verify
        .iter()
        .map(|v| (v.body, v.recipe, v.reason_code))
        .collect();
    assert_eq!(
        checks,
        [
            ("/digest", "acme-v1", "verification_failed"),
            ("/sig", "acme-sig", "acme.bad_sig")
        ]
    );
}

/// A serde-untagged enum is a body; `opens` with the default `work_id = optional`.
#[derive(Serialize, Deserialize, Body)]
#[serde(untagged)]
#[agh(kind = "acme.either", work = opens, to = recommended)]
enum Either {
    Text { text: String },
    Count { count: u64 },
}

#[test]
fn enums_are_bodies() {
    assert_eq!(Either::RULES.kind, "acme.either");
    assert_eq!(Either::RULES.work, WorkRole::Opens);
    assert_eq!(Either::RULES.work_id, Presence::Optional);
    assert_eq!(Either::RULES.to, Presence::Recommended);
    let parsed: Either = serde_json::from_str(r#"{"count": 3}"#).expect("parses");
    assert!(matches!(parsed, Either::Count { count: 3 }));
}

/// Generics are carried through; the impl holds whenever serde's impls do.
#[derive(Serialize, Deserialize, Body)]
#[agh(kind = "acme.wrap", reply_to = forbidden)]
struct Wrap<'a, T>
where
    T: Clone,
{
    label: std::borrow::Cow<'a, str>,
    inner: T,
}

/// Reads the rules through the trait only, as a validator would.
fn rules_of<B: Body>() -> KindRules {
    B::RULES
}

#[test]
fn generic_bodies() {
    assert_eq!(rules_of::<Wrap<'static, u8>>().kind, "acme.wrap");
    assert_eq!(
        rules_of::<Wrap<'static, Vec<String>>>().reply_to,
        Presence::Forbidden
    );
    let wrap: Wrap<'static, u8> =
        serde_json::from_str(r#"{"label": "x", "inner": 7}"#).expect("parses");
    assert_eq!((wrap.label.as_ref(), wrap.inner), ("x", 7));
    assert_eq!(rules_of::<Whois>(), Whois::RULES);
    assert_eq!(rules_of::<Note>().kind, "acme.note");
}

/// `crate = "..."` reaches agh_protocol through a re-export.
mod facade {
    pub use agh_protocol as proto;
}

#[derive(Serialize, Deserialize, facade::proto::Body)]
#[agh(kind = "acme.via-facade", crate = "crate::facade::proto")]
struct ViaFacade {}

#[test]
fn crate_path_override() {
    assert_eq!(rules_of::<ViaFacade>().kind, "acme.via-facade");
}

/// `RULES` is a constant: usable in const context.
const WHOIS_KIND: &str = Whois::RULES.kind;

#[test]
fn rules_are_const() {
    assert_eq!(WHOIS_KIND, "whois");
    let _ = (
        Whois {
            query: String::new(),
        }
        .query,
        Note {
            text: String::new(),
        }
        .text,
        Report {
            author: String::new(),
        }
        .author,
        Either::Text {
            text: String::new(),
        },
    );
}
