//! The emitters: each reads the model (and, for types, the schema set) and writes one generated
//! file or the reference docs.

pub mod checks;
pub mod docs;
pub mod pattern;
pub mod profile;
pub mod rules;
pub mod rust;
pub mod scan;
