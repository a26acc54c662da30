//! This implementation (`agh-protocol`) behind the line protocol, in-process.

use agh_protocol::{
    parse, Delivery, Options, Outcome, Receiver, ReceiverConfig, WorkEvent, WorkTracker,
};
use serde_json::{json, Value};

use crate::implementation::Implementation;

/// `agh-protocol` (and `agh-acp` for requests naming `"profile": "acp/0.2"`) answering
/// line-protocol requests; keeps a work tracker, a receiver and an ACP inbox between requests
/// (reset by `lifecycle.reset` / `receiver.reset` / `inbox.reset`).
#[derive(Debug, Default)]
pub struct InProcess {
    tracker: WorkTracker,
    receiver: Option<Receiver>,
    inbox: Option<agh_acp::Inbox>,
}

impl InProcess {
    /// A fresh implementation.
    pub fn new() -> Self {
        InProcess::default()
    }

    /// Answers one request (never fails: problems are answered as `{"error": ...}`).
    pub fn answer(&mut self, request: &Value) -> Value {
        let op = request.get("op").and_then(Value::as_str).unwrap_or("");
        let now = request.get("now").and_then(Value::as_i64);
        let input = request
            .get("input")
            .and_then(Value::as_str)
            .map(str::as_bytes);
        let profile = request.get("profile").and_then(Value::as_str);
        if let Some(p) = profile.filter(|p| *p != agh_protocol::generated::profile::SPEC.name) {
            if p != agh_acp::SPEC.name {
                return json!({"unsupported": true});
            }
            return self.answer_acp(op, now, input, request);
        }
        match (op, now, input) {
            ("hello", _, _) => json!({
                "name": "agh-rust",
                "version": env!("CARGO_PKG_VERSION"),
                "protocol": crate::implementation::PROTOCOL,
            }),
            ("parse", Some(now), Some(bytes)) => match parse(bytes, &Options::at(now)) {
                Ok(m) => {
                    json!({"verdict": "accept", "kind": m.kind(), "trust": m.trust().as_str()})
                }
                Err(r) if r.rule.starts_with("trust") => json!({
                    "verdict": "reject",
                    "trust": "rejected",
                    "reason_code": r.code.as_str(),
                    "pointer": r.pointer,
                    "message": r.message,
                }),
                Err(r) => json!({
                    "verdict": "reject",
                    "reason_code": r.code.as_str(),
                    "pointer": r.pointer,
                    "message": r.message,
                }),
            },
            // What this implementation would forward: the parsed message written out again.
            ("forward", Some(now), Some(bytes)) => match parse(bytes, &Options::at(now)) {
                Ok(m) => json!({"output": m.text()}),
                Err(r) => json!({
                    "verdict": "reject",
                    "reason_code": r.code.as_str(),
                    "pointer": r.pointer,
                    "message": r.message,
                }),
            },
            ("lifecycle.reset", _, _) => {
                self.tracker = WorkTracker::new();
                json!({"ok": true})
            }
            ("lifecycle.apply", Some(now), Some(bytes)) => match parse(bytes, &Options::at(now)) {
                Ok(m) => outcome_json(&self.tracker.apply(&WorkEvent::of(&m))),
                Err(r) => json!({"error": r.to_string()}),
            },
            ("receiver.reset", _, _) => match receiver_config(request.get("receiver")) {
                Some(config) => {
                    self.receiver = Some(Receiver::new(config));
                    json!({"ok": true})
                }
                None => {
                    json!({"error": "receiver.reset needs receiver.workspace_id, channel and local_peer"})
                }
            },
            ("receiver.sent", Some(now), Some(bytes)) => {
                let Some(receiver) = &mut self.receiver else {
                    return json!({"error": "no receiver: send receiver.reset first"});
                };
                match parse(bytes, &Options::at(now)) {
                    Ok(m) => {
                        let o = receiver.record_sent(&m);
                        json!({"verdict": "recorded", "outcome": outcome_json(&o)["outcome"]})
                    }
                    Err(r) => json!({"error": r.to_string()}),
                }
            }
            ("receiver.receive", Some(now), Some(bytes)) => {
                let Some(receiver) = &mut self.receiver else {
                    return json!({"error": "no receiver: send receiver.reset first"});
                };
                match receiver.receive(bytes, now) {
                    Delivery::Delivered { message, work } => json!({
                        "verdict": "delivered",
                        "kind": message.kind(),
                        "state": work.state(),
                    }),
                    Delivery::Ignored { reason, .. } => {
                        json!({"verdict": "ignored", "reason": reason})
                    }
                    Delivery::Refused(r) => json!({
                        "verdict": "refused",
                        "reason_code": r.code.as_str(),
                        "pointer": r.pointer,
                        "message": r.message,
                        "receipt": r.receipt.map(|m| m.to_value()),
                    }),
                }
            }
            (
                "parse" | "forward" | "lifecycle.apply" | "receiver.sent" | "receiver.receive",
                _,
                _,
            ) => {
                json!({"error": format!("`{op}` needs an integer `now` and a string `input`")})
            }
            _ => json!({"unsupported": true}),
        }
    }
}

