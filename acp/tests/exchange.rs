//! The draft's correlation semantics, end to end between two agents' inboxes: every request
//! kind and its replies, the refusals (with the profile's `error` codes), deadlines, and unknown
//! kinds answered with `error` code `unknown_kind`.

#![allow(clippy::unwrap_used)]

mod common;

use agh_acp::{error_reply, Correlation, Inbox, Verdict};
use common::{FAMILY, KIT, NOW};
use serde_json::{json, Value};

const NOW_MS: i64 = NOW * 1000;

/// Two agents, each with its inbox; a message goes from one to the other as bytes.
struct Pair {
    kit: Inbox,
    family: Inbox,
    serial: u32,
    clock: i64,
}

impl Pair {
    fn new() -> Self {
        Pair {
            kit: Inbox::new(KIT),
            family: Inbox::new(FAMILY),
            serial: 0,
            clock: NOW_MS,
        }
    }

    /// A whole envelope from `from`, with a fresh id, 10 ms after the previous one.
    fn envelope(
        &mut self,
        from: &str,
        kind: &str,
        reference: Option<&str>,
        payload: Option<Value>,
    ) -> Value {
        self.serial += 1;
        self.clock += 10;
        let to = if from == KIT { FAMILY } else { KIT };
        let mut e = json!({
            "v": 1, "id": common::id(self.serial), "from": from, "to": to,
            "ts": self.clock, "kind": kind, "ref": reference,
        });
        if let Some(p) = payload {
            e["payload"] = p;
        }
        e
    }

    /// Sends `e` from its sender's inbox to the other's; returns the receiver's verdict. The
    /// sender's own record must accept it.
    fn deliver(&mut self, e: &Value) -> Verdict {
        let bytes = serde_json::to_vec(e).expect("json");
        let (sender, receiver) = match e["from"].as_str() {
            Some(KIT) => (&mut self.kit, &mut self.family),
            _ => (&mut self.family, &mut self.kit),
        };
        sender
            .send(&bytes, self.clock)
            .unwrap_or_else(|r| panic!("the sender refused its own {e}: {r}"));
        receiver.receive(&bytes, self.clock)
    }

    /// Like [`Pair::deliver`], without the sender's record (a misbehaving or restarted peer);
    /// Kit receives what is not addressed to the Family Agent.
    fn inject(&mut self, e: &Value) -> Verdict {
        let bytes = serde_json::to_vec(e).expect("json");
        let receiver = match e["to"].as_str() {
            Some(FAMILY) => &mut self.family,
            _ => &mut self.kit,
        };
        receiver.receive(&bytes, self.clock)
    }
}

fn id_of(e: &Value) -> String {
    e["id"].as_str().expect("id").to_owned()
}

#[track_caller]
fn delivered(v: Verdict) -> Correlation {
    match v {
        Verdict::Delivered { correlation, .. } => correlation,
        Verdict::Refused(r) => panic!("refused: {r}"),
    }
}

#[track_caller]
fn settled(v: Verdict) {
    match delivered(v) {
        Correlation::Answered { settled: true, .. } => {}
        other => panic!("not settled: {other:?}"),
    }
}

/// The refusal's runtime name and the profile's `error` code.
#[track_caller]
fn refused(v: Verdict) -> (&'static str, &'static str, String) {
    match v {
        Verdict::Refused(r) => (r.refusal, r.code.unwrap_or("-"), r.message),
        Verdict::Delivered { message, .. } => panic!("delivered: {message:?}"),
    }
}

#[test]
fn ping_query_discover_are_answered_once() {
    for (request, reply, payload) in [
        ("ping", "pong", json!({"status": "idle"})),
        ("query", "response", json!({"summary": "Three practices"})),
        ("discover", "capabilities", json!({"domains": ["family"]})),
    ] {
        let mut p = Pair::new();
        let body = (request == "query").then(|| json!({"question": "When is swim?"}));
        let req = p.envelope(KIT, request, None, body);
        assert!(matches!(
            delivered(p.deliver(&req)),
            Correlation::Opened { awaiting: true, .. }
        ));
        let answer = p.envelope(FAMILY, reply, Some(&id_of(&req)), Some(payload.clone()));
        settled(p.deliver(&answer));
        // A second answer: the exchange is over.
        let again = p.envelope(FAMILY, reply, Some(&id_of(&req)), Some(payload));
        let (refusal, code, message) = refused(p.inject(&again));
        assert_eq!(
            (refusal, code),
            ("already_answered", "already_answered"),
            "{request}"
        );
        assert!(message.contains(&id_of(&req)), "{message}");
    }
}

