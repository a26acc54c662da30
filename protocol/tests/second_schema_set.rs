//! Code generated for a second schema set compiles against this crate and runs. `cargo xtask
//! codegen` writes the code of `codegen/tests/fixtures/two-kinds` (invented kinds `ping` and
//! `note`, and shapes the normative set does not have: nested arrays with `minItems`, integer
//! items with `minimum`, unique objects, trimmed uniqueness) into `tests/two_kinds/`; this test
//! mounts it as a module, so a generated file that does not compile outside
//! `protocol/src/generated` fails the build. Then its scanners must decline exactly what its
//! validators reject, and both must decide the new shapes as JSON Schema does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agh_protocol::problem::Problems;
use agh_protocol::scan::{Kept, Scanner};
use agh_protocol::ReasonCode;
use serde_json::{json, Value};

mod common;
// Generated: not every table of the set is read here.
#[rustfmt::skip]
#[allow(dead_code)]
mod two_kinds;

use common::{
    all_values, assert_named_scanners_agree, cases_from, edits, named_first_problem, named_scans,
};
use two_kinds::checks::{check_mini_envelope, KnownBody, NAMED_CHECKS};
use two_kinds::scan::NAMED_SCANNERS;

const DEPTH: usize = agh_protocol::json::JsonLimits::DEFAULT_MAX_DEPTH;

/// A valid `ping` body with every member the test set declares.
fn full_ping() -> Value {
    json!({
        "nonce": "n-1",
        "grid": [[0, 1], [2, 3, 4]],
        "tags": ["alpha", "beta"],
        "weights": [0, 1.5, 2e3],
        "spots": [{"x": 0, "y": 1}, {"x": 1, "y": 0}],
        "urgent": true,
        "extra": {"kept": [1, 2]}
    })
}

