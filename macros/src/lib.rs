//! `#[derive(Body)]`: attaches AGH Network kind rules to a body type.
use proc_macro::TokenStream;

/// Derives `agh_protocol::Body` from an `#[agh(...)]` attribute.
#[proc_macro_derive(Body, attributes(agh))]
pub fn derive_body(input: TokenStream) -> TokenStream {
    let _ = input;
    TokenStream::new()
}
