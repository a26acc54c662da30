//! ACP agents over real `nats-server` processes on 127.0.0.1 (started and stopped by each test):
//! every exchange of the draft's stream table, the failures the draft's "fail-fast" asks for,
//! and hostile input.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/nats_server.rs"]
mod nats_server;
#[path = "support/synced.rs"]
mod synced;

use std::time::{Duration, Instant};

use agh_acp::{
    DelegatePayload, ErrorPayload, NotifyPayload, QueryPayload, QueryPayloadQuestion,
    ResponsePayload,
};
use agh_peer::acp::{Agent, AgentConfig, Decision, Echo, Handler, Origin, Sender};
use agh_peer::NatsTransport;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use futures_util::StreamExt;
use nats_server::{Cluster, NatsServer};
use serde_json::{json, Value};
use tokio::sync::mpsc;

const A: &str = "aaaaaaaaaaaaaaaa";
const B: &str = "bbbbbbbbbbbbbbbb";
const WAIT: Duration = Duration::from_secs(10);

fn from_json<T: serde::de::DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

/// B's application: echoes (queries after `query_delay`), records notifications.
struct Recorder {
    notes: mpsc::UnboundedSender<(String, NotifyPayload)>,
    query_delay: Duration,
}

impl Handler for Recorder {
    fn query(
        &self,
        from: &Sender,
        query: QueryPayload,
    ) -> BoxFuture<'static, Result<ResponsePayload, ErrorPayload>> {
        let delay = self.query_delay;
        let answer = Echo.query(from, query);
        Box::pin(async move {
            tokio::time::sleep(delay).await;
            answer.await
        })
    }
    fn delegate(&self, from: &Sender, task: DelegatePayload) -> Decision {
        if task.task.as_str() == "refuse me" {
            return Decision::Refuse(agh_peer::acp::error("not_authorized", "not that one"));
        }
        Echo.delegate(from, task)
    }
    fn notify(&self, from: &Sender, note: NotifyPayload) {
        let _ = self.notes.send((from.from.clone(), note));
    }
}

async fn agent(url: &str, id: &str, handler: impl Handler) -> Agent {
    let mut config = AgentConfig::new(id);
    config.capabilities = from_json(json!({
        "agent_name": format!("agent {id}"),
        "domains": ["family.calendar", "meta.status"],
        "tools": ["web_search"],
        "max_concurrent_tasks": 2
    }));
    config.request_timeout = Duration::from_secs(3);
    let nats = NatsTransport::connect(url).await.expect("connect");
    tokio::time::timeout(WAIT, Agent::start(config, nats, handler))
        .await
        .expect("start in time")
        .expect("start")
}

async fn pair(
    url: &str,
    query_delay: Duration,
) -> (
    Agent,
    Agent,
    mpsc::UnboundedReceiver<(String, NotifyPayload)>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let b = agent(
        url,
        B,
        Recorder {
            notes: tx,
            query_delay,
        },
    )
    .await;
    let a = agent(url, A, agh_peer::acp::Silent).await;
    (a, b, rx)
}

fn query(text: &str, deadline_ms: u64) -> QueryPayload {
    from_json(json!({ "question": text, "domain": "family.calendar", "deadline_ms": deadline_ms }))
}

