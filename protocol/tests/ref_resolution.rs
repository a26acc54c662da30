//! `$ref` resolved as draft 2020-12 says, in generated code that compiles and runs. `cargo xtask
//! codegen` writes the code of `codegen/tests/fixtures/refs` into `tests/refs_set/`: a tree body
//! that holds itself (`$ref: "#"`, as items and as a nullable member), an embedded resource
//! (`$id: "node.json"`) whose pointers and anchors resolve inside it and which holds itself, the
//! same `$anchor` name in two resources, a URN `$id`, pointers with `~0`, `~1` and `%25`, pointers
//! to a member and to `items`, and an outline and its parts holding each other across two files.
//! The validators must decide these as JSON Schema does, at every depth, and every scanner must
//! agree with its validator.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agh_protocol::problem::Problems;
use agh_protocol::scan::{Kept, Scanner};
use serde_json::{json, Value};

mod common;
// Generated: not every table of the set is read here.
#[rustfmt::skip]
#[allow(dead_code)]
mod refs_set;

use common::{
    all_values, assert_named_scanners_agree, cases_from, edits, named_first_problem, named_scans,
};
use refs_set::checks::{check_refs_envelope, KnownBody, NAMED_CHECKS};
use refs_set::scan::NAMED_SCANNERS;

const DEPTH: usize = agh_protocol::json::JsonLimits::DEFAULT_MAX_DEPTH;

/// The named type's scanner on `text`: accepted (and nothing after the value)?
fn scans(name: &str, text: &str) -> bool {
    named_scans(NAMED_SCANNERS, name, text)
}

/// The named type's validator on `value`: the pointer of its first problem, if any.
fn first_problem(name: &str, value: &Value) -> Option<String> {
    named_first_problem(NAMED_CHECKS, name, value).map(|(_, pointer)| pointer)
}

/// The validator's first problem, checked against the scanner's verdict on the same value.
fn verdict(name: &str, value: &Value) -> Option<String> {
    let problem = first_problem(name, value);
    let text = value.to_string();
    assert_eq!(
        scans(name, &text),
        problem.is_none(),
        "{name}: scanner and validator disagree on {text} ({problem:?})"
    );
    problem
}

fn tree() -> Value {
    json!({
        "label": "root",
        "alias": "top",
        "weight": 3,
        "level": -2,
        "tag": "abc",
        "children": [
            {"label": "a", "children": [{"label": "aa"}, {"label": "ab", "next": {"label": "ac"}}]},
            {"label": "b", "next": null}
        ],
        "next": {"label": "sibling", "children": []},
        "node": {"value": 1, "mark": "x", "tag": "t", "kids": [{"value": 2, "kids": [{"value": 3, "mark": "o"}]}]}
    })
}

fn doc() -> Value {
    json!({
        "outline": {
            "title": "book",
            "parts": [
                {"text": "intro"},
                {"outline": {"title": "chapter", "parts": [{"outline": {"title": "section"}}]}}
            ]
        },
        "count": 9,
        "code": "ab",
        "share": 0.5,
        "pair": ["a", "b"],
        "first": "c",
        "extra": [1]
    })
}

#[test]
fn every_reference_target_is_a_named_type() {
    let names: Vec<_> = NAMED_SCANNERS.iter().map(|(n, _)| *n).collect();
    for expected in [
        // Roots and `$defs` entries, keys with `~`, `/` and `%` included.
        "TreeBody",
        "DocBody",
        "Outline",
        "Part",
        "Node",
        "Mark",
        "LeafWeight",
        "TildeKey",
        "SlashKey",
        "X100",
        "Name",
        // Targets that are neither: a member, `items`, a subschema of an embedded resource.
        "TreeBodyLabel",
        "DocBodyPairItem",
        "NodeTag",
        "NodeMark",
        "RefsEnvelopeFrom",
    ] {
        assert!(names.contains(&expected), "{expected}: {names:?}");
    }
    let checks: Vec<_> = NAMED_CHECKS.iter().map(|(n, _)| *n).collect();
    assert!(names.iter().all(|n| checks.contains(n)), "{names:?}");
}

