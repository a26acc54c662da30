//! Parse speed against the alternatives a user would otherwise pick, on the same bytes:
//! (a) `serde_json::from_slice::<Value>` alone, (b) `Value` plus the `jsonschema` crate validating
//! against the normative schemas (validator compiled once), and ours: `agh_protocol::parse` (all
//! rules, typed result). Also the receiver pipeline (parse + dedup + lifecycle) per message.
//!
//! Run: `cargo bench -p agh-protocol --bench parse` (figures go to BENCHMARKS.md as ratios).

use std::hint::black_box;
use std::path::{Path, PathBuf};

use agh_protocol::{parse, parse_ref, Options, Receiver, ReceiverConfig};
use criterion::{criterion_group, criterion_main, BatchSize, BenchmarkId, Criterion, Throughput};
use serde_json::{json, Value};

const NOW: i64 = 1_776_366_000;

fn fixture(rel: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/fixtures")
        .join(rel);
    let v: Value = serde_json::from_slice(&std::fs::read(path).expect("fixture")).expect("json");
    v["envelope"].clone()
}

/// Realistic envelopes of every kind, bodies from about 200 bytes to 10 KiB.
fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut add =
        |name: &str, v: Value| out.push((name.to_owned(), serde_json::to_vec(&v).expect("json")));
    add("greet", fixture("core.message-kinds/accept_greet.json"));
    add(
        "whois_response",
        fixture("core.message-kinds/accept_whois_response.json"),
    );
    add("receipt", fixture("core.message-kinds/accept_receipt.json"));
    add(
        "capability",
        fixture("core.message-kinds/accept_capability.json"),
    );
    let say = fixture("core.envelope/accept_say.json");
    for size in [200usize, 1024, 10 * 1024] {
        let mut v = say.clone();
        let words: String = "smoke test the staging branch and report "
            .chars()
            .cycle()
            .take(size)
            .collect();
        v["body"]["text"] = json!(words);
        add(&format!("say_{size}"), v);
    }
    let mut trace = fixture("core.message-kinds/accept_trace.json");
    let cases: Vec<Value> = (0..40)
        .map(|i| json!({"name": format!("migration_case_{i}"), "passed": i % 7 != 0, "ms": 40 + i}))
        .collect();
    trace["body"]["result"] = json!({"passed": true, "cases": cases});
    add("trace_result", trace);
    out
}

fn schema_validator() -> jsonschema::Validator {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/agh-network-v0");
    let mut files: Vec<PathBuf> = Vec::new();
    let mut stack = vec![dir];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).expect("schemas") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                files.push(p);
            }
        }
    }
    let docs: Vec<Value> = files
        .iter()
        .map(|f| serde_json::from_slice(&std::fs::read(f).expect("read")).expect("json"))
        .collect();
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
                d["$id"].as_str().unwrap_or_default().to_owned(),
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

fn bench_parse(c: &mut Criterion) {
    let validator = schema_validator();
    let options = Options::at(NOW);
    let mut group = c.benchmark_group("parse");
    for (name, bytes) in corpus() {
        assert!(parse(&bytes, &options).is_ok(), "{name} must be valid");
        assert!(validator.is_valid(&serde_json::from_slice(&bytes).expect("json")));
        group.throughput(Throughput::Bytes(bytes.len() as u64));
        group.bench_with_input(
            BenchmarkId::new("a_serde_value", &name),
            &bytes,
            |b, bytes| b.iter(|| serde_json::from_slice::<Value>(black_box(bytes)).expect("json")),
        );
        group.bench_with_input(
            BenchmarkId::new("b_value_jsonschema", &name),
            &bytes,
            |b, bytes| {
                b.iter(|| {
                    let v: Value = serde_json::from_slice(black_box(bytes)).expect("json");
                    validator.is_valid(&v)
                })
            },
        );
        group.bench_with_input(
            BenchmarkId::new("agh_parse_ref", &name),
            &bytes,
            |b, bytes| b.iter(|| parse_ref(black_box(bytes), &options).expect("valid")),
        );
        group.bench_with_input(BenchmarkId::new("agh_parse", &name), &bytes, |b, bytes| {
            b.iter(|| parse(black_box(bytes), &options).expect("valid"))
        });
    }
    group.finish();
}

/// The capability digest recipe alone (canonical JSON + SHA-256 from the document's text), as
/// `parse_ref` runs it inside a capability envelope: the part of that envelope's time that
/// neither baseline does.
fn bench_recipe(c: &mut Criterion) {
    let envelope = fixture("core.message-kinds/accept_capability.json");
    let text = serde_json::to_string(&envelope["body"]["capability"]).expect("json");
    let raw = agh_protocol::RawJson::parse(&text).expect("strict JSON");
    assert!(agh_protocol::digest::verify_raw(raw));
    c.bench_function("recipe_capability_digest", |b| {
        b.iter(|| agh_protocol::digest::verify_raw(black_box(raw)))
    });
}

fn bench_receiver(c: &mut Criterion) {
    let say = fixture("core.message-kinds/accept_say_with_work_id.json");
    let mut config = ReceiverConfig::new("ws_alpha", "builders", "patch-worker.session-19");
    config.dedup_cap = 100_000;
    let mut receiver = Receiver::new(config);
    let mut i = 0u64;
    // Each message is new (a new id opening new work); building it is not timed.
    c.bench_function("receiver/say_opening_work", |b| {
        b.iter_batched(
            || {
                i += 1;
                let mut v = say.clone();
                v["id"] = json!(format!("msg_{i}"));
                v["work_id"] = json!(format!("work_{i}"));
                serde_json::to_vec(&v).expect("json")
            },
            |bytes| black_box(receiver.receive(&bytes, NOW)),
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, bench_parse, bench_recipe, bench_receiver);
criterion_main!(benches);