#[test]
fn a_reply_of_the_wrong_kind_is_an_unexpected_reply() {
    let mut p = Pair::new();
    let query = p.envelope(KIT, "query", None, Some(json!({"question": "When?"})));
    delivered(p.deliver(&query));
    let pong = p.envelope(
        FAMILY,
        "pong",
        Some(&id_of(&query)),
        Some(json!({"status": "busy"})),
    );
    let (refusal, code, message) = refused(p.inject(&pong));
    assert_eq!((refusal, code), ("unexpected_reply", "unexpected_reply"));
    assert!(message.contains("does not answer a `query`"), "{message}");
    // The sender's own inbox refuses to send it, too.
    let bytes = serde_json::to_vec(&pong).expect("json");
    assert_eq!(
        p.family.send(&bytes, p.clock).unwrap_err().refusal,
        "unexpected_reply"
    );
}

#[test]
fn a_reply_to_nothing_is_unknown_ref() {
    let mut p = Pair::new();
    let pong = p.envelope(
        FAMILY,
        "pong",
        Some(&common::id(999)),
        Some(json!({"status": "idle"})),
    );
    let (refusal, code, message) = refused(p.inject(&pong));
    assert_eq!((refusal, code), ("unknown_request", "unknown_ref"));
    assert!(message.contains("`ref`"), "names the member: {message}");
}

#[test]
fn a_reply_from_a_third_agent_is_not_authorized() {
    let mut p = Pair::new();
    let ping = p.envelope(KIT, "ping", None, None);
    delivered(p.deliver(&ping));
    let mut pong = p.envelope(
        FAMILY,
        "pong",
        Some(&id_of(&ping)),
        Some(json!({"status": "idle"})),
    );
    pong["from"] = json!("fedcba9876543210");
    let (refusal, code, _) = refused(p.inject(&pong));
    assert_eq!((refusal, code), ("wrong_peer", "not_authorized"));
}

#[test]
fn delegate_with_report_back_takes_ack_then_result() {
    let mut p = Pair::new();
    let task = json!({"task": "Tell the family I am late", "report_back": true});
    let delegate = p.envelope(KIT, "delegate", None, Some(task));
    delivered(p.deliver(&delegate));
    let d = id_of(&delegate);
    let ack = p.envelope(
        FAMILY,
        "ack",
        Some(&d),
        Some(json!({"accepted": true, "estimated_ms": 5000})),
    );
    assert!(matches!(
        delivered(p.deliver(&ack)),
        Correlation::Answered {
            to: "working",
            settled: false,
            ..
        }
    ));
    // A second ack is not what a working delegation takes.
    let ack2 = p.envelope(FAMILY, "ack", Some(&d), Some(json!({"accepted": true})));
    assert_eq!(refused(p.inject(&ack2)).0, "unexpected_reply");
    let result = p.envelope(
        FAMILY,
        "result",
        Some(&d),
        Some(json!({"status": "completed", "outcome": "Sent", "error": null})),
    );
    settled(p.deliver(&result));
    assert_eq!(
        p.kit.correlator().get(KIT, &d).map(|t| t.state),
        Some("answered")
    );
}

#[test]
fn a_result_may_overtake_its_ack() {
    let mut p = Pair::new();
    let delegate = p.envelope(
        KIT,
        "delegate",
        None,
        Some(json!({"task": "t", "report_back": true})),
    );
    delivered(p.deliver(&delegate));
    let d = id_of(&delegate);
    let result = p.envelope(
        FAMILY,
        "result",
        Some(&d),
        Some(json!({"status": "completed", "outcome": "done"})),
    );
    assert!(matches!(
        delivered(p.deliver(&result)),
        Correlation::Answered {
            to: "reported",
            settled: false,
            ..
        }
    ));
    let ack = p.envelope(FAMILY, "ack", Some(&d), Some(json!({"accepted": true})));
    settled(p.deliver(&ack));
}

