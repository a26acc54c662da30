//! AGH Network v0 for Rust: generated types, a validating parser, identities, digests,
//! lifecycle and delivery semantics. The JSON Schemas in `schemas/agh-network-v0/` are the single
//! source of truth; `protocol/src/generated/` is produced from them by `cargo xtask codegen`.

#[rustfmt::skip]
pub mod generated;
pub mod message;
pub mod receive;
pub mod recipes;
pub mod trust;

pub use message::{build, parse};
pub use receive::{bounds, delivery, discovery, lifecycle};
pub use recipes::{digest, identity};

pub use agh_runtime::{check, correlation, inbox, jcs, json, kind, model, problem, profile, scan};

pub use agh_macros::Body;
pub use agh_runtime::{HeadSource, Problem, Problems, RawJson, ReasonCode};
pub use build::MessageBuilder;
pub use delivery::{DedupWindow, Delivery, Receiver, ReceiverConfig, Refusal, Route};
pub use generated::*;
pub use kind::{Body, EnvelopeMatch, KindRules, Presence, Verify, WorkRole};
pub use lifecycle::{Outcome, WorkEvent, WorkKey, WorkTracker, WorkUnit};
pub use message::profile::V0;
pub use parse::{
    explain, parse, parse_bytes, parse_ref, ExtensionBody, Head, Message, MessageBody, MessageRef,
    Options, RegisterError, Registry, Rejection,
};

/// Paths used by `#[derive(Body)]` expansions; not public API.
#[doc(hidden)]
pub use agh_runtime::__private;
pub use bytes::Bytes;
