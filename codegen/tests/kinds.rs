//! The kind table is a view of the general model: the envelope's kind dispatch and a body's
//! conditional rules are `allOf` entries the applicator parser reads like any other, recognized
//! and taken out of the types by the kind model; an entry in another form is a general rule, and
//! an entry that is the dispatch but not in its form is refused naming its pointer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::path::{Path, PathBuf};

use agh_codegen::model::{Presence, Shape};
use serde_json::{json, Value};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A copy of the `two-kinds` set with `file` edited by `edit`: `(folder guard, set dir)`.
fn edited(file: &str, edit: impl FnOnce(&mut Value)) -> (tempfile::TempDir, PathBuf) {
    common::edited_copy(&fixture("two-kinds"), file, edit)
}

#[test]
fn the_kind_table_is_read_off_the_general_model() {
    // The applicators set: the dispatch sits in a nested `allOf` beside a rule of the envelope's
    // own; the body holds a restricted rule beside a general `if`/`then`/`else`.
    let (_, model) = agh_codegen::load_model(fixture("applicators")).unwrap();
    let [kind] = model.kinds.as_slice() else {
        panic!("one kind")
    };
    assert_eq!(
        (kind.name.as_str(), kind.body_type.as_str()),
        ("shape", "ShapeBody")
    );
    assert_eq!(
        (
            model.envelope.kind_member.as_str(),
            model.envelope.body_member.as_str()
        ),
        ("kind", "body")
    );
    let [rule] = kind.conditionals.as_slice() else {
        panic!("one restricted rule: {:?}", kind.conditionals)
    };
    assert_eq!(rule.pointer, "/allOf/0");
    assert_eq!(rule.when.member, "status");
    assert_eq!(rule.when.values, [json!("final")]);
    assert_eq!(rule.required, ["stamp"]);
    assert_eq!(rule.envelope.reply_to, Some(Presence::Required));
    // What the kind model took is `true` in the types (the other entries keep their pointers);
    // what it did not take stays a general rule.
    for name in ["AppEnvelope", "ShapeBody"] {
        let all_of = &model.named(name).unwrap().shape.applicators.all_of;
        assert_eq!(all_of.len(), 2, "{name}");
        assert_eq!(all_of[0], Shape::default(), "{name}");
        let general = all_of[1].applicators.conditional.as_deref().unwrap();
        assert!(
            general.then.is_some() && general.otherwise.is_some(),
            "{name}"
        );
    }
    // The sets whose `allOf`s hold nothing but kind rules keep none in their types.
    for set in ["schemas/agh-network-v0", "schemas/acp-v0.2"] {
        let (_, model) = agh_codegen::load_model(common::root().join(set)).unwrap();
        let envelope = model.named(&model.envelope.type_name).unwrap();
        assert!(envelope.shape.applicators.is_empty(), "{set}");
        for k in &model.kinds {
            let body = model.named(&k.body_type).unwrap();
            assert!(
                body.shape.applicators.all_of.is_empty(),
                "{set}: {}",
                k.name
            );
        }
        assert!(
            model.kinds.iter().any(|k| !k.conditionals.is_empty()),
            "{set}"
        );
    }
}

#[test]
fn a_dispatch_entry_in_another_form_is_refused_naming_its_pointer() {
    let note = json!({ "$ref": "body/note.schema.json" });
    for (edit, pointer, why) in [
        (
            json!({ "if": { "properties": { "kind": { "const": "note" } }, "required": ["kind"] },
                    "then": { "properties": { "body": note } },
                    "else": { "required": ["to"] } }),
            "/allOf/1/else",
            "no `else`",
        ),
        (
            json!({ "if": { "properties": { "kind": { "const": "note" }, "to": { "const": "x" } },
                            "required": ["kind"] },
                    "then": { "properties": { "body": note } } }),
            "/allOf/1/if",
            "exactly one member",
        ),
        (
            json!({ "if": { "properties": { "kind": { "const": "note" } }, "required": ["kind"] },
                    "then": { "properties": { "body": note }, "required": ["body", "to"] } }),
            "/allOf/1/then",
            "exactly one member its body schema",
        ),
        (
            json!({ "allOf": [{ "if": { "properties": { "kind": { "enum": ["note"] } }, "required": ["kind"] },
                                "then": { "properties": { "body": note } } }] }),
            "/allOf/1/allOf/0/if",
            "string `const`",
        ),
    ] {
        let (_tmp, dir) = edited("envelope.schema.json", |e| e["allOf"][1] = edit.clone());
        let err = agh_codegen::generate(&dir).unwrap_err().to_string();
        assert!(
            err.contains("envelope.schema.json")
                && err.contains(pointer)
                && err.contains(why)
                && err.contains("dispatch entry"),
            "{pointer}: {err}"
        );
    }
    // In a nested `allOf`, in the dispatch form, it is read like any other entry.
    let (_tmp, dir) = edited("envelope.schema.json", |e| {
        let entry = e["allOf"][1].take();
        e["allOf"][1] = json!({ "allOf": [{ "allOf": [entry] }] });
    });
    let (_, model) = agh_codegen::load_model(&dir).unwrap();
    assert_eq!(model.kind("note").unwrap().body_type, "NoteBody");
}

