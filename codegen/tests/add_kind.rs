//! `docs/guides/add-an-acp-kind.md`, held to its data: the guide's edits are kept in
//! `codegen/tests/fixtures/acp-add-kind/edits.json` (applied over `schemas/acp-v0.2` by
//! `SchemaSet::load_edited`; `cargo xtask codegen` writes the edited set's code into
//! `acp/tests/acp_with_progress/`, which `acp/tests/add_kind.rs` compiles and runs). Here: each
//! edit is the guide's own JSON block, in the place the guide says, and what the edits generate
//! differs from what the untouched set generates only where the guide says it does.
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

fn read(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

fn file<'a>(files: &'a [agh_codegen::GeneratedFile], path: &str) -> &'a str {
    &files
        .iter()
        .find(|f| f.path == path)
        .unwrap_or_else(|| panic!("no generated {path}"))
        .contents
}

/// The `value` of the edit of `file` at `path`.
fn edit<'a>(edits: &'a Value, file: &str, path: &str) -> &'a Value {
    edits["edits"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["file"] == file && e["path"] == path && e["op"] == "add")
        .map(|e| &e["value"])
        .unwrap_or_else(|| panic!("no edit of {file} at {path:?}"))
}

#[test]
fn the_edits_are_the_guides() {
    let guide = std::fs::read_to_string(root().join("docs/guides/add-an-acp-kind.md")).unwrap();
    let edits: Value =
        serde_json::from_slice(&std::fs::read(root().join(agh_codegen::ADD_KIND_EDITS)).unwrap())
            .unwrap();
    // 1. The body schema, a new file.
    assert_eq!(
        edit(&edits, "body/progress.schema.json", ""),
        &guide_block(&guide, "body/progress.schema.json")
    );
    // 2. The envelope: the kind enum (and its description), the dispatch entry.
    assert_eq!(
        edit(&edits, "envelope.schema.json", "/properties/kind/enum/-"),
        "progress"
    );
    let description = edit(
        &edits,
        "envelope.schema.json",
        "/properties/kind/description",
    );
    assert!(description.as_str().unwrap().contains("progress"));
    assert_eq!(
        edit(&edits, "envelope.schema.json", "/allOf/-"),
        &guide_block(&guide, "dispatch entry")
    );
    // 3. The reply rule, inserted just before the first `result` rule of the delegate exchange
    // (counted without the guide's own rule, which the set holds once the guide was performed).
    let base = read(&root().join("schemas/acp-v0.2/body/delegate.schema.json"));
    let rule = guide_block(&guide, "reply rule");
    let replies = base["x-agh-kind"]["exchange"]["replies"]
        .as_array()
        .unwrap();
    let first_result = replies
        .iter()
        .filter(|r| **r != rule)
        .position(|r| r["kind"] == "result")
        .unwrap();
    assert_eq!(
        edit(
            &edits,
            "body/delegate.schema.json",
            &format!("/x-agh-kind/exchange/replies/{first_result}")
        ),
        &rule
    );
    assert_eq!(edits["edits"].as_array().unwrap().len(), 5, "nothing else");
}

