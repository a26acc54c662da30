//! Recipe checks named by `x-agh-kind.verify` (see `schemas/README.md`): each takes the body
//! member the annotation points at and returns `Err((pointer below it, message))` on failure.

use serde_json::Value;

/// A recipe check.
pub type Recipe = fn(&Value) -> Result<(), (String, String)>;

/// The recipe named `name`.
pub fn recipe(name: &str) -> Option<Recipe> {
    match name {
        _ => None,
    }
}
