//! What only the SQLite store has: a file that outlives the process, readers beside the writer,
//! and the faults of a file (not ours, newer, damaged, read-only, locked).

use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use agh_store::{
    Binding, Direction, Error, MessageFilter, MessageRecord, MessageScope, PageRequest,
    SqliteOptions, SqliteStore, Store, Synchronous, WorkChange, WorkRef, Write,
};

fn binding() -> Binding {
    Binding::new("ws_alpha", "builders", "worker.one")
}

fn say(id: &str, thread: &str, at: i64) -> MessageRecord {
    MessageRecord {
        bytes: format!("{{\"id\":\"{id}\"}}").into_bytes(),
        direction: Direction::Accepted,
        kind: Some("say".to_owned()),
        id: Some(id.to_owned()),
        from: Some("ops.one".to_owned()),
        to: None,
        surface: Some("thread".to_owned()),
        container_id: Some(thread.to_owned()),
        work_id: None,
        reply_to: None,
        causation_id: None,
        ts: Some(at / 1000),
        received_at_ms: at,
        trust: None,
        summary: None,
    }
}

fn all() -> MessageFilter {
    MessageFilter::new(MessageScope::All)
}

fn count(store: &dyn Store) -> usize {
    store
        .messages(&all(), &PageRequest::newest(PageRequest::MAX_LIMIT))
        .expect("read")
        .items
        .len()
}

fn quick() -> SqliteOptions {
    SqliteOptions {
        busy_timeout: Duration::from_millis(200),
        ..SqliteOptions::default()
    }
}

/// Every group committed by the writer thread.
fn by_the_writer() -> SqliteOptions {
    SqliteOptions {
        commit_on_caller: false,
        ..SqliteOptions::default()
    }
}

fn file_bytes(path: &Path) -> Vec<u8> {
    std::fs::read(path).expect("read file")
}

/// Asserts that `error` names `path`.
fn names(error: &Error, path: &Path) {
    assert_eq!(error.path(), Some(path), "{error}");
    assert!(
        error.to_string().contains(&path.display().to_string()),
        "{error}"
    );
}

#[test]
fn a_reopened_store_has_everything_and_refuses_another_binding() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("peer.sqlite3");
    {
        let store = SqliteStore::open(&path, binding()).expect("create");
        store
            .write(vec![
                Write::Message(say("m1", "thread_a", 1_000)),
                Write::Work(WorkChange {
                    key: WorkRef::new("thread", "thread_a", "work_1"),
                    initiator: "ops.one".to_owned(),
                    target: Some("worker.one".to_owned()),
                    state: "requested".to_owned(),
                    closed: false,
                    message_id: "m1".to_owned(),
                    at_ms: 1_000,
                }),
            ])
            .expect("recorded");
        store.close();
    }
    let store = SqliteStore::open(&path, binding()).expect("reopen");
    assert_eq!(count(&store), 1);
    assert_eq!(store.recover(0, 0).expect("read").work.len(), 1);
    drop(store);

    for other in [
        Binding::new("ws_beta", "builders", "worker.one"),
        Binding::new("ws_alpha", "ops", "worker.one"),
        Binding::new("ws_alpha", "builders", "worker.two"),
    ] {
        let before = file_bytes(&path);
        let err = SqliteStore::open(&path, other.clone()).expect_err("another binding");
        names(&err, &path);
        match &err {
            Error::OtherBinding {
                expected, found, ..
            } => {
                assert_eq!(**expected, other);
                assert_eq!(**found, binding());
            }
            e => panic!("unexpected {e}"),
        }
        assert_eq!(file_bytes(&path), before, "left unchanged");
    }
}

#[test]
fn a_reader_reads_while_the_writer_writes() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("peer.sqlite3");
    let store = SqliteStore::open(&path, binding()).expect("create");
    let reader = SqliteStore::open_reader(&path).expect("reader");
    assert_eq!(reader.binding(), &binding(), "the binding the file names");
    let writer = std::thread::spawn(move || {
        for i in 0..200 {
            store
                .write(vec![Write::Message(say(&format!("m{i}"), "thread_a", i))])
                .expect("recorded");
        }
        store
    });
    let mut last = 0;
    while last < 200 {
        let n = count(&reader);
        assert!(n >= last, "a reader never sees the store shrink");
        last = n;
    }
    let store = writer.join().expect("writer");
    let err = reader
        .write(vec![Write::Message(say("x", "thread_a", 1))])
        .expect_err("reader only");
    assert!(matches!(err, Error::ReaderOnly { .. }), "{err}");
    names(&err, &path);
    assert!(matches!(
        reader.prune(i64::MAX).wait(),
        Err(Error::ReaderOnly { .. })
    ));
    drop(store);
    // Readable once the writer has closed it too.
    assert_eq!(
        count(&SqliteStore::open_reader(&path).expect("reader")),
        200
    );
}

