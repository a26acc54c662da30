//! What one commit costs the writer: the records of a request a peer receives (the message, its
//! dedup key, presence, the delivery's audit row, the work unit it opens) and of the receipt it
//! sends back (the message, the work transition), as `agh_peer` writes them, each in a commit of
//! its own (one request at a time: a closed loop's two commits in series) and 256 requests to
//! a commit (a window of requests in flight); each until the tickets are ready (the log rows
//! committed: what a delivery or a publish waits for), then until the readers see it all
//! (derived). A fresh file in a temporary directory, the default options (WAL,
//! `synchronous=NORMAL`, 4 KiB pages).
//!
//! `cargo bench -p agh-store --bench commit`

use std::sync::atomic::{AtomicI64, Ordering};

use agh_store::{
    AuditKind, AuditRecord, Binding, DedupKey, Direction, MessageRecord, PresenceRecord,
    SqliteOptions, SqliteStore, Store, WorkChange, WorkRef, Write,
};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};

const THREAD: &str = "thread_bench";
const SENDER: &str = "sender.bench";
const RECEIVER: &str = "stored.bench";

static NEXT: AtomicI64 = AtomicI64::new(0);

fn message(id: &str, work: &str, direction: Direction, from: &str, to: &str) -> MessageRecord {
    let bytes = format!(
        "{{\"protocol\":\"agh-network/v0\",\"id\":\"{id}\",\"workspace_id\":\"ws_bench\",\
         \"kind\":\"say\",\"channel\":\"bench\",\"surface\":\"thread\",\"thread_id\":\"{THREAD}\",\
         \"work_id\":\"{work}\",\"from\":\"{from}\",\"to\":\"{to}\",\"ts\":1776000000,\
         \"body\":{{\"text\":\"{}\"}},\"proof\":null}}",
        "x".repeat(24)
    );
    MessageRecord {
        bytes: bytes.into_bytes(),
        direction,
        kind: Some("say".to_owned()),
        id: Some(id.to_owned()),
        from: Some(from.to_owned()),
        to: Some(to.to_owned()),
        surface: Some("thread".to_owned()),
        container_id: Some(THREAD.to_owned()),
        work_id: Some(work.to_owned()),
        reply_to: None,
        causation_id: None,
        ts: Some(1_776_000_000),
        received_at_ms: 1_776_000_000_000 + NEXT.load(Ordering::Relaxed),
        trust: Some("unverified".to_owned()),
        summary: Some("x".repeat(24)),
    }
}

fn work(work: &str, state: &str, message_id: &str, at_ms: i64) -> Write {
    Write::Work(WorkChange {
        key: WorkRef::new("thread", THREAD, work),
        initiator: SENDER.to_owned(),
        target: Some(RECEIVER.to_owned()),
        state: state.to_owned(),
        closed: false,
        message_id: message_id.to_owned(),
        at_ms,
    })
}

/// The records of one request received (`agh_peer`'s `record::inbound`) and of its receipt.
fn request() -> (Vec<Write>, Vec<Write>) {
    let i = NEXT.fetch_add(1, Ordering::Relaxed);
    let (id, w, rid) = (format!("m-{i}"), format!("work_{i}"), format!("rcpt-{i}"));
    let m = message(&id, &w, Direction::Accepted, SENDER, RECEIVER);
    let at = m.received_at_ms;
    let inbound = vec![
        Write::Message(m),
        Write::Dedup(DedupKey {
            from: SENDER.to_owned(),
            id: id.clone(),
            expires_at: 1_776_000_300,
        }),
        Write::Presence(PresenceRecord {
            peer: SENDER.to_owned(),
            last_seen_ms: at,
            card: None,
        }),
        Write::Audit(AuditRecord {
            kind: AuditKind::Delivered,
            at_ms: at,
            message_id: Some(id.clone()),
            from: Some(SENDER.to_owned()),
            reason_code: None,
            pointer: None,
            detail: None,
            receipt_sent: false,
        }),
        work(&w, "requested", &id, at),
    ];
    let receipt = vec![
        Write::Message(message(&rid, &w, Direction::Sent, RECEIVER, SENDER)),
        work(&w, "accepted", &rid, at),
    ];
    (inbound, receipt)
}

/// Waits for every ticket, then (with `derived`) until the readers see everything
/// (`Store::settled`): the ticket is what a delivery or a publish waits for, the rest is the
/// writer's work behind it.
fn finish(store: &SqliteStore, tickets: Vec<agh_store::Ticket<()>>, derived: bool) {
    for t in tickets {
        t.wait().expect("recorded");
    }
    if derived {
        store.settled().wait().expect("derived");
    }
}

