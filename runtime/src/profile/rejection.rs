//! Why an envelope was refused ([`Rejection`]) and what could be read of it ([`Head`]).

use std::borrow::Cow;
use std::fmt;

use serde_json::{Map, Value};

use crate::generated::defaults;
use crate::schema::problem::{Problem, ReasonCode};

/// What could be read of a refused envelope, so that a receiver can address a receipt.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Head {
    /// `id`, when it is a string.
    pub id: Option<String>,
    /// `from`, when it is a string.
    pub from: Option<String>,
    /// `kind`, when it is a string.
    pub kind: Option<String>,
    /// `surface`, when it is a string.
    pub surface: Option<String>,
    /// The container id the surface selects (`thread_id` for `thread`, ...), when it is a string.
    pub container_id: Option<String>,
    /// `work_id`, when it is a string.
    pub work_id: Option<String>,
}

/// Where [`Head::of`] reads the string members of an envelope: a JSON object, or a profile's
/// parsed message.
pub trait HeadSource {
    /// The value of the top-level member `name`, when it is a string.
    fn string_member(&self, name: &str) -> Option<String>;
}

impl HeadSource for Map<String, Value> {
    fn string_member(&self, name: &str) -> Option<String> {
        self.get(name).and_then(Value::as_str).map(str::to_owned)
    }
}

impl Head {
    /// What can be read of an envelope's members, at the reference set's members
    /// (`crate::generated::defaults`; a profile's parser reads its own layout).
    pub fn of(source: &(impl HeadSource + ?Sized)) -> Head {
        Head::read(|k| source.string_member(k))
    }

    /// The head of a parsed message.
    pub fn of_message(message: &(impl HeadSource + ?Sized)) -> Head {
        Head::of(message)
    }

    /// The head from the string members `string` finds, at the reference set's members.
    pub fn read(string: impl Fn(&str) -> Option<String>) -> Head {
        let member = |m: Option<&str>| m.and_then(&string);
        let surface = member(defaults::SURFACE_MEMBER);
        let container_id = surface.as_deref().and_then(|surface| {
            defaults::CONTAINERS
                .iter()
                .find(|(s, _)| *s == surface)
                .and_then(|(_, m)| string(m))
        });
        Head {
            id: member(defaults::ID_MEMBER),
            from: member(defaults::FROM_MEMBER),
            kind: string(defaults::KIND_MEMBER),
            surface,
            container_id,
            work_id: member(defaults::WORK_ID_MEMBER),
        }
    }
}

/// Why an envelope was refused: the protocol reason code, a JSON Pointer to the offending member,
/// a message a person can act on, and the rule it breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The reason code a receipt would carry.
    pub code: ReasonCode,
    /// RFC 6901 JSON Pointer of the offending member (`""`: the whole envelope).
    pub pointer: String,
    /// What is wrong.
    pub message: String,
    /// The rule broken: a schema location (`envelope.schema.json#/properties/channel`) or a page
    /// rule (`envelope: freshness`).
    pub rule: Cow<'static, str>,
    /// What could be read of the envelope (boxed: rejections travel in `Result`s).
    pub head: Box<Head>,
}

impl Rejection {
    /// A rejection for `problem`, with what was read of the envelope.
    pub fn new(problem: Problem, head: Head) -> Self {
        Rejection {
            code: problem.code,
            pointer: problem.pointer,
            message: problem.message,
            rule: problem.rule,
            head: Box::new(head),
        }
    }

    /// A rejection for `problem`, with nothing read of the envelope.
    pub fn from_problem(problem: Problem) -> Self {
        Rejection::new(problem, Head::default())
    }

    /// The problem part (code, pointer, message, rule).
    pub fn problem(&self) -> Problem {
        Problem {
            code: self.code,
            pointer: self.pointer.clone(),
            message: self.message.clone(),
            rule: self.rule.clone(),
        }
    }
}

impl fmt::Display for Rejection {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.problem().fmt(f)
    }
}

impl std::error::Error for Rejection {}
