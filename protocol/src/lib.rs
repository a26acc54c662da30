//! AGH Network v0 for Rust: generated types, a validating parser, identities, digests,
//! lifecycle and delivery semantics. The JSON Schemas in `schemas/agh-network-v0/` are the single
//! source of truth; `protocol/src/generated/` is produced from them by `cargo xtask codegen`.

extern crate self as agh_protocol;

pub mod bounds;
pub mod build;
pub mod check;
pub mod correlation;
pub mod delivery;
pub mod digest;
pub mod discovery;
#[rustfmt::skip]
pub mod generated;
pub mod identity;
pub mod inbox;
pub mod jcs;
pub mod json;
pub mod kind;
pub mod lifecycle;
pub mod model;
pub mod parse;
pub mod problem;
pub mod profile;
pub mod recipes;
pub mod scan;
pub mod trust;

pub use agh_macros::Body;
pub use build::MessageBuilder;
pub use delivery::{DedupWindow, Delivery, Receiver, ReceiverConfig, Refusal};
pub use generated::*;
pub use kind::{Body, EnvelopeMatch, KindRules, Presence, Verify, WorkRole};
pub use lifecycle::{Outcome, WorkEvent, WorkKey, WorkTracker, WorkUnit};
pub use parse::{
    explain, parse, parse_ref, ExtensionBody, Head, Message, MessageBody, MessageRef, Options,
    RegisterError, Registry, Rejection,
};
pub use problem::{Problem, Problems, ReasonCode};
pub use scan::RawJson;

/// Paths used by `#[derive(Body)]` expansions; not public API.
#[doc(hidden)]
pub mod __private {
    pub use serde;
}
