//! Schema set -> model (IR) -> Rust code and docs. One folder per step of the flow:
//!
//! - [`schema`]: [`SchemaSet::load`] reads a directory of JSON Schemas, indexes them by `$id`,
//!   resolves and checks every `$ref` and checks that every property is described.
//! - [`model`]: [`Model::build`] turns the set into the IR that every emitter reads, checking the
//!   set's consistency (kinds, dispatch, the `x-agh-*` vocabulary, carried keywords only).
//! - [`emit`]: the emitters (Rust types via typify, rules, validators, scanners, the runtime
//!   profile, reference docs).
//!
//! This file is the pipeline: [`load_model`] (load, then build), [`generate`] (the generated files
//! for `protocol/src/generated/`), [`workspace_outputs`] and [`check`]. Nothing below imports it.

pub mod emit;
pub mod error;
pub mod model;
pub mod schema;

use std::collections::BTreeSet;
use std::path::Path;

pub use emit::{header, GeneratedFile};
// The emitters' and the loader's modules under their former root paths (`agh_codegen::docs`).
pub use emit::{checks, docs, pattern, profile, rules, rust, scan};
pub use error::{Error, Result};
pub use model::Model;
pub use schema::load;
pub use schema::load::{Location, SchemaFile, SchemaSet};

/// Loads the set at `dir` and builds its model: loading checks the references and descriptions,
/// building the model checks the rest (the kinds agree, only carried keywords are used).
pub fn load_model(dir: impl AsRef<Path>) -> Result<(SchemaSet, Model)> {
    let set = SchemaSet::load(dir)?;
    let model = Model::build(&set)?;
    Ok((set, model))
}

/// One output directory of codegen (relative to the workspace root) and its files.
#[derive(Clone, Debug)]
pub struct Output {
    /// The directory, relative to the workspace root (`protocol/src/generated`).
    pub dir: &'static str,
    /// Its files.
    pub files: Vec<GeneratedFile>,
}

/// The second schema set of the workspace: invented kinds and shapes the normative set does not
/// have (nested arrays with `minItems`, integer items with `minimum`, unique objects), so that
/// code generated for another set is compiled and run, not only read.
pub const TEST_SET: &str = "codegen/tests/fixtures/two-kinds";

/// A third schema set: a kind and named types that use the applicators of JSON Schema (`allOf`,
/// `anyOf`, `oneOf` unions, `if`/`then`/`else`, `not`, `dependentSchemas`, `prefixItems`, several
/// `patternProperties`, `additionalProperties` as a schema, `type` lists, boolean schemas, `$ref`
/// beside other keywords); its code is written into `protocol/tests/applicators`, which
/// `protocol/tests/schema_applicators.rs` compiles and runs.
pub const APPLICATORS_SET: &str = "codegen/tests/fixtures/applicators";
/// A schema set whose bodies exercise `$ref` resolution: recursive types (`#`, across two files,
/// inside an embedded resource), `$anchor`s, embedded `$id`s, a URN `$id`, escaped pointers
/// (`~0`, `~1`, `%25`) and pointers to members and items; its code goes to
/// `protocol/tests/refs_set`, compiled and run by `protocol/tests/ref_resolution.rs`.
pub const REFS_SET: &str = "codegen/tests/fixtures/refs";
/// A schema set for issue 30's speed target: one kind, `report`, whose body uses `oneOf` (three
/// artifact shapes), `patternProperties`, `maxLength`, `multipleOf` and `contains`; its code goes
/// to `protocol/benches/keywords_set`, compiled into `protocol/benches/keywords.rs`, which times
/// its `parse_ref` against `serde_json` and `jsonschema` on the same schemas.
pub const KEYWORDS_BENCH_SET: &str = "codegen/tests/fixtures/keywords-bench";

/// The second protocol profile of the workspace: the ACP draft (`agh-acp`).
pub const ACP_SET: &str = "schemas/acp-v0.2";

/// The edits of `docs/guides/add-an-acp-kind.md` as data (a `progress` kind, applied over
/// [`ACP_SET`] by [`SchemaSet::load_edited`]): its code is generated into `acp/tests/acp_with_progress`,
/// which `acp/tests/add_kind.rs` compiles and runs, so the guide's claim is proven on every test
/// run; `codegen/tests/add_kind.rs` holds the edits to the guide's text.
pub const ADD_KIND_EDITS: &str = "codegen/tests/fixtures/acp-add-kind/edits.json";

/// The ACP set with the edits of [`ADD_KIND_EDITS`].
pub fn load_add_kind_model(root: &Path) -> Result<(SchemaSet, Model)> {
    let set = SchemaSet::load_edited(
        &root.join(ACP_SET),
        &root.join(ADD_KIND_EDITS),
        &format!("{ACP_SET} with the edits of {ADD_KIND_EDITS}"),
    )?;
    let model = Model::build(&set)?;
    Ok((set, model))
}

