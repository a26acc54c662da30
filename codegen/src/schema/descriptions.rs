//! The set's own rule: every property is described (the docs are built from the descriptions).

use serde_json::Value;

use super::load::SchemaFile;
use crate::error::{join_pointer, Error, Result};

/// Every entry of every `properties` object must carry a `description` (the docs are built from
/// it). Conditional subschemas (`if`/`then`/`else`) are exempt: they restate members, they do not
/// declare them.
pub(super) fn check_descriptions(file: &SchemaFile, v: &Value, ptr: &str) -> Result<()> {
    let Value::Object(map) = v else {
        if let Value::Array(items) = v {
            for (i, child) in items.iter().enumerate() {
                check_descriptions(file, child, &join_pointer(ptr, &i.to_string()))?;
            }
        }
        return Ok(());
    };
    for (k, child) in map {
        let p = join_pointer(ptr, k);
        match k.as_str() {
            "if" | "then" | "else" | "const" | "enum" | "default" | "examples" => {}
            k if k.starts_with("x-agh-") => {}
            "properties" => {
                let Value::Object(props) = child else {
                    return Err(Error::new(&file.path, p, "`properties` must be an object"));
                };
                for (name, prop) in props {
                    let pp = join_pointer(&p, name);
                    match prop.get("description") {
                        Some(Value::String(d)) if !d.trim().is_empty() => {}
                        // A boolean schema cannot carry one: the docs say "any value" or "must
                        // be absent".
                        _ if prop.is_boolean() => {}
                        _ => {
                            return Err(Error::new(
                                &file.path,
                                pp,
                                format!("property `{name}` has no `description` (every property needs one: the docs are built from it)"),
                            ))
                        }
                    }
                    check_descriptions(file, prop, &pp)?;
                }
            }
            _ => check_descriptions(file, child, &p)?,
        }
    }
    Ok(())
}
