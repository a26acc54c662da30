//! The model (IR) of a schema set: what the Rust, validator and docs emitters read.
//!
//! Everything here is derived from the schema set; nothing about particular kinds is built in.
//! Named types are the file root schemas that describe a value and every `$defs` entry; each gets
//! a Rust name from its `title` (else its `$defs` key or file stem), in upper camel case.

use std::collections::BTreeMap;

use heck::{ToPascalCase, ToSnakeCase};
use serde_json::{Map, Value};

use crate::error::{join_pointer, Result};
use crate::load::{Location, SchemaSet};

/// A JSON type named by a schema's `type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum JsonType {
    /// `string`
    String,
    /// `integer` (a JSON number without a fraction or exponent)
    Integer,
    /// `number`
    Number,
    /// `boolean`
    Boolean,
    /// `object`
    Object,
    /// `array`
    Array,
}

impl JsonType {
    /// Parses a schema `type` name (not `null`).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "string" => JsonType::String,
            "integer" => JsonType::Integer,
            "number" => JsonType::Number,
            "boolean" => JsonType::Boolean,
            "object" => JsonType::Object,
            "array" => JsonType::Array,
            _ => return None,
        })
    }

    /// The schema spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            JsonType::String => "string",
            JsonType::Integer => "integer",
            JsonType::Number => "number",
            JsonType::Boolean => "boolean",
            JsonType::Object => "object",
            JsonType::Array => "array",
        }
    }
}

/// Value constraints of a schema (only those the schema states).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Constraints {
    /// `pattern` (ECMA-262 regular expression, unanchored unless it says `^`/`$`).
    pub pattern: Option<String>,
    /// `minLength` in characters.
    pub min_length: Option<u64>,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `const`.
    pub const_value: Option<Value>,
    /// `enum`, in schema order.
    pub enum_values: Option<Vec<Value>>,
    /// `minItems`.
    pub min_items: Option<u64>,
    /// `uniqueItems`.
    pub unique_items: bool,
    /// `x-agh-unique-after`: entries must be unique after this normalization (`trim`).
    pub unique_after: Option<String>,
    /// `x-agh-digest`: the member holds the digest computed by this recipe over its parent.
    pub digest: Option<String>,
    /// `x-agh-reason-code`: the reason code when a value of the right type fails `const`/`enum`
    /// (default `malformed`).
    pub reason_code: Option<String>,
}

/// The shape of one schema: a reference to a named type or an inline type.
#[derive(Clone, Debug, PartialEq)]
pub struct Shape {
    /// The Rust name of the named type this schema refers to (`$ref`); its constraints are those
    /// of that type (see [`Model::resolve`]).
    pub ref_type: Option<String>,
    /// The non-null JSON types allowed (empty: any type).
    pub types: Vec<JsonType>,
    /// Whether `null` is allowed (`["T", "null"]` or `anyOf: [.., {type: null}]`).
    pub nullable: bool,
    /// Value constraints.
    pub constraints: Constraints,
    /// Object members, when the schema describes an object.
    pub object: Option<ObjectShape>,
    /// The item schema, when the schema describes an array.
    pub items: Option<Box<Shape>>,
}

/// The members of an object schema.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectShape {
    /// Declared members, in schema order.
    pub fields: Vec<Field>,
    /// `true` unless `additionalProperties: false`: unknown members are ignored by validation
    /// and preserved on re-serialization.
    pub open: bool,
}

/// One declared member of an object.
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    /// The JSON member name.
    pub json_name: String,
    /// The Rust field name typify gives it.
    pub rust_name: String,
    /// Listed in `required`.
    pub required: bool,
    /// The member's `description`.
    pub description: String,
    /// The member's schema.
    pub shape: Shape,
    /// `x-agh-serialize-null`: when absent, the member is still written, as `null`.
    pub serialize_null: bool,
    /// `x-agh-trust`: the member carries proofs of these trust profiles.
    pub trust: Vec<TrustProfile>,
    /// The member's `default`, if it has one (typify then types an optional member without
    /// `Option`).
    pub default: Option<Value>,
}

/// A trust profile whose proofs a member carries (`x-agh-trust` entries).
#[derive(Clone, Debug, PartialEq)]
pub struct TrustProfile {
    /// The profile identifier (`proof.profile`).
    pub profile: String,
    /// The Rust type of the proof object of this profile (the referenced schema's title).
    pub proof_type: String,
    /// The verification recipe's name (`agh_protocol::trust`).
    pub recipe: String,
}

impl Field {
    /// Whether `null` is an allowed value.
    pub fn nullable(&self) -> bool {
        self.shape.nullable
    }
}

/// A named type: a file root or a `$defs` entry.
#[derive(Clone, Debug, PartialEq)]
pub struct NamedType {
    /// The Rust type name.
    pub rust_name: String,
    /// Where it is defined.
    pub location: Location,
    /// The file it is defined in (relative path, for docs and errors).
    pub file: String,
    /// `title`, if any.
    pub title: Option<String>,
    /// `description`.
    pub description: String,
    /// Its shape.
    pub shape: Shape,
}

/// An envelope presence rule (`x-agh-kind` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Presence {
    /// `required`
    Required,
    /// `recommended`
    Recommended,
    /// `optional`
    Optional,
    /// `forbidden`
    Forbidden,
}

impl Presence {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "required" => Presence::Required,
            "recommended" => Presence::Recommended,
            "optional" => Presence::Optional,
            "forbidden" => Presence::Forbidden,
            _ => return None,
        })
    }

    /// The annotation spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Presence::Required => "required",
            Presence::Recommended => "recommended",
            Presence::Optional => "optional",
            Presence::Forbidden => "forbidden",
        }
    }

    /// The `agh_protocol::Presence` variant name.
    pub fn variant(self) -> &'static str {
        match self {
            Presence::Required => "Required",
            Presence::Recommended => "Recommended",
            Presence::Optional => "Optional",
            Presence::Forbidden => "Forbidden",
        }
    }
}

/// A kind's lifecycle role (`x-agh-kind.work`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WorkRole {
    /// `none`
    None,
    /// `opens`
    Opens,
    /// `updates`
    Updates,
}

impl WorkRole {
    /// The annotation spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            WorkRole::None => "none",
            WorkRole::Opens => "opens",
            WorkRole::Updates => "updates",
        }
    }

    /// The `agh_protocol::WorkRole` variant name.
    pub fn variant(self) -> &'static str {
        match self {
            WorkRole::None => "None",
            WorkRole::Opens => "Opens",
            WorkRole::Updates => "Updates",
        }
    }
}

/// `envelope_match` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvelopeMatch {
    /// JSON Pointer into the body.
    pub body: String,
    /// Envelope member name.
    pub envelope: String,
}

/// `verify` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verify {
    /// JSON Pointer into the body.
    pub body: String,
    /// Recipe name.
    pub recipe: String,
    /// Reason code on failure.
    pub reason_code: String,
}

/// The envelope rules of one kind (`x-agh-kind`), mirroring `agh_protocol::KindRules`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindRules {
    /// Envelope `kind` value.
    pub kind: String,
    /// Protocol profile (`x-agh-kind.profile`, else the envelope's profile constant).
    pub profile: String,
    /// `surface` rule.
    pub surface: Presence,
    /// `work_id` rule.
    pub work_id: Presence,
    /// `to` rule.
    pub to: Presence,
    /// The rule of the correlation member (role `reply_to`: `reply_to` in v0, `ref` in ACP).
    pub reply_to: Presence,
    /// Whether the body member must be present (from the envelope's `required` or the dispatch
    /// entry: `then.required` lists it, or `anyOf: [{$ref}, {"type": "null"}]` makes it optional).
    pub body: Presence,
    /// Lifecycle role.
    pub work: WorkRole,
    /// Body members that must equal envelope members.
    pub envelope_match: Vec<EnvelopeMatch>,
    /// Recipe checks.
    pub verify: Vec<Verify>,
}

/// The `if` of a conditional rule: the body member `member` equals one of `values`.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    /// Body member name.
    pub member: String,
    /// Values (from `const` or `enum`).
    pub values: Vec<Value>,
}

/// Envelope rules that hold while a condition holds (`x-agh-envelope` inside `then`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EnvelopeOverrides {
    /// Overrides the kind's `to` rule.
    pub to: Option<Presence>,
    /// Overrides the kind's `reply_to` rule.
    pub reply_to: Option<Presence>,
}

/// One conditional rule of a body (restricted `if`/`then` form, see `schemas/README.md`).
#[derive(Clone, Debug, PartialEq)]
pub struct Conditional {
    /// Where the rule is written (for docs and messages).
    pub pointer: String,
    /// When it applies.
    pub when: Condition,
    /// Members that must be present.
    pub required: Vec<String>,
    /// Members that must be absent or null (`{"type": "null"}`).
    pub absent: Vec<String>,
    /// Members that, when present, must have this type.
    pub typed: Vec<(String, JsonType)>,
    /// Envelope overrides.
    pub envelope: EnvelopeOverrides,
}

/// One message kind.
#[derive(Clone, Debug, PartialEq)]
pub struct Kind {
    /// The `kind` value.
    pub name: String,
    /// One-line purpose (docs).
    pub purpose: String,
    /// Rust name of the body type.
    pub body_type: String,
    /// Relative path of the body schema file.
    pub body_file: String,
    /// Envelope rules.
    pub rules: KindRules,
    /// Conditional body rules, in schema order.
    pub conditionals: Vec<Conditional>,
    /// The request/response exchange this kind opens (`x-agh-kind.exchange`), if it is a request.
    pub exchange: Option<Exchange>,
    /// The kinds of message this kind's correlation member must name (`x-agh-kind.refers_to`:
    /// a `cancel` names a `delegate`); empty when it answers a request or names nothing.
    pub refers_to: Vec<String>,
    /// Whether a message of this kind may name any message in its correlation member
    /// (`x-agh-kind.answers_any`: ACP's `error`, "sent at any time for any ref"): it moves the
    /// exchange it names when a reply rule takes it, and is otherwise delivered unrelated.
    pub answers_any: bool,
}

/// The built-in state every exchange starts in.
pub const EXCHANGE_OPEN: &str = "open";
/// The built-in final state of every exchange.
pub const EXCHANGE_ANSWERED: &str = "answered";

/// One state of an exchange besides the built-in `open` and `answered`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExchangeState {
    /// The state name.
    pub name: String,
    /// What it means (docs).
    pub description: String,
    /// Whether a reply is still awaited in it (the deadline applies).
    pub awaiting: bool,
}

/// A condition on a top-level body member: it equals `value`.
#[derive(Clone, Debug, PartialEq)]
pub struct MemberIs {
    /// Top-level member name.
    pub member: String,
    /// The value it must have (a string, a boolean or a number).
    pub value: Value,
}

/// One reply rule of an exchange: a reply of `kind`, while the exchange is in one of `states`,
/// whose body matches `when` and whose request's body matched `request`, moves it to `to`.
#[derive(Clone, Debug, PartialEq)]
pub struct ReplyRule {
    /// The reply kind.
    pub kind: String,
    /// The states it applies in (default: `open`).
    pub states: Vec<String>,
    /// Conditions on the reply's body.
    pub when: Vec<MemberIs>,
    /// Conditions on the request's body.
    pub request: Vec<MemberIs>,
    /// The state after.
    pub to: String,
}

