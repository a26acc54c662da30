//! Applicators: the subschemas a schema combines with its own keywords, each modelled once as a
//! list of shapes checked against the same value (`allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`,
//! `dependentSchemas`, and a `$ref` written beside other keywords). `not` stays a constraint
//! (`Constraints::not`), `prefixItems` sits beside `items` on the shape, and the object
//! applicators (`patternProperties`, `additionalProperties`) on [`super::ObjectShape`].

use serde_json::{Map, Value};

use super::{Builder, Shape};
use crate::error::{join_pointer, Result};

/// The in-place applicators of one schema (all empty: none).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Applicators {
    /// The target of a `$ref` written beside validation keywords: a conjunct, checked as well as
    /// the schema's own keywords (alone, or beside annotations only, `$ref` is the shape itself).
    pub reference: Option<Box<Shape>>,
    /// `allOf`: every shape must match.
    pub all_of: Vec<Shape>,
    /// `anyOf`: at least one shape must match (beside the nullable form
    /// `anyOf: [<schema>, {"type": "null"}]`, which is the shape itself with `null` allowed).
    pub any_of: Vec<Shape>,
    /// `oneOf`: exactly one shape must match.
    pub one_of: Vec<Shape>,
    /// `if`/`then`/`else`.
    pub conditional: Option<Box<IfThenElse>>,
    /// `dependentSchemas`, in schema order: when the object has the member, the whole object
    /// must match the shape.
    pub dependent: Vec<(String, Shape)>,
}

/// `if`/`then`/`else`: when the value matches `condition`, it must match `then`, else
/// `otherwise` (an absent branch always holds).
#[derive(Clone, Debug, PartialEq)]
pub struct IfThenElse {
    /// `if`.
    pub condition: Shape,
    /// `then`.
    pub then: Option<Shape>,
    /// `else`.
    pub otherwise: Option<Shape>,
}

impl Applicators {
    /// Whether the schema has no applicator.
    pub fn is_empty(&self) -> bool {
        self == &Applicators::default()
    }

    /// The `allOf` entries that constrain, with their index: an entry the kind table took out
    /// (`dispatch.rs`) is left as `true` in its place and holds, so every emitter skips it here.
    pub fn conjuncts(&self) -> impl Iterator<Item = (usize, &Shape)> {
        self.all_of
            .iter()
            .enumerate()
            .filter(|(_, s)| **s != Shape::default())
    }
}

/// Keywords that never constrain a value: a `$ref` beside only these is the shape itself.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$anchor",
    "$defs",
    "definitions",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "format",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "readOnly",
    "writeOnly",
    "deprecated",
];

/// Whether `map` (holding a `$ref`) has a validation keyword beside it (not an annotation, not
/// an `x-agh-*` annotation).
pub(crate) fn ref_has_siblings(map: &Map<String, Value>) -> bool {
    map.keys()
        .any(|k| k != "$ref" && !ANNOTATIONS.contains(&k.as_str()) && !k.starts_with("x-agh-"))
}

/// Whether `items` is the nullable form `[<schema>, {"type": "null"}]` (either order): the index
/// of the schema that is not `null`.
pub(crate) fn nullable_form(items: &[Value]) -> Option<usize> {
    let is_null = |s: &Value| s.get("type") == Some(&Value::String("null".into()));
    match items {
        [a, b] if is_null(b) && !is_null(a) => Some(0),
        [a, b] if is_null(a) && !is_null(b) => Some(1),
        _ => None,
    }
}

impl Builder<'_> {
    /// The shapes of a list applicator (`allOf`, `anyOf`, `oneOf`) at `ptr/key`.
    pub(super) fn shape_list(
        &self,
        id: &str,
        ptr: &str,
        key: &str,
        v: &Value,
        depth: usize,
    ) -> Result<Vec<Shape>> {
        let p = join_pointer(ptr, key);
        let Some(items) = v.as_array().filter(|a| !a.is_empty()) else {
            return Err(self.err(
                id,
                &p,
                format!("`{key}` must be a non-empty array of schemas"),
            ));
        };
        items
            .iter()
            .enumerate()
            .map(|(i, s)| self.shape(id, &join_pointer(&p, &i.to_string()), s, depth + 1))
            .collect()
    }

    /// `allOf`, `if`/`then`/`else` and `dependentSchemas` of the schema `map` at `ptr` (the
    /// envelope's and the bodies' too: the kind table is recognized on them, `dispatch.rs`).
    pub(super) fn applicators(
        &self,
        id: &str,
        ptr: &str,
        map: &Map<String, Value>,
        depth: usize,
        into: &mut Applicators,
    ) -> Result<()> {
        if let Some(all) = map.get("allOf") {
            into.all_of = self.shape_list(id, ptr, "allOf", all, depth)?;
        }
        if let Some(cond) = map.get("if") {
            let sub = |key: &str| -> Result<Option<Shape>> {
                map.get(key)
                    .map(|s| self.shape(id, &join_pointer(ptr, key), s, depth + 1))
                    .transpose()
            };
            let condition = self.shape(id, &join_pointer(ptr, "if"), cond, depth + 1)?;
            let (then, otherwise) = (sub("then")?, sub("else")?);
            if then.is_some() || otherwise.is_some() {
                into.conditional = Some(Box::new(IfThenElse {
                    condition,
                    then,
                    otherwise,
                }));
            }
        }
        if let Some(v) = map.get("dependentSchemas") {
            let at = join_pointer(ptr, "dependentSchemas");
            let Value::Object(entries) = v else {
                return Err(self.err(id, &at, "`dependentSchemas` must map members to schemas"));
            };
            for (name, schema) in entries {
                let shape = self.shape(id, &join_pointer(&at, name), schema, depth + 1)?;
                into.dependent.push((name.clone(), shape));
            }
        }
        Ok(())
    }
}
