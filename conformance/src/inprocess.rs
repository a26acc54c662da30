//! This implementation (`agh-protocol`) behind the line protocol, in-process.

use agh_protocol::{
    parse, Delivery, Options, Outcome, Receiver, ReceiverConfig, WorkEvent, WorkTracker,
};
use serde_json::{json, Value};

use crate::Implementation;

/// `agh-protocol` answering line-protocol requests; keeps a work tracker and a receiver between
/// requests (reset by `lifecycle.reset` / `receiver.reset`).
#[derive(Debug, Default)]
pub struct InProcess {
    tracker: WorkTracker,
    receiver: Option<Receiver>,
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
        match (op, now, input) {
            ("hello", _, _) => json!({
                "name": "agh-rust",
                "version": env!("CARGO_PKG_VERSION"),
                "protocol": crate::PROTOCOL,
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
                        "receipt": r.receipt.and_then(|m| m.to_value().ok()),
                    }),
                }
            }
            ("parse" | "lifecycle.apply" | "receiver.sent" | "receiver.receive", _, _) => {
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
