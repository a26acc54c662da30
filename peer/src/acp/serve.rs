//! The agent's inbound side: its subscriptions, the inbox, and the answers.

use std::sync::Arc;
use std::time::Duration;

use agh_acp::{
    AckPayload, AgentStatus, Correlation, Count, ErrorPayload, KnownBody, PongPayload, Verdict,
};
use bytes::Bytes;
use futures_util::FutureExt;
use serde_json::Map;

use super::handler::{Decision, Handler, Sender};
use super::{error, now_ms, Failure, Shared};
use crate::runtime::{Link, PeerProfile};
use crate::transport::{Inbound, Transport};

/// How often exchanges past their deadline are expired (the runtime's timer 0).
pub(super) const EXPIRY: Duration = Duration::from_millis(500);

/// The ACP profile: the runtime hands the agent's state every inbound message (through the
/// inbox, answered by the runtime or the [`Handler`]), the expiry tick, and the end of the loop
/// (the last [`super::Agent`] clone dropped, a shutdown, or the subscriptions ended), which
/// aborts the delegations the agent runs.
impl PeerProfile for Shared {
    type Inlet = Arc<dyn Handler>;

    fn transport(&self) -> &dyn Transport {
        &*self.transport
    }

    async fn on_inbound(state: &Arc<Shared>, handler: &Arc<dyn Handler>, message: Inbound) {
        on_inbound(state, handler, message).await;
    }

    async fn on_tick(state: &Arc<Shared>, _timer: usize) {
        expire(state);
    }

    /// Nothing to do: the transport restores the subscriptions, and an ACP agent does not
    /// announce itself.
    async fn on_link(_state: &Arc<Shared>, _link: Link) {}

    async fn on_stop(state: &Arc<Shared>, _handler: Arc<dyn Handler>, _why: Option<String>) {
        state.stop_work();
    }
}

/// Exchanges past their deadline: a delegation's waiter resolves with `timeout`.
fn expire(shared: &Shared) {
    let timed_out = match shared.inbox.lock() {
        Ok(mut inbox) => inbox.expire(now_ms()),
        Err(_) => return,
    };
    for t in timed_out.into_iter().filter(|t| t.requester == shared.id()) {
        if let Some(w) = shared
            .waiting
            .lock()
            .ok()
            .and_then(|mut w| w.remove(&t.request_id))
        {
            let _ = w.send(Err(Failure::local(
                "timeout",
                format!("no `result` for `{}` before its deadline", t.request_id),
            )));
        }
    }
}

/// Where an answer goes: the request's NATS reply subject when it has one, else the other
/// agent's subject.
#[derive(Clone, Debug)]
struct Route {
    to: String,
    reply: Option<String>,
}

/// Sends one answer (recorded by the inbox first); an answer the inbox refuses (a handler's
/// payload that breaks the schema) goes out as an `internal` error instead.
async fn answer<T: serde::Serialize + ?Sized>(
    shared: &Shared,
    route: &Route,
    kind: &str,
    reference: Option<&str>,
    payload: &T,
) {
    let written = shared
        .write(kind, Some(&route.to), reference, Some(payload))
        .or_else(|f| {
            let e = error("internal", &format!("the answer was not valid: {f}"));
            shared.write("error", Some(&route.to), reference, Some(&e))
        });
    let Ok((_, bytes, _)) = written else {
        return;
    };
    let subject = match &route.reply {
        Some(r) => Ok(r.clone()),
        None => shared.subjects.direct(&route.to),
    };
    if let Ok(subject) = subject {
        let _ = shared.transport.publish(subject, Bytes::from(bytes)).await;
    }
}

/// Records in the inbox an envelope this agent sends that the parser already checked (no
/// second parse); whether the inbox took it.
fn record(shared: &Shared, message: &agh_acp::Message, now: i64) -> bool {
    let e = message.envelope();
    let addressing = (e.to.as_deref(), e.ref_.as_deref());
    shared
        .record_sent(message.kind(), &e.id, addressing, message.body_json(), now)
        .is_ok()
}

