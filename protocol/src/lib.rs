//! AGH Network v0 for Rust: generated types, a validating parser, identities, digests,
//! lifecycle and delivery semantics. The JSON Schemas in `schemas/agh-network-v0/` are the single
//! source of truth; `protocol/src/generated/` is produced from them by `cargo xtask codegen`.

pub mod kind;

pub use agh_macros::Body;
pub use kind::{Body, EnvelopeMatch, KindRules, Presence, Verify, WorkRole};