/// Everything `cargo xtask codegen` writes for the workspace at `root`: the reference set's
/// reason codes and defaults into `runtime/src/generated`, the Rust code from
/// `schemas/agh-network-v0` into `protocol/src/generated`, the derive macro's tables (the
/// members an `envelope_match` may name) into `macros/src/generated`, the reference docs (with the
/// examples of `examples/envelopes`) into `docs/reference`, and the Rust code of [`TEST_SET`]
/// into `protocol/tests/two_kinds` (compiled by the protocol crate's `second_schema_set` test
/// against the same runtime: generated code names the runtime as `::agh_runtime`
/// ([`emit::paths::RUNTIME_CRATE`]) and its own files as `super`, so it compiles in any crate
/// that depends on `agh-runtime`), the code of [`REFS_SET`] into `protocol/tests/refs_set` and
/// that of [`KEYWORDS_BENCH_SET`] into `protocol/benches/keywords_set`;
/// the ACP code
/// and reference into `acp/src/generated` and `docs/reference/acp`, and the code of the ACP set
/// with the add-a-kind guide's edits ([`ADD_KIND_EDITS`]) into `acp/tests/acp_with_progress`.
pub fn workspace_outputs(root: &Path) -> Result<Vec<Output>> {
    let (set, model) = load_model(root.join("schemas/agh-network-v0"))?;
    let (acp_set, acp_model) = load_model(root.join(ACP_SET))?;
    let (edited_set, edited_model) = load_add_kind_model(root)?;
    Ok(vec![
        Output {
            dir: "runtime/src/generated",
            files: emit::emit_runtime_code(&set, &model)?,
        },
        Output {
            dir: "protocol/src/generated",
            files: emit::emit_profile_code(&set, &model, true)?,
        },
        Output {
            dir: "macros/src/generated",
            files: emit::emit_macro_code(&set, &model)?,
        },
        Output {
            dir: "docs/reference",
            files: docs::emit_docs(&set, &model, Some(&root.join("examples/envelopes")))?,
        },
        Output {
            dir: "protocol/tests/two_kinds",
            files: generate(root.join(TEST_SET))?,
        },
        Output {
            dir: "protocol/tests/applicators",
            files: generate(root.join(APPLICATORS_SET))?,
        },
        Output {
            dir: "protocol/tests/refs_set",
            files: generate(root.join(REFS_SET))?,
        },
        Output {
            dir: "protocol/benches/keywords_set",
            files: generate(root.join(KEYWORDS_BENCH_SET))?,
        },
        Output {
            dir: "acp/src/generated",
            files: generate_from(&acp_set, &acp_model)?,
        },
        Output {
            dir: "docs/reference/acp",
            files: docs::emit_docs(
                &acp_set,
                &acp_model,
                Some(&root.join("examples/acp-envelopes")),
            )?,
        },
        Output {
            dir: "acp/tests/acp_with_progress",
            files: generate_from(&edited_set, &edited_model)?,
        },
    ])
}

/// Every generated file for the set at `dir`, in path order, byte-identical across runs.
pub fn generate(dir: impl AsRef<Path>) -> Result<Vec<GeneratedFile>> {
    let (set, model) = load_model(dir)?;
    generate_from(&set, &model)
}

/// Every generated file for an already loaded set and model.
pub fn generate_from(set: &SchemaSet, model: &Model) -> Result<Vec<GeneratedFile>> {
    emit::emit_code(set, model)
}

/// The code of a standalone schema document (a plain JSON Schema: no `x-agh-envelope`, no
/// kinds), for a module of its own in a crate that depends on `agh-runtime`: the validator and
/// scanner of every named type (the root, named from its `title`, else from `path`'s stem, and
/// its `$defs`), the root's pair re-exported as `check` (exact path: every problem with its
/// pointer) and `scan` (fast path: the verdict). `path` names the document in errors and in the
/// files' header; `base` is its base URI when it has no `$id`. A keyword codegen does not carry
/// is an error naming it and its pointer, as for a schema set.
pub fn standalone(path: &str, doc: serde_json::Value, base: &str) -> Result<Vec<GeneratedFile>> {
    let set = SchemaSet::standalone(path, doc, base)?;
    let model = Model::standalone(&set)?;
    let root = model
        .types
        .iter()
        .find(|t| t.location.pointer.is_empty())
        .map(|t| t.rust_name.clone())
        .ok_or_else(|| Error::new(path, "", "the document's root is not a schema"))?;
    emit::standalone::emit_standalone_code(&model, &header(&set), &root)
}

/// Compares `files` with the contents of `out_dir`: returns `(stale or missing, extra)` relative
/// paths. Extra files are files in `out_dir` with the extension of the generated ones (`.rs`,
/// `.md`) that codegen does not produce.
pub fn check(out_dir: &Path, files: &[GeneratedFile]) -> (Vec<String>, Vec<String>) {
    let exts: BTreeSet<&str> = files
        .iter()
        .filter_map(|f| f.path.rsplit_once('.').map(|(_, e)| e))
        .collect();
    let mut stale = Vec::new();
    for f in files {
        match std::fs::read_to_string(out_dir.join(&f.path)) {
            Ok(existing) if existing == f.contents => {}
            _ => stale.push(f.path.clone()),
        }
    }
    let mut extra = Vec::new();
    if let Ok(entries) = std::fs::read_dir(out_dir) {
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let generated_kind = name.rsplit_once('.').is_some_and(|(_, e)| exts.contains(e));
            if generated_kind && !files.iter().any(|f| f.path == name) {
                extra.push(name);
            }
        }
    }
    extra.sort();
    (stale, extra)
}