async fn on_inbound(shared: &Arc<Shared>, handler: &Arc<dyn Handler>, m: Inbound) {
    let now = now_ms();
    let Inbound { payload, reply, .. } = m;
    let verdict = match shared.inbox.lock() {
        Ok(mut inbox) => inbox.receive_bytes(payload, now),
        Err(_) => return,
    };
    let (message, correlation) = match verdict {
        Verdict::Refused(r) => {
            if r.head.from.as_deref() == Some(shared.id()) {
                return; // our own broadcast, or a copy of it
            }
            refuse(shared, &r, reply, now).await;
            return;
        }
        Verdict::Delivered {
            message,
            correlation,
        } => (message, correlation),
    };
    let envelope = message.envelope();
    let sender = Sender {
        from: envelope.from.to_string(),
        id: envelope.id.to_string(),
    };
    if sender.from == shared.id() {
        return; // our own broadcast
    }
    let route = Route {
        to: sender.from.clone(),
        reply,
    };
    let reference = envelope.ref_.as_ref().map(|r| r.to_string());
    let kind = message.kind();
    let body = match message.to_owned_body() {
        Ok(body) => body,
        // Checked, but not of its kind's generated type: answered with `error` (the
        // rejection's code, `malformed`) like any refused message, an `error` excepted; a
        // reply this agent waits for (a delegation's `result`) resolves its waiter with it.
        Err(r) => return undecodable(shared, route.reply, &correlation, r).await,
    };
    let Some(body) = body else {
        // ping, discover and cancel may come without a payload.
        return match kind {
            "ping" => pong(shared, &route, &sender).await,
            "discover" => capabilities(shared, &route, &sender).await,
            "cancel" => cancel(shared, &route, &sender, reference.as_deref(), None).await,
            _ => {}
        };
    };
    match body {
        KnownBody::Ping(_) => pong(shared, &route, &sender).await,
        KnownBody::Discover(_) => capabilities(shared, &route, &sender).await,
        KnownBody::Query(q) => {
            let mut work = handler.query(&sender, q);
            // A handler that knows its answer at once is answered here; one that has to wait
            // gets a task of its own, so the next message is read meanwhile.
            match (&mut work).now_or_never() {
                Some(outcome) => respond(shared, &route, &sender.id, outcome).await,
                None => {
                    let shared = shared.clone();
                    tokio::spawn(async move {
                        respond(&shared, &route, &sender.id, work.await).await;
                    });
                }
            }
        }
        KnownBody::Delegate(d) => delegate(shared, handler, route, sender, d).await,
        KnownBody::Cancel(c) => {
            let reason = c.reason.map(|r| r.to_string());
            cancel(shared, &route, &sender, reference.as_deref(), reason).await
        }
        KnownBody::Notify(n) => handler.notify(&sender, n),
        KnownBody::Result(r) => settle(shared, &correlation, Ok(r)),
        KnownBody::Error(e) => settle(shared, &correlation, Err(Failure::remote(&e))),
        // An answer that came as a publish, not on a request's reply subject: the inbox
        // accepted it, and nobody waits for it here.
        KnownBody::Pong(_)
        | KnownBody::Response(_)
        | KnownBody::Ack(_)
        | KnownBody::Capabilities(_) => {}
    }
}

/// Answers a refused message with the `error` [`agh_acp::error_reply`] makes of it (none for an
/// `error`: that function alone decides), recorded by the inbox first, on the request's reply
/// subject or the sender's.
async fn refuse(shared: &Shared, refusal: &agh_acp::Refusal, reply: Option<String>, now: i64) {
    let id = shared.ids.next_id();
    let Ok(Some(answer)) = agh_acp::error_reply(refusal, shared.id(), &id, now) else {
        return;
    };
    let to = answer.envelope().to.as_ref().map(|t| t.to_string());
    let subject = match (reply, &to) {
        (Some(r), _) => Some(r),
        (None, Some(to)) => shared.subjects.direct(to).ok(),
        (None, None) => None,
    };
    // Checked by `error_reply`'s parse: recorded from it, not parsed again.
    if let (true, Some(subject)) = (record(shared, &answer, now), subject) {
        let _ = shared.transport.publish(subject, answer.into_bytes()).await;
    }
}