/// The request/response exchange a request kind opens (`x-agh-kind.exchange`).
#[derive(Clone, Debug, PartialEq)]
pub struct Exchange {
    /// Whether a reply is expected in `open` (false: replies are possible, none is awaited).
    pub expects_reply: bool,
    /// The request body member (JSON Pointer) that gives the reply deadline, in milliseconds
    /// counted from the request's sent time.
    pub deadline: Option<String>,
    /// The deadline when the member is absent (its schema `default`).
    pub default_deadline: Option<u64>,
    /// States besides `open` and `answered`.
    pub states: Vec<ExchangeState>,
    /// Reply rules, tried in order.
    pub replies: Vec<ReplyRule>,
}

/// A forbidden member or kind with its specific message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forbidden {
    /// The name.
    pub name: String,
    /// The message.
    pub message: String,
}

/// Envelope limits (`x-agh-envelope` at the envelope root).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvelopeLimits {
    /// Maximum serialized size in bytes.
    pub max_bytes: u64,
    /// Default replay age in seconds.
    pub replay_age_seconds: u64,
    /// Legacy members rejected with a specific message.
    pub forbidden_members: Vec<Forbidden>,
    /// Kind names rejected with a specific message.
    pub forbidden_kinds: Vec<Forbidden>,
    /// The validation order (docs).
    pub validation_order: Vec<String>,
}

/// The envelope.
#[derive(Clone, Debug, PartialEq)]
pub struct Envelope {
    /// Rust name of the envelope type.
    pub type_name: String,
    /// Relative path of the envelope schema file.
    pub file: String,
    /// Description.
    pub description: String,
    /// Members in schema order.
    pub members: Vec<Field>,
    /// `false` when `additionalProperties: false`.
    pub open: bool,
    /// Limits.
    pub limits: EnvelopeLimits,
    /// The member that selects the body schema (named in the `allOf` dispatch).
    pub kind_member: String,
    /// The member that holds the body.
    pub body_member: String,
    /// The profile name: `x-agh-envelope.profile`, else the one envelope member with a `const`
    /// string value.
    pub profile: Option<String>,
    /// The member whose `const` names the profile or version (`protocol` in v0, `v` in ACP):
    /// the member that tells one profile's envelopes from another's.
    pub profile_member: Option<String>,
    /// Which envelope member plays each role the runtime knows (`x-agh-envelope.roles`).
    pub roles: Roles,
    /// The unit of the time roles (`x-agh-envelope.clock`).
    pub clock: Clock,
}

/// The envelope members that play the runtime's roles (`x-agh-envelope.roles`); a role the set
/// does not have is `None` (ACP has no `work_id` and no `expires_at`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Roles {
    /// The message id.
    pub id: Option<String>,
    /// The sender.
    pub from: Option<String>,
    /// The target peer.
    pub to: Option<String>,
    /// The correlation member: the id of the message this one answers.
    pub reply_to: Option<String>,
    /// The work unit id (lifecycle).
    pub work_id: Option<String>,
    /// The sender's clock.
    pub sent_at: Option<String>,
    /// The expiry time.
    pub expires_at: Option<String>,
}

impl Roles {
    /// `(role, member)` for every role the set has, in a fixed order.
    pub fn entries(&self) -> Vec<(&'static str, &str)> {
        let mut out = Vec::new();
        for (role, member) in [
            ("id", &self.id),
            ("from", &self.from),
            ("to", &self.to),
            ("reply_to", &self.reply_to),
            ("work_id", &self.work_id),
            ("sent_at", &self.sent_at),
            ("expires_at", &self.expires_at),
        ] {
            if let Some(m) = member {
                out.push((role, m.as_str()));
            }
        }
        out
    }

    /// The role a member plays, if any.
    pub fn role_of(&self, member: &str) -> Option<&'static str> {
        self.entries()
            .into_iter()
            .find(|(_, m)| *m == member)
            .map(|(r, _)| r)
    }
}

/// The unit of the envelope's time members.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Clock {
    /// Unix seconds (v0).
    #[default]
    Seconds,
    /// Unix milliseconds (ACP).
    Milliseconds,
}

impl Clock {
    /// The annotation spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Clock::Seconds => "seconds",
            Clock::Milliseconds => "milliseconds",
        }
    }

    /// The `agh_protocol::model::Clock` variant name.
    pub fn variant(self) -> &'static str {
        match self {
            Clock::Seconds => "Seconds",
            Clock::Milliseconds => "Milliseconds",
        }
    }
}

/// How the runtime's refusals are spelled in this set (`x-agh-refusal-codes`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RefusalCodes {
    /// Rust name of the code type.
    pub type_name: String,
    /// `(runtime code, this set's code)` in schema order.
    pub entries: Vec<(String, String)>,
}

impl Envelope {
    /// The member named `name`.
    pub fn member(&self, name: &str) -> Option<&Field> {
        self.members.iter().find(|m| m.json_name == name)
    }
}

/// One enum value with its description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnumValue {
    /// The value.
    pub value: String,
    /// Its meaning.
    pub description: String,
}

/// An enum with per-value descriptions (`x-agh-enum-descriptions`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnumDoc {
    /// Rust name of the enum type.
    pub type_name: String,
    /// Description of the type.
    pub description: String,
    /// Values in `enum` order.
    pub values: Vec<EnumValue>,
}

/// Known values of an open string type (`x-agh-known-values`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KnownValues {
    /// Rust name of the string type.
    pub type_name: String,
    /// Description of the type.
    pub description: String,
    /// Values in schema order.
    pub values: Vec<EnumValue>,
}

/// Surface containers (`x-agh-container`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Containers {
    /// Rust name of the surface type.
    pub type_name: String,
    /// The envelope member holding the surface.
    pub member: String,
    /// `(surface value, container member)` in schema order.
    pub entries: Vec<(String, String)>,
}

/// Who sent a lifecycle trigger.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sender {
    /// The peer that opened the work.
    Initiator,
    /// The peer the work was directed to.
    Target,
}

impl Sender {
    /// The annotation spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Sender::Initiator => "initiator",
            Sender::Target => "target",
        }
    }
}

/// A lifecycle trigger: a message of `kind`, optionally carrying `body_match` and from `sender`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Trigger {
    /// The kind.
    pub kind: String,
    /// `(body member, value)` the message must carry (receipt `status`, trace `state`).
    pub body_match: Option<(String, String)>,
    /// The required sender role.
    pub sender: Option<Sender>,
}

/// One lifecycle transition.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Transition {
    /// From state.
    pub from: String,
    /// To state.
    pub to: String,
    /// Triggers.
    pub on: Vec<Trigger>,
}

/// The work lifecycle (`x-agh-lifecycle`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lifecycle {
    /// Rust name of the state type.
    pub type_name: String,
    /// States in `enum` order, with descriptions when given.
    pub states: Vec<EnumValue>,
    /// Initial state.
    pub initial: String,
    /// Terminal states.
    pub terminal: Vec<String>,
    /// Kinds that open work.
    pub opened_by: Vec<String>,
    /// Transitions in schema order.
    pub transitions: Vec<Transition>,
}

/// The whole model.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    /// The envelope.
    pub envelope: Envelope,
    /// Every named type, ordered by Rust name.
    pub types: Vec<NamedType>,
    /// The kinds, in envelope `kind` enum order.
    pub kinds: Vec<Kind>,
    /// Surface containers, if the set declares them.
    pub containers: Option<Containers>,
    /// Enums with value descriptions, ordered by type name.
    pub enums: Vec<EnumDoc>,
    /// Known-value sets, ordered by type name.
    pub known_values: Vec<KnownValues>,
    /// The lifecycle, if the set declares one.
    pub lifecycle: Option<Lifecycle>,
    /// The spelling of the runtime's refusals, if the set declares one.
    pub refusal_codes: Option<RefusalCodes>,
}

impl Model {
    /// The named type with this Rust name.
    pub fn named(&self, rust_name: &str) -> Option<&NamedType> {
        self.types.iter().find(|t| t.rust_name == rust_name)
    }

    /// Follows `ref_type` links to the shape that carries the constraints.
    pub fn resolve<'a>(&'a self, shape: &'a Shape) -> &'a Shape {
        let mut s = shape;
        for _ in 0..32 {
            match s.ref_type.as_deref().and_then(|n| self.named(n)) {
                Some(t) => s = &t.shape,
                None => break,
            }
        }
        s
    }

    /// The kind named `name`.
    pub fn kind(&self, name: &str) -> Option<&Kind> {
        self.kinds.iter().find(|k| k.name == name)
    }

    /// Builds the model from a loaded set (and checks its consistency).
    pub fn build(set: &SchemaSet) -> Result<Model> {
        Builder::new(set)?.build()
    }
}

/// A named type's Rust name from a title or key, as typify spells it.
pub fn rust_type_name(s: &str) -> String {
    sanitize(s, true)
}

/// A member's Rust field name, as typify spells it.
pub fn rust_field_name(s: &str) -> String {
    sanitize(s, false)
}

fn sanitize(input: &str, pascal: bool) -> String {
    let cleaned: String = input
        .replace('\'', "")
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let out = if pascal {
        cleaned.to_pascal_case()
    } else {
        cleaned.to_snake_case()
    };
    let out = match out.chars().next() {
        None => if pascal { "X" } else { "x" }.to_string(),
        Some(c) if c.is_alphabetic() || c == '_' => out,
        Some(_) => format!("{}{out}", if pascal { "X" } else { "x" }),
    };
    if is_keyword(&out) {
        format!("{out}_")
    } else {
        out
    }
}

fn is_keyword(s: &str) -> bool {
    matches!(
        s,
        "_" | "abstract"
            | "as"
            | "async"
            | "await"
            | "become"
            | "box"
            | "break"
            | "const"
            | "continue"
            | "crate"
            | "do"
            | "dyn"
            | "else"
            | "enum"
            | "extern"
            | "false"
            | "final"
            | "fn"
            | "for"
            | "gen"
            | "if"
            | "impl"
            | "in"
            | "let"
            | "loop"
            | "macro"
            | "match"
            | "mod"
            | "move"
            | "mut"
            | "override"
            | "priv"
            | "pub"
            | "ref"
            | "return"
            | "Self"
            | "self"
            | "static"
            | "struct"
            | "super"
            | "trait"
            | "true"
            | "try"
            | "type"
            | "typeof"
            | "unsafe"
            | "unsized"
            | "use"
            | "virtual"
            | "where"
            | "while"
            | "yield"
    )
}

/// Whether a file root schema describes a value (rather than only holding `$defs`).
fn root_is_type(doc: &Value) -> bool {
    [
        "type",
        "properties",
        "$ref",
        "anyOf",
        "oneOf",
        "enum",
        "const",
        "items",
    ]
    .iter()
    .any(|k| doc.get(k).is_some())
}

/// Every named-type site of a set, as `(location, rust name)`, in file order.
pub(crate) fn type_sites(set: &SchemaSet) -> Result<Vec<(Location, String)>> {
    let mut sites = Vec::new();
    let mut names: BTreeMap<String, Location> = BTreeMap::new();
    for file in set.files() {
        let mut add = |pointer: String, schema: &Value, fallback: &str| -> Result<()> {
            let base = match schema.get("title") {
                Some(Value::String(t)) => t.clone(),
                _ => fallback.to_string(),
            };
            let name = rust_type_name(&base);
            let loc = Location {
                id: file.id.clone(),
                pointer: pointer.clone(),
            };
            if let Some(prev) = names.get(&name) {
                return Err(set.error(
                    &file.id,
                    &pointer,
                    format!(
                        "type name {name} is also used by {}#{}; give one of them another `title`",
                        set.path_of(&prev.id).display(),
                        prev.pointer
                    ),
                ));
            }
            names.insert(name.clone(), loc.clone());
            sites.push((loc, name));
            Ok(())
        };
        if root_is_type(&file.doc) {
            let stem = file
                .path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let stem = stem.split('.').next().unwrap_or_default().to_string();
            add(String::new(), &file.doc, &stem)?;
        }
        if let Some(defs) = file.doc.get("$defs") {
            let Value::Object(defs) = defs else {
                return Err(set.error(&file.id, "/$defs", "`$defs` must be an object"));
            };
            for (key, schema) in defs {
                add(join_pointer("/$defs", key), schema, key)?;
            }
        }
    }
    Ok(sites)
}

