//! `docs/guides/edit-a-schema.md`, held to its data: the guide's three edits of a copy of the v0
//! set are kept in `codegen/tests/fixtures/edit-a-schema/*.json` (applied over
//! `schemas/agh-network-v0` in memory by `SchemaSet::load_edited`). Here: each edit is the
//! guide's own JSON block, and each edited set generates what the guide says it does (the
//! types, the validator's message, the docs), or, for the `oneOf` union codegen does not carry
//! yet, refuses clearly, naming `oneOf`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use agh_codegen::{GeneratedFile, Model, SchemaSet};
use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn guide() -> String {
    std::fs::read_to_string(root().join("docs/guides/edit-a-schema.md")).unwrap()
}

/// The JSON block that follows `<!-- edit_a_schema: NAME -->` in the guide.
fn guide_block(guide: &str, name: &str) -> Value {
    let marker = format!("<!-- edit_a_schema: {name} -->");
    let at = guide
        .find(&marker)
        .unwrap_or_else(|| panic!("the guide has no block {marker}"));
    let rest = &guide[at + marker.len()..];
    let start = rest.find("```json\n").expect("a json block") + "```json\n".len();
    let end = rest[start..].find("```").expect("its end") + start;
    serde_json::from_str(&rest[start..end])
        .unwrap_or_else(|e| panic!("the guide's block {name} is not JSON: {e}"))
}

fn edits_path(name: &str) -> PathBuf {
    root().join(format!("codegen/tests/fixtures/edit-a-schema/{name}.json"))
}

fn edits(name: &str) -> Vec<Value> {
    let doc: Value = serde_json::from_slice(&std::fs::read(edits_path(name)).unwrap()).unwrap();
    doc["edits"].as_array().unwrap().clone()
}

/// The v0 set with the edits of `name`.
fn load(name: &str) -> agh_codegen::Result<(SchemaSet, Model)> {
    let set = SchemaSet::load_edited(
        &root().join("schemas/agh-network-v0"),
        &edits_path(name),
        &format!("schemas/agh-network-v0 with the edits of {name}"),
    )?;
    let model = Model::build(&set)?;
    Ok((set, model))
}

/// The generated code and the reference docs of the v0 set with the edits of `name`.
fn generate(name: &str) -> (Vec<GeneratedFile>, Vec<GeneratedFile>) {
    let (set, model) = load(name).unwrap_or_else(|e| panic!("{name}: {e}"));
    let code = agh_codegen::generate_from(&set, &model).unwrap();
    let docs = agh_codegen::docs::emit_docs(&set, &model, None).unwrap();
    (code, docs)
}

fn file<'a>(files: &'a [GeneratedFile], path: &str) -> &'a str {
    &files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no generated {path}"))
        .contents
}

#[test]
fn the_edits_are_the_guides() {
    let guide = guide();
    let max_length = edits("max-length");
    assert_eq!(max_length.len(), 1);
    assert_eq!(max_length[0]["path"], "/properties/text/maxLength");
    assert_eq!(
        max_length[0]["value"],
        guide_block(&guide, "maxLength")["maxLength"]
    );
    let one_of = edits("one-of");
    assert_eq!(one_of.len(), 1);
    assert_eq!(one_of[0]["path"], "/properties/artifacts");
    assert_eq!(one_of[0]["value"], guide_block(&guide, "oneOf"));
    let tally = edits("pattern-properties");
    assert_eq!(tally.len(), 4);
    assert_eq!(tally[0]["file"], "body/tally.schema.json");
    assert_eq!(
        tally[0]["value"],
        guide_block(&guide, "body/tally.schema.json")
    );
    assert_eq!(tally[1]["value"], "tally");
    assert_eq!(tally[3]["value"], guide_block(&guide, "dispatch entry"));
}

#[test]
fn a_max_length_on_say_text() {
    let (before, before_docs) = (
        agh_codegen::generate(root().join("schemas/agh-network-v0")).unwrap(),
        {
            let (set, model) =
                agh_codegen::load_model(root().join("schemas/agh-network-v0")).unwrap();
            agh_codegen::docs::emit_docs(&set, &model, None).unwrap()
        },
    );
    if file(&before, "checks.rs").contains("must be at most 65536 characters long") {
        // A maintainer has performed the guide on `schemas/agh-network-v0` itself.
        return;
    }
    let (code, docs) = generate("max-length");
    // The type: still the pattern-checked newtype of a string (the cap constrains values).
    let types = file(&code, "types.rs");
    assert!(types.contains("pub struct SayBodyText(::std::string::String);"));
    // The validator's message and the scanner's check (code points, not bytes).
    let checks = file(&code, "checks.rs");
    assert!(
        checks.contains("must be at most 65536 characters long"),
        "validator"
    );
    assert!(
        !file(&before, "checks.rs").contains("65536"),
        "nothing of it before"
    );
    assert!(file(&code, "scan.rs").contains("65536"), "scanner");
    // The docs: the rule in words.
    let kinds = file(&docs, "message-kinds.md");
    assert!(kinds.contains("At most 65,536 characters."), "{kinds}");
    assert!(!file(&before_docs, "message-kinds.md").contains("At most 65,536 characters."));
}

#[test]
fn a_one_of_artifact_union_becomes_an_enum_a_check_and_a_sentence() {
    let (code, docs) = generate("one-of");
    // The type: an enum with one variant per shape, told apart by serde by their members.
    let types = file(&code, "types.rs");
    assert!(
        types.contains("pub enum SayBodyArtifactsItem"),
        "the union's enum"
    );
    for variant in ["GitRefArtifact", "LinkArtifact", "InlineArtifact"] {
        assert!(types.contains(variant), "variant {variant}: {types}");
    }
    // The validator: an item matching none of the shapes, or more than one, is refused, the
    // message naming the shapes tried.
    let checks = file(&code, "checks.rs");
    assert!(checks.contains("c::no_branch"), "no shape matched");
    assert!(
        checks.contains("c::several_branches"),
        "several shapes matched"
    );
    assert!(
        checks.contains("/properties/artifacts/items/oneOf"),
        "the rule"
    );
    // The docs: the union in words.
    let kinds = file(&docs, "message-kinds.md");
    assert!(
        kinds.contains("Each item: exactly one of the following shapes: (1) object, `type`"),
        "{kinds}"
    );
}

#[test]
fn a_pattern_properties_map_in_a_new_body_kind() {
    let (code, docs) = generate("pattern-properties");
    // The type: a struct for the body, the map as an open map (typify), the kind in the tables.
    let types = file(&code, "types.rs");
    assert!(types.contains("pub struct TallyBody"), "body type");
    assert!(
        types.contains("kind = \"tally\""),
        "derive(Body) attributes"
    );
    let rules = file(&code, "rules.rs");
    assert!(rules.contains("kind: \"tally\""), "kind rules");
    // The validator: the members whose names match hold non-negative integers.
    let checks = file(&code, "checks.rs");
    assert!(checks.contains("fn check_body_tally"), "body check");
    assert!(checks.contains("^[a-z][a-z0-9_]*$"), "the pattern");
    assert!(
        file(&code, "scan.rs").contains("fn scan_body_tally"),
        "body scanner"
    );
    // The docs: the kind's page section and the map in words.
    let kinds = file(&docs, "message-kinds.md");
    assert!(kinds.contains("`tally`"), "kind in the docs");
    assert!(
        kinds.contains("Other members whose names match `^[a-z][a-z0-9_]*$`: integer. At least 0."),
        "{kinds}"
    );
}
