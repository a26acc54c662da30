//! The model (IR) of a schema set: what the Rust, validator and docs emitters read.
//!
//! Everything here is derived from the schema set; nothing about particular kinds is built in.
//! Named types are the file root schemas that describe a value and every `$defs` entry; each gets
//! a Rust name from its `title` (else its `$defs` key or file stem), in upper camel case.

//!
//! One file per thing modelled: [`shapes`] (what a schema describes: types, constraints, members,
//! named types; the keywords carried), [`applicators`] (subschemas combined: `allOf`, `anyOf`,
//! `oneOf`, `if`/`then`/`else`, `dependentSchemas`, `$ref` beside other keywords), [`names`] (Rust names of types and members), [`envelope`]
//! (members, limits, roles, refusal codes), [`dispatch`] (the kind dispatch recognized on the
//! envelope's `allOf` entries), [`kinds`] (`x-agh-kind` rules), [`conditionals`] (a body's
//! `if`/`then` rules in the restricted form, recognized likewise), [`exchanges`] (request/response),
//! [`integers`] (which integers are of any size), [`values`]
//! (documented value sets), [`containers`], [`lifecycle`] and the transport [`binding`]. [`Model::build`] runs them in order.

mod applicators;
mod binding;
mod conditionals;
mod containers;
mod dispatch;
mod envelope;
mod exchanges;
mod integers;
mod kinds;
mod lifecycle;
mod names;
mod shapes;
mod values;

use std::collections::BTreeMap;

use serde_json::Value;

use crate::error::{join_pointer, Result};
use crate::schema::load::{Location, SchemaSet};

pub(crate) use self::applicators::{nullable_form, ref_has_siblings};
pub use self::applicators::{Applicators, IfThenElse};
pub use self::binding::{Binding, Segment as SubjectSegment, SubjectTemplate};
pub use self::conditionals::{Condition, Conditional, EnvelopeOverrides};
pub use self::containers::Containers;
pub use self::envelope::{
    Clock, Envelope, EnvelopeLimits, Forbidden, Integers, RefusalCodes, Roles, DEPTH_GUARD,
};
pub use self::exchanges::{
    Exchange, ExchangeState, MemberIs, ReplyRule, EXCHANGE_ANSWERED, EXCHANGE_OPEN,
};
pub use self::integers::{big_integer, big_number, Bounds};
pub use self::kinds::{EnvelopeMatch, Kind, KindRules, Presence, Verify, WorkRole};
pub use self::lifecycle::{Lifecycle, Sender, Transition, Trigger};
pub(crate) use self::names::type_sites;
pub use self::names::{rust_field_name, rust_type_name};
pub(crate) use self::shapes::plain_names;
pub use self::shapes::{Constraints, Field, JsonType, NamedType, ObjectShape, Shape, TrustProfile};
pub use self::values::{EnumDoc, EnumValue, KnownValues};

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
    /// The transport binding (`x-agh-binding`), if the set declares one.
    pub binding: Option<Binding>,
}

/// Follows `ref_type` links among `types` to the shape that carries the constraints, with the
/// last named type they reached (`None`: `shape` refers to none): [`Model::resolve_named`], and
/// what the builder asks before the model is whole. (A `$ref` loop consuming no data is refused
/// when the set is loaded; the walk stops after 32 links all the same.)
pub(crate) fn resolve_in<'a>(
    types: &'a [NamedType],
    shape: &'a Shape,
) -> (Option<&'a NamedType>, &'a Shape) {
    let mut named = None;
    let mut s = shape;
    for _ in 0..32 {
        match s
            .ref_type
            .as_deref()
            .and_then(|n| types.iter().find(|t| t.rust_name == n))
        {
            Some(t) => {
                named = Some(t);
                s = &t.shape;
            }
            None => break,
        }
    }
    (named, s)
}

impl Model {
    /// The named type with this Rust name.
    pub fn named(&self, rust_name: &str) -> Option<&NamedType> {
        self.types.iter().find(|t| t.rust_name == rust_name)
    }

    /// Follows `ref_type` links to the shape that carries the constraints.
    pub fn resolve<'a>(&'a self, shape: &'a Shape) -> &'a Shape {
        self.resolve_named(shape).1
    }

    /// [`Model::resolve`], with the last named type the links reached (`None`: `shape` refers
    /// to none).
    pub fn resolve_named<'a>(&'a self, shape: &'a Shape) -> (Option<&'a NamedType>, &'a Shape) {
        resolve_in(&self.types, shape)
    }

    /// The kind named `name`.
    pub fn kind(&self, name: &str) -> Option<&Kind> {
        self.kinds.iter().find(|k| k.name == name)
    }

    /// Builds the model from a loaded set (and checks its consistency).
    pub fn build(set: &SchemaSet) -> Result<Model> {
        Builder::new(set)?.build()
    }

    /// The model of a standalone schema ([`SchemaSet::standalone`]): its named types (the root
    /// and its `$defs`) and nothing a profile adds (no envelope: an empty [`Envelope`], no
    /// kinds). A plain schema names no reason codes: every problem its validators find is the
    /// runtime's `malformed`.
    pub fn standalone(set: &SchemaSet) -> Result<Model> {
        let types = Builder::new(set)?.types()?;
        Ok(Model {
            envelope: Envelope::default(),
            types,
            kinds: Vec::new(),
            containers: None,
            enums: Vec::new(),
            known_values: Vec::new(),
            lifecycle: None,
            binding: None,
            refusal_codes: Some(RefusalCodes {
                type_name: String::new(),
                entries: vec![("malformed".into(), "malformed".into())],
            }),
        })
    }
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

    fn err(&self, id: &str, ptr: &str, msg: impl Into<String>) -> crate::error::Error {
        self.set.error(id, ptr, msg)
    }

    /// Every named type, ordered by Rust name.
    fn types(&self) -> Result<Vec<NamedType>> {
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
        Ok(types)
    }

    fn build(&self) -> Result<Model> {
        let mut types = self.types()?;
        // The kind table is a view of the general model: the dispatch and the bodies'
        // conditional rules are recognized on the `allOf` entries the applicator parser read,
        // and taken out of the envelope's and the bodies' types (`dispatch.rs`,
        // `conditionals.rs`).
        let dispatch = self.dispatch(&mut types)?;
        let envelope = self.envelope(&types, &dispatch)?;
        let conditionals = self.conditionals(&mut types, &dispatch, &envelope)?;
        let types = types;

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
                known_values.push(self.known_values(t, k)?);
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
        let mut kinds = self.kinds(
            &envelope,
            &types,
            &dispatch,
            &conditionals,
            &known_values,
            containers.as_ref(),
        )?;
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
        let binding = self.binding(&envelope, &kinds)?;
        let model = Model {
            binding,
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
}
