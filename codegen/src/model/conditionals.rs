//! Conditionals: a body's `if`/`then` rules in the restricted form (members required, absent or
//! typed, and envelope overrides, while a body member has one of some values), recognized on the
//! `allOf` entries the applicator parser read (`applicators.rs`) and taken out of the body type's
//! `allOf` to be emitted as the kind's conditional rules (`checks.rs`, `scan/kinds.rs`). An entry in
//! any other form stays a general rule of the body type. Only `x-agh-envelope` inside `then`
//! ties an entry to the restricted form: the overrides need it.

use std::collections::BTreeMap;

use serde_json::Value;

use super::dispatch::{members, object_only, only_conditional, DispatchEntry};
use super::{Builder, Envelope, JsonType, NamedType, ObjectShape, Presence, Shape};
use crate::error::{join_pointer, Result};
use crate::schema::load::Location;

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

/// The parts of a restricted rule: `(member, values, required, absent, typed)`.
type Restricted = (
    String,
    Vec<Value>,
    Vec<String>,
    Vec<String>,
    Vec<(String, JsonType)>,
);

/// The shape `{"type": <t>}` reads as (an object type carries an empty object shape).
fn typed_only(t: JsonType) -> Shape {
    let object = (t == JsonType::Object).then(|| members(Vec::new()));
    Shape {
        types: vec![t],
        object,
        ..Shape::default()
    }
}

/// Whether `entry` is a rule of the restricted form whose emission (`checks.rs`, `scan/kinds.rs`: a
/// member `null` counts as absent) gives the verdict JSON Schema gives for the general form:
/// a member that `then` requires without typing it, or types without requiring it, is one the
/// body does not allow to be `null`. `nullable`: the body members that allow `null`.
fn restricted(entry: &Shape, body: &ObjectShape, nullable: &[String]) -> Option<Restricted> {
    let c = only_conditional(entry)?;
    if c.otherwise.is_some() {
        return None;
    }
    let [when] = object_only(&c.condition)?.fields.as_slice() else {
        return None;
    };
    let declared = |name: &str| body.fields.iter().any(|f| f.json_name == name);
    if !when.required || !declared(&when.json_name) {
        return None;
    }
    let k = &when.shape.constraints;
    let values = match (&k.const_value, &k.enum_values) {
        (Some(v), None) => vec![v.clone()],
        (None, Some(vs)) => vs.clone(),
        _ => return None,
    };
    let mut only = Shape::default();
    only.constraints.const_value = k.const_value.clone();
    only.constraints.enum_values = k.enum_values.clone();
    if when.shape != only {
        return None;
    }
    let (mut required, mut absent, mut typed) = (Vec::new(), Vec::new(), Vec::new());
    let then = c.then.clone().unwrap_or_default();
    let fields = match then.object.as_ref() {
        Some(_) => object_only(&then)?.fields.clone(),
        None if then == Shape::default() => Vec::new(),
        None => return None,
    };
    for f in &fields {
        let name = f.json_name.clone();
        if !declared(&name) {
            return None;
        }
        let null_ok = nullable.contains(&name);
        let null_only = Shape {
            nullable: true,
            never: true,
            ..Shape::default()
        };
        if f.shape == Shape::default() {
            // Required only: the same verdict when `null` fails the body's own check.
            if !f.required || null_ok {
                return None;
            }
            required.push(name);
        } else if f.shape == null_only && !f.required {
            absent.push(name);
        } else if let [t] = f.shape.types.as_slice() {
            if f.shape != typed_only(*t) || (!f.required && null_ok) {
                return None;
            }
            if f.required {
                required.push(name.clone());
            }
            typed.push((name, *t));
        } else {
            return None;
        }
    }
    Some((when.json_name.clone(), values, required, absent, typed))
}

