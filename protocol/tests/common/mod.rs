//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use serde_json::{json, Value};

/// `../shared/seeds/` beside the repository, when this checkout has it (the provenance tests
/// run only then; every other test reads the repository alone).
pub fn seeds_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/seeds");
    dir.is_dir().then_some(dir)
}

/// The repository's copies of the seed pages' envelope examples (`examples/envelopes/`), with
/// their file names, in name order.
pub fn example_envelopes() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/envelopes");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".json"))
        .collect();
    names.sort();
    names
        .into_iter()
        .map(|n| {
            let v = serde_json::from_slice(&std::fs::read(dir.join(&n)).unwrap()).unwrap();
            (n, v)
        })
        .collect()
}

/// This crate's `tests/fixtures/`.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The JSON objects embedded in `text`: every balanced `{...}` that starts a line, parsed.
pub fn json_objects(text: &str) -> Vec<Value> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let line_start = i == 0 || bytes[i - 1] == b'\n';
        if !(line_start && bytes[i] == b'{') {
            i += 1;
            continue;
        }
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        let mut end = None;
        for (j, &b) in bytes.iter().enumerate().skip(i) {
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(j + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { break };
        if let Ok(v) = serde_json::from_str::<Value>(&text[i..end]) {
            out.push(v);
        }
        i = end;
    }
    out
}

/// Every envelope example of the seed pages in `dir` (objects with a `protocol` member), with
/// its file name.
pub fn seed_envelope_examples(dir: &std::path::Path) -> Vec<(String, Value)> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let text = std::fs::read_to_string(dir.join(&name)).unwrap();
        for v in json_objects(&text) {
            if v.get("protocol").is_some() {
                out.push((name.clone(), v));
            }
        }
    }
    out
}

/// Every value at every depth of `v` (itself included).
pub fn all_values(v: &Value, out: &mut Vec<Value>) {
    out.push(v.clone());
    match v {
        Value::Object(m) => m.values().for_each(|x| all_values(x, out)),
        Value::Array(a) => a.iter().for_each(|x| all_values(x, out)),
        _ => {}
    }
}

/// Small edits of a value that the schemas' rules care about: members removed or given another
/// type, array items repeated (as they are, and padded with white space), strings blank or
/// padded.
pub fn edits(v: &Value) -> Vec<Value> {
    let others = [
        Value::Null,
        json!(0),
        json!(-1),
        json!(1.5),
        json!(""),
        json!(" "),
        json!("x"),
        json!([]),
        json!({}),
        json!(true),
    ];
    let mut out = Vec::new();
    match v {
        Value::Object(m) => {
            for (k, _) in m {
                let mut without = m.clone();
                without.remove(k);
                out.push(Value::Object(without));
                for o in &others {
                    let mut changed = m.clone();
                    changed.insert(k.clone(), o.clone());
                    out.push(Value::Object(changed));
                }
            }
        }
        Value::Array(a) => {
            out.push(json!([]));
            for (i, item) in a.iter().enumerate() {
                let mut again = a.clone();
                again.insert(i + 1, item.clone());
                out.push(Value::Array(again));
                if let Some(s) = item.as_str() {
                    let mut padded = a.clone();
                    padded.push(json!(format!(" {s}\u{a0}")));
                    out.push(Value::Array(padded));
                }
            }
        }
        Value::String(s) => {
            out.push(json!(format!(" {s} ")));
            out.push(json!(s.to_uppercase()));
        }
        _ => {}
    }
    out
}

/// `values` and their [`edits`], each with its JSON text, sorted by that text and without repeats.
pub fn cases_from(values: &[Value]) -> Vec<(String, Value)> {
    let mut cases: Vec<(String, Value)> = values
        .iter()
        .flat_map(|v| std::iter::once(v.clone()).chain(edits(v)))
        .map(|v| (serde_json::to_string(&v).unwrap(), v))
        .collect();
    cases.sort_by(|a, b| a.0.cmp(&b.0));
    cases.dedup_by(|a, b| a.0 == b.0);
    cases
}

/// A generated set's table of named scanners (`scan::NAMED_SCANNERS`).
pub type NamedScanners = [(
    &'static str,
    fn(&mut agh_runtime::scan::Scanner<'_>) -> Option<()>,
)];

/// A generated set's table of named validators (`checks::NAMED_CHECKS`).
pub type NamedChecks = [(
    &'static str,
    fn(&Value, &mut String, &mut agh_runtime::problem::Problems),
)];

/// The named type's scanner in `table` on `text`: accepted (and nothing after the value)?
pub fn named_scans(table: &NamedScanners, name: &str, text: &str) -> bool {
    let scan = table
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no scanner for {name}"))
        .1;
    let depth = agh_runtime::json::JsonLimits::DEFAULT_MAX_DEPTH;
    let mut s = agh_runtime::scan::Scanner::new(text, depth);
    scan(&mut s).is_some() && s.end().is_some()
}

/// The named type's validator in `table` on `value`: its first problem, if any, as (reason
/// code, pointer).
pub fn named_first_problem(
    table: &NamedChecks,
    name: &str,
    value: &Value,
) -> Option<(agh_runtime::ReasonCode, String)> {
    let check = table
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no validator for {name}"))
        .1;
    let mut problems = agh_runtime::problem::Problems::first_only();
    check(value, &mut String::new(), &mut problems);
    problems
        .as_slice()
        .first()
        .map(|p| (p.code, p.pointer.clone()))
}

/// Every named scanner declines exactly the cases its validator finds a problem in, and each
/// accepts some case and declines another.
pub fn assert_named_scanners_agree(
    scanners: &NamedScanners,
    checks: &NamedChecks,
    cases: &[(String, Value)],
) {
    for (name, _) in scanners {
        let mut accepted = 0usize;
        for (text, value) in cases {
            let fast = named_scans(scanners, name, text);
            let problem = named_first_problem(checks, name, value);
            assert_eq!(
                fast,
                problem.is_none(),
                "{name}: the scanner {} {text} but the validator found {problem:?}",
                if fast { "accepts" } else { "declines" },
            );
            accepted += usize::from(fast);
        }
        assert!(accepted > 0, "{name} accepted nothing");
        assert!(accepted < cases.len(), "{name} declined nothing");
    }
}
