//! Where the CPU time of one ACP query/response round trip goes (issue 35), without NATS: the
//! same steps `agh_peer::acp::Agent` takes, in one thread, each timed over many round trips.
//! A writes its query (generated writer, parser scan, `Inbox::sent`), B receives it
//! (`Inbox::receive`), answers like `Echo`, writes its response, A receives it. Companion of
//! `acp_roundtrip.rs` (the target's bench): this one says which step to make cheaper.
//!
//! Run: `cargo bench -p agh-peer --bench acp_steps`.

use std::time::{Duration, Instant};

use agh_acp::{EnvelopeParts, Ids, Inbox, KnownBody, QueryPayload, ResponsePayload, Verdict};
use agh_runtime::correlation::{Correlator, Exchanged};

const A: &str = "aaaaaaaaaaaaaaaa";
const B: &str = "bbbbbbbbbbbbbbbb";
const N: u32 = 20_000;

fn now_ms() -> i64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
    i64::try_from(since.expect("clock").as_millis()).expect("ms")
}

/// Writes, checks and records one envelope as the agent does; returns its id and bytes.
fn write<T: serde::Serialize>(
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

fn delivered(v: Verdict) -> agh_acp::Message {
    match v {
        Verdict::Delivered { message, .. } => message,
        Verdict::Refused(r) => panic!("refused: {r}"),
    }
}

fn main() {
    let ids = Ids::new().expect("seed");
    let tables = Correlator::for_spec(&agh_acp::SPEC);
    println!("| question | A writes query | B receives it | echo | B writes response | A receives it | total |");
    println!("| --- | --- | --- | --- | --- | --- | --- |");
    for size in [32usize, 1024, 10 * 1024] {
        let q: QueryPayload = serde_json::from_value(
            serde_json::json!({ "question": "q".repeat(size), "domain": "bench" }),
        )
        .expect("query");
        let (mut a, mut b) = (Inbox::new(A), Inbox::new(B));
        let mut t = [Duration::ZERO; 5];
        for _ in 0..N {
            let now = now_ms();
            let t0 = Instant::now();
            let (qid, query) = write(&mut a, &ids, &tables, ("query", A, B, None), &q, now);
            let t1 = Instant::now();
            let message = delivered(b.receive(&query, now));
            let t2 = Instant::now();
            let Ok(Some(KnownBody::Query(asked))) = message.to_owned_body() else {
                panic!("a query")
            };
            let text = match asked.question {
                agh_acp::QueryPayloadQuestion::String(s) => String::from(s),
                agh_acp::QueryPayloadQuestion::Object(_) => unreachable!(),
            };
            let r = ResponsePayload {
                summary: text.parse().expect("one line"),
                data: Some(serde_json::Value::String(text)),
                tokens_used: None,
                truncated: false,
                extra: serde_json::Map::new(),
            };
            let t3 = Instant::now();
            let reply = ("response", B, A, Some(qid.as_str()));
            let (_, response) = write(&mut b, &ids, &tables, reply, &r, now);
            let t4 = Instant::now();
            delivered(a.receive(&response, now));
            let t5 = Instant::now();
            for (i, d) in [t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4]
                .into_iter()
                .enumerate()
            {
                t[i] += d;
            }
        }
        let us = |d: Duration| d.as_secs_f64() * 1e6 / f64::from(N);
        let total: Duration = t.iter().sum();
        println!(
            "| {size} B | {:.2} us | {:.2} us | {:.2} us | {:.2} us | {:.2} us | {:.2} us |",
            us(t[0]),
            us(t[1]),
            us(t[2]),
            us(t[3]),
            us(t[4]),
            us(total)
        );
    }
}
