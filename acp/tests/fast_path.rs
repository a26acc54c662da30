//! ACP's fast path (the generated one-pass scanners) and its exact path (strict reader and
//! generated validators) give the same verdict on every input, as v0's do
//! (`protocol/tests/fast_path.rs`): every `acp.core` fixture and step, the draft examples, and
//! every single-member mutation of them, byte-level mutations (proptest), and each named type's
//! scanner against its validator. On accepted inputs the owned message from `parse`, the
//! one from `parse_ref(..).to_message()` and the input agree member by member.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
// The value helpers of the protocol crate's tests (`all_values`, `cases_from`), shared as they are.
#[path = "../../protocol/tests/common/mod.rs"]
mod shared;

use std::path::{Path, PathBuf};

use agh_acp::Acp;
use agh_runtime::profile::{explain, fast_accepts};
use agh_runtime::Options;
use serde_json::{json, Value};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `(name, envelope text, clock in Unix seconds)` for every stored ACP input.
fn corpus() -> Vec<(String, Vec<u8>, i64)> {
    let dir = root().join("conformance/fixtures/acp.core");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let name = f.file_name().unwrap().to_string_lossy().into_owned();
        let d: Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
        let mut cases = vec![d.clone()];
        cases.extend(d["steps"].as_array().cloned().unwrap_or_default());
        for (i, case) in cases.iter().enumerate() {
            // Steps run at their envelope's `ts` (ms); single fixtures at their `now` (s).
            let now = d["now"]
                .as_i64()
                .or_else(|| case["envelope"]["ts"].as_i64().map(|ms| ms / 1000))
                .unwrap_or(common::NOW);
            let bytes = match (&case["raw"], &case["envelope"]) {
                (Value::String(raw), _) => raw.clone().into_bytes(),
                (_, Value::Null) => continue,
                (_, envelope) => serde_json::to_vec(envelope).unwrap(),
            };
            out.push((format!("{name}#{i}"), bytes, now));
        }
    }
    for (kind, reference, payload) in common::draft_examples() {
        let e = common::envelope(kind, reference.as_deref(), payload);
        out.push((
            format!("draft example {kind}"),
            serde_json::to_vec(&e).unwrap(),
            common::NOW,
        ));
    }
    out
}

#[track_caller]
fn agree(name: &str, bytes: &[u8], now: i64) -> bool {
    let at = agh_acp::options(now);
    let mut free = Options::without_freshness();
    free.max_bytes = at.max_bytes;
    for options in [at, free] {
        let fast = fast_accepts::<Acp>(bytes, &options);
        let problems = explain::<Acp>(bytes, &options);
        assert_eq!(
            fast,
            problems.is_empty(),
            "{name}: fast path {} but the exact path found {:?}\n{}",
            if fast { "accepts" } else { "declines" },
            problems.first(),
            String::from_utf8_lossy(bytes)
        );
    }
    fast_accepts::<Acp>(bytes, &at)
}

/// The owned paths agree with each other and with the input.
#[track_caller]
/// A value as JSON equality sees it: the message keeps numbers as written (`1e3`), while
/// serde_json's decoding of the input may respell them (`1e+3`).
fn key(v: &Value) -> String {
    agh_runtime::check::equality_key(v)
}

/// The typed (owned) envelope and payload of `m` as JSON, the payload in the payload member.
fn typed_value(m: &agh_acp::Message) -> Value {
    let mut v = serde_json::to_value(m.to_envelope().unwrap()).unwrap();
    let Value::Object(members) = &mut v else {
        panic!("not an object")
    };
    members.remove("payload");
    if let Some(body) = m.to_owned_body().unwrap() {
        members.insert("payload".into(), body.to_value().unwrap());
    }
    v
}

