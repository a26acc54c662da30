//! The envelope rules that are not schema-shaped, written once over a [`Members`] view that
//! both paths (and every profile's parser) provide: the kind's name, freshness, the per-kind
//! presence rules, body overrides, body-to-envelope matches and recipes.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::recipe::find_recipe;
use super::*;
use crate::json::scan::{Kept, Member, RawJson};
use crate::schema::kind::{KindRules, Presence};
use crate::schema::model::{BodyOverrides, Forbidden};
use crate::schema::problem::{Problem, Problems, ReasonCode};

/// Envelope members as the envelope rules read them: the exact path's tree and the fast path's
/// view both answer, so each rule is written once.
pub trait Members {
    /// The member, when present and not `null`.
    fn member_of(&self, name: &str) -> Option<Value>;
    /// Whether the member is present and not `null`.
    fn present(&self, name: &str) -> bool;
    /// The member's string value.
    fn str_of(&self, name: &str) -> Option<&str>;
    /// The member's integer value (beyond `i64`: `i64::MAX`, the far future).
    fn int_of(&self, name: &str) -> Option<i64>;
}

impl Members for Map<String, Value> {
    fn member_of(&self, name: &str) -> Option<Value> {
        self.get(name).filter(|v| !v.is_null()).cloned()
    }

    fn present(&self, name: &str) -> bool {
        self.get(name).is_some_and(|v| !v.is_null())
    }

    fn str_of(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    fn int_of(&self, name: &str) -> Option<i64> {
        // Its integral value however written (`1.0`: a set counting integers as JSON Schema does
        // has checked it as one).
        let n = crate::json::decimal::integral_value(self.get(name)?.as_number()?.as_str())?;
        Some(i64::try_from(n).unwrap_or(i64::MAX))
    }
}

impl<T: EnvelopeView> Members for T {
    fn member_of(&self, name: &str) -> Option<Value> {
        match self.member(name) {
            Member::Absent => None,
            Member::Str(v) => Some(Value::String(v.to_owned())),
            Member::Int(n) => match (u64::try_from(n), i64::try_from(n)) {
                (Ok(u), _) => Some(Value::from(u)),
                (_, Ok(i)) => Some(Value::from(i)),
                _ => None,
            },
            Member::Raw(v) => Some(v.to_value()),
        }
    }

    fn present(&self, name: &str) -> bool {
        self.member(name) != Member::Absent
    }

    fn str_of(&self, name: &str) -> Option<&str> {
        match self.member(name) {
            Member::Str(v) => Some(v),
            _ => None,
        }
    }

    fn int_of(&self, name: &str) -> Option<i64> {
        match self.member(name) {
            Member::Int(n) => Some(i64::try_from(n).unwrap_or(i64::MAX)),
            _ => None,
        }
    }
}

/// Step 2 of the exact path, the kind's name: a forbidden name is `malformed`, a name that is not
/// one of `known` is `unsupported_kind`. Returns whether the name is known and allowed. Shared by
/// every profile's exact path (v0's `Registry` and the generic one).
pub fn kind_name<'k>(
    kind_member: &str,
    kind: &str,
    forbidden: &[Forbidden],
    known: impl Iterator<Item = &'k str> + Clone,
    out: &mut Problems,
) -> bool {
    if let Some(f) = forbidden.iter().find(|f| f.name == kind) {
        out.push(Problem::new(
            ReasonCode::Malformed,
            format!("/{kind_member}"),
            "message kinds: forbidden kind names",
            f.message,
        ));
        return false;
    }
    if known.clone().any(|k| k == kind) {
        return true;
    }
    let known: Vec<&str> = known.collect();
    out.push(Problem::new(
        ReasonCode::UnsupportedKind,
        format!("/{kind_member}"),
        "envelope: kind",
        format!(
            "kind `{kind}` is not supported here (supported: {})",
            known.join(", ")
        ),
    ));
    false
}

