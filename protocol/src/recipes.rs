//! Recipe checks named by `x-agh-kind.verify` (see `schemas/README.md`): each takes the body
//! member the annotation points at and returns `Err((pointer below it, message))` on failure.
//!
//! The recipes are byte recipes that a JSON Schema cannot state (NOTES section 6).

use serde_json::Value;
use sha2::{Digest, Sha256};

/// A recipe check.
pub type Recipe = fn(&Value) -> Result<(), (String, String)>;

/// The recipe named `name`.
pub fn recipe(name: &str) -> Option<Recipe> {
    match name {
        "capability-v0" => Some(verify_capability),
        _ => None,
    }
}

/// The string members of a capability document, in digest order.
const STRINGS: &[&str] = &["id", "summary", "outcome", "version"];
/// The list members, in digest order (after the strings).
const LISTS: &[&str] = &[
    "context_needed",
    "artifacts_expected",
    "execution_outline",
    "constraints",
    "examples",
    "requirements",
];
/// The list whose entries are normalized strictly (blank or repeated entries are errors) and
/// sorted.
const SORTED_LIST: &str = "requirements";
/// Members that may be omitted from the canonical form when empty.
const OMIT_WHEN_EMPTY: &[&str] = &["version"];

/// Appends `s` as a JSON string the way Go's `encoding/json` writes it: `<`, `>`, `&`, U+2028
/// and U+2029 as `\u` escapes, the short escapes for `"`, `\`, backspace, form feed, newline,
/// carriage return and tab, other controls as `\u00xx`, everything else as raw UTF-8.
fn push_go_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' | '\u{0}'..='\u{1f}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// The canonical bytes of a capability document (NOTES section 6): a compact JSON object with
/// the keys in recipe order, strings trimmed of Unicode white space, blank list entries dropped
/// (`requirements`: blank or repeated entries are errors, and it is sorted bytewise), `version`
/// and the lists omitted when empty. Other members (`digest` itself among them) are not part of
/// it. `Err` carries the JSON Pointer (below the document) and a message.
pub fn capability_canonical(doc: &Value) -> Result<String, (String, String)> {
    let Some(map) = doc.as_object() else {
        return Err((
            String::new(),
            "a capability document is a JSON object".into(),
        ));
    };
    let mut out = String::from("{");
    let mut first = true;
    let mut key = |out: &mut String, name: &str| {
        if !std::mem::take(&mut first) {
            out.push(',');
        }
        push_go_string(out, name);
        out.push(':');
    };
    for &name in STRINGS {
        let value = match map.get(name) {
            None | Some(Value::Null) => "",
            Some(Value::String(s)) => s.trim(),
            Some(_) => return Err((format!("/{name}"), format!("`{name}` must be a string"))),
        };
        if value.is_empty() && OMIT_WHEN_EMPTY.contains(&name) {
            continue;
        }
        key(&mut out, name);
        push_go_string(&mut out, value);
    }
    for &name in LISTS {
        let items = match map.get(name) {
            None | Some(Value::Null) => continue,
            Some(Value::Array(items)) => items,
            Some(_) => return Err((format!("/{name}"), format!("`{name}` must be an array"))),
        };
        let mut entries: Vec<&str> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let Some(s) = item.as_str() else {
                return Err((
                    format!("/{name}/{i}"),
                    format!("`{name}` entries must be strings"),
                ));
            };
            let s = s.trim();
            if name == SORTED_LIST {
                if s.is_empty() {
                    return Err((
                        format!("/{name}/{i}"),
                        format!("`{name}` entries must not be blank"),
                    ));
                }
                if let Some(j) = entries.iter().position(|e| *e == s) {
                    return Err((
                        format!("/{name}/{i}"),
                        format!("`{name}` entry {i} repeats entry {j} after trimming"),
                    ));
                }
            } else if s.is_empty() {
                continue;
            }
            entries.push(s);
        }
        if name == SORTED_LIST {
            entries.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        }
        if entries.is_empty() {
            continue;
        }
        key(&mut out, name);
        out.push('[');
        for (i, e) in entries.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            push_go_string(&mut out, e);
        }
        out.push(']');
    }
    out.push('}');
    Ok(out)
}

/// The capability digest: `sha256:` + the lowercase hex SHA-256 of [`capability_canonical`].
pub fn capability_digest(doc: &Value) -> Result<String, (String, String)> {
    let canonical = capability_canonical(doc)?;
    let hash = Sha256::digest(canonical.as_bytes());
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in hash.iter() {
        out.push_str(&format!("{b:02x}"));
    }
    Ok(out)
}

/// `capability-v0`: the document's `digest` must be its capability digest.
pub fn verify_capability(doc: &Value) -> Result<(), (String, String)> {
    let expected = capability_digest(doc)?;
    match doc.get("digest").and_then(Value::as_str) {
        Some(d) if d == expected => Ok(()),
        Some(d) => Err((
            "/digest".into(),
            format!("digest {d} does not match the canonical capability digest {expected}"),
        )),
        None => Err((
            "/digest".into(),
            format!("missing `digest`; the canonical capability digest is {expected}"),
        )),
    }
}
