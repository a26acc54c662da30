//! The benchmark corpus shared by the parse benches: envelopes of every kind from the conformance
//! fixtures, `say` bodies from 200 B to about 1 MiB, a trace with a 40-case result.

use std::path::Path;

use serde_json::{json, Value};

pub fn fixture(rel: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../conformance/fixtures")
        .join(rel);
    let v: Value = serde_json::from_slice(&std::fs::read(path).expect("fixture")).expect("json");
    v["envelope"].clone()
}

/// Realistic envelopes of every kind, bodies from about 200 bytes to 10 KiB.
pub fn corpus() -> Vec<(String, Vec<u8>)> {
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
    for size in [200usize, 1024, 10 * 1024, 100 * 1024, 1_040_000] {
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
