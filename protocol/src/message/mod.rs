//! v0's messages: the validating parser ([`parse`]: the runtime's generic parser over the v0
//! [`profile`] and the kinds of a `Registry`), the typed message ([`typed`]) and the builder
//! ([`build`]).

pub mod build;
pub mod parse;
pub mod profile;
pub mod typed;
