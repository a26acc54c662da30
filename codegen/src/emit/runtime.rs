//! Emits `runtime/src/generated/`: what the runtime (`agh-runtime`) takes from the reference
//! schema set (`schemas/agh-network-v0`). Its known-values enums (`ReasonCode`: the codes every
//! profile's problems carry) in `reason_code.rs`, and in `defaults.rs` the limits
//! `Options::at` starts from and the members `Head::of` reads. The reference set's own
//! `rules.rs` re-exports the enums instead of defining them ([`crate::emit::rules::emit_rules_with`]).

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::Model;

/// The tokens of `reason_code.rs`: the reference set's known-values enums.
pub fn emit_reason_code(model: &Model) -> TokenStream {
    let mut out = TokenStream::new();
    for k in &model.known_values {
        out.extend(crate::emit::rules::known_enum(k));
    }
    out
}

/// The tokens of `defaults.rs`: the reference set's limits and the members of a refused
/// envelope's head, as plain data.
pub fn emit_defaults(model: &Model) -> TokenStream {
    let env = &model.envelope;
    let max_bytes = env.limits.max_bytes as usize;
    let replay = env.limits.replay_age_seconds;
    let (max_depth, depth_doc) = crate::emit::stance::max_depth(model);
    let kind_member = &env.kind_member;
    let role = |m: &Option<String>| match m {
        Some(m) => quote!(Some(#m)),
        None => quote!(None),
    };
    let (id, from, work_id) = (
        role(&env.roles.id),
        role(&env.roles.from),
        role(&env.roles.work_id),
    );
    let (surface, containers) = match &model.containers {
        Some(c) => {
            let member = &c.member;
            let entries = c.entries.iter().map(|(s, m)| quote!((#s, #m)));
            (quote!(Some(#member)), quote!(&[#(#entries),*]))
        }
        None => (quote!(None), quote!(&[])),
    };
    quote! {
        //! The reference set's defaults: the limits `Options::at` starts from and the members
        //! `Head::of` reads.

        /// Largest accepted envelope in bytes (`x-agh-envelope.max_bytes`).
        pub const DEFAULT_MAX_BYTES: usize = #max_bytes;
        /// Replay age in seconds when `expires_at` is absent (`x-agh-envelope.replay_age_seconds`).
        pub const DEFAULT_REPLAY_AGE_SECS: u64 = #replay;
        #[doc = #depth_doc]
        pub const DEFAULT_MAX_DEPTH: usize = #max_depth;
        /// The member that selects the body schema.
        pub const KIND_MEMBER: &str = #kind_member;
        /// The member of role `id`.
        pub const ID_MEMBER: Option<&str> = #id;
        /// The member of role `from`.
        pub const FROM_MEMBER: Option<&str> = #from;
        /// The member of role `work_id`.
        pub const WORK_ID_MEMBER: Option<&str> = #work_id;
        /// The member that names the conversation surface.
        pub const SURFACE_MEMBER: Option<&str> = #surface;
        /// `(surface value, container member)` pairs (`x-agh-container`).
        pub const CONTAINERS: &[(&str, &str)] = #containers;
    }
}

/// The tokens of `mod.rs`.
pub fn emit_mod() -> TokenStream {
    quote! {
        //! Generated from the reference schema set: the reason codes and the defaults.
        #![allow(clippy::all, clippy::pedantic, missing_docs)]

        pub mod defaults;
        pub mod reason_code;

        pub use self::reason_code::*;
    }
}
