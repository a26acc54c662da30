//! A profile's transport binding as data (`x-agh-binding` on the envelope schema, generated into
//! `Spec::binding`): the NATS subjects, built from envelope members by templates, and which
//! request kinds travel as NATS request/reply.
//!
//! A template is literal text with `{member}` holes (`acp.v0-2.agent.{to}`), or
//! `{member|recipe}` when the member's value goes through a named byte recipe first (v0's
//! `{to|route-token}`, a hash). The runtime names no recipe: the caller passes the table of the
//! recipes its profile's templates name, as it does for the parser's verify recipes.

use std::fmt;

/// One piece of a subject template.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Segment {
    /// Literal text, written as it stands.
    Text(&'static str),
    /// The value of an envelope member, through a recipe when one is named.
    Member {
        /// The envelope member.
        member: &'static str,
        /// The recipe applied to its value (`route-token`), if any.
        recipe: Option<&'static str>,
    },
}

/// A subject template.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Subject {
    /// The template as the schema writes it.
    pub template: &'static str,
    /// Its pieces, in order.
    pub segments: &'static [Segment],
}

/// A recipe a subject template names: the member's value in, the subject text out.
#[derive(Clone, Copy, Debug)]
pub struct SubjectRecipe {
    /// The name the template gives it.
    pub name: &'static str,
    /// The function.
    pub apply: fn(&str) -> String,
}

/// Why a subject could not be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubjectError {
    /// The template.
    pub template: &'static str,
    /// The member whose value is missing or cannot stand in a subject (empty: the template).
    pub member: &'static str,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for SubjectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.member {
            "" => write!(f, "subject `{}`: {}", self.template, self.message),
            m => write!(
                f,
                "subject `{}`, member `{m}`: {}",
                self.template, self.message
            ),
        }
    }
}

impl std::error::Error for SubjectError {}

/// Whether `token` can stand in a NATS subject as (part of) one token: not empty, and none of
/// `.`, `*`, `>`, white space or control characters.
pub fn is_subject_token(token: &str) -> bool {
    !token.is_empty()
        && !token
            .chars()
            .any(|c| matches!(c, '.' | '*' | '>') || c.is_whitespace() || c.is_control())
}

impl Subject {
    /// The envelope members the template reads.
    pub fn members(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.segments.iter().filter_map(|s| match s {
            Segment::Member { member, .. } => Some(*member),
            Segment::Text(_) => None,
        })
    }

    /// The subject for the members `value` gives (by member name), each through its recipe
    /// (looked up in `recipes` by name). Fails naming the member when a value is absent, a
    /// recipe is not in the table, or a value (after its recipe) cannot stand in a subject token.
    pub fn render<'v>(
        &self,
        value: impl Fn(&str) -> Option<&'v str>,
        recipes: &[SubjectRecipe],
    ) -> Result<String, SubjectError> {
        let mut out = String::with_capacity(self.template.len() + 64);
        let error = |member: &'static str, message: String| SubjectError {
            template: self.template,
            member,
            message,
        };
        for segment in self.segments {
            match *segment {
                Segment::Text(t) => out.push_str(t),
                Segment::Member { member, recipe } => {
                    let v = value(member).ok_or_else(|| error(member, "no value".into()))?;
                    let v = match recipe {
                        None => std::borrow::Cow::Borrowed(v),
                        Some(name) => {
                            let r = recipes.iter().find(|r| r.name == name).ok_or_else(|| {
                                error(member, format!("no recipe `{name}` was supplied"))
                            })?;
                            std::borrow::Cow::Owned((r.apply)(v))
                        }
                    };
                    if !is_subject_token(&v) {
                        return Err(error(
                            member,
                            format!(
                                "`{v}` cannot stand in a NATS subject token (empty, or `.`, `*`, `>`, white space or a control character)"
                            ),
                        ));
                    }
                    out.push_str(&v);
                }
            }
        }
        Ok(out)
    }
}

/// A profile's binding to NATS (`x-agh-binding`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Binding {
    /// The transport (`nats`).
    pub transport: &'static str,
    /// The subject of messages to one party (the template reads the `to` role's member; a
    /// party subscribes to it with its own id).
    pub direct: Subject,
    /// The subject of messages to nobody in particular (`to` absent), if the profile has one.
    pub broadcast: Option<Subject>,
    /// The request kinds sent as NATS request/reply: the request's first answer (a reply of its
    /// exchange) comes back on the NATS reply subject; later replies (ACP's `result`) and every
    /// other kind are published on the direct (or broadcast) subject.
    pub request_reply: &'static [&'static str],
}

impl Binding {
    /// Whether a request of `kind` travels as NATS request/reply.
    pub fn is_request_reply(&self, kind: &str) -> bool {
        self.request_reply.contains(&kind)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const DIRECT: Subject = Subject {
        template: "p.{ws}.peer.{to|upper}",
        segments: &[
            Segment::Text("p."),
            Segment::Member {
                member: "ws",
                recipe: None,
            },
            Segment::Text(".peer."),
            Segment::Member {
                member: "to",
                recipe: Some("upper"),
            },
        ],
    };

    fn upper(s: &str) -> String {
        s.to_uppercase()
    }

    const RECIPES: &[SubjectRecipe] = &[SubjectRecipe {
        name: "upper",
        apply: upper,
    }];

    #[test]
    fn renders_members_through_their_recipes() {
        let v = |m: &str| match m {
            "ws" => Some("w1"),
            "to" => Some("ab"),
            _ => None,
        };
        assert_eq!(DIRECT.render(v, RECIPES).unwrap(), "p.w1.peer.AB");
        assert_eq!(DIRECT.members().collect::<Vec<_>>(), ["ws", "to"]);
    }

    #[test]
    fn refuses_what_cannot_stand_in_a_subject() {
        for bad in ["a.b", "", "a b", "*", ">", "a\u{7}"] {
            let v = |m: &str| match m {
                "ws" => Some(bad),
                _ => Some("x"),
            };
            let e = DIRECT.render(v, RECIPES).unwrap_err();
            assert_eq!(e.member, "ws", "{bad:?}");
        }
        let missing = DIRECT.render(|_| None, RECIPES).unwrap_err();
        assert_eq!(missing.message, "no value");
        let no_recipe = DIRECT.render(|_| Some("x"), &[]).unwrap_err();
        assert_eq!(no_recipe.member, "to");
        assert!(no_recipe.message.contains("upper"), "{no_recipe}");
    }
}
