//! `x-agh-binding`: read into the model and the generated `Spec`, and refused, naming the
//! pointer and why, when it cannot be a binding.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::PathBuf;

use common::{copy_dir, read_json, root};
use serde_json::json;

/// An edit of the binding.
type Edit = Box<dyn Fn(&mut serde_json::Value)>;

/// The ACP set with its envelope's `x-agh-binding` edited.
fn acp_with(edit: impl FnOnce(&mut serde_json::Value)) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("acp-v0.2");
    copy_dir(&root().join("schemas/acp-v0.2"), &dir);
    let path = dir.join("envelope.schema.json");
    let mut schema = read_json(&path);
    edit(&mut schema["x-agh-binding"]);
    std::fs::write(&path, serde_json::to_string_pretty(&schema).unwrap()).unwrap();
    (tmp, dir)
}

#[test]
fn both_sets_declare_their_subjects_and_request_kinds() {
    let (_, acp) = agh_codegen::load_model(root().join("schemas/acp-v0.2")).unwrap();
    let b = acp.binding.unwrap();
    assert_eq!(b.direct.template, "acp.v0-2.agent.{to}");
    assert_eq!(b.broadcast.unwrap().template, "acp.v0-2.broadcast");
    // The draft's bidirectional streams, and only those.
    assert_eq!(
        b.request_reply,
        ["ping", "query", "delegate", "cancel", "discover"]
    );
    let (_, v0) = agh_codegen::load_model(root().join("schemas/agh-network-v0")).unwrap();
    let b = v0.binding.unwrap();
    assert_eq!(
        b.direct.template,
        "agh.network.v0.{workspace_id}.{channel}.peer.{to|route-token}"
    );
    assert!(b.request_reply.is_empty());
}

#[test]
fn a_binding_that_cannot_be_one_is_refused_saying_why() {
    let cases: Vec<(Edit, &str, &str)> = vec![
        (
            Box::new(|b| b["subjects"]["direct"] = json!("acp.agents")),
            "/x-agh-binding/subjects/direct",
            "`to` role",
        ),
        (
            Box::new(|b| b["subjects"]["broadcast"] = json!("acp.{to}")),
            "/x-agh-binding/subjects/broadcast",
            "cannot read `to`",
        ),
        (
            Box::new(|b| b["subjects"]["direct"] = json!("acp.*.{to}")),
            "/x-agh-binding/subjects/direct",
            "wildcards",
        ),
        (
            Box::new(|b| b["subjects"]["direct"] = json!("acp.{nobody}.{to}")),
            "/x-agh-binding/subjects/direct",
            "names no envelope member",
        ),
        (
            Box::new(|b| b["request_reply"] = json!(["pong"])),
            "/x-agh-binding/request_reply/0",
            "opens no exchange",
        ),
        (
            Box::new(|b| b["request_reply"] = json!(["notify"])),
            "/x-agh-binding/request_reply/0",
            "opens no exchange",
        ),
        (
            Box::new(|b| b["request_reply"] = json!(["gossip"])),
            "/x-agh-binding/request_reply/0",
            "not a kind",
        ),
        (
            Box::new(|b| b["transport"] = json!("mqtt")),
            "/x-agh-binding/transport",
            "`nats`",
        ),
        (
            Box::new(|b| b["queue"] = json!("q")),
            "/x-agh-binding/queue",
            "unknown `x-agh-binding` member",
        ),
    ];
    for (edit, pointer, why) in cases {
        let (_tmp, dir) = acp_with(edit);
        let err = agh_codegen::generate(&dir).unwrap_err().to_string();
        assert!(
            err.contains("envelope.schema.json") && err.contains(pointer) && err.contains(why),
            "{pointer}: {err}"
        );
    }
}
