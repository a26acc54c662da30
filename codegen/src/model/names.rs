//! Names: the named-type sites of a set and the Rust names typify gives types and members.

use std::collections::{BTreeMap, BTreeSet};

use heck::{ToPascalCase, ToSnakeCase};
use serde_json::Value;

use crate::error::{join_pointer, Result};
use crate::schema::load::{Location, SchemaSet};

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

/// Every named-type site of a set, as `(location, rust name)`: each file's root schema that
/// describes a value and each `$defs` entry, in file order, then every other location a `$ref`
/// names (a member's schema, `#/items`, a root holding only `$defs`, a subschema with its own
/// `$id`...), so that every reference, recursive ones included, is to a named type.
pub(crate) fn type_sites(set: &SchemaSet) -> Result<Vec<(Location, String)>> {
    let mut sites = Sites::default();
    for file in set.files() {
        if set.is_standalone() || root_is_type(&file.doc) {
            let stem = file_stem(&file.path);
            sites.add(set, Location::root(&file.id), &file.doc, &stem)?;
        }
        if let Some(defs) = file.doc.get("$defs") {
            let Value::Object(defs) = defs else {
                return Err(set.error(&file.id, "/$defs", "`$defs` must be an object"));
            };
            for (key, schema) in defs {
                let loc = Location {
                    id: file.id.clone(),
                    pointer: join_pointer("/$defs", key),
                };
                sites.add(set, loc, schema, key)?;
            }
        }
    }
    let mut targets = BTreeSet::new();
    for r in set.resources().refs() {
        targets.insert(set.resolve_ref(&r.at.id, &r.at.pointer, &r.reference)?);
    }
    for loc in targets {
        if sites.names.values().any(|l| *l == loc) {
            continue;
        }
        let schema = set.get(&loc).unwrap_or(&Value::Null);
        if let Some(Value::String(_)) = schema.get("title") {
            sites.add(set, loc, schema, "")?;
            continue;
        }
        let name = sites.derived_name(set, &loc);
        sites.names.insert(name.clone(), loc.clone());
        sites.order.push((loc, name));
    }
    Ok(sites.order)
}

#[derive(Default)]
struct Sites {
    order: Vec<(Location, String)>,
    names: BTreeMap<String, Location>,
}

impl Sites {
    /// Adds a site named by its `title`, else by `fallback`; two sites of one name are an error.
    fn add(
        &mut self,
        set: &SchemaSet,
        loc: Location,
        schema: &Value,
        fallback: &str,
    ) -> Result<()> {
        let base = match schema.get("title") {
            Some(Value::String(t)) => t.clone(),
            _ => fallback.to_string(),
        };
        let name = rust_type_name(&base);
        if let Some(prev) = self.names.get(&name) {
            return Err(set.error(
                &loc.id,
                &loc.pointer,
                format!(
                    "type name {name} is also used by {}#{}; give one of them another `title`",
                    set.path_of(&prev.id).display(),
                    prev.pointer
                ),
            ));
        }
        self.names.insert(name.clone(), loc.clone());
        self.order.push((loc, name));
        Ok(())
    }

    /// The name of an untitled `$ref` target that is neither a root nor a `$defs` entry: the
    /// name of the nearest site holding it and the path from there, as typify names inline types
    /// (`#/properties/summary` of `CapabilityDocument`: `CapabilityDocumentSummary`; `items`:
    /// `Item`), with a number appended if that name is taken.
    fn derived_name(&self, set: &SchemaSet, loc: &Location) -> String {
        let holder = self
            .order
            .iter()
            .filter(|(l, _)| l.id == loc.id && is_below(&loc.pointer, &l.pointer))
            .max_by_key(|(l, _)| l.pointer.len());
        let (mut parts, rest) = match holder {
            Some((l, name)) => (vec![name.clone()], &loc.pointer[l.pointer.len()..]),
            None => (vec![file_stem(&set.path_of(&loc.id))], loc.pointer.as_str()),
        };
        let tokens: Vec<String> = rest
            .split('/')
            .skip(1)
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect();
        let mut tokens = tokens.iter();
        while let Some(t) = tokens.next() {
            match t.as_str() {
                "properties" | "patternProperties" | "$defs" | "definitions"
                | "dependentSchemas" => parts.extend(tokens.next().cloned()),
                "items" => parts.push("item".into()),
                "additionalProperties" => parts.push("value".into()),
                other => parts.push(other.into()),
            }
        }
        let name = rust_type_name(&parts.join("-"));
        let mut unique = name.clone();
        let mut n = 2;
        while self.names.contains_key(&unique) {
            unique = format!("{name}{n}");
            n += 1;
        }
        unique
    }
}

/// Whether `pointer` is `holder` or below it.
fn is_below(pointer: &str, holder: &str) -> bool {
    pointer == holder
        || pointer
            .strip_prefix(holder)
            .is_some_and(|r| r.starts_with('/'))
}

/// A file's name up to its first `.` (`say` for `body/say.schema.json`).
fn file_stem(path: &std::path::Path) -> String {
    let stem = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    stem.split('.').next().unwrap_or_default().to_string()
}
