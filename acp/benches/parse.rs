//! ACP envelopes through `agh_acp::parse_ref` and `agh_acp::parse`, against the same baselines
//! as `agh-protocol`'s parse benchmark, on the same bytes in the same run: (a)
//! `serde_json::from_slice::<Value>` alone, (b) that plus the `jsonschema` crate validating
//! against `schemas/acp-v0.2`. One envelope per kind: the draft's examples.
//!
//! Run: `cargo bench -p agh-acp --bench parse` (criterion's figures), or
//! `cargo bench -p agh-acp --bench parse -- interleaved-only`: the interleaved rounds alone, whose
//! median ratios it prints as a markdown table (the figures in BENCHMARKS.md).

use std::cell::RefCell;
use std::hint::black_box;
use std::path::Path;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use serde_json::Value;

const NOW: i64 = 1_771_108_000;
const ROUNDS: usize = 301;

/// The draft's examples (`seeds/acp-message-types-draft.md`, "Schemas"), completed into whole
/// envelopes, as the `acp.core` conformance fixtures hold them.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/fixtures/acp.core");
    let mut out = Vec::new();
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("acp.core fixtures")
        .map(|e| e.expect("entry").path())
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("accept_draft_example_"))
        })
        .collect();
    files.sort();
    for f in files {
        let doc: Value = serde_json::from_slice(&std::fs::read(&f).expect("read")).expect("json");
        let kind = doc["expect"]["kind"].as_str().expect("kind").to_owned();
        out.push((kind, serde_json::to_vec(&doc["envelope"]).expect("json")));
    }
    assert_eq!(out.len(), 12, "one example per kind");
    out
}