#[test]
fn many_threads_writing_at_once_lose_nothing() {
    let dir = tempfile::tempdir().expect("dir");
    let store = std::sync::Arc::new(
        SqliteStore::open(dir.path().join("peer.sqlite3"), binding()).expect("create"),
    );
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let store = store.clone();
            std::thread::spawn(move || {
                let tickets: Vec<_> = (0..50)
                    .map(|i| {
                        store.submit(vec![Write::Message(say(
                            &format!("t{t}m{i}"),
                            &format!("thread_{t}"),
                            i,
                        ))])
                    })
                    .collect();
                for ticket in tickets {
                    ticket.wait().expect("recorded");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    store.settled().wait().expect("derived");
    assert_eq!(count(&*store), 400);
    let threads = store.threads(&PageRequest::newest(100)).expect("read");
    assert_eq!(threads.items.len(), 8);
    assert!(threads.items.iter().all(|c| c.messages == 50));
}

#[test]
fn writes_that_arrive_together_share_one_transaction() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("peer.sqlite3");
    // The writer thread takes every group (none is committed by the submitting thread, which
    // would wait for the lock itself).
    let store = SqliteStore::open_with(&path, binding(), by_the_writer()).expect("create");
    // Hold the log file's write lock so that the writer waits while 100 groups arrive. (The
    // store file's lock would hold back only the derivation: a group or two could be committed
    // before the writer first derives and waits; that failed once in CI.)
    let other = rusqlite::Connection::open(dir.path().join("peer.sqlite3-log")).expect("raw");
    other.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let tickets: Vec<_> = (0..100)
        .map(|i| store.submit(vec![Write::Message(say(&format!("m{i}"), "thread_a", i))]))
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    other.execute_batch("ROLLBACK").expect("unlock");
    for ticket in tickets {
        ticket.wait().expect("recorded");
    }
    store.settled().wait().expect("derived");
    assert_eq!(count(&store), 100);
    // The first group may have been taken alone before the others arrived; the rest are one.
    assert!(
        store.transactions() <= 2,
        "{} transactions",
        store.transactions()
    );
}

#[test]
fn a_group_undone_in_a_shared_transaction_leaves_no_counts_behind() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("peer.sqlite3");
    // The writer thread takes every group (none is committed by the submitting thread, which
    // would wait for the lock itself).
    let store = SqliteStore::open_with(&path, binding(), by_the_writer()).expect("create");
    // The groups share one transaction (the writer waits for the lock while they arrive); one
    // of them fails inside it (its log row is refused), so nothing of it is derived. The log
    // is the file beside the store's.
    let other = rusqlite::Connection::open(dir.path().join("peer.sqlite3-log")).expect("raw");
    other
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON log WHEN instr(NEW.writes, 'bad') > 0
             BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;
             BEGIN IMMEDIATE;",
        )
        .expect("trigger and lock");
    let good = |i: i64| Write::Message(say(&format!("m{i}"), "thread_a", 1_000 + i));
    let mut undone = say("x1", "thread_a", 9_000);
    undone.from = Some("eve.x".to_owned());
    let tickets = [
        store.submit(vec![good(0)]),
        store.submit(vec![
            Write::Message(undone),
            Write::Message(say("x2", "thread_b", 9_000)),
            Write::Message(say("bad", "thread_a", 9_000)),
        ]),
        store.submit(vec![good(1)]),
        store.submit(vec![good(2)]),
    ];
    std::thread::sleep(Duration::from_millis(100));
    other.execute_batch("ROLLBACK").expect("unlock");
    let results: Vec<_> = tickets.into_iter().map(|t| t.wait()).collect();
    assert!(results[0].is_ok() && results[2].is_ok() && results[3].is_ok());
    let err = results[1].clone().expect_err("the trigger refused it");
    assert!(err.to_string().contains("refused by the test"), "{err}");
    store.settled().wait().expect("derived");
    let threads = store.threads(&PageRequest::newest(10)).expect("threads");
    assert_eq!(threads.items.len(), 1, "no thread_b: {:?}", threads.items);
    let a = &threads.items[0];
    assert_eq!(a.id, "thread_a");
    assert_eq!(a.messages, 3);
    assert_eq!((a.first_activity_ms, a.last_activity_ms), (1_000, 1_002));
    let peers: Vec<_> = a.participants.iter().map(|p| p.peer.as_str()).collect();
    assert_eq!(peers, ["ops.one"]);
    assert_eq!(
        (
            a.participants[0].first_seen_ms,
            a.participants[0].last_seen_ms
        ),
        (1_000, 1_002)
    );
    assert_eq!(count(&store), 3);
}

