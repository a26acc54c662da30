//! The fast path (generated one-pass scanners) and the exact path (strict reader + generated
//! validators) must give the same verdict on every input: the fast path decides validity, the
//! exact path explains rejections. Checked on every conformance fixture, the seed examples, the
//! hostile fixtures, the fuzz corpora, and mutations of valid envelopes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use agh_protocol::{explain, parse_ref, Options, Registry};
use proptest::prelude::*;
use serde_json::Value;

mod common;

use common::{all_values, cases_from};

const NOW: i64 = 1_776_366_000;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    out.sort();
    out
}

/// Every input the repository holds, with the clock to read it at.
fn corpus() -> Vec<(String, Vec<u8>, i64)> {
    let mut out = Vec::new();
    let fixtures = root().join("conformance/fixtures");
    for group in files(&fixtures) {
        for f in files(&group) {
            let name = f.file_name().unwrap().to_string_lossy().into_owned();
            let d: Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
            let mut cases = vec![d.clone()];
            cases.extend(d["steps"].as_array().cloned().unwrap_or_default());
            for (i, case) in cases.iter().enumerate() {
                let now = case["now"].as_i64().or(d["now"].as_i64()).unwrap_or(NOW);
                let bytes = match (&case["raw"], &case["envelope"]) {
                    (Value::String(raw), _) => raw.clone().into_bytes(),
                    (_, Value::Null) => continue,
                    (_, envelope) => serde_json::to_vec(envelope).unwrap(),
                };
                out.push((format!("{name}#{i}"), bytes, now));
            }
        }
    }
    for f in files(&root().join("examples/envelopes")) {
        out.push((f.display().to_string(), std::fs::read(&f).unwrap(), NOW));
    }
    for f in files(&root().join("protocol/tests/fixtures/hostile")) {
        out.push((f.display().to_string(), std::fs::read(&f).unwrap(), NOW));
    }
    for target in ["parse", "receiver"] {
        for f in files(&root().join("fuzz/corpus").join(target)) {
            let data = std::fs::read(&f).unwrap();
            for (i, line) in data.split(|&b| b == b'\n').enumerate() {
                out.push((format!("{}:{i}", f.display()), line.to_vec(), NOW));
            }
            out.push((f.display().to_string(), data, NOW));
        }
    }
    out
}

/// The verdicts of both paths agree, at the given clock and without freshness.
#[track_caller]
fn agree(name: &str, bytes: &[u8], now: i64) {
    let registry = Registry::v0();
    for options in [Options::at(now), Options::without_freshness()] {
        let fast = registry.fast_accepts(bytes, &options);
        let problems = explain(bytes, &options);
        assert_eq!(
            fast,
            problems.is_empty(),
            "{name}: fast path {} but the exact path found {:?}\n{}",
            if fast { "accepts" } else { "declines" },
            problems.first(),
            String::from_utf8_lossy(bytes)
        );
        // The owned parser of a transport's bytes decides the same, with the same rejection (it
        // checks UTF-8 as it takes the bytes, and names broken UTF-8 from where it breaks).
        let owned =
            agh_protocol::parse_bytes(agh_protocol::Bytes::copy_from_slice(bytes), &options);
        assert_eq!(
            owned.map(drop),
            parse_ref(bytes, &options).map(drop),
            "{name}: parse_bytes and parse_ref differ"
        );
    }
}

#[test]
fn both_paths_agree_on_every_stored_input() {
    let corpus = corpus();
    assert!(corpus.len() > 500, "{}", corpus.len());
    let mut accepted = 0;
    for (name, bytes, now) in &corpus {
        agree(name, bytes, *now);
        accepted += usize::from(Registry::v0().fast_accepts(bytes, &Options::at(*now)));
    }
    // Both verdicts occur plenty: the agreement is not all-reject or all-accept.
    assert!(
        accepted > 100 && corpus.len() - accepted > 100,
        "{accepted}"
    );
}

