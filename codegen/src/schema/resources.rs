//! The identifiers of a schema set (draft 2020-12 "Schema Identification"): every schema
//! resource (a file's root, or a subschema with its own `$id`) by its absolute URI, every
//! `$anchor` of each resource, the base URI in effect at each location and every `$ref`. They are
//! found by walking only the keywords that hold schemas: a `$id` inside `const` or `enum`, or a
//! property named `$ref`, is data, not a keyword.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::load::{Location, SchemaFile};
use super::uri::Uri;
use crate::error::{join_pointer, Error, Result};

/// Keywords whose value is one schema.
const SCHEMA_KEYWORDS: &[&str] = &[
    "additionalProperties",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedItems",
    "unevaluatedProperties",
    "contentSchema",
];

/// Keywords whose value maps names to schemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is a list of schemas.
const SCHEMA_LIST_KEYWORDS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];

/// Core keywords codegen refuses, with the reason.
const REFUSED: &[(&str, &str)] = &[
    (
        "$dynamicRef",
        "dynamic scope is not modelled: generated types and validators are static",
    ),
    (
        "$dynamicAnchor",
        "dynamic scope is not modelled: generated types and validators are static",
    ),
    (
        "$recursiveRef",
        "draft 2019-09 recursion is not modelled (use `$ref`)",
    ),
    (
        "$recursiveAnchor",
        "draft 2019-09 recursion is not modelled (use `$ref`)",
    ),
    (
        "$vocabulary",
        "codegen reads the draft 2020-12 vocabularies it lists in schemas/README.md, not a \
         metaschema's own",
    ),
];

/// Where a `$ref` is written.
#[derive(Clone, Debug)]
pub(crate) struct RefSite {
    /// The location of the `$ref` member itself (`.../$ref`).
    pub at: Location,
    /// Its value.
    pub reference: String,
}

/// The identifiers of a set, built once on load.
#[derive(Clone, Debug, Default)]
pub(crate) struct Resources {
    /// Each resource's root, by its normalized absolute URI.
    roots: BTreeMap<String, Location>,
    /// Each `$anchor`, by (normalized resource URI, name).
    anchors: BTreeMap<(String, String), Location>,
    /// Per file (by `$id`), each resource in it as (pointer, base URI), in document order.
    bases: BTreeMap<String, Vec<(String, Uri)>>,
    /// Every `$ref`, in document order.
    refs: Vec<RefSite>,
}

impl Resources {
    /// Adds the resources, anchors and references of one file.
    pub fn add_file(&mut self, file: &SchemaFile) -> Result<()> {
        // A file whose `$id` is relative is resolved against where it was read from.
        let retrieval = Uri::parse(&format!("file:///{}", file.path.display()));
        self.add_document(file, &retrieval)
    }

    /// Adds one document read from `retrieval`: without a `$id` of its own, the document is the
    /// resource named by that URI (draft 2020-12: the retrieval URI is the base URI).
    pub fn add_document(&mut self, file: &SchemaFile, retrieval: &Uri) -> Result<()> {
        if file.doc.get("$id").is_none() {
            let uri = retrieval.without_fragment();
            let root = Location {
                id: file.id.clone(),
                pointer: String::new(),
            };
            self.roots.insert(uri.normalized(), root);
            self.bases
                .entry(file.id.clone())
                .or_default()
                .push((String::new(), uri));
        }
        self.walk(file, &file.doc, "", retrieval)
    }

    /// The resource root with this absolute URI (fragment ignored).
    pub fn root(&self, uri: &Uri) -> Option<&Location> {
        self.roots.get(&uri.normalized())
    }

    /// The location of `$anchor` `name` in the resource with this URI.
    pub fn anchor(&self, uri: &Uri, name: &str) -> Option<&Location> {
        self.anchors.get(&(uri.normalized(), name.to_owned()))
    }