fn schema_validator() -> jsonschema::Validator {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/acp-v0.2");
    let mut docs = Vec::new();
    for sub in [dir.clone(), dir.join("body")] {
        for e in std::fs::read_dir(&sub).expect("schemas") {
            let p = e.expect("entry").path();
            if p.extension().is_some_and(|x| x == "json") {
                let v: Value =
                    serde_json::from_slice(&std::fs::read(&p).expect("read")).expect("json");
                docs.push(v);
            }
        }
    }
    let envelope = docs
        .iter()
        .find(|d| {
            d["$id"]
                .as_str()
                .is_some_and(|i| i.ends_with("/envelope.schema.json"))
        })
        .expect("envelope schema")
        .clone();
    let registry = jsonschema::Registry::new()
        .extend(docs.iter().map(|d| {
            (
                d["$id"].as_str().expect("$id").to_owned(),
                jsonschema::Resource::from_contents(d.clone()),
            )
        }))
        .expect("registry")
        .prepare()
        .expect("registry");
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_registry(&registry)
        .build(&envelope)
        .expect("validator")
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// `Inbox::receive_bytes` of a message the inbox has not seen, for the kinds an inbox delivers
/// without an exchange before them (requests and notifications); other kinds are not timed
/// (their call does nothing). Each round's envelopes are prepared before it (a fresh serial
/// written over the tail of the `id`, the bytes as a transport hands them over), outside the
/// timing. One inbox of the envelope's `to` takes them all, round after round, as a running
/// agent's does (its dedup window and tracked exchanges fill up, well within their caps): a
/// fresh inbox per round would time the first touch of its freshly allocated dedup table's
/// pages (a page fault every few messages), not the work per message.
struct InboxBench {
    bytes: Vec<u8>,
    id: std::ops::Range<usize>,
    initiating: bool,
    serial: u64,
    inbox: agh_acp::Inbox,
    pool: Vec<bytes::Bytes>,
    next: usize,
    calls: u64,
    delivered: u64,
}

impl InboxBench {
    fn new(bytes: &[u8]) -> Self {
        let v: Value = serde_json::from_slice(bytes).expect("json");
        let id = v["id"].as_str().expect("id");
        let text = std::str::from_utf8(bytes).expect("utf-8");
        let at = text.find(&format!("\"{id}\"")).expect("the id") + 1;
        let local = v["to"].as_str().unwrap_or("0123456789abcdef").to_owned();
        let initiating = v["ref"].is_null() && v["kind"] != "cancel";
        InboxBench {
            bytes: bytes.to_vec(),
            id: at..at + id.len(),
            inbox: agh_acp::Inbox::new(local),
            initiating,
            serial: 0,
            pool: Vec::new(),
            next: 0,
            calls: 0,
            delivered: 0,
        }
    }

    fn refill(&mut self, calls: usize) {
        if !self.initiating {
            return;
        }
        self.pool.clear();
        self.next = 0;
        for _ in 0..calls {
            self.serial += 1;
            let mut buf = self.bytes.clone();
            let digits = format!("{:012}", self.serial);
            buf[self.id.end - 12..self.id.end].copy_from_slice(digits.as_bytes());
            self.pool.push(bytes::Bytes::from(buf));
        }
    }

    fn receive(&mut self) {
        if !self.initiating {
            return;
        }
        let bytes = std::mem::take(&mut self.pool[self.next]);
        self.next += 1;
        self.calls += 1;
        let verdict = self.inbox.receive_bytes(black_box(bytes), NOW * 1000);
        if matches!(verdict, agh_acp::Verdict::Delivered { .. }) {
            self.delivered += 1;
        }
        drop(black_box(verdict));
    }
}

/// Each round times a batch of every function back to back, in a rotating order; ratios are
/// taken within the round and the median round is reported.
fn interleaved_ratios(_: &mut Criterion) {
    if std::env::args().any(|a| a == "inbox-steps") {
        return;
    }
    let validator = schema_validator();
    let options = agh_acp::options(NOW);
    println!("| kind | bytes | (a) Value ns | (b) Value+jsonschema ns | parse_ref ns | parse ns | parse_bytes ns | Inbox::receive_bytes ns | parse_ref / (a) | parse / (a) | (b) / parse_ref | parse / parse_ref | parse_bytes / parse_ref | inbox / parse_ref |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (kind, bytes) in corpus() {
        assert!(
            agh_acp::parse(&bytes, &options).is_ok(),
            "{kind} must be valid"
        );
        assert!(validator.is_valid(&serde_json::from_slice(&bytes).expect("json")));
        let b = bytes.as_slice();
        // A shared buffer, cloned once so that each clone below only counts a reference.
        let shared = bytes::Bytes::copy_from_slice(b);
        drop(shared.clone());
        let inbox = RefCell::new(InboxBench::new(b));
        let fns: Vec<Box<dyn Fn() + '_>> = vec![
            Box::new(move || {
                black_box(serde_json::from_slice::<Value>(black_box(b)).expect("json"));
            }),
            Box::new(|| {
                let v: Value = serde_json::from_slice(black_box(b)).expect("json");
                black_box(validator.is_valid(&v));
            }),
            Box::new(|| {
                black_box(agh_acp::parse_ref(black_box(b), &options).expect("valid"));
            }),
            Box::new(|| {
                black_box(agh_acp::parse(black_box(b), &options).expect("valid"));
            }),
            Box::new(|| {
                black_box(
                    agh_acp::parse_bytes(black_box(shared.clone()), &options).expect("valid"),
                );
            }),
            Box::new(|| inbox.borrow_mut().receive()),
        ];
        let n = fns.len();
        for _ in 0..100 {
            fns[1]();
        }
        let start = Instant::now();
        for _ in 0..100 {
            fns[1]();
        }
        let warm_ns = start.elapsed().as_nanos().max(1) / 100;
        let batch = (200_000 / warm_ns).clamp(1, 4000) as usize;
        let mut per_call: Vec<Vec<f64>> = (0..n).map(|_| Vec::with_capacity(ROUNDS)).collect();
        let mut ratios: Vec<Vec<f64>> = (0..6).map(|_| Vec::with_capacity(ROUNDS)).collect();
        for round in 0..ROUNDS {
            inbox.borrow_mut().refill(batch);
            let mut ns = vec![0f64; n];
            for k in 0..n {
                let f = (round + k) % n;
                let t = Instant::now();
                for _ in 0..batch {
                    fns[f]();
                }
                ns[f] = t.elapsed().as_nanos() as f64 / batch as f64;
            }
            for f in 0..n {
                per_call[f].push(ns[f]);
            }
            ratios[0].push(ns[2] / ns[0]);
            ratios[1].push(ns[3] / ns[0]);
            ratios[2].push(ns[1] / ns[2]);
            ratios[3].push(ns[3] / ns[2]);
            ratios[4].push(ns[4] / ns[2]);
            ratios[5].push(ns[5] / ns[2]);
        }
        let inbox = inbox.borrow();
        assert_eq!(
            inbox.delivered, inbox.calls,
            "{kind}: every inbox call is delivered"
        );
        let m: Vec<f64> = per_call.into_iter().map(median).collect();
        let r: Vec<f64> = ratios.into_iter().map(median).collect();
        let (inbox_ns, inbox_ratio) = match inbox.calls {
            0 => ("-".to_owned(), "-".to_owned()),
            _ => (format!("{:.0}", m[5]), format!("{:.2}x", r[5])),
        };
        println!(
            "| {kind} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} | {inbox_ns} | {:.2}x | {:.2}x | {:.2}x | {:.2}x | {:.2}x | {inbox_ratio} |",
            bytes.len(),
            m[0],
            m[1],
            m[2],
            m[3],
            m[4],
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
        );
    }
}