#[test]
fn conditionals_the_restricted_reader_refused_are_general_rules() {
    // Each was refused as "not in the restricted if/then form"; each is JSON Schema, now checked
    // by the body's validator and scanner while the restricted rule stays a kind rule.
    let restricted = json!({ "if": { "properties": { "mode": { "const": "answer" } }, "required": ["mode"] },
                             "then": { "x-agh-envelope": { "reply_to": "required" } } });
    for general in [
        json!({ "if": { "properties": { "mode": { "const": "plain" } }, "required": ["mode"] },
                "then": { "properties": { "text": { "maxLength": 10 } } },
                "else": { "properties": { "text": { "minLength": 2 } } } }),
        json!({ "if": { "required": ["author"] }, "then": { "properties": { "author": { "type": "string" } } } }),
        json!({ "if": { "properties": { "mode": { "const": "plain" }, "text": { "const": "hi" } } },
                "then": { "required": ["mode"] } }),
        json!({ "not": { "required": ["secret"] } }),
    ] {
        let (_tmp, dir) = edited("body/note.schema.json", |n| {
            n["allOf"] = json!([restricted.clone(), general.clone()]);
        });
        let (_, model) = agh_codegen::load_model(&dir).unwrap_or_else(|e| panic!("{general}: {e}"));
        let note = model.kind("note").unwrap();
        assert_eq!(note.conditionals.len(), 1, "{general}");
        assert_eq!(
            note.conditionals[0].envelope.reply_to,
            Some(Presence::Required)
        );
        let all_of = &model.named("NoteBody").unwrap().shape.applicators.all_of;
        assert_eq!(all_of.len(), 2, "{general}");
        assert_eq!(all_of[0], Shape::default(), "{general}");
        assert_ne!(all_of[1], Shape::default(), "{general}");
        agh_codegen::generate(&dir).unwrap_or_else(|e| panic!("{general}: {e}"));
    }
    // An envelope override needs the restricted form: elsewhere it is refused, naming where.
    let (_tmp, dir) = edited("body/note.schema.json", |n| {
        n["allOf"][0]["else"] = json!({ "required": ["text"] });
    });
    let err = agh_codegen::generate(&dir).unwrap_err().to_string();
    assert!(
        err.contains("note.schema.json")
            && err.contains("/allOf/0")
            && err.contains("`x-agh-envelope` in `then` holds only in a conditional rule of the restricted form"),
        "{err}"
    );
}

#[test]
fn general_rules_of_the_envelope_and_a_body_are_said_in_the_reference() {
    let (_t, dir) = edited("envelope.schema.json", |e| {
        e["allOf"].as_array_mut().unwrap().push(json!({
            "if": { "required": ["to"] }, "then": { "required": ["reply_to"] },
            "else": { "properties": { "reply_to": false } } }));
    });
    let (_t2, dir) = common::edited_copy(&dir, "body/note.schema.json", |n| {
        n["allOf"].as_array_mut().unwrap().push(json!({
            "if": { "required": ["text"] }, "then": { "properties": { "text": { "maxLength": 9 } } } }));
    });
    let (set, model) = agh_codegen::load_model(&dir).unwrap();
    let docs = agh_codegen::docs::emit_docs(&set, &model, None).unwrap();
    let page = |name: &str| {
        docs.iter()
            .find(|f| f.path == name)
            .unwrap_or_else(|| panic!("no {name}"))
            .contents
            .clone()
    };
    let envelope = page("envelope.md");
    assert!(
        envelope.contains("The whole envelope, beside its members: All of the following shapes: (1) if it is with `to` (required), it must also be with `reply_to` (required); otherwise it must be `reply_to` no value."),
        "{envelope}"
    );
    let kinds = page("message-kinds.md");
    assert!(
        kinds.contains("The whole body, beside its members: All of the following shapes: (1) if it is with `text` (required), it must also be `text` at most 9 characters."),
        "{kinds}"
    );
    // The kind rules are not said again as general rules.
    assert_eq!(kinds.matches("The whole body").count(), 1, "{kinds}");
    assert!(!envelope.contains("`NoteBody`"), "{envelope}");
}

