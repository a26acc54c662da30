//! Envelopes for the ACP tests: the draft's examples completed into whole envelopes.
#![allow(dead_code)]

use serde_json::{json, Value};

/// The receiver's clock in the tests, Unix seconds (the draft's example `ts` is 1771108000000 ms).
pub const NOW: i64 = 1_771_108_000;
/// `ts` of the test envelopes, ms.
pub const TS: u64 = 1_771_108_000_000;
/// The agents of the draft ("Kit" and the "Family Agent").
pub const KIT: &str = "a1b2c3d4e5f60718";
pub const FAMILY: &str = "0123456789abcdef";

/// A message id: the canonical lowercase UUID text of `n`.
pub fn id(n: u32) -> String {
    format!("{n:08x}-0000-4000-8000-{:012x}", u64::from(n) * 7919)
}

/// A whole envelope from Kit to the Family Agent.
pub fn envelope(kind: &str, reference: Option<&str>, payload: Option<Value>) -> Value {
    let mut e = json!({
        "v": 1,
        "id": id(1),
        "from": KIT,
        "to": FAMILY,
        "ts": TS,
        "kind": kind,
        "ref": reference,
    });
    if let Some(p) = payload {
        e["payload"] = p;
    }
    e
}

/// Every example of the draft (`seeds/acp-message-types-draft.md`, section "Schemas"), as the
/// envelope that carries it: `(kind, ref, payload)`. Enum placeholders such as
/// `"idle|busy|overloaded"` take their first value, `{ ... }` an object.
pub fn draft_examples() -> Vec<(&'static str, Option<String>, Option<Value>)> {
    let r = Some(id(100));
    vec![
        ("ping", None, None),
        (
            "pong",
            r.clone(),
            Some(
                json!({"status": "idle", "uptime_secs": 3600, "active_tasks": 2, "agent_name": "Kit"}),
            ),
        ),
        (
            "query",
            None,
            Some(json!({
                "question": "What are the kids' swim schedules this week?",
                "domain": "family.calendar", "max_tokens": 200, "deadline_ms": 30000
            })),
        ),
        (
            "response",
            r.clone(),
            Some(json!({
                "data": {"practices": ["Mon", "Wed", "Fri"]},
                "summary": "Three swim practices: Mon/Wed/Fri 4-5pm at the local pool",
                "tokens_used": 47, "truncated": false
            })),
        ),
        (
            "delegate",
            None,
            Some(json!({
                "task": "Send the family contact a message saying the user will be 30 minutes late for dinner",
                "context": {"reason": "Meeting ran over", "dinner_time": "7:00 PM", "grace_handle": "family-contact@example.com"},
                "priority": "normal", "report_back": true, "deadline_ms": 60000
            })),
        ),
        (
            "ack",
            r.clone(),
            Some(json!({"accepted": true, "estimated_ms": 5000})),
        ),
        (
            "result",
            r.clone(),
            Some(json!({
                "status": "completed",
                "outcome": "Message sent to the family contact. She replied 'ok no worries'",
                "data": {"reply": "ok no worries"}, "error": null
            })),
        ),
        (
            "notify",
            None,
            Some(json!({
                "topic": "hans.location",
                "data": {"location": "heading to gym", "eta_back": "2h"},
                "importance": "low"
            })),
        ),
        (
            "cancel",
            r.clone(),
            Some(json!({"reason": "Plans changed, no longer needed"})),
        ),
        ("discover", None, None),
        (
            "capabilities",
            r.clone(),
            Some(json!({
                "agent_name": "Family Assistant",
                "domains": ["family", "calendar", "groceries", "school", "activities"],
                "channels": ["imessage", "apple-reminders"],
                "tools": ["web_search", "gog", "bluebubbles"],
                "max_concurrent_tasks": 4, "model": "gemini-3-pro"
            })),
        ),
        (
            "error",
            r,
            Some(json!({
                "code": "not_authorized",
                "message": "I don't have access to the user's work calendar",
                "retryable": false
            })),
        ),
    ]
}
