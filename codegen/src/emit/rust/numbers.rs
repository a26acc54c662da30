//! The typify view's integers and numbers of any size ([`big_numbers`]).

use serde_json::{Map, Value};

use crate::model::Model;

/// Points each `integer` schema of the reduced view that holds integers of any size
/// ([`crate::emit::stance::big`]) at the runtime's `BigInt`, and each `number` schema that holds
/// numbers beyond `f64` ([`crate::emit::stance::big_number`]) at `serde_json::Number` (kept as
/// written), by typify's `x-rust-type`, keeping the description; `[<type>, "null"]` becomes an
/// optional one. Values (`const`, `enum`, `default`, `examples`) are not schemas and are left
/// alone.
pub(super) fn big_numbers(model: &Model, v: &mut Value) {
    let Value::Object(map) = v else { return };
    let type_of = |t: &Value| match t {
        Value::String(t) => Some((t.clone(), false)),
        Value::Array(ts) if ts.len() == 2 && ts.contains(&Value::String("null".into())) => ts
            .iter()
            .find_map(|t| t.as_str().filter(|t| *t != "null"))
            .map(|t| (t.to_owned(), true)),
        _ => None,
    };
    // A list of several types with an integer or number of any size: typify would make an enum
    // with a Rust integer or `f64` variant, so the type is any JSON value (numbers kept as
    // written) and the validators hold the rule.
    if let Some(Value::Array(ts)) = map.get("type") {
        let others = ts.iter().filter(|t| t.as_str() != Some("null")).count();
        let bounds = bounds_of(map);
        let big = ts.iter().any(|t| match t.as_str() {
            Some("integer") => crate::emit::stance::big(model, Some(&bounds)),
            Some("number") => crate::emit::stance::big_number(Some(&bounds)),
            _ => false,
        });
        if others > 1 && big {
            let mut out = Map::new();
            if let Some(d) = map.get("description") {
                out.insert("description".into(), d.clone());
            }
            *map = out;
            return;
        }
    }
    if let Some((t, nullable)) = map.get("type").and_then(type_of) {
        let c = bounds_of(map);
        let rt = crate::emit::paths::RUNTIME_CRATE;
        let rust_type = match t.as_str() {
            "integer" if crate::emit::stance::big(model, Some(&c)) => Some(serde_json::json!({
                "crate": crate::emit::paths::RUNTIME_PACKAGE,
                "version": "*",
                "path": format!("{rt}::json::BigInt"),
            })),
            "number" if crate::emit::stance::big_number(Some(&c)) => Some(serde_json::json!({
                "crate": "serde_json", "version": "*", "path": "serde_json::Number",
            })),
            _ => None,
        };
        if let Some(rust_type) = rust_type {
            let mut out = Map::new();
            if let Some(d) = map.get("description") {
                out.insert("description".into(), d.clone());
            }
            if nullable {
                let mut inner = Map::new();
                inner.insert("x-rust-type".into(), rust_type);
                out.insert("anyOf".into(), serde_json::json!([inner, {"type": "null"}]));
            } else {
                out.insert("x-rust-type".into(), rust_type);
            }
            *map = out;
            return;
        }
    }
    for (k, child) in map.iter_mut() {
        if matches!(k.as_str(), "const" | "enum" | "default" | "examples") {
            continue;
        }
        match child {
            Value::Object(m)
                if matches!(k.as_str(), "properties" | "patternProperties" | "$defs") =>
            {
                m.values_mut().for_each(|s| big_numbers(model, s));
            }
            Value::Array(items) => items.iter_mut().for_each(|s| big_numbers(model, s)),
            _ => big_numbers(model, child),
        }
    }
}

/// The number bounds written in a schema object, as constraints.
fn bounds_of(map: &Map<String, Value>) -> crate::model::Constraints {
    let bound = |k: &str| match map.get(k) {
        Some(Value::Number(n)) => Some(n.as_str().to_owned()),
        _ => None,
    };
    crate::model::Constraints {
        minimum: bound("minimum"),
        maximum: bound("maximum"),
        exclusive_minimum: bound("exclusiveMinimum"),
        exclusive_maximum: bound("exclusiveMaximum"),
        ..Default::default()
    }
}
