//! The stances a schema set takes where a profile is stricter than JSON Schema, as the generated
//! code carries them: the deepest nesting (`x-agh-envelope.max_depth`, [`max_depth`]) and how
//! integers are written (`x-agh-envelope.integers`). For integers, the
//! validators call `is_integer`, the scanners `integer` and `raw_is_integer`, all three defined
//! once at the top of `checks.rs` / `scan.rs` from the model, so the emitters that test a value's
//! type do not depend on the stance. The member decoders of `types.rs` rewrite an integer written
//! otherwise as digits before serde reads it into the Rust integer ([`decode_text`]).
//!
//! An `integer` of any size (no `x-agh-envelope.integer_bits: 64`, or bounds beyond 64 bits:
//! [`crate::model::big_integer`], asked through [`big`]) is tested by `is_big_integer`,
//! `big_integer` and `raw_is_big_integer` instead, defined only in the files that call them (so
//! a set whose integers all fit 64 bits generates what it did before integers of any size).

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::{Bounds, Constraints, Integers, Model};

/// Whether an `integer` with these constraints (`None`: a type test without bounds, such as a
/// conditional's) is of any size rather than 64 bits.
pub fn big(model: &Model, c: Option<&Constraints>) -> bool {
    let bounds = c.map(Bounds::of).unwrap_or_default();
    crate::model::big_integer(&model.envelope.limits, bounds)
}

/// Whether a `number` with these constraints holds numbers of any size rather than `f64`s
/// ([`crate::model::big_number`]).
pub fn big_number(c: Option<&Constraints>) -> bool {
    crate::model::big_number(c.map(Bounds::of).unwrap_or_default())
}

/// `is_big_integer(v: &Value) -> bool` for `checks.rs` (when a validator calls it).
pub fn checks_big_prelude(model: &Model) -> TokenStream {
    let test = match model.envelope.limits.integers {
        Integers::Digits => quote!(c::is_big_integer(v)),
        Integers::Value => quote!(c::is_big_integral(v)),
    };
    quote! {
        /// An `integer` of any size (no `x-agh-envelope.integer_bits: 64`, or bounds beyond 64
        /// bits), written as this schema set writes integers.
        #[allow(dead_code)]
        fn is_big_integer(v: &Value) -> bool {
            #test
        }
    }
}

/// `big_integer(s)` and `raw_is_big_integer(text)` for `scan.rs` (when a scanner calls them).
pub fn scan_big_prelude(model: &Model) -> TokenStream {
    let (read, raw) = match model.envelope.limits.integers {
        Integers::Digits => (quote!(s.big_integer()), quote!(c::is_integer_text(text))),
        Integers::Value => (
            quote!(s.big_integral()),
            quote!(c::is_big_integral_text(text)),
        ),
    };
    quote! {
        /// Reads an `integer` of any size (no `x-agh-envelope.integer_bits: 64`, or bounds beyond
        /// 64 bits), written as this schema set writes integers.
        #[allow(dead_code)]
        #[inline]
        fn big_integer(s: &mut Scanner<'_>) -> Option<()> {
            #read
        }

        /// Whether the checked JSON text `text` is an `integer` of any size of this schema set.
        #[allow(dead_code)]
        fn raw_is_big_integer(text: &str) -> bool {
            #raw
        }
    }
}

/// `is_integer(v: &Value) -> bool` for `checks.rs`.
pub fn checks_prelude(model: &Model) -> TokenStream {
    let (test, doc) = match model.envelope.limits.integers {
        Integers::Digits => (
            quote!(c::is_integer(v)),
            " An `integer` of this schema set (`x-agh-envelope.integers: \"digits\"`): digits \
             only (no fraction, no exponent, not `-0`), within 64 bits.",
        ),
        Integers::Value => (
            quote!(c::is_integral(v)),
            " An `integer` of this schema set (JSON Schema's counting): any number of integral \
             value however written (`1.0`, `1e3`, `-0`), within 64 bits.",
        ),
    };
    quote! {
        #[doc = #doc]
        #[allow(dead_code)]
        fn is_integer(v: &Value) -> bool {
            #test
        }
    }
}

/// `integer(s)` (read an integer, declining otherwise) and `raw_is_integer(text)` for `scan.rs`.
pub fn scan_prelude(model: &Model) -> TokenStream {
    let (read, raw, doc) = match model.envelope.limits.integers {
        Integers::Digits => (
            quote!(s.integer()),
            quote!(c::is_integer_text(text)),
            " Reads an `integer` of this schema set (`x-agh-envelope.integers: \"digits\"`): \
             digits only, within 64 bits.",
        ),
        Integers::Value => (
            quote!(s.integral()),
            quote!(c::is_integral_text(text)),
            " Reads an `integer` of this schema set (JSON Schema's counting): any number of \
             integral value however written (`1.0`, `1e3`, `-0`), within 64 bits.",
        ),
    };
    quote! {
        #[doc = #doc]
        #[allow(dead_code)]
        #[inline]
        fn integer(s: &mut Scanner<'_>) -> Option<i128> {
            #read
        }

        /// Whether the checked JSON text `text` is an `integer` of this schema set (a
        /// conditional's type test).
        #[allow(dead_code)]
        fn raw_is_integer(text: &str) -> bool {
            #raw
        }
    }
}

/// The text a member decoder hands serde for an integer-typed member (`text`: the member's
/// checked JSON text): as it is where integers are digits only, else with integral numbers
/// rewritten as digits.
pub fn decode_text(model: &Model, text: TokenStream) -> TokenStream {
    let rt = crate::emit::paths::runtime();
    match model.envelope.limits.integers {
        Integers::Digits => text,
        Integers::Value => quote!(&#rt::json::decimal::integer_digits(#text)),
    }
}

/// The `MAX_DEPTH` constant of `rules.rs` (`x-agh-envelope.max_depth`, else the runtime's guard
/// against deep recursion) and its doc comment.
pub fn max_depth(model: &Model) -> (usize, String) {
    match model.envelope.limits.max_depth {
        Some(d) => (
            usize::try_from(d).unwrap_or(usize::MAX),
            " Deepest nesting of arrays and objects, the envelope object being level 1 \
             (`x-agh-envelope.max_depth`)."
                .to_owned(),
        ),
        None => (
            usize::try_from(crate::model::DEPTH_GUARD).unwrap_or(usize::MAX),
            " Deepest nesting of arrays and objects: no `x-agh-envelope.max_depth`, so only the \
             runtime's guard against deep recursion (128 levels: the deepest nesting the owned \
             message decodes)."
                .to_owned(),
        ),
    }
}
