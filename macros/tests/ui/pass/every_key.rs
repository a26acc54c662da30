use agh_protocol::kind::{EnvelopeMatch, KindRules, Presence, Verify, WorkRole};
use serde::{Deserialize, Serialize};

/// `crate = "..."` reaches agh_protocol through a re-export.
mod facade {
    pub use agh_protocol as proto;
}

#[derive(Serialize, Deserialize, facade::proto::Body)]
#[agh(
    kind = "acme.report",
    profile = "acme/v1",
    crate = "crate::facade::proto"
)]
#[agh(surface = required, work_id = required, to = recommended, reply_to = forbidden, work = updates)]
#[agh(envelope_match(body = "/author", envelope = "from"))]
#[agh(verify(body = "/digest", recipe = "acme-v1", reason_code = "acme.bad_digest"))]
struct Report {
    author: String,
    digest: String,
}

/// Lifetimes, bounds and a where-clause are carried through.
#[derive(Serialize, Deserialize, agh_protocol::Body)]
#[agh(kind = "acme.wrap")]
struct Wrap<'a, T: Clone>
where
    T: Default,
{
    label: std::borrow::Cow<'a, str>,
    inner: T,
}

const RULES: KindRules = <Report as agh_protocol::Body>::RULES;

fn main() {
    assert_eq!(
        RULES,
        KindRules {
            kind: "acme.report",
            profile: "acme/v1",
            surface: Presence::Required,
            work_id: Presence::Required,
            to: Presence::Recommended,
            reply_to: Presence::Forbidden,
            body: Presence::Required,
            work: WorkRole::Updates,
            envelope_match: &[EnvelopeMatch {
                body: "/author",
                envelope: "from"
            }],
            verify: &[Verify {
                body: "/digest",
                recipe: "acme-v1",
                reason_code: "acme.bad_digest"
            }],
        }
    );
    assert_eq!(
        <Wrap<'static, u8> as agh_protocol::Body>::RULES.kind,
        "acme.wrap"
    );
}
