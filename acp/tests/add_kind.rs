//! `docs/guides/add-an-acp-kind.md`, performed and run. The guide's edits, kept as data in
//! `codegen/tests/fixtures/acp-add-kind/edits.json` (held to the guide's text by
//! `codegen/tests/add_kind.rs`), are applied over `schemas/acp-v0.2` by `cargo xtask codegen`,
//! which writes the edited set's code into `tests/acp_with_progress/` (`--check` keeps it fresh). This test
//! mounts that code as a module: it must compile against the runtime as it is, with no Rust
//! edited, and the new kind must then parse, be refused with the member's pointer, and be routed
//! through an inbox as the guide says.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;
// Generated: not every table of the set is read here.
#[rustfmt::skip]
#[allow(dead_code, unused_imports)]
mod acp_with_progress;

use acp_with_progress::checks::KnownBody;
use acp_with_progress::profile::Profile as Edited;
use agh_runtime::correlation::Outcome;
use agh_runtime::inbox::{Inbox, Verdict};
use agh_runtime::profile as runtime;
use agh_runtime::ReasonCode;
use common::{FAMILY, KIT, NOW};
use serde_json::{json, Value};

const NOW_MS: i64 = NOW * 1000;

/// The guide's example line (`progress` from the Family Agent to Kit, 40 %).
fn progress(percent: Value, reference: &str) -> Value {
    json!({
        "v": 1, "id": "0f8fad5b-d9cb-469f-a165-70867728950e", "from": FAMILY, "to": KIT,
        "ts": NOW_MS, "kind": "progress", "ref": reference, "payload": {"percent": percent},
    })
}

fn bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

#[test]
fn an_envelope_of_the_new_kind_parses_into_its_generated_type() {
    let line = progress(json!(40), &common::id(1));
    let options = acp_with_progress::profile::SPEC.options(NOW);
    let message = runtime::parse::<Edited>(&bytes(&line), &options).expect("valid");
    assert_eq!(message.kind(), "progress");
    match message.to_owned_body().expect("typed") {
        Some(KnownBody::Progress(p)) => {
            assert_eq!(p.percent, 40);
            assert!(p.note.is_none());
        }
        other => panic!("not a progress body: {other:?}"),
    }
    // The fast path takes it too, and the owned message writes the same members back.
    assert!(runtime::fast_accepts::<Edited>(&bytes(&line), &options));
    assert_eq!(message.to_value(), line);
    // The unedited profile refuses the same line as an unknown kind (`error` `unknown_kind`);
    // once a maintainer has performed the guide on `schemas/acp-v0.2` itself, it takes it alike.
    let before = agh_acp::parse(&bytes(&line), &agh_acp::options(NOW));
    if agh_acp::SPEC.kind("progress").is_none() {
        let before = before.unwrap_err();
        assert_eq!(
            (before.code, before.pointer.as_str()),
            (ReasonCode::UnsupportedKind, "/kind")
        );
    } else {
        assert_eq!(before.unwrap().to_value(), line);
    }
}

#[test]
fn the_new_kinds_rules_are_enforced_with_pointer_and_reason() {
    let options = acp_with_progress::profile::SPEC.options(NOW);
    for (percent, valid) in [
        (json!(0), true),
        (json!(100), true),
        (json!(101), false),
        (json!(-1), false),
        (json!(40.5), false),
        (json!("40"), false),
        (json!(null), false),
    ] {
        let line = bytes(&progress(percent.clone(), &common::id(1)));
        let parsed = runtime::parse::<Edited>(&line, &options);
        // The scanner and the validator decide alike.
        assert_eq!(
            runtime::fast_accepts::<Edited>(&line, &options),
            valid,
            "{percent}"
        );
        assert_eq!(
            runtime::explain::<Edited>(&line, &options).is_empty(),
            valid,
            "{percent}"
        );
        match (parsed, valid) {
            (Ok(_), true) => {}
            (Err(r), false) => {
                assert_eq!(
                    (r.code, r.pointer.as_str()),
                    (ReasonCode::Malformed, "/payload/percent"),
                    "{percent}: {r:?}"
                );
            }
            (other, _) => panic!("{percent}: {other:?}"),
        }
    }
    // The note is non-blank text; the payload is required; `ref` is required.
    let mut blank = progress(json!(5), &common::id(1));
    blank["payload"]["note"] = json!("  ");
    let r = runtime::parse::<Edited>(&bytes(&blank), &options).unwrap_err();
    assert_eq!(r.pointer, "/payload/note");
    let mut bare = progress(json!(5), &common::id(1));
    bare.as_object_mut().unwrap().remove("payload");
    let r = runtime::parse::<Edited>(&bytes(&bare), &options).unwrap_err();
    assert_eq!(r.pointer, "/payload");
    let mut no_ref = progress(json!(5), &common::id(1));
    no_ref["ref"] = Value::Null;
    let r = runtime::parse::<Edited>(&bytes(&no_ref), &options).unwrap_err();
    assert_eq!(r.pointer, "/ref");
    // Unknown payload members are ignored.
    let mut extra = progress(json!(5), &common::id(1));
    extra["payload"]["eta_ms"] = json!(1000);
    runtime::parse::<Edited>(&bytes(&extra), &options).expect("unknown members ignored");
}

