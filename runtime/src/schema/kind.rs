//! The per-kind envelope rules that a body type carries.
//!
//! The rules are written once, in the schema annotations (`x-agh-kind`, see `schemas/README.md`).
//! Codegen turns them into `#[derive(Body)] #[agh(...)]` on each generated body type, and the
//! derive macro (`agh-macros`) turns the attribute into an implementation of [`Body`]. Downstream
//! crates use the same derive for their own kinds.

/// Whether an envelope member must, should, may or must not be present for a kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Presence {
    /// The member MUST be present (and not null).
    Required,
    /// The member SHOULD be present; its absence is not an error.
    Recommended,
    /// The member MAY be present.
    Optional,
    /// The member MUST be absent or null.
    Forbidden,
}

impl Presence {
    /// The annotation / attribute spelling: `required`, `recommended`, `optional`, `forbidden`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Presence::Required => "required",
            Presence::Recommended => "recommended",
            Presence::Optional => "optional",
            Presence::Forbidden => "forbidden",
        }
    }
}

/// The part a kind plays in the work lifecycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkRole {
    /// Never touches work (greet, whois).
    None,
    /// Opens work when it carries `to` and a new `work_id`; continues it otherwise (say, capability).
    Opens,
    /// Moves existing work through the lifecycle (receipt, trace).
    Updates,
}

impl WorkRole {
    /// The annotation / attribute spelling: `none`, `opens`, `updates`.
    pub const fn as_str(self) -> &'static str {
        match self {
            WorkRole::None => "none",
            WorkRole::Opens => "opens",
            WorkRole::Updates => "updates",
        }
    }
}

/// When the body member at `body` (a JSON Pointer into the body) is present, it must equal the
/// top-level envelope member `envelope` (for example Peer Card `peer_id` = `from`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct EnvelopeMatch {
    /// JSON Pointer into the body, e.g. `/peer_card/peer_id`.
    pub body: &'static str,
    /// Name of a top-level envelope member, e.g. `from`.
    pub envelope: &'static str,
}

/// A recipe-based check on a body member (for example the capability digest).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Verify {
    /// JSON Pointer into the body, e.g. `/capability`.
    pub body: &'static str,
    /// Name of the recipe, e.g. `capability-v0`.
    pub recipe: &'static str,
    /// Reason code when the check fails, e.g. `verification_failed`.
    pub reason_code: &'static str,
}

/// Every envelope-level rule of one message kind.
///
/// The presence rules are per *role*, and a profile says which envelope member plays each role
/// (`x-agh-envelope.roles`, the generated `ROLES`): `reply_to` is the member `reply_to` in AGH
/// Network v0 and `ref` in ACP. A role the profile does not have is `Forbidden` here and never
/// checked (ACP has no surface and no `work_id`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KindRules {
    /// The envelope `kind` value.
    pub kind: &'static str,
    /// The protocol profile the kind belongs to (`agh-network/v0` for the core kinds).
    pub profile: &'static str,
    /// `Required`: `surface` and its matching container id must be present; `Forbidden`: `surface`,
    /// `thread_id` and `direct_id` must all be absent.
    pub surface: Presence,
    /// The `work_id` rule: `Required`, `Optional` or `Forbidden`.
    pub work_id: Presence,
    /// The `to` rule.
    pub to: Presence,
    /// The rule of the correlation member (role `reply_to`; body-conditional overrides are part
    /// of the body validator).
    pub reply_to: Presence,
    /// Whether the body member (`body` in v0, `payload` in ACP) must be present: `Required`, or
    /// `Optional` (absent or `null`: the kind carries no body, as ACP's `ping`).
    pub body: Presence,
    /// The lifecycle role.
    pub work: WorkRole,
    /// Body members that must equal envelope members.
    pub envelope_match: &'static [EnvelopeMatch],
    /// Recipe-based checks.
    pub verify: &'static [Verify],
}

/// A message body type: something that can sit in an envelope's `body` under one `kind`.
///
/// Implemented by `#[derive(Body)]` with an `#[agh(...)]` attribute; do not implement by hand.
pub trait Body: serde::Serialize + serde::de::DeserializeOwned {
    /// The kind's envelope rules.
    const RULES: KindRules;
}
