//! Reading a large store: 1,000,000 messages in 10,000 threads (100 each, interleaved as they
//! would arrive), one work unit per thread with four transitions.
//!
//! The store is built once into `$TMPDIR/agh-store-bench-v<schema>-1m.sqlite3` (a few minutes)
//! and reused while present. Targets (issue 32): a page of 50 messages of one thread, a page of
//! threads, and one work unit with its transitions, each <= 5 ms.
//!
//! `cargo bench -p agh-store --bench store`

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use agh_store::{
    Binding, Direction, MessageFilter, MessageRecord, MessageScope, PageRequest, SqliteStore,
    Store, WorkChange, WorkRef, Write,
};
use criterion::{criterion_group, criterion_main, Criterion};

const MESSAGES: i64 = 1_000_000;
const THREADS: i64 = 10_000;
const BATCH: i64 = 10_000;

fn binding() -> Binding {
    Binding::new("ws_bench", "builders", "worker.one")
}

fn thread_id(t: i64) -> String {
    format!("thread_bench_{t:05}")
}

fn work_id(t: i64) -> String {
    format!("work_bench_{t:05}")
}

/// Message `i`: a `say` of about 400 bytes, in thread `i % THREADS`; the first four of a thread
/// carry its work id.
fn message(i: i64) -> MessageRecord {
    let t = i % THREADS;
    let n = i / THREADS;
    let id = format!("msg_{i:08}");
    let from = if n % 2 == 0 { "ops.one" } else { "worker.one" };
    let thread = thread_id(t);
    let work = (n < 4).then(|| work_id(t));
    let ts = 1_776_000_000 + i;
    let text = format!("Status update {n} for thread {t}: the release branch is being checked.");
    let work_member = work
        .as_ref()
        .map(|w| format!("\"work_id\":\"{w}\","))
        .unwrap_or_default();
    let bytes = format!(
        "{{\"protocol\":\"agh-network/v0\",\"id\":\"{id}\",\"workspace_id\":\"ws_bench\",\
         \"kind\":\"say\",\"channel\":\"builders\",\"surface\":\"thread\",\"thread_id\":\"{thread}\",\
         {work_member}\"from\":\"{from}\",\"to\":null,\"ts\":{ts},\"body\":{{\"text\":\"{text}\",\
         \"intent\":\"notice\"}},\"proof\":null}}"
    );
    MessageRecord {
        bytes: bytes.into_bytes(),
        direction: if from == "worker.one" {
            Direction::Sent
        } else {
            Direction::Accepted
        },
        kind: Some("say".to_owned()),
        id: Some(id),
        from: Some(from.to_owned()),
        to: None,
        surface: Some("thread".to_owned()),
        container_id: Some(thread),
        work_id: work,
        reply_to: None,
        causation_id: None,
        ts: Some(ts),
        received_at_ms: ts * 1000,
        trust: Some("unverified".to_owned()),
        summary: Some(text),
    }
}

/// The transition message `n` (0..4) of thread `t` causes.
fn transition(t: i64, n: i64) -> Write {
    const STATES: [&str; 4] = ["requested", "accepted", "working", "completed"];
    let i = n * THREADS + t;
    Write::Work(WorkChange {
        key: WorkRef::new("thread", thread_id(t), work_id(t)),
        initiator: "ops.one".to_owned(),
        target: Some("worker.one".to_owned()),
        state: STATES[n as usize].to_owned(),
        // One unit in ten stays open.
        closed: n == 3 && t % 10 != 0,
        message_id: format!("msg_{i:08}"),
        at_ms: (1_776_000_000 + i) * 1000,
    })
}

fn build(path: &PathBuf) {
    let partial = path.with_extension("partial");
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", partial.display()));
    }
    eprintln!("building {} ({MESSAGES} messages)...", path.display());
    let started = Instant::now();
    let store = SqliteStore::open(&partial, binding()).expect("create the bench store");
    let mut i = 0;
    while i < MESSAGES {
        let writes = (i..(i + BATCH).min(MESSAGES))
            .flat_map(|i| {
                let t = i % THREADS;
                let n = i / THREADS;
                let mut w = vec![Write::Message(message(i))];
                if n < 4 {
                    w.push(transition(t, n));
                }
                w
            })
            .collect();
        store.write(writes).expect("recorded");
        i += BATCH;
    }
    store.close();
    std::fs::rename(&partial, path).expect("rename the built store");
    eprintln!("built in {:.1} s", started.elapsed().as_secs_f64());
}

fn bench(c: &mut Criterion) {
    let path = std::env::temp_dir().join(format!(
        "agh-store-bench-v{}-1m.sqlite3",
        agh_store::SCHEMA_VERSION
    ));
    if !path.exists() {
        build(&path);
    }
    let size = std::fs::metadata(&path).expect("store file").len();
    let raw: usize = (0..1000).map(|i| message(i * 997).bytes.len()).sum();
    eprintln!(
        "store: {} bytes for {MESSAGES} messages: {:.0} bytes per message (envelopes average {} bytes)",
        size,
        size as f64 / MESSAGES as f64,
        raw / 1000
    );
    let store = SqliteStore::open_reader(&path).expect("open the bench store");
    let check = store.threads(&PageRequest::newest(1)).expect("read");
    assert_eq!(check.items[0].messages, (MESSAGES / THREADS) as u64);

    let mut group = c.benchmark_group("store_1m");
    group.sample_size(50);
    group.measurement_time(Duration::from_secs(3));
    group.warm_up_time(Duration::from_secs(1));

    let mut t = 0;
    group.bench_function("thread_page_50", |b| {
        b.iter(|| {
            t = (t + 7919) % THREADS;
            let filter = MessageFilter::new(MessageScope::Thread(thread_id(t)));
            let page = store
                .messages(&filter, &PageRequest::newest(50))
                .expect("read");
            assert_eq!(page.items.len(), 50);
            black_box(page)
        })
    });

    let filter = MessageFilter::new(MessageScope::Thread(thread_id(4242)));
    let first = store
        .messages(&filter, &PageRequest::newest(50))
        .expect("read");
    let older = first.older.expect("a second page");
    group.bench_function("thread_page_50_before_cursor", |b| {
        b.iter(|| {
            let page = store
                .messages(&filter, &PageRequest::before(50, older.clone()))
                .expect("read");
            assert_eq!(page.items.len(), 50);
            black_box(page)
        })
    });

    group.bench_function("threads_page_50", |b| {
        b.iter(|| {
            let page = store.threads(&PageRequest::newest(50)).expect("read");
            assert_eq!(page.items.len(), 50);
            black_box(page)
        })
    });

    // A page deep in the listing: after 100 pages of 50.
    let mut deep = PageRequest::newest(50);
    for _ in 0..100 {
        let page = store.threads(&deep).expect("read");
        deep = PageRequest::before(50, page.older.expect("more threads"));
    }
    group.bench_function("threads_page_50_deep_cursor", |b| {
        b.iter(|| {
            let page = store.threads(&deep).expect("read");
            assert_eq!(page.items.len(), 50);
            black_box(page)
        })
    });

    let mut w = 0;
    group.bench_function("work_unit_with_transitions", |b| {
        b.iter(|| {
            w = (w + 7919) % THREADS;
            let units = store.work(&work_id(w)).expect("read");
            assert_eq!(units[0].transitions.len(), 4);
            black_box(units)
        })
    });

    group.bench_function("open_work_page_50", |b| {
        b.iter(|| {
            let page = store.open_work(&PageRequest::newest(50)).expect("read");
            assert_eq!(page.items.len(), 50);
            black_box(page)
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