/// Where `Inbox::receive_bytes` spends its time, per message, in a running agent's steady state
/// (its dedup window and correlator at their caps, each new message pushing the oldest out):
/// the parser's `parse_ref` and `parse_bytes`, the dedup window's check and insert alone, the
/// correlator's `track` alone (of what the inbox reads from the message: roles, sent time, body
/// facts), and the whole `Inbox::receive_bytes`, each step over the same fresh envelopes with its
/// own state warmed by as many as its cap first. `cargo bench -p agh-acp --bench parse --
/// inbox-steps`.
fn inbox_steps() {
    use agh_runtime::correlation::{Correlator, Direction, Exchanged};
    use agh_runtime::json::scan::Member;
    use agh_runtime::DedupWindow;

    const WARM: usize = 110_000;
    const TIMED: usize = 40_000;
    let options = agh_acp::options(NOW);
    let spec = &agh_acp::SPEC;
    println!("| kind | parse_ref ns | parse_bytes ns | dedup ns | correlator ns | Inbox::receive_bytes ns | inbox / parse_ref |");
    println!("| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    for (kind, bytes) in corpus() {
        let mut bench = InboxBench::new(&bytes);
        if !bench.initiating {
            continue;
        }
        bench.refill(WARM + TIMED);
        let pool = std::mem::take(&mut bench.pool);
        let messages: Vec<agh_acp::Message> = pool
            .iter()
            .map(|b| agh_acp::parse_bytes(b.clone(), &options).expect("valid"))
            .collect();
        let tables = Correlator::for_spec(spec);
        let facts: Vec<_> = messages
            .iter()
            .map(|m| {
                m.body_json()
                    .and_then(|b| tables.body_facts(m.kind(), b.get()))
            })
            .collect();
        let exchanged = |i: usize| {
            let m = &messages[i];
            let sent_at = match m.envelope().member("ts") {
                Member::Int(v) => i64::try_from(v).expect("ts"),
                _ => 0,
            };
            Exchanged::new(
                m.kind(),
                m.id().expect("id"),
                m.str_of("from").expect("from"),
                m.str_of("to"),
                m.str_of("ref"),
                sent_at,
            )
            .with_body(facts[i].as_ref())
        };
        let mut dedup = DedupWindow::new(DedupWindow::DEFAULT_CAP, spec.replay_age_secs);
        let mut correlator = Correlator::for_spec(spec);
        let inbox = &mut bench.inbox;
        let (pool, options) = (&pool, &options);
        let mut steps: Vec<Box<dyn FnMut(usize) + '_>> = vec![
            Box::new(move |i| {
                black_box(agh_acp::parse_ref(black_box(&pool[i]), options).expect("valid"));
            }),
            Box::new(move |i| {
                let b = black_box(pool[i].clone());
                black_box(agh_acp::parse_bytes(b, options).expect("valid"));
            }),
            Box::new(|i| {
                let m = &messages[i];
                let (from, id) = (m.str_of("from").unwrap_or(""), m.id().unwrap_or(""));
                assert!(!dedup.contains(from, id));
                dedup.insert(from, id, NOW);
            }),
            Box::new(|i| {
                let e = exchanged(i);
                black_box(correlator.track(&e, Direction::Received).expect("tracked"));
            }),
            Box::new(move |i| {
                let verdict = inbox.receive_bytes(black_box(pool[i].clone()), NOW * 1000);
                assert!(verdict.refusal().is_none(), "delivered");
            }),
        ];
        // Each step's state filled first (untimed); then the timed envelopes in chunks, every
        // step over the same chunk in a rotating order; the median chunk is reported.
        for step in &mut steps {
            (0..WARM).for_each(&mut **step);
        }
        const CHUNK: usize = 500;
        let n = steps.len();
        let mut ns: Vec<Vec<f64>> = vec![Vec::new(); n];
        let mut ratio = Vec::new();
        for (c, start) in (WARM..WARM + TIMED).step_by(CHUNK).enumerate() {
            let mut round = vec![0f64; n];
            for k in 0..n {
                let f = (c + k) % n;
                let t = Instant::now();
                (start..start + CHUNK).for_each(&mut *steps[f]);
                round[f] = t.elapsed().as_nanos() as f64 / CHUNK as f64;
            }
            ratio.push(round[4] / round[0]);
            for f in 0..n {
                ns[f].push(round[f]);
            }
        }
        let m: Vec<f64> = ns.into_iter().map(median).collect();
        let (parse_ref, parse_bytes, dedup_ns, correlator_ns, inbox_ns) =
            (m[0], m[1], m[2], m[3], m[4]);
        let inbox_ratio = median(ratio);
        println!(
            "| {kind} | {parse_ref:.0} | {parse_bytes:.0} | {dedup_ns:.0} | {correlator_ns:.0} | {inbox_ns:.0} | {inbox_ratio:.2}x |"
        );
    }
}