#[test]
fn a_newer_schema_version_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("peer.sqlite3");
    SqliteStore::open(&path, binding()).expect("create").close();
    {
        let raw = rusqlite::Connection::open(&path).expect("raw");
        raw.pragma_update(None, "user_version", agh_store::SCHEMA_VERSION + 1)
            .expect("bump");
    }
    let before = file_bytes(&path);
    let err = SqliteStore::open(&path, binding()).expect_err("newer");
    assert!(
        matches!(err, Error::Newer { found, supported, .. }
            if found == agh_store::SCHEMA_VERSION + 1 && supported == agh_store::SCHEMA_VERSION),
        "{err}"
    );
    names(&err, &path);
    let err = SqliteStore::open_reader(&path).expect_err("newer");
    assert!(matches!(err, Error::Newer { .. }), "{err}");
    assert_eq!(file_bytes(&path), before, "left unchanged");
}

#[test]
fn another_programs_database_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("other.db");
    {
        let raw = rusqlite::Connection::open(&path).expect("raw");
        raw.execute_batch("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('hi');")
            .expect("their schema");
    }
    let before = file_bytes(&path);
    let err = SqliteStore::open(&path, binding()).expect_err("not ours");
    assert!(matches!(err, Error::NotOurs { .. }), "{err}");
    names(&err, &path);
    assert!(err.to_string().contains("another program"), "{err}");
    assert!(matches!(
        SqliteStore::open_reader(&path),
        Err(Error::NotOurs { .. })
    ));
    assert_eq!(file_bytes(&path), before, "left unchanged");
    assert!(
        !dir.path().join("other.db-wal").exists(),
        "not switched to WAL"
    );
}

#[test]
fn a_file_that_is_not_sqlite_is_refused_and_left_unchanged() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("peer.sqlite3");
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7 + 3) as u8).collect();
    std::fs::write(&path, &garbage).expect("write");
    let err = SqliteStore::open(&path, binding()).expect_err("garbage");
    assert!(
        matches!(&err, Error::NotOurs { detail, .. } if detail.contains("not a SQLite database")),
        "{err}"
    );
    names(&err, &path);
    assert!(matches!(
        SqliteStore::open_reader(&path),
        Err(Error::NotOurs { .. })
    ));
    assert_eq!(file_bytes(&path), garbage, "left unchanged");
}

#[test]
fn a_damaged_store_is_reported_as_damaged() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("peer.sqlite3");
    {
        let store = SqliteStore::open(&path, binding()).expect("create");
        let writes = (0..2000)
            .map(|i| Write::Message(say(&format!("m{i}"), &format!("thread_{}", i % 50), i)))
            .collect();
        store.write(writes).expect("recorded");
    }
    // Overwrite every page after the first few (the header and schema stay readable).
    let mut bytes = file_bytes(&path);
    assert!(bytes.len() > 64 * 1024, "a store of many pages");
    for b in &mut bytes[8 * 4096..] {
        *b = 0x5a;
    }
    std::fs::write(&path, &bytes).expect("damage");
    let error = match SqliteStore::open(&path, binding()) {
        Err(e) => e,
        Ok(store) => store
            .messages(&all(), &PageRequest::newest(5000))
            .and_then(|_| store.threads(&PageRequest::newest(100)))
            .expect_err("damaged pages cannot be read"),
    };
    assert!(matches!(error, Error::Corrupt { .. }), "{error}");
    names(&error, &path);
}

