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

    /// The body of an `acme.poll` envelope.
    #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, Body)]
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
}
