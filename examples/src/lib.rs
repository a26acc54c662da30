//! Examples for `agh-protocol`.
//!
//! [`poll`] is a downstream body kind: a crate that depends on `agh-protocol` defines its own
//! body type, attaches the kind rules with `#[derive(Body)]`, registers it, and then parses,
//! validates and serializes envelopes of that kind exactly like the core kinds.

pub mod poll {
    //! `acme.poll`: ask the peers of a thread or direct room to vote on one question.

    use agh_protocol::check::push;
    use agh_protocol::model::BodyOverrides;
    use agh_protocol::{Body, Problem, Problems, ReasonCode, RegisterError, Registry};
    use serde::{Deserialize, Serialize};
    use serde_json::Value;

    /// Ask the peers of a thread or direct room to vote on one question.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Body, schemars::JsonSchema)]
    #[agh(
        kind = "acme.poll",
        profile = "acme-poll/v1",
        surface = required,
        work_id = forbidden,
        to = optional,
        reply_to = optional,
        work = none
    )]
    pub struct PollBody {
        /// The question; must not be blank.
        pub question: String,
        /// Two or more distinct options.
        pub options: Vec<String>,
        /// When voting closes (Unix seconds), if it does.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pub closes_at: Option<i64>,
    }

    /// The rules a poll body has beyond its shape: a non-blank question and at least two
    /// distinct, non-blank options. Problems point into `/body`.
    pub fn check_poll(body: &Value, at: &mut String, out: &mut Problems) -> BodyOverrides {
        let rule = "acme-poll/v1: poll body";
        if let Some(q) = body.get("question").and_then(Value::as_str) {
            if q.trim().is_empty() {
                let mark = push(at, "question");
                out.push(Problem::new(
                    ReasonCode::Malformed,
                    at.as_str(),
                    rule,
                    "`question` must not be blank",
                ));
                at.truncate(mark);
            }
        }
        if let Some(options) = body.get("options").and_then(Value::as_array) {
            let mark = push(at, "options");
            if options.len() < 2 {
                out.push(Problem::new(
                    ReasonCode::Malformed,
                    at.as_str(),
                    rule,
                    format!("a poll needs at least two options, found {}", options.len()),
                ));
            }
            let mut seen = std::collections::HashSet::new();
            for (i, o) in options.iter().enumerate() {
                let Some(o) = o.as_str() else { continue };
                if o.trim().is_empty() || !seen.insert(o.trim()) {
                    out.push(Problem::new(
                        ReasonCode::Malformed,
                        format!("{at}/{i}"),
                        rule,
                        format!("option {i} is blank or repeats an earlier option"),
                    ));
                }
            }
            at.truncate(mark);
        }
        BodyOverrides::default()
    }

    /// The core kinds plus `acme.poll`.
    pub fn registry() -> Result<Registry, RegisterError> {
        let mut registry = Registry::v0();
        registry.register_checked::<PollBody>(check_poll)?;
        Ok(registry)
    }

    /// The kind's rules, as the derive attached them.
    pub fn rules() -> agh_protocol::KindRules {
        PollBody::RULES
    }

    /// The kind's rules in the schemas' `x-agh-kind` vocabulary, from the derive attributes.
    pub fn x_agh_kind(purpose: &str) -> Value {
        let r = PollBody::RULES;
        serde_json::json!({
            "kind": r.kind,
            "profile": r.profile,
            "purpose": purpose,
            "surface": r.surface.as_str(),
            "work_id": r.work_id.as_str(),
            "to": r.to.as_str(),
            "reply_to": r.reply_to.as_str(),
            "work": r.work.as_str(),
            "envelope_match": r.envelope_match.iter()
                .map(|m| serde_json::json!({"body": m.body, "envelope": m.envelope}))
                .collect::<Vec<_>>(),
            "verify": r.verify.iter()
                .map(|v| serde_json::json!({"body": v.body, "recipe": v.recipe, "reason_code": v.reason_code}))
                .collect::<Vec<_>>(),
        })
    }

    /// The reference tables of `acme.poll` (envelope requirements, body fields), generated the
    /// same way as the core kinds' from its `schemars` schema and its derive attributes.
    pub fn reference_docs(schemas: &std::path::Path) -> Result<String, agh_codegen::Error> {
        let schema = serde_json::to_value(schemars::schema_for!(PollBody))
            .map_err(|e| agh_codegen::Error::new("PollBody", "", e.to_string()))?;
        let purpose = schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("An extension kind.")
            .to_owned();
        agh_codegen::docs::extension_kind_docs(schemas, &schema, &x_agh_kind(&purpose))
    }
}

pub mod two_peers {
    //! Two in-process peers running a full work unit (`cargo run -p agh-examples --example work_unit`).

    use agh_protocol::{
        Delivery, Message, MessageBuilder, Outcome, ReceiptBody, Receiver, ReceiverConfig, SayBody,
        TraceBody,
    };
    use serde_json::json;

