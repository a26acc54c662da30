//! The applicators of JSON Schema in generated code. `cargo xtask codegen` writes the code of
//! `codegen/tests/fixtures/applicators` (one kind, `shape`, and named types whose roots are
//! unions, conditionals and `not`) into `tests/applicators/`; `schema_applicators.rs` mounts it, so the code
//! compiles outside `protocol/src/generated`, and holds its scanners to its validators and both
//! to JSON Schema's verdicts: `allOf`, `anyOf`, `oneOf`, `if`/`then`/`else`, `not`,
//! `dependentSchemas`, `prefixItems` (with `items` after it), several `patternProperties` beside
//! declared members, `additionalProperties` as a schema, `type` lists, boolean schemas and `$ref`
//! beside other keywords.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agh_protocol::json::BigInt;
use agh_protocol::problem::Problems;
use agh_protocol::scan::{Kept, Scanner};
use serde_json::{json, Value};

mod common;
// Generated: not every table of the set is read here.
#[rustfmt::skip]
#[allow(dead_code)]
mod applicators;

use applicators::checks::{check_app_envelope, KnownBody, NAMED_CHECKS};
use applicators::scan::NAMED_SCANNERS;
use common::{all_values, cases_from, edits};

const DEPTH: usize = agh_protocol::json::JsonLimits::DEFAULT_MAX_DEPTH;

/// A valid `shape` body with every member.
fn full_shape() -> Value {
    json!({
        "artifact": {"url": "https://example.test/a"},
        "amount": "12345678901234567890",
        "window": {"unit": "s", "size": 60},
        "word": "hello",
        "signed": {"data": "AAAA", "sha": "0123abcd"},
        "pair": ["apples", 3],
        "tail": ["v1", 0, 7],
        "labels": {"main": "m", "x-color": "red", "n-count": 2, "user-id": "beef"},
        "counters": {"a": 0, "b": 12},
        "contact": {"email": "a@b.test", "name": "Ann"},
        "mode": "fast",
        "code": "ab12",
        "level": 4,
        "any": [null, {"deep": [1, "two"]}],
        "free": {"anything": true},
        "extra": 1
    })
}

/// Values of the set's shapes, valid and not: the edits of [`common::edits`] add the rest.
fn seeds() -> Vec<Value> {
    vec![
        full_shape(),
        json!({}),
        json!({"artifact": {"data": "AAAA"}, "amount": 7, "mode": 3, "level": 3}),
        json!({"artifact": {"quote": "hi"}, "amount": 1001, "mode": null, "level": 8}),
        json!({"artifact": {"url": "https://x", "data": "AAAA"}, "level": 10}),
        json!({"artifact": {"url": "http://x"}, "amount": "12a", "level": 11.5}),
        json!({"window": {"size": 61}, "word": ""}),
        json!({"window": {"unit": "s", "size": 61}, "word": 3.5}),
        json!({"window": {"unit": "ms", "size": 1000}, "word": ["x"]}),
        json!({"window": {"unit": "ms", "size": 1001}}),
        json!({"signed": {"data": "AAAA"}, "gone": 1}),
        json!({"signed": {"data": "AAAA", "sha": "xyz"}, "gone": null}),
        json!({"pair": ["a"], "tail": ["v1"]}),
        json!({"pair": ["a", 1, 2], "tail": ["v2", 1]}),
        json!({"pair": [1, "a"], "tail": ["v1", -1, 2]}),
        json!({"labels": {"other": "x"}, "counters": {"a": -1}}),
        json!({"labels": {"x-a": 1, "n-b": "2", "n-id": 3}, "counters": {"a": "1"}}),
        json!({"labels": {"mainid": "abc", "main": 2, "xid": "xyz"}}),
        json!({"contact": {"email": "a@b.test"}}),
        json!({"contact": {"name": ""}}),
        json!({"contact": {"email": "a@b.test", "name": ""}}),
        json!({"mode": "much-too-long", "code": "xab"}),
        json!({"mode": 0, "code": "a"}),
        json!({"mode": true, "code": "abcdef"}),
        json!({"mode": 1.5, "code": 12}),
        json!({"protocol": "app/v1", "from": "alice", "to": "Bob"}),
        json!({"labels": {"n-id": "ab", "x-id": "ab"}, "word": null, "pair": [], "tail": []}),
        json!({"contact": {"email": 1, "name": "n"}, "counters": {}, "signed": {}}),
        json!({"artifact": {"url": "https://x", "extra": 1}, "window": {"unit": "s"}}),
        json!({"level": -2, "amount": "", "code": "x", "mode": ""}),
        json!({"flag": "on", "maybe": 3}),
        json!({"flag": null, "maybe": null}),
        json!({"flag": "maybe", "maybe": 0}),
    ]
}

