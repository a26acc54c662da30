//! The transport binding (`x-agh-binding` at the envelope schema's root): the NATS subjects a
//! profile uses, as templates over envelope members, and the request kinds that travel as NATS
//! request/reply.

use serde_json::Value;

use super::{str_list, Builder, Envelope, Kind};
use crate::error::{join_pointer, Result};

/// One piece of a subject template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Segment {
    /// Literal text.
    Text(String),
    /// An envelope member's value, through a named recipe when `recipe` is set.
    Member {
        /// The envelope member.
        member: String,
        /// The recipe (`route-token`).
        recipe: Option<String>,
    },
}

/// A subject template and its pieces.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SubjectTemplate {
    /// As written.
    pub template: String,
    /// Parsed.
    pub segments: Vec<Segment>,
}

/// `x-agh-binding`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// `nats`.
    pub transport: String,
    /// Messages to one party (reads the `to` role's member).
    pub direct: SubjectTemplate,
    /// Messages to nobody in particular, if any.
    pub broadcast: Option<SubjectTemplate>,
    /// Request kinds sent as NATS request/reply.
    pub request_reply: Vec<String>,
    /// Why these subjects (docs).
    pub description: String,
}

const KEYS: &[&str] = &["transport", "description", "subjects", "request_reply"];

/// Parses `{member}` / `{member|recipe}` holes out of a template; `Err` says what is wrong.
pub(crate) fn parse_template(template: &str) -> std::result::Result<Vec<Segment>, String> {
    let mut out = Vec::new();
    let mut rest = template;
    while !rest.is_empty() {
        match rest.find('{') {
            Some(0) => {
                let end = rest
                    .find('}')
                    .ok_or_else(|| "a `{` is not closed by `}`".to_string())?;
                let hole = &rest[1..end];
                let (member, recipe) = match hole.split_once('|') {
                    Some((m, r)) => (m, Some(r)),
                    None => (hole, None),
                };
                let name_ok = |s: &str| {
                    !s.is_empty()
                        && s.chars()
                            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
                };
                if !name_ok(member) || !recipe.is_none_or(name_ok) {
                    return Err(format!(
                        "`{{{hole}}}` is not `{{member}}` or `{{member|recipe}}`"
                    ));
                }
                out.push(Segment::Member {
                    member: member.to_string(),
                    recipe: recipe.map(str::to_string),
                });
                rest = &rest[end + 1..];
            }
            found => {
                let end = found.unwrap_or(rest.len());
                let text = &rest[..end];
                if text.contains('}') {
                    return Err("a `}` closes no `{`".into());
                }
                if text
                    .chars()
                    .any(|c| matches!(c, '*' | '>') || c.is_whitespace() || c.is_control())
                {
                    return Err(format!(
                        "`{text}`: literal text may not hold `*`, `>`, white space or control characters (no wildcards in a binding's subjects)"
                    ));
                }
                out.push(Segment::Text(text.to_string()));
                rest = &rest[end..];
            }
        }
    }
    // Tokens: no empty token, no leading or trailing dot.
    let mut flat = String::new();
    for s in &out {
        match s {
            Segment::Text(t) => flat.push_str(t),
            Segment::Member { .. } => flat.push('x'),
        }
    }
    if flat.is_empty() || flat.split('.').any(str::is_empty) {
        return Err("every `.`-separated token must be non-empty".into());
    }
    Ok(out)
}

