//! `docs/guides/add-an-acp-kind.md`, performed: on a copy of `schemas/acp-v0.2`, the guide's new
//! body schema, its dispatch entry and its reply rule (each read from the guide's own JSON
//! blocks), then codegen. The new kind must show up in every generated output, with no Rust
//! edited; and the same copy without the edits must generate what is committed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use serde_json::Value;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The JSON block that follows `<!-- add_kind: NAME -->` in the guide.
fn guide_block(guide: &str, name: &str) -> Value {
    let marker = format!("<!-- add_kind: {name} -->");
    let at = guide
        .find(&marker)
        .unwrap_or_else(|| panic!("the guide has no block {marker}"));
    let rest = &guide[at + marker.len()..];
    let start = rest.find("```json\n").expect("a json block") + "```json\n".len();
    let end = rest[start..].find("```").expect("its end") + start;
    serde_json::from_str(&rest[start..end])
        .unwrap_or_else(|e| panic!("the guide's block {name} is not JSON: {e}"))
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let target = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &target);
        } else {
            std::fs::copy(&p, &target).unwrap();
        }
    }
}

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn write(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_string_pretty(v).unwrap()).unwrap();
}

fn file<'a>(files: &'a [agh_codegen::GeneratedFile], path: &str) -> &'a str {
    &files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no generated {path}"))
        .contents
}

#[test]
fn the_guide_adds_a_kind_by_editing_schemas_only() {
    let guide = std::fs::read_to_string(root().join("docs/guides/add-an-acp-kind.md")).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let set = tmp.path().join("acp-v0.2");
    copy_dir(&root().join("schemas/acp-v0.2"), &set);

    // Untouched, the copy generates what is committed.
    let before = agh_codegen::generate(&set).unwrap();
    assert!(!file(&before, "types.rs").contains("ProgressPayload"));

    // 1. The body schema.
    write(
        &set.join("body/progress.schema.json"),
        &guide_block(&guide, "body/progress.schema.json"),
    );
    // 2. The envelope: the kind enum and the dispatch entry.
    let mut envelope = read(&set.join("envelope.schema.json"));
    envelope["properties"]["kind"]["enum"]
        .as_array_mut()
        .unwrap()
        .push("progress".into());
    envelope["allOf"]
        .as_array_mut()
        .unwrap()
        .push(guide_block(&guide, "dispatch entry"));
    write(&set.join("envelope.schema.json"), &envelope);
    // 3. The reply rule, before the `result` rules of the delegate exchange.
    let mut delegate = read(&set.join("body/delegate.schema.json"));
    let replies = delegate["x-agh-kind"]["exchange"]["replies"]
        .as_array_mut()
        .unwrap();
    let first_result = replies.iter().position(|r| r["kind"] == "result").unwrap();
    replies.insert(first_result, guide_block(&guide, "reply rule"));
    write(&set.join("body/delegate.schema.json"), &delegate);

    // 4. Regenerate.
    let (schemas, model) = agh_codegen::load_model(&set).unwrap();
    let files = agh_codegen::generate_from(&schemas, &model).unwrap();
    let docs = agh_codegen::docs::emit_docs(&schemas, &model, None).unwrap();

    let types = file(&files, "types.rs");
    assert!(types.contains("pub struct ProgressPayload"), "type");
    assert!(types.contains("pub percent: i64"), "member type");
    let checks = file(&files, "checks.rs");
    assert!(checks.contains("Progress("), "KnownBody variant");
    assert!(checks.contains("\"percent\""), "validator reads the member");
    let scan = file(&files, "scan.rs");
    assert!(
        scan.contains("fn scan_progress_payload"),
        "scanner of the payload"
    );
    let rules = file(&files, "rules.rs");
    assert!(rules.contains("kind: \"progress\""), "kind table");
    let delegate_rules = &rules[rules
        .find("kind: \"delegate\",\n        expects_reply")
        .unwrap()..];
    let progress_rule = delegate_rules.find("kind: \"progress\"").unwrap();
    let result_rule = delegate_rules.find("kind: \"result\"").unwrap();
    assert!(progress_rule < result_rule, "the reply rule, in order");
    let kinds = file(&docs, "message-kinds.md");
    assert!(kinds.contains("## `progress`"), "docs section");
    assert!(
        kinds.contains("| `progress` | `working` | any | any | `working` |"),
        "exchange table row"
    );
    assert!(
        kinds.contains("Answers `delegate`"),
        "reply kinds say what they answer"
    );
    // Nothing else changed but what the new kind brings.
    for f in &files {
        let old = before.iter().find(|b| b.path == f.path).unwrap();
        if !["types.rs", "checks.rs", "scan.rs", "rules.rs", "mod.rs"].contains(&f.path.as_str()) {
            assert_eq!(old.contents, f.contents, "{} changed", f.path);
        }
    }
}