/// The named type's scanner on `text`: accepted (and nothing after the value)?
fn scans(name: &str, text: &str) -> bool {
    let scan = NAMED_SCANNERS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no scanner for {name}"))
        .1;
    let mut s = Scanner::new(text, DEPTH);
    scan(&mut s).is_some() && s.end().is_some()
}

/// Every problem the named type's validator finds in `value`.
fn problems(name: &str, value: &Value) -> Vec<agh_protocol::problem::Problem> {
    let check = NAMED_CHECKS
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no validator for {name}"))
        .1;
    let mut problems = Problems::all();
    check(value, &mut String::new(), &mut problems);
    problems.into_vec()
}

/// The pointer of the first problem of the named type's validator, if any.
fn first_pointer(name: &str, value: &Value) -> Option<String> {
    problems(name, value).first().map(|p| p.pointer.clone())
}

/// Checks `cases` (`(body, pointer of the first problem)`) against the `ShapeBody` validator and
/// scanner.
fn body_cases(cases: &[(Value, Option<&str>)]) {
    for (body, problem) in cases {
        let text = body.to_string();
        assert_eq!(
            first_pointer("ShapeBody", body).as_deref(),
            *problem,
            "{text}"
        );
        assert_eq!(scans("ShapeBody", &text), problem.is_none(), "{text}");
    }
}

#[test]
fn every_named_scanner_agrees_with_its_validator() {
    let mut values = Vec::new();
    for seed in seeds() {
        all_values(&seed, &mut values);
    }
    let cases = cases_from(&values);
    assert!(cases.len() > 400, "{}", cases.len());
    for (name, _) in NAMED_SCANNERS {
        let mut accepted = 0usize;
        for (text, value) in &cases {
            let fast = scans(name, text);
            let exact = problems(name, value);
            assert_eq!(
                fast,
                exact.is_empty(),
                "{name}: the scanner {} {text} but the validator found {exact:?}",
                if fast { "accepts" } else { "declines" },
            );
            accepted += usize::from(fast);
        }
        match *name {
            "AppNothing" => assert_eq!(accepted, 0, "the false schema accepted something"),
            "AppAnything" => assert_eq!(accepted, cases.len(), "any value"),
            _ => {
                assert!(accepted > 0, "{name} accepted nothing");
                assert!(accepted < cases.len(), "{name} declined nothing");
            }
        }
    }
}

