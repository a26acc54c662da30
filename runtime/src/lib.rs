//! The runtime every AGH protocol profile shares; it names no profile.
//!
//! - [`json`]: the strict JSON reader, the fast-path [`scan`]ner and [`jcs`] (RFC 8785);
//! - [`schema`]: what generated code calls and returns: the [`check`] helpers of the
//!   validators, the kind rules ([`kind`]), the shapes of the generated tables ([`model`]) and
//!   [`problem`]s with their reason codes;
//! - [`profile`]: the generic parser over a profile's generated `Spec` (one fast path, one exact
//!   path), its [`Options`] and [`Rejection`]s;
//! - [`exchange`]: what receivers keep between messages: the [`DedupWindow`], the
//!   request/response [`correlation`] and the [`inbox`] that ties them to the parser;
//! - [`generated`]: what the runtime takes from the reference schema set
//!   (`schemas/agh-network-v0`): the [`ReasonCode`]s and the defaults, written by
//!   `cargo xtask codegen`.

pub mod exchange;
#[rustfmt::skip]
pub mod generated;
pub mod json;
pub mod profile;
pub mod schema;

pub use exchange::{correlation, inbox};
pub use json::{jcs, scan};
pub use schema::{binding, check, kind, model, problem};

pub use agh_macros::Body;
pub use exchange::dedup::DedupWindow;
pub use kind::{Body, EnvelopeMatch, KindRules, Presence, Verify, WorkRole};
pub use problem::{Problem, Problems, ReasonCode};
pub use profile::{Head, HeadSource, Options, Rejection};
pub use scan::RawJson;

/// Paths used by `#[derive(Body)]` expansions; not public API.
#[doc(hidden)]
pub mod __private {
    pub use serde;
}
