//! Data types for the protocol tables that codegen emits from the schema set
//! (a profile's `generated::rules`): forbidden names, value descriptions, surface containers, kind
//! summaries and the work lifecycle. The values live in generated code; these are only shapes.

use serde_json::Value;

use crate::schema::kind::{KindRules, Presence};
use crate::schema::problem::Problems;

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
/// `KnownBody`).
pub type BodyDecode<B> = fn(&str) -> Result<B, serde_json::Error>;

/// A generated body scanner (the fast path): reads the body with the scanner, checking the
/// kind's schema and conditionals; returns the envelope rules the body overrides, or `None` to
/// decline, and keeps the members the cross checks read in the [`Kept`](crate::json::scan::Kept) it
/// is given (which starts empty; it is written in place, not returned: it is a few hundred
/// bytes).
pub type BodyScan = for<'a> fn(
    &mut crate::json::scan::Scanner<'a>,
    &mut crate::json::scan::Kept<'a>,
) -> Option<BodyOverrides>;

/// One message kind: its envelope rules, its purpose, its generated body type, check and decoder.
/// `B` is the generated `KnownBody` of the schema set the table was generated from.
#[derive(Clone, Copy, Debug)]
pub struct KindInfo<B> {
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

/// The unit of a profile's time members (`x-agh-envelope.clock`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Clock {
    /// Unix seconds (AGH Network v0).
    Seconds,
    /// Unix milliseconds (ACP).
    Milliseconds,
}

impl Clock {
    /// How many units make one second.
    pub const fn per_second(self) -> i64 {
        match self {
            Clock::Seconds => 1,
            Clock::Milliseconds => 1000,
        }
    }

    /// The unit's short name in messages (`s`, `ms`).
    pub const fn unit(self) -> &'static str {
        match self {
            Clock::Seconds => "s",
            Clock::Milliseconds => "ms",
        }
    }
}

/// Which envelope member plays each role the runtime knows (`x-agh-envelope.roles`); `None`
/// when the profile has no such member (ACP has no `work_id` and no `expires_at`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Roles {
    /// The message id (`id`).
    pub id: Option<&'static str>,
    /// The sender (`from`).
    pub from: Option<&'static str>,
    /// The target peer (`to`).
    pub to: Option<&'static str>,
    /// The correlation member: the id of the message this one answers (`reply_to` in v0, `ref`
    /// in ACP).
    pub reply_to: Option<&'static str>,
    /// The work unit id (`work_id`).
    pub work_id: Option<&'static str>,
    /// The sender's clock (`ts`).
    pub sent_at: Option<&'static str>,
    /// The expiry time (`expires_at`).
    pub expires_at: Option<&'static str>,
    /// The unit of `sent_at` and `expires_at`.
    pub clock: Clock,
}

/// A condition on a top-level body member: it equals the JSON value written `value`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemberIs {
    /// Top-level body member.
    pub member: &'static str,
    /// The value, as JSON text (`true`, `"urgent"`).
    pub value: &'static str,
}

/// A state of a request/response exchange besides the built-in `open` and `answered`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ExchangeState {
    /// The state name.
    pub name: &'static str,
    /// What it means.
    pub description: &'static str,
    /// Whether a reply is still awaited in it (the deadline applies).
    pub awaiting: bool,
}

/// One reply rule of an exchange: a reply of `kind`, while the exchange is in one of `states`,
/// whose body matches `when` and whose request's body matched `request`, moves it to `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReplyRule {
    /// The reply kind.
    pub kind: &'static str,
    /// The states it applies in.
    pub states: &'static [&'static str],
    /// Conditions on the reply's body.
    pub when: &'static [MemberIs],
    /// Conditions on the request's body.
    pub request: &'static [MemberIs],
    /// The state after.
    pub to: &'static str,
}

/// The request/response exchange a request kind opens (`x-agh-kind.exchange`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Exchange {
    /// The request kind.
    pub kind: &'static str,
    /// Whether a reply is expected while the exchange is `open` (`notify`: replies are possible,
    /// none is awaited).
    pub expects_reply: bool,
    /// The request body member (JSON Pointer) giving the reply deadline in milliseconds from the
    /// request's sent time.
    pub deadline: Option<&'static str>,
    /// The deadline in milliseconds when that member is absent (its schema `default`).
    pub default_deadline_ms: Option<u64>,
    /// States besides `open` and `answered`.
    pub states: &'static [ExchangeState],
    /// Reply rules, tried in order.
    pub replies: &'static [ReplyRule],
    /// The kinds of request this one's correlation member must name (`cancel` names a
    /// `delegate` still open); empty when it names none.
    pub refers_to: &'static [&'static str],
}

impl Exchange {
    /// The built-in state every exchange starts in.
    pub const OPEN: &'static str = "open";
    /// The built-in final state.
    pub const ANSWERED: &'static str = "answered";

    /// Whether a reply is awaited in `state`.
    pub fn awaiting(&self, state: &str) -> bool {
        match state {
            Exchange::OPEN => self.expects_reply,
            Exchange::ANSWERED => false,
            other => self.states.iter().any(|s| s.name == other && s.awaiting),
        }
    }

    /// Whether `kind` answers this exchange in some state.
    pub fn answered_by(&self, kind: &str) -> bool {
        self.replies.iter().any(|r| r.kind == kind)
    }
}

/// How a profile spells one of the runtime's refusals (`x-agh-refusal-codes`): a parser
/// [`ReasonCode`](crate::ReasonCode) or a correlation refusal, by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RefusalCode {
    /// The runtime's name of the refusal (`unsupported_kind`, `unknown_request`).
    pub refusal: &'static str,
    /// The profile's code for it (`unknown_kind`, `unknown_ref`).
    pub code: &'static str,
}