/// Values of the test set's shapes, valid and not: the edits of [`common::edits`] add the rest.
fn seeds() -> Vec<Value> {
    vec![
        full_ping(),
        json!({}),
        json!({"grid": null, "nonce": null}),
        json!({"text": "hello", "mode": "plain"}),
        json!({"text": "re: ping", "mode": "answer", "author": "bob"}),
        json!({"x": 3, "y": 4}),
        json!({"x": 3, "y": 4, "z": 5}),
        json!({"grid": [[0, 1]], "tags": ["ab", " ab"]}),
        json!({"spots": [{"x": 1, "y": 2}, {"y": 2, "x": 1}]}),
        json!({"grid": [[[0, 1]]]}),
        json!({"weights": [-0.5]}),
        json!({"protocol": "mini/v1", "from": "alice", "to": null}),
        json!({"route": ["a", "bcde", "\u{1F600}\u{1F600}\u{1F600}\u{1F600}"], "meta": {"lang": "\u{1F600}x", "region": "eu", "x": 1}}),
        json!({"route": ["a", "b", "c", "d"], "meta": {}}),
        json!({"route": ["abcde"], "meta": {"region": "eu", "a": 1, "b": 2}}),
        json!({"text": "a note of exactly forty characters, ok..", "mode": "plain"}),
        json!({"counts": {"abc": 1, "Abc": -1, "x1": "any", "z": 0}}),
        json!({"counts": {"abc": -1, "\u{e9}t\u{e9}": 2.5}}),
        json!({"meta": {"lang": "en", "abcdefg": 1, "Up": 2}}),
        json!({"stops": [1, 10, "x", [10], {"a": 11}, 12.5]}),
        json!({"stops": [10, 11, 12]}),
        json!({"nick": "root"}),
        json!({"nick": "rooty"}),
        exact(
            r#"{"price": 19.99, "ratio": 0.09999999999999999999, "total": 18446744073709551615, "step": -10}"#,
        ),
        exact(r#"{"price": 19.999, "ratio": 0.1, "total": 18446744073709551616, "step": 100}"#),
        exact(r#"{"price": 1E-2, "ratio": -1e400, "total": 1.8446744073709551615e19, "step": 7}"#),
        exact(r#"{"price": 1e6, "ratio": 1e-1, "total": 1.8446744073709551616e19, "step": -15}"#),
        exact(r#"{"price": 0, "ratio": 0.100, "total": -0, "step": null}"#),
    ]
}

/// A value parsed from `text` with its numbers kept as written (`json!` would go through `f64`).
fn exact(text: &str) -> Value {
    serde_json::from_str(text).unwrap()
}

/// The named type's scanner on `text`: accepted (and nothing after the value)?
fn scans(name: &str, text: &str) -> bool {
    named_scans(NAMED_SCANNERS, name, text)
}

/// The named type's validator on `value`: its first problem, if any, as (reason code, pointer).
fn first_problem(name: &str, value: &Value) -> Option<(ReasonCode, String)> {
    named_first_problem(NAMED_CHECKS, name, value)
}

#[test]
fn the_test_set_has_its_own_kinds_and_types() {
    let kinds: Vec<_> = two_kinds::KINDS.iter().map(|k| k.rules.kind).collect();
    assert_eq!(kinds, ["ping", "note"]);
    let names: Vec<_> = NAMED_SCANNERS.iter().map(|(n, _)| *n).collect();
    for expected in ["PingBody", "NoteBody", "MiniPoint", "MiniPeer"] {
        assert!(names.contains(&expected), "{names:?}");
    }
    // Every scanner has its validator; the envelope's is `scan_envelope` (it takes the body's).
    let checks: Vec<_> = NAMED_CHECKS.iter().map(|(n, _)| *n).collect();
    let unscanned: Vec<_> = checks.iter().filter(|n| !names.contains(n)).collect();
    assert_eq!(unscanned, [&"MiniEnvelope"]);
    assert!(names.iter().all(|n| checks.contains(n)), "{names:?}");
}

#[test]
fn every_named_scanner_of_the_test_set_agrees_with_its_validator() {
    let mut values = Vec::new();
    for seed in seeds() {
        all_values(&seed, &mut values);
    }
    let cases = cases_from(&values);
    assert!(cases.len() > 400, "{}", cases.len());
    assert_named_scanners_agree(NAMED_SCANNERS, NAMED_CHECKS, &cases);
}

#[test]
fn nested_arrays_check_both_counts_and_the_items_minimum() {
    let with = |grid: Value| json!({ "grid": grid });
    for (grid, problem) in [
        (json!([[0, 1]]), None),
        (json!([[0, 1], [5, 6, 7]]), None),
        (json!(null), None),
        (json!([]), Some("/grid")),
        (json!([[7]]), Some("/grid/0")),
        (json!([[0, 1], []]), Some("/grid/1")),
        (json!([[0, -1]]), Some("/grid/0/1")),
        (json!([[0, 1.5]]), Some("/grid/0/1")),
        (json!([[0, 1], 2]), Some("/grid/1")),
    ] {
        let body = with(grid);
        let text = body.to_string();
        assert_eq!(
            first_problem("PingBody", &body),
            problem.map(|p| (ReasonCode::Malformed, p.to_owned())),
            "{text}"
        );
        assert_eq!(scans("PingBody", &text), problem.is_none(), "{text}");
    }
    // The inner count is per row: a long first row does not carry a short second one.
    assert!(!scans("PingBody", r#"{"grid":[[1,2,3,4,5],[1]]}"#));
}

#[test]
fn max_counts_read_code_points_items_and_members() {
    let smiles = |n: usize| "\u{1F600}".repeat(n);
    for (body, problem) in [
        // `maxLength` counts code points: four emoji are 16 bytes and 8 UTF-16 units.
        (json!({"route": ["abcd", smiles(4)]}), None),
        (json!({"route": ["abcde"]}), Some("/route/0")),
        (json!({"route": ["a", smiles(5)]}), Some("/route/1")),
        (json!({"route": ["a", "b", "c"]}), None),
        (json!({"route": ["a", "b", "c", "d"]}), Some("/route")),
        (json!({"route": []}), None),
        (json!({"meta": {"lang": smiles(2)}}), None),
        (json!({"meta": {"lang": "abc"}}), Some("/meta/lang")),
        // `minProperties` / `maxProperties` count undeclared members too.
        (json!({"meta": {}}), Some("/meta")),
        (json!({"meta": {"x": 1}}), None),
        (json!({"meta": {"lang": "en", "x": 1, "y": 2}}), None),
        (
            json!({"meta": {"lang": "en", "x": 1, "y": 2, "z": 3}}),
            Some("/meta"),
        ),
        // `dependentRequired`: `region` needs `lang`, not the other way round.
        (json!({"meta": {"lang": "en"}}), None),
        (json!({"meta": {"lang": "en", "region": "gb"}}), None),
        (json!({"meta": {"region": "gb"}}), Some("/meta/lang")),
        // `propertyNames`: every name, declared or not, at most six characters from `a`-`z` on.
        (json!({"meta": {"lang": "en", "abcdef": 1}}), None),
        (json!({"meta": {"lang": "en", "abcdefg": 1}}), Some("/meta")),
        (json!({"meta": {"Lang": "en"}}), Some("/meta")),
        (
            json!({"meta": {"x\u{1F600}\u{1F600}\u{1F600}\u{1F600}\u{1F600}": 1}}),
            None,
        ),
    ] {
        let text = body.to_string();
        let found = first_problem("PingBody", &body);
        assert_eq!(found.as_ref().map(|(_, p)| p.as_str()), problem, "{text}");
        assert_eq!(scans("PingBody", &text), problem.is_none(), "{text}");
    }
    let long = "n".repeat(41);
    for (text, ok) in [(&long[1..], true), (long.as_str(), false)] {
        let body = json!({"text": text, "mode": "plain"});
        assert_eq!(first_problem("NoteBody", &body).is_none(), ok, "{body}");
        assert_eq!(scans("NoteBody", &body.to_string()), ok, "{body}");
    }
}

#[test]
fn contains_counts_the_matching_items_between_its_bounds() {
    for (stops, problem) in [
        (json!([10]), None),
        (json!([1, 10, "x", null, [11], {"a": 12}]), None),
        (json!([10, 1e1]), None),
        (json!([]), Some("/stops")),
        (json!([1, 9, "10", [10], 10.5]), Some("/stops")),
        (json!([10, 11, 12]), Some("/stops")),
        (json!([10, 11, 9]), None),
    ] {
        let body = json!({ "stops": stops });
        let text = body.to_string();
        let found = first_problem("PingBody", &body);
        assert_eq!(found.as_ref().map(|(_, p)| p.as_str()), problem, "{text}");
        assert_eq!(scans("PingBody", &text), problem.is_none(), "{text}");
    }
}

#[test]
fn number_bounds_compare_exact_decimal_values() {
    for (body, problem) in [
        (r#"{"price": 19.99}"#, None),
        (r#"{"price": 0.01}"#, None),
        (r#"{"price": 1E-2}"#, None),
        (r#"{"price": 1e6}"#, None),
        (r#"{"price": 1000000.00}"#, None),
        (r#"{"price": 1000000.01}"#, Some("/price")),
        (r#"{"price": 19.999}"#, Some("/price")),
        (r#"{"price": 0}"#, Some("/price")),
        (r#"{"price": -0}"#, Some("/price")),
        (r#"{"price": -0.01}"#, Some("/price")),
        (r#"{"ratio": 0.09999999999999999999}"#, None),
        (r#"{"ratio": -1e300}"#, None),
        (r#"{"ratio": 0.1}"#, Some("/ratio")),
        (r#"{"ratio": 1e-1}"#, Some("/ratio")),
        (r#"{"ratio": 0.10000000000000000001}"#, Some("/ratio")),
        (r#"{"total": 18446744073709551615}"#, None),
        (r#"{"total": 18446744073709551615.0}"#, None),
        (r#"{"total": 18446744073709551616}"#, Some("/total")),
        (r#"{"total": 1.8446744073709551616e19}"#, Some("/total")),
        (r#"{"step": -10}"#, None),
        (r#"{"step": 95}"#, None),
        (r#"{"step": null}"#, None),
        (r#"{"step": -15}"#, Some("/step")),
        (r#"{"step": 100}"#, Some("/step")),
        (r#"{"step": 12}"#, Some("/step")),
        // The test set counts integers as JSON Schema does (no `x-agh-envelope.integers`):
        // `5.0` and `-1e1` are integers; `7.5` is not.
        (r#"{"step": 5.0}"#, None),
        (r#"{"step": -1e1}"#, None),
        (r#"{"step": 7.5}"#, Some("/step")),
        // A `number` not bounded within `f64` on both sides is JSON Schema's, of any size
        // (typed `serde_json::Number`, kept as written); `price` is bounded, so it stays `f64`.
        (r#"{"ratio": -1e400}"#, None),
        (r#"{"total": -1e400}"#, None),
        (r#"{"weights": [1e400, 0, 1E+999]}"#, None),
        (r#"{"weights": [-1e400]}"#, Some("/weights/0")),
        (r#"{"price": 1e400}"#, Some("/price")),
    ] {
        let value = exact(body);
        let found = first_problem("PingBody", &value);
        assert_eq!(found.as_ref().map(|(_, p)| p.as_str()), problem, "{body}");
        assert_eq!(scans("PingBody", body), problem.is_none(), "{body}");
        if problem.is_none() {
            let typed = two_kinds::types::PingBody::decode_checked(body).expect(body);
            let back = serde_json::to_value(&typed).expect(body);
            for member in ["ratio", "total", "weights"] {
                if let Some(v) = value.get(member) {
                    assert!(
                        agh_protocol::check::json_eq(&back[member], &v.to_string()),
                        "{body}: {member} is {}",
                        back[member]
                    );
                }
            }
        }
    }
}

#[test]
fn not_refuses_what_its_schema_accepts() {
    for (nick, problem) in [
        (json!("bob"), None),
        (json!("Root"), None),
        (json!("root"), Some("/nick")),
        (json!("admin"), Some("/nick")),
        (json!(1), Some("/nick")),
    ] {
        let body = json!({ "nick": nick });
        let text = body.to_string();
        let found = first_problem("PingBody", &body);
        assert_eq!(found.as_ref().map(|(_, p)| p.as_str()), problem, "{text}");
        assert_eq!(scans("PingBody", &text), problem.is_none(), "{text}");
    }
    // Written with an escape, the same string is still refused.
    assert!(!scans("PingBody", r#"{"nick":"r\u006fot"}"#));
}

#[test]
fn pattern_properties_check_the_members_whose_names_match() {
    for (counts, problem) in [
        (json!({}), None),
        (json!({"abc": 0, "z": 7}), None),
        // Unanchored names that do not match are any value.
        (json!({"Abc": -1, "a1": "x", "": null}), None),
        (json!({"abc": -1}), Some("/counts/abc")),
        (json!({"abc": 1.5}), Some("/counts/abc")),
        (json!({"ok": 1, "bad": "1"}), Some("/counts/bad")),
        // `é` is not in `[a-z]`: the name does not match.
        (json!({"\u{e9}": -1}), None),
    ] {
        let body = json!({ "counts": counts });
        let text = body.to_string();
        let found = first_problem("PingBody", &body);
        assert_eq!(found.as_ref().map(|(_, p)| p.as_str()), problem, "{text}");
        assert_eq!(scans("PingBody", &text), problem.is_none(), "{text}");
    }
    // A repeated member is declined by the scanner whether or not its name matches.
    assert!(!scans("PingBody", r#"{"counts":{"abc":1,"abc":2}}"#));
    assert!(!scans("PingBody", r#"{"counts":{"A":1,"A":2}}"#));
}

#[test]
fn uniqueness_of_objects_and_of_trimmed_strings() {
    for (body, problem) in [
        (json!({"tags": ["ab", "cd"]}), None),
        (json!({"tags": ["ab", " ab"]}), Some("/tags/1")),
        (json!({"tags": ["ab", "ab\u{a0}"]}), Some("/tags/1")),
        (json!({"tags": ["a"]}), Some("/tags/0")),
        (json!({"spots": [{"x": 1, "y": 2}, {"x": 2, "y": 1}]}), None),
        // Equal objects whatever their member order (JSON Schema's equality).
        (
            json!({"spots": [{"x": 1, "y": 2}, {"y": 2, "x": 1}]}),
            Some("/spots/1"),
        ),
        (json!({"spots": [{"x": 1}]}), Some("/spots/0/y")),
        (
            json!({"spots": [{"x": 1, "y": 2, "z": 3}]}),
            Some("/spots/0/z"),
        ),
        (json!({"spots": [{"x": -1, "y": 2}]}), Some("/spots/0/x")),
    ] {
        let text = body.to_string();
        let found = first_problem("PingBody", &body);
        assert_eq!(found.as_ref().map(|(_, p)| p.as_str()), problem, "{text}");
        assert_eq!(scans("PingBody", &text), problem.is_none(), "{text}");
    }
    // The same object written with its members in the other order, as text (serde_json would
    // keep the order of the first): still a repeat.
    let text = r#"{"spots":[{"x":1,"y":2},{"y":2,"x":1}]}"#;
    assert!(!scans("PingBody", text));
}

#[test]
fn body_scanners_and_checks_of_the_test_set_agree_and_decode() {
    let note_answer = json!({"text": "pong", "mode": "answer", "author": "bob"});
    for kind in two_kinds::KINDS {
        for body in [full_ping(), note_answer.clone(), json!({"text": " "})] {
            let text = body.to_string();
            let mut problems = Problems::first_only();
            let exact = (kind.check)(&body, &mut "/body".to_owned(), &mut problems);
            let mut kept = Kept::default();
            let mut s = Scanner::new(&text, DEPTH);
            let fast = (kind.scan)(&mut s, &mut kept).filter(|_| s.end().is_some());
            assert_eq!(
                fast.is_some(),
                problems.is_empty(),
                "{} {text}",
                kind.rules.kind
            );
            if let Some(overrides) = fast {
                // The same conditional overrides from both paths (note `answer`: `reply_to`).
                assert_eq!(overrides, exact, "{} {text}", kind.rules.kind);
                let typed = (kind.decode)(&text).expect("a checked body decodes");
                // The set's borrowed body view reads the same values as its typed body (nested
                // arrays and objects of shapes v0 lacks included).
                let raw = agh_protocol::RawJson::parse(&text).expect("JSON");
                let view = two_kinds::BodyRef::of(kind.rules.kind, raw);
                assert_eq!(view.kind(), Some(kind.rules.kind));
                assert_eq!(
                    serde_json::to_value(&view).expect("serializes"),
                    typed.to_value().expect("serializes"),
                    "{} {text}",
                    kind.rules.kind
                );
                match (kind.rules.kind, typed) {
                    ("ping", KnownBody::Ping(ping)) => {
                        let rows = body["grid"].as_array().map(Vec::len);
                        assert_eq!(ping.grid.map(|g| g.len()), rows);
                        assert_eq!(
                            ping.spots.map(|s| s.len()),
                            body["spots"].as_array().map(Vec::len)
                        );
                    }
                    ("note", KnownBody::Note(note)) => {
                        assert_eq!(note.text.as_str(), "pong");
                        assert_eq!(overrides.reply_to, Some(agh_protocol::Presence::Required));
                    }
                    (kind, other) => panic!("{kind} decoded as {other:?}"),
                }
            }
        }
    }
    // `envelope_match` of `note` reads `/author`: the scanner keeps it for the cross check.
    let note = two_kinds::KINDS
        .iter()
        .find(|k| k.rules.kind == "note")
        .unwrap();
    let text = note_answer.to_string();
    let mut kept = Kept::default();
    (note.scan)(&mut Scanner::new(&text, DEPTH), &mut kept).unwrap();
    assert_eq!(
        kept.pointer("/author").flatten().map(|v| v.get()),
        Some("\"bob\"")
    );
}

/// The envelope scanner (with the body scanner of the kind it read) and the exact path (envelope
/// validator, then the kind's body check): the same verdict.
fn envelope_verdicts(text: &str, value: &Value) -> (bool, bool) {
    let info = |kind: &str| two_kinds::KINDS.iter().find(|i| i.rules.kind == kind);
    let mut s = Scanner::new(text, DEPTH);
    let mut kept = Kept::default();
    let fast = two_kinds::scan::scan_envelope(&mut s, &mut |s, kind| match kind.and_then(info) {
        Some(info) => (info.scan)(s, &mut kept).map(drop),
        None => s.raw_object().map(drop),
    })
    .is_some()
        && s.end().is_some();
    let mut problems = Problems::first_only();
    check_mini_envelope(value, &mut String::new(), &mut problems);
    if let (true, Some(info)) = (problems.is_empty(), value["kind"].as_str().and_then(info)) {
        (info.check)(&value["body"], &mut "/body".to_owned(), &mut problems);
    }
    (fast, problems.is_empty())
}

#[test]
fn the_envelope_scanner_of_the_test_set_agrees_with_its_validators() {
    let ping = json!({"protocol": "mini/v1", "kind": "ping", "from": "alice", "to": "bob", "body": full_ping()});
    let note = json!({"protocol": "mini/v1", "kind": "note", "from": "bob", "reply_to": "m-1",
        "body": {"text": "pong", "mode": "answer", "author": "bob"}});
    let mut envelopes = Vec::new();
    for envelope in [ping, note] {
        envelopes.extend(edits(&envelope));
        let mut bodies = Vec::new();
        all_values(&envelope["body"], &mut bodies);
        for body in bodies.iter().flat_map(edits).chain([json!({}), json!([])]) {
            let mut e = envelope.clone();
            e["body"] = body;
            envelopes.push(e);
        }
        envelopes.push(envelope);
    }
    let mut accepted = 0;
    for e in &envelopes {
        let text = e.to_string();
        let (fast, exact) = envelope_verdicts(&text, e);
        assert_eq!(fast, exact, "{text}");
        accepted += usize::from(fast);
    }
    assert!(accepted > 10 && accepted < envelopes.len(), "{accepted}");
    // Member order does not matter to the scanner's verdict on the body: a body before the
    // kind is read as a plain object, and the body check is then the exact path's alone.
    let late_kind =
        r#"{"body":{"grid":[[1]]},"protocol":"mini/v1","kind":"ping","from":"alice","to":"bob"}"#;
    let (fast, exact) = envelope_verdicts(late_kind, &serde_json::from_str(late_kind).unwrap());
    assert!(
        fast && !exact,
        "the body scanner did not run: the parser checks such a body later"
    );
}