fn same_message(name: &str, bytes: &[u8], now: i64) {
    let options = agh_acp::options(now);
    let owned = agh_acp::parse(bytes, &options).unwrap_or_else(|r| panic!("{name}: {r}"));
    let view = agh_acp::parse_ref(bytes, &options).unwrap();
    let converted = view.to_message();
    // The message holds the bytes it was parsed from, and its view is the parser's.
    assert_eq!(owned.bytes().as_ref(), bytes, "{name}");
    assert_eq!(&owned.envelope(), view.envelope(), "{name}");
    assert_eq!(owned.body_json(), view.body_json(), "{name}");
    // The borrowed payload view (generated `BodyRef`) reads the same values as the typed
    // payload, from the borrowed parse and from the owned message.
    assert_eq!(owned.body(), view.body(), "{name}");
    if let Some(body_view) = owned.body() {
        assert!(body_view.kind().is_some(), "{name}");
        assert_eq!(Some(body_view.raw()), owned.body_json(), "{name}");
        let typed = owned.to_owned_body().unwrap().expect("a payload");
        assert_eq!(
            serde_json::to_value(&body_view).unwrap(),
            typed.to_value().unwrap(),
            "{name}: payload view"
        );
    }
    let input: Value = serde_json::from_slice(bytes).unwrap();
    let a = typed_value(&owned);
    let b = typed_value(&converted);
    assert_eq!(a, b, "{name}: parse and parse_ref(..).to_message() differ");
    assert_eq!(owned.kind(), view.kind(), "{name}");
    // Member by member against the input; `null` written for an absent `to` / `ref` (the
    // schema's write-as-null members). The typed payload writes what the schemas say it means:
    // an absent member with a schema `default` comes out as that default, and an optional
    // member sent as `null` ("null or absent"), `{}` or `[]` comes out absent; nothing else
    // differs, unknown members included.
    let (Value::Object(got), Value::Object(want)) = (&a, &input) else {
        panic!("{name}: not objects");
    };
    for (k, v) in want {
        if k == "payload" {
            continue;
        }
        assert_eq!(got.get(k).map(key), Some(key(v)), "{name}: member `{k}`");
    }
    for (k, v) in got {
        if !want.contains_key(k) {
            assert!(v.is_null(), "{name}: member `{k}` appeared as {v}");
        }
    }
    let defaults = payload_defaults(owned.kind());
    match (want.get("payload"), got.get("payload")) {
        (Some(Value::Object(w)), Some(Value::Object(g))) => {
            for (k, v) in w {
                match g.get(k) {
                    Some(gv) => assert_eq!(key(gv), key(v), "{name}: payload member `{k}`"),
                    // Null, `{}` and `[]` of an optional member mean absent to the typed payload.
                    None => assert!(
                        v.is_null()
                            || v.as_object().is_some_and(|m| m.is_empty())
                            || v.as_array().is_some_and(|a| a.is_empty()),
                        "{name}: payload member `{k}` lost"
                    ),
                }
            }
            for (k, v) in g {
                if !w.contains_key(k) {
                    assert_eq!(
                        defaults.get(k),
                        Some(v),
                        "{name}: payload member `{k}` appeared as {v}, not its default"
                    );
                }
            }
        }
        (w, g) => {
            // Only a kind whose payload may be absent gets here: absent or null in, absent out.
            let rules = agh_acp::SPEC.kind(owned.kind()).unwrap().rules;
            assert_ne!(rules.body, agh_runtime::Presence::Required, "{name}");
            assert!(
                matches!(w, None | Some(Value::Null)) && g.is_none(),
                "{name}: payload {w:?} became {g:?}"
            );
        }
    }
}

