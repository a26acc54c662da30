//! The protocol work of one ACP query/response round trip, the steps `agh_peer::acp::Agent`
//! takes, without its runtime: timed step by step in one thread by `acp_steps.rs`, and run
//! inline in a raw request/reply by `acp_roundtrip.rs` (its floor: what the protocol work
//! alone costs the round trip, no agent runtime around it).

#![allow(dead_code, reason = "each bench uses its part")]

use agh_acp::{EnvelopeParts, Ids, Inbox, KnownBody, QueryPayload, ResponsePayload, Verdict};
use agh_runtime::correlation::{Correlator, Exchanged};

pub const A: &str = "aaaaaaaaaaaaaaaa";
pub const B: &str = "bbbbbbbbbbbbbbbb";

pub fn now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    i64::try_from(since.expect("clock").as_millis()).expect("ms")
}

/// A query of `size` bytes of text, in domain `bench`.
pub fn question(size: usize) -> QueryPayload {
    serde_json::from_value(serde_json::json!({ "question": "q".repeat(size), "domain": "bench" }))
        .expect("query")
}

/// Writes, checks and records one envelope as the agent does; returns its id and bytes.
pub fn write<T: serde::Serialize>(
    inbox: &mut Inbox,
    ids: &Ids,
    tables: &Correlator,
    (kind, from, to, reference): (&str, &str, &str, Option<&str>),
    payload: &T,
    now: i64,
) -> (String, Vec<u8>) {
    let id = ids.next_id();
    let parts = EnvelopeParts {
        v: Some(1),
        id: Some(&id),
        from: Some(from),
        to: Some(to),
        ts: Some(now),
        ref_: reference,
    };
    let mut bytes = Vec::with_capacity(256);
    parts.write(kind, Some(payload), &mut bytes).expect("write");
    let checked = agh_acp::parse_ref(&bytes, &agh_acp::options(now / 1000)).expect("valid");
    let facts = checked
        .body_json()
        .and_then(|b| tables.body_facts(kind, b.get()));
    let sent = Exchanged::new(kind, &id, from, Some(to), reference, now).with_body(facts.as_ref());
    inbox.sent(&sent).expect("recorded");
    (id, bytes)
}

pub fn delivered(v: Verdict) -> agh_acp::Message {
    match v {
        Verdict::Delivered { message, .. } => message,
        Verdict::Refused(r) => panic!("refused: {r}"),
    }
}

/// What `Echo` answers a delivered query with (its typed decode included).
pub fn echo(message: &agh_acp::Message) -> ResponsePayload {
    let Ok(Some(KnownBody::Query(asked))) = message.to_owned_body() else {
        panic!("a query")
    };
    let text = match asked.question {
        agh_acp::QueryPayloadQuestion::String(s) => String::from(s),
        agh_acp::QueryPayloadQuestion::Object(_) => unreachable!(),
    };
    ResponsePayload {
        summary: text.parse().expect("one line"),
        data: Some(serde_json::Value::String(text)),
        tokens_used: None,
        truncated: false,
        extra: serde_json::Map::new(),
    }
}

/// The caller's typed decode of a delivered response.
pub fn response(message: &agh_acp::Message) -> ResponsePayload {
    match message.to_owned_body() {
        Ok(Some(KnownBody::Response(r))) => r,
        other => panic!("a response, not {other:?}"),
    }
}