/// serde's typed body of `kind`, from the body text (the reference the owned decoding is held to).
fn serde_body(kind: &str, text: &str) -> Value {
    use agh_protocol::{CapabilityBody, GreetBody, ReceiptBody, SayBody, TraceBody, WhoisBody};
    let typed = match kind {
        "greet" => serde_json::from_str::<GreetBody>(text).map(serde_json::to_value),
        "whois" => serde_json::from_str::<WhoisBody>(text).map(serde_json::to_value),
        "say" => serde_json::from_str::<SayBody>(text).map(serde_json::to_value),
        "capability" => serde_json::from_str::<CapabilityBody>(text).map(serde_json::to_value),
        "receipt" => serde_json::from_str::<ReceiptBody>(text).map(serde_json::to_value),
        "trace" => serde_json::from_str::<TraceBody>(text).map(serde_json::to_value),
        other => panic!("no serde reference for kind {other}"),
    };
    typed
        .unwrap_or_else(|e| panic!("serde refuses a checked `{kind}` body: {e}\n{text}"))
        .unwrap()
}

/// `parse` builds the owned message from the fast path's view (no second validation, no JSON
/// tree): on every stored input the view accepts, it equals what serde makes of the same
/// bytes, member by member (envelope and typed body), and it keeps the view's members.
#[test]
fn parse_equals_serde_on_every_accepted_stored_input() {
    let options = Options::without_freshness();
    let mut checked = 0;
    for (name, bytes, _) in corpus() {
        let Ok(view) = parse_ref(&bytes, &options) else {
            continue;
        };
        let owned = view.to_message();
        let parsed = agh_protocol::parse(&bytes, &options).expect("parse agrees with parse_ref");
        // The message holds the bytes, and its view is the parser's.
        assert_eq!(parsed.bytes().as_ref(), &bytes[..], "{name}");
        assert_eq!(&parsed.envelope(), view.envelope(), "{name}");
        assert_eq!(&owned.envelope(), view.envelope(), "{name}");
        let typed = owned
            .to_envelope()
            .unwrap_or_else(|e| panic!("{name}: the view converts: {e}"));
        assert_eq!(
            serde_json::to_value(parsed.to_envelope().unwrap()).unwrap(),
            serde_json::to_value(&typed).unwrap(),
            "{name}"
        );
        // The envelope, by serde from the JSON tree (body left empty, as `Message` keeps it).
        let mut tree: serde_json::Map<String, Value> = serde_json::from_slice(&bytes).unwrap();
        tree.retain(|_, v| !v.is_null());
        let body_text = view.body_json().get().to_owned();
        tree.insert("body".into(), Value::Object(Default::default()));
        if !tree.contains_key("to") {
            tree.insert("to".into(), Value::Null);
        }
        if !tree.contains_key("proof") {
            tree.insert("proof".into(), Value::Null);
        }
        let by_serde: agh_protocol::Envelope = serde_json::from_value(Value::Object(tree))
            .unwrap_or_else(|e| panic!("{name}: serde refuses a checked envelope: {e}"));
        // By JSON equality: serde reads `-0` in `ext` into the typed envelope as `0`, the view
        // keeps it as written (the same value).
        assert_eq!(
            agh_protocol::check::equality_key(&serde_json::to_value(&by_serde).unwrap()),
            agh_protocol::check::equality_key(&serde_json::to_value(&typed).unwrap()),
            "{name}: envelope"
        );
        // The message writes the bytes it holds; its tree is the input's.
        assert_eq!(owned.to_vec(), bytes, "{name}: to_vec");
        assert_eq!(
            serde_json::to_string(&owned.to_value()).unwrap(),
            serde_json::to_string(&read_checked(&bytes)).unwrap(),
            "{name}: to_value"
        );
        // Field by field against the view.
        let e = view.envelope();
        let o = &typed;
        assert_eq!(
            (&*e.id, &*e.from, &*e.kind),
            (o.id.as_str(), o.from.as_str(), o.kind.as_str()),
            "{name}"
        );
        assert_eq!(e.ts, *o.ts, "{name}");
        assert_eq!(
            e.to.as_deref(),
            o.to.as_deref().map(String::as_str),
            "{name}"
        );
        assert_eq!(
            e.work_id.as_deref(),
            o.work_id.as_deref().map(String::as_str),
            "{name}"
        );
        // The body, by serde from its text.
        let typed_body = owned.to_owned_body().unwrap().to_value().unwrap();
        assert_eq!(
            serde_body(view.kind(), &body_text),
            typed_body,
            "{name}: body"
        );
        // The borrowed body view (generated `BodyRef`) reads the same values as the typed body:
        // from the borrowed parse, the copied message and the message over shared bytes.
        let body_view = view.body();
        assert!(body_view.kind().is_some(), "{name}: a schema kind's view");
        assert_eq!(body_view, owned.body(), "{name}");
        assert_eq!(body_view, parsed.body(), "{name}");
        assert_eq!(body_view.raw().get(), body_text, "{name}");
        assert_eq!(
            serde_json::to_value(&body_view).unwrap(),
            typed_body,
            "{name}: body view"
        );
        checked += 1;
    }
    assert!(checked > 100, "{checked}");
}