/// Freshness: `expires_at` at or before the clock is expired; without it, a sent time older than
/// the replay age, or further than it in the future, is expired too. Times are in the profile's
/// clock unit (`options.now` is seconds).
pub fn freshness(map: &impl Members, layout: &Layout, options: &Options, out: &mut Problems) {
    let roles = &layout.roles;
    let clock = roles.clock;
    let per_second = clock.per_second();
    let unit = clock.unit();
    let now = options.now.saturating_mul(per_second);
    let replay_secs = i64::try_from(options.replay_age_secs).unwrap_or(i64::MAX);
    let replay = replay_secs.saturating_mul(per_second);
    if let Some(member) = roles.expires_at {
        if let Some(expires_at) = map.int_of(member) {
            if expires_at <= now {
                out.push(Problem::new(
                    ReasonCode::Expired,
                    format!("/{member}"),
                    format!("envelope: freshness ({member})"),
                    format!(
                        "the envelope expired at {expires_at}, at or before the receiver's clock {now}"
                    ),
                ));
                return;
            }
        }
    }
    let Some(member) = roles.sent_at else { return };
    let Some(ts) = map.int_of(member) else { return };
    let age = now.saturating_sub(ts);
    // Whether `expires_at` is present is asked only of a message past the replay age.
    if age > replay && !roles.expires_at.is_some_and(|m| map.present(m)) {
        let no_expiry = match roles.expires_at {
            Some(m) => format!(", and there is no `{m}`"),
            None => String::new(),
        };
        // A clock finer than seconds, and a `ts` that would be fresh read as seconds: say so.
        let in_seconds = per_second > 1
            && options
                .now
                .saturating_sub(ts)
                .checked_abs()
                .is_some_and(|a| a <= replay_secs);
        let hint = if in_seconds {
            format!(" (it reads as Unix seconds; `{member}` is in {unit})")
        } else {
            String::new()
        };
        out.push(Problem::new(
            ReasonCode::Expired,
            format!("/{member}"),
            "envelope: freshness (replay age)",
            format!(
                "`{member}` {ts} is {age} {unit} old, more than the replay age of {replay_secs} s{no_expiry}{hint}"
            ),
        ));
    } else if age < 0 && age.saturating_neg() > replay {
        out.push(Problem::new(
            ReasonCode::Expired,
            format!("/{member}"),
            format!("envelope: freshness ({member} in the future)"),
            format!(
                "`{member}` {ts} is {} {unit} ahead of the receiver's clock, more than the replay age of {replay_secs} s",
                age.saturating_neg()
            ),
        ));
    }
}

/// One presence rule: `Required` members must be present, `Forbidden` ones absent or `null`.
fn presence_rule(
    map: &impl Members,
    member: &str,
    presence: Presence,
    kind: &str,
    rule: impl FnOnce() -> Cow<'static, str>,
    out: &mut Problems,
) {
    // Only `Required` and `Forbidden` are rules: the member is not looked up for the others.
    if !matches!(presence, Presence::Required | Presence::Forbidden) {
        return;
    }
    let here = map.present(member);
    let message = match (presence, here) {
        (Presence::Required, false) => format!("`{kind}` requires `{member}`"),
        (Presence::Forbidden, true) => format!("`{member}` must be absent or null on `{kind}`"),
        _ => return,
    };
    out.push(Problem::new(
        ReasonCode::Malformed,
        format!("/{member}"),
        rule(),
        message,
    ));
}

/// The kind's presence rules: surface and container, work id, target, correlation member, body.
pub fn kind_rules(map: &impl Members, rules: &KindRules, layout: &Layout, out: &mut Problems) {
    let kind = rules.kind;
    let surface_rule = || Cow::Borrowed("message kinds: surface rules");
    if let Some(surface_member) = layout.surface_member {
        match rules.surface {
            Presence::Forbidden => {
                presence_rule(
                    map,
                    surface_member,
                    Presence::Forbidden,
                    kind,
                    surface_rule,
                    out,
                );
                for c in layout.containers {
                    if out.is_done() {
                        return;
                    }
                    presence_rule(map, c.member, Presence::Forbidden, kind, surface_rule, out);
                }
            }
            _ => match map.str_of(surface_member) {
                None => {
                    let values: Vec<String> = layout
                        .containers
                        .iter()
                        .map(|c| format!("`{}`", c.surface))
                        .collect();
                    out.push(Problem::new(
                        ReasonCode::Malformed,
                        format!("/{surface_member}"),
                        "message kinds: surface rules",
                        format!(
                            "`{kind}` is conversation-bearing: `{surface_member}` is required ({})",
                            values.join(" or ")
                        ),
                    ));
                }
                Some(surface) => {
                    for c in layout.containers {
                        let here = map.present(c.member);
                        let message = if c.surface == surface && !here {
                            format!(
                                "`{surface_member}` is `{surface}`: `{}` is required",
                                c.member
                            )
                        } else if c.surface != surface && here {
                            format!(
                                "`{surface_member}` is `{surface}`: `{}` must be absent (one envelope names one container)",
                                c.member
                            )
                        } else {
                            continue;
                        };
                        out.push(Problem::new(
                            ReasonCode::Malformed,
                            format!("/{}", c.member),
                            "envelope: conversation surface fields",
                            message,
                        ));
                        if out.is_done() {
                            return;
                        }
                    }
                }
            },
        }
    }
    let roles = &layout.roles;
    let checks: [(Option<&'static str>, Presence, &'static str); 3] = [
        (roles.work_id, rules.work_id, "message kinds: work field"),
        (roles.to, rules.to, "message kinds: envelope requirements"),
        (
            roles.reply_to,
            rules.reply_to,
            "message kinds: envelope requirements",
        ),
    ];
    for (i, (member, presence, rule)) in checks.into_iter().enumerate() {
        if out.is_done() {
            return;
        }
        let Some(member) = member else { continue };
        let rule = move || match i {
            0 => Cow::Borrowed(rule),
            _ => Cow::Owned(format!("{rule} ({member})")),
        };
        presence_rule(map, member, presence, kind, rule, out);
    }
    if out.is_done() {
        return;
    }
    presence_rule(
        map,
        layout.body_member,
        rules.body,
        kind,
        || Cow::Borrowed("message kinds: body"),
        out,
    );
}