/// A delivered message whose body its kind's generated type does not take: refused like any
/// other ([`refuse`]: answered with `error`, the rejection's code, unless it is an `error`); a
/// reply this agent waits for (a delegation's `result`) resolves its waiter with the failure.
async fn undecodable(
    shared: &Shared,
    reply: Option<String>,
    correlation: &Correlation,
    r: agh_runtime::Rejection,
) {
    settle(
        shared,
        correlation,
        Err(Failure::local(r.code.as_str(), r.to_string())),
    );
    let refusal = agh_acp::Refusal::of_rejection::<agh_acp::Acp>(r);
    refuse(shared, &refusal, reply, now_ms()).await;
}

/// Answers a query with its `response`, or the handler's `error`.
async fn respond(
    shared: &Shared,
    route: &Route,
    query: &str,
    outcome: Result<agh_acp::ResponsePayload, ErrorPayload>,
) {
    match outcome {
        Ok(r) => answer(shared, route, "response", Some(query), &r).await,
        Err(e) => answer(shared, route, "error", Some(query), &e).await,
    }
}

/// A `result` or `error` that moved one of this agent's delegations: its waiter resolves.
fn settle(
    shared: &Shared,
    correlation: &Correlation,
    outcome: Result<agh_acp::ResultPayload, Failure>,
) {
    let Correlation::Answered { request_id, .. } = correlation else {
        return;
    };
    if let Some(w) = shared
        .waiting
        .lock()
        .ok()
        .and_then(|mut w| w.remove(request_id))
    {
        let _ = w.send(outcome);
    }
}

async fn pong(shared: &Shared, route: &Route, sender: &Sender) {
    let active = shared.running.lock().map_or(0, |r| r.len()) as u64;
    let caps = &shared.config.capabilities;
    let status = match caps.max_concurrent_tasks.as_ref().map(|m| m.0) {
        _ if active == 0 => AgentStatus::Idle,
        Some(max) if active >= max => AgentStatus::Overloaded,
        _ => AgentStatus::Busy,
    };
    let pong = PongPayload {
        active_tasks: Some(Count(active)),
        agent_name: caps.agent_name.clone(),
        status,
        uptime_secs: Some(Count(shared.started.elapsed().as_secs())),
        extra: Map::new(),
    };
    answer(shared, route, "pong", Some(&sender.id), &pong).await;
}

async fn capabilities(shared: &Shared, route: &Route, sender: &Sender) {
    let caps = &shared.config.capabilities;
    answer(shared, route, "capabilities", Some(&sender.id), caps).await;
}

/// An `ack`.
fn ack(accepted: bool, estimated_ms: Option<u64>) -> AckPayload {
    AckPayload {
        accepted,
        estimated_ms: estimated_ms.map(Count),
        extra: Map::new(),
    }
}

async fn delegate(
    shared: &Arc<Shared>,
    handler: &Arc<dyn Handler>,
    route: Route,
    sender: Sender,
    task: agh_acp::DelegatePayload,
) {
    let report_back = task.report_back;
    match handler.delegate(&sender, task) {
        Decision::Refuse(e) => answer(shared, &route, "error", Some(&sender.id), &e).await,
        Decision::Accept { estimated_ms, work } => {
            let key = (sender.from.clone(), sender.id.clone());
            {
                // Held while the task is spawned and recorded: its own removal (when it ends)
                // waits for the record, so a finished task never stays listed.
                let Ok(mut running) = shared.running.lock() else {
                    return;
                };
                let (shared2, key2) = (shared.clone(), key.clone());
                let to = Route {
                    to: sender.from.clone(),
                    reply: None,
                };
                let handle = tokio::spawn(async move {
                    let outcome = work.await;
                    let still_running = shared2
                        .running
                        .lock()
                        .is_ok_and(|mut r| r.remove(&key2).is_some());
                    if report_back && still_running {
                        let reference = Some(key2.1.as_str());
                        match outcome {
                            Ok(r) => answer(&shared2, &to, "result", reference, &r).await,
                            Err(e) => answer(&shared2, &to, "error", reference, &e).await,
                        }
                    }
                });
                running.insert(key, (handle, report_back));
            }
            let ack = ack(true, estimated_ms);
            answer(shared, &route, "ack", Some(&sender.id), &ack).await;
        }
    }
}