#[test]
fn an_accepted_view_carries_the_members_and_the_body_text() {
    let bytes = br#"{"protocol":"agh-network/v0","id":"m\u0031","workspace_id":"ws","kind":"say","channel":"c","surface":"thread","thread_id":"t1","from":"a","to":null,"ts":1776366000,"body":{"text":"hi","x":[1,{"y":null}]},"ext":{"k":1}}"#;
    let m = parse_ref(bytes, &Options::at(NOW)).unwrap();
    let e = m.envelope();
    assert_eq!((m.id(), m.kind(), &*e.from), ("m1", "say", "a"));
    assert!(
        matches!(e.from, std::borrow::Cow::Borrowed(_)),
        "no escape: borrowed"
    );
    assert_eq!(e.to, None, "null reads as absent");
    assert_eq!(e.ts, 1_776_366_000);
    assert_eq!(m.body_json().get(), r#"{"text":"hi","x":[1,{"y":null}]}"#);
    assert_eq!(e.ext.map(|x| x.get()), Some(r#"{"k":1}"#));
    let owned = m.to_message();
    assert_eq!(owned.id(), "m1");
    let v = owned.to_value();
    assert_eq!(v["body"]["x"][1]["y"], Value::Null);
    assert_eq!(v["ext"]["k"], 1);
}

/// Declared members in any order, with white space, or with escaped names read as the same
/// envelope; a member repeated (right after itself, at the end, or after an escaped spelling) is
/// refused; undeclared members are refused in the closed envelope and kept in an open body. Both
/// paths agree on each: the cases a scanner that matches declared names on their bytes, in
/// schema order, must still get right.
#[test]
fn declared_members_in_any_order_spacing_or_spelling() {
    let body = r#"{"text":"hi","intent":"notice","artifacts":null,"x":1}"#;
    let members: Vec<(String, String)> = [
        ("protocol", r#""agh-network/v0""#),
        ("id", r#""m1""#),
        ("workspace_id", r#""ws""#),
        ("kind", r#""say""#),
        ("channel", r#""c""#),
        ("surface", r#""thread""#),
        ("thread_id", r#""t1""#),
        ("from", r#""a""#),
        ("to", "null"),
        ("ts", "1776366000"),
        ("body", body),
        ("ext", r#"{"k":1}"#),
    ]
    .iter()
    .map(|(n, v)| (format!("\"{n}\""), (*v).to_owned()))
    .collect();
    let write = |members: &[(String, String)], comma: &str, colon: &str| {
        let all: Vec<String> = members
            .iter()
            .map(|(n, v)| format!("{n}{colon}{v}"))
            .collect();
        format!("{{{}}}", all.join(comma)).into_bytes()
    };
    let view = |bytes: &[u8]| {
        parse_ref(bytes, &Options::at(NOW))
            .ok()
            .map(|m| m.to_message().to_value())
    };
    let reference = view(&write(&members, ",", ":")).expect("the compact envelope is valid");
    let check = |what: &str, bytes: &[u8], valid: bool| {
        agree(what, bytes, NOW);
        let text = String::from_utf8_lossy(bytes);
        assert_eq!(
            Registry::v0().fast_accepts(bytes, &Options::at(NOW)),
            valid,
            "{what}: {text}"
        );
        if valid {
            assert_eq!(view(bytes).as_ref(), Some(&reference), "{what}: {text}");
        }
    };
    // Another order: reversed, and each rotation.
    let mut reversed = members.clone();
    reversed.reverse();
    check("reversed", &write(&reversed, ",", ":"), true);
    for k in 1..members.len() {
        let mut rotated = members.clone();
        rotated.rotate_left(k);
        check("rotated", &write(&rotated, ",", ":"), true);
    }
    // White space around the names.
    for (comma, colon) in [(", ", ":"), (" ,", ":"), (",", " :"), (",\n\t", ": ")] {
        check("white space", &write(&members, comma, colon), true);
    }
    let mut spaced = write(&members, ",", ":");
    spaced.insert(1, b' ');
    check("white space after the brace", &spaced, true);
    // Each name escaped (its first letter as `\u00XX`), alone and all at once.
    let escape = |n: &str| format!("\"\\u{:04x}{}", u32::from(n.as_bytes()[1]), &n[2..]);
    let mut all_escaped = members.clone();
    for (i, (name, _)) in members.iter().enumerate() {
        let mut one = members.clone();
        one[i].0 = escape(name);
        all_escaped[i].0 = escape(name);
        check("one name escaped", &write(&one, ",", ":"), true);
    }
    check("every name escaped", &write(&all_escaped, ",", ":"), true);
    // A member repeated: right after itself (the second read by name), at the end, and after an
    // escaped first spelling (the second taken on its bytes, as the member expected next).
    for (i, member) in members.iter().enumerate() {
        let mut twice = members.clone();
        twice.insert(i + 1, member.clone());
        check("repeated right after", &write(&twice, ",", ":"), false);
        let mut at_end = members.clone();
        at_end.push(member.clone());
        check("repeated at the end", &write(&at_end, ",", ":"), false);
        if i > 0 {
            let mut escaped_first = members.clone();
            let mut first = member.clone();
            first.0 = escape(&first.0);
            escaped_first.insert(i - 1, first);
            check(
                "escaped, then repeated",
                &write(&escaped_first, ",", ":"),
                false,
            );
        }
    }
    // Undeclared members: refused in the (closed) envelope wherever they stand.
    for i in 0..=members.len() {
        let mut extra = members.clone();
        extra.insert(i, ("\"zz\"".into(), "1".into()));
        check("undeclared", &write(&extra, ",", ":"), false);
    }
    // The body (open): its members in another order, escaped, repeated, or undeclared ones
    // anywhere (kept in the view, so the reference is not compared: agreement only).
    let body_at = members.iter().position(|(n, _)| n == "\"body\"").unwrap();
    for (body, valid) in [
        (
            r#"{"intent":"notice","text":"hi","x":1,"artifacts":null}"#,
            true,
        ),
        (
            r#"{"x":1,"artifacts":null,"intent":"notice","t\u0065xt":"hi"}"#,
            true,
        ),
        (
            r#"{"text":"hi","text":"hi","intent":"notice","artifacts":null,"x":1}"#,
            false,
        ),
        (
            r#"{"text":"hi","intent":"notice","artifacts":null,"x":1,"text":"hi"}"#,
            false,
        ),
        (
            r#"{"t\u0065xt":"hi","intent":"notice","text":"hi","artifacts":null,"x":1}"#,
            false,
        ),
        (
            r#"{"text":"hi","intent":"notice","artifacts":null,"x":1,"x":1}"#,
            false,
        ),
        (
            r#"{"int\u0065nt":"notice","text":"hi","intent":"notice","artifacts":null}"#,
            false,
        ),
        (
            r#"{"text":"hi","x":1,"intent":"notice","x":2,"artifacts":null}"#,
            false,
        ),
        (
            r#"{"text":"hi","intent":"notice","artifacts":null,"x":1,"y":2}"#,
            true,
        ),
    ] {
        let mut m = members.clone();
        m[body_at].1 = body.to_owned();
        let bytes = write(&m, ",", ":");
        agree("body", &bytes, NOW);
        assert_eq!(
            Registry::v0().fast_accepts(&bytes, &Options::at(NOW)),
            valid,
            "{body}"
        );
    }
}

/// Valid envelopes of several kinds, as the mutation seeds.
fn seeds() -> Vec<Vec<u8>> {
    corpus()
        .into_iter()
        .filter(|(_, b, now)| Registry::v0().fast_accepts(b, &Options::at(*now)))
        .map(|(_, b, _)| b)
        .take(200)
        .collect()
}

/// Bytes that make interesting edits: structure, escapes, digits, white space, non-ASCII.
const ALPHABET: &[u8] = b"{}[],:\"\\ \t\n0123456789-+.eEtrufalsn_/xu\x00\x1f\x7f\xc3\xa9\xff";

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
    let at = |i: usize| i % bytes.len();
    match *edit {
        Edit::Replace(i, b) => {
            let i = at(i);
            bytes[i] = ALPHABET[b as usize % ALPHABET.len()];
        }
        Edit::Insert(i, b) => {
            let i = at(i);
            bytes.insert(i, ALPHABET[b as usize % ALPHABET.len()]);
        }
        Edit::Delete(i) => {
            let i = at(i);
            bytes.remove(i);
        }
        Edit::Splice(from, len, to) => {
            // Copy a run of the envelope elsewhere (duplicates members, nests values).
            let from = at(from);
            let end = (from + len % 40).min(bytes.len());
            let run = bytes[from..end].to_vec();
            let to = at(to);
            bytes.splice(to..to, run);
        }
    }
}

fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Replace(i, b)),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Edit::Insert(i, b)),
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), any::<usize>(), any::<usize>())
            .prop_map(|(a, b, c)| Edit::Splice(a, b, c)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn both_paths_agree_on_mutated_envelopes(
        seed in any::<prop::sample::Index>(),
        edits in prop::collection::vec(edit(), 1..4),
    ) {
        thread_local!(static SEEDS: Vec<Vec<u8>> = seeds());
        let mut bytes = SEEDS.with(|s| s[seed.index(s.len())].clone());
        for e in &edits {
            apply(&mut bytes, e);
        }
        agree("mutation", &bytes, NOW);
    }
}

/// Every generated named-type scanner declines exactly the values its validator finds a problem
/// in: on every value found in the stored inputs (fixtures, seed examples, digest vectors) and on
/// edits of them. Scanners that no envelope reaches (the capability catalog, for example) are
/// covered here too.
#[test]
fn every_named_scanner_agrees_with_its_validator() {
    use agh_protocol::generated::checks::NAMED_CHECKS;
    use agh_protocol::generated::scan::NAMED_SCANNERS;
    use agh_protocol::problem::Problems;
    use agh_protocol::scan::Scanner;

    let mut values = Vec::new();
    // The conformance fixtures and the seed examples (the fuzz corpora add volume, not shapes).
    for (name, bytes, _) in corpus() {
        if name.contains("fuzz/corpus") || name.contains("hostile") {
            continue;
        }
        if let Ok(v) = serde_json::from_slice::<Value>(&bytes) {
            all_values(&v, &mut values);
        }
    }
    for f in files(&root().join("protocol/tests/fixtures/digest/valid"))
        .into_iter()
        .chain(files(
            &root().join("protocol/tests/fixtures/digest/invalid"),
        ))
        .filter(|f| f.extension().is_some_and(|e| e == "json"))
    {
        let v: Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
        all_values(&v, &mut values);
    }
    values.sort_by_cached_key(Value::to_string);
    values.dedup();
    let cases = cases_from(&values);
    assert!(cases.len() > 5_000, "{}", cases.len());

    let depth = agh_protocol::json::JsonLimits::DEFAULT_MAX_DEPTH;
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

/// Issue #20's rules on both paths: non-blank text is "some character outside Unicode
/// White_Space" (U+0085 alone is blank, U+FEFF alone is not), a capability `summary` is one line,
/// and open content holds any JSON number while `ts` and `expires_at` keep their 64-bit range.
/// Every White_Space character, its ECMA-262 neighbours and each line break go through `say.text`,
/// the capability `summary` / `outcome` / `requirements`, alone and around text; every number
/// spelling goes into each open member and each typed integer member.
#[test]
fn both_paths_agree_on_white_space_line_breaks_and_numbers_in_open_content() {
    let say = r#"{"protocol":"agh-network/v0","id":"m1","workspace_id":"ws","kind":"say","channel":"c","surface":"thread","thread_id":"t1","from":"a","ts":1776366000,"body":{"text":@TEXT@,"artifacts":[{"type":"t","size":@N@}],"acme.n":@N@},"ext":{"acme.n":@N@,"acme.deep":[{"n":@N@}]}}"#;
    let trace = r#"{"protocol":"agh-network/v0","id":"m1","workspace_id":"ws","kind":"trace","channel":"c","surface":"thread","thread_id":"t1","from":"a","to":"b","work_id":"work_1","ts":1776366000,"body":{"state":"working","result":{"n":@N@,"list":[@N@,@N@]},"artifact_refs":[{"type":"t","n":@N@}]}}"#;
    let greet = r#"{"protocol":"agh-network/v0","id":"m1","workspace_id":"ws","kind":"greet","channel":"c","from":"a","ts":1776366000,"body":{"peer_card":{"peer_id":"a","profiles_supported":[],"capabilities":[],"artifacts_supported":[],"trust_modes_supported":[],"acme.n":@N@,"ext":{"acme.n":@N@}}}}"#;
    let typed = r#"{"protocol":"agh-network/v0","id":"m1","workspace_id":"ws","kind":"say","channel":"c","surface":"thread","thread_id":"t1","from":"a","ts":@TS@,"expires_at":@EXP@,"body":{"text":"hi"}}"#;
    let numbers = [
        "0",
        "-0",
        "1.0",
        "1e3",
        "18446744073709551615",
        "18446744073709551616",
        "-9223372036854775809",
        "123456789012345678901234567890",
        "1e400",
        "-1e400",
        "1E-400",
        "1.5e+308",
    ];
    let mut checked = 0;
    for n in numbers {
        for template in [say, trace, greet] {
            let text = template.replace("@TEXT@", r#""hi""#).replace("@N@", n);
            agree(n, text.as_bytes(), NOW);
            // Open content: any valid JSON number is accepted, whatever its size.
            assert!(
                Registry::v0().fast_accepts(text.as_bytes(), &Options::at(NOW)),
                "{n} in open content: {text}"
            );
            checked += 1;
        }
        for (ts, exp) in [(n, "1776366100"), ("1776366000", n)] {
            let text = typed.replace("@TS@", ts).replace("@EXP@", exp);
            agree(n, text.as_bytes(), NOW);
            agree(n, text.as_bytes(), i64::MAX);
            checked += 1;
        }
    }
    let mut spaces: Vec<char> = (0..=0x10_ffff_u32)
        .filter_map(char::from_u32)
        .filter(|c| c.is_whitespace())
        .collect();
    // Not White_Space, but white space to ECMA-262 `\s` or to other definitions.
    spaces.extend(['\u{feff}', '\u{180e}', '\u{200b}', '\u{1c}', '\u{1f}', 'x']);
    let capability = |summary: &str, outcome: &str, requirement: &str| {
        let mut doc = serde_json::json!({
            "id": "cap", "summary": summary, "outcome": outcome, "requirements": [requirement],
        });
        if let Ok(digest) = agh_protocol::digest::capability_digest(&doc) {
            doc["digest"] = Value::from(digest);
        }
        let envelope = serde_json::json!({
            "protocol": "agh-network/v0", "id": "m1", "workspace_id": "ws", "kind": "capability",
            "channel": "c", "surface": "thread", "thread_id": "t1", "from": "a", "ts": NOW,
            "body": { "capability": doc },
        });
        serde_json::to_vec(&envelope).unwrap()
    };
    for c in &spaces {
        for s in [
            c.to_string(),
            format!("{c}{c}"),
            format!("a{c}b"),
            format!("{c}a{c}"),
        ] {
            let blank = s.chars().all(char::is_whitespace);
            let say = say
                .replace("@TEXT@", &Value::from(s.as_str()).to_string())
                .replace("@N@", "1");
            agree(&s, say.as_bytes(), NOW);
            assert_eq!(
                Registry::v0().fast_accepts(say.as_bytes(), &Options::at(NOW)),
                !blank,
                "say text {s:?}"
            );
            let line_break = s.contains(['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}']);
            for (bytes, valid) in [
                (capability(&s, "o", "r"), !blank && !line_break),
                (capability("s", &s, "r"), !blank),
                (capability("s", "o", &s), !blank),
            ] {
                agree(&s, &bytes, NOW);
                assert_eq!(
                    Registry::v0().fast_accepts(&bytes, &Options::at(NOW)),
                    valid,
                    "{s:?} in {}",
                    String::from_utf8_lossy(&bytes)
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 300, "{checked}");
}

/// The envelope as the strict reader reads it (every number as written).
fn read_checked(bytes: &[u8]) -> Value {
    let limits = agh_protocol::json::JsonLimits::default();
    Value::Object(agh_protocol::json::read_envelope_json(bytes, &limits).expect("checked"))
}