struct Builder<'a> {
    set: &'a SchemaSet,
    sites: BTreeMap<Location, String>,
    order: Vec<(Location, String)>,
}

fn str_list(v: &Value) -> Option<Vec<String>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_str().map(str::to_string))
        .collect()
}

impl<'a> Builder<'a> {
    fn new(set: &'a SchemaSet) -> Result<Self> {
        let order = type_sites(set)?;
        let sites = order.iter().cloned().collect();
        Ok(Builder { set, sites, order })
    }

    /// `x-agh-trust`: `[{"profile": ID, "proof": "<schema file>", "recipe": NAME}]`.
    fn trust_profiles(&self, id: &str, ptr: &str, prop: &Value) -> Result<Vec<TrustProfile>> {
        let Some(v) = prop.get("x-agh-trust") else {
            return Ok(Vec::new());
        };
        let at = join_pointer(ptr, "x-agh-trust");
        let bad = || {
            self.err(
                id,
                &at,
                "`x-agh-trust` must be a list of {\"profile\", \"proof\", \"recipe\"} strings",
            )
        };
        let Value::Array(items) = v else {
            return Err(bad());
        };
        let mut out = Vec::new();
        for item in items {
            let get = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_owned);
            let (Some(profile), Some(proof), Some(recipe)) =
                (get("profile"), get("proof"), get("recipe"))
            else {
                return Err(bad());
            };
            // The proof schema is a file of the set: its title names the generated type.
            let proof_type = self
                .set
                .files()
                .find(|f| f.path == std::path::Path::new(&proof))
                .and_then(|f| f.doc.get("title").and_then(Value::as_str))
                .map(str::to_owned)
                .ok_or_else(|| {
                    self.err(
                        id,
                        &at,
                        format!("`x-agh-trust` names `{proof}`, no titled schema of this set"),
                    )
                })?;
            out.push(TrustProfile {
                profile,
                proof_type,
                recipe,
            });
        }
        Ok(out)
    }
    fn err(&self, id: &str, ptr: &str, msg: impl Into<String>) -> crate::error::Error {
        self.set.error(id, ptr, msg)
    }

    fn shape(&self, id: &str, ptr: &str, v: &Value, depth: usize) -> Result<Shape> {
        if depth > 64 {
            return Err(self.err(id, ptr, "schema nesting too deep (reference cycle?)"));
        }
        let mut shape = Shape {
            ref_type: None,
            types: Vec::new(),
            nullable: false,
            constraints: Constraints::default(),
            object: None,
            items: None,
        };
        let Value::Object(map) = v else {
            if v == &Value::Bool(true) {
                return Ok(shape);
            }
            return Err(self.err(id, ptr, "expected a schema object"));
        };
        if let Some(k) = UNSUPPORTED_KEYWORDS.iter().find(|k| map.contains_key(**k)) {
            return Err(self.err(
                id,
                &join_pointer(ptr, k),
                format!(
                    "`{k}` is not supported by codegen: the generated validators and scanners \
                     would not check it (supported: {}; schemas/README.md)",
                    SUPPORTED_KEYWORDS.join(", ")
                ),
            ));
        }
        if let Some(Value::String(r)) = map.get("$ref") {
            let p = join_pointer(ptr, "$ref");
            let loc = self.set.resolve_ref(id, &p, r)?;
            match self.sites.get(&loc) {
                Some(name) => shape.ref_type = Some(name.clone()),
                None => {
                    let target = self.set.get(&loc).cloned().unwrap_or(Value::Null);
                    let inner = self.shape(&loc.id, &loc.pointer, &target, depth + 1)?;
                    shape = inner;
                }
            }
        }
        if let Some(any) = map.get("anyOf").or_else(|| map.get("oneOf")) {
            let key = if map.contains_key("anyOf") {
                "anyOf"
            } else {
                "oneOf"
            };
            let p = join_pointer(ptr, key);
            let Some(items) = any.as_array() else {
                return Err(self.err(id, &p, "must be an array"));
            };
            let is_null = |s: &Value| s.get("type") == Some(&Value::String("null".into()));
            let non_null: Vec<(usize, &Value)> = items
                .iter()
                .enumerate()
                .filter(|(_, s)| !is_null(s))
                .collect();
            if non_null.len() != 1 || items.len() != 2 {
                return Err(self.err(
                    id,
                    &p,
                    format!("only `{key}: [<schema>, {{\"type\": \"null\"}}]` (a nullable member) is supported"),
                ));
            }
            let (i, inner) = non_null[0];
            let inner = self.shape(id, &join_pointer(&p, &i.to_string()), inner, depth + 1)?;
            shape = inner;
            shape.nullable = true;
        }
        match map.get("type") {
            Some(Value::String(t)) => self.push_type(id, ptr, &mut shape, t)?,
            Some(Value::Array(ts)) => {
                for t in ts {
                    let Some(t) = t.as_str() else {
                        return Err(self.err(
                            id,
                            &join_pointer(ptr, "type"),
                            "type names must be strings",
                        ));
                    };
                    self.push_type(id, ptr, &mut shape, t)?;
                }
            }
            Some(_) => return Err(self.err(id, &join_pointer(ptr, "type"), "invalid `type`")),
            None => {}
        }
        let c = &mut shape.constraints;
        if let Some(Value::String(p)) = map.get("pattern") {
            c.pattern = Some(p.clone());
        }
        if let Some(n) = map.get("minLength").and_then(Value::as_u64) {
            c.min_length = Some(n);
        }
        if let Some(n) = map.get("minimum").and_then(Value::as_f64) {
            c.minimum = Some(n);
        }
        if let Some(n) = map.get("maximum").and_then(Value::as_f64) {
            c.maximum = Some(n);
        }
        if let Some(v) = map.get("const") {
            c.const_value = Some(v.clone());
        }
        if let Some(Value::Array(vs)) = map.get("enum") {
            c.enum_values = Some(vs.clone());
        }
        if let Some(n) = map.get("minItems").and_then(Value::as_u64) {
            c.min_items = Some(n);
        }
        if map.get("uniqueItems") == Some(&Value::Bool(true)) {
            c.unique_items = true;
        }
        if let Some(v) = map.get("x-agh-unique-after") {
            match v.as_str() {
                Some("trim") => c.unique_after = Some("trim".into()),
                _ => {
                    return Err(self.err(
                        id,
                        &join_pointer(ptr, "x-agh-unique-after"),
                        "`x-agh-unique-after` must be \"trim\"",
                    ))
                }
            }
        }
        if let Some(v) = map.get("x-agh-reason-code") {
            match v.as_str() {
                Some(r) if !r.is_empty() => c.reason_code = Some(r.to_string()),
                _ => {
                    return Err(self.err(
                        id,
                        &join_pointer(ptr, "x-agh-reason-code"),
                        "`x-agh-reason-code` must name a reason code",
                    ))
                }
            }
        }
        if let Some(v) = map.get("x-agh-digest") {
            match v.as_str() {
                Some(r) if !r.is_empty() => c.digest = Some(r.to_string()),
                _ => {
                    return Err(self.err(
                        id,
                        &join_pointer(ptr, "x-agh-digest"),
                        "`x-agh-digest` must name a recipe",
                    ))
                }
            }
        }
        if let Some(items) = map.get("items") {
            let item = self.shape(id, &join_pointer(ptr, "items"), items, depth + 1)?;
            shape.items = Some(Box::new(item));
        }
        if map.contains_key("properties") || shape.types.contains(&JsonType::Object) {
            shape.object = Some(self.object(id, ptr, map, depth)?);
        }
        Ok(shape)
    }

    fn push_type(&self, id: &str, ptr: &str, shape: &mut Shape, t: &str) -> Result<()> {
        if t == "null" {
            shape.nullable = true;
            return Ok(());
        }
        match JsonType::parse(t) {
            Some(jt) => {
                if !shape.types.contains(&jt) {
                    shape.types.push(jt);
                }
                Ok(())
            }
            None => Err(self.err(
                id,
                &join_pointer(ptr, "type"),
                format!("unknown type {t:?}"),
            )),
        }
    }

    fn object(
        &self,
        id: &str,
        ptr: &str,
        map: &Map<String, Value>,
        depth: usize,
    ) -> Result<ObjectShape> {
        let required = match map.get("required") {
            Some(v) => str_list(v).ok_or_else(|| {
                self.err(
                    id,
                    &join_pointer(ptr, "required"),
                    "`required` must list member names",
                )
            })?,
            None => Vec::new(),
        };
        let mut fields = Vec::new();
        if let Some(props) = map.get("properties") {
            let pp = join_pointer(ptr, "properties");
            let Value::Object(props) = props else {
                return Err(self.err(id, &pp, "`properties` must be an object"));
            };
            for (name, prop) in props {
                let p = join_pointer(&pp, name);
                let description = prop
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let serialize_null = match prop.get("x-agh-serialize-null") {
                    None => false,
                    Some(Value::Bool(b)) => *b,
                    Some(_) => {
                        return Err(self.err(
                            id,
                            &join_pointer(&p, "x-agh-serialize-null"),
                            "`x-agh-serialize-null` must be a boolean",
                        ))
                    }
                };
                let shape = self.shape(id, &p, prop, depth + 1)?;
                if serialize_null && !shape.nullable {
                    return Err(self.err(
                        id,
                        &join_pointer(&p, "x-agh-serialize-null"),
                        "`x-agh-serialize-null` needs a member that allows `null`",
                    ));
                }
                let trust = self.trust_profiles(id, &p, prop)?;
                fields.push(Field {
                    json_name: name.clone(),
                    rust_name: rust_field_name(name),
                    required: required.contains(name),
                    description,
                    shape,
                    serialize_null,
                    trust,
                    default: prop.get("default").cloned(),
                });
            }
        }
        for r in &required {
            if !fields.iter().any(|f| &f.json_name == r) {
                return Err(self.err(
                    id,
                    &join_pointer(ptr, "required"),
                    format!("required member `{r}` is not declared in `properties`"),
                ));
            }
        }
        let open = map.get("additionalProperties") != Some(&Value::Bool(false));
        Ok(ObjectShape { fields, open })
    }

    fn build(&self) -> Result<Model> {
        let mut types = Vec::new();
        for (loc, name) in &self.order {
            let schema = self.set.get(loc).cloned().unwrap_or(Value::Null);
            let shape = self.shape(&loc.id, &loc.pointer, &schema, 0)?;
            types.push(NamedType {
                rust_name: name.clone(),
                location: loc.clone(),
                file: self.set.path_of(&loc.id).to_string_lossy().into_owned(),
                title: schema
                    .get("title")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                description: schema
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                shape,
            });
        }
        types.sort_by(|a, b| a.rust_name.cmp(&b.rust_name));

        let mut enums = Vec::new();
        let mut known_values = Vec::new();
        let mut containers_raw = Vec::new();
        let mut lifecycle_raw = Vec::new();
        let mut refusal_raw = Vec::new();
        for t in &types {
            let Some(schema) = self.set.get(&t.location) else {
                continue;
            };
            let (id, ptr) = (&t.location.id, &t.location.pointer);
            if let Some(d) = schema.get("x-agh-enum-descriptions") {
                enums.push(EnumDoc {
                    type_name: t.rust_name.clone(),
                    description: t.description.clone(),
                    values: self.enum_descriptions(id, ptr, schema, d)?,
                });
            }
            if let Some(k) = schema.get("x-agh-known-values") {
                let p = join_pointer(ptr, "x-agh-known-values");
                let Value::Object(k) = k else {
                    return Err(self.err(
                        id,
                        &p,
                        "`x-agh-known-values` must map each value to its meaning",
                    ));
                };
                let mut values = Vec::new();
                for (code, meaning) in k {
                    let Some(meaning) = meaning.as_str() else {
                        return Err(self.err(
                            id,
                            &join_pointer(&p, code),
                            "the meaning must be a string",
                        ));
                    };
                    values.push(EnumValue {
                        value: code.clone(),
                        description: meaning.to_string(),
                    });
                }
                known_values.push(KnownValues {
                    type_name: t.rust_name.clone(),
                    description: t.description.clone(),
                    values,
                });
            }
            if let Some(c) = schema.get("x-agh-container") {
                containers_raw.push((t, c));
            }
            if let Some(l) = schema.get("x-agh-lifecycle") {
                lifecycle_raw.push((t, l));
            }
            if let Some(r) = schema.get("x-agh-refusal-codes") {
                refusal_raw.push((t, r));
            }
        }

        let envelope = self.envelope(&types)?;
        let containers = match containers_raw.as_slice() {
            [] => None,
            [(t, c)] => Some(self.containers(&envelope, t, c)?),
            [_, (t, _), ..] => {
                return Err(self.err(
                    &t.location.id,
                    &join_pointer(&t.location.pointer, "x-agh-container"),
                    "only one schema may declare `x-agh-container`",
                ))
            }
        };
        let refusal_codes = match refusal_raw.as_slice() {
            [] => None,
            [(t, r)] => Some(self.refusal_codes(t, r, &known_values)?),
            [_, (t, _), ..] => {
                return Err(self.err(
                    &t.location.id,
                    &join_pointer(&t.location.pointer, "x-agh-refusal-codes"),
                    "only one schema may declare `x-agh-refusal-codes`",
                ))
            }
        };
        let mut kinds = self.kinds(&envelope, &types, &known_values, containers.as_ref())?;
        self.exchanges(&envelope, &types, &mut kinds)?;
        let lifecycle = match lifecycle_raw.as_slice() {
            [] => None,
            [(t, l)] => Some(self.lifecycle(t, l, &kinds, &types, &enums)?),
            [_, (t, _), ..] => {
                return Err(self.err(
                    &t.location.id,
                    &join_pointer(&t.location.pointer, "x-agh-lifecycle"),
                    "only one schema may declare `x-agh-lifecycle`",
                ))
            }
        };
        let model = Model {
            envelope,
            types,
            kinds,
            containers,
            enums,
            known_values,
            lifecycle,
            refusal_codes,
        };
        Ok(model)
    }

    fn enum_descriptions(
        &self,
        id: &str,
        ptr: &str,
        schema: &Value,
        d: &Value,
    ) -> Result<Vec<EnumValue>> {
        let p = join_pointer(ptr, "x-agh-enum-descriptions");
        let Some(values) = schema.get("enum").and_then(str_list) else {
            return Err(self.err(
                id,
                &p,
                "`x-agh-enum-descriptions` needs a string `enum` beside it",
            ));
        };
        let Value::Object(d) = d else {
            return Err(self.err(
                id,
                &p,
                "`x-agh-enum-descriptions` must map each value to its meaning",
            ));
        };
        let mut out = Vec::new();
        for v in &values {
            match d.get(v).and_then(Value::as_str) {
                Some(text) => out.push(EnumValue {
                    value: v.clone(),
                    description: text.to_string(),
                }),
                None => {
                    return Err(self.err(id, &p, format!("no description for enum value {v:?}")))
                }
            }
        }
        for k in d.keys() {
            if !values.contains(k) {
                return Err(self.err(
                    id,
                    &join_pointer(&p, k),
                    format!("{k:?} is not a value of the `enum`"),
                ));
            }
        }
        Ok(out)
    }

    fn envelope(&self, types: &[NamedType]) -> Result<Envelope> {
        let mut found = self
            .set
            .files()
            .filter(|f| f.doc.get("x-agh-envelope").is_some());
        let Some(file) = found.next() else {
            return Err(crate::error::Error::new(
                self.set.dir(),
                "",
                "no schema file declares `x-agh-envelope` at its root (the envelope)",
            ));
        };
        if let Some(other) = found.next() {
            return Err(self.err(
                &other.id,
                "/x-agh-envelope",
                "only one schema file may be the envelope",
            ));
        }
        let id = &file.id;
        let Some(t) = types
            .iter()
            .find(|t| t.location.id == *id && t.location.pointer.is_empty())
        else {
            return Err(self.err(id, "", "the envelope must be an object schema"));
        };
        let Some(obj) = &t.shape.object else {
            return Err(self.err(id, "", "the envelope must be an object schema"));
        };
        let x = &file.doc["x-agh-envelope"];
        let xp = "/x-agh-envelope";
        const ENVELOPE_KEYS: &[&str] = &[
            "max_bytes",
            "replay_age_seconds",
            "forbidden_members",
            "forbidden_kinds",
            "validation_order",
            "profile",
            "roles",
            "clock",
        ];
        let Value::Object(xm) = x else {
            return Err(self.err(id, xp, "`x-agh-envelope` must be an object"));
        };
        for k in xm.keys() {
            if !ENVELOPE_KEYS.contains(&k.as_str()) {
                return Err(self.err(
                    id,
                    &join_pointer(xp, k),
                    format!(
                        "unknown `x-agh-envelope` member `{k}` (expected one of {})",
                        ENVELOPE_KEYS.join(", ")
                    ),
                ));
            }
        }
        let num = |k: &str| -> Result<u64> {
            x.get(k).and_then(Value::as_u64).ok_or_else(|| {
                self.err(
                    id,
                    &join_pointer(xp, k),
                    format!("`{k}` must be a non-negative integer"),
                )
            })
        };
        let forbidden = |k: &str| -> Result<Vec<Forbidden>> {
            match x.get(k) {
                None => Ok(Vec::new()),
                Some(Value::Object(m)) => m
                    .iter()
                    .map(|(name, msg)| {
                        msg.as_str()
                            .map(|s| Forbidden {
                                name: name.clone(),
                                message: s.to_string(),
                            })
                            .ok_or_else(|| {
                                self.err(
                                    id,
                                    &join_pointer(&join_pointer(xp, k), name),
                                    "the message must be a string",
                                )
                            })
                    })
                    .collect(),
                Some(_) => Err(self.err(
                    id,
                    &join_pointer(xp, k),
                    "must map each name to its message",
                )),
            }
        };
        let limits = EnvelopeLimits {
            max_bytes: num("max_bytes")?,
            replay_age_seconds: num("replay_age_seconds")?,
            forbidden_members: forbidden("forbidden_members")?,
            forbidden_kinds: forbidden("forbidden_kinds")?,
            validation_order: match x.get("validation_order") {
                None => Vec::new(),
                Some(v) => str_list(v).ok_or_else(|| {
                    self.err(
                        id,
                        &join_pointer(xp, "validation_order"),
                        "must be a list of strings",
                    )
                })?,
            },
        };
        for f in &limits.forbidden_members {
            if obj.fields.iter().any(|m| m.json_name == f.name) {
                return Err(self.err(
                    id,
                    &join_pointer(&join_pointer(xp, "forbidden_members"), &f.name),
                    format!(
                        "forbidden member `{}` is also declared in `properties`",
                        f.name
                    ),
                ));
            }
        }
        // The dispatch: every allOf entry names the selecting member and the body member.
        let mut kind_member: Option<String> = None;
        let mut body_member: Option<String> = None;
        if let Some(Value::Array(all)) = file.doc.get("allOf") {
            for (i, entry) in all.iter().enumerate() {
                let p = format!("/allOf/{i}");
                let (sel, _, body, _) = self.dispatch_entry(id, &p, entry)?;
                for (slot, val, what) in [
                    (&mut kind_member, sel, "select on"),
                    (&mut body_member, body, "route to"),
                ] {
                    match slot {
                        Some(prev) if *prev != val => {
                            return Err(self.err(
                                id,
                                &p,
                                format!("every dispatch entry must {what} the same member (`{prev}` vs `{val}`)"),
                            ))
                        }
                        _ => *slot = Some(val),
                    }
                }
            }
        }
        let (Some(kind_member), Some(body_member)) = (kind_member, body_member) else {
            return Err(self.err(
                id,
                "/allOf",
                "the envelope needs an `allOf` dispatch mapping each kind to its body schema",
            ));
        };
        for m in [&kind_member, &body_member] {
            if !obj.fields.iter().any(|f| &f.json_name == m) {
                return Err(self.err(
                    id,
                    "/allOf",
                    format!("dispatch member `{m}` is not an envelope member"),
                ));
            }
        }
        let consts: Vec<String> = obj
            .fields
            .iter()
            .filter_map(|f| {
                let mut s = &f.shape;
                while let Some(t) = s
                    .ref_type
                    .as_deref()
                    .and_then(|n| types.iter().find(|t| t.rust_name == n))
                {
                    s = &t.shape;
                }
                s.constraints
                    .const_value
                    .as_ref()?
                    .as_str()
                    .map(str::to_string)
            })
            .collect();
        let profile = match x.get("profile") {
            Some(Value::String(p)) if !p.is_empty() && !p.contains(char::is_whitespace) => {
                Some(p.clone())
            }
            Some(_) => {
                return Err(self.err(
                    id,
                    &join_pointer(xp, "profile"),
                    "`profile` must be a name without white space (e.g. \"acp/0.2\")",
                ))
            }
            None => match consts.as_slice() {
                [one] => Some(one.clone()),
                _ => None,
            },
        };
        let resolved = |f: &Field| {
            let mut s = &f.shape;
            while let Some(t) = s
                .ref_type
                .as_deref()
                .and_then(|n| types.iter().find(|t| t.rust_name == n))
            {
                s = &t.shape;
            }
            s.clone()
        };
        let profile_member = obj
            .fields
            .iter()
            .find(|f| resolved(f).constraints.const_value.is_some())
            .map(|f| f.json_name.clone());
        let (roles, clock) = self.roles(id, x, obj, &resolved)?;
        for m in [&kind_member, &body_member] {
            if let Some(role) = roles.role_of(m) {
                return Err(self.err(
                    id,
                    &join_pointer(xp, "roles"),
                    format!("`{m}` is the dispatch member; it cannot also play the role `{role}`"),
                ));
            }
        }
        Ok(Envelope {
            type_name: t.rust_name.clone(),
            file: t.file.clone(),
            description: t.description.clone(),
            members: obj.fields.clone(),
            open: obj.open,
            limits,
            kind_member,
            body_member,
            profile,
            profile_member,
            roles,
            clock,
        })
    }

    /// `x-agh-envelope.roles` and `clock`: which member plays each runtime role, checked against
    /// the members' types.
    fn roles(
        &self,
        id: &str,
        x: &Value,
        obj: &ObjectShape,
        resolved: &dyn Fn(&Field) -> Shape,
    ) -> Result<(Roles, Clock)> {
        let rp = "/x-agh-envelope/roles";
        let Some(Value::Object(m)) = x.get("roles") else {
            return Err(self.err(
                id,
                rp,
                "`x-agh-envelope.roles` must map the runtime's roles (id, from, to, reply_to, work_id, sent_at, expires_at) to envelope members",
            ));
        };
        const ROLES: &[(&str, JsonType)] = &[
            ("id", JsonType::String),
            ("from", JsonType::String),
            ("to", JsonType::String),
            ("reply_to", JsonType::String),
            ("work_id", JsonType::String),
            ("sent_at", JsonType::Integer),
            ("expires_at", JsonType::Integer),
        ];
        let mut roles = Roles::default();
        let mut seen: Vec<&str> = Vec::new();
        for (role, member) in m {
            let p = join_pointer(rp, role);
            let Some((_, ty)) = ROLES.iter().find(|(r, _)| r == role) else {
                return Err(self.err(
                    id,
                    &p,
                    format!(
                        "unknown role `{role}` (roles: {})",
                        ROLES.iter().map(|(r, _)| *r).collect::<Vec<_>>().join(", ")
                    ),
                ));
            };
            let Some(member) = member.as_str() else {
                return Err(self.err(id, &p, "a role names an envelope member (a string)"));
            };
            let Some(field) = obj.fields.iter().find(|f| f.json_name == member) else {
                return Err(self.err(id, &p, format!("`{member}` is not an envelope member")));
            };
            if seen.contains(&member) {
                return Err(self.err(id, &p, format!("`{member}` already plays another role")));
            }
            seen.push(member);
            if resolved(field).types != [*ty] {
                return Err(self.err(
                    id,
                    &p,
                    format!(
                        "the `{role}` role needs a member of type {}, and `{member}` is not one",
                        ty.as_str()
                    ),
                ));
            }
            let member = member.to_string();
            match role.as_str() {
                "id" => roles.id = Some(member),
                "from" => roles.from = Some(member),
                "to" => roles.to = Some(member),
                "reply_to" => roles.reply_to = Some(member),
                "work_id" => roles.work_id = Some(member),
                "sent_at" => roles.sent_at = Some(member),
                _ => roles.expires_at = Some(member),
            }
        }
        let clock = match x.get("clock") {
            None if roles.sent_at.is_none() && roles.expires_at.is_none() => Clock::Seconds,
            None => {
                return Err(self.err(
                    id,
                    "/x-agh-envelope",
                    "`clock` (seconds or milliseconds) is required with a `sent_at` or `expires_at` role",
                ))
            }
            Some(v) => match v.as_str() {
                Some("seconds") => Clock::Seconds,
                Some("milliseconds") => Clock::Milliseconds,
                _ => {
                    return Err(self.err(
                        id,
                        "/x-agh-envelope/clock",
                        "`clock` must be seconds or milliseconds",
                    ))
                }
            },
        };
        Ok((roles, clock))
    }

    /// Parses one dispatch entry: `(selecting member, kind value, body member, body location)`;
    /// see [`Builder::dispatch_body`] for the body member's presence.
    fn dispatch_entry(
        &self,
        id: &str,
        p: &str,
        entry: &Value,
    ) -> Result<(String, String, String, Location)> {
        let bad = |why: &str| {
            self.err(
                id,
                p,
                format!("dispatch entry must be `{{\"if\": {{\"properties\": {{<member>: {{\"const\": <kind>}}}}, \"required\": [<member>]}}, \"then\": {{\"properties\": {{<body>: {{\"$ref\": <schema>}}}}}}}}`: {why}"),
            )
        };
        let iff = entry.get("if").ok_or_else(|| bad("no `if`"))?;
        let props = iff
            .get("properties")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("no `if.properties`"))?;
        if props.len() != 1 {
            return Err(bad("`if` must name exactly one member"));
        }
        let (sel, cond) = props
            .iter()
            .next()
            .ok_or_else(|| bad("empty `if.properties`"))?;
        let kind = cond
            .get("const")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no string `const`"))?;
        let then = entry.get("then").ok_or_else(|| bad("no `then`"))?;
        let tprops = then
            .get("properties")
            .and_then(Value::as_object)
            .ok_or_else(|| bad("no `then.properties`"))?;
        if tprops.len() != 1 {
            return Err(bad("`then` must route exactly one member"));
        }
        let (body, target) = tprops
            .iter()
            .next()
            .ok_or_else(|| bad("empty `then.properties`"))?;
        for k in then.as_object().into_iter().flatten().map(|(k, _)| k) {
            if k != "properties" && k != "required" {
                return Err(bad(&format!("unexpected `then.{k}`")));
            }
        }
        match then.get("required").map(str_list) {
            None => {}
            Some(Some(r)) if r == [body.clone()] => {}
            Some(_) => return Err(bad(&format!("`then.required` may only list `{body}`"))),
        }
        // `{"$ref": ...}`, or `{"anyOf": [{"$ref": ...}, {"type": "null"}]}` (the body may be
        // absent or null).
        let (target, rp) = match target.get("anyOf").and_then(Value::as_array) {
            Some(items) => match items.as_slice() {
                [inner, null] if null == &serde_json::json!({ "type": "null" }) => (
                    inner,
                    format!(
                        "{p}/then/properties/{}/anyOf/0/$ref",
                        crate::error::escape_token(body)
                    ),
                ),
                _ => {
                    return Err(bad(
                        "the body is `{\"$ref\": ..}` or `{\"anyOf\": [{\"$ref\": ..}, {\"type\": \"null\"}]}`",
                    ))
                }
            },
            None => (
                target,
                format!(
                    "{p}/then/properties/{}/$ref",
                    crate::error::escape_token(body)
                ),
            ),
        };
        let r = target
            .get("$ref")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("no `$ref` in `then`"))?;
        let loc = self.set.resolve_ref(id, &rp, r)?;
        Ok((sel.clone(), kind.to_string(), body.clone(), loc))
    }

    /// Whether a dispatch entry makes the body member required (`then.required` lists it, or the
    /// envelope's `required` does) or optional (`anyOf` with `{"type": "null"}`).
    fn dispatch_body(&self, id: &str, p: &str, entry: &Value, env: &Envelope) -> Result<Presence> {
        let body = &env.body_member;
        let then = &entry["then"];
        let listed = then.get("required").is_some();
        let nullable = then["properties"][body.as_str()].get("anyOf").is_some();
        let envelope_requires = env.member(body).is_some_and(|f| f.required);
        match (envelope_requires || listed, nullable) {
            (true, false) => Ok(Presence::Required),
            (false, true) => Ok(Presence::Optional),
            (true, true) => Err(self.err(
                id,
                p,
                format!("`{body}` is required here, so it cannot also be `anyOf` with null"),
            )),
            (false, false) => Err(self.err(
                id,
                p,
                format!("the envelope does not require `{body}`: the dispatch entry must say whether this kind needs it (`\"required\": [\"{body}\"]` in `then`) or not (`anyOf: [{{\"$ref\": ..}}, {{\"type\": \"null\"}}]`)"),
            )),
        }
    }

    fn kinds(
        &self,
        env: &Envelope,
        types: &[NamedType],
        known: &[KnownValues],
        containers: Option<&Containers>,
    ) -> Result<Vec<Kind>> {
        let env_file = self
            .set
            .files()
            .find(|f| f.doc.get("x-agh-envelope").is_some())
            .map(|f| (f.id.clone(), f.doc.clone()))
            .ok_or_else(|| crate::error::Error::new(self.set.dir(), "", "no envelope"))?;
        let (id, doc) = env_file;
        let kind_ptr = format!(
            "/properties/{}/enum",
            crate::error::escape_token(&env.kind_member)
        );
        let Some(enum_values) = doc.pointer(&kind_ptr).and_then(str_list) else {
            return Err(self.err(
                &id,
                &kind_ptr,
                format!(
                    "envelope member `{}` must have a string `enum` of the kinds",
                    env.kind_member
                ),
            ));
        };
        let mut dispatch: Vec<(String, Location, String, Presence)> = Vec::new();
        if let Some(Value::Array(all)) = doc.get("allOf") {
            for (i, entry) in all.iter().enumerate() {
                let p = format!("/allOf/{i}");
                let (_, kind, _, loc) = self.dispatch_entry(&id, &p, entry)?;
                if dispatch.iter().any(|(k, _, _, _)| *k == kind) {
                    return Err(self.err(&id, &p, format!("kind {kind:?} is dispatched twice")));
                }
                let body = self.dispatch_body(&id, &p, entry, env)?;
                dispatch.push((kind, loc, p, body));
            }
        }
        for f in &env.limits.forbidden_kinds {
            if enum_values.contains(&f.name) {
                return Err(self.err(
                    &id,
                    &kind_ptr,
                    format!("forbidden kind {:?} is listed in the `kind` enum", f.name),
                ));
            }
        }
        for (k, _, p, _) in &dispatch {
            if !enum_values.contains(k) {
                return Err(self.err(&id, p, format!("kind mismatch: the dispatch names kind {k:?}, which the envelope `{}` enum does not list", env.kind_member)));
            }
        }
        let mut kinds = Vec::new();
        for name in &enum_values {
            let Some((_, loc, p, body)) = dispatch.iter().find(|(k, _, _, _)| k == name) else {
                return Err(self.err(
                    &id,
                    &kind_ptr,
                    format!("kind mismatch: kind {name:?} has no `allOf` dispatch entry"),
                ));
            };
            let Some(t) = types.iter().find(|t| t.location == *loc) else {
                return Err(self.err(&id, p, format!("the body schema of kind {name:?} must be a schema file root or a `$defs` entry")));
            };
            let schema = self.set.get(loc).cloned().unwrap_or(Value::Null);
            let xp = join_pointer(&loc.pointer, "x-agh-kind");
            let Some(x) = schema.get("x-agh-kind") else {
                return Err(self.err(
                    &loc.id,
                    &loc.pointer,
                    format!("kind mismatch: body schema of kind {name:?} has no `x-agh-kind`"),
                ));
            };
            let (rules, refers_to, answers_any) =
                self.kind_rules(&loc.id, &xp, x, env, known, containers, *body)?;
            if rules.kind != *name {
                return Err(self.err(
                    &loc.id,
                    &join_pointer(&xp, "kind"),
                    format!("kind mismatch: `x-agh-kind.kind` is {:?} but the envelope dispatches kind {name:?} to this schema", rules.kind),
                ));
            }
            let obj = t.shape.object.as_ref().ok_or_else(|| {
                self.err(
                    &loc.id,
                    &loc.pointer,
                    "a body schema must be an object schema",
                )
            })?;
            for m in &rules.envelope_match {
                if env.member(&m.envelope).is_none() {
                    return Err(self.err(
                        &loc.id,
                        &join_pointer(&xp, "envelope_match"),
                        format!("`{}` is not an envelope member", m.envelope),
                    ));
                }
            }
            let conditionals = self.conditionals(&loc.id, &loc.pointer, &schema, obj, env)?;
            kinds.push(Kind {
                name: name.clone(),
                purpose: x
                    .get("purpose")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
                body_type: t.rust_name.clone(),
                body_file: t.file.clone(),
                rules,
                conditionals,
                exchange: None,
                refers_to,
                answers_any,
            });
        }
        // Every x-agh-kind schema must be reachable through the dispatch.
        for t in types {
            if let Some(schema) = self.set.get(&t.location) {
                if schema.get("x-agh-kind").is_some()
                    && !kinds.iter().any(|k| k.body_type == t.rust_name)
                {
                    return Err(self.err(
                        &t.location.id,
                        &join_pointer(&t.location.pointer, "x-agh-kind"),
                        "kind mismatch: this schema declares `x-agh-kind` but the envelope does not dispatch to it",
                    ));
                }
            }
        }
        Ok(kinds)
    }

    #[allow(clippy::too_many_arguments)]
    fn kind_rules(
        &self,
        id: &str,
        xp: &str,
        x: &Value,
        env: &Envelope,
        known: &[KnownValues],
        containers: Option<&Containers>,
        body: Presence,
    ) -> Result<(KindRules, Vec<String>, bool)> {
        let Value::Object(m) = x else {
            return Err(self.err(id, xp, "`x-agh-kind` must be an object"));
        };
        // The presence rules are keyed by the envelope member that plays the role: `reply_to` in
        // v0, `ref` in ACP; a role the set does not have takes no key (and is `forbidden`).
        let roles = &env.roles;
        let surface_member = containers.map(|c| c.member.as_str());
        let role_keys: Vec<(&str, &str)> = [
            ("surface", surface_member),
            ("work_id", roles.work_id.as_deref()),
            ("to", roles.to.as_deref()),
            ("reply_to", roles.reply_to.as_deref()),
        ]
        .into_iter()
        .filter_map(|(role, member)| member.map(|m| (role, m)))
        .collect();
        let mut keys: Vec<&str> = vec![
            "kind",
            "purpose",
            "profile",
            "work",
            "envelope_match",
            "verify",
            "exchange",
            "refers_to",
            "answers_any",
        ];
        keys.extend(role_keys.iter().map(|(_, m)| *m));
        for k in m.keys() {
            if !keys.contains(&k.as_str()) {
                let why = match ["surface", "work_id", "to", "reply_to"].contains(&k.as_str()) {
                    true => format!(
                        " (this set has no `{k}` member: see `x-agh-envelope.roles` and `x-agh-container`)"
                    ),
                    false => String::new(),
                };
                return Err(self.err(
                    id,
                    &join_pointer(xp, k),
                    format!(
                        "unknown `x-agh-kind` member `{k}`{why}; expected one of {}",
                        keys.join(", ")
                    ),
                ));
            }
        }
        let s = |k: &str| -> Result<String> {
            m.get(k)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| {
                    self.err(
                        id,
                        &join_pointer(xp, k),
                        format!("`x-agh-kind.{k}` is required and must be a string"),
                    )
                })
        };
        use Presence::*;
        let presence = |role: &str, allowed: &[Presence]| -> Result<Presence> {
            let Some((_, k)) = role_keys.iter().find(|(r, _)| *r == role) else {
                return Ok(Forbidden);
            };
            let v = s(k)?;
            match Presence::parse(&v) {
                Some(p) if allowed.contains(&p) => Ok(p),
                _ => Err(self.err(
                    id,
                    &join_pointer(xp, k),
                    format!(
                        "`{k}` must be one of {}",
                        allowed
                            .iter()
                            .map(|p| p.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                )),
            }
        };
        let work = match m.get("work").map(|v| v.as_str()) {
            None => WorkRole::None,
            Some(Some("none")) => WorkRole::None,
            Some(Some("opens")) => WorkRole::Opens,
            Some(Some("updates")) => WorkRole::Updates,
            Some(_) => {
                return Err(self.err(
                    id,
                    &join_pointer(xp, "work"),
                    "`work` must be none, opens or updates",
                ))
            }
        };
        let work_id = presence("work_id", &[Required, Optional, Forbidden])?;
        if work != WorkRole::None && work_id == Forbidden {
            return Err(self.err(
                id,
                &join_pointer(xp, "work"),
                "a kind that takes part in the lifecycle needs a `work_id` member (role `work_id`)",
            ));
        }
        let profile = match m.get("profile") {
            Some(_) => s("profile")?,
            None => env.profile.clone().ok_or_else(|| {
                self.err(
                    id,
                    xp,
                    "`x-agh-kind.profile` is required when the envelope names no profile (`x-agh-envelope.profile` or a string constant)",
                )
            })?,
        };
        let list = |k: &str| -> Result<Vec<Map<String, Value>>> {
            match m.get(k) {
                None => Ok(Vec::new()),
                Some(Value::Array(a)) => a
                    .iter()
                    .enumerate()
                    .map(|(i, e)| {
                        e.as_object().cloned().ok_or_else(|| {
                            self.err(
                                id,
                                &join_pointer(&join_pointer(xp, k), &i.to_string()),
                                "must be an object",
                            )
                        })
                    })
                    .collect(),
                Some(_) => Err(self.err(id, &join_pointer(xp, k), "must be an array")),
            }
        };
        let field = |k: &str, i: usize, e: &Map<String, Value>, f: &str| -> Result<String> {
            e.get(f)
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| {
                    self.err(
                        id,
                        &format!("{}/{i}/{f}", join_pointer(xp, k)),
                        format!("`{f}` is required and must be a string"),
                    )
                })
        };
        let mut envelope_match = Vec::new();
        for (i, e) in list("envelope_match")?.iter().enumerate() {
            let body = field("envelope_match", i, e, "body")?;
            if !body.starts_with('/') {
                return Err(self.err(
                    id,
                    &format!("{xp}/envelope_match/{i}/body"),
                    "`body` must be a JSON Pointer",
                ));
            }
            envelope_match.push(EnvelopeMatch {
                body,
                envelope: field("envelope_match", i, e, "envelope")?,
            });
        }
        let mut verify = Vec::new();
        for (i, e) in list("verify")?.iter().enumerate() {
            let body = field("verify", i, e, "body")?;
            if !body.starts_with('/') {
                return Err(self.err(
                    id,
                    &format!("{xp}/verify/{i}/body"),
                    "`body` must be a JSON Pointer",
                ));
            }
            let reason_code = field("verify", i, e, "reason_code")?;
            if let Some(k) = known.first() {
                if !k.values.iter().any(|v| v.value == reason_code) {
                    return Err(self.err(
                        id,
                        &format!("{xp}/verify/{i}/reason_code"),
                        format!("{reason_code:?} is not a known {}", k.type_name),
                    ));
                }
            }
            verify.push(Verify {
                body,
                recipe: field("verify", i, e, "recipe")?,
                reason_code,
            });
        }
        let refers_to = match m.get("refers_to") {
            None => Vec::new(),
            Some(v) => {
                let list = str_list(v).filter(|l| !l.is_empty()).ok_or_else(|| {
                    self.err(
                        id,
                        &join_pointer(xp, "refers_to"),
                        "`refers_to` must list kinds",
                    )
                })?;
                if roles.reply_to.is_none() {
                    return Err(self.err(
                        id,
                        &join_pointer(xp, "refers_to"),
                        "`refers_to` needs a correlation member (role `reply_to`)",
                    ));
                }
                list
            }
        };
        let rules = KindRules {
            kind: s("kind")?,
            profile,
            surface: presence("surface", &[Required, Forbidden])?,
            work_id,
            to: presence("to", &[Required, Recommended, Optional, Forbidden])?,
            reply_to: presence("reply_to", &[Required, Recommended, Optional, Forbidden])?,
            body,
            work,
            envelope_match,
            verify,
        };
        if !refers_to.is_empty() && rules.reply_to != Required {
            let k = roles.reply_to.as_deref().unwrap_or("reply_to");
            return Err(self.err(
                id,
                &join_pointer(xp, k),
                format!("a kind that `refers_to` another needs `{k}: required`"),
            ));
        }
        let answers_any = match m.get("answers_any") {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(_) => {
                return Err(self.err(
                    id,
                    &join_pointer(xp, "answers_any"),
                    "`answers_any` must be a boolean",
                ))
            }
        };
        if answers_any {
            let at = join_pointer(xp, "answers_any");
            if roles.reply_to.is_none() || rules.reply_to == Forbidden {
                return Err(self.err(
                    id,
                    &at,
                    "a kind that answers any message needs its correlation member (role `reply_to`, not forbidden)",
                ));
            }
            if m.contains_key("exchange") || !refers_to.is_empty() {
                return Err(self.err(
                    id,
                    &at,
                    "a kind that answers any message is a reply, not a request (no `exchange` or `refers_to`)",
                ));
            }
        }
        Ok((rules, refers_to, answers_any))
    }

    fn conditionals(
        &self,
        id: &str,
        ptr: &str,
        schema: &Value,
        obj: &ObjectShape,
        env: &Envelope,
    ) -> Result<Vec<Conditional>> {
        let Some(all) = schema.get("allOf") else {
            return Ok(Vec::new());
        };
        let ap = join_pointer(ptr, "allOf");
        let Value::Array(all) = all else {
            return Err(self.err(id, &ap, "`allOf` must be an array"));
        };
        let mut out = Vec::new();
        for (i, entry) in all.iter().enumerate() {
            let p = join_pointer(&ap, &i.to_string());
            let bad = |at: &str, why: String| {
                self.err(id, &format!("{p}{at}"), format!("conditional rule not in the restricted if/then form (schemas/README.md): {why}"))
            };
            let Value::Object(e) = entry else {
                return Err(bad("", "must be an object".into()));
            };
            for k in e.keys() {
                if k != "if" && k != "then" {
                    return Err(bad("", format!("unexpected `{k}`")));
                }
            }
            let iff = e.get("if").ok_or_else(|| bad("", "no `if`".into()))?;
            let then = e.get("then").ok_or_else(|| bad("", "no `then`".into()))?;
            let iprops = iff
                .get("properties")
                .and_then(Value::as_object)
                .ok_or_else(|| bad("/if", "no `properties`".into()))?;
            if iprops.len() != 1 {
                return Err(bad("/if/properties", "must name exactly one member".into()));
            }
            let Some((member, cond)) = iprops.iter().next() else {
                return Err(bad("/if", "empty".into()));
            };
            if iff.get("required").and_then(str_list) != Some(vec![member.clone()]) {
                return Err(bad("/if/required", format!("must be [{member:?}]")));
            }
            let values = if let Some(c) = cond.get("const") {
                vec![c.clone()]
            } else if let Some(Value::Array(vs)) = cond.get("enum") {
                vs.clone()
            } else {
                return Err(bad(
                    "/if/properties",
                    "the member needs `const` or `enum`".into(),
                ));
            };
            if !obj.fields.iter().any(|f| &f.json_name == member) {
                return Err(bad(
                    "/if/properties",
                    format!("`{member}` is not a body member"),
                ));
            }
            let Value::Object(t) = then else {
                return Err(bad("/then", "must be an object".into()));
            };
            let mut c = Conditional {
                pointer: p.clone(),
                when: Condition {
                    member: member.clone(),
                    values,
                },
                required: Vec::new(),
                absent: Vec::new(),
                typed: Vec::new(),
                envelope: EnvelopeOverrides::default(),
            };
            for (k, v) in t {
                match k.as_str() {
                    "required" => {
                        c.required = str_list(v).ok_or_else(|| {
                            bad("/then/required", "must list member names".into())
                        })?;
                        for r in &c.required {
                            if !obj.fields.iter().any(|f| &f.json_name == r) {
                                return Err(bad(
                                    "/then/required",
                                    format!("`{r}` is not a body member"),
                                ));
                            }
                        }
                    }
                    "properties" => {
                        let Value::Object(props) = v else {
                            return Err(bad("/then/properties", "must be an object".into()));
                        };
                        for (name, s) in props {
                            let at =
                                format!("/then/properties/{}", crate::error::escape_token(name));
                            if !obj.fields.iter().any(|f| &f.json_name == name) {
                                return Err(bad(&at, format!("`{name}` is not a body member")));
                            }
                            let ty = s
                                .as_object()
                                .filter(|o| o.len() == 1)
                                .and_then(|o| o.get("type"))
                                .and_then(Value::as_str);
                            match ty {
                                Some("null") => c.absent.push(name.clone()),
                                Some(t) => match JsonType::parse(t) {
                                    Some(jt) => c.typed.push((name.clone(), jt)),
                                    None => return Err(bad(&at, format!("unknown type {t:?}"))),
                                },
                                None => {
                                    return Err(bad(
                                        &at,
                                        "only `{\"type\": <type>}` is allowed here".into(),
                                    ))
                                }
                            }
                        }
                    }
                    "x-agh-envelope" => {
                        let Value::Object(ov) = v else {
                            return Err(bad("/then/x-agh-envelope", "must be an object".into()));
                        };
                        for (ek, ev) in ov {
                            let pr = ev.as_str().and_then(Presence::parse).ok_or_else(|| {
                                bad(
                                    &format!("/then/x-agh-envelope/{ek}"),
                                    "must be required, recommended, optional or forbidden".into(),
                                )
                            })?;
                            // Keyed by the member that plays the role (`ref` in ACP).
                            match env.roles.role_of(ek) {
                                Some("to") => c.envelope.to = Some(pr),
                                Some("reply_to") => c.envelope.reply_to = Some(pr),
                                _ => {
                                    let members: Vec<String> = [&env.roles.to, &env.roles.reply_to]
                                        .into_iter()
                                        .flatten()
                                        .map(|m| format!("`{m}`"))
                                        .collect();
                                    return Err(bad(
                                        "/then/x-agh-envelope",
                                        format!(
                                            "`{ek}` cannot be overridden (only {})",
                                            members.join(", ")
                                        ),
                                    ));
                                }
                            }
                        }
                    }
                    _ => return Err(bad("/then", format!("unexpected `{k}`"))),
                }
            }
            out.push(c);
        }
        Ok(out)
    }

    fn refusal_codes(
        &self,
        t: &NamedType,
        r: &Value,
        known: &[KnownValues],
    ) -> Result<RefusalCodes> {
        let (id, p) = (
            &t.location.id,
            join_pointer(&t.location.pointer, "x-agh-refusal-codes"),
        );
        let values: Vec<String> = match known.iter().find(|k| k.type_name == t.rust_name) {
            Some(k) => k.values.iter().map(|v| v.value.clone()).collect(),
            None => t
                .shape
                .constraints
                .enum_values
                .iter()
                .flatten()
                .filter_map(|v| v.as_str().map(str::to_string))
                .collect(),
        };
        if values.is_empty() {
            return Err(self.err(
                id,
                &p,
                "`x-agh-refusal-codes` needs `x-agh-known-values` or a string `enum` beside it",
            ));
        }
        let Value::Object(m) = r else {
            return Err(self.err(
                id,
                &p,
                "`x-agh-refusal-codes` must map each runtime refusal code to a value of this type",
            ));
        };
        let mut entries = Vec::new();
        for (code, v) in m {
            let at = join_pointer(&p, code);
            let code_ok = code.starts_with(|c: char| c.is_ascii_lowercase())
                && code
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
            if !code_ok {
                return Err(self.err(
                    id,
                    &at,
                    format!("{code:?} is not a refusal code name (`^[a-z][a-z0-9_]*$`)"),
                ));
            }
            match v.as_str() {
                Some(v) if values.iter().any(|x| x == v) => {
                    entries.push((code.clone(), v.to_string()))
                }
                _ => {
                    return Err(self.err(
                        id,
                        &at,
                        format!("must be one of the values of {}", t.rust_name),
                    ))
                }
            }
        }
        Ok(RefusalCodes {
            type_name: t.rust_name.clone(),
            entries,
        })
    }

    /// `x-agh-kind.exchange` of every kind, and the `refers_to` lists, checked against the kinds.
    fn exchanges(&self, env: &Envelope, types: &[NamedType], kinds: &mut [Kind]) -> Result<()> {
        let body_of = |kind: &str| -> Option<(&NamedType, &ObjectShape)> {
            let k = kinds.iter().find(|k| k.name == kind)?;
            let t = types.iter().find(|t| t.rust_name == k.body_type)?;
            Some((t, t.shape.object.as_ref()?))
        };
        let resolve = |shape: &Shape| -> Shape {
            let mut s = shape;
            while let Some(t) = s
                .ref_type
                .as_deref()
                .and_then(|n| types.iter().find(|t| t.rust_name == n))
            {
                s = &t.shape;
            }
            s.clone()
        };
        let mut parsed = Vec::new();
        for kind in kinds.iter() {
            let Some((t, obj)) = body_of(&kind.name) else {
                parsed.push(None);
                continue;
            };
            let Some(schema) = self.set.get(&t.location) else {
                parsed.push(None);
                continue;
            };
            let xp = join_pointer(&t.location.pointer, "x-agh-kind");
            let id = &t.location.id;
            for (i, r) in kind.refers_to.iter().enumerate() {
                let at = format!("{xp}/refers_to/{i}");
                let Some(target) = kinds.iter().find(|k| &k.name == r) else {
                    return Err(self.err(id, &at, format!("{r:?} is not a kind")));
                };
                if schema["x-agh-kind"].get("exchange").is_none() {
                    return Err(self.err(
                        id,
                        &at,
                        "a kind that `refers_to` another is a request itself: give it an `exchange`",
                    ));
                }
                let target_schema = types
                    .iter()
                    .find(|t| t.rust_name == target.body_type)
                    .and_then(|t| self.set.get(&t.location));
                if target_schema
                    .and_then(|s| s["x-agh-kind"].get("exchange"))
                    .is_none()
                {
                    return Err(self.err(
                        id,
                        &at,
                        format!("{r:?} opens no exchange, so there is nothing to refer to"),
                    ));
                }
            }
            let Some(x) = schema["x-agh-kind"].get("exchange") else {
                parsed.push(None);
                continue;
            };
            let ep = join_pointer(&xp, "exchange");
            let Value::Object(xm) = x else {
                return Err(self.err(id, &ep, "`exchange` must be an object"));
            };
            if env.roles.reply_to.is_none() {
                return Err(self.err(
                    id,
                    &ep,
                    "an exchange needs a correlation member (`x-agh-envelope.roles.reply_to`)",
                ));
            }
            for k in xm.keys() {
                if !["expects_reply", "deadline", "states", "replies"].contains(&k.as_str()) {
                    return Err(self.err(
                        id,
                        &join_pointer(&ep, k),
                        format!("unknown `exchange` member `{k}` (expected expects_reply, deadline, states, replies)"),
                    ));
                }
            }
            let expects_reply = match xm.get("expects_reply") {
                None => true,
                Some(Value::Bool(b)) => *b,
                Some(_) => {
                    return Err(self.err(
                        id,
                        &join_pointer(&ep, "expects_reply"),
                        "`expects_reply` must be a boolean",
                    ))
                }
            };
            let (deadline, default_deadline) = match xm.get("deadline") {
                None => (None, None),
                Some(v) => {
                    let dp = join_pointer(&ep, "deadline");
                    let Some(ptr) = v.as_str() else {
                        return Err(self.err(id, &dp, "`deadline` must be a JSON Pointer"));
                    };
                    let (member, only) = (
                        ptr.strip_prefix('/').unwrap_or_default(),
                        ptr.matches('/').count() == 1,
                    );
                    let field = obj.fields.iter().find(|f| f.json_name == member);
                    let Some(field) = field.filter(|_| only) else {
                        return Err(self.err(
                            id,
                            &dp,
                            format!(
                                "`{ptr}` must name a top-level member of the {} body",
                                kind.name
                            ),
                        ));
                    };
                    if resolve(&field.shape).types != [JsonType::Integer] {
                        return Err(self.err(
                            id,
                            &dp,
                            format!("`{member}` must be an integer (milliseconds)"),
                        ));
                    }
                    let default = schema
                        .pointer(&format!("/properties/{}/default", crate::error::escape_token(member)))
                        .map(|d| {
                            d.as_u64().ok_or_else(|| {
                                self.err(id, &dp, format!("the `default` of `{member}` must be a non-negative integer"))
                            })
                        })
                        .transpose()?;
                    (Some(ptr.to_string()), default)
                }
            };
            let mut states = Vec::new();
            if let Some(v) = xm.get("states") {
                let sp = join_pointer(&ep, "states");
                let Value::Object(sm) = v else {
                    return Err(self.err(
                        id,
                        &sp,
                        "`states` must map state names to {description, awaiting}",
                    ));
                };
                for (name, st) in sm {
                    let at = join_pointer(&sp, name);
                    if name == EXCHANGE_OPEN || name == EXCHANGE_ANSWERED {
                        return Err(self.err(id, &at, format!("`{name}` is built in")));
                    }
                    let description = st.get("description").and_then(Value::as_str);
                    let awaiting = st.get("awaiting").and_then(Value::as_bool);
                    let (Some(description), Some(awaiting)) = (description, awaiting) else {
                        return Err(self.err(
                            id,
                            &at,
                            "a state needs a `description` (string) and `awaiting` (boolean)",
                        ));
                    };
                    states.push(ExchangeState {
                        name: name.clone(),
                        description: description.to_string(),
                        awaiting,
                    });
                }
            }
            let is_state = |n: &str| {
                n == EXCHANGE_OPEN || n == EXCHANGE_ANSWERED || states.iter().any(|s| s.name == n)
            };
            let rp = join_pointer(&ep, "replies");
            let Some(Value::Array(rs)) = xm.get("replies") else {
                return Err(self.err(id, &rp, "`replies` must list reply rules"));
            };
            let mut replies = Vec::new();
            for (i, r) in rs.iter().enumerate() {
                let at = format!("{rp}/{i}");
                let Value::Object(rm) = r else {
                    return Err(self.err(id, &at, "a reply rule must be an object"));
                };
                for k in rm.keys() {
                    if !["kind", "in", "when", "request", "to"].contains(&k.as_str()) {
                        return Err(self.err(
                            id,
                            &join_pointer(&at, k),
                            format!("unknown reply rule member `{k}` (expected kind, in, when, request, to)"),
                        ));
                    }
                }
                let Some(rkind) = rm.get("kind").and_then(Value::as_str) else {
                    return Err(self.err(id, &at, "a reply rule needs a `kind`"));
                };
                let Some(reply) = kinds.iter().find(|k| k.name == rkind) else {
                    return Err(self.err(
                        id,
                        &join_pointer(&at, "kind"),
                        format!("{rkind:?} is not a kind"),
                    ));
                };
                if reply.rules.reply_to == Presence::Forbidden {
                    let m = env.roles.reply_to.as_deref().unwrap_or("reply_to");
                    return Err(self.err(
                        id,
                        &join_pointer(&at, "kind"),
                        format!("`{rkind}` cannot carry `{m}`, so it cannot answer a request"),
                    ));
                }
                let state_list = match rm.get("in") {
                    None => vec![EXCHANGE_OPEN.to_string()],
                    Some(v) => str_list(v).filter(|l| !l.is_empty()).ok_or_else(|| {
                        self.err(id, &join_pointer(&at, "in"), "`in` must list states")
                    })?,
                };
                for (j, st) in state_list.iter().enumerate() {
                    if !is_state(st) || st == EXCHANGE_ANSWERED {
                        return Err(self.err(
                            id,
                            &format!("{at}/in/{j}"),
                            format!("{st:?} is not a state a reply can arrive in"),
                        ));
                    }
                }
                let to = match rm.get("to").and_then(Value::as_str) {
                    Some(to) if is_state(to) => to.to_string(),
                    _ => {
                        return Err(self.err(
                            id,
                            &join_pointer(&at, "to"),
                            "`to` must name a state (`answered`, `open` or one of `states`)",
                        ))
                    }
                };
                let conditions = |key: &str, of: &str| -> Result<Vec<MemberIs>> {
                    let Some(v) = rm.get(key) else {
                        return Ok(Vec::new());
                    };
                    let cp = join_pointer(&at, key);
                    let Value::Object(cm) = v else {
                        return Err(self.err(
                            id,
                            &cp,
                            format!("`{key}` must map body members to values"),
                        ));
                    };
                    let Some((_, body)) = body_of(of) else {
                        return Err(self.err(id, &cp, format!("the {of} body is not an object")));
                    };
                    let mut out = Vec::new();
                    for (member, value) in cm {
                        let mp = join_pointer(&cp, member);
                        let Some(field) = body.fields.iter().find(|f| &f.json_name == member)
                        else {
                            return Err(self.err(
                                id,
                                &mp,
                                format!("`{member}` is not a member of the {of} body"),
                            ));
                        };
                        let shape = resolve(&field.shape);
                        let fits = match value {
                            Value::Bool(_) => shape.types.contains(&JsonType::Boolean),
                            Value::String(_) => shape.types.contains(&JsonType::String),
                            Value::Number(n) => {
                                shape.types.contains(&JsonType::Number)
                                    || (n.is_i64() || n.is_u64())
                                        && shape.types.contains(&JsonType::Integer)
                            }
                            _ => false,
                        };
                        let in_enum = shape
                            .constraints
                            .enum_values
                            .as_ref()
                            .is_none_or(|vals| vals.contains(value));
                        if !fits || !in_enum {
                            return Err(self.err(
                                id,
                                &mp,
                                format!(
                                    "{value} is not a value `{member}` of the {of} body can have"
                                ),
                            ));
                        }
                        out.push(MemberIs {
                            member: member.clone(),
                            value: value.clone(),
                        });
                    }
                    Ok(out)
                };
                replies.push(ReplyRule {
                    kind: rkind.to_string(),
                    states: state_list,
                    when: conditions("when", rkind)?,
                    request: conditions("request", &kind.name)?,
                    to,
                });
            }
            if replies.is_empty() {
                return Err(self.err(id, &rp, "`replies` must list at least one reply rule"));
            }
            parsed.push(Some(Exchange {
                expects_reply,
                deadline,
                default_deadline,
                states,
                replies,
            }));
        }
        for (kind, exchange) in kinds.iter_mut().zip(parsed) {
            kind.exchange = exchange;
        }
        Ok(())
    }

    fn containers(&self, env: &Envelope, t: &NamedType, c: &Value) -> Result<Containers> {
        let (id, p) = (
            &t.location.id,
            join_pointer(&t.location.pointer, "x-agh-container"),
        );
        let Value::Object(m) = c else {
            return Err(self.err(
                id,
                &p,
                "`x-agh-container` must map each surface value to a container member",
            ));
        };
        let values: Vec<String> = t
            .shape
            .constraints
            .enum_values
            .iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        let mut entries = Vec::new();
        for (k, v) in m {
            let Some(member) = v.as_str() else {
                return Err(self.err(id, &join_pointer(&p, k), "must name an envelope member"));
            };
            if !values.contains(k) {
                return Err(self.err(
                    id,
                    &join_pointer(&p, k),
                    format!("{k:?} is not a value of the `enum`"),
                ));
            }
            if env.member(member).is_none() {
                return Err(self.err(
                    id,
                    &join_pointer(&p, k),
                    format!("`{member}` is not an envelope member"),
                ));
            }
            entries.push((k.clone(), member.to_string()));
        }
        let holders: Vec<&Field> = env
            .members
            .iter()
            .filter(|f| f.shape.ref_type.as_deref() == Some(&t.rust_name))
            .collect();
        let [holder] = holders.as_slice() else {
            return Err(self.err(
                id,
                &p,
                "exactly one envelope member must have this surface type",
            ));
        };
        Ok(Containers {
            type_name: t.rust_name.clone(),
            member: holder.json_name.clone(),
            entries,
        })
    }

    fn lifecycle(
        &self,
        t: &NamedType,
        l: &Value,
        kinds: &[Kind],
        types: &[NamedType],
        enums: &[EnumDoc],
    ) -> Result<Lifecycle> {
        let (id, p) = (
            &t.location.id,
            join_pointer(&t.location.pointer, "x-agh-lifecycle"),
        );
        let states: Vec<EnumValue> = match enums.iter().find(|e| e.type_name == t.rust_name) {
            Some(e) => e.values.clone(),
            None => t
                .shape
                .constraints
                .enum_values
                .iter()
                .flatten()
                .filter_map(|v| v.as_str())
                .map(|v| EnumValue {
                    value: v.to_string(),
                    description: String::new(),
                })
                .collect(),
        };
        if states.is_empty() {
            return Err(self.err(
                id,
                &p,
                "`x-agh-lifecycle` needs a string `enum` of the states beside it",
            ));
        }
        let is_state = |s: &str| states.iter().any(|v| v.value == s);
        let state = |k: &str, v: Option<&Value>, at: String| -> Result<String> {
            match v.and_then(Value::as_str) {
                Some(s) if is_state(s) => Ok(s.to_string()),
                Some(s) => Err(self.err(id, &at, format!("{s:?} is not a state"))),
                None => Err(self.err(id, &at, format!("`{k}` must be a state name"))),
            }
        };
        let initial = state("initial", l.get("initial"), join_pointer(&p, "initial"))?;
        let terminal = match l.get("terminal").and_then(Value::as_array) {
            Some(a) => a
                .iter()
                .enumerate()
                .map(|(i, v)| state("terminal", Some(v), format!("{p}/terminal/{i}")))
                .collect::<Result<Vec<_>>>()?,
            None => {
                return Err(self.err(
                    id,
                    &join_pointer(&p, "terminal"),
                    "`terminal` must list states",
                ))
            }
        };
        let opened_by = l.get("opened_by").and_then(str_list).ok_or_else(|| {
            self.err(
                id,
                &join_pointer(&p, "opened_by"),
                "`opened_by` must list kinds",
            )
        })?;
        for (i, k) in opened_by.iter().enumerate() {
            match kinds.iter().find(|x| &x.name == k) {
                Some(kind) if kind.rules.work == WorkRole::Opens => {}
                Some(_) => {
                    return Err(self.err(
                        id,
                        &format!("{p}/opened_by/{i}"),
                        format!("kind {k:?} does not have `work: opens`"),
                    ))
                }
                None => {
                    return Err(self.err(
                        id,
                        &format!("{p}/opened_by/{i}"),
                        format!("{k:?} is not a kind"),
                    ))
                }
            }
        }
        let Some(Value::Array(ts)) = l.get("transitions") else {
            return Err(self.err(
                id,
                &join_pointer(&p, "transitions"),
                "`transitions` must be an array",
            ));
        };
        let mut transitions = Vec::new();
        for (i, tr) in ts.iter().enumerate() {
            let tp = format!("{p}/transitions/{i}");
            let from = state("from", tr.get("from"), format!("{tp}/from"))?;
            if terminal.contains(&from) {
                return Err(self.err(
                    id,
                    &format!("{tp}/from"),
                    format!("{from:?} is terminal: terminal work is final (every later lifecycle message is refused with `work_closed`), so no transition leaves it"),
                ));
            }
            let to = state("to", tr.get("to"), format!("{tp}/to"))?;
            let Some(Value::Array(on)) = tr.get("on") else {
                return Err(self.err(id, &format!("{tp}/on"), "`on` must list triggers"));
            };
            let mut triggers = Vec::new();
            for (j, trig) in on.iter().enumerate() {
                let gp = format!("{tp}/on/{j}");
                let Value::Object(g) = trig else {
                    return Err(self.err(id, &gp, "a trigger must be an object"));
                };
                let Some(kname) = g.get("kind").and_then(Value::as_str) else {
                    return Err(self.err(id, &gp, "a trigger needs a `kind`"));
                };
                let Some(kind) = kinds.iter().find(|k| k.name == kname) else {
                    return Err(self.err(
                        id,
                        &join_pointer(&gp, "kind"),
                        format!("{kname:?} is not a kind"),
                    ));
                };
                let mut sender = None;
                let mut body_match = None;
                for (k, v) in g {
                    match k.as_str() {
                        "kind" => {}
                        "sender" => {
                            sender = Some(match v.as_str() {
                                Some("initiator") => Sender::Initiator,
                                Some("target") => Sender::Target,
                                _ => {
                                    return Err(self.err(
                                        id,
                                        &join_pointer(&gp, k),
                                        "`sender` must be initiator or target",
                                    ))
                                }
                            })
                        }
                        member => {
                            let Some(val) = v.as_str() else {
                                return Err(self.err(
                                    id,
                                    &join_pointer(&gp, k),
                                    "a body member trigger value must be a string",
                                ));
                            };
                            if body_match.is_some() {
                                return Err(self.err(
                                    id,
                                    &join_pointer(&gp, k),
                                    "a trigger may match at most one body member",
                                ));
                            }
                            let body = types.iter().find(|t| t.rust_name == kind.body_type);
                            let field = body
                                .and_then(|b| b.shape.object.as_ref())
                                .and_then(|o| o.fields.iter().find(|f| f.json_name == member));
                            let Some(field) = field else {
                                return Err(self.err(
                                    id,
                                    &join_pointer(&gp, k),
                                    format!("`{member}` is not a member of the {kname} body"),
                                ));
                            };
                            let mut s = &field.shape;
                            while let Some(t) = s
                                .ref_type
                                .as_deref()
                                .and_then(|n| types.iter().find(|t| t.rust_name == n))
                            {
                                s = &t.shape;
                            }
                            if let Some(vals) = &s.constraints.enum_values {
                                if !vals.iter().any(|x| x.as_str() == Some(val)) {
                                    return Err(self.err(
                                        id,
                                        &join_pointer(&gp, k),
                                        format!("{val:?} is not a value of {kname}.{member}"),
                                    ));
                                }
                            }
                            body_match = Some((member.to_string(), val.to_string()));
                        }
                    }
                }
                triggers.push(Trigger {
                    kind: kname.to_string(),
                    body_match,
                    sender,
                });
            }
            transitions.push(Transition {
                from,
                to,
                on: triggers,
            });
        }
        Ok(Lifecycle {
            type_name: t.rust_name.clone(),
            states,
            initial,
            terminal,
            opened_by,
            transitions,
        })
    }
}

/// JSON Schema validation keywords that the model does not carry: a schema that uses one is
/// refused, naming it, rather than generating validators and scanners that silently ignore it.
/// (`format` is not among them: in draft 2020-12 it is an annotation unless a validator opts in,
/// and derive tools such as schemars write it on every integer.)
const UNSUPPORTED_KEYWORDS: &[&str] = &[
    "maxLength",
    "maxItems",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minProperties",
    "maxProperties",
    "propertyNames",
    "patternProperties",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "contains",
    "minContains",
    "maxContains",
    "prefixItems",
    "not",
    "unevaluatedProperties",
    "unevaluatedItems",
    "$dynamicRef",
];

/// The validation keywords the model carries into types, validators, scanners and docs.
const SUPPORTED_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "$ref",
    "pattern",
    "minLength",
    "minimum",
    "maximum",
    "const",
    "enum",
    "minItems",
    "uniqueItems",
    "anyOf/oneOf (a nullable member)",
    "allOf with if/then (kind dispatch)",
];
