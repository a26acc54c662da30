//! Issue 30's speed target: the fast path stays fast for the keywords maintainers add. One
//! envelope (about 1 KiB) of the schema set `codegen/tests/fixtures/keywords-bench`, whose `report`
//! body uses `oneOf` (three artifact shapes), `patternProperties` (a map of counters),
//! `maxLength` (the summary), `multipleOf` (the coverage) and `contains` (at least one link among
//! the artifacts). The set's generated code (`keywords_set/`, written by `cargo xtask codegen`)
//! is compiled in, and the runtime's `parse_ref` on it is timed against, on the same bytes:
//! (a) `serde_json::from_slice::<Value>` alone, and (b) that `Value` validated by the `jsonschema`
//! crate against the same schema files (envelope, body and definitions in one registry; the
//! validator compiled once). Targets: `parse_ref` at most 0.5x of (a), at least 4x faster than (b).
//!
//! Run: `cargo bench -p agh-protocol --bench keywords` (`-- interleaved-only` for the interleaved
//! rounds alone). The ratios come from interleaved rounds (every round times a batch of each of
//! the three back to back, in a rotating order; the median round's ratio is reported); criterion's
//! own figures follow (a filter naming one, `keywords/agh_parse_ref`, runs that one alone, as a
//! profiler wants it). The table is printed and written to `target/criterion/keywords.json`.
//! Before any timing, all three must agree the envelope is valid, and each broken variant (one
//! per keyword) must be refused by `parse_ref` and by `jsonschema`.

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use agh_protocol::profile;
use agh_protocol::scan::Scanner;
use agh_protocol::Options;
use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use serde_json::{json, Value};

// Generated: not every table of the set is read here.
#[rustfmt::skip]
#[allow(dead_code)]
mod keywords_set;

use keywords_set::profile::{Profile as Ci, SPEC};

/// The clock of every run: the envelope's `ts`.
const NOW: i64 = 1_776_366_000;

/// The schema set's directory.
fn set_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../codegen/tests/fixtures/keywords-bench")
}

