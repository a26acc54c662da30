//! The entry points: [`emit_scan`] (a profile's `scan.rs`) and [`emit_type_scan`] (a
//! standalone schema's: its named types only).

use std::collections::BTreeMap;

use proc_macro2::TokenStream;
use quote::quote;

use super::Emitter;
use crate::error::Result;
use crate::model::Model;

/// The tokens of `scan.rs`. `patterns` maps every pattern source to its matcher in `checks.rs`.
pub fn emit_scan(model: &Model, patterns: &BTreeMap<String, String>) -> Result<TokenStream> {
    emit_scan_of(model, patterns, true)
}

fn emit_scan_of(
    model: &Model,
    patterns: &BTreeMap<String, String>,
    profile: bool,
) -> Result<TokenStream> {
    let rt = &crate::emit::paths::runtime();
    let e = Emitter {
        model,
        patterns,
        big: std::cell::Cell::new(false),
    };
    let types = e.named_types()?;
    let (kinds, envelope) = if profile {
        (e.kinds()?, e.envelope()?)
    } else {
        (TokenStream::new(), TokenStream::new())
    };
    let mut integers = crate::emit::stance::scan_prelude(model);
    if e.big.get() {
        integers.extend(crate::emit::stance::scan_big_prelude(model));
    }
    Ok(quote! {
        //! The fast path's scanners generated from the schema set: one per named type, one body
        //! scanner per kind, and the envelope's borrowed view. They accept or decline; the
        //! exact validators in `checks.rs` say why.
        use std::borrow::Cow;

        use #rt::check as c;
        use #rt::model::BodyOverrides;
        use #rt::scan::{self, JsonKind, Kept, Member, RawJson, Scanner};

        #integers
        #envelope
        #types
        #kinds
    })
}

/// The scanners of a standalone schema's named types ([`Model::standalone`]): `scan.rs` without
/// the kinds' body scanners and the envelope's view (it has neither).
pub fn emit_type_scan(model: &Model, patterns: &BTreeMap<String, String>) -> Result<TokenStream> {
    emit_scan_of(model, patterns, false)
}