#[test]
fn a_read_only_file_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("peer.sqlite3");
    SqliteStore::open(&path, binding()).expect("create").close();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).expect("chmod");
    let err = SqliteStore::open(&path, binding()).expect_err("read-only");
    assert!(matches!(err, Error::ReadOnly { .. }), "{err}");
    names(&err, &path);
    // Reading it is still fine.
    assert_eq!(count(&SqliteStore::open_reader(&path).expect("reader")), 0);
}

#[test]
fn a_full_store_says_so_and_keeps_what_it_had() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("peer.sqlite3");
    SqliteStore::open(&path, binding()).expect("create").close();
    let options = SqliteOptions {
        max_pages: Some(40),
        ..quick()
    };
    let store = SqliteStore::open_with(&path, binding(), options).expect("open");
    let mut recorded = 0;
    let error = loop {
        let mut m = say(&format!("m{recorded}"), "thread_a", recorded);
        m.bytes = vec![b'x'; 2048];
        match store.write(vec![Write::Message(m)]) {
            Ok(()) => recorded += 1,
            Err(e) => break e,
        }
        assert!(
            recorded < 1000,
            "40 pages cannot hold 1000 messages of 2 KiB"
        );
    };
    assert!(matches!(error, Error::DiskFull { .. }), "{error}");
    names(&error, &path);
    assert!(recorded > 0);
    assert_eq!(
        count(&store),
        recorded as usize,
        "every write before it is kept"
    );
    // Space freed, the writer goes on.
    let pruned = store.prune(recorded / 2).wait().expect("pruned");
    assert!(pruned.messages > 0);
    store
        .write(vec![Write::Message(say("after", "thread_a", 1_000_000))])
        .expect("recorded once there is room");
}

#[test]
fn a_missing_directory_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("no").join("such").join("peer.sqlite3");
    let err = SqliteStore::open(&path, binding()).expect_err("no directory");
    assert!(matches!(err, Error::Open { .. }), "{err}");
    names(&err, &path);
    let err = SqliteStore::open_reader(&path).expect_err("no file");
    assert!(matches!(err, Error::Open { .. }), "{err}");
    names(&err, &path);
}

#[test]
fn a_locked_database_is_reported_and_the_writer_recovers() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("peer.sqlite3");
    let store = SqliteStore::open_with(&path, binding(), quick()).expect("create");
    // The log file locked: the write is refused.
    let log = dir.path().join("peer.sqlite3-log");
    let other_log = rusqlite::Connection::open(&log).expect("raw");
    other_log.execute_batch("BEGIN IMMEDIATE").expect("lock");
    let err = store
        .write(vec![Write::Message(say("m1", "thread_a", 1))])
        .expect_err("locked");
    assert!(matches!(err, Error::Locked { .. }), "{err}");
    names(&err, &log);
    assert_eq!(count(&store), 0, "nothing recorded");
    other_log.execute_batch("ROLLBACK").expect("unlock");
    store
        .write(vec![Write::Message(say("m2", "thread_a", 2))])
        .expect("recorded once the lock is gone");
    assert_eq!(count(&store), 1);
    // The store file locked: the write is durable (its ticket is ready) but the readers do
    // not see it until the lock is gone.
    let other = rusqlite::Connection::open(&path).expect("raw");
    other.execute_batch("BEGIN IMMEDIATE").expect("lock");
    store
        .submit(vec![Write::Message(say("m3", "thread_a", 3))])
        .wait()
        .expect("logged");
    let err = store.settled().wait().expect_err("locked");
    assert!(matches!(err, Error::Locked { .. }), "{err}");
    names(&err, &path);
    assert_eq!(count(&store), 1, "not derived yet");
    other.execute_batch("ROLLBACK").expect("unlock");
    store
        .settled()
        .wait()
        .expect("derived once the lock is gone");
    assert_eq!(count(&store), 2);
    drop(store);

    // A connection holding the file exclusively keeps the store from opening at all.
    other
        .execute_batch(
            "PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; SELECT count(*) FROM messages;",
        )
        .expect("exclusive");
    let err = SqliteStore::open_with(&path, binding(), quick()).expect_err("locked");
    assert!(matches!(err, Error::Locked { .. }), "{err}");
    names(&err, &path);
}

