//! The store's background threads (the derivation of the readers' tables, the checkpointer)
//! run at the niceness asked for, and under `SCHED_IDLE` when asked (off by default), the writer
//! as the process does, and everything is still derived and checkpointed. Linux only (niceness per thread); a process of its own, so that the threads
//! it finds are this test's store's.
#![cfg(target_os = "linux")]

use std::path::Path;
use std::time::{Duration, Instant};

use agh_store::{
    Binding, Direction, MessageFilter, MessageRecord, MessageScope, PageRequest, SqliteOptions,
    SqliteStore, Store, Write,
};

fn say(i: i64) -> MessageRecord {
    MessageRecord {
        bytes: format!("{{\"id\":\"m-{i}\"}}").into_bytes(),
        direction: Direction::Accepted,
        kind: Some("say".to_owned()),
        id: Some(format!("m-{i}")),
        from: Some("ops.one".to_owned()),
        to: None,
        surface: Some("thread".to_owned()),
        container_id: Some(format!("thread_{i}")),
        work_id: None,
        reply_to: None,
        causation_id: None,
        ts: Some(i),
        received_at_ms: 1_000 + i,
        trust: None,
        summary: None,
    }
}

/// The niceness of a thread, from `/proc/self/task/<tid>/stat` (its 19th field).
fn niceness(stat: &str) -> i32 {
    field(stat, 19)
}

/// The `n`th field (from 1) of a `stat` line.
fn field(stat: &str, n: usize) -> i32 {
    let after = &stat[stat.rfind(')').expect("comm") + 1..];
    after
        .split_whitespace()
        .nth(n - 3)
        .expect("field")
        .parse()
        .expect("a number")
}

/// Linux's `SCHED_IDLE` policy, as `stat`'s 41st field gives it.
const SCHED_IDLE: i32 = 5;
/// `SCHED_OTHER`.
const SCHED_OTHER: i32 = 0;

/// The niceness and the scheduling policy of each of this process's threads named `name` (as
/// `comm` shows it: at most 15 bytes).
fn threads_named(name: &str) -> Vec<(i32, i32)> {
    let mut found = Vec::new();
    for task in std::fs::read_dir("/proc/self/task").expect("tasks") {
        let task = task.expect("task").path();
        let Ok(comm) = std::fs::read_to_string(task.join("comm")) else {
            continue; // ended meanwhile
        };
        if comm.trim_end() == name {
            let stat = std::fs::read_to_string(task.join("stat")).expect("stat");
            found.push((niceness(&stat), field(&stat, 41)));
        }
    }
    found
}

fn process_niceness() -> i32 {
    niceness(&std::fs::read_to_string("/proc/self/stat").expect("stat"))
}

/// Writes 300 messages and waits, without asking, until the readers see them all (derived by
/// the derivation thread) and the store file has grown (checkpointed).
fn derived_and_checkpointed(store: &SqliteStore, path: &Path) {
    let reader = SqliteStore::open_reader(path).expect("reader");
    let before = std::fs::metadata(path).expect("file").len();
    for i in 0..300 {
        store
            .submit(vec![Write::Message(say(i))])
            .wait()
            .expect("durable");
    }
    let all = MessageFilter::new(MessageScope::All);
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let seen = reader
            .messages(&all, &PageRequest::newest(PageRequest::MAX_LIMIT))
            .expect("read")
            .items
            .len();
        let grown = std::fs::metadata(path).expect("file").len() > before;
        if seen == 300 && grown {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{seen} of 300 derived, checkpointed: {grown}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn the_derivation_and_the_checkpointer_run_at_the_priority_asked_for() {
    let dir = tempfile::tempdir().expect("temp dir");
    let own = process_niceness();
    let asked = 17.max(own);
    assert!(
        !SqliteOptions::default().background_idle,
        "off unless asked"
    );
    // (niceness asked, SCHED_IDLE asked) -> what the derivation and the checkpointer run at;
    // the commits tickets wait for keep the process's priority in every case.
    let cases = [
        ("idle", Some(asked), true, (asked, SCHED_IDLE)),
        ("nice", Some(asked), false, (asked, SCHED_OTHER)),
        ("plain", None, false, (own, SCHED_OTHER)),
    ];
    for (name, background_niceness, background_idle, background) in cases {
        let path = dir.path().join(format!("{name}.sqlite3"));
        let options = SqliteOptions {
            background_niceness,
            background_idle,
            ..SqliteOptions::default()
        };
        let binding = Binding::new("ws_alpha", "builders", "worker.one");
        let store = SqliteStore::open_with(&path, binding, options).expect("open");
        derived_and_checkpointed(&store, &path);
        assert_eq!(threads_named("agh-store-deriv"), [background], "{name}");
        assert_eq!(threads_named("agh-store-check"), [background], "{name}");
        assert_eq!(
            threads_named("agh-store-write"),
            [(own, SCHED_OTHER)],
            "{name}"
        );
        store.close();
        assert!(
            threads_named("agh-store-deriv").is_empty(),
            "{name}: ended on close"
        );
    }
}