impl InProcess {
    /// The ACP v0.2 operations: `parse` and `forward` (`now` in Unix seconds) and the inbox sequence
    /// (`inbox.reset` with `local`, `inbox.receive` / `inbox.sent` with `now` in Unix
    /// milliseconds).
    fn answer_acp(
        &mut self,
        op: &str,
        now: Option<i64>,
        input: Option<&[u8]>,
        request: &Value,
    ) -> Value {
        let spell = |refusal: &'static str| agh_acp::SPEC.refusal_code(refusal).unwrap_or(refusal);
        match (op, now, input) {
            ("parse", Some(now), Some(bytes)) => {
                match agh_acp::parse(bytes, &agh_acp::options(now)) {
                    Ok(m) => json!({"verdict": "accept", "kind": m.kind()}),
                    Err(r) => json!({
                        "verdict": "reject",
                        "reason_code": r.code.as_str(),
                        "error_code": spell(r.code.as_str()),
                        "pointer": r.pointer,
                        "message": r.message,
                    }),
                }
            }
            // What this agent would forward: the owned message written out again.
            ("forward", Some(now), Some(bytes)) => {
                match agh_acp::parse(bytes, &agh_acp::options(now)) {
                    Ok(m) => json!({"output": m.text()}),
                    Err(r) => json!({
                        "verdict": "reject",
                        "reason_code": r.code.as_str(),
                        "error_code": spell(r.code.as_str()),
                        "pointer": r.pointer,
                        "message": r.message,
                    }),
                }
            }
            ("inbox.reset", _, _) => match request.get("local").and_then(Value::as_str) {
                Some(local) => {
                    self.inbox = Some(agh_acp::Inbox::new(local));
                    json!({"ok": true})
                }
                None => json!({"error": "inbox.reset needs `local`, the agent id"}),
            },
            ("inbox.receive" | "inbox.sent", Some(now_ms), Some(bytes)) => {
                let Some(inbox) = &mut self.inbox else {
                    return json!({"error": "no inbox: send inbox.reset first"});
                };
                let local = inbox.local().to_owned();
                let verdict = match op {
                    "inbox.sent" => match inbox.send(bytes, now_ms) {
                        Ok(correlation) => Ok(("recorded", correlation)),
                        Err(r) => Err(r),
                    },
                    _ => match inbox.receive(bytes, now_ms) {
                        agh_acp::Verdict::Delivered { correlation, .. } => {
                            Ok(("delivered", correlation))
                        }
                        agh_acp::Verdict::Refused(r) => Err(r),
                    },
                };
                match verdict {
                    Ok((verdict, correlation)) => {
                        let (name, state) = match correlation {
                            agh_acp::Correlation::Opened { .. } => ("opened", Some("open")),
                            agh_acp::Correlation::Answered { to, .. } => ("answered", Some(to)),
                            agh_acp::Correlation::Unrelated => ("unrelated", None),
                        };
                        json!({"verdict": verdict, "correlation": name, "state": state})
                    }
                    Err(r) => {
                        // What this agent would answer: an `error` (or nothing).
                        let reply = match op {
                            "inbox.receive" => agh_acp::error_reply(
                                &r,
                                &local,
                                &agh_acp::new_id().unwrap_or_default(),
                                now_ms,
                            )
                            .ok()
                            .flatten()
                            .map(|m| m.kind()),
                            _ => None,
                        };
                        json!({
                            "verdict": "refused",
                            "reason_code": r.refusal,
                            "error_code": r.code.unwrap_or(r.refusal),
                            "pointer": r.pointer,
                            "message": r.message,
                            "reply": reply,
                        })
                    }
                }
            }
            ("parse" | "forward" | "inbox.receive" | "inbox.sent", _, _) => {
                json!({"error": format!("`{op}` needs an integer `now` and a string `input`")})
            }
            _ => json!({"unsupported": true}),
        }
    }
}

impl Implementation for InProcess {
    fn call(&mut self, request: &Value) -> Result<Value, String> {
        Ok(self.answer(request))
    }
}

fn receiver_config(v: Option<&Value>) -> Option<ReceiverConfig> {
    let v = v?;
    let s = |k: &str| v.get(k).and_then(Value::as_str);
    let mut config = ReceiverConfig::new(s("workspace_id")?, s("channel")?, s("local_peer")?);
    if let Some(age) = v.get("replay_age_secs").and_then(Value::as_u64) {
        config.replay_age_secs = age;
    }
    if let Some(cap) = v.get("dedup_cap").and_then(Value::as_u64) {
        config.dedup_cap = usize::try_from(cap).unwrap_or(usize::MAX);
    }
    Some(config)
}

fn outcome_json(o: &Outcome) -> Value {
    match o {
        Outcome::Opened { state, .. } => json!({"outcome": "opened", "state": state}),
        Outcome::Transitioned { to, .. } => json!({"outcome": "transitioned", "state": to}),
        Outcome::Unchanged { state, .. } => json!({"outcome": "unchanged", "state": state}),
        Outcome::Ignored(why) => json!({"outcome": "ignored", "reason": why.as_str()}),
        Outcome::Refused { code, message } => {
            json!({"outcome": "refused", "reason_code": code.as_str(), "message": message})
        }
    }
}