/// The child of `a_killed_writer_keeps_every_ready_write`: writes until killed, printing the
/// number of each write once its ticket is ready.
#[test]
fn crash_child() {
    let Some(path) = std::env::var_os("AGH_STORE_CRASH_CHILD") else {
        return;
    };
    let store = SqliteStore::open(PathBuf::from(path), binding()).expect("open");
    let mut out = std::io::stdout().lock();
    for i in 0.. {
        store
            .write(vec![Write::Message(say(&format!("m{i}"), "thread_k", i))])
            .expect("recorded");
        writeln!(out, "durable {i}").expect("stdout");
        out.flush().expect("stdout");
    }
}

#[test]
fn a_killed_writer_keeps_every_ready_write() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("peer.sqlite3");
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["crash_child", "--exact", "--nocapture", "--test-threads=1"])
        .env("AGH_STORE_CRASH_CHILD", &path)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("child");
    let stdout = child.stdout.take().expect("stdout");
    let mut last = None;
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("line");
        if let Some(n) = line.strip_prefix("durable ") {
            let n: i64 = n.parse().expect("number");
            last = Some(n);
            if n == 100 {
                // Another process reads the store while the child writes it.
                let reader = SqliteStore::open_reader(&path).expect("reader beside the writer");
                assert!(
                    count(&reader) > 100,
                    "every write the child reported is readable"
                );
            }
            if n >= 300 {
                break;
            }
        }
    }
    child.kill().expect("SIGKILL"); // Child::kill is SIGKILL on Unix.
    child.wait().expect("reaped");
    let last = last.expect("the child wrote");
    assert!(last >= 300, "the child stopped early, at {last}");
    let store = SqliteStore::open(&path, binding()).expect("reopen after the kill");
    let page = store
        .messages(&all(), &PageRequest::newest(PageRequest::MAX_LIMIT))
        .expect("read");
    let ids: std::collections::HashSet<String> = page
        .items
        .iter()
        .filter_map(|m| m.record.id.clone())
        .collect();
    for i in 0..=last {
        assert!(
            ids.contains(&format!("m{i}")),
            "m{i} was ready, so it is recorded"
        );
    }
}

#[test]
fn the_synchronous_setting_is_the_one_asked_for() {
    let dir = tempfile::tempdir().expect("temp dir");
    for (i, sync) in [Synchronous::Normal, Synchronous::Full]
        .into_iter()
        .enumerate()
    {
        let options = SqliteOptions {
            synchronous: sync,
            ..quick()
        };
        let path = dir.path().join(format!("s{i}.sqlite3"));
        let store = SqliteStore::open_with(&path, binding(), options).expect("open");
        assert_eq!(store.synchronous(), sync, "read back from SQLite");
        store
            .write(vec![Write::Message(say("m-1", "t", 1_000))])
            .expect("write");
    }
    assert_eq!(SqliteOptions::default().synchronous, Synchronous::Normal);
}