#[test]
fn one_of_takes_exactly_one_shape_and_says_which_failed() {
    for (artifact, ok) in [
        (json!({"url": "https://a"}), true),
        (json!({"data": "AA"}), true),
        (json!({"data": "AA", "sha": "0123abcd"}), true),
        (json!({"quote": "short"}), true),
        (json!({"url": "http://a"}), false),
        (json!({"quote": "a quote of more than twenty"}), false),
        (json!({}), false),
        (json!("https://a"), false),
    ] {
        let text = artifact.to_string();
        assert_eq!(problems("AppArtifact", &artifact).is_empty(), ok, "{text}");
        assert_eq!(scans("AppArtifact", &text), ok, "{text}");
    }
    let found = problems("AppArtifact", &json!({"url": "http://a"}));
    assert_eq!(found.len(), 1, "{found:?}");
    let message = &found[0].message;
    assert!(
        message.contains("matches none of the 3 shapes")
            && message.contains("shape 0: `url` does not match `^https://`")
            && message.contains("shape 1: missing required member `data`")
            && message.contains("shape 2: missing required member `quote`"),
        "{message}"
    );
    assert_eq!(found[0].rule, "defs.schema.json#/$defs/artifact/oneOf");
    // `level`: even below 10, or at least 8: 8 matches both shapes and is refused.
    let level = |v: Value| json!({ "level": v });
    body_cases(&[
        (level(json!(4)), None),
        (level(json!(13)), None),
        (level(json!(10)), None),
        (level(json!(8)), Some("/level")),
        (level(json!(3)), Some("/level")),
        (level(json!("4")), Some("/level")),
    ]);
    let found = problems("ShapeBody", &level(json!(8)));
    assert!(
        found[0].message.contains("matches shapes 0, 1 of")
            && found[0].message.contains("must match exactly one"),
        "{found:?}"
    );
}

#[test]
fn any_of_takes_one_shape_or_more() {
    for (amount, ok) in [
        (json!(0), true),
        (json!(1000), true),
        (json!("007"), true),
        (json!(1001), false),
        (json!(-1), false),
        (json!("7a"), false),
        (json!(""), false),
        (json!(1.5), false),
        (json!(null), false),
    ] {
        let text = amount.to_string();
        assert_eq!(problems("AppAmount", &amount).is_empty(), ok, "{text}");
        assert_eq!(scans("AppAmount", &text), ok, "{text}");
    }
    let found = problems("AppAmount", &json!(1001));
    let message = &found[0].message;
    assert!(
        message.contains("matches none of the 2 shapes")
            && message.contains("shape 0:")
            && message.contains("must be at most 1000")
            && message.contains("shape 1:")
            && message.contains("must be a string"),
        "{message}"
    );
}

#[test]
fn if_then_else_applies_the_branch_the_condition_picks() {
    for (window, ok) in [
        (json!({"unit": "s", "size": 60}), true),
        (json!({"unit": "s", "size": 61}), false),
        (json!({"size": 61}), true),
        (json!({"unit": "ms", "size": 1000}), true),
        (json!({"unit": "ms", "size": 1001}), false),
        (json!({"unit": 5, "size": 1000}), false),
        (json!({"unit": "s"}), false),
    ] {
        let text = window.to_string();
        assert_eq!(problems("AppWindow", &window).is_empty(), ok, "{text}");
        assert_eq!(scans("AppWindow", &text), ok, "{text}");
    }
    let found = problems("AppWindow", &json!({"unit": "s", "size": 61}));
    assert_eq!(found[0].pointer, "/size");
    assert_eq!(
        found[0].rule,
        "defs.schema.json#/$defs/window/then/properties/size"
    );
}

#[test]
fn not_and_boolean_schemas_at_a_named_types_root() {
    for (word, ok) in [
        (json!("a"), true),
        (json!(null), true),
        (json!(""), false),
        (json!(1), false),
        (json!(1.5), false),
    ] {
        let text = word.to_string();
        assert_eq!(problems("AppWord", &word).is_empty(), ok, "{text}");
        assert_eq!(scans("AppWord", &text), ok, "{text}");
    }
    for v in [json!(null), json!(0), json!("x"), json!({}), json!([])] {
        let text = v.to_string();
        assert!(!problems("AppNothing", &v).is_empty() && !scans("AppNothing", &text));
        assert!(problems("AppAnything", &v).is_empty() && scans("AppAnything", &text));
    }
    // `gone: false` may not be present at all; `free: true` takes anything.
    body_cases(&[
        (json!({"gone": null}), Some("/gone")),
        (json!({"gone": {}}), Some("/gone")),
        (json!({"free": null}), None),
        (json!({"free": [1, {"a": 2}]}), None),
    ]);
}