#[test]
fn a_recursive_root_is_checked_at_every_depth() {
    assert_eq!(verdict("TreeBody", &tree()), None);
    let mut deep = json!({"label": "leaf"});
    for i in 0..30 {
        deep = if i % 2 == 0 {
            json!({"label": "n", "children": [{"label": "m"}, deep]})
        } else {
            json!({"label": "n", "next": deep})
        };
    }
    assert_eq!(verdict("TreeBody", &deep), None);
    for (edit, pointer) in [
        (
            "/children/0/children/1/label",
            "/children/0/children/1/label",
        ),
        (
            "/children/0/children/1/next/label",
            "/children/0/children/1/next/label",
        ),
        ("/next/label", "/next/label"),
        ("/alias", "/alias"),
    ] {
        let mut t = tree();
        *t.pointer_mut(edit).unwrap() = json!("Upper");
        assert_eq!(verdict("TreeBody", &t).as_deref(), Some(pointer), "{edit}");
    }
    // `maxItems` and `additionalProperties: false` hold in the nested trees too.
    let mut t = tree();
    t["children"][0]["children"] =
        json!([{"label": "a"}, {"label": "b"}, {"label": "c"}, {"label": "d"}, {"label": "e"}]);
    assert_eq!(
        verdict("TreeBody", &t).as_deref(),
        Some("/children/0/children")
    );
    let mut t = tree();
    t["next"]["color"] = json!("red");
    assert!(verdict("TreeBody", &t).is_some());
    // Nesting past the scanner's depth limit declines; so the parser's strict reader refuses it.
    let mut too_deep = json!({"label": "leaf"});
    for _ in 0..DEPTH {
        too_deep = json!({"label": "n", "next": too_deep});
    }
    assert!(!scans("TreeBody", &too_deep.to_string()));
}

#[test]
fn an_embedded_resource_resolves_its_own_pointers_and_anchors() {
    // `node.json`'s `#/$defs/tag` is its own (at most three characters), its `#mark` is its
    // own (`x` or `o`), while the file's `#mark` (`level`) is any integer.
    let mut t = tree();
    t["node"]["kids"][0]["kids"][0]["tag"] = json!("long");
    assert_eq!(
        verdict("TreeBody", &t).as_deref(),
        Some("/node/kids/0/kids/0/tag")
    );
    let mut t = tree();
    t["node"]["kids"][0]["mark"] = json!(1);
    assert_eq!(
        verdict("TreeBody", &t).as_deref(),
        Some("/node/kids/0/mark")
    );
    let mut t = tree();
    t["level"] = json!("x");
    assert_eq!(verdict("TreeBody", &t).as_deref(), Some("/level"));
    // The absolute URI of the embedded resource names the same `tag`.
    let mut t = tree();
    t["tag"] = json!("abcd");
    assert_eq!(verdict("TreeBody", &t).as_deref(), Some("/tag"));
    assert_eq!(verdict("NodeMark", &json!("o")), None);
    assert_eq!(verdict("Mark", &json!(7)), None);
    assert_eq!(verdict("Mark", &json!("o")).as_deref(), Some(""));
}

#[test]
fn escaped_pointers_and_urn_references_reach_their_schemas() {
    assert_eq!(verdict("DocBody", &doc()), None);
    for (member, value, pointer) in [
        ("count", json!(10), "/count"),  // `#/$defs/tilde~0key`: at most 9
        ("code", json!("abc"), "/code"), // `#/$defs/slash~1key`: at most two characters
        ("share", json!(1.5), "/share"), // `#/$defs/100%25`: at most 1
        ("first", json!(""), "/first"),  // `#/properties/pair/items`: not empty
        ("outline", json!({"parts": []}), "/outline/title"), // `title` is required
    ] {
        let mut d = doc();
        d[member] = value;
        assert_eq!(verdict("DocBody", &d).as_deref(), Some(pointer), "{member}");
    }
}