#[test]
fn delegate_without_report_back_ends_with_the_ack_and_takes_no_result() {
    let mut p = Pair::new();
    let delegate = p.envelope(KIT, "delegate", None, Some(json!({"task": "t"})));
    delivered(p.deliver(&delegate));
    let d = id_of(&delegate);
    let ack = p.envelope(FAMILY, "ack", Some(&d), Some(json!({"accepted": true})));
    settled(p.deliver(&ack));
    let result = p.envelope(
        FAMILY,
        "result",
        Some(&d),
        Some(json!({"status": "completed", "outcome": "x"})),
    );
    assert_eq!(refused(p.inject(&result)).0, "already_answered");
}

#[test]
fn a_refused_delegation_may_still_carry_its_error() {
    let mut p = Pair::new();
    let delegate = p.envelope(
        KIT,
        "delegate",
        None,
        Some(json!({"task": "t", "report_back": true})),
    );
    delivered(p.deliver(&delegate));
    let d = id_of(&delegate);
    let ack = p.envelope(FAMILY, "ack", Some(&d), Some(json!({"accepted": false})));
    assert!(matches!(
        delivered(p.deliver(&ack)),
        Correlation::Answered {
            to: "refused",
            settled: true,
            ..
        }
    ));
    let result = p.envelope(
        FAMILY,
        "result",
        Some(&d),
        Some(json!({"status": "completed", "outcome": "x"})),
    );
    assert_eq!(refused(p.inject(&result)).0, "unexpected_reply");
    let error = p.envelope(
        FAMILY,
        "error",
        Some(&d),
        Some(json!({"code": "overloaded", "message": "Four tasks already", "retryable": true})),
    );
    settled(p.deliver(&error));
}

#[test]
fn cancel_names_a_delegation_and_is_acked_on_its_own() {
    let mut p = Pair::new();
    let delegate = p.envelope(
        KIT,
        "delegate",
        None,
        Some(json!({"task": "t", "report_back": true})),
    );
    delivered(p.deliver(&delegate));
    let d = id_of(&delegate);
    let cancel = p.envelope(
        KIT,
        "cancel",
        Some(&d),
        Some(json!({"reason": "Plans changed"})),
    );
    assert!(matches!(
        delivered(p.deliver(&cancel)),
        Correlation::Opened { refers_to: Some(ref r), .. } if *r == d
    ));
    let ack = p.envelope(
        FAMILY,
        "ack",
        Some(&id_of(&cancel)),
        Some(json!({"accepted": true})),
    );
    settled(p.deliver(&ack));
    // The delegation goes on: its own ack and `cancelled` error are still taken.
    let error = p.envelope(
        FAMILY,
        "error",
        Some(&d),
        Some(json!({"code": "cancelled", "message": "Cancelled as asked"})),
    );
    settled(p.deliver(&error));
    // Cancelling a delegation that is over is still a cancel (best-effort); cancelling what is
    // not a delegation is refused.
    let late = p.envelope(KIT, "cancel", Some(&d), None);
    assert!(matches!(
        delivered(p.deliver(&late)),
        Correlation::Opened { awaiting: true, refers_to: Some(ref r), .. } if *r == d
    ));
    let ping = p.envelope(KIT, "ping", None, None);
    delivered(p.deliver(&ping));
    let wrong = p.envelope(KIT, "cancel", Some(&id_of(&ping)), None);
    let (refusal, code, message) = refused(p.inject(&wrong));
    assert_eq!((refusal, code), ("unknown_request", "unknown_ref"));
    assert!(message.contains("`ping`"), "{message}");
}

#[test]
fn notify_awaits_nothing_but_may_draw_an_error() {
    let mut p = Pair::new();
    let notify = p.envelope(KIT, "notify", None, Some(json!({"topic": "hans.location"})));
    assert!(matches!(
        delivered(p.deliver(&notify)),
        Correlation::Opened {
            awaiting: false,
            deadline_ms: None,
            ..
        }
    ));
    let error = p.envelope(
        FAMILY,
        "error",
        Some(&id_of(&notify)),
        Some(json!({"code": "unknown_domain", "message": "No such topic here"})),
    );
    settled(p.deliver(&error));
}

