//! Protocol profiles: what the runtime knows of a schema set, and the validating parser that
//! works for any set from its generated code.
//!
//! Codegen emits, for every schema set, a `profile.rs` with a unit type implementing [`Profile`]:
//! the set's tables ([`Spec`]: kinds, roles, limits, exchanges, refusal codes), its envelope
//! scanner and validator and its typed envelope and body. The functions here ([`parse_ref`],
//! [`parse`], [`explain`]) then parse any profile's envelopes with the same two paths as the
//! v0 `Registry` (`agh_protocol`): one generated scanning pass decides, and only a declined
//! envelope is read again by the generated validators, which name the first problem.
//!
//! The envelope rules that are not schema-shaped (freshness, the per-kind presence rules, body
//! overrides, body-to-envelope matches, recipes) are written once, here, over the profile's
//! [`Layout`]: which member plays which role (`x-agh-envelope.roles`), the surface containers and
//! the body member. The v0 parser uses the same functions with v0's layout. Nothing here knows a
//! particular profile: AGH Network v0, ACP and the test set all come through their tables.

use std::fmt;

use serde_json::{Map, Value};

use crate::json::scan::{Member, RawJson, Scanner};
use crate::schema::model::{Container, Exchange, Forbidden, KindInfo, RefusalCode, Roles};
use crate::schema::problem::{Problem, Problems};

mod exact;
mod fast;
mod message;
mod options;
mod recipe;
mod rejection;
pub mod rules;

pub use exact::read_checked_json;
use exact::{check, diagnose};
use exact::{head, rejection};
use fast::scan;
pub use message::{Message, MessageRef};
pub use options::Options;
pub use recipe::{find_recipe, RawRecipe, Recipe, RecipeCheck};
pub use rejection::{Head, HeadSource, Rejection};
pub use rules::Members;

/// Where a profile keeps what the envelope rules read: the dispatch members, the roles and the
/// surface containers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Layout {
    /// The member that selects the body schema (`kind`).
    pub kind_member: &'static str,
    /// The member that holds the body (`body` in v0, `payload` in ACP).
    pub body_member: &'static str,
    /// Which member plays each role.
    pub roles: Roles,
    /// The member naming the conversation surface, if the profile has surfaces.
    pub surface_member: Option<&'static str>,
    /// The container member each surface value requires.
    pub containers: &'static [Container],
}

/// Everything the runtime reads of one schema set, generated (`profile.rs`, `SPEC`). `B` is the
/// set's generated `KnownBody`.
#[derive(Debug)]
pub struct Spec<B: 'static> {
    /// The profile name (`agh-network/v0`, `acp/0.2`).
    pub name: &'static str,
    /// The member whose constant tells this profile's envelopes from others' (`protocol`, `v`).
    pub profile_member: Option<&'static str>,
    /// The constant that member holds, as JSON text (`"agh-network/v0"`, `1`).
    pub profile_value: Option<&'static str>,
    /// Members, roles and containers.
    pub layout: Layout,
    /// The kinds, in schema order.
    pub kinds: &'static [KindInfo<B>],
    /// Kind names refused with a specific message.
    pub forbidden_kinds: &'static [Forbidden],
    /// Every declared envelope member, in schema order.
    pub envelope_members: &'static [&'static str],
    /// Largest envelope in bytes.
    pub max_bytes: usize,
    /// Default replay age in seconds.
    pub replay_age_secs: u64,
    /// The request/response exchanges (`x-agh-kind.exchange`), in kind order.
    pub exchanges: &'static [Exchange],
    /// The kinds whose correlation member may name any message (`x-agh-kind.answers_any`).
    pub answers_any: &'static [&'static str],
    /// How the profile spells the runtime's refusals (`x-agh-refusal-codes`).
    pub refusal_codes: &'static [RefusalCode],
    /// Its transport binding (`x-agh-binding`: subjects and request/reply kinds), if declared.
    pub binding: Option<crate::schema::binding::Binding>,
}