#[test]
fn ref_beside_other_keywords_is_a_conjunct() {
    body_cases(&[
        (json!({"signed": {"data": "AA", "sha": "0123abcd"}}), None),
        (json!({"signed": {"data": "AA"}}), Some("/signed/sha")),
        (json!({"signed": {"sha": "0123abcd"}}), Some("/signed/data")),
        (
            json!({"signed": {"data": "AA", "sha": "0123"}}),
            Some("/signed/sha"),
        ),
        (
            json!({"signed": {"data": "AA", "sha": "0123abcd", "x": 1}}),
            Some("/signed/x"),
        ),
    ]);
}

#[test]
fn prefix_items_then_items() {
    body_cases(&[
        (json!({"pair": []}), None),
        (json!({"pair": ["a"]}), None),
        (json!({"pair": ["a", 1]}), None),
        (json!({"pair": ["a", 1, 2]}), Some("/pair/2")),
        (json!({"pair": [1]}), Some("/pair/0")),
        (json!({"pair": ["a", "b"]}), Some("/pair/1")),
        (json!({"tail": ["v1", 0, 5]}), None),
        (json!({"tail": ["v2"]}), Some("/tail/0")),
        (json!({"tail": ["v1", 1, -1]}), Some("/tail/2")),
        (json!({"tail": ["v1", "v1"]}), Some("/tail/1")),
    ]);
}

#[test]
fn pattern_properties_declared_members_and_additional_properties() {
    body_cases(&[
        (json!({"labels": {}}), None),
        (
            json!({"labels": {"main": "m", "x-a": "s", "n-a": 1, "aid": "f00"}}),
            None,
        ),
        // Unknown to a closed object unless a pattern matches its name.
        (json!({"labels": {"other": "s"}}), Some("/labels/other")),
        (json!({"labels": {"x-a": 1}}), Some("/labels/x-a")),
        (json!({"labels": {"n-a": "1"}}), Some("/labels/n-a")),
        // Two patterns match `n-id`: both shapes apply (an integer and a hex string: never).
        (json!({"labels": {"n-id": 1}}), Some("/labels/n-id")),
        (json!({"labels": {"x-id": "beef"}}), None),
        (json!({"labels": {"x-id": "xyz"}}), Some("/labels/x-id")),
        // A declared member whose name a pattern matches: `mainid` is not declared, but a
        // declared member is checked against the patterns that match it too.
        (json!({"labels": {"mainid": "0a"}}), None),
        (json!({"counters": {"a": 0, "b": 5}}), None),
        (json!({"counters": {"a": -1}}), Some("/counters/a")),
        (json!({"counters": {"a": "1"}}), Some("/counters/a")),
    ]);
}

#[test]
fn dependent_schemas_apply_when_the_member_is_present() {
    body_cases(&[
        (json!({"contact": {}}), None),
        (json!({"contact": {"name": ""}}), None),
        (json!({"contact": {"email": "e", "name": "Ann"}}), None),
        (json!({"contact": {"email": "e"}}), Some("/contact/name")),
        (
            json!({"contact": {"email": "e", "name": ""}}),
            Some("/contact/name"),
        ),
    ]);
}

#[test]
fn type_lists_and_all_of_with_not() {
    body_cases(&[
        // `null` passes a type list that names it, but not an `enum` without it.
        (json!({"flag": "off"}), None),
        (json!({"flag": null}), Some("/flag")),
        (json!({"maybe": null}), None),
        (json!({"maybe": 0}), Some("/maybe")),
        (json!({"mode": "fast"}), None),
        (json!({"mode": 1}), None),
        (json!({"mode": null}), None),
        (json!({"mode": "ninechars"}), Some("/mode")),
        (json!({"mode": 0}), Some("/mode")),
        (json!({"mode": 1.5}), Some("/mode")),
        (json!({"mode": true}), Some("/mode")),
        (json!({"code": "ab"}), None),
        (json!({"code": "abcde"}), None),
        (json!({"code": "a"}), Some("/code")),
        (json!({"code": "abcdef"}), Some("/code")),
        (json!({"code": "xab"}), Some("/code")),
    ]);
}

