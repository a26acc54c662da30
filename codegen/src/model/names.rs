//! Names: the named-type sites of a set and the Rust names typify gives types and members.

use std::collections::BTreeMap;

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

/// Every named-type site of a set, as `(location, rust name)`, in file order.
pub(crate) fn type_sites(set: &SchemaSet) -> Result<Vec<(Location, String)>> {
    let mut sites = Vec::new();
    let mut names: BTreeMap<String, Location> = BTreeMap::new();
    for file in set.files() {
        let mut add = |pointer: String, schema: &Value, fallback: &str| -> Result<()> {
            let base = match schema.get("title") {
                Some(Value::String(t)) => t.clone(),
                _ => fallback.to_string(),
            };
            let name = rust_type_name(&base);
            let loc = Location {
                id: file.id.clone(),
                pointer: pointer.clone(),
            };
            if let Some(prev) = names.get(&name) {
                return Err(set.error(
                    &file.id,
                    &pointer,
                    format!(
                        "type name {name} is also used by {}#{}; give one of them another `title`",
                        set.path_of(&prev.id).display(),
                        prev.pointer
                    ),
                ));
            }
            names.insert(name.clone(), loc.clone());
            sites.push((loc, name));
            Ok(())
        };
        if set.is_standalone() || root_is_type(&file.doc) {
            let stem = file
                .path
                .file_name()
                .map(|f| f.to_string_lossy().into_owned())
                .unwrap_or_default();
            let stem = stem.split('.').next().unwrap_or_default().to_string();
            add(String::new(), &file.doc, &stem)?;
        }
        if let Some(defs) = file.doc.get("$defs") {
            let Value::Object(defs) = defs else {
                return Err(set.error(&file.id, "/$defs", "`$defs` must be an object"));
            };
            for (key, schema) in defs {
                add(join_pointer("/$defs", key), schema, key)?;
            }
        }
    }
    Ok(sites)
}