    /// The example's workspace.
    pub const WS: &str = "ws_alpha";
    /// The example's channel.
    pub const CHANNEL: &str = "builders";
    /// The initiator.
    pub const OPS: &str = "ops-coordinator.session-42";
    /// The target.
    pub const PATCH: &str = "patch-worker.session-19";

    /// One in-process peer: its id, its receiver, and how many envelopes it sent.
    #[derive(Debug)]
    pub struct Peer {
        /// The peer id.
        pub name: &'static str,
        /// Its receiver (parser, routing, dedup, lifecycle).
        pub receiver: Receiver,
        sent: u32,
    }

    impl Peer {
        /// A peer in the example's workspace channel.
        pub fn new(name: &'static str) -> Self {
            Peer {
                name,
                receiver: Receiver::new(ReceiverConfig::new(WS, CHANNEL, name)),
                sent: 0,
            }
        }

        fn envelope(
            &mut self,
            to: &str,
            container: (&str, &str),
            work_id: &str,
            now: i64,
        ) -> MessageBuilder {
            self.sent += 1;
            MessageBuilder::new(WS, CHANNEL, self.name)
                .id(&format!(
                    "msg_{}_{}",
                    self.name.split('.').next().unwrap_or("peer"),
                    self.sent
                ))
                .ts(now)
                .to(to)
                .container(container.0, container.1)
                .work_id(work_id)
        }
    }

    /// A state change, for people.
    pub fn state_of(outcome: &Outcome) -> String {
        match outcome {
            Outcome::Opened { state, .. } => format!("opened -> {state}"),
            Outcome::Transitioned { from, to, .. } => format!("{from} -> {to}"),
            Outcome::Unchanged { state, .. } => format!("stays {state}"),
            Outcome::Ignored(why) => format!("no work change ({why})"),
            Outcome::Refused { code, message } => format!("refused {code}: {message}"),
        }
    }

    /// `from` sends `message` to `to`: the sender records it, the receiver receives it.
    fn deliver(
        log: &mut Vec<String>,
        from: &mut Peer,
        to: &mut Peer,
        message: Message,
        now: i64,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let bytes = message.bytes().clone();
        log.push(format!("{} -> {}: {}", from.name, to.name, message.text()));
        let sent = from.receiver.record_sent(&message);
        log.push(format!("  sender's view:   {}", state_of(&sent)));
        match to.receiver.receive_bytes(bytes, now) {
            Delivery::Delivered { work, .. } => {
                log.push(format!("  receiver's view: {}", state_of(&work)))
            }
            other => return Err(format!("not delivered: {other:?}").into()),
        }
        Ok(())
    }

    fn body<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> Result<T, serde_json::Error> {
        serde_json::from_value(v)
    }

    /// One full work unit (open, accept, progress, needs_input, input, complete) in `container`,
    /// every envelope and state change appended to `log`.
    pub fn work_unit(
        log: &mut Vec<String>,
        ops: &mut Peer,
        patch: &mut Peer,
        container: (&str, &str),
        work_id: &str,
        t0: i64,
    ) -> Result<(), Box<dyn std::error::Error>> {
        let open: SayBody = body(
            json!({"text": "Run the migration smoke test against staging.", "intent": "request"}),
        )?;
        let m = ops.envelope(PATCH, container, work_id, t0).body(&open)?;
        let opened_id = m.id().to_owned();
        deliver(log, ops, patch, m, t0)?;

        let accepted: ReceiptBody = body(json!({"for_id": opened_id, "status": "accepted"}))?;
        let m = patch
            .envelope(OPS, container, work_id, t0 + 1)
            .reply_to(&opened_id)
            .body(&accepted)?;
        deliver(log, patch, ops, m, t0 + 1)?;

        let progress: TraceBody =
            body(json!({"state": "working", "message": "Replaying 12 migrations."}))?;
        let m = patch
            .envelope(OPS, container, work_id, t0 + 2)
            .body(&progress)?;
        deliver(log, patch, ops, m, t0 + 2)?;

        let blocked: TraceBody =
            body(json!({"state": "needs_input", "message": "Which database snapshot?"}))?;
        let m = patch
            .envelope(OPS, container, work_id, t0 + 3)
            .body(&blocked)?;
        deliver(log, patch, ops, m, t0 + 3)?;

        let input: SayBody =
            body(json!({"text": "Use last night's snapshot.", "intent": "answer"}))?;
        let m = ops
            .envelope(PATCH, container, work_id, t0 + 4)
            .body(&input)?;
        deliver(log, ops, patch, m, t0 + 4)?;

        let done: TraceBody = body(
            json!({"state": "completed", "message": "Smoke test passed.", "result": {"passed": true}}),
        )?;
        let m = patch
            .envelope(OPS, container, work_id, t0 + 5)
            .body(&done)?;
        deliver(log, patch, ops, m, t0 + 5)?;
        Ok(())
    }
}