/// The `default` of every payload member of `kind` (`schemas/acp-v0.2/body/KIND.schema.json`).
fn payload_defaults(kind: &str) -> serde_json::Map<String, Value> {
    let path = root().join(format!("schemas/acp-v0.2/body/{kind}.schema.json"));
    let schema: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    schema["properties"]
        .as_object()
        .map(|props| {
            props
                .iter()
                .filter_map(|(k, p)| p.get("default").map(|d| (k.clone(), d.clone())))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn both_paths_agree_on_every_stored_input() {
    let corpus = corpus();
    assert!(corpus.len() > 80, "{}", corpus.len());
    let mut accepted = 0;
    for (name, bytes, now) in &corpus {
        if agree(name, bytes, *now) {
            accepted += 1;
            same_message(name, bytes, *now);
        }
    }
    assert!(
        accepted > 30 && corpus.len() - accepted > 20,
        "{accepted} of {}",
        corpus.len()
    );
}

/// Values written over one member at a time: every JSON type, edge numbers, grammar edges.
fn replacements() -> Vec<Value> {
    vec![
        Value::Null,
        json!(true),
        json!(0),
        json!(-1),
        json!(1),
        json!(2),
        json!(1.5),
        serde_json::from_str("1e400").unwrap(),
        json!(18_446_744_073_709_551_615u64),
        json!(""),
        json!(" "),
        json!("\u{85}"),
        json!("a\nb"),
        json!("X"),
        json!("family.calendar"),
        json!("0123456789abcdef"),
        json!("0f8fad5b-d9cb-469f-a165-70867728950e"),
        json!("idle"),
        json!("failed"),
        json!([]),
        json!(["a", "a"]),
        json!({}),
        json!({"x": 1}),
    ]
}

/// Every pointer of `v` to a member or element.
fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, c) in m {
                let p = format!("{at}/{k}");
                out.push(p.clone());
                pointers(c, p, out);
            }
        }
        Value::Array(a) => {
            for (i, c) in a.iter().enumerate() {
                let p = format!("{at}/{i}");
                out.push(p.clone());
                pointers(c, p, out);
            }
        }
        _ => {}
    }
}

#[test]
fn both_paths_agree_on_every_single_member_mutation() {
    let mut checked = 0;
    let mut accepted = 0;
    for (kind, reference, payload) in common::draft_examples() {
        let base = common::envelope(kind, reference.as_deref(), payload);
        let mut ps = Vec::new();
        pointers(&base, String::new(), &mut ps);
        for p in &ps {
            for r in replacements() {
                let mut e = base.clone();
                *e.pointer_mut(p).unwrap() = r.clone();
                let bytes = serde_json::to_vec(&e).unwrap();
                let name = format!("{kind} with {p} = {r}");
                if agree(&name, &bytes, common::NOW) {
                    accepted += 1;
                    same_message(&name, &bytes, common::NOW);
                }
                checked += 1;
            }
            // And the member removed.
            let mut e = base.clone();
            let (parent, last) = p.rsplit_once('/').unwrap();
            let removed = match e.pointer_mut(parent) {
                Some(Value::Object(m)) => m.remove(last).is_some(),
                _ => false,
            };
            if removed {
                let bytes = serde_json::to_vec(&e).unwrap();
                let name = format!("{kind} without {p}");
                if agree(&name, &bytes, common::NOW) {
                    accepted += 1;
                    same_message(&name, &bytes, common::NOW);
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 2000 && accepted > 100, "{accepted} of {checked}");
}

/// Valid stored inputs (fixtures and draft examples), as the byte-mutation seeds.
fn seeds() -> Vec<(Vec<u8>, i64)> {
    corpus()
        .into_iter()
        .filter(|(_, b, now)| fast_accepts::<Acp>(b, &agh_acp::options(*now)))
        .map(|(_, b, now)| (b, now))
        .collect()
}

/// Bytes that make interesting edits: structure, escapes, digits, white space, non-ASCII.
const ALPHABET: &[u8] = b"{}[],:\"\\ \t\n0123456789-+.eEtrufalsn_/xu\x00\x1f\x7f\xc3\xa9\xff";

/// One byte-level edit: replace, insert or delete a byte, or copy a run of the envelope
/// elsewhere (duplicated members, nested values).
#[derive(Clone, Debug)]
enum Edit {
    Replace(usize, u8),
    Insert(usize, u8),
    Delete(usize),
    Splice(usize, usize, usize),
}

fn apply(bytes: &mut Vec<u8>, edit: &Edit) {
    if bytes.is_empty() {
        return;
    }
    let len = bytes.len();
    let byte = |b: u8| ALPHABET[usize::from(b) % ALPHABET.len()];
    match *edit {
        Edit::Replace(i, b) => bytes[i % len] = byte(b),
        Edit::Insert(i, b) => bytes.insert(i % len, byte(b)),
        Edit::Delete(i) => {
            bytes.remove(i % len);
        }
        Edit::Splice(from, n, to) => {
            let from = from % len;
            let run = bytes[from..(from + n % 40).min(len)].to_vec();
            bytes.splice(to % len..to % len, run);
        }
    }
}

fn edit() -> impl proptest::strategy::Strategy<Value = Edit> {
    use proptest::prelude::*;
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Replace(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Insert(i, b)),
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(a, b, c)| Edit::Splice(a, b, c)),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::test_runner::Config { cases: 2000, ..Default::default() })]

    /// As v0's: the two paths agree on valid envelopes with a few bytes edited.
    #[test]
    fn both_paths_agree_on_byte_mutated_envelopes(
        seed in proptest::prelude::any::<proptest::sample::Index>(),
        edits in proptest::collection::vec(edit(), 1..4),
    ) {
        thread_local!(static SEEDS: Vec<(Vec<u8>, i64)> = seeds());
        let (mut bytes, now) = SEEDS.with(|s| s[seed.index(s.len())].clone());
        for e in &edits {
            apply(&mut bytes, e);
        }
        if agree("byte mutation", &bytes, now) {
            same_message("byte mutation", &bytes, now);
        }
    }
}