impl<B> Spec<B> {
    /// The kind named `name`.
    pub fn kind(&self, name: &str) -> Option<&'static KindInfo<B>> {
        self.kinds.iter().find(|k| k.rules.kind == name)
    }

    /// The exchange a request of `kind` opens, if it is a request.
    pub fn exchange(&self, kind: &str) -> Option<&'static Exchange> {
        self.exchanges.iter().find(|e| e.kind == kind)
    }

    /// The profile's code for a runtime refusal (a [`ReasonCode`] or a correlation refusal, by
    /// name), if it declares one.
    pub fn refusal_code(&self, refusal: &str) -> Option<&'static str> {
        self.refusal_codes
            .iter()
            .find(|r| r.refusal == refusal)
            .map(|r| r.code)
    }

    /// Parser options with this profile's limits (size, replay age) at `now` (Unix seconds).
    pub fn options(&self, now: i64) -> Options {
        Options {
            replay_age_secs: self.replay_age_secs,
            max_bytes: self.max_bytes,
            ..Options::at(now)
        }
    }

    /// Whether a parsed JSON object carries this profile's marker member (`protocol`, `v`),
    /// whatever its value: what tells one profile's envelopes from another's.
    pub fn claims(&self, envelope: &Map<String, Value>) -> bool {
        self.profile_member
            .is_some_and(|m| envelope.contains_key(m))
    }
}

/// A generated envelope view (`EnvelopeRef`): its members by JSON name.
pub trait EnvelopeView {
    /// The member named `name` (`Absent` when absent or `null`).
    fn member(&self, name: &str) -> Member<'_>;
}

/// A schema set as the runtime uses it; implemented by the generated `profile::Profile`.
pub trait Profile: Sized + 'static {
    /// The generated typed envelope.
    type Envelope: serde::Serialize + serde::de::DeserializeOwned + Clone + fmt::Debug;
    /// The generated borrowed envelope view.
    type EnvelopeRef<'a>: EnvelopeView + Clone + fmt::Debug;
    /// The generated `KnownBody`.
    type Body: Clone + fmt::Debug + 'static;
    /// The set's tables.
    const SPEC: Spec<Self::Body>;
    /// The recipes its kinds' `x-agh-kind.verify` name (none by default: a generated profile
    /// whose kinds name a recipe is given its table by the crate that defines the recipe).
    const RECIPES: &'static [Recipe] = &[];
    /// The generated envelope scanner (see the generated `scan_envelope`).
    fn scan_envelope<'a>(
        s: &mut Scanner<'a>,
        body: &mut dyn FnMut(&mut Scanner<'a>, Option<&str>) -> Option<()>,
    ) -> Option<Self::EnvelopeRef<'a>>;
    /// The generated envelope validator.
    fn check_envelope(v: &Value, at: &mut String, out: &mut Problems);
    /// The body member of a checked envelope view, as its JSON text (`None`: absent or `null`).
    fn body_of<'a>(envelope: &Self::EnvelopeRef<'a>) -> Option<RawJson<'a>>;
    /// A typed body as JSON.
    fn body_to_value(body: &Self::Body) -> Result<Value, serde_json::Error>;
}

/// Parses and validates one envelope of profile `P` into a view borrowed from `bytes`: the
/// generated scanners decide in one pass; a declined envelope is read again by the generated
/// validators, whose first problem in the validation order is the rejection.
pub fn parse_ref<'a, P: Profile>(
    bytes: &'a [u8],
    options: &Options,
) -> Result<MessageRef<'a, P>, Rejection> {
    match scan::<P>(bytes, options) {
        Some(message) => Ok(message),
        None => Err(diagnose::<P>(bytes, options)),
    }
}

/// Parses and validates one envelope of profile `P` into an owned [`Message`].
pub fn parse<P: Profile>(bytes: &[u8], options: &Options) -> Result<Message<P>, Rejection> {
    parse_ref::<P>(bytes, options)?.to_message()
}

/// Every problem of one envelope of profile `P`, in the validation order.
pub fn explain<P: Profile>(bytes: &[u8], options: &Options) -> Vec<Problem> {
    let mut problems = Problems::all();
    let _ = check::<P>(bytes, options, &mut problems);
    problems.into_vec()
}

/// The fast path's verdict alone (for differential tests against [`explain`]).
#[doc(hidden)]
pub fn fast_accepts<P: Profile>(bytes: &[u8], options: &Options) -> bool {
    scan::<P>(bytes, options).is_some()
}