fn bench_parse(c: &mut Criterion) {
    if std::env::args().any(|a| a == "inbox-steps") {
        inbox_steps();
        return;
    }
    if std::env::args().any(|a| a == "interleaved-only") {
        return;
    }
    let validator = schema_validator();
    let options = agh_acp::options(NOW);
    let mut group = c.benchmark_group("acp_parse");
    for (kind, bytes) in corpus() {
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("a_serde_value", &kind),
            &bytes,
            |b, bytes| b.iter(|| serde_json::from_slice::<Value>(black_box(bytes)).expect("json")),
        );
        group.bench_with_input(
            BenchmarkId::new("b_value_jsonschema", &kind),
            &bytes,
            |b, bytes| {
                b.iter(|| {
                    let v: Value = serde_json::from_slice(black_box(bytes)).expect("json");
                    validator.is_valid(&v)
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("acp_parse_ref", &kind),
            &bytes,
            |b, bytes| b.iter(|| agh_acp::parse_ref(black_box(bytes), &options).expect("valid")),
        );
        group.bench_with_input(BenchmarkId::new("acp_parse", &kind), &bytes, |b, bytes| {
            b.iter(|| agh_acp::parse(black_box(bytes), &options).expect("valid"))
        });
    }
    group.finish();
}

criterion_group!(benches, interleaved_ratios, bench_parse);
criterion_main!(benches);