/// The writer never checkpoints (a checkpoint's sync would stall every ticket behind it): the
/// checkpointer thread copies the WAL into the database file while the store is open.
#[test]
fn the_wal_is_checkpointed_beside_the_writer() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("c.sqlite3");
    let store = SqliteStore::open(&path, binding()).expect("open");
    let before = std::fs::metadata(&path).expect("file").len();
    for i in 0..300 {
        let thread = format!("thread_{i}");
        store
            .write(vec![Write::Message(say(
                &format!("m-{i}"),
                &thread,
                1_000 + i,
            ))])
            .expect("write");
    }
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while std::fs::metadata(&path).expect("file").len() <= before {
        assert!(
            std::time::Instant::now() < deadline,
            "the database file did not grow: nothing was checkpointed"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(count(&store), 300);
}

/// `derive_idle` and `checkpoint_pace` are the writer's schedule: with both long, a committed
/// write stays in the log (readers do not see it) until something asks for it to be derived,
/// and after the first checkpoint nothing is copied into the store file for the pace.
#[test]
fn the_writer_derives_and_checkpoints_on_the_schedule_asked_for() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("s.sqlite3");
    let options = SqliteOptions {
        derive_idle: Duration::from_secs(60),
        checkpoint_pace: Duration::from_secs(60),
        max_lag: 100_000,
        ..SqliteOptions::default()
    };
    let store = SqliteStore::open_with(&path, binding(), options).expect("open");
    let reader = SqliteStore::open_reader(&path).expect("reader");
    store
        .submit(vec![Write::Message(say("m-0", "thread_a", 1_000))])
        .wait()
        .expect("durable");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(count(&reader), 0, "derived before its idle time");
    store.settled().wait().expect("derived");
    assert_eq!(count(&reader), 1);
    // The first commit's checkpoint is over well within a second.
    std::thread::sleep(Duration::from_secs(1));
    let size = std::fs::metadata(&path).expect("file").len();
    for i in 1..300 {
        store
            .submit(vec![Write::Message(say(
                &format!("m-{i}"),
                &format!("thread_{i}"),
                1_000 + i,
            ))])
            .wait()
            .expect("durable");
    }
    store.settled().wait().expect("derived");
    // Longer than the default pace: a store checkpointing at it would have grown by now.
    std::thread::sleep(Duration::from_millis(1_500));
    assert_eq!(count(&reader), 300);
    assert_eq!(
        std::fs::metadata(&path).expect("file").len(),
        size,
        "checkpointed before its pace"
    );

    // The default schedule: derived behind the commit without being asked.
    let path = dir.path().join("d.sqlite3");
    let store = SqliteStore::open(&path, binding()).expect("open");
    let reader = SqliteStore::open_reader(&path).expect("reader");
    store
        .submit(vec![Write::Message(say("m-0", "thread_a", 1_000))])
        .wait()
        .expect("durable");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while count(&reader) == 0 {
        assert!(std::time::Instant::now() < deadline, "never derived");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn a_derivation_that_fails_keeps_the_log_and_says_so_when_settling() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("peer.sqlite3");
    let store = SqliteStore::open(&path, binding()).expect("create");
    let other = rusqlite::Connection::open(&path).expect("raw");
    other
        .execute_batch(
            "CREATE TRIGGER refuse BEFORE INSERT ON messages WHEN NEW.id = 'bad'
             BEGIN SELECT RAISE(ABORT, 'refused by the test'); END;",
        )
        .expect("trigger");
    // Durable (its log row is committed), but it cannot be derived.
    store
        .submit(vec![Write::Message(say("bad", "thread_a", 1))])
        .wait()
        .expect("durable");
    let err = store.settled().wait().expect_err("not derivable");
    assert!(err.to_string().contains("refused by the test"), "{err}");
    assert_eq!(count(&store), 0, "the readers lag");
    other
        .execute_batch("DROP TRIGGER refuse")
        .expect("trigger gone");
    store.settled().wait().expect("derived now");
    assert_eq!(count(&store), 1, "nothing was lost");
}

/// Readers lag by at most about `max_lag` rows under a steady stream of groups that never leaves
/// the store idle for `derive_idle` (here a minute): the derivation's thread derives past half
/// of it without waiting, and should it be starved, past `max_lag` a group goes to the writer
/// thread, which derives behind its commit.
#[test]
fn readers_lag_by_at_most_max_lag_while_the_derivation_thread_waits() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("lag.sqlite3");
    let options = SqliteOptions {
        derive_idle: Duration::from_secs(60),
        max_lag: 10,
        ..SqliteOptions::default()
    };
    let behind = lag_after_each_commit(&path, options, 50);
    let seen = 50 - behind[49];
    assert!((40..=50).contains(&seen), "{seen} of 50 derived");
}

/// Opens a store at `path` with `options`, submits `n` groups of one message each, waiting for
/// each to be durable, and gives how many rows a reader was behind after each commit.
fn lag_after_each_commit(path: &Path, options: SqliteOptions, n: i64) -> Vec<usize> {
    let store = SqliteStore::open_with(path, binding(), options).expect("open");
    let reader = SqliteStore::open_reader(path).expect("reader");
    (0..n)
        .map(|i| {
            store
                .submit(vec![Write::Message(say(
                    &format!("m-{i}"),
                    "thread_a",
                    1_000 + i,
                ))])
                .wait()
                .expect("durable");
            i as usize + 1 - count(&reader)
        })
        .collect()
}

/// With a `max_lag` of 64 the writer thread catches up at most a sixteenth of it later (4 rows):
/// readers lag by at most 68 rows after any commit, whichever thread committed it and
/// whichever thread derives.
#[test]
fn readers_lag_by_at_most_max_lag_and_its_slack_after_every_commit() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("slack.sqlite3");
    let options = SqliteOptions {
        derive_idle: Duration::from_secs(60),
        max_lag: 64,
        ..SqliteOptions::default()
    };
    for (i, behind) in lag_after_each_commit(&path, options, 200)
        .into_iter()
        .enumerate()
    {
        assert!(behind <= 68, "{behind} rows behind after write {i}");
    }
}