impl Builder<'_> {
    /// `x-agh-binding` of the envelope file, if any, checked against the envelope and the kinds.
    pub(super) fn binding(&self, env: &Envelope, kinds: &[Kind]) -> Result<Option<Binding>> {
        let Some(file) = self
            .set
            .files()
            .find(|f| f.doc.get("x-agh-envelope").is_some())
        else {
            return Ok(None);
        };
        let Some(x) = file.doc.get("x-agh-binding") else {
            return Ok(None);
        };
        let id = &file.id;
        let xp = "/x-agh-binding";
        let err = |ptr: &str, msg: String| self.err(id, ptr, msg);
        let Value::Object(xm) = x else {
            return Err(err(xp, "`x-agh-binding` must be an object".into()));
        };
        for k in xm.keys() {
            if !KEYS.contains(&k.as_str()) {
                return Err(err(
                    &join_pointer(xp, k),
                    format!(
                        "unknown `x-agh-binding` member `{k}` (expected one of {})",
                        KEYS.join(", ")
                    ),
                ));
            }
        }
        let transport = match x.get("transport") {
            Some(Value::String(t)) if t == "nats" => t.clone(),
            _ => {
                return Err(err(
                    &join_pointer(xp, "transport"),
                    "`transport` must be `nats` (the one binding the runtime implements)".into(),
                ))
            }
        };
        let description = x
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let sp = join_pointer(xp, "subjects");
        let subjects = x
            .get("subjects")
            .and_then(Value::as_object)
            .ok_or_else(|| err(&sp, "`subjects` must be an object with `direct`".into()))?;
        for k in subjects.keys() {
            if !["direct", "broadcast"].contains(&k.as_str()) {
                return Err(err(
                    &join_pointer(&sp, k),
                    format!("unknown subject `{k}` (expected `direct` or `broadcast`)"),
                ));
            }
        }
        let to = env.roles.to.as_deref();
        let template = |name: &str| -> Result<Option<SubjectTemplate>> {
            let p = join_pointer(&sp, name);
            let Some(v) = subjects.get(name) else {
                return Ok(None);
            };
            let text = v
                .as_str()
                .ok_or_else(|| err(&p, "a subject template must be a string".into()))?;
            let segments = parse_template(text).map_err(|m| err(&p, m))?;
            let mut reads_to = false;
            for s in &segments {
                if let Segment::Member { member, .. } = s {
                    if env.member(member).is_none() {
                        return Err(err(&p, format!("`{{{member}}}` names no envelope member")));
                    }
                    reads_to |= Some(member.as_str()) == to;
                }
            }
            match (name, reads_to) {
                ("direct", false) => Err(err(
                    &p,
                    format!(
                        "the direct subject must read the member playing the `to` role ({})",
                        to.map(|t| format!("`{t}`"))
                            .unwrap_or_else(|| "the set has none".into())
                    ),
                )),
                ("broadcast", true) => Err(err(
                    &p,
                    "the broadcast subject is for messages without a target: it cannot read `to`"
                        .into(),
                )),
                _ => Ok(Some(SubjectTemplate {
                    template: text.to_string(),
                    segments,
                })),
            }
        };
        let direct =
            template("direct")?.ok_or_else(|| err(&sp, "`subjects` must have `direct`".into()))?;
        let broadcast = template("broadcast")?;
        let rp = join_pointer(xp, "request_reply");
        let request_reply = match x.get("request_reply") {
            None => Vec::new(),
            Some(v) => str_list(v)
                .ok_or_else(|| err(&rp, "`request_reply` must be a list of kinds".into()))?,
        };
        for (i, k) in request_reply.iter().enumerate() {
            let p = join_pointer(&rp, &i.to_string());
            let kind = kinds
                .iter()
                .find(|x| x.name == *k)
                .ok_or_else(|| err(&p, format!("`{k}` is not a kind of this set")))?;
            if !kind.exchange.as_ref().is_some_and(|e| e.expects_reply) {
                return Err(err(
                    &p,
                    format!("`{k}` opens no exchange that awaits a reply (`x-agh-kind.exchange`): nothing would come back on the NATS reply subject"),
                ));
            }
            if request_reply[..i].contains(k) {
                return Err(err(&p, format!("`{k}` is listed twice")));
            }
        }
        Ok(Some(Binding {
            transport,
            direct,
            broadcast,
            request_reply,
            description,
        }))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn templates_parse_into_text_and_members() {
        let s = parse_template("a.{ws}.peer.{to|route-token}").unwrap();
        assert_eq!(
            s,
            vec![
                Segment::Text("a.".into()),
                Segment::Member {
                    member: "ws".into(),
                    recipe: None
                },
                Segment::Text(".peer.".into()),
                Segment::Member {
                    member: "to".into(),
                    recipe: Some("route-token".into())
                },
            ]
        );
    }

    #[test]
    fn bad_templates_are_refused_saying_why() {
        for (t, why) in [
            ("a.{to", "not closed"),
            ("a.to}", "closes no"),
            ("a.*.{to}", "wildcards"),
            ("a.>", "wildcards"),
            ("a b.{to}", "white space"),
            ("a..{to}", "non-empty"),
            (".{to}", "non-empty"),
            ("{to}.", "non-empty"),
            ("", "non-empty"),
            ("a.{}", "is not"),
            ("a.{to|}", "is not"),
            ("a.{t o}", "is not"),
        ] {
            let e = parse_template(t).unwrap_err();
            assert!(e.contains(why), "{t}: {e}");
        }
    }
}
