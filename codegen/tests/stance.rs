//! The stances of `x-agh-envelope` (`integers`, `max_depth`: issue 30 item 3), read into the model
//! and said in the generated reference; a set without them gets JSON Schema's semantics.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use agh_codegen::model::Integers;
use agh_codegen::{Model, SchemaSet};
use serde_json::{json, Value};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn envelope_page(set: &SchemaSet, model: &Model) -> String {
    agh_codegen::docs::emit_docs(set, model, None)
        .unwrap()
        .into_iter()
        .find(|f| f.path == "envelope.md")
        .unwrap()
        .contents
}

#[test]
fn the_profiles_declare_digits_and_64_levels() {
    for dir in ["schemas/agh-network-v0", "schemas/acp-v0.2"] {
        let (set, model) = agh_codegen::load_model(root().join(dir)).unwrap();
        assert_eq!(model.envelope.limits.integers, Integers::Digits, "{dir}");
        assert_eq!(model.envelope.limits.max_depth, Some(64), "{dir}");
        assert_eq!(model.envelope.limits.integer_bits, Some(64), "{dir}");
        let page = envelope_page(&set, &model);
        assert!(page.contains("- Nesting: at most 64 levels"), "{page}");
        assert!(page.contains("written as digits only: `1.0`, `1e3` and `-0` are `malformed`"));
    }
}

#[test]
fn a_set_without_them_gets_json_schema_semantics() {
    let (set, model) = agh_codegen::load_model(root().join(agh_codegen::TEST_SET)).unwrap();
    assert_eq!(model.envelope.limits.integers, Integers::Value);
    assert_eq!(model.envelope.limits.max_depth, None);
    let page = envelope_page(&set, &model);
    assert!(
        page.contains("- Integers: as JSON Schema counts them"),
        "{page}"
    );
    assert!(
        page.contains("- Nesting: no limit of the profile's; the runtime refuses more than 128"),
        "{page}"
    );
    let files = agh_codegen::generate_from(&set, &model).unwrap();
    let text = |p: &str| files.iter().find(|f| f.path == p).unwrap().contents.clone();
    assert!(text("checks.rs").contains("c::is_integral(v)"));
    assert!(text("scan.rs").contains("s.integral()"));
    assert!(text("rules.rs").contains("pub const MAX_DEPTH: usize = 128usize;"));
}

/// The test set with `x-agh-envelope.<member>` set to `value`: codegen's answer.
fn with_stance(member: &str, value: Value) -> Result<Model, String> {
    edited(
        agh_codegen::TEST_SET,
        "envelope.schema.json",
        &format!("/x-agh-envelope/{member}"),
        value,
    )
    .map(|(_, model)| model)
}

/// The set in `dir` with `value` added at `path` of `file`: codegen's answer.
fn edited(dir: &str, file: &str, path: &str, value: Value) -> Result<(SchemaSet, Model), String> {
    let edits = [json!({"file": file, "op": "add", "path": path, "value": value})];
    let set = SchemaSet::load_with_edits(
        &root().join(dir),
        &edits,
        Path::new("stance edits"),
        "the test set with a stance",
    )
    .map_err(|e| e.to_string())?;
    let model = Model::build(&set).map_err(|e| e.to_string())?;
    Ok((set, model))
}

const PLAIN_SET: &str = "codegen/tests/fixtures/applicators";

/// The applicators set declares no `integer_bits`: its unbounded integers are of any size in the
/// validators, scanners and types, and the reference says so; the 64-bit sets generate none of it.
#[test]
fn a_set_without_integer_bits_has_integers_of_any_size() {
    let (set, model) = agh_codegen::load_model(root().join(PLAIN_SET)).unwrap();
    assert_eq!(model.envelope.limits.integer_bits, None);
    let page = envelope_page(&set, &model);
    assert!(
        page.contains("of any size (no `x-agh-envelope.integer_bits: 64`)"),
        "{page}"
    );
    let files = agh_codegen::generate_from(&set, &model).unwrap();
    let text = |p: &str| files.iter().find(|f| f.path == p).unwrap().contents.clone();
    assert!(text("checks.rs").contains("c::is_big_integral(v)"));
    assert!(text("checks.rs").contains("is_big_integer(v)"));
    assert!(text("scan.rs").contains("s.big_integral()"));
    assert!(text("scan.rs").contains("big_integer(s)?"));
    // `size` (no bounds) is any size.
    assert!(text("types.rs").contains("pub size: ::agh_runtime::json::BigInt"));
    let (set, model) = agh_codegen::load_model(root().join(agh_codegen::TEST_SET)).unwrap();
    assert_eq!(model.envelope.limits.integer_bits, Some(64));
    let files = agh_codegen::generate_from(&set, &model).unwrap();
    for f in &files {
        assert!(!f.contents.contains("big_integer"), "{}", f.path);
        assert!(!f.contents.contains("BigInt"), "{}", f.path);
    }
}

#[test]
fn an_envelope_integer_must_fit_64_bits() {
    let member =
        |schema: Value| edited(PLAIN_SET, "envelope.schema.json", "/properties/seq", schema);
    let e = member(json!({"description": "A sequence number.", "type": "integer"})).unwrap_err();
    assert!(e.contains("/properties/seq"), "{e}");
    assert!(e.contains("integer_bits: 64"), "{e}");
    member(
        json!({"description": "A sequence number.", "type": "integer",
        "minimum": 0, "maximum": 1000000}),
    )
    .unwrap();
    // With the stance, an unbounded envelope integer is a 64-bit one.
    edited(
        agh_codegen::TEST_SET,
        "envelope.schema.json",
        "/properties/seq",
        json!({"description": "A sequence number.", "type": "integer"}),
    )
    .unwrap();
}

#[test]
fn a_stance_codegen_cannot_carry_is_refused_naming_it() {
    assert_eq!(
        with_stance("integers", json!("digits"))
            .unwrap()
            .envelope
            .limits
            .integers,
        Integers::Digits
    );
    assert_eq!(
        with_stance("max_depth", json!(100))
            .unwrap()
            .envelope
            .limits
            .max_depth,
        Some(100)
    );
    for (member, value) in [
        ("integers", json!("words")),
        ("integers", json!(true)),
        ("max_depth", json!(0)),
        ("max_depth", json!(129)),
        ("max_depth", json!("64")),
        ("integer_bits", json!(32)),
        ("integer_bits", json!("64")),
        ("integer_bits", json!(128)),
    ] {
        let e = with_stance(member, value.clone()).unwrap_err();
        assert!(
            e.contains(&format!("/x-agh-envelope/{member}")),
            "{value}: {e}"
        );
        assert!(e.contains(&format!("`{member}` must be")), "{value}: {e}");
    }
}