/// An envelope of the edited set between Kit and the Family Agent.
fn envelope(n: u32, from: &str, kind: &str, reference: Option<&str>, payload: Value) -> Value {
    let to = if from == KIT { FAMILY } else { KIT };
    json!({
        "v": 1, "id": common::id(n), "from": from, "to": to, "ts": NOW_MS + i64::from(n),
        "kind": kind, "ref": reference, "payload": payload,
    })
}

#[test]
fn the_inbox_routes_the_new_kind_by_the_new_reply_rule() {
    let mut kit: Inbox<Edited> = Inbox::new(KIT);
    let delegate = envelope(
        1,
        KIT,
        "delegate",
        None,
        json!({"task": "Book the pool", "report_back": true}),
    );
    let d = common::id(1);
    kit.send(&bytes(&delegate), NOW_MS).expect("sent");
    // Before the ack, no rule takes a progress.
    let early = envelope(2, FAMILY, "progress", Some(&d), json!({"percent": 10}));
    let refused = kit.receive(&bytes(&early), NOW_MS);
    assert_eq!(
        refused.refusal().map(|r| (r.refusal, r.code)),
        Some(("unexpected_reply", Some("unexpected_reply")))
    );
    let ack = envelope(3, FAMILY, "ack", Some(&d), json!({"accepted": true}));
    assert!(matches!(
        kit.receive(&bytes(&ack), NOW_MS),
        Verdict::Delivered {
            correlation: Outcome::Answered { to: "working", .. },
            ..
        }
    ));
    for n in [4, 5] {
        let p = envelope(n, FAMILY, "progress", Some(&d), json!({"percent": 40}));
        match kit.receive(&bytes(&p), NOW_MS) {
            Verdict::Delivered {
                message,
                correlation,
            } => {
                assert!(matches!(
                    message.to_owned_body().expect("typed"),
                    Some(KnownBody::Progress(_))
                ));
                assert_eq!(
                    correlation,
                    Outcome::Answered {
                        request_id: d.clone(),
                        request_kind: "delegate",
                        from: "working",
                        to: "working",
                        settled: false,
                    }
                );
            }
            Verdict::Refused(r) => panic!("refused: {r}"),
        }
    }
    let result = envelope(
        6,
        FAMILY,
        "result",
        Some(&d),
        json!({"status": "completed", "outcome": "Booked"}),
    );
    assert!(matches!(
        kit.receive(&bytes(&result), NOW_MS),
        Verdict::Delivered {
            correlation: Outcome::Answered { settled: true, .. },
            ..
        }
    ));
    // After the result: the exchange is over.
    let late = envelope(7, FAMILY, "progress", Some(&d), json!({"percent": 100}));
    assert_eq!(
        kit.receive(&bytes(&late), NOW_MS)
            .refusal()
            .map(|r| r.refusal),
        Some("already_answered")
    );
    // A progress to a query: not a reply a query takes.
    let query = envelope(8, KIT, "query", None, json!({"question": "When?"}));
    kit.send(&bytes(&query), NOW_MS).expect("sent");
    let wrong = envelope(
        9,
        FAMILY,
        "progress",
        Some(&common::id(8)),
        json!({"percent": 1}),
    );
    assert_eq!(
        kit.receive(&bytes(&wrong), NOW_MS)
            .refusal()
            .map(|r| r.refusal),
        Some("unexpected_reply")
    );
}
