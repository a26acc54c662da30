//! Conditionals: a body's restricted `if`/`then` rules (members required, absent or typed, and
//! envelope overrides, while a body member has one of some values).

use serde_json::Value;

use super::{str_list, Builder, Envelope, JsonType, ObjectShape, Presence};
use crate::error::{join_pointer, Result};

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

impl Builder<'_> {
    pub(super) fn conditionals(
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
}