#[test]
fn the_shape_body_decodes_and_its_envelope_scanner_agrees() {
    let kind = &applicators::KINDS[0];
    let body = full_shape();
    let text = body.to_string();
    let mut problems = Problems::first_only();
    (kind.check)(&body, &mut "/body".to_owned(), &mut problems);
    assert!(problems.is_empty(), "{problems:?}");
    let mut kept = Kept::default();
    let mut s = Scanner::new(&text, DEPTH);
    assert!((kind.scan)(&mut s, &mut kept).is_some() && s.end().is_some());
    match (kind.decode)(&text).expect("a checked body decodes") {
        KnownBody::Shape(shape) => {
            assert!(matches!(
                shape.artifact,
                Some(applicators::AppArtifact::Link(_))
            ));
            assert_eq!(shape.counters.get("b"), Some(&BigInt::from(12u64)));
        }
    }
    let envelope =
        json!({"protocol": "app/v1", "kind": "shape", "from": "alice", "body": full_shape()});
    let mut envelopes = edits(&envelope);
    let mut bodies = Vec::new();
    all_values(&envelope["body"], &mut bodies);
    for b in bodies.iter().flat_map(edits) {
        let mut e = envelope.clone();
        e["body"] = b;
        envelopes.push(e);
    }
    envelopes.push(envelope);
    let mut accepted = 0;
    for e in &envelopes {
        let text = e.to_string();
        let mut s = Scanner::new(&text, DEPTH);
        let mut kept = Kept::default();
        let fast = applicators::scan::scan_envelope(&mut s, &mut |s, k| match k {
            Some("shape") => (kind.scan)(s, &mut kept).map(drop),
            _ => s.raw_object().map(drop),
        })
        .is_some()
            && s.end().is_some();
        let mut problems = Problems::first_only();
        check_app_envelope(e, &mut String::new(), &mut problems);
        if problems.is_empty() && e["kind"] == "shape" {
            (kind.check)(&e["body"], &mut "/body".to_owned(), &mut problems);
        }
        assert_eq!(fast, problems.is_empty(), "{text}");
        accepted += usize::from(fast);
    }
    assert!(accepted > 10 && accepted < envelopes.len(), "{accepted}");
}

/// The `jsonschema` crate's validator (draft 2020-12) of the schema at `uri`, with the set's
/// files as its registry.
fn standard(uri: &str) -> jsonschema::Validator {
    use jsonschema::{Draft, Registry, Resource};
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../codegen/tests/fixtures/applicators");
    let docs: Vec<Value> = [
        "defs.schema.json",
        "envelope.schema.json",
        "body/shape.schema.json",
    ]
    .iter()
    .map(|f| serde_json::from_slice(&std::fs::read(dir.join(f)).unwrap()).unwrap())
    .collect();
    let registry = Registry::new()
        .extend(docs.iter().map(|d| {
            (
                d["$id"].as_str().unwrap().to_owned(),
                Resource::from_contents(d.clone()),
            )
        }))
        .unwrap()
        .prepare()
        .unwrap();
    jsonschema::options()
        .with_draft(Draft::Draft202012)
        .with_registry(&registry)
        .build(&json!({ "$ref": uri }))
        .unwrap()
}

