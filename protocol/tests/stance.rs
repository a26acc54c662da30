//! The stances a schema set declares on `x-agh-envelope` (issue 30 item 3): how an `integer` is
//! written (`integers`) and the deepest nesting (`max_depth`). AGH Network v0 and ACP declare
//! `"integers": "digits"` and `"max_depth": 64`; the test set `two-kinds` declares neither (only
//! `integer_bits: 64`: its integers fit 64 bits), so it
//! gets JSON Schema's semantics (`1.0`, `1e3` and `-0` are integers) and only the runtime's guard
//! against deep recursion (128 levels, the deepest nesting the owned message decodes). Both paths (scanner and validators) and the owned message
//! follow the setting.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use agh_protocol::json::MAX_SUPPORTED_DEPTH;
use agh_protocol::profile;
use serde_json::Value;

// Generated: not every table of the set is read here.
#[rustfmt::skip]
#[allow(dead_code)]
mod two_kinds;

use two_kinds::profile::{Profile as Two, SPEC as TWO};

/// A `ping` of the test set whose body is `body` (JSON text).
fn ping(body: &str) -> String {
    format!(r#"{{"protocol":"mini/v1","kind":"ping","from":"alice","to":"bob","body":{body}}}"#)
}

/// `{"a":[[...[0]...]]}`: an object holding `levels` nested arrays.
fn nested(levels: usize) -> String {
    format!(r#"{{"a":{}0{}}}"#, "[".repeat(levels), "]".repeat(levels))
}

#[test]
fn each_profile_declares_its_depth() {
    // No `max_depth`: the runtime's guard, the deepest nesting the owned message decodes.
    assert_eq!(TWO.max_depth, 128);
    const { assert!(TWO.max_depth <= MAX_SUPPORTED_DEPTH) };
    assert_eq!(TWO.options(0).max_depth, 128);
    assert_eq!(agh_protocol::Options::at(0).max_depth, 64);
}

#[test]
fn a_set_without_integers_digits_counts_integral_values_as_integers() {
    let options = TWO.options(0);
    // `grid` items and `spots` members are integers (minimum 0), `step` an integer multiple of 5.
    let body = r#"{"grid":[[0,1.0],[2e0,-0,4.000]],"spots":[{"x":1.0,"y":3e1}],"step":-1E1}"#;
    let text = ping(body);
    let message = profile::parse::<Two>(text.as_bytes(), &options).expect("valid");
    assert!(profile::explain::<Two>(text.as_bytes(), &options).is_empty());
    let Some(two_kinds::checks::KnownBody::Ping(p)) = message.to_owned_body().unwrap() else {
        panic!("a ping body")
    };
    // The typed body holds the values; the message writes them back as they came.
    assert_eq!(p.grid.clone().unwrap(), [vec![0, 1], vec![2, 0, 4]]);
    let spot = &p.spots.as_ref().unwrap()[0];
    assert_eq!((spot.x, spot.y), (1, 30));
    let written: Value = serde_json::from_slice(&message.to_vec()).unwrap();
    let y = written["body"]["spots"][0]["y"]
        .as_number()
        .unwrap()
        .as_str()
        .to_owned();
    assert_eq!(
        agh_protocol::json::decimal::integral_value(&y),
        Some(30),
        "{y}"
    );
    // A fraction is no integer, nor is a value beyond 64 bits (the generated type's range).
    for (bad, at) in [
        (r#"{"grid":[[0,1.5]]}"#, "/body/grid/0/1"),
        (
            r#"{"spots":[{"x":18446744073709551616,"y":0}]}"#,
            "/body/spots/0/x",
        ),
        (
            r#"{"spots":[{"x":1.8446744073709551616e19,"y":0}]}"#,
            "/body/spots/0/x",
        ),
    ] {
        let text = ping(bad);
        let refused = profile::parse::<Two>(text.as_bytes(), &options).unwrap_err();
        assert_eq!(refused.pointer, at, "{bad}");
        let problems = profile::explain::<Two>(text.as_bytes(), &options);
        assert_eq!(problems[0].pointer, at, "{bad}");
    }
}

#[test]
fn v0_with_integers_digits_refuses_other_spellings() {
    // `ts` is an integer written as digits only.
    let fixture = |rel: &str| -> Value {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../conformance/fixtures")
            .join(rel);
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    };
    let say = fixture("core.envelope/accept_say.json");
    let text = serde_json::to_string(&say["envelope"]).unwrap();
    let ts = say["envelope"]["ts"].as_i64().unwrap();
    let options = agh_protocol::Options::at(say["now"].as_i64().unwrap());
    assert!(agh_protocol::parse(text.as_bytes(), &options).is_ok());
    for spelled in [
        format!("{ts}.0"),
        format!("{ts}e0"),
        format!("{}e1", ts / 10),
    ] {
        let text = text.replace(&format!("\"ts\":{ts}"), &format!("\"ts\":{spelled}"));
        let refused = agh_protocol::parse(text.as_bytes(), &options).unwrap_err();
        assert_eq!(refused.pointer, "/ts", "{spelled}");
    }
}

#[test]
fn nesting_is_limited_by_max_depth_or_else_the_runtime_guard() {
    // Levels: the envelope 1, the body 2, the open member `extra` 3, the arrays in its member
    // `a` 4 on.
    let two = TWO.options(0);
    for (levels, ok) in [(61, true), (62, true), (125, true), (126, false)] {
        let text = ping(&format!(r#"{{"extra":{}}}"#, nested(levels)));
        let depth = levels + 3;
        let verdict = profile::parse::<Two>(text.as_bytes(), &two);
        assert_eq!(verdict.is_ok(), ok, "{depth} levels: {verdict:?}");
        if !ok {
            assert_eq!(
                verdict.unwrap_err().code,
                agh_protocol::ReasonCode::Malformed
            );
        }
        assert_eq!(
            profile::explain::<Two>(text.as_bytes(), &two).is_empty(),
            ok,
            "{depth}"
        );
    }
}

#[test]
fn v0_refuses_nesting_beyond_its_64_levels() {
    // The envelope 1, `ext` 2, the arrays in its member `acme.a` 3 on.
    let say: Value = serde_json::from_slice(
        &std::fs::read(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../conformance/fixtures/core.envelope/accept_say.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let options = agh_protocol::Options::at(say["now"].as_i64().unwrap());
    for (levels, ok) in [(62, true), (63, false)] {
        let mut envelope = say["envelope"].clone();
        envelope["ext"] = serde_json::json!({"acme.a": "NESTED"});
        let text = envelope.to_string().replace(
            r#""NESTED""#,
            &format!("{}0{}", "[".repeat(levels), "]".repeat(levels)),
        );
        assert_eq!(
            agh_protocol::parse(text.as_bytes(), &options).is_ok(),
            ok,
            "{levels}"
        );
    }
}