/// The envelope rules a body's conditions override (whois response: `reply_to` required).
pub fn overridden_rules(
    map: &impl Members,
    rules: &KindRules,
    overrides: &BodyOverrides,
    layout: &Layout,
    out: &mut Problems,
) {
    if overrides.to.is_none() && overrides.reply_to.is_none() {
        return;
    }
    let kind = rules.kind;
    let roles = &layout.roles;
    for (member, presence, rule) in [
        (roles.to, overrides.to.filter(|p| *p != rules.to), rules.to),
        (
            roles.reply_to,
            overrides.reply_to.filter(|p| *p != rules.reply_to),
            rules.reply_to,
        ),
    ] {
        let _ = rule;
        let (Some(member), Some(presence)) = (member, presence) else {
            continue;
        };
        presence_rule(
            map,
            member,
            presence,
            kind,
            || {
                Cow::Owned(format!(
                    "message kinds: envelope requirements ({member}, by body form)"
                ))
            },
            out,
        );
        if out.is_done() {
            return;
        }
    }
}

/// The fast path's form of [`envelope_match`] and [`verify`]: whether the kind's body-to-envelope
/// matches and recipes hold, read from the body's checked JSON text without building values.
/// The members the body scanner kept answer the pointers that start at them.
pub fn cross_checks_hold(
    envelope: &impl Members,
    body: RawJson<'_>,
    kept: &Kept<'_>,
    rules: &KindRules,
    recipes: &'static [Recipe],
) -> bool {
    let at = |pointer: &str| {
        kept.pointer(pointer)
            .unwrap_or_else(|| crate::json::scan::pointer(body, pointer))
    };
    let matches = rules.envelope_match.iter().all(|m| {
        let Some(inner) = at(m.body).filter(|v| !v.is_null()) else {
            return true;
        };
        match (inner.as_str(), envelope.str_of(m.envelope)) {
            (Some(a), Some(b)) => a == b,
            _ => match envelope.member_of(m.envelope) {
                None => false,
                outer => Some(inner.to_value()) == outer,
            },
        }
    });
    matches
        && rules.verify.iter().all(|v| {
            let Some(target) = at(v.body) else {
                return true;
            };
            let fields = kept.fields(v.body);
            find_recipe(recipes, v.recipe).is_some_and(|r| (r.holds)(target, fields))
        })
}

/// The body member at a JSON Pointer, as a value (absent: `None`).
pub type BodyAt<'f> = dyn Fn(&str) -> Option<Value> + 'f;

/// `envelope_match`: when the body member is present, it must equal the envelope member.
pub fn envelope_match(
    map: &impl Members,
    body_at: &BodyAt<'_>,
    rules: &KindRules,
    body_member: &str,
    out: &mut Problems,
) {
    for m in rules.envelope_match {
        let Some(inner) = body_at(m.body).filter(|v| !v.is_null()) else {
            continue;
        };
        let outer = map.member_of(m.envelope);
        if outer.as_ref() != Some(&inner) {
            let shown =
                |v: Option<&Value>| v.map_or("nothing".to_owned(), crate::schema::check::preview);
            out.push(Problem::new(
                ReasonCode::Malformed,
                format!("/{body_member}{}", m.body),
                "message kinds: body member must match the envelope",
                format!(
                    "`{body_member}{}` is {} but must equal the envelope's `{}` ({})",
                    m.body,
                    shown(Some(&inner)),
                    m.envelope,
                    shown(outer.as_ref())
                ),
            ));
            if out.is_done() {
                return;
            }
        }
    }
}

/// `verify`: the kind's recipe checks on body members.
pub fn verify(
    body_at: &BodyAt<'_>,
    rules: &KindRules,
    recipes: &'static [Recipe],
    body_member: &str,
    out: &mut Problems,
) {
    for v in rules.verify {
        let Some(target) = body_at(v.body) else {
            continue;
        };
        let code = ReasonCode::parse(v.reason_code).unwrap_or(ReasonCode::VerificationFailed);
        let Some(recipe) = find_recipe(recipes, v.recipe) else {
            out.push(Problem::new(
                ReasonCode::Internal,
                format!("/{body_member}{}", v.body),
                "parser",
                format!("unknown verify recipe `{}`", v.recipe),
            ));
            return;
        };
        if let Err((pointer, message)) = (recipe.check)(&target) {
            out.push(Problem::new(
                code,
                format!("/{body_member}{}{pointer}", v.body),
                Cow::Owned(format!("recipe {}", v.recipe)),
                message,
            ));
            if out.is_done() {
                return;
            }
        }
    }
}
