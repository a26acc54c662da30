//! The schema set: reading its files, indexing them by `$id`, resolving `$ref`s across them and
//! the checks that need no model (every reference resolves, every property is described).

mod descriptions;
pub mod load;
mod refs;
