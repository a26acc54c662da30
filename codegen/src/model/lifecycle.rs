//! The work lifecycle (`x-agh-lifecycle`): states, transitions and their triggers.

use serde_json::Value;

use super::{str_list, Builder, EnumDoc, EnumValue, Kind, NamedType, WorkRole};
use crate::error::{join_pointer, Result};

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

impl Builder<'_> {
    pub(super) fn lifecycle(
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
                            let s = super::resolve_in(types, &field.shape).1;
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