    /// The base URI in effect at `pointer` in the file `file_id`: that of the innermost resource
    /// holding it.
    pub fn base_at(&self, file_id: &str, pointer: &str) -> Option<&Uri> {
        self.bases
            .get(file_id)?
            .iter()
            .filter(|(p, _)| {
                pointer == p
                    || pointer
                        .strip_prefix(p.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
            })
            .max_by_key(|(p, _)| p.len())
            .map(|(_, uri)| uri)
    }

    /// Every `$ref` of the set.
    pub fn refs(&self) -> &[RefSite] {
        &self.refs
    }

    fn walk(&mut self, file: &SchemaFile, v: &Value, ptr: &str, base: &Uri) -> Result<()> {
        let Value::Object(map) = v else {
            return Ok(());
        };
        let err = |at: &str, msg: String| Error::new(&file.path, at, msg);
        if let Some((k, why)) = REFUSED.iter().find(|(k, _)| map.contains_key(*k)) {
            return Err(err(
                &join_pointer(ptr, k),
                format!("`{k}` is not supported by codegen: {why}"),
            ));
        }
        let mut base = base.clone();
        if let Some(id) = map.get("$id") {
            let at = join_pointer(ptr, "$id");
            let Value::String(id) = id else {
                return Err(err(&at, "`$id` must be a string".into()));
            };
            let uri = base.resolve(id);
            if uri.fragment.as_deref().is_some_and(|f| !f.is_empty()) {
                return Err(err(
                    &at,
                    format!(
                        "`$id` {id:?} has a fragment: in draft 2020-12 a `$id` names a resource \
                         (use `$anchor` for a name inside it)"
                    ),
                ));
            }
            let loc = Location {
                id: file.id.clone(),
                pointer: ptr.to_owned(),
            };
            if let Some(prev) = self.roots.insert(uri.normalized(), loc) {
                return Err(err(
                    &at,
                    format!(
                        "`$id` {} is also the `$id` at {:?} of the file with `$id` {}",
                        uri.without_fragment(),
                        prev.pointer,
                        prev.id
                    ),
                ));
            }
            base = uri.without_fragment();
            self.bases
                .entry(file.id.clone())
                .or_default()
                .push((ptr.to_owned(), base.clone()));
        }
        if let Some(anchor) = map.get("$anchor") {
            let at = join_pointer(ptr, "$anchor");
            let name = anchor.as_str().filter(|a| is_anchor(a)).ok_or_else(|| {
                err(
                    &at,
                    "`$anchor` must be a name: a letter or `_`, then letters, digits, `-`, `_`, \
                     `.`"
                    .into(),
                )
            })?;
            let loc = Location {
                id: file.id.clone(),
                pointer: ptr.to_owned(),
            };
            if let Some(prev) = self
                .anchors
                .insert((base.normalized(), name.to_owned()), loc)
            {
                return Err(err(
                    &at,
                    format!(
                        "`$anchor` {name:?} is also at {} in the same resource ({base})",
                        prev.pointer
                    ),
                ));
            }
        }
        if let Some(r) = map.get("$ref") {
            let at = join_pointer(ptr, "$ref");
            let Value::String(r) = r else {
                return Err(err(&at, "`$ref` must be a string".into()));
            };
            self.refs.push(RefSite {
                at: Location {
                    id: file.id.clone(),
                    pointer: at,
                },
                reference: r.clone(),
            });
        }
        for (below, child) in subschemas(map) {
            self.walk(file, child, &format!("{ptr}{below}"), &base)?;
        }
        Ok(())
    }
}

/// The subschemas of a schema object, each with its pointer below the schema
/// (`/properties/a~1b`), in member order.
pub(crate) fn subschemas(map: &Map<String, Value>) -> Vec<(String, &Value)> {
    let mut out = Vec::new();
    for (k, v) in map {
        let at = join_pointer("", k);
        let k = k.as_str();
        let list = SCHEMA_LIST_KEYWORDS.contains(&k)
            // `items` as a list is draft 2019-09's tuple form.
            || k == "items" && v.is_array();
        if list {
            for (i, s) in v.as_array().into_iter().flatten().enumerate() {
                out.push((format!("{at}/{i}"), s));
            }
        } else if SCHEMA_KEYWORDS.contains(&k) {
            out.push((at, v));
        } else if SCHEMA_MAP_KEYWORDS.contains(&k) {
            for (name, s) in v.as_object().into_iter().flatten() {
                out.push((join_pointer(&at, name), s));
            }
        }
    }
    out
}

/// `$anchor`'s grammar: `^[A-Za-z_][-A-Za-z0-9._]*$`.
fn is_anchor(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}
