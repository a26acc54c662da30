//! AGH Network v0 as a profile of the runtime's generic parser (`agh_runtime::profile`): the
//! generated profile (`generated::profile`: tables, scanners, validators, types) with what v0
//! adds, as trait items: its recipe table ([`crate::recipes::RECIPES`], the capability digest)
//! and the trust profile's steps ([`crate::trust`]), which run after every other rule on both
//! paths. v0's parser ([`super::parse`]) is the runtime's, over this profile.

use agh_runtime::json::JsonLimits;
use agh_runtime::problem::{Problem, Problems, ReasonCode};
use agh_runtime::profile::{self as p, Options, Recipe};
use agh_runtime::scan::{RawJson, Scanner};
use serde_json::{Map, Value};

use crate::generated::scan::EnvelopeRef;
use crate::trust::{Step, TrustState};

/// The generated profile this one extends.
type Generated = crate::generated::profile::Profile;

/// AGH Network v0 with its recipes and its trust profile: the profile `agh_protocol`'s parser
/// runs (`agh_runtime::profile::parse_ref::<V0>` gives the same verdicts as
/// [`crate::parse_ref`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct V0;

/// What v0's trust step adds to a valid envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trust {
    /// `verified` or `unverified` (a `rejected` envelope is refused).
    pub state: TrustState,
}

impl Default for Trust {
    fn default() -> Self {
        Trust {
            state: TrustState::Unverified { reason: "".into() },
        }
    }
}

impl p::Profile for V0 {
    type Envelope = <Generated as p::Profile>::Envelope;
    type EnvelopeRef<'a> = EnvelopeRef<'a>;
    type Body = <Generated as p::Profile>::Body;
    type BodyRef<'a> = <Generated as p::Profile>::BodyRef<'a>;
    type Spans = <Generated as p::Profile>::Spans;
    type Extra = Trust;
    const SPEC: p::Spec<Self::Body> = <Generated as p::Profile>::SPEC;
    const RECIPES: &'static [Recipe] = crate::recipes::RECIPES;

    #[inline]
    fn scan_envelope<'a>(
        s: &mut Scanner<'a>,
        body: &mut dyn FnMut(&mut Scanner<'a>, Option<&str>) -> Option<()>,
    ) -> Option<Self::EnvelopeRef<'a>> {
        <Generated as p::Profile>::scan_envelope(s, body)
    }

    #[inline]
    fn kind_of<'s>(envelope: &'s EnvelopeRef<'_>) -> Option<&'s str> {
        Some(&envelope.kind)
    }

    fn check_envelope(v: &Value, at: &mut String, out: &mut Problems) {
        <Generated as p::Profile>::check_envelope(v, at, out)
    }

    #[inline]
    fn body_of<'a>(envelope: &Self::EnvelopeRef<'a>) -> Option<RawJson<'a>> {
        <Generated as p::Profile>::body_of(envelope)
    }

    #[inline]
    fn body_json_of<'s>(spans: &'s Self::Spans, text: &'s str) -> Option<RawJson<'s>> {
        <Generated as p::Profile>::body_json_of(spans, text)
    }

    #[inline]
    fn body_ref<'a>(kind: &str, body: RawJson<'a>) -> Self::BodyRef<'a> {
        <Generated as p::Profile>::body_ref(kind, body)
    }

    fn to_envelope(view: &Self::EnvelopeRef<'_>, text: &str) -> Result<Self::Envelope, String> {
        <Generated as p::Profile>::to_envelope(view, text)
    }

    #[inline]
    fn spans_of(view: &EnvelopeRef<'_>, text: &str) -> Self::Spans {
        <Generated as p::Profile>::spans_of(view, text)
    }

    #[inline]
    fn view_of<'s>(spans: &'s Self::Spans, text: &'s str) -> EnvelopeRef<'s> {
        <Generated as p::Profile>::view_of(spans, text)
    }

    #[inline]
    fn str_of<'s>(spans: &'s Self::Spans, text: &'s str, name: &str) -> Option<&'s str> {
        <Generated as p::Profile>::str_of(spans, text, name)
    }

    /// The trust step (after freshness, before routing): `unverified` without a proof or a
    /// verified-form `from` (no second look at the bytes), else the profile's steps on the
    /// envelope as received (read within the caller's limits). A forward needs nothing from it:
    /// the message keeps the bytes it was given.
    #[inline]
    fn admit<'a>(
        bytes: &'a [u8],
        envelope: &EnvelopeRef<'a>,
        options: &Options,
    ) -> Result<Trust, Problem> {
        if !crate::trust::needs_evaluation(&envelope.from, envelope.proof.is_some()) {
            let state = TrustState::Unverified {
                reason: "no proof".into(),
            };
            return Ok(Trust { state });
        }
        let limits = JsonLimits {
            max_bytes: options.max_bytes,
            max_depth: options.max_depth,
        };
        let state = crate::trust::evaluate_bytes_with(bytes, &limits);
        if let TrustState::Rejected { step, message } = state {
            return Err(trust_problem(step, &message));
        }
        Ok(Trust { state })
    }

    fn check_admit(envelope: &Map<String, Value>, _options: &Options, out: &mut Problems) {
        if let TrustState::Rejected { step, message } = crate::trust::evaluate(envelope) {
            out.push(trust_problem(step, &message));
        }
    }
}

/// The refusal of an envelope the trust profile rejects.
fn trust_problem(step: Step, message: &str) -> Problem {
    Problem::new(
        ReasonCode::VerificationFailed,
        step.pointer(),
        "trust: agh-network.trust.ed25519-jcs/v1",
        format!("trust step `{step}` failed: {message}"),
    )
}
