//! `$ref` resolution: a reference resolved against the `$id` of the file it is written in, to a
//! file of the set and a JSON Pointer inside it; and the check that every `$ref` of the set
//! resolves.

use serde_json::Value;

use super::load::{Location, SchemaFile, SchemaSet};
use crate::error::{join_pointer, Result};

impl SchemaSet {
    /// Resolves `reference` (the value of a `$ref` found at `at_pointer` in the file `from_id`).
    pub fn resolve_ref(
        &self,
        from_id: &str,
        at_pointer: &str,
        reference: &str,
    ) -> Result<Location> {
        let (target, fragment) = match reference.split_once('#') {
            Some((t, f)) => (t, f),
            None => (reference, ""),
        };
        let id = if target.is_empty() {
            from_id.to_string()
        } else {
            join_uri(from_id, target)
        };
        let Some(file) = self.file(&id) else {
            return Err(self.error(
                from_id,
                at_pointer,
                format!("unresolvable $ref {reference:?}: no schema file has $id {id}"),
            ));
        };
        if !fragment.is_empty() && !fragment.starts_with('/') {
            return Err(self.error(
                from_id,
                at_pointer,
                format!("unsupported $ref {reference:?}: the fragment must be a JSON Pointer"),
            ));
        }
        if file.doc.pointer(fragment).is_none() {
            return Err(self.error(
                from_id,
                at_pointer,
                format!(
                    "unresolvable $ref {reference:?}: {} has nothing at {fragment:?}",
                    file.path.display()
                ),
            ));
        }
        Ok(Location {
            id,
            pointer: fragment.to_string(),
        })
    }

    pub(super) fn check_refs(&self, file: &SchemaFile, v: &Value, ptr: &str) -> Result<()> {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    let p = join_pointer(ptr, k);
                    if k == "$ref" {
                        let Value::String(r) = child else {
                            return Err(self.error(&file.id, &p, "`$ref` must be a string"));
                        };
                        self.resolve_ref(&file.id, &p, r)?;
                    } else if k == "const" || k == "enum" || k == "examples" || k == "default" {
                        // data, not schemas
                    } else {
                        self.check_refs(file, child, &p)?;
                    }
                }
            }
            Value::Array(items) => {
                for (i, child) in items.iter().enumerate() {
                    self.check_refs(file, child, &join_pointer(ptr, &i.to_string()))?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}

/// Resolves a relative URI reference against a base URI (path segments only: `.` and `..`).
fn join_uri(base: &str, rel: &str) -> String {
    if rel.contains("://") {
        return rel.to_string();
    }
    let (prefix, base_path) = match base.find("://") {
        Some(i) => {
            let after = &base[i + 3..];
            match after.find('/') {
                Some(j) => (&base[..i + 3 + j], &after[j..]),
                None => (base, "/"),
            }
        }
        None => ("", base),
    };
    let mut segs: Vec<&str> = if rel.starts_with('/') {
        Vec::new()
    } else {
        let mut s: Vec<&str> = base_path.split('/').collect();
        s.pop();
        s
    };
    for seg in rel.split('/') {
        match seg {
            "." => {}
            ".." => {
                if segs.len() > 1 {
                    segs.pop();
                }
            }
            s => segs.push(s),
        }
    }
    let mut path = segs.join("/");
    if !path.starts_with('/') && !prefix.is_empty() {
        path.insert(0, '/');
    }
    format!("{prefix}{path}")
}

#[cfg(test)]
mod tests {
    use super::join_uri;

    #[test]
    fn joins_relative_uris() {
        let base = "https://agh.dev/schemas/network/v0/body/say.schema.json";
        assert_eq!(
            join_uri(base, "../defs.schema.json"),
            "https://agh.dev/schemas/network/v0/defs.schema.json"
        );
        assert_eq!(
            join_uri(base, "trace.schema.json"),
            "https://agh.dev/schemas/network/v0/body/trace.schema.json"
        );
        assert_eq!(
            join_uri(
                "https://agh.dev/schemas/network/v0/envelope.schema.json",
                "body/say.schema.json"
            ),
            "https://agh.dev/schemas/network/v0/body/say.schema.json"
        );
    }
}
