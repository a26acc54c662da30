//! Data types for the protocol tables that codegen emits from the schema set
//! (`crate::generated::rules`): forbidden names, value descriptions, surface containers, kind
//! summaries and the work lifecycle. The values live in generated code; these are only shapes.

use serde_json::Value;

use crate::generated::checks::KnownBody;
use crate::kind::{KindRules, Presence};
use crate::problem::Problems;

/// A name rejected with a specific message (legacy envelope members, non-kinds such as `direct`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Forbidden {
    /// The member or kind name.
    pub name: &'static str,
    /// The message to report.
    pub message: &'static str,
}

/// One enumerated value and what it means.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ValueDoc {
    /// The wire value.
    pub value: &'static str,
    /// Its meaning.
    pub description: &'static str,
}

/// Which container member a surface value requires (`thread` -> `thread_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Container {
    /// The surface value.
    pub surface: &'static str,
    /// The envelope member that must be present with it (the other containers must be absent).
    pub member: &'static str,
}

/// A generated body check: `(body, pointer of the body, problems)`, returning the envelope rules
/// the body's conditions override.
pub type BodyCheck = fn(&Value, &mut String, &mut Problems) -> BodyOverrides;

/// A generated body decoder: the checked body's JSON text to its typed form (`B`: the set's
/// `KnownBody`, v0's by default).
pub type BodyDecode<B = KnownBody> = fn(&str) -> Result<B, serde_json::Error>;

/// A generated body scanner (the fast path): reads the body with the scanner, checking the
/// kind's schema and conditionals; returns the envelope rules the body overrides, or `None` to
/// decline, and keeps the members the cross checks read in the [`Kept`](crate::scan::Kept) it
/// is given (which starts empty; it is written in place, not returned: it is a few hundred
/// bytes).
pub type BodyScan =
    for<'a> fn(&mut crate::scan::Scanner<'a>, &mut crate::scan::Kept<'a>) -> Option<BodyOverrides>;

/// One message kind: its envelope rules, its purpose, its generated body type, check and decoder.
/// `B` is the generated `KnownBody` of the schema set the table was generated from (v0's by
/// default; code generated for another set names its own).
#[derive(Clone, Copy, Debug)]
pub struct KindInfo<B = KnownBody> {
    /// The envelope rules.
    pub rules: KindRules,
    /// One-line purpose.
    pub purpose: &'static str,
    /// Name of the generated body type.
    pub body_type: &'static str,
    /// The generated body check (schema rules and conditionals).
    pub check: BodyCheck,
    /// The generated decoder into the set's `KnownBody`.
    pub decode: BodyDecode<B>,
    /// The generated body scanner of the fast path.
    pub scan: BodyScan,
}

/// Envelope rules that a body overrides while one of its conditions holds (whois response:
/// `reply_to` required). `None` keeps the kind's rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BodyOverrides {
    /// Override of [`KindRules::to`].
    pub to: Option<Presence>,
    /// Override of [`KindRules::reply_to`].
    pub reply_to: Option<Presence>,
}

/// The role a lifecycle trigger's sender must have.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sender {
    /// The peer that opened the work.
    Initiator,
    /// The peer the work was directed to.
    Target,
}

/// A body member value a trigger requires (receipt `status`, trace `state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct BodyMatch {
    /// Top-level body member.
    pub member: &'static str,
    /// Required string value.
    pub value: &'static str,
}

/// What moves work along a transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Trigger {
    /// The message kind.
    pub kind: &'static str,
    /// The body member value it must carry, if any.
    pub body: Option<BodyMatch>,
    /// The sender role it must come from, if any.
    pub sender: Option<Sender>,
}

/// One lifecycle transition.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Transition {
    /// State before.
    pub from: &'static str,
    /// State after.
    pub to: &'static str,
    /// Any of these triggers moves the work.
    pub on: &'static [Trigger],
}

/// The work lifecycle state machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Lifecycle {
    /// Every state with its meaning, in schema order.
    pub states: &'static [ValueDoc],
    /// The state new work starts in.
    pub initial: &'static str,
    /// States that close the work.
    pub terminal: &'static [&'static str],
    /// Kinds that open work.
    pub opened_by: &'static [&'static str],
    /// The transitions, in schema order.
    pub transitions: &'static [Transition],
}

impl Lifecycle {
    /// Whether `state` is a lifecycle state.
    pub fn is_state(&self, state: &str) -> bool {
        self.states.iter().any(|s| s.value == state)
    }

    /// Whether `state` is terminal.
    pub fn is_terminal(&self, state: &str) -> bool {
        self.terminal.contains(&state)
    }

    /// The transitions leaving `state`.
    pub fn transitions_from<'a>(
        &'a self,
        state: &'a str,
    ) -> impl Iterator<Item = &'a Transition> + 'a {
        self.transitions.iter().filter(move |t| t.from == state)
    }
}

/// A trust profile whose proofs an envelope member carries (`x-agh-trust`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrustProfile {
    /// The envelope member holding the proof (`proof`).
    pub member: &'static str,
    /// The profile identifier (`proof.profile`).
    pub profile: &'static str,
    /// The generated type of the proof object (its validator is `NAMED_CHECKS`' entry).
    pub proof_type: &'static str,
    /// The verification recipe (`agh_protocol::trust`).
    pub recipe: &'static str,
}
