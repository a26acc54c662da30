//! Kinds: the message kinds of the envelope's dispatch and their envelope rules (`x-agh-kind`).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::dispatch::DispatchEntry;
use super::{
    str_list, Builder, Conditional, Containers, Envelope, Exchange, KnownValues, NamedType,
};
use crate::error::{join_pointer, Result};

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
    pub(super) fn parse(s: &str) -> Option<Self> {
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

impl Builder<'_> {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn kinds(
        &self,
        env: &Envelope,
        types: &[NamedType],
        dispatch: &[DispatchEntry],
        conditionals: &BTreeMap<String, Vec<Conditional>>,
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
        for (i, entry) in dispatch.iter().enumerate() {
            if dispatch[..i].iter().any(|e| e.kind == entry.kind) {
                return Err(self.err(
                    &id,
                    &entry.pointer,
                    format!("kind {:?} is dispatched twice", entry.kind),
                ));
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
        for e in dispatch {
            if !enum_values.contains(&e.kind) {
                return Err(self.err(&id, &e.pointer, format!("kind mismatch: the dispatch names kind {:?}, which the envelope `{}` enum does not list", e.kind, env.kind_member)));
            }
        }
        let mut kinds = Vec::new();
        for name in &enum_values {
            let Some(entry) = dispatch.iter().find(|e| e.kind == *name) else {
                return Err(self.err(
                    &id,
                    &kind_ptr,
                    format!("kind mismatch: kind {name:?} has no `allOf` dispatch entry"),
                ));
            };
            let loc = &entry.body_location;
            let body = &self.body_presence(&id, entry, env)?;
            let Some(t) = types.iter().find(|t| t.rust_name == entry.body_type) else {
                return Err(self.err(
                    &id,
                    &entry.pointer,
                    format!("the body schema of kind {name:?} must be a named type"),
                ));
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
            if t.shape.object.is_none() {
                return Err(self.err(
                    &loc.id,
                    &loc.pointer,
                    "a body schema must be an object schema",
                ));
            }
            for m in &rules.envelope_match {
                if env.member(&m.envelope).is_none() {
                    return Err(self.err(
                        &loc.id,
                        &join_pointer(&xp, "envelope_match"),
                        format!("`{}` is not an envelope member", m.envelope),
                    ));
                }
            }
            let conditionals = conditionals.get(&t.rust_name).cloned().unwrap_or_default();
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

    /// Whether a dispatch entry makes the body member required (`then.required` lists it, or the
    /// envelope's `required` does) or optional (`anyOf` with `{"type": "null"}`).
    fn body_presence(&self, id: &str, entry: &DispatchEntry, env: &Envelope) -> Result<Presence> {
        let body = &env.body_member;
        let envelope_requires = env.member(body).is_some_and(|f| f.required);
        match (envelope_requires || entry.listed, entry.nullable) {
            (true, false) => Ok(Presence::Required),
            (false, true) => Ok(Presence::Optional),
            (true, true) => Err(self.err(
                id,
                &entry.pointer,
                format!("`{body}` is required here, so it cannot also be `anyOf` with null"),
            )),
            (false, false) => Err(self.err(
                id,
                &entry.pointer,
                format!("the envelope does not require `{body}`: the dispatch entry must say whether this kind needs it (`\"required\": [\"{body}\"]` in `then`) or not (`anyOf: [{{\"$ref\": ..}}, {{\"type\": \"null\"}}]`)"),
            )),
        }
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
}