#[test]
fn a_rule_is_a_kind_rule_only_where_its_verdict_is_json_schemas() {
    // The kind rules read a `null` member as absent: `then` requiring a member that may be `null`
    // (without typing it) would say otherwise than JSON Schema, so it stays a general rule.
    let plain = |member: &str| {
        json!({ "if": { "properties": { "mode": { "const": "plain" } }, "required": ["mode"] },
                "then": { "required": [member] } })
    };
    // (the member, the kind rules, the entries left in the type's `allOf`: none, or `true` and
    // the general rule)
    for (member, kind_rules, left) in [("text", 2, 0), ("reply", 1, 2)] {
        let (_tmp, dir) = edited("body/note.schema.json", |n| {
            n["properties"]["reply"] =
                json!({ "description": "A reply, or null.", "type": ["string", "null"] });
            n["allOf"].as_array_mut().unwrap().push(plain(member));
        });
        let (_, model) = agh_codegen::load_model(&dir).unwrap();
        let note = model.kind("note").unwrap();
        assert_eq!(note.conditionals.len(), kind_rules, "{member}");
        let all_of = &model.named("NoteBody").unwrap().shape.applicators.all_of;
        assert_eq!(all_of.len(), left, "{member}: {all_of:?}");
    }
}

/// A default the body view cannot hold (an object) is refused by name: the typed form would
/// hold it and the view would read the absent member differently. A number default is held.
#[test]
fn a_body_member_default_the_view_cannot_hold_is_refused_by_name() {
    let (_tmp, dir) = edited("body/note.schema.json", |b| {
        b["properties"]["extra"] =
            json!({"type": "object", "description": "Extra.", "default": {"a": 1}});
    });
    let err = agh_codegen::generate(&dir).unwrap_err().to_string();
    assert!(
        err.contains("NoteBody.extra") && err.contains("default"),
        "{err}"
    );
    let (_tmp, dir) = edited("body/note.schema.json", |b| {
        b["properties"]["weight"] = json!({"type": "number", "description": "Weight.", "minimum": 0, "maximum": 1, "default": 0.5});
    });
    let files = agh_codegen::generate(&dir).unwrap();
    let view = files
        .iter()
        .find(|f| f.path.ends_with("view.rs"))
        .expect("a view file");
    assert!(
        view.contents.contains("0.5f64"),
        "the number default in the view"
    );
}

#[test]
fn the_members_an_envelope_match_may_name_are_the_free_string_members() {
    // What the derive macro checks `envelope_match(envelope = ...)` against: the reference
    // envelope's string members, less those whose value the schema fixes (`protocol`'s
    // `const`, `kind`'s and `surface`'s `enum`); no integer, object or body member.
    let (_, model) =
        agh_codegen::load_model(common::root().join("schemas/agh-network-v0")).unwrap();
    let members = agh_codegen::emit::macros::envelope_match_members(&model);
    assert_eq!(
        members,
        [
            "id",
            "workspace_id",
            "channel",
            "thread_id",
            "direct_id",
            "from",
            "to",
            "work_id",
            "reply_to",
            "trace_id",
            "causation_id",
        ]
    );
    // An envelope with another free string member offers it; one fixed by an `enum` does not.
    let (_guard, dir) = edited("envelope.schema.json", |v| {
        let props = v["properties"].as_object_mut().unwrap();
        props.insert(
            "note".into(),
            json!({"type": "string", "description": "A note."}),
        );
        props.insert(
            "mood".into(),
            json!({"type": "string", "enum": ["calm"], "description": "A mood."}),
        );
    });
    let (_, model) = agh_codegen::load_model(&dir).unwrap();
    let members = agh_codegen::emit::macros::envelope_match_members(&model);
    assert!(members.contains(&"note"), "{members:?}");
    assert!(!members.contains(&"mood"), "{members:?}");
}