#[test]
fn the_query_deadline_defaults_to_thirty_seconds() {
    let mut p = Pair::new();
    let query = p.envelope(KIT, "query", None, Some(json!({"question": "When?"})));
    let sent_at = query["ts"].as_i64().expect("ts");
    match delivered(p.deliver(&query)) {
        Correlation::Opened { deadline_ms, .. } => assert_eq!(deadline_ms, Some(sent_at + 30_000)),
        other => panic!("{other:?}"),
    }
    assert!(p.kit.expire(sent_at + 30_000).is_empty());
    let timed_out = p.kit.expire(sent_at + 30_001);
    assert_eq!(timed_out.len(), 1);
    assert_eq!(
        (timed_out[0].kind, timed_out[0].request_id.as_str()),
        ("query", id_of(&query).as_str())
    );
    let late = p.envelope(
        FAMILY,
        "response",
        Some(&id_of(&query)),
        Some(json!({"summary": "Late"})),
    );
    let (refusal, _, message) = refused(p.inject(&late));
    assert_eq!(refusal, "already_answered");
    assert!(message.contains("deadline passed"), "{message}");
}

#[test]
fn an_unknown_kind_is_answered_with_error_unknown_kind() {
    let mut p = Pair::new();
    let handshake = p.envelope(KIT, "handshake", None, Some(json!({"versions": [1, 2]})));
    let verdict = p.inject(&handshake);
    let Verdict::Refused(refusal) = verdict else {
        panic!("delivered an unknown kind");
    };
    assert_eq!(
        (refusal.refusal, refusal.code),
        ("unsupported_kind", Some("unknown_kind"))
    );
    assert_eq!(refusal.pointer, "/kind");
    let reply = error_reply(&refusal, FAMILY, &common::id(500), p.clock)
        .expect("a valid error envelope")
        .expect("an answer goes out");
    let v = reply.to_value();
    assert_eq!(v["kind"], "error");
    assert_eq!(v["to"], KIT);
    assert_eq!(v["ref"], handshake["id"]);
    assert_eq!(v["payload"]["code"], "unknown_kind");
    assert!(
        v["payload"]["message"]
            .as_str()
            .unwrap_or("")
            .contains("/kind"),
        "{v}"
    );
    // The Family Agent records what it sends; Kit's inbox takes the error although the
    // `handshake` opened no exchange: an `error` "can be sent at any time for any ref"
    // (`x-agh-kind.answers_any`), and it moves nothing.
    let bytes = reply.to_vec();
    assert_eq!(p.family.send(&bytes, p.clock), Ok(Correlation::Unrelated));
    match p.kit.receive(&bytes, p.clock) {
        Verdict::Delivered { correlation, .. } => assert_eq!(correlation, Correlation::Unrelated),
        Verdict::Refused(r) => panic!("the unknown_kind error was refused: {r}"),
    }
    assert!(p.kit.correlator().is_empty());
}

#[test]
fn an_error_about_a_malformed_reply_is_recorded_and_delivered() {
    let mut p = Pair::new();
    let ping = p.envelope(KIT, "ping", None, None);
    delivered(p.deliver(&ping));
    // The Family Agent's pong has a status no schema allows: Kit refuses it...
    let bad = p.envelope(
        FAMILY,
        "pong",
        Some(&id_of(&ping)),
        Some(json!({"status": "asleep"})),
    );
    let Verdict::Refused(refusal) = p.inject(&bad) else {
        panic!("accepted a bad pong");
    };
    assert_eq!(refusal.pointer, "/payload/status");
    // ...and answers it with an `error` naming the pong, which its own inbox records...
    let reply = error_reply(&refusal, KIT, &common::id(600), p.clock)
        .expect("valid")
        .expect("an answer goes out");
    let bytes = reply.to_vec();
    assert_eq!(p.kit.send(&bytes, p.clock), Ok(Correlation::Unrelated));
    // ...and the Family Agent's inbox delivers.
    match p.family.receive(&bytes, p.clock) {
        Verdict::Delivered { correlation, .. } => assert_eq!(correlation, Correlation::Unrelated),
        Verdict::Refused(r) => panic!("refused: {r}"),
    }
    // The ping is still awaiting its pong: the error named the pong, not the ping.
    assert_eq!(
        p.kit.correlator().get(KIT, &id_of(&ping)).map(|t| t.state),
        Some("open")
    );
    let pong = p.envelope(
        FAMILY,
        "pong",
        Some(&id_of(&ping)),
        Some(json!({"status": "idle"})),
    );
    settled(p.deliver(&pong));
    // An error after the exchange is over ends nothing, and is not refused.
    let late = p.envelope(
        FAMILY,
        "error",
        Some(&id_of(&ping)),
        Some(json!({"code": "internal", "message": "Late"})),
    );
    assert_eq!(delivered(p.deliver(&late)), Correlation::Unrelated);
}