/// Baseline (b)'s validator: every file of the set in one registry by its `$id`, the envelope
/// schema the root, so `jsonschema` follows the same `$ref`s to the body and the definitions.
fn schema_validator() -> jsonschema::Validator {
    let mut files = Vec::new();
    let mut stack = vec![set_dir()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).expect("the schema set") {
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
    let id = |d: &Value| d["$id"].as_str().unwrap_or_default().to_owned();
    let envelope = docs
        .iter()
        .find(|d| id(d).ends_with("/envelope.schema.json"))
        .expect("envelope schema")
        .clone();
    let registry = jsonschema::Registry::new()
        .extend(
            docs.iter()
                .map(|d| (id(d), jsonschema::Resource::from_contents(d.clone()))),
        )
        .expect("registry")
        .prepare()
        .expect("registry");
    jsonschema::options()
        .with_draft(jsonschema::Draft::Draft202012)
        .with_registry(&registry)
        .build(&envelope)
        .expect("validator")
}

/// A CI run's report as a peer would send it: a summary of a few hundred characters (some not
/// ASCII), eight counters, a coverage to the hundredth, and four artifacts of the three shapes.
fn report() -> Value {
    json!({
        "protocol": "ci/v1",
        "id": "7f3c2e9b-0d7f-4c55-9a51-6f1c2a7e0b7d",
        "kind": "report",
        "from": "ci-runner-07.build.example",
        "to": "release-bot",
        "ts": NOW,
        "reply_to": "0b7d4c55-9a51-4d7f-8c2e-6f1c2a7e9b10",
        "body": {
            "run": "nightly-2026-11-26.3",
            "summary": "Nightly build of main at 3f9c2e1: 412 tests passed, 3 failed (all in \
                the store's migration suite, see the snippet), 7 skipped. Coverage rose by 0.4 \
                points. The release candidate is not promoted — fix the migrations first; \
                the flaky résumé-upload test passed twice in a row.",
            "counters": {
                "tests_passed": 412, "tests_failed": 3, "tests_skipped": 7, "warnings": 18,
                "build_seconds": 384, "cache_hits": 1290, "cache_misses": 57, "retries": 1
            },
            "coverage": 87.25,
            "artifacts": [
                {"type": "link", "url": "https://ci.example.test/runs/nightly-2026-11-26.3",
                 "title": "Run page"},
                {"type": "snippet", "path": "store/tests/migrate.rs", "line": 214,
                 "text": "assert_eq!(version, 7, \"forward-only migration\");"},
                {"type": "blob", "media_type": "text/plain", "data": "ZmFpbGVkOiAzCnBhc3NlZDogNDEyCg==",
                 "sha256": "9c56cc51b374c3ba189210d5b6d4bf57790d351c96c47c02190ecf1e430635ab"},
                {"type": "link", "url": "https://ci.example.test/runs/nightly-2026-11-26.3/log"}
            ]
        }
    })
}

/// One broken variant per keyword of the target (and one per artifact shape), each of which
/// both `parse_ref` and `jsonschema` must refuse.
fn broken() -> Vec<(&'static str, Value)> {
    let mut out = Vec::new();
    let mut edit = |what: &'static str, f: &dyn Fn(&mut Value)| {
        let mut v = report();
        f(&mut v["body"]);
        out.push((what, v));
    };
    edit("maxLength: a summary of 2,001 characters", &|b| {
        b["summary"] = json!("é".repeat(2001))
    });
    edit("multipleOf: a coverage of 87.255", &|b| {
        b["coverage"] = serde_json::from_str("87.255").expect("number")
    });
    edit("patternProperties: a counter named in capitals", &|b| {
        b["counters"]["Tests"] = json!(1)
    });
    edit("patternProperties: a negative counter", &|b| {
        b["counters"]["retries"] = json!(-1)
    });
    edit("contains: no link among the artifacts", &|b| {
        let kept: Vec<Value> = b["artifacts"]
            .as_array()
            .expect("artifacts")
            .iter()
            .filter(|a| a["type"] != "link")
            .cloned()
            .collect();
        b["artifacts"] = json!(kept)
    });
    edit("oneOf: a link without its url", &|b| {
        b["artifacts"][0] = json!({"type": "link", "title": "Run page"})
    });
    edit("oneOf: a snippet at line 0", &|b| {
        b["artifacts"][1]["line"] = json!(0)
    });
    edit("oneOf: a blob with a member of no shape", &|b| {
        b["artifacts"][2]["size"] = json!(30)
    });
    edit("oneOf: an artifact of no known type", &|b| {
        b["artifacts"][3]["type"] = json!("image")
    });
    out
}

/// Asserts, outside any timing, that `parse_ref`, the exact path and `jsonschema` agree the
/// envelope is valid, and that every broken variant is refused by `parse_ref` and `jsonschema`.
fn assert_verdicts(validator: &jsonschema::Validator, options: &Options, bytes: &[u8]) {
    let accepted = profile::parse_ref::<Ci>(bytes, options);
    assert!(
        accepted.is_ok(),
        "parse_ref refused the report: {accepted:?}"
    );
    assert!(profile::explain::<Ci>(bytes, options).is_empty());
    let v: Value = serde_json::from_slice(bytes).expect("json");
    assert!(validator.is_valid(&v), "jsonschema refused the report");
    for (what, v) in broken() {
        let bytes = serde_json::to_vec(&v).expect("json");
        assert!(
            profile::parse_ref::<Ci>(&bytes, options).is_err(),
            "parse_ref accepted {what}"
        );
        assert!(!validator.is_valid(&v), "jsonschema accepted {what}");
    }
}

