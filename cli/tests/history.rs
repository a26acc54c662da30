//! `agh threads`, `agh directs`, `agh messages`, `agh work` and `agh audit` on stores written
//! through agh-store's API, including a store that is being written while they read it.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};

use agh_store::{
    AuditKind, AuditRecord, Binding, Direction, MessageRecord, SqliteStore, Store, WorkChange,
    WorkRef, Write,
};
use common::{agh, run};
use serde_json::Value;

fn binding() -> Binding {
    Binding::new("ws_alpha", "builders", "worker.one")
}

fn message(id: &str, kind: &str, thread: &str, from: &str, at: i64) -> MessageRecord {
    MessageRecord {
        bytes: format!("{{\"id\":\"{id}\",  \"spacing\": \"kept\"}}").into_bytes(),
        direction: Direction::Accepted,
        kind: Some(kind.to_owned()),
        id: Some(id.to_owned()),
        from: Some(from.to_owned()),
        to: None,
        surface: Some("thread".to_owned()),
        container_id: Some(thread.to_owned()),
        work_id: None,
        reply_to: None,
        causation_id: None,
        ts: Some(at / 1000),
        received_at_ms: at,
        trust: Some("unverified".to_owned()),
        summary: Some(format!("text of {id}")),
    }
}

fn change(work: &str, state: &str, closed: bool, msg: &str, at: i64) -> Write {
    Write::Work(WorkChange {
        key: WorkRef::new("thread", "thread_b", work),
        initiator: "ops.one".to_owned(),
        target: Some("worker.one".to_owned()),
        state: state.to_owned(),
        closed,
        message_id: msg.to_owned(),
        at_ms: at,
    })
}

fn audit(kind: AuditKind, id: &str, code: Option<&str>, at: i64) -> Write {
    Write::Audit(AuditRecord {
        kind,
        at_ms: at,
        message_id: Some(id.to_owned()),
        from: Some("ops.one".to_owned()),
        reason_code: code.map(str::to_owned),
        pointer: code.map(|_| "/id".to_owned()),
        detail: code.map(|c| format!("{c}: detail")),
        receipt_sent: kind == AuditKind::Refused,
    })
}

/// A store with two threads, a direct room, two work units (one open, one completed) and audit
/// rows of each kind.
fn fixture(path: &Path) -> SqliteStore {
    let store = SqliteStore::open(path, binding()).unwrap();
    let t0 = 1_776_366_000_000;
    let mut direct = message("d1", "say", "room_1", "ops.one", t0 + 500);
    direct.surface = Some("direct".to_owned());
    direct.to = Some("worker.one".to_owned());
    let mut request = message("w1", "say", "thread_b", "ops.one", t0 + 2_000);
    request.work_id = Some("work_1".to_owned());
    request.to = Some("worker.one".to_owned());
    let mut trace = message("w2", "trace", "thread_b", "worker.one", t0 + 3_000);
    trace.work_id = Some("work_1".to_owned());
    trace.direction = Direction::Sent;
    trace.to = Some("ops.one".to_owned());
    trace.summary = Some("completed".to_owned());
    // Bytes that are not UTF-8 (as a refused message may be).
    let mut odd = message("x1", "say", "thread_a", "mallory", t0 + 4_000);
    odd.direction = Direction::Refused;
    odd.bytes = b"{\"id\":\"x1\"}\xff\x00 tail".to_vec();
    let mut open = message("w3", "say", "thread_b", "ops.one", t0 + 5_000);
    open.work_id = Some("work_2".to_owned());
    open.to = Some("worker.one".to_owned());
    store
        .write(vec![
            Write::Message(message("a1", "say", "thread_a", "ops.one", t0)),
            Write::Message(direct),
            Write::Message(message("a2", "say", "thread_a", "worker.one", t0 + 1_000)),
            Write::Message(request),
            change("work_1", "requested", false, "w1", t0 + 2_000),
            change("work_1", "completed", true, "w2", t0 + 3_000),
            Write::Message(trace),
            Write::Message(odd),
            Write::Message(open),
            change("work_2", "requested", false, "w3", t0 + 5_000),
            audit(AuditKind::Delivered, "a1", None, t0),
            audit(AuditKind::Refused, "x1", Some("duplicate"), t0 + 4_000),
            audit(AuditKind::Ignored, "y1", Some("not_for_me"), t0 + 4_500),
        ])
        .unwrap();
    store
}

fn temp_store() -> (tempfile::TempDir, PathBuf, SqliteStore) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("worker.one.sqlite3");
    let store = fixture(&path);
    (dir, path, store)
}

