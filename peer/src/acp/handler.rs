//! The application side of an ACP agent: what it does with queries, delegations and
//! notifications ([`Handler`]). `ping` and `discover` are answered by the runtime from the
//! agent's capabilities; unknown kinds are refused by the parser (`error` `unknown_kind`).

use agh_acp::{
    CapabilitiesPayload, DelegatePayload, ErrorPayload, NotifyPayload, QueryPayload,
    QueryPayloadQuestion, ResponsePayload, ResultPayload,
};
use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};

/// Who sent a message to the agent, and its id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sender {
    /// The sender's agent id (`from`).
    pub from: String,
    /// The message's id.
    pub id: String,
}

/// What a handler makes of a delegation.
pub enum Decision {
    /// The agent attempts the task: `ack` with `accepted: true` goes out at once; `work` runs
    /// in its own task and, when the delegator asked for `report_back`, its outcome is sent as
    /// `result` (an `Err` as `error`). A `cancel` of the delegation aborts `work`.
    Accept {
        /// The rough estimate the `ack` carries, in milliseconds.
        estimated_ms: Option<u64>,
        /// The task.
        work: BoxFuture<'static, Result<ResultPayload, ErrorPayload>>,
    },
    /// The agent refuses: the delegation is answered with this `error` (the draft: a refusal
    /// comes "with reason in error").
    Refuse(ErrorPayload),
}

impl std::fmt::Debug for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Decision::Accept { estimated_ms, .. } => f
                .debug_struct("Accept")
                .field("estimated_ms", estimated_ms)
                .finish_non_exhaustive(),
            Decision::Refuse(e) => f.debug_tuple("Refuse").field(e).finish(),
        }
    }
}

/// What an agent does with the messages addressed to it. Every method has a default: an agent
/// that answers no queries says `unknown_domain`, one that takes no tasks refuses them with
/// `not_authorized`, and notifications are dropped.
pub trait Handler: Send + Sync + 'static {
    /// Answers a query: a `response`, or an `error`.
    fn query(
        &self,
        from: &Sender,
        query: QueryPayload,
    ) -> BoxFuture<'static, Result<ResponsePayload, ErrorPayload>> {
        let _ = (from, query);
        Box::pin(async { Err(error("unknown_domain", "this agent answers no queries")) })
    }

    /// Decides on a delegation (at once: the `ack` goes out when this returns).
    fn delegate(&self, from: &Sender, task: DelegatePayload) -> Decision {
        let _ = (from, task);
        Decision::Refuse(error(
            "not_authorized",
            "this agent takes no delegated tasks",
        ))
    }

    /// Takes a notification (nothing is answered).
    fn notify(&self, from: &Sender, note: NotifyPayload) {
        let _ = (from, note);
    }
}

/// A handler that answers nothing itself (the defaults): the agent still answers `ping` and
/// `discover`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silent;

impl Handler for Silent {}

/// The handler of `agh acp serve --echo`: every query is answered with its own question (the
/// summary is the question on one line, `data` the question as sent), every delegation is
/// accepted and completed with the task as its outcome, after `context.echo_delay_ms`
/// milliseconds when the delegator gives one (so a running delegation can be cancelled).
#[derive(Clone, Copy, Debug, Default)]
pub struct Echo;

impl Handler for Echo {
    fn query(
        &self,
        _from: &Sender,
        query: QueryPayload,
    ) -> BoxFuture<'static, Result<ResponsePayload, ErrorPayload>> {
        // The question itself is the summary when the schema's `summary` takes it (the generated
        // type checks); else the question on one line.
        let (summary, data) = match query.question {
            QueryPayloadQuestion::String(s) => {
                let text = String::from(s);
                let summary = text
                    .parse::<agh_acp::ResponsePayloadSummary>()
                    .or_else(|_| one_line(&text).parse());
                (summary, Value::String(text))
            }
            QueryPayloadQuestion::Object(o) => ("a structured query".parse(), Value::Object(o)),
        };
        let answer = summary
            .map(|summary| ResponsePayload {
                data: Some(data),
                summary,
                tokens_used: None,
                truncated: false,
                extra: Map::new(),
            })
            .map_err(|e| error("internal", &format!("summary: {e}")));
        Box::pin(async move { answer })
    }

    fn delegate(&self, _from: &Sender, task: DelegatePayload) -> Decision {
        let delay = task
            .context
            .get("echo_delay_ms")
            .and_then(Value::as_u64)
            .unwrap_or(0);
        let outcome = task.task.to_string();
        Decision::Accept {
            estimated_ms: Some(delay),
            work: Box::pin(async move {
                if delay > 0 {
                    tokio::time::sleep(std::time::Duration::from_millis(delay)).await;
                }
                payload(json!({ "status": "completed", "outcome": outcome }))
            }),
        }
    }
}

/// `text` on one line (line breaks become spaces), non-blank: what `Echo` answers as the summary
/// of a question the schema's `summary` does not take as it is.
fn one_line(text: &str) -> String {
    let breaks = |c: char| matches!(c, '\n' | '\r' | '\u{85}' | '\u{2028}' | '\u{2029}');
    let line: String = text
        .chars()
        .map(|c| if breaks(c) { ' ' } else { c })
        .collect();
    match line.trim().is_empty() {
        true => "(blank)".to_owned(),
        false => line,
    }
}

/// A generated payload type from its JSON; an `internal` error naming what does not fit.
#[allow(
    clippy::result_large_err,
    reason = "the error is the ACP error payload a handler answers with, as the Handler methods return it"
)]
pub fn payload<T: serde::de::DeserializeOwned>(value: Value) -> Result<T, ErrorPayload> {
    serde_json::from_value(value).map_err(|e| error("internal", &format!("payload: {e}")))
}

/// An ACP `error` payload: `code` (one of the listed codes, or any `^[a-z][a-z0-9_]*$`; another
/// becomes `internal`) and a message (a blank one becomes the code).
pub fn error(code: &str, message: &str) -> ErrorPayload {
    let code: agh_acp::types::ErrorCode = code
        .parse()
        .unwrap_or_else(|_| "internal".parse().expect("`internal` is an error code"));
    let message: agh_acp::Text = message
        .parse()
        .unwrap_or_else(|_| code.as_str().parse().expect("a code is non-blank text"));
    ErrorPayload {
        code,
        message,
        retryable: false,
        extra: Map::new(),
    }
}

/// The capabilities an agent without a capabilities file announces: no domains.
pub fn no_capabilities() -> CapabilitiesPayload {
    CapabilitiesPayload {
        agent_name: None,
        channels: None,
        domains: Vec::new(),
        max_concurrent_tasks: None,
        model: None,
        tools: None,
        extra: Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::one_line;

    #[test]
    fn one_line_replaces_every_line_break_and_keeps_other_text() {
        assert_eq!(one_line("plain text"), "plain text");
        assert_eq!(one_line("a\nb\rc"), "a b c");
        assert_eq!(one_line("a\u{85}b\u{2028}c\u{2029}d"), "a b c d");
        // Lead bytes 0xC2 and 0xE2 that start no break: kept as they are.
        assert_eq!(
            one_line("\u{a0}\u{20ac} \u{2014}"),
            "\u{a0}\u{20ac} \u{2014}"
        );
        assert_eq!(one_line("  "), "(blank)");
        assert_eq!(one_line("\n\u{2028}"), "(blank)");
    }
}