#[test]
fn a_delegation_acked_without_report_back_can_still_be_cancelled() {
    let mut p = Pair::new();
    let delegate = p.envelope(KIT, "delegate", None, Some(json!({"task": "t"})));
    delivered(p.deliver(&delegate));
    let d = id_of(&delegate);
    let ack = p.envelope(FAMILY, "ack", Some(&d), Some(json!({"accepted": true})));
    settled(p.deliver(&ack));
    // Best-effort: the task may be done or still running; the cancel is taken and acked.
    let cancel = p.envelope(
        KIT,
        "cancel",
        Some(&d),
        Some(json!({"reason": "No longer needed"})),
    );
    assert!(matches!(
        delivered(p.deliver(&cancel)),
        Correlation::Opened { awaiting: true, refers_to: Some(ref r), .. } if *r == d
    ));
    let ack = p.envelope(
        FAMILY,
        "ack",
        Some(&id_of(&cancel)),
        Some(json!({"accepted": false})),
    );
    settled(p.deliver(&ack));
}

#[test]
fn a_result_may_arrive_much_later_than_the_retention() {
    let mut p = Pair::new();
    let delegate = p.envelope(
        KIT,
        "delegate",
        None,
        Some(json!({"task": "t", "report_back": true})),
    );
    delivered(p.deliver(&delegate));
    let d = id_of(&delegate);
    let ack = p.envelope(FAMILY, "ack", Some(&d), Some(json!({"accepted": true})));
    delivered(p.deliver(&ack));
    // Three hours pass (no deadline_ms: the sender waits for the result as long as it takes).
    p.clock += 3 * 3_600_000;
    assert!(p.kit.expire(p.clock).is_empty());
    assert!(p.family.expire(p.clock).is_empty());
    let result = p.envelope(
        FAMILY,
        "result",
        Some(&d),
        Some(json!({"status": "completed", "outcome": "Sent"})),
    );
    settled(p.deliver(&result));
    // Settled, it is forgotten one retention later.
    p.clock += agh_runtime::correlation::Correlator::DEFAULT_RETENTION_MS + 1;
    p.kit.expire(p.clock);
    assert!(p.kit.correlator().get(KIT, &d).is_none());
}

#[test]
fn error_replies_never_answer_errors_and_need_a_readable_sender() {
    let mut p = Pair::new();
    // A malformed error (no payload code): refused, but not answered.
    let bad = p.envelope(
        KIT,
        "error",
        Some(&common::id(7)),
        Some(json!({"message": "x"})),
    );
    let Verdict::Refused(r) = p.inject(&bad) else {
        panic!("accepted");
    };
    assert_eq!(
        (r.refusal, r.pointer.as_str()),
        ("malformed", "/payload/code")
    );
    assert!(error_reply(&r, FAMILY, &common::id(8), p.clock)
        .expect("ok")
        .is_none());
    // An unreadable id: the answer's `ref` is null ("can be sent at any time for any ref").
    let mut no_id = p.envelope(KIT, "ping", None, None);
    no_id["id"] = json!("not-a-uuid");
    let Verdict::Refused(r) = p.inject(&no_id) else {
        panic!("accepted");
    };
    assert_eq!(r.code, Some("malformed"));
    let reply = error_reply(&r, FAMILY, &common::id(9), p.clock)
        .expect("ok")
        .expect("sent");
    assert_eq!(reply.to_value()["ref"], Value::Null);
    // A bad local id is the caller's error, named by member.
    let e = error_reply(&r, "Not-Hex", &common::id(10), p.clock).unwrap_err();
    assert_eq!(e.pointer, "/from");
}

#[test]
fn duplicates_and_misaddressed_messages_are_refused_before_correlation() {
    let mut p = Pair::new();
    let ping = p.envelope(KIT, "ping", None, None);
    delivered(p.deliver(&ping));
    assert_eq!(refused(p.inject(&ping)).0, "duplicate");
    let mut elsewhere = p.envelope(FAMILY, "ping", None, None);
    elsewhere["to"] = json!("fedcba9876543210");
    let (refusal, code, _) = refused(p.inject(&elsewhere));
    assert_eq!((refusal, code), ("not_target", "not_target"));
    // The same id from another sender is another message.
    let mut other = ping.clone();
    other["from"] = json!("fedcba9876543210");
    delivered(p.inject(&other));
}