fn commits(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut group = c.benchmark_group("commit");
    group.sample_size(20);
    group.measurement_time(std::time::Duration::from_secs(3));
    for (name, commit_on_caller) in [("on the caller", true), ("by the writer", false)] {
        let path = dir.path().join(format!("bench-{commit_on_caller}.sqlite3"));
        let options = SqliteOptions {
            commit_on_caller,
            ..SqliteOptions::default()
        };
        let store =
            SqliteStore::open_with(&path, Binding::new("ws_bench", "bench", RECEIVER), options)
                .expect("store");
        for derived in [false, true] {
            let then = if derived { ", then derived" } else { "" };
            group.throughput(Throughput::Elements(1));
            group.bench_function(
                format!("request then receipt, a commit each {name}{then}"),
                |b| {
                    b.iter_batched(
                        request,
                        |(inbound, receipt)| {
                            finish(&store, vec![store.submit(inbound)], false);
                            finish(&store, vec![store.submit(receipt)], derived);
                        },
                        BatchSize::SmallInput,
                    )
                },
            );
            if !commit_on_caller {
                continue;
            }
            group.throughput(Throughput::Elements(256));
            group.bench_function(format!("256 requests and receipts a commit{then}"), |b| {
                b.iter_batched(
                    || (0..256).map(|_| request()).collect::<Vec<_>>(),
                    |requests| {
                        let tickets: Vec<_> = requests
                            .into_iter()
                            .flat_map(|(inbound, receipt)| {
                                [store.submit(inbound), store.submit(receipt)]
                            })
                            .collect();
                        finish(&store, tickets, derived);
                    },
                    BatchSize::SmallInput,
                )
            });
        }
        store.close();
    }
    group.finish();
}

/// The floor: the cheapest commit of one log row of a 1 KiB request on this machine, on a bare
/// connection set up as the store's writer (WAL, `synchronous=NORMAL`, 4 KiB pages, the
/// automatic checkpoint off as in the store: a checkpoint every 1,000 rows outside the timing
/// keeps the WAL short), on the calling thread and handed to a thread and back.
fn floor(c: &mut Criterion) {
    use rusqlite::{params, Connection};
    use std::sync::mpsc;
    let dir = tempfile::tempdir().expect("temp dir");
    let open = |name: &str| {
        let conn = Connection::open(dir.path().join(name)).expect("open");
        conn.pragma_update(None, "page_size", agh_store::DEFAULT_PAGE_SIZE)
            .expect("page size");
        conn.pragma_update(None, "journal_mode", "WAL")
            .expect("wal");
        conn.pragma_update(None, "synchronous", "NORMAL")
            .expect("sync");
        conn.pragma_update(None, "wal_autocheckpoint", 0)
            .expect("no autocheckpoint");
        conn.execute_batch("CREATE TABLE log (seq INTEGER PRIMARY KEY, writes BLOB NOT NULL)")
            .expect("table");
        conn
    };
    let row = vec![b'x'; 1100];
    let commit = |conn: &Connection, seq: i64, row: &[u8]| {
        conn.prepare_cached("BEGIN IMMEDIATE")
            .expect("begin")
            .execute([])
            .expect("begin");
        conn.prepare_cached("INSERT INTO log (seq, writes) VALUES (?1, ?2)")
            .expect("insert")
            .execute(params![seq, row])
            .expect("insert");
        conn.prepare_cached("COMMIT")
            .expect("commit")
            .execute([])
            .expect("commit");
        if seq % 1000 == 0 {
            conn.execute_batch("PRAGMA wal_checkpoint(PASSIVE)")
                .expect("checkpoint");
        }
    };
    let mut group = c.benchmark_group("floor");
    group.sample_size(20);
    group.measurement_time(std::time::Duration::from_secs(3));
    group.throughput(Throughput::Elements(1));
    let conn = open("caller.sqlite3");
    let mut seq = 0;
    group.bench_function("one log row, a commit on the caller", |b| {
        b.iter(|| {
            seq += 1;
            commit(&conn, seq, &row);
        })
    });
    let conn = open("grouped.sqlite3");
    let mut seq = 0;
    group.throughput(Throughput::Elements(256));
    group.bench_function("256 log rows a commit, on the caller", |b| {
        b.iter(|| {
            conn.execute_batch("BEGIN IMMEDIATE").expect("begin");
            let mut insert = conn
                .prepare_cached("INSERT INTO log (seq, writes) VALUES (?1, ?2)")
                .expect("insert");
            for _ in 0..256 {
                seq += 1;
                insert.execute(params![seq, row]).expect("insert");
            }
            drop(insert);
            conn.execute_batch("COMMIT").expect("commit");
            if seq % 1024 == 0 {
                conn.execute_batch("PRAGMA wal_checkpoint(PASSIVE)")
                    .expect("checkpoint");
            }
        })
    });
    group.throughput(Throughput::Elements(1));
    let (to, jobs) = mpsc::channel::<i64>();
    let (done, answers) = mpsc::channel::<()>();
    let thread_row = row.clone();
    let conn = open("thread.sqlite3");
    let writer = std::thread::spawn(move || {
        while let Ok(seq) = jobs.recv() {
            commit(&conn, seq, &thread_row);
            done.send(()).expect("answer");
        }
    });
    let mut seq = 0;
    group.bench_function("one log row, handed to a thread and back", |b| {
        b.iter(|| {
            seq += 1;
            to.send(seq).expect("send");
            answers.recv().expect("answer");
        })
    });
    drop(to);
    writer.join().expect("writer");
    group.finish();
}

criterion_group!(benches, commits, floor);
criterion_main!(benches);
