//! v0's messages: the validating parser ([`parse`]: the v0 `Registry` over the runtime's
//! envelope rules, fast and exact paths), the typed message ([`typed`]) and the builder
//! ([`build`]).

pub mod build;
pub mod parse;
pub mod typed;