async fn cancel(
    shared: &Shared,
    route: &Route,
    sender: &Sender,
    delegation: Option<&str>,
    reason: Option<String>,
) {
    let Some(delegation) = delegation else { return };
    let key = (sender.from.clone(), delegation.to_owned());
    let stopped = shared.running.lock().ok().and_then(|mut r| r.remove(&key));
    let accepted = stopped.is_some();
    if let Some((handle, _)) = &stopped {
        handle.abort();
    }
    answer(shared, route, "ack", Some(&sender.id), &ack(accepted, None)).await;
    if let Some((_, true)) = stopped {
        let why = reason.unwrap_or_else(|| "the delegator cancelled the task".into());
        let to = Route {
            to: sender.from.clone(),
            reply: None,
        };
        answer(
            shared,
            &to,
            "error",
            Some(delegation),
            &error("cancelled", &why),
        )
        .await;
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::acp::{Agent, AgentConfig, Silent};
    use agh_runtime::{Head, Problem, ReasonCode, Rejection};
    use futures_util::StreamExt;

    const A: &str = "aaaaaaaaaaaaaaaa";
    const B: &str = "bbbbbbbbbbbbbbbb";

    /// No message that passes the parser fails its typed decode today (the generated types
    /// and checks come from the same schemas), so the path is driven directly: what B does
    /// with a query from A whose body its type would not take.
    #[tokio::test]
    async fn a_delivered_message_its_type_does_not_take_is_answered_with_error() {
        let bus = crate::Bus::new();
        let b = Agent::start(AgentConfig::new(B), bus.clone(), Silent)
            .await
            .unwrap();
        let shared = b.shared();
        let mut to_a = bus
            .subscribe(shared.subjects.direct(A).unwrap())
            .await
            .unwrap();
        let id = agh_acp::new_id().unwrap();
        let payload = serde_json::json!({ "question": "q" });
        let query =
            agh_acp::write_envelope("query", &id, A, Some(B), None, Some(&payload), now_ms());
        let Verdict::Delivered { correlation, .. } =
            shared.inbox.lock().unwrap().receive(&query, now_ms())
        else {
            panic!("the query is delivered")
        };
        let rejection = |kind: &str| {
            let problem = Problem::new(ReasonCode::Malformed, "/payload", "schema", "no fit");
            let head = Head {
                id: Some(id.clone()),
                from: Some(A.to_owned()),
                kind: Some(kind.to_owned()),
                ..Head::default()
            };
            Rejection::new(problem, head)
        };
        undecodable(shared, None, &correlation, rejection("query")).await;
        let answer = to_a.next().await.unwrap();
        let m = agh_acp::parse(&answer.payload, &agh_acp::options(now_ms() / 1000)).unwrap();
        assert_eq!(m.kind(), "error");
        assert_eq!(m.envelope().ref_.as_deref(), Some(id.as_str()));
        let Ok(Some(KnownBody::Error(e))) = m.to_owned_body() else {
            panic!("an error payload")
        };
        assert_eq!(e.code.as_str(), "malformed");
        assert!(e.message.contains("no fit"), "{}", e.message.as_str());
        // An `error` is never answered with one.
        undecodable(shared, None, &correlation, rejection("error")).await;
        let nothing = tokio::time::timeout(Duration::from_millis(100), to_a.next()).await;
        assert!(nothing.is_err(), "an error was answered: {nothing:?}");
        b.shutdown().await;
    }
}
