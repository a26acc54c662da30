//! The code of a standalone schema ([`crate::standalone`]): the validators and scanners of its
//! named types, by the same emitters as a profile's (`checks.rs`, `scan.rs`), and a `mod.rs`
//! that names the root's pair `check` and `scan`. No types: a plain schema's values are checked,
//! not decoded.

use quote::quote;

use super::{checks, parse_file, scan, unparse, GeneratedFile};
use crate::error::Result;
use crate::model::Model;

/// The files of a standalone schema's module (`checks.rs`, `mod.rs`, `scan.rs`, `types.rs`), in
/// path order; `header` is their first line, `root` the Rust name of the root type.
pub fn emit_standalone_code(model: &Model, header: &str, root: &str) -> Result<Vec<GeneratedFile>> {
    let emitted = checks::emit_type_checks(model)?;
    let checks = parse_file(emitted.tokens, "checks.rs")?;
    let scan = parse_file(scan::emit_type_scan(model, &emitted.matchers)?, "scan.rs")?;
    let check = checks::check_fn(root);
    let scan_root = scan::scan_fn(root);
    let doc = format!(" Generated from one schema: the validator and scanner of each named type; the root `{root}`'s are `check` and `scan`.");
    let mod_rs = parse_file(
        quote! {
            #![doc = #doc]
            #![allow(
                clippy::all,
                clippy::pedantic,
                missing_docs,
                unused_imports,
                rust_2018_idioms,
                irrefutable_let_patterns,
                unused_labels,
                clippy::unwrap_used,
                unused_mut,
                dead_code
            )]

            pub mod checks;
            pub mod scan;
            pub mod types;

            pub use self::checks::#check as check;
            pub use self::scan::#scan_root as scan;
        },
        "mod.rs",
    )?;
    let types = parse_file(
        quote! {
            //! A standalone schema's validators and scanners need no generated types.
        },
        "types.rs",
    )?;
    Ok(vec![
        GeneratedFile {
            path: "checks.rs".into(),
            contents: unparse(header, &checks),
        },
        GeneratedFile {
            path: "mod.rs".into(),
            contents: unparse(header, &mod_rs),
        },
        GeneratedFile {
            path: "scan.rs".into(),
            contents: unparse(header, &scan),
        },
        GeneratedFile {
            path: "types.rs".into(),
            contents: unparse(header, &types),
        },
    ])
}
