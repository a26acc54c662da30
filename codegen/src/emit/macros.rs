//! Emits `macros/src/generated/`: what the derive macro (`agh-macros`) takes from the reference
//! schema set. The macro crate cannot depend on the protocol crate (the protocol crate depends
//! on it), so the few tables it checks attributes against are written into it here.

use proc_macro2::TokenStream;
use quote::quote;

use crate::emit::envelope_ref::{member_repr, MemberRepr};
use crate::model::Model;

/// The envelope members an `envelope_match` may name: the top-level string members (those the
/// profile's `str_of` reads), but the ones whose value the schema fixes (a `const` or an `enum`:
/// the profile, the kind, the surface), which a body member could only restate.
pub fn envelope_match_members(model: &Model) -> Vec<&str> {
    model
        .envelope
        .members
        .iter()
        .filter(|f| member_repr(model, f) == MemberRepr::Str)
        .filter(|f| f.json_name != model.envelope.kind_member)
        .filter(|f| {
            let c = &model.resolve(&f.shape).constraints;
            c.const_value.is_none() && c.enum_values.is_none()
        })
        .map(|f| f.json_name.as_str())
        .collect()
}

/// The tokens of `mod.rs`.
pub fn emit_mod(model: &Model) -> TokenStream {
    let members = envelope_match_members(model);
    quote! {
        //! Generated from the reference schema set: the tables the derive checks attributes
        //! against.

        /// The top-level envelope string members an `envelope_match` may name, in schema order.
        pub(crate) const ENVELOPE_MEMBERS: &[&str] = &[#(#members),*];
    }
}