/// Runs `agh ARGS --store PATH`; returns (exit code, stdout, stderr).
fn agh_on(path: &Path, args: &[&str]) -> (i32, String, String) {
    run(agh().args(args).arg("--store").arg(path), "")
}

/// The JSON lines of a listing: the items and the last `page` line.
fn json_page(out: &str) -> (Vec<Value>, Value) {
    let mut lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let page = lines.pop().expect("a page line");
    assert!(
        page.get("page").is_some(),
        "the last line is the page: {out}"
    );
    (lines, page["page"].clone())
}

fn field<'a>(items: &'a [Value], name: &str) -> Vec<&'a str> {
    items.iter().map(|v| v[name].as_str().unwrap()).collect()
}

#[test]
fn threads_and_directs_list_the_conversations_newest_first() {
    let (_dir, path, _store) = temp_store();
    let (code, out, err) = agh_on(&path, &["threads", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let (items, page) = json_page(&out);
    assert_eq!(field(&items, "id"), ["thread_b", "thread_a"]);
    assert_eq!(items[0]["messages"], 3);
    assert_eq!(items[0]["open_work"], 1);
    assert_eq!(
        items[1]["messages"], 2,
        "the refused message does not count"
    );
    let peers: Vec<&str> = items[1]["participants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["peer"].as_str().unwrap())
        .collect();
    assert_eq!(peers, ["ops.one", "worker.one"]);
    assert_eq!(items[1]["last_activity"], "2026-04-16T19:00:01.000Z");
    assert_eq!(page["older"], Value::Null);

    let (code, out, err) = agh_on(&path, &["threads"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("THREAD "), "{out}");
    assert!(lines[1].starts_with("thread_b "), "{out}");
    assert!(
        lines[2].starts_with("thread_a ") && lines[2].contains("2026-04-16T19:00:01Z"),
        "{out}"
    );
    assert!(lines[2].ends_with("ops.one, worker.one"), "{out}");
    assert_eq!(lines.len(), 3, "no cursor when everything fits: {out}");

    let (code, out, err) = agh_on(&path, &["directs", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let (items, _) = json_page(&out);
    assert_eq!(field(&items, "id"), ["room_1"]);
    assert_eq!(items[0]["surface"], "direct");
}

#[test]
fn pages_go_on_with_the_printed_cursors() {
    let (_dir, path, _store) = temp_store();
    let (code, out, err) = agh_on(&path, &["threads", "--limit", "1"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("thread_b"), "{out}");
    let cursor = out
        .lines()
        .find_map(|l| l.strip_prefix("older: --before "))
        .unwrap_or_else(|| panic!("an older cursor: {out}"))
        .to_owned();
    let (code, out, err) = agh_on(
        &path,
        &[
            "threads", "--limit", "1", "--before", &cursor, "--format", "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (items, page) = json_page(&out);
    assert_eq!(field(&items, "id"), ["thread_a"]);
    assert_eq!(page["older"], Value::Null, "the last page");
    let newer = page["newer"].as_str().unwrap();
    let (code, out, _) = agh_on(
        &path,
        &[
            "threads", "--limit", "1", "--after", newer, "--format", "json",
        ],
    );
    assert_eq!(code, 0);
    let (items, _) = json_page(&out);
    assert_eq!(field(&items, "id"), ["thread_b"], "back to the first page");

    // Messages of one thread, page by page, newest first.
    let mut seen = Vec::new();
    let mut before: Option<String> = None;
    loop {
        let mut args = vec!["messages", "--thread", "thread_b", "--limit", "2"];
        args.extend(["--format", "json"]);
        if let Some(c) = &before {
            args.extend(["--before", c.as_str()]);
        }
        let (code, out, err) = agh_on(&path, &args);
        assert_eq!(code, 0, "{err}");
        let (items, page) = json_page(&out);
        seen.extend(field(&items, "id").into_iter().map(str::to_owned));
        match page["older"].as_str() {
            Some(c) => before = Some(c.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, ["w3", "w2", "w1"]);

    // A cursor that was never handed out, and two positions at once: usage errors.
    let (code, _, err) = agh_on(&path, &["threads", "--before", "nonsense"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--before") && err.contains("nonsense"),
        "{err}"
    );
    let (code, _, err) = agh_on(&path, &["threads", "--before", &cursor, "--after", &cursor]);
    assert_eq!(code, 2);
    assert!(err.contains("--after"), "{err}");
    let (code, _, err) = agh_on(&path, &["threads", "--limit", "0"]);
    assert_eq!(code, 2);
    assert!(err.contains("--limit"), "{err}");
}

#[test]
fn messages_by_thread_direct_work_peer_and_kind() {
    let (_dir, path, _store) = temp_store();
    let ids = |args: &[&str]| {
        let mut all = args.to_vec();
        all.extend(["--format", "json"]);
        let (code, out, err) = agh_on(&path, &all);
        assert_eq!(code, 0, "{args:?}: {err}");
        let (items, _) = json_page(&out);
        field(&items, "id")
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        ids(&["messages", "--thread", "thread_a"]),
        ["x1", "a2", "a1"]
    );
    assert_eq!(ids(&["messages", "--direct", "room_1"]), ["d1"]);
    assert_eq!(ids(&["messages", "--work", "work_1"]), ["w2", "w1"]);
    assert_eq!(ids(&["messages", "--peer", "mallory"]), ["x1"]);
    assert_eq!(
        ids(&["messages", "--thread", "thread_b", "--kind", "trace"]),
        ["w2"]
    );
    assert!(ids(&["messages", "--thread", "thread_z"]).is_empty());

    let (code, out, err) = agh_on(&path, &["messages", "--work", "work_1"]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[0].starts_with("RECEIVED "), "{out}");
    assert!(
        lines[1].contains(" sent ")
            && lines[1].contains(" trace ")
            && lines[1].ends_with("completed"),
        "{out}"
    );
    assert!(
        lines[2].contains(" accepted ") && lines[2].ends_with("text of w1"),
        "{out}"
    );

    // One scope is required.
    let (code, _, err) = agh_on(&path, &["messages"]);
    assert_eq!(code, 2);
    assert!(err.contains("--thread"), "{err}");
}

#[test]
fn raw_prints_the_exact_bytes() {
    let (_dir, path, _store) = temp_store();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_agh"))
        .args(["messages", "--thread", "thread_a", "--raw", "--store"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let mut expected = b"{\"id\":\"x1\"}\xff\x00 tail\n".to_vec();
    expected.extend_from_slice(b"{\"id\":\"a2\",  \"spacing\": \"kept\"}\n");
    expected.extend_from_slice(b"{\"id\":\"a1\",  \"spacing\": \"kept\"}\n");
    assert_eq!(out.stdout, expected);

    let (code, out, err) = agh_on(
        &path,
        &[
            "messages", "--thread", "thread_a", "--raw", "--format", "json",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let (items, _) = json_page(&out);
    assert_eq!(items[0]["raw_hex"], "7b226964223a227831227dff00207461696c");
    assert_eq!(items[1]["raw"], "{\"id\":\"a2\",  \"spacing\": \"kept\"}");
}

#[test]
fn work_lists_open_units_or_shows_one_with_its_transitions() {
    let (_dir, path, _store) = temp_store();
    let (code, out, err) = agh_on(&path, &["work", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let (items, _) = json_page(&out);
    assert_eq!(field(&items, "work_id"), ["work_2"], "only the open one");
    assert_eq!(items[0]["state"], "requested");

    let (code, out, err) = agh_on(&path, &["work", "work_1", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let unit: Value = serde_json::from_str(out.trim()).unwrap();
    assert_eq!(unit["state"], "completed");
    assert_eq!(unit["closed"], true);
    let transitions = unit["transitions"].as_array().unwrap();
    assert_eq!(transitions.len(), 2);
    assert_eq!(transitions[0]["from"], Value::Null);
    assert_eq!(transitions[0]["to"], "requested");
    assert_eq!(transitions[1]["from"], "requested");
    assert_eq!(transitions[1]["message_id"], "w2");

    let (code, out, err) = agh_on(&path, &["work", "work_1"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with(
            "work work_1 in thread thread_b: ops.one -> worker.one, completed (closed)\n"
        ),
        "{out}"
    );
    assert!(out.contains("requested  ->  completed  by w2"), "{out}");

    let (code, out, err) = agh_on(&path, &["work", "work_9"]);
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(err.contains("work_9"), "{err}");
}

#[test]
fn audit_lists_refusals_and_ignores_by_default() {
    let (_dir, path, _store) = temp_store();
    let kinds = |extra: &[&str]| {
        let mut args = vec!["audit", "--format", "json"];
        args.extend(extra);
        let (code, out, err) = agh_on(&path, &args);
        assert_eq!(code, 0, "{err}");
        let (items, _) = json_page(&out);
        field(&items, "kind")
            .into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(kinds(&[]), ["ignored", "refused"]);
    assert_eq!(kinds(&["--refused"]), ["refused"]);
    assert_eq!(kinds(&["--all"]), ["ignored", "refused", "delivered"]);
    let (code, out, err) = agh_on(&path, &["audit", "--refused"]);
    assert_eq!(code, 0, "{err}");
    let line = out.lines().nth(1).unwrap();
    for part in ["refused", "duplicate", "/id", "ops.one", "x1", "sent"] {
        assert!(line.contains(part), "{part}: {out}");
    }
}

#[test]
fn the_default_store_is_found_by_workspace_channel_and_id() {
    let data = tempfile::tempdir().unwrap();
    let dir = data.path().join("agh/ws_alpha/builders");
    std::fs::create_dir_all(&dir).unwrap();
    let _store = fixture(&dir.join("worker.one.sqlite3"));
    let with_data = |args: &[&str]| {
        run(
            agh()
                .args(args)
                .env("XDG_DATA_HOME", data.path())
                .env("HOME", data.path()),
            "",
        )
    };
    let ids = [
        "--workspace",
        "ws_alpha",
        "--channel",
        "builders",
        "--id",
        "worker.one",
    ];
    let mut args = vec!["threads", "--format", "json"];
    args.extend(ids);
    let (code, out, err) = with_data(&args);
    assert_eq!(code, 0, "{err}");
    assert_eq!(field(&json_page(&out).0, "id"), ["thread_b", "thread_a"]);

    // Another peer: no store there, and the path is named.
    let (code, _, err) = with_data(&[
        "threads",
        "--workspace",
        "ws_alpha",
        "--channel",
        "builders",
        "--id",
        "worker.two",
    ]);
    assert_eq!(code, 2);
    assert!(
        err.contains("worker.two.sqlite3") && err.contains("no store"),
        "{err}"
    );
    // Neither a store nor the three parts.
    let (code, _, err) = with_data(&["threads", "--workspace", "ws_alpha"]);
    assert_eq!(code, 2);
    assert!(err.contains("--store PATH"), "{err}");
    // A part that cannot be a file name.
    let (code, _, err) = with_data(&[
        "threads",
        "--workspace",
        "../x",
        "--channel",
        "c",
        "--id",
        "p",
    ]);
    assert_eq!(code, 2);
    assert!(err.contains("--workspace"), "{err}");
}

#[test]
fn a_store_of_another_peer_or_no_store_at_all_is_a_clear_error() {
    let (dir, path, _store) = temp_store();
    let (code, _, err) = agh_on(&path, &["threads", "--id", "worker.two"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("peer worker.one in workspace ws_alpha") && err.contains("--id worker.two"),
        "{err}"
    );
    let (code, _, err) = agh_on(&path, &["threads", "--workspace", "ws_alpha"]);
    assert_eq!(code, 0, "the right workspace: {err}");

    let other = dir.path().join("notes.txt");
    std::fs::write(&other, b"just some text, no database").unwrap();
    let (code, _, err) = agh_on(&other, &["threads"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("notes.txt") && err.contains("not an AGH store"),
        "{err}"
    );
    assert_eq!(
        std::fs::read(&other).unwrap(),
        b"just some text, no database",
        "left unchanged"
    );

    let missing = dir.path().join("missing.sqlite3");
    let (code, _, err) = agh_on(&missing, &["audit"]);
    assert_eq!(code, 2);
    assert!(err.contains("missing.sqlite3"), "{err}");
    assert!(!missing.exists(), "a reader creates nothing");
}

/// The commands read a store that another handle keeps open and goes on writing: they see each
/// write once its ticket is ready, and never block the writer.
#[test]
fn they_read_while_the_store_is_being_written() {
    let (_dir, path, store) = temp_store();
    let writer = std::thread::spawn(move || {
        for i in 0..200 {
            let at = 1_776_367_000_000 + i;
            store
                .write(vec![Write::Message(message(
                    &format!("n{i}"),
                    "say",
                    "thread_new",
                    "ops.one",
                    at,
                ))])
                .unwrap();
        }
        store
    });
    let mut counts = Vec::new();
    for _ in 0..5 {
        let (code, out, err) = agh_on(
            &path,
            &[
                "messages",
                "--thread",
                "thread_new",
                "--limit",
                "1000",
                "--format",
                "json",
            ],
        );
        assert_eq!(code, 0, "{err}");
        counts.push(json_page(&out).0.len());
    }
    let store = writer.join().unwrap();
    assert!(counts.windows(2).all(|w| w[0] <= w[1]), "{counts:?}");
    let (code, out, err) = agh_on(&path, &["threads", "--limit", "1", "--format", "json"]);
    assert_eq!(code, 0, "{err}");
    let (items, _) = json_page(&out);
    assert_eq!(items[0]["id"], "thread_new");
    assert_eq!(
        items[0]["messages"], 200,
        "every write, once its ticket is ready"
    );
    drop(store);
}