#[test]
fn new_ids_are_version_4_uuids_the_schema_accepts() {
    let a = agh_acp::new_id().expect("random");
    let b = agh_acp::new_id().expect("random");
    assert_ne!(a, b);
    assert_eq!(&a[14..15], "4");
    let mut e = common::envelope("ping", None, None);
    e["id"] = json!(a);
    let bytes = serde_json::to_vec(&e).expect("json");
    agh_acp::parse(&bytes, &agh_acp::options(NOW)).expect("valid id");
}

#[test]
fn ids_from_one_seed_are_distinct_version_4_uuids_the_schema_accepts() {
    let ids = agh_acp::Ids::new().expect("random");
    let other = agh_acp::Ids::new().expect("random");
    let mut seen = std::collections::HashSet::new();
    for _ in 0..1_000 {
        let id = ids.next_id();
        assert_eq!(id.len(), 36, "{id}");
        assert_eq!(&id[14..15], "4", "version 4: {id}");
        assert!(
            matches!(&id[19..20], "8" | "9" | "a" | "b"),
            "variant: {id}"
        );
        assert!(seen.insert(id.clone()), "repeated: {id}");
        assert!(seen.insert(other.next_id()), "two seeds met");
        let mut e = common::envelope("ping", None, None);
        e["id"] = json!(id);
        let bytes = serde_json::to_vec(&e).expect("json");
        agh_acp::parse(&bytes, &agh_acp::options(NOW)).expect("valid id");
    }
}

#[test]
fn error_reply_writes_a_valid_error_for_every_refusal_code() {
    use agh_runtime::Head;
    // Every runtime refusal the profile spells (`x-agh-refusal-codes`), and one it does not.
    let mut refusals: Vec<(&'static str, Option<&'static str>)> = agh_acp::REFUSAL_CODES
        .iter()
        .map(|r| (r.refusal, Some(r.code)))
        .collect();
    assert!(refusals.len() >= 10, "{refusals:?}");
    refusals.push(("not_listed_here", None));
    let options = agh_acp::options(NOW);
    for (n, (name, code)) in refusals.into_iter().enumerate() {
        let refusal = agh_acp::Refusal {
            refusal: name,
            code,
            pointer: "/payload/question".into(),
            message: "what is wrong".into(),
            head: Box::new(Head {
                id: Some(common::id(1)),
                from: Some(KIT.into()),
                kind: Some("query".into()),
                ..Head::default()
            }),
        };
        let n = u32::try_from(n).expect("few");
        let reply = error_reply(&refusal, FAMILY, &common::id(700 + n), NOW_MS)
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .expect("an answer goes out");
        // The generated validator (the exact path) finds nothing wrong with it.
        let bytes = reply.to_vec();
        let problems = agh_acp::explain(&bytes, &options);
        assert!(problems.is_empty(), "{name}: {problems:?}");
        let v: Value = serde_json::from_slice(&bytes).expect("json");
        let want = code.unwrap_or(name);
        assert_eq!(
            (v["kind"].as_str(), v["payload"]["code"].as_str()),
            (Some("error"), Some(want)),
            "{v}"
        );
        assert_eq!(v["ref"], json!(common::id(1)));
        assert_eq!(
            (v["from"].as_str(), v["to"].as_str()),
            (Some(FAMILY), Some(KIT))
        );
        assert_eq!(v["payload"]["message"], "/payload/question: what is wrong");
        assert!(matches!(
            reply.to_owned_body().expect("typed"),
            Some(agh_acp::KnownBody::Error(p)) if p.code.as_str() == want && !p.retryable
        ));
    }
}

#[test]
fn error_reply_names_the_payload_member_it_cannot_write() {
    use agh_runtime::Head;
    let refusal = agh_acp::Refusal {
        refusal: "Not A Code",
        code: None,
        pointer: String::new(),
        message: "x".into(),
        head: Box::new(Head {
            id: Some(common::id(1)),
            from: Some(KIT.into()),
            kind: Some("query".into()),
            ..Head::default()
        }),
    };
    let e = error_reply(&refusal, FAMILY, &common::id(2), NOW_MS).unwrap_err();
    assert_eq!(e.pointer, "/payload/code");
}