/// Whether a member of this shape may be `null`, as far as the model says: unless it and the
/// shape its `$ref` chain ends at ([`super::resolve_in`]) are not nullable, that end is a list of
/// types without `null` and nothing combines other rules with it, it may.
fn may_be_null(types: &[NamedType], shape: &Shape) -> bool {
    let end = super::resolve_in(types, shape).1;
    shape.nullable || end.nullable || end.types.is_empty() || !end.applicators.is_empty()
}

impl Builder<'_> {
    /// The conditional rules of every body the dispatch names, by body type, taken out of the
    /// body types' `allOf` (see the module docs).
    pub(super) fn conditionals(
        &self,
        types: &mut [NamedType],
        dispatch: &[DispatchEntry],
        env: &Envelope,
    ) -> Result<BTreeMap<String, Vec<Conditional>>> {
        let mut out = BTreeMap::new();
        for entry in dispatch {
            if out.contains_key(&entry.body_type) {
                continue;
            }
            let Some(t) = types.iter().find(|t| t.rust_name == entry.body_type) else {
                continue;
            };
            let Some(body) = t.shape.object.clone() else {
                continue;
            };
            let nullable: Vec<String> = body
                .fields
                .iter()
                .filter(|f| may_be_null(types, &f.shape))
                .map(|f| f.json_name.clone())
                .collect();
            let Some(t) = types.iter_mut().find(|t| t.rust_name == entry.body_type) else {
                continue;
            };
            let (id, ptr) = (t.location.id.clone(), t.location.pointer.clone());
            let mut pick = |p: &str, entry: &Shape| -> Result<Option<Conditional>> {
                let overrides = Location {
                    id: id.clone(),
                    pointer: format!("{p}/then/x-agh-envelope"),
                };
                let annotation = self.set.get(&overrides);
                let Some((member, values, required, absent, typed)) =
                    restricted(entry, &body, &nullable)
                else {
                    return match annotation {
                        None => Ok(None),
                        Some(_) => Err(self.err(
                            &id,
                            p,
                            "`x-agh-envelope` in `then` holds only in a conditional rule of the restricted form (schemas/README.md): `if` names one body member, required, with a `const` or an `enum`; `then` lists body members as `required`, `{\"type\": \"null\"}` (absent) or `{\"type\": <type>}`; no `else`",
                        )),
                    };
                };
                let envelope = match annotation {
                    None => EnvelopeOverrides::default(),
                    Some(v) => self.overrides(&id, &overrides.pointer, v, env)?,
                };
                Ok(Some(Conditional {
                    pointer: p.to_owned(),
                    when: Condition { member, values },
                    required,
                    absent,
                    typed,
                    envelope,
                }))
            };
            let rules = Self::take_entries(&mut t.shape, &ptr, &mut pick)?;
            out.insert(entry.body_type.clone(), rules);
        }
        Ok(out)
    }

    /// `x-agh-envelope` inside a rule's `then` at `at`: the envelope rules it overrides.
    fn overrides(
        &self,
        id: &str,
        at: &str,
        v: &Value,
        env: &Envelope,
    ) -> Result<EnvelopeOverrides> {
        let Value::Object(ov) = v else {
            return Err(self.err(id, at, "`x-agh-envelope` must be an object"));
        };
        let mut out = EnvelopeOverrides::default();
        for (ek, ev) in ov {
            let pr = ev.as_str().and_then(Presence::parse).ok_or_else(|| {
                self.err(
                    id,
                    &join_pointer(at, ek),
                    "must be required, recommended, optional or forbidden",
                )
            })?;
            // Keyed by the member that plays the role (`ref` in ACP).
            match env.roles.role_of(ek) {
                Some("to") => out.to = Some(pr),
                Some("reply_to") => out.reply_to = Some(pr),
                _ => {
                    let members: Vec<String> = [&env.roles.to, &env.roles.reply_to]
                        .into_iter()
                        .flatten()
                        .map(|m| format!("`{m}`"))
                        .collect();
                    return Err(self.err(
                        id,
                        at,
                        format!("`{ek}` cannot be overridden (only {})", members.join(", ")),
                    ));
                }
            }
        }
        Ok(out)
    }
}
