//! Recipe checks named by `x-agh-kind.verify` (see `schemas/README.md`): each takes the body
//! member the annotation points at and returns `Err((pointer below it, message))` on failure.
//! The recipes themselves are byte recipes a JSON Schema cannot state (NOTES section 6); they
//! live in their own modules ([`crate::digest`]).

use serde_json::Value;

use crate::scan::{Fields, RawJson};

/// A recipe check.
pub type Recipe = fn(&Value) -> Result<(), (String, String)>;

/// The recipe named `name`.
pub fn recipe(name: &str) -> Option<Recipe> {
    match name {
        crate::digest::RECIPE => Some(verify_capability),
        _ => None,
    }
}

/// A recipe on the parser's fast path: whether it holds for a checked value given as JSON text,
/// with the value's declared members when a generated fields scanner kept them while reading
/// it (see `scan_<type>_fields`); the [`Recipe`] of the same name says what is wrong when it
/// does not.
pub type RawRecipe = fn(RawJson<'_>, Option<&Fields<'_>>) -> bool;

/// The fast-path form of the recipe named `name`.
pub fn raw_recipe(name: &str) -> Option<RawRecipe> {
    match name {
        crate::digest::RECIPE => Some(crate::digest::verify_fields),
        _ => None,
    }
}

/// `capability-v0`: the document's `digest` must be its canonical capability digest.
pub fn verify_capability(doc: &Value) -> Result<(), (String, String)> {
    crate::digest::verify(doc)
        .map(|_| ())
        .map_err(|e| (e.pointer.clone(), e.message()))
}