/// The `jsonschema` crate (draft 2020-12) on the same schemas: the same verdict on every case of
/// every named type (numbers here are small and exact, where it and the exact decimals agree).
#[test]
fn the_verdicts_are_those_of_the_jsonschema_crate() {
    let defs = "https://example.test/app/defs.schema.json#/$defs/";
    let mut targets: Vec<(&str, String)> = [
        ("AppArtifact", "artifact"),
        ("AppAmount", "amount"),
        ("AppWindow", "window"),
        ("AppWord", "word"),
        ("AppNothing", "nothing"),
        ("AppAnything", "anything"),
        ("AppEmpty", "empty"),
        ("AppBlob", "blob"),
        ("AppLink", "link"),
        ("AppQuote", "quote"),
    ]
    .into_iter()
    .map(|(name, key)| (name, format!("{defs}{key}")))
    .collect();
    targets.push((
        "ShapeBody",
        "https://example.test/app/body/shape.schema.json".to_owned(),
    ));
    let mut values = Vec::new();
    for seed in seeds() {
        all_values(&seed, &mut values);
    }
    let cases = cases_from(&values);
    for (name, uri) in targets {
        let plain = standard(&uri);
        for (text, value) in &cases {
            assert_eq!(
                problems(name, value).is_empty(),
                plain.is_valid(value),
                "{name}: {text}"
            );
        }
    }
}

/// An envelope of the set: `shape` from `alice`, with the members of `extra` and `body`.
fn shape_envelope(extra: Value, body: Value) -> Value {
    let mut e = json!({"protocol": "app/v1", "kind": "shape", "from": "alice", "body": body});
    for (k, v) in extra.as_object().into_iter().flatten() {
        e[k] = v.clone();
    }
    e
}

/// The kind rules are ordinary `if`/`then` entries read by the general model: the envelope's
/// `allOf` holds the kind dispatch (inside a nested `allOf`) beside a rule of its own (`if` a
/// `to`, `then` a `reply_to`, `else` none), and the body's holds a rule in the restricted form
/// (with an envelope override) beside a general `if`/`then`/`else`. The profile's parser takes
/// each through its fast and exact paths, and, but for the override (an `x-agh-envelope` rule,
/// not JSON Schema), gives the `jsonschema` crate's verdict on the same schemas.
#[test]
fn the_kind_dispatch_and_general_conditionals_hold_in_one_envelope() {
    use agh_protocol::profile;
    use applicators::profile::{Profile as App, SPEC};
    let schema = standard("https://example.test/app/envelope.schema.json");
    let answer = json!({"to": "bob", "reply_to": "m1"});
    // (envelope, the first problem's pointer and rule, whether JSON Schema says the same)
    type Case = (Value, Option<(&'static str, &'static str)>, bool);
    let cases: Vec<Case> = vec![
        (shape_envelope(json!({}), json!({})), None, true),
        (shape_envelope(answer.clone(), json!({})), None, true),
        // The envelope's own rule, `then` and `else`.
        (
            shape_envelope(json!({"to": "bob"}), json!({})),
            Some(("/reply_to", "envelope.schema.json#/allOf/1/then/required")),
            true,
        ),
        (
            shape_envelope(json!({"reply_to": "m1"}), json!({})),
            Some((
                "/reply_to",
                "envelope.schema.json#/allOf/1/else/properties/reply_to",
            )),
            true,
        ),
        // The kind dispatch, read inside the nested `allOf`: the body is a `ShapeBody`.
        (
            shape_envelope(json!({}), json!({"code": "x"})),
            Some(("/body/code", "body/shape.schema.json#/properties/code")),
            true,
        ),
        // The body's rule in the restricted form ...
        (
            shape_envelope(answer.clone(), json!({"status": "final"})),
            Some(("/body/stamp", "body/shape.schema.json#/allOf/0")),
            true,
        ),
        (
            shape_envelope(answer.clone(), json!({"status": "final", "stamp": "ann"})),
            None,
            true,
        ),
        // ... and its envelope override: a final shape answers a message.
        (
            shape_envelope(json!({}), json!({"status": "final", "stamp": "ann"})),
            Some((
                "/reply_to",
                "envelope requirements (reply_to, by body form)",
            )),
            false,
        ),
        (
            shape_envelope(json!({}), json!({"status": "draft", "stamp": "ann"})),
            None,
            true,
        ),
        // The body's general rule: no stamp without a status, at most 8 characters with one.
        (
            shape_envelope(json!({}), json!({"stamp": "ann"})),
            Some(("/body", "body/shape.schema.json#/allOf/1/else")),
            true,
        ),
        (
            shape_envelope(json!({}), json!({"status": "draft", "stamp": "annabella"})),
            Some((
                "/body/stamp",
                "body/shape.schema.json#/allOf/1/then/properties/stamp",
            )),
            true,
        ),
    ];
    let options = SPEC.options(0);
    for (envelope, problem, standard) in &cases {
        let text = envelope.to_string();
        let bytes = text.as_bytes();
        let problems = profile::explain::<App>(bytes, &options);
        let first = problems.first().map(|p| (p.pointer.as_str(), &*p.rule));
        match (problem, first) {
            (None, None) => {}
            (Some((pointer, rule)), Some((at, broken))) => {
                assert_eq!(*pointer, at, "{text}: {problems:?}");
                assert!(broken.contains(rule), "{text}: {problems:?}");
            }
            _ => panic!("{text}: expected {problem:?}, got {problems:?}"),
        }
        assert_eq!(
            profile::fast_accepts::<App>(bytes, &options),
            problem.is_none(),
            "{text}"
        );
        let parsed = profile::parse::<App>(bytes, &options);
        assert_eq!(parsed.is_ok(), problem.is_none(), "{text}");
        if *standard {
            assert_eq!(schema.is_valid(envelope), problem.is_none(), "{text}");
        }
    }
    // Edits of every case: both paths agree, and agree with JSON Schema where the override
    // (a final shape needs `reply_to`) says nothing.
    let mut checked = 0;
    for (envelope, _, _) in &cases {
        for e in edits(envelope) {
            let text = e.to_string();
            let bytes = text.as_bytes();
            let exact = profile::explain::<App>(bytes, &options).is_empty();
            assert_eq!(
                profile::fast_accepts::<App>(bytes, &options),
                exact,
                "{text}"
            );
            let final_shape = e["body"]["status"] == "final";
            if e["kind"] == "shape" && e["protocol"] == "app/v1" && !final_shape {
                assert_eq!(schema.is_valid(&e), exact, "{text}");
                checked += 1;
            }
        }
    }
    assert!(checked > 50, "{checked}");
}

