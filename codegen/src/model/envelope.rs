//! The envelope: its members, limits (`x-agh-envelope`), the roles its members play for the
//! runtime, the members the kind dispatch names (`dispatch.rs`) and the spelling of refusals
//! (`x-agh-refusal-codes`).

use serde_json::Value;

use super::dispatch::DispatchEntry;
use super::{str_list, Builder, Field, JsonType, KnownValues, NamedType, ObjectShape, Shape};
use crate::error::{join_pointer, Result};

/// A forbidden member or kind with its specific message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Forbidden {
    /// The name.
    pub name: String,
    /// The message.
    pub message: String,
}

/// Envelope limits (`x-agh-envelope` at the envelope root).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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
    /// Deepest nesting of arrays and objects accepted, the envelope object being level 1
    /// (`x-agh-envelope.max_depth`); `None`: no limit but the runtime's guard against deep
    /// recursion ([`DEPTH_GUARD`], 128 levels).
    pub max_depth: Option<u64>,
    /// How an `integer` is written (`x-agh-envelope.integers`).
    pub integers: Integers,
    /// `x-agh-envelope.integer_bits` (64, the one value): an `integer` whose schema has no bounds
    /// beyond 64 bits fits 64 bits and is typed `i64`/`u64`; `None`: JSON Schema's integers of any
    /// size (see [`crate::model::big_integer`]).
    pub integer_bits: Option<u64>,
}

/// The depth limit of a set without `x-agh-envelope.max_depth`, and the largest one may declare:
/// the deepest nesting the owned message can decode (serde_json's recursion limit is 128 levels;
/// the runtime's readers allow up to `agh_runtime::json::MAX_SUPPORTED_DEPTH`, 256).
pub const DEPTH_GUARD: u64 = 128;

/// What a schema `integer` admits (`x-agh-envelope.integers`). Either way its value fits 64 bits,
/// the range of the generated Rust integers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Integers {
    /// JSON Schema's counting (no annotation): any number whose value is integral, however
    /// written: `1.0`, `1e3` and `-0` are integers.
    #[default]
    Value,
    /// `"digits"`: written as digits only; `1.0`, `1e3` and `-0` are refused where a schema types
    /// an integer (the stance of AGH Network v0 and ACP, as the Go reference reads them).
    Digits,
}

/// The envelope (empty, by default, in the model of a standalone schema).
#[derive(Clone, Debug, Default, PartialEq)]
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

impl Envelope {
    /// The member named `name`.
    pub fn member(&self, name: &str) -> Option<&Field> {
        self.members.iter().find(|m| m.json_name == name)
    }
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

impl Builder<'_> {
    pub(super) fn envelope(
        &self,
        types: &[NamedType],
        dispatch: &[DispatchEntry],
    ) -> Result<Envelope> {
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
        // The envelope's scanner reads its members by role; the object-wide keywords are carried
        // in bodies and other objects, not at the envelope's root.
        for keyword in [
            "minProperties",
            "maxProperties",
            "dependentRequired",
            "patternProperties",
            "propertyNames",
        ] {
            if file.doc.get(keyword).is_some() {
                return Err(self.err(
                    id,
                    &format!("/{keyword}"),
                    format!("codegen carries `{keyword}` in bodies and other objects, not at the envelope's root"),
                ));
            }
        }
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
            "max_depth",
            "integers",
            "integer_bits",
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
        let max_depth = match x.get("max_depth") {
            None => None,
            Some(v) => Some(v.as_u64().filter(|d| (1..=DEPTH_GUARD).contains(d)).ok_or_else(|| {
                self.err(
                    id,
                    &join_pointer(xp, "max_depth"),
                    format!("`max_depth` must be an integer from 1 to {DEPTH_GUARD} (the deepest nesting the owned message can decode)"),
                )
            })?),
        };
        let integers = match x.get("integers") {
            None => Integers::Value,
            Some(Value::String(s)) if s == "digits" => Integers::Digits,
            Some(_) => {
                return Err(self.err(
                    id,
                    &join_pointer(xp, "integers"),
                    "`integers` must be \"digits\" (written as digits only: `1.0`, `1e3` and `-0` refused where a schema types an integer); without it an integer is any number of integral value",
                ))
            }
        };
        let integer_bits = match x.get("integer_bits") {
            None => None,
            Some(v) if v.as_u64() == Some(64) => Some(64),
            Some(_) => {
                return Err(self.err(
                    id,
                    &join_pointer(xp, "integer_bits"),
                    "`integer_bits` must be 64 (an `integer` fits 64 bits and is typed i64/u64); without it an integer is of any size, as JSON Schema says",
                ))
            }
        };
        let limits = EnvelopeLimits {
            max_depth,
            integers,
            integer_bits,
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
        // The dispatch (`dispatch.rs`): every entry names the selecting member and the body
        // member.
        let mut kind_member: Option<String> = None;
        let mut body_member: Option<String> = None;
        for entry in dispatch {
            let p = &entry.pointer;
            for (slot, val, what) in [
                (&mut kind_member, &entry.selector, "select on"),
                (&mut body_member, &entry.body_member, "route to"),
            ] {
                match slot {
                    Some(prev) if prev != val => {
                        return Err(self.err(
                            id,
                            p,
                            format!("every dispatch entry must {what} the same member (`{prev}` vs `{val}`)"),
                        ))
                    }
                    _ => *slot = Some(val.clone()),
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
                super::resolve_in(types, &f.shape)
                    .1
                    .constraints
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
        let resolved = |f: &Field| super::resolve_in(types, &f.shape).1.clone();
        // The envelope's integers are the runtime's clocks and counters, typed `u64`/`i64` in its
        // borrowed view: each must fit 64 bits, by the set's stance or by its own bounds.
        for f in &obj.fields {
            let shape = resolved(f);
            if shape.types.contains(&JsonType::Integer)
                && crate::model::big_integer(&limits, crate::model::Bounds::of(&shape.constraints))
            {
                return Err(self.err(
                    id,
                    &join_pointer("/properties", &f.json_name),
                    format!(
                        "envelope member `{}` is an integer of any size: an envelope integer must fit 64 bits: declare `x-agh-envelope.integer_bits: 64` or bound it (`minimum`/`maximum` within i64)",
                        f.json_name
                    ),
                ));
            }
        }
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

    pub(super) fn refusal_codes(
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
}