/// Every generated named-type scanner of the ACP set declines exactly the values its validator
/// finds a problem in: on every value found in the stored inputs and on edits of them (the
/// helpers of the protocol tests). Types no envelope member reaches alone are covered here too.
#[test]
fn every_named_scanner_agrees_with_its_validator() {
    use agh_acp::checks::NAMED_CHECKS;
    use agh_acp::scan::NAMED_SCANNERS;
    use agh_runtime::problem::Problems;
    use agh_runtime::scan::Scanner;

    let mut values = Vec::new();
    for (_, bytes, _) in corpus() {
        if let Ok(v) = serde_json::from_slice::<Value>(&bytes) {
            shared::all_values(&v, &mut values);
        }
    }
    values.extend(replacements());
    values.sort_by_cached_key(Value::to_string);
    values.dedup();
    let cases = shared::cases_from(&values);
    assert!(cases.len() > 2_000, "{}", cases.len());

    let depth = agh_runtime::json::JsonLimits::DEFAULT_MAX_DEPTH;
    let mut accepted = vec![0usize; NAMED_SCANNERS.len()];
    for (t, (name, scan)) in NAMED_SCANNERS.iter().enumerate() {
        let check = NAMED_CHECKS
            .iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("no validator for {name}"))
            .1;
        for (text, value) in &cases {
            let mut problems = Problems::first_only();
            check(value, &mut String::new(), &mut problems);
            let mut s = Scanner::new(text, depth);
            let fast = scan(&mut s).is_some() && s.end().is_some();
            assert_eq!(
                fast,
                problems.is_empty(),
                "{name}: the scanner {} {text} but the validator found {:?}",
                if fast { "accepts" } else { "declines" },
                problems.as_slice().first()
            );
            accepted[t] += usize::from(fast);
        }
    }
    // Every type accepts some of the values: the agreement is not all-decline.
    for ((name, _), n) in NAMED_SCANNERS.iter().zip(&accepted) {
        assert!(*n > 0, "{name} accepted nothing");
    }
}