/// The applicators set declares no `x-agh-envelope.integer_bits`: its `integer` is JSON Schema's,
/// of any size, in the validator, the scanner and the typed body (`agh_runtime::json::BigInt`,
/// kept as written); `minimum` and `not` still hold, by exact decimal value.
#[test]
fn a_plain_set_holds_integers_of_any_size() {
    const BIG: &str = "12345678910111213141516171819202122232425262728293031";
    let kind = &applicators::KINDS[0];
    let cases = [
        (
            format!(r#"{{"counters": {{"a": {BIG}, "b": 1e308, "c": 2.0, "d": -0}}}}"#),
            true,
        ),
        (format!(r#"{{"maybe": -{BIG}}}"#), true),
        (format!(r#"{{"tail": ["v1", {BIG}, 1e40]}}"#), true),
        (
            format!(r#"{{"window": {{"unit": "ms", "size": {BIG}}}}}"#),
            false,
        ),
        (format!(r#"{{"counters": {{"a": -{BIG}}}}}"#), false),
        (r#"{"counters": {"a": 1.5}}"#.to_owned(), false),
        (r#"{"counters": {"a": 1e-400}}"#.to_owned(), false),
        (r#"{"maybe": 0e5}"#.to_owned(), false),
        (r#"{"maybe": 1e400}"#.to_owned(), true),
    ];
    for (text, valid) in cases {
        let value: Value = serde_json::from_str(&text).expect(&text);
        let mut problems = Problems::first_only();
        (kind.check)(&value, &mut "/body".to_owned(), &mut problems);
        assert_eq!(
            problems.is_empty(),
            valid,
            "validator on {text}: {problems:?}"
        );
        let mut kept = Kept::default();
        let mut s = Scanner::new(&text, DEPTH);
        let fast = (kind.scan)(&mut s, &mut kept).is_some() && s.end().is_some();
        assert_eq!(fast, valid, "scanner on {text}");
        if valid {
            let KnownBody::Shape(shape) = (kind.decode)(&text).expect("a checked body decodes");
            for (name, n) in &shape.counters {
                let written = value["counters"][name].to_string();
                assert_eq!(n, &written.parse::<BigInt>().expect(&written), "{text}");
            }
            if text.contains("counters") {
                assert_eq!(shape.counters["a"].as_str(), BIG);
            }
            if let Some(m) = &shape.maybe {
                assert!(m < &BigInt::from(0u64) || text.contains("1e400"), "{text}");
            }
        }
    }
}

/// The owned message of the plain set: a body integer of any size is parsed, typed as `BigInt`
/// and written back as it came; the validators' explanation agrees. Nothing is refused for size.
#[test]
fn the_owned_message_of_a_plain_set_keeps_integers_of_any_size() {
    use agh_protocol::profile;
    use applicators::profile::{Profile as App, SPEC};
    const BIG: &str = "-12345678910111213141516171819202122232425262728293031";
    const T: &str = "98765432109876543210987654321";
    let text = format!(
        r#"{{"protocol":"app/v1","kind":"shape","from":"alice","body":{{"counters":{{"a":{},"b":1e308}},"maybe":{BIG},"mode":1e30,"totals":[0,1e100,{T}],"window":{{"unit":"s","size":-1e40}}}}}}"#,
        &BIG[1..]
    );
    let options = SPEC.options(0);
    assert!(profile::explain::<App>(text.as_bytes(), &options).is_empty());
    let message = profile::parse::<App>(text.as_bytes(), &options).expect("valid");
    let Ok(Some(KnownBody::Shape(shape))) = message.to_owned_body() else {
        panic!("a shape body")
    };
    assert_eq!(shape.counters["a"].as_str(), &BIG[1..]);
    assert_eq!(shape.counters["b"], "1e308".parse::<BigInt>().unwrap());
    assert_eq!(shape.maybe.as_ref().map(BigInt::as_str), Some(BIG));
    assert!(shape.window.as_ref().unwrap().size < BigInt::from(i64::MIN));
    // `totals`: a named integer type of any size (`AppCount`, a newtype of `BigInt`).
    let totals: Vec<BigInt> = shape.totals.iter().map(|t| t.0.clone()).collect();
    let want: Vec<BigInt> = ["0", "1e100", T].map(|t| t.parse().unwrap()).into();
    assert_eq!(totals, want);
    assert_eq!(shape.totals[2].as_str(), T);
    // `mode` (a string, an integer of any size or null) is any JSON value (serde_json may
    // respell an exponent's sign: the value is the same).
    let mode = shape.mode.as_ref().expect("mode");
    assert!(agh_protocol::check::json_eq(mode, "1e30"), "{mode}");
    // The message keeps the bytes it was given; the typed body writes the integers back as
    // they came.
    assert_eq!(message.to_vec(), text.as_bytes());
    let written = serde_json::to_string(&shape).unwrap();
    assert!(written.contains(BIG) && written.contains(T), "{written}");
    // A fraction is still no integer, at its pointer.
    for (bad, at) in [
        (text.replace("1e308", "1.5"), "/body/counters/b"),
        (text.replace("1e100", "-1e100"), "/body/totals/1"),
    ] {
        let refused = profile::parse::<App>(bad.as_bytes(), &options).unwrap_err();
        assert_eq!(refused.pointer, at);
        assert_eq!(
            profile::explain::<App>(bad.as_bytes(), &options)[0].pointer,
            at
        );
    }
}
