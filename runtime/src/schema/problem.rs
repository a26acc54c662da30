//! Problems found while validating an envelope: a protocol reason code, a JSON Pointer to the
//! offending member and a message a person can act on.

use std::borrow::Cow;
use std::fmt;

pub use crate::generated::ReasonCode;

/// One problem with an envelope.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Problem {
    /// The protocol reason code a receipt would carry.
    pub code: ReasonCode,
    /// RFC 6901 JSON Pointer to the offending member (`""` for the whole envelope).
    pub pointer: String,
    /// What is wrong, for a person.
    pub message: String,
    /// The rule broken, as `<page>: <rule>` (for example `envelope: channel grammar`).
    pub rule: Cow<'static, str>,
}

impl Problem {
    /// A problem with the given code, pointer, rule and message.
    pub fn new(
        code: ReasonCode,
        pointer: impl Into<String>,
        rule: impl Into<Cow<'static, str>>,
        message: impl Into<String>,
    ) -> Self {
        Problem {
            code,
            pointer: pointer.into(),
            message: message.into(),
            rule: rule.into(),
        }
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        write!(f, "{} at {}: {}", self.code, at, self.message)
    }
}

/// Collects problems: either only the first (the parser's fail-fast mode) or all of them
/// (`agh explain`).
#[derive(Clone, Debug, Default)]
pub struct Problems {
    list: Vec<Problem>,
    all: bool,
}

impl Problems {
    /// Keep only the first problem; [`Problems::is_done`] turns true after it.
    pub fn first_only() -> Self {
        Problems {
            list: Vec::new(),
            all: false,
        }
    }

    /// Keep every problem.
    pub fn all() -> Self {
        Problems {
            list: Vec::new(),
            all: true,
        }
    }

    /// Record a problem (ignored once a first-only collector holds one).
    pub fn push(&mut self, problem: Problem) {
        if self.all || self.list.is_empty() {
            self.list.push(problem);
        }
    }

    /// Whether validation may stop: a first-only collector that holds a problem.
    pub fn is_done(&self) -> bool {
        !self.all && !self.list.is_empty()
    }

    /// Whether no problem was recorded.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The problems, in the order found.
    pub fn as_slice(&self) -> &[Problem] {
        &self.list
    }

    /// The problems, in the order found.
    pub fn into_vec(self) -> Vec<Problem> {
        self.list
    }
}