fn delegation(task: &str, report_back: bool, context: Value) -> DelegatePayload {
    from_json(json!({ "task": task, "report_back": report_back, "context": context }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_exchange_of_the_stream_table() {
    let server = NatsServer::start();
    let (a, b, mut notes) = pair(&server.url(), Duration::ZERO).await;

    // ping -> pong (bidirectional), answered by the runtime.
    let pong = a.ping(B).await.unwrap();
    assert_eq!(pong.status.to_string(), "idle");
    assert_eq!(pong.agent_name.unwrap().as_str(), "agent bbbbbbbbbbbbbbbb");

    // query -> response.
    let r = a
        .query(B, &query("What are the swim times?", 5000))
        .await
        .unwrap();
    assert_eq!(r.summary.as_str(), "What are the swim times?");
    assert_eq!(r.data, Some(json!("What are the swim times?")));
    let structured: QueryPayload = from_json(json!({ "question": { "table": "swim" } }));
    assert!(matches!(
        structured.question,
        QueryPayloadQuestion::Object(_)
    ));
    assert_eq!(
        a.query(B, &structured).await.unwrap().data,
        Some(json!({ "table": "swim" }))
    );

    // delegate -> ack, then result (unidirectional, on A's subject).
    let d = a
        .delegate(B, &delegation("Tell the family I am late", true, json!({})))
        .await
        .unwrap();
    assert!(d.ack.accepted);
    let result = tokio::time::timeout(WAIT, d.result.unwrap().wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result.status.to_string(), "completed");
    assert_eq!(result.outcome.as_str(), "Tell the family I am late");

    // delegate without report_back: the ack ends it, no result is awaited.
    let quiet = a
        .delegate(B, &delegation("no report", false, json!({})))
        .await
        .unwrap();
    assert!(quiet.ack.accepted && quiet.result.is_none());

    // A refusal comes "with reason in error".
    let refused = a
        .delegate(B, &delegation("refuse me", true, json!({})))
        .await
        .unwrap_err();
    assert_eq!(
        (refused.code.as_str(), refused.origin),
        ("not_authorized", Origin::Remote)
    );

    // cancel -> ack: the first delegation is over, nothing is left to stop.
    let ack = a.cancel(B, &d.id, Some("plans changed")).await.unwrap();
    assert!(!ack.accepted);

    // discover -> capabilities.
    let caps = a.discover(B).await.unwrap();
    let domains: Vec<String> = caps.domains.iter().map(|d| d.to_string()).collect();
    assert_eq!(domains, ["family.calendar", "meta.status"]);
    assert_eq!(caps.max_concurrent_tasks.unwrap().0, 2);

    // notify, to B and broadcast (fire and forget).
    let note: NotifyPayload =
        from_json(json!({ "topic": "hans.location", "data": { "at": "gym" } }));
    a.notify(Some(B), &note).await.unwrap();
    let broadcast: NotifyPayload = from_json(json!({ "topic": "hans.mood", "importance": "low" }));
    a.notify(None, &broadcast).await.unwrap();
    let mut topics = Vec::new();
    for _ in 0..2 {
        let (from, n) = tokio::time::timeout(WAIT, notes.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(from, A);
        topics.push(n.topic.to_string());
    }
    topics.sort();
    assert_eq!(topics, ["hans.location", "hans.mood"]);

    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_answer_in_time_is_timeout_at_the_deadline() {
    let server = NatsServer::start();
    let (a, b, _notes) = pair(&server.url(), Duration::from_millis(1500)).await;
    let started = Instant::now();
    let f = a.query(B, &query("slow?", 300)).await.unwrap_err();
    let took = started.elapsed();
    assert_eq!(
        (f.code.as_str(), f.origin),
        ("timeout", Origin::Local),
        "{f}"
    );
    assert!(f.retryable);
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_millis(1200),
        "{took:?}"
    );
    // Within the deadline the same agent answers.
    assert!(a.query(B, &query("slow?", 5000)).await.is_ok());
    a.shutdown().await;
    b.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_responder_that_is_gone_is_timeout_at_once() {
    let server = NatsServer::start();
    let (a, b, _notes) = pair(&server.url(), Duration::ZERO).await;
    a.ping(B).await.unwrap();
    b.shutdown().await;
    // Once the server has dropped B's subscription (it may not have read B's connection close
    // yet on a busy machine: a request then goes to B's socket and waits for the timeout),
    // NATS reports "no responders" at once: no waiting for the 3 s request timeout.
    until_no_responders(&server.url(), B).await;
    let started = Instant::now();
    let f = a.ping(B).await.unwrap_err();
    assert_eq!(
        (f.code.as_str(), f.origin),
        ("timeout", Origin::Local),
        "{f}"
    );
    assert!(f.message.contains("no responders"), "{f}");
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
    // An agent that never existed: the same.
    let f = a.discover("cccccccccccccccc").await.unwrap_err();
    assert_eq!(f.code, "timeout");
    a.shutdown().await;
}

/// Waits (at most `WAIT`) until the server answers a request to `agent`'s subject with "no
/// responders": it has dropped every subscription of that agent.
async fn until_no_responders(url: &str, agent: &str) {
    let raw = async_nats::connect(url).await.unwrap();
    let started = Instant::now();
    loop {
        let request = async_nats::Request::new()
            .payload(Bytes::from_static(b"{}"))
            .timeout(Some(Duration::from_millis(500)));
        match raw
            .send_request(format!("acp.v0-2.agent.{agent}"), request)
            .await
        {
            Err(e) if e.kind() == async_nats::RequestErrorKind::NoResponders => break,
            other => assert!(
                started.elapsed() < WAIT,
                "{agent} still answers after it stopped: {other:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A hand-written responder on B's subject that sends the `result` before the `ack`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_result_that_overtakes_its_ack_is_taken() {
    let server = NatsServer::start();
    let raw = async_nats::connect(server.url()).await.unwrap();
    let mut sub = raw.subscribe(format!("acp.v0-2.agent.{B}")).await.unwrap();
    synced::synced(&raw).await;
    let responder = raw.clone();
    tokio::spawn(async move {
        while let Some(m) = sub.next().await {
            let v: Value = serde_json::from_slice(&m.payload).unwrap();
            let id = v["id"].as_str().unwrap().to_owned();
            let now = v["ts"].as_i64().unwrap();
            let result = agh_acp::write_envelope(
                "result",
                &agh_acp::new_id().unwrap(),
                B,
                Some(A),
                Some(&id),
                Some(&json!({ "status": "partial", "outcome": "half done" })),
                now,
            );
            responder
                .publish(format!("acp.v0-2.agent.{A}"), Bytes::from(result))
                .await
                .unwrap();
            responder.flush().await.unwrap();
            tokio::time::sleep(Duration::from_millis(100)).await;
            let ack = agh_acp::write_envelope(
                "ack",
                &agh_acp::new_id().unwrap(),
                B,
                Some(A),
                Some(&id),
                Some(&json!({ "accepted": true })),
                now,
            );
            responder
                .publish(m.reply.unwrap(), Bytes::from(ack))
                .await
                .unwrap();
        }
    });
    let a = agent(&server.url(), A, agh_peer::acp::Silent).await;
    let d = a
        .delegate(B, &delegation("do it", true, json!({})))
        .await
        .unwrap();
    assert!(d.ack.accepted);
    let r = tokio::time::timeout(WAIT, d.result.unwrap().wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(r.outcome.as_str(), "half done");
    a.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_delegation_is_cancelled() {
    let server = NatsServer::start();
    let (a, b, _notes) = pair(&server.url(), Duration::ZERO).await;
    // A watcher on A's subject sees what B publishes to A.
    let raw = async_nats::connect(server.url()).await.unwrap();
    let mut to_a = raw.subscribe(format!("acp.v0-2.agent.{A}")).await.unwrap();
    synced::synced(&raw).await;
    let d = a
        .delegate(
            B,
            &delegation("long task", true, json!({ "echo_delay_ms": 5000 })),
        )
        .await
        .unwrap();
    assert_eq!(d.ack.estimated_ms.as_ref().unwrap().0, 5000);
    assert_eq!(a.ping(B).await.unwrap().active_tasks.unwrap().0, 1);
    let started = Instant::now();
    let ack = a.cancel(B, &d.id, Some("no longer needed")).await.unwrap();
    assert!(ack.accepted);
    let f = d.result.unwrap().wait().await.unwrap_err();
    assert_eq!(f.code, "cancelled");
    assert!(started.elapsed() < Duration::from_secs(2));
    // B stopped the task and says so with `error` `cancelled` naming the delegation.
    let error = loop {
        let m = tokio::time::timeout(WAIT, to_a.next())
            .await
            .unwrap()
            .unwrap();
        let v: Value = serde_json::from_slice(&m.payload).unwrap();
        if v["kind"] == "error" {
            break v;
        }
    };
    assert_eq!(error["ref"], json!(d.id));
    assert_eq!(error["payload"]["code"], "cancelled");
    assert_eq!(error["payload"]["message"], "no longer needed");
    assert_eq!(a.ping(B).await.unwrap().status.to_string(), "idle");
    a.shutdown().await;
    b.shutdown().await;
}

/// Garbage, hostile and misaddressed envelopes sent straight to B's subject: B answers what it
/// can answer with the draft's error, never crashes, and keeps serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_and_hostile_payloads_get_errors_not_crashes() {
    let server = NatsServer::start();
    let (a, b, _notes) = pair(&server.url(), Duration::ZERO).await;
    let raw = async_nats::connect(server.url()).await.unwrap();
    let subject = format!("acp.v0-2.agent.{B}");
    let now = || {
        i64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_millis(),
        )
        .unwrap()
    };
    let ask = |payload: Vec<u8>| {
        let raw = raw.clone();
        let subject = subject.clone();
        async move {
            let request = async_nats::Request::new()
                .payload(Bytes::from(payload))
                .timeout(Some(Duration::from_millis(500)));
            raw.send_request(subject, request)
                .await
                .ok()
                .map(|m| serde_json::from_slice::<Value>(&m.payload).unwrap())
        }
    };
    // Unreadable: nobody to answer (no `from`), no crash.
    for garbage in [
        b"".to_vec(),
        b"\xff\xfe\x00garbage".to_vec(),
        b"{\"v\":1,".to_vec(),
        "[".repeat(100_000).into_bytes(),
        vec![b' '; 1_100_000],
    ] {
        assert_eq!(ask(garbage).await, None);
    }
    // An unknown kind: `error` `unknown_kind`, `ref` its id.
    let id = agh_acp::new_id().unwrap();
    let gossip = agh_acp::write_envelope("gossip", &id, A, Some(B), None, Some(&json!({})), now());
    let e = ask(gossip).await.unwrap();
    assert_eq!(
        (e["kind"].as_str(), e["ref"].as_str()),
        (Some("error"), Some(id.as_str()))
    );
    assert_eq!(e["payload"]["code"], "unknown_kind");
    assert_eq!(e["to"], A);
    // Malformed: a query whose question is blank.
    let id = agh_acp::new_id().unwrap();
    let blank = agh_acp::write_envelope(
        "query",
        &id,
        A,
        Some(B),
        None,
        Some(&json!({ "question": " \t" })),
        now(),
    );
    let e = ask(blank).await.unwrap();
    assert_eq!(e["payload"]["code"], "malformed");
    assert!(
        e["payload"]["message"]
            .as_str()
            .unwrap()
            .contains("/payload/question"),
        "{e}"
    );
    // Stale: `expired`.
    let old = agh_acp::write_envelope(
        "ping",
        &agh_acp::new_id().unwrap(),
        A,
        Some(B),
        None,
        None,
        now() - 600_000,
    );
    assert_eq!(ask(old).await.unwrap()["payload"]["code"], "expired");
    // A reply to nothing: `unknown_ref`.
    let stray = agh_acp::write_envelope(
        "response",
        &agh_acp::new_id().unwrap(),
        A,
        Some(B),
        Some(&agh_acp::new_id().unwrap()),
        Some(&json!({ "summary": "spoofed" })),
        now(),
    );
    assert_eq!(ask(stray).await.unwrap()["payload"]["code"], "unknown_ref");
    // Addressed to somebody else: `not_target`.
    let elsewhere = agh_acp::write_envelope(
        "ping",
        &agh_acp::new_id().unwrap(),
        A,
        Some("cccccccccccccccc"),
        None,
        None,
        now(),
    );
    assert_eq!(
        ask(elsewhere).await.unwrap()["payload"]["code"],
        "not_target"
    );
    // The same message twice: `duplicate`.
    let once = agh_acp::write_envelope(
        "ping",
        &agh_acp::new_id().unwrap(),
        A,
        Some(B),
        None,
        None,
        now(),
    );
    assert_eq!(ask(once.clone()).await.unwrap()["kind"], "pong");
    assert_eq!(ask(once).await.unwrap()["payload"]["code"], "duplicate");
    // An `error` about an error is never answered (two agents never trade errors).
    let err = agh_acp::write_envelope(
        "error",
        &agh_acp::new_id().unwrap(),
        A,
        Some(B),
        None,
        Some(&json!({ "code": "x" })),
        now(),
    );
    assert_eq!(ask(err).await, None);
    // B still serves.
    assert_eq!(a.ping(B).await.unwrap().status.to_string(), "idle");
    a.shutdown().await;
    b.shutdown().await;
}

/// Two agents on different servers of a three-server cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_agents_on_different_servers_of_a_cluster() {
    let cluster = Cluster::start();
    let (tx, _rx) = mpsc::unbounded_channel();
    let b = agent(
        &cluster.servers[2].url(),
        B,
        Recorder {
            notes: tx,
            query_delay: Duration::ZERO,
        },
    )
    .await;
    let a = agent(&cluster.servers[0].url(), A, agh_peer::acp::Silent).await;
    // B's interest reaches server 0 over the routes: until then, NATS says "no responders".
    let deadline = Instant::now() + WAIT;
    loop {
        match a.ping(B).await {
            Ok(_) => break,
            Err(f) if f.code == "timeout" && Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(f) => panic!("no pong across the cluster: {f}"),
        }
    }
    let r = a.query(B, &query("across?", 5000)).await.unwrap();
    assert_eq!(r.summary.as_str(), "across?");
    let d = a
        .delegate(B, &delegation("cross", true, json!({})))
        .await
        .unwrap();
    let result = tokio::time::timeout(WAIT, d.result.unwrap().wait())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(result.outcome.as_str(), "cross");
    // A finished delegation: the cancel is acknowledged, nothing was left to stop.
    assert!(!a.cancel(B, &d.id, None).await.unwrap().accepted);
    a.shutdown().await;
    b.shutdown().await;
}

fn now_ms() -> i64 {
    i64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis(),
    )
    .unwrap()
}

/// Requests that got no answer (timed out, nobody listening, or the caller gone) leave the
/// caller's tracker at once; a late answer names nothing tracked and is refused `unknown_ref`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_an_answer_leave_the_tracker() {
    const C: &str = "cccccccccccccccc";
    let server = NatsServer::start();
    let raw = async_nats::connect(server.url()).await.unwrap();
    // C: takes every request, answers none.
    let mut silent = raw.subscribe(format!("acp.v0-2.agent.{C}")).await.unwrap();
    synced::synced(&raw).await;
    let mut config = AgentConfig::new(A);
    config.request_timeout = Duration::from_millis(200);
    let nats = NatsTransport::connect(&server.url()).await.unwrap();
    let a = Agent::start(config, nats, agh_peer::acp::Silent)
        .await
        .unwrap();
    assert_eq!(a.tracked(), 0);
    // Timed out: many at once.
    let pings = (0..40).map(|_| a.ping(C));
    for f in futures_util::future::join_all(pings).await {
        assert_eq!(f.unwrap_err().code, "timeout");
    }
    assert_eq!(a.discover(C).await.unwrap_err().code, "timeout");
    assert_eq!(a.tracked(), 0, "timed-out requests stayed tracked");
    // Nobody listening.
    for _ in 0..20 {
        let f = a.ping("dddddddddddddddd").await.unwrap_err();
        assert!(f.message.contains("no responders"), "{f}");
    }
    assert_eq!(a.tracked(), 0, "unanswerable requests stayed tracked");
    // The caller went away before the answer.
    assert!(tokio::time::timeout(Duration::from_millis(20), a.ping(C))
        .await
        .is_err());
    assert_eq!(a.tracked(), 0, "a dropped request stayed tracked");
    // C answers one of the pings late, on A's subject: A refuses it (`ref` names nothing it
    // tracks) and says so to C with `error` `unknown_ref`.
    let ping = next_of_kind(&mut silent, "ping").await;
    let late = agh_acp::write_envelope(
        "pong",
        &agh_acp::new_id().unwrap(),
        C,
        Some(A),
        ping["id"].as_str(),
        Some(&json!({ "status": "idle" })),
        now_ms(),
    );
    let late_id = serde_json::from_slice::<Value>(&late).unwrap()["id"].clone();
    raw.publish(format!("acp.v0-2.agent.{A}"), Bytes::from(late))
        .await
        .unwrap();
    let error = next_of_kind(&mut silent, "error").await;
    assert_eq!(error["payload"]["code"], "unknown_ref", "{error}");
    assert_eq!(error["ref"], late_id);
    assert_eq!(a.tracked(), 0);
    a.shutdown().await;
}

/// An agent dropped without `shutdown()` stops: its subject has no responder afterwards, while
/// its connection is still up (another handle of the transport keeps it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_dropped_without_shutdown_stops() {
    let server = NatsServer::start();
    let nats = NatsTransport::connect(&server.url()).await.unwrap();
    let kept = nats.clone();
    let b = Agent::start(AgentConfig::new(B), nats, Echo).await.unwrap();
    let also_b = b.clone();
    let a = agent(&server.url(), A, agh_peer::acp::Silent).await;
    a.ping(B).await.unwrap();
    drop(b);
    // One clone left: still running.
    a.ping(B).await.unwrap();
    drop(also_b);
    until_no_responders(&server.url(), B).await;
    assert_eq!(
        kept.client().connection_state(),
        async_nats::connection::State::Connected
    );
    let f = a.ping(B).await.unwrap_err();
    assert!(f.message.contains("no responders"), "{f}");
    a.shutdown().await;
}

/// The next envelope of `kind` on a raw subscription (others skipped), within [`WAIT`].
async fn next_of_kind(sub: &mut async_nats::Subscriber, kind: &str) -> Value {
    loop {
        let m = tokio::time::timeout(WAIT, sub.next())
            .await
            .expect("an envelope in time")
            .expect("the subscription is open");
        let v: Value = serde_json::from_slice(&m.payload).expect("JSON");
        if v["kind"] == kind {
            return v;
        }
    }
}
