//! The schema set: reading its files, indexing them by `$id` and their resources and anchors,
//! resolving `$ref`s as draft 2020-12 says (RFC 3986 URIs in `uri.rs`) and the checks that need no
//! model (every reference resolves, no reference loop, every property is described).

mod descriptions;
pub mod load;
mod refs;
pub(crate) mod resources;
pub mod uri;