#[test]
fn types_that_hold_each_other_across_files_check_every_level() {
    let mut d = doc();
    d["outline"]["parts"][1]["outline"]["parts"][0]["outline"]["title"] = json!("Nope");
    assert_eq!(
        verdict("DocBody", &d).as_deref(),
        Some("/outline/parts/1/outline/parts/0/outline/title")
    );
    let mut d = doc();
    d["outline"]["parts"][1]["outline"]["parts"][0]["outline"]["extra"] = json!(1);
    assert!(verdict("DocBody", &d).is_some());
    assert_eq!(
        verdict("Part", &json!({"outline": {"title": "x", "parts": [{}]}})),
        None
    );
}

#[test]
fn every_named_scanner_of_the_refs_set_agrees_with_its_validator() {
    let mut values = Vec::new();
    let envelope = json!({"protocol": "refs/v1", "kind": "tree", "from": "alice", "body": {}});
    for seed in [
        tree(),
        doc(),
        envelope,
        json!({"value": 1, "kids": [{"value": 2}]}),
    ] {
        all_values(&seed, &mut values);
    }
    let cases = cases_from(&values);
    assert!(cases.len() > 300, "{}", cases.len());
    assert_named_scanners_agree(NAMED_SCANNERS, NAMED_CHECKS, &cases);
}

#[test]
fn recursive_bodies_decode_into_boxed_types() {
    for kind in refs_set::KINDS {
        let body = if kind.rules.kind == "tree" {
            tree()
        } else {
            doc()
        };
        let text = body.to_string();
        let mut kept = Kept::default();
        let mut s = Scanner::new(&text, DEPTH);
        assert!((kind.scan)(&mut s, &mut kept).is_some() && s.end().is_some());
        match (
            kind.rules.kind,
            (kind.decode)(&text).expect("a checked body decodes"),
        ) {
            ("tree", KnownBody::Tree(t)) => {
                let next = t.next.expect("a next tree");
                assert_eq!(next.label.as_str(), "sibling");
                assert_eq!(
                    t.children[0].children[1]
                        .next
                        .as_ref()
                        .unwrap()
                        .label
                        .as_str(),
                    "ac"
                );
                assert_eq!(t.node.unwrap().kids[0].kids[0].value, 3);
            }
            ("doc", KnownBody::Doc(d)) => {
                let nested = d.outline.parts[1].outline.as_ref().unwrap();
                assert_eq!(nested.title.as_str(), "chapter");
                assert_eq!(
                    nested.parts[0].outline.as_ref().unwrap().title.as_str(),
                    "section"
                );
            }
            (kind, other) => panic!("{kind} decoded as {other:?}"),
        }
    }
}

#[test]
fn the_envelope_scanner_of_the_refs_set_agrees_with_its_validators() {
    let info = |kind: &str| refs_set::KINDS.iter().find(|i| i.rules.kind == kind);
    let mut envelopes = Vec::new();
    for (kind, body) in [("tree", tree()), ("doc", doc())] {
        let envelope = json!({"protocol": "refs/v1", "kind": kind, "from": "alice", "to": "bob", "body": body});
        envelopes.extend(edits(&envelope));
        let mut bodies = Vec::new();
        all_values(&envelope["body"], &mut bodies);
        for body in bodies.iter().flat_map(edits) {
            let mut e = envelope.clone();
            e["body"] = body;
            envelopes.push(e);
        }
        envelopes.push(envelope);
    }
    let mut accepted = 0;
    for e in &envelopes {
        let text = e.to_string();
        let mut s = Scanner::new(&text, DEPTH);
        let mut kept = Kept::default();
        let fast =
            refs_set::scan::scan_envelope(&mut s, &mut |s, kind| match kind.and_then(info) {
                Some(info) => (info.scan)(s, &mut kept).map(drop),
                None => s.raw_object().map(drop),
            })
            .is_some()
                && s.end().is_some();
        let mut problems = Problems::first_only();
        check_refs_envelope(e, &mut String::new(), &mut problems);
        if let (true, Some(info)) = (problems.is_empty(), e["kind"].as_str().and_then(info)) {
            (info.check)(&e["body"], &mut "/body".to_owned(), &mut problems);
        }
        assert_eq!(
            fast,
            problems.is_empty(),
            "{text}: {:?}",
            problems.as_slice().first()
        );
        accepted += usize::from(fast);
    }
    assert!(accepted > 10 && accepted < envelopes.len(), "{accepted}");
}