/// Baseline (b): the `Value`, and whether `jsonschema` finds it valid.
fn baseline_b(validator: &jsonschema::Validator, bytes: &[u8]) -> bool {
    let v: Value = serde_json::from_slice(bytes).expect("json");
    validator.is_valid(&v)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The ratios, interleaved (see `parse.rs`' `interleaved_ratios`, the same method): each round
/// times a batch of each function back to back in a rotating order, the ratios are taken within
/// the round and the median round's are reported.
fn interleaved(_c: &mut Criterion) {
    const ROUNDS: usize = 501;
    // A filter naming one of criterion's functions (`keywords/agh_parse_ref`, as a profiler
    // run uses) selects that function alone.
    if std::env::args().any(|a| a.starts_with("keywords/")) {
        return;
    }
    let validator = schema_validator();
    let options = SPEC.options(NOW);
    let bytes = serde_json::to_vec(&report()).expect("json");
    assert_verdicts(&validator, &options, &bytes);
    let bytes = bytes.as_slice();
    // Context, not a target: the strict JSON scanner alone on the same bytes (UTF-8 check, then
    // every value read and skipped with no schema), the floor of any one-pass validation by it.
    let floor = || {
        let text = std::str::from_utf8(bytes).ok()?;
        let mut s = Scanner::new(text, 64);
        s.skip()?;
        s.end()
    };
    assert!(floor().is_some());
    let fns: [Box<dyn Fn()>; 4] = [
        Box::new(|| drop(black_box(serde_json::from_slice::<Value>(black_box(bytes))))),
        Box::new(|| {
            black_box(baseline_b(&validator, black_box(bytes)));
        }),
        Box::new(|| {
            drop(black_box(profile::parse_ref::<Ci>(
                black_box(bytes),
                &options,
            )))
        }),
        Box::new(|| {
            black_box(floor());
        }),
    ];
    for _ in 0..200 {
        fns[1]();
    }
    let start = Instant::now();
    for _ in 0..100 {
        fns[1]();
    }
    let warm_ns = start.elapsed().as_nanos().max(1) / 100;
    let batch = (200_000 / warm_ns).clamp(16, 4000) as usize;
    let mut per_call = vec![Vec::with_capacity(ROUNDS); fns.len()];
    let (mut over_a, mut b_over, mut over_floor) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..ROUNDS {
        let mut ns = [0f64; 4];
        for k in 0..fns.len() {
            let f = (round + k) % fns.len();
            let t = Instant::now();
            for _ in 0..batch {
                fns[f]();
            }
            ns[f] = t.elapsed().as_nanos() as f64 / batch as f64;
        }
        for (f, n) in ns.iter().enumerate() {
            per_call[f].push(*n);
        }
        over_a.push(ns[2] / ns[0]);
        b_over.push(ns[1] / ns[2]);
        over_floor.push(ns[2] / ns[3]);
    }
    let m: Vec<f64> = per_call.into_iter().map(median).collect();
    let (over_a, b_over, over_floor) = (median(over_a), median(b_over), median(over_floor));
    let met = |ok: bool| if ok { "met" } else { "NOT met" };
    println!(
        "keywords report ({} bytes; {ROUNDS} rounds of {batch} calls):\n\
         | (a) Value ns | (b) Value+jsonschema ns | parse_ref ns | parse_ref / (a) | (b) / parse_ref | scan alone ns | parse_ref / scan alone |\n\
         | {:.0} | {:.0} | {:.0} | {over_a:.2}x ({}: <= 0.5x) | {b_over:.2}x ({}: >= 4x) | {:.0} | {over_floor:.2}x |",
        bytes.len(),
        m[0],
        m[1],
        m[2],
        met(over_a <= 0.5),
        met(b_over >= 4.0),
        m[3],
    );
    let out = json!({
        "bytes": bytes.len(), "rounds": ROUNDS, "batch": batch,
        "a_ns": m[0], "b_ns": m[1], "parse_ref_ns": m[2],
        "parse_ref_over_a": over_a, "b_over_parse_ref": b_over,
        "scan_alone_ns": m[3], "parse_ref_over_scan_alone": over_floor,
    });
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/criterion");
    std::fs::create_dir_all(&dir).expect("criterion dir");
    std::fs::write(
        dir.join("keywords.json"),
        serde_json::to_vec_pretty(&out).expect("json"),
    )
    .expect("write keywords.json");
}

fn bench_keywords(c: &mut Criterion) {
    let validator = schema_validator();
    let options = SPEC.options(NOW);
    let bytes = serde_json::to_vec(&report()).expect("json");
    assert_verdicts(&validator, &options, &bytes);
    let mut group = c.benchmark_group("keywords");
    group.throughput(Throughput::Bytes(bytes.len() as u64));
    group.bench_function("a_serde_value", |b| {
        b.iter(|| serde_json::from_slice::<Value>(black_box(&bytes)).expect("json"))
    });
    group.bench_function("b_value_jsonschema", |b| {
        b.iter(|| baseline_b(&validator, black_box(&bytes)))
    });
    group.bench_function("agh_parse_ref", |b| {
        b.iter(|| profile::parse_ref::<Ci>(black_box(&bytes), &options).expect("valid"))
    });
    group.finish();
}

criterion_group!(benches, interleaved, bench_keywords);
criterion_main!(benches);