#[test]
fn the_edited_set_generates_the_new_kind_and_nothing_else() {
    let before = agh_codegen::generate(root().join("schemas/acp-v0.2")).unwrap();
    if file(&before, "types.rs").contains("ProgressPayload") {
        // A maintainer has performed the guide on `schemas/acp-v0.2` itself: nothing to compare
        // against (`performing_the_guide_on_the_set_itself_keeps_codegen_working` covers it).
        return;
    }
    let (schemas, model) = agh_codegen::load_add_kind_model(&root()).unwrap();
    let files = agh_codegen::generate_from(&schemas, &model).unwrap();
    let docs = agh_codegen::docs::emit_docs(&schemas, &model, None).unwrap();

    let types = file(&files, "types.rs");
    assert!(types.contains("pub struct ProgressPayload"), "type");
    assert!(types.contains("pub percent: i64"), "member type");
    let rules = file(&files, "rules.rs");
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
    // A set without conversation surfaces: its index does not mention them; the profile's own
    // codes are named; value pages take English plurals.
    let index = file(&docs, "index.md");
    assert!(!index.contains("surfaces"), "{index}");
    assert!(index.contains("[Notifies](notifies.md)"), "{index}");
    assert!(
        file(&docs, "envelope.md").contains(
            "Another value is refused with `unsupported_version` (the runtime's `unsupported_profile`)."
        ),
        "the profile's code for a wrong `v`"
    );
    // Nothing else changed but what the new kind brings.
    for f in &files {
        let old = before.iter().find(|b| b.path == f.path).unwrap();
        // (`write.rs`: the new kind's writer; `view.rs`: its body view.)
        let kind_files = [
            "types.rs",
            "checks.rs",
            "scan.rs",
            "rules.rs",
            "mod.rs",
            "view.rs",
            "write.rs",
        ];
        if !kind_files.contains(&f.path.as_str()) {
            assert_eq!(
                old.contents.lines().skip(1).collect::<Vec<_>>(),
                f.contents.lines().skip(1).collect::<Vec<_>>(),
                "{} changed",
                f.path
            );
        }
    }
}

/// A maintainer performs the guide on `schemas/acp-v0.2` itself (here: on a copy, written to
/// disk): `cargo xtask codegen` must keep working, and the guide's own test (the edits applied
/// again over that set) must generate exactly the same code: the edits are already there.
#[test]
fn performing_the_guide_on_the_set_itself_keeps_codegen_working() {
    let (performed, model) = agh_codegen::load_add_kind_model(&root()).unwrap();
    let tmp = tempfile::tempdir().unwrap();
    for f in performed.files() {
        let path = tmp.path().join(&f.path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, serde_json::to_vec_pretty(&f.doc).unwrap()).unwrap();
    }
    let on_disk = agh_codegen::SchemaSet::load(tmp.path()).unwrap();
    assert!(agh_codegen::Model::build(&on_disk)
        .unwrap()
        .kind("progress")
        .is_some());
    let again = agh_codegen::SchemaSet::load_edited(
        tmp.path(),
        &root().join(agh_codegen::ADD_KIND_EDITS),
        "again",
    )
    .unwrap();
    let again_model = agh_codegen::Model::build(&again).unwrap();
    let body = |files: Vec<agh_codegen::GeneratedFile>| -> Vec<(String, Vec<String>)> {
        files
            .into_iter()
            .map(|f| {
                (
                    f.path,
                    f.contents.lines().skip(1).map(String::from).collect(),
                )
            })
            .collect()
    };
    assert_eq!(
        body(agh_codegen::generate_from(&again, &again_model).unwrap()),
        body(agh_codegen::generate_from(&performed, &model).unwrap()),
        "the edits applied twice generate what they generate once"
    );
}

#[test]
fn edits_that_do_not_apply_are_refused_naming_the_edit() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("edits.json");
    let base = root().join("schemas/acp-v0.2");
    for (edits, want) in [
        (
            serde_json::json!({"edits": [{"file": "nope.schema.json", "op": "add", "path": "/a", "value": 1}]}),
            "no file nope.schema.json",
        ),
        (
            serde_json::json!({"edits": [{"file": "envelope.schema.json", "op": "add", "path": "/allOf/99", "value": {}}]}),
            "is not an index",
        ),
        (
            serde_json::json!({"edits": [{"file": "envelope.schema.json", "op": "remove", "path": "/allOf/0"}]}),
            "only `add`",
        ),
    ] {
        std::fs::write(&bad, serde_json::to_vec(&edits).unwrap()).unwrap();
        let err = agh_codegen::SchemaSet::load_edited(&base, &bad, "test")
            .unwrap_err()
            .to_string();
        assert!(err.contains(want) && err.contains("/edits/0"), "{err}");
    }
}
