//! Recipe checks named by `x-agh-kind.verify` (see `schemas/README.md`): each takes the body
//! member the annotation points at and returns `Err((pointer below it, message))` on failure.
//! The recipes themselves are byte recipes a JSON Schema cannot state (NOTES section 6); they
//! live in their own modules ([`crate::recipes::digest`]). [`RECIPES`] is v0's table, which the parser
//! hands to the runtime's shared envelope rules (`agh_runtime::profile::Recipe`).

pub mod digest;
pub mod identity;

use agh_runtime::profile::find_recipe;
pub use agh_runtime::profile::{RawRecipe, RecipeCheck as Recipe};
use serde_json::Value;

/// AGH Network v0's recipes, by the names `x-agh-kind.verify` gives them.
pub const RECIPES: &[agh_runtime::profile::Recipe] = &[agh_runtime::profile::Recipe {
    name: crate::recipes::digest::RECIPE,
    check: verify_capability,
    holds: crate::recipes::digest::verify_fields,
}];

/// The recipe named `name`.
pub fn recipe(name: &str) -> Option<Recipe> {
    find_recipe(RECIPES, name).map(|r| r.check)
}

/// The fast-path form of the recipe named `name`.
pub fn raw_recipe(name: &str) -> Option<RawRecipe> {
    find_recipe(RECIPES, name).map(|r| r.holds)
}

/// `capability-v0`: the document's `digest` must be its canonical capability digest.
pub fn verify_capability(doc: &Value) -> Result<(), (String, String)> {
    crate::recipes::digest::verify(doc)
        .map(|_| ())
        .map_err(|e| (e.pointer.clone(), e.message()))
}
