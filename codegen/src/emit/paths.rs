//! The one place generated code's path to the runtime is written.

use proc_macro2::{Ident, Span, TokenStream};
use quote::quote;

/// The runtime crate (`agh-runtime`) as generated code names it.
pub const RUNTIME_CRATE: &str = "agh_runtime";

/// The runtime's package name (typify's `x-rust-type` names a crate by it).
pub const RUNTIME_PACKAGE: &str = "agh-runtime";

/// `::agh_runtime` as tokens, for `quote!` (`#rt::scan::Scanner`).
pub fn runtime() -> TokenStream {
    let name = Ident::new(RUNTIME_CRATE, Span::call_site());
    quote!(::#name)
}

/// `::agh_runtime` as text, for `#[agh(crate = "...")]`.
pub fn runtime_path() -> String {
    format!("::{RUNTIME_CRATE}")
}

/// The v0 `Message` (`agh_protocol::Message`) as the protocol crate's generated code names it
/// (`crate::Message`, built from its segments: the path is the protocol crate's, not this one's).
pub fn protocol_message() -> TokenStream {
    let root = Ident::new("crate", Span::call_site());
    quote!(#root::Message)
}
