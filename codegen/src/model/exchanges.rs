//! Exchanges: the request/response exchange a request kind opens (`x-agh-kind.exchange`), its
//! states and reply rules, and the `refers_to` lists.

use serde_json::Value;

use super::{str_list, Builder, Envelope, JsonType, Kind, NamedType, ObjectShape, Presence, Shape};
use crate::error::{join_pointer, Result};

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

impl Builder<'_> {
    /// `x-agh-kind.exchange` of every kind, and the `refers_to` lists, checked against the kinds.
    pub(super) fn exchanges(
        &self,
        env: &Envelope,
        types: &[NamedType],
        kinds: &mut [Kind],
    ) -> Result<()> {
        let body_of = |kind: &str| -> Option<(&NamedType, &ObjectShape)> {
            let k = kinds.iter().find(|k| k.name == kind)?;
            let t = types.iter().find(|t| t.rust_name == k.body_type)?;
            Some((t, t.shape.object.as_ref()?))
        };
        let resolve = |shape: &Shape| -> Shape { super::resolve_in(types, shape).1.clone() };
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
}
