//! Recipe checks named by `x-agh-kind.verify` (see `schemas/README.md`): byte recipes a JSON
//! Schema cannot state (the capability digest of AGH Network v0). The runtime names none: a
//! profile supplies its table ([`Profile::RECIPES`](super::Profile::RECIPES)), and the parser
//! looks each `verify` recipe up in it by name.

use serde_json::Value;

use crate::json::scan::{Fields, RawJson};

/// A recipe's exact form: `Err((pointer below the checked member, message))` when it fails.
pub type RecipeCheck = fn(&Value) -> Result<(), (String, String)>;

/// A recipe on the parser's fast path: whether it holds for a checked value given as JSON text,
/// with the value's declared members when a generated fields scanner kept them while reading
/// it (see `scan_<type>_fields`); the [`RecipeCheck`] of the same recipe says what is wrong when
/// it does not.
pub type RawRecipe = fn(RawJson<'_>, Option<&Fields<'_>>) -> bool;

/// One recipe of a profile's table.
#[derive(Clone, Copy, Debug)]
pub struct Recipe {
    /// The name `x-agh-kind.verify` gives it (`capability-v0`).
    pub name: &'static str,
    /// The exact form (says what is wrong).
    pub check: RecipeCheck,
    /// The fast-path form (whether it holds).
    pub holds: RawRecipe,
}

/// The recipe named `name` in `recipes`.
pub fn find_recipe(recipes: &'static [Recipe], name: &str) -> Option<&'static Recipe> {
    recipes.iter().find(|r| r.name == name)
}
