//! `message-kinds.md`: the summary table, then per kind its envelope requirements, its exchange,
//! its body fields and an example.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::Value;

use super::{
    describe::{presence_word, refusal_code, type_name, when, whole_object_rules},
    envelope::{absent_rule, body_presence_rule, body_presence_varies, governed_members, role_of},
    layout::{body_fields, rule_cell, Layout},
    text::{and_list, capitalize, or_list, slug, table},
};
use crate::model::{Conditional, Field, Kind, Model, Presence, WorkRole};

/// The requirement a kind puts on one envelope member, if it says anything about it.
pub(super) fn member_rule(kind: &Kind, member: &str, model: &Model) -> Option<String> {
    let r = &kind.rules;
    let overrides = |pick: fn(&Conditional) -> Option<Presence>| -> String {
        kind.conditionals
            .iter()
            .filter_map(|c| pick(c).map(|p| format!(" When {}: {}", when(c), presence_word(p))))
            .collect()
    };
    if let Some(c) = &model.containers {
        if member == c.member {
            let values: Vec<String> = c
                .entries
                .iter()
                .map(|(s, _)| format!("`\"{s}\"`"))
                .collect();
            return Some(match (r.surface, r.work) {
                (Presence::Forbidden, _) => "MUST be absent.".into(),
                (_, WorkRole::Updates) => format!(
                    "MUST be {}. MUST match the surface of the work being addressed.",
                    or_list(&values)
                ),
                _ => format!("MUST be {}.", or_list(&values)),
            });
        }
        if let Some((surface, _)) = c.entries.iter().find(|(_, m)| m == member) {
            return Some(match r.surface {
                Presence::Forbidden => "MUST be absent.".into(),
                _ => format!(
                    "REQUIRED when `{}` == \"{surface}\". MUST be absent otherwise.",
                    c.member
                ),
            });
        }
    }
    match role_of(model, member) {
        "work_id" => Some(match r.work_id {
            Presence::Required => "REQUIRED. MUST match the work being addressed.".into(),
            Presence::Optional => "OPTIONAL. When present, it MUST belong to the same conversation container, and the message takes part in the work lifecycle there.".into(),
            Presence::Recommended => "SHOULD be present.".into(),
            Presence::Forbidden => absent_rule(model, member).into(),
        }),
        "to" => Some(format!(
            "{}{}",
            match r.to {
                Presence::Required => "MUST target a peer.",
                Presence::Recommended => "SHOULD target the peer that needs it.",
                Presence::Optional => "MAY target a peer.",
                Presence::Forbidden => "MUST be null or omitted.",
            },
            overrides(|c| c.envelope.to)
        )),
        "reply_to" => Some(format!(
            "{}{}",
            match r.reply_to {
                Presence::Required => "MUST reference the envelope being answered.",
                Presence::Recommended => "SHOULD reference the envelope being answered.",
                Presence::Optional => "MAY reference the envelope being answered.",
                Presence::Forbidden => absent_rule(model, member),
            },
            overrides(|c| c.envelope.reply_to)
        )),
        _ => None,
    }
}

/// The Required cell of a body member: `Yes`, `Optional`, the one value of the body's condition
/// member that requires it (`Response`: required for that value and absent for every other), or
/// `Conditional`.
pub(super) fn body_required(kind: &Kind, body: &[Field], f: &Field) -> String {
    if f.required {
        return "Yes".into();
    }
    let name = &f.json_name;
    let requiring: Vec<&Conditional> = kind
        .conditionals
        .iter()
        .filter(|c| c.required.contains(name))
        .collect();
    let absent: Vec<&Conditional> = kind
        .conditionals
        .iter()
        .filter(|c| c.absent.contains(name))
        .collect();
    if requiring.is_empty() && absent.is_empty() {
        return "Optional".into();
    }
    if let [req] = requiring.as_slice() {
        if let [value] = req.when.values.as_slice() {
            let member = &req.when.member;
            let all_values = body
                .iter()
                .find(|b| &b.json_name == member)
                .and_then(|b| b.shape.constraints.enum_values.clone());
            let absent_for: Vec<&Value> = absent
                .iter()
                .filter(|c| &c.when.member == member)
                .flat_map(|c| c.when.values.iter())
                .collect();
            let exclusive = all_values
                .is_some_and(|all| all.iter().all(|v| v == value || absent_for.contains(&v)));
            if exclusive {
                if let Some(s) = value.as_str() {
                    return capitalize(s);
                }
            }
        }
    }
    "Conditional".into()
}

pub(super) fn body_rows(model: &Model, layout: &Layout<'_>, kind: &Kind) -> Vec<Vec<String>> {
    let fields = body_fields(model, kind);
    fields
        .iter()
        .map(|f| {
            let mut conditions = Vec::new();
            for c in &kind.conditionals {
                if c.required.contains(&f.json_name) {
                    conditions.push(format!("REQUIRED when {}.", when(c)));
                }
                if c.absent.contains(&f.json_name) {
                    conditions.push(format!("MUST be absent when {}.", when(c)));
                }
            }
            let rule = rule_cell(model, layout, f, &conditions);
            vec![
                format!("`{}`", f.json_name),
                type_name(model, &f.shape),
                body_required(kind, fields, f),
                rule,
            ]
        })
        .collect()
}

pub(super) fn kind_section(
    model: &Model,
    layout: &Layout<'_>,
    kind: &Kind,
    example: Option<&(String, String)>,
    set_dir: &str,
) -> String {
    let mut out = String::new();
    let body = model.named(&kind.body_type);
    let _ = writeln!(out, "## `{}`\n", kind.name);
    if let Some(b) = body {
        let _ = writeln!(out, "{}\n", b.description);
    }
    let _ = writeln!(
        out,
        "Body schema: `schemas/{set_dir}/{}` (`{}`). Profile `{}`.\n",
        kind.body_file, kind.body_type, kind.rules.profile
    );
    let _ = writeln!(out, "### `{}` envelope requirements\n", kind.name);
    let mut rows = vec![vec![
        format!("`{}`", model.envelope.kind_member),
        format!("MUST be `{}`.", kind.name),
    ]];
    for m in governed_members(model) {
        if let Some(rule) = member_rule(kind, &m, model) {
            rows.push(vec![format!("`{m}`"), rule]);
        }
    }
    let body_member = &model.envelope.body_member;
    let body = body_fields(model, kind);
    for em in &kind.rules.envelope_match {
        let path = em.body.trim_start_matches('/').replace('/', ".");
        let top = path.split('.').next().unwrap_or_default();
        let always = body.iter().any(|f| f.json_name == top && f.required);
        rows.push(vec![
            format!("`{body_member}.{path}`"),
            format!(
                "{}MUST match the envelope `{}` value.",
                if always { "" } else { "When present, it " },
                em.envelope
            ),
        ]);
    }
    for v in &kind.rules.verify {
        let path = v.body.trim_start_matches('/').replace('/', ".");
        rows.push(vec![
            format!("`{body_member}.{path}`"),
            format!(
                "Checked with the `{}` recipe; a mismatch is refused with `{}`.",
                v.recipe, v.reason_code
            ),
        ]);
    }
    if body_presence_varies(model) {
        rows.push(vec![
            format!("`{body_member}`"),
            body_presence_rule(model, body_member, kind.rules.body),
        ]);
    }
    table(&mut out, &["Field", "Requirement"], &rows);
    exchange_text(&mut out, model, kind);
    let role = match kind.rules.work {
        WorkRole::None => "takes no part in the work lifecycle".to_owned(),
        WorkRole::Opens => {
            "opens work when it carries `to` and a new `work_id`, and continues it otherwise"
                .to_owned()
        }
        WorkRole::Updates => "moves existing work through the lifecycle".to_owned(),
    };
    let lifecycle = match (&model.lifecycle, kind.rules.work) {
        (Some(_), WorkRole::Opens | WorkRole::Updates) => " See [Work lifecycle](lifecycle.md).",
        _ => "",
    };
    if model.lifecycle.is_some() {
        let _ = writeln!(out, "Lifecycle: `{}` {role}.{lifecycle}\n", kind.name);
    }
    let _ = writeln!(out, "### `{}` body fields\n", kind.name);
    let rows = body_rows(model, layout, kind);
    if rows.is_empty() {
        let _ = writeln!(
            out,
            "The `{}` {body_member} declares no members.\n",
            kind.name
        );
    } else {
        table(&mut out, &["Field", "Type", "Required", "Rule"], &rows);
    }
    let whole = model
        .named(&kind.body_type)
        .and_then(|t| whole_object_rules(model, &t.shape, body_member));
    if let Some(rules) = whole {
        let _ = writeln!(out, "{rules}\n");
    }
    if let Some(page) = layout.value_pages.iter().find(|p| p.kind.name == kind.name) {
        let sets: Vec<String> = page
            .sets
            .iter()
            .filter_map(|(s, _)| layout.link(s.type_name))
            .collect();
        let _ = writeln!(out, "Values: {}.\n", sets.join(", "));
    }
    if let Some((file, json)) = example {
        let _ = writeln!(
            out,
            "### `{}` example\n\nFrom `{file}`:\n\n```json\n{}\n```\n",
            kind.name,
            json.trim_end()
        );
    }
    out
}

/// The reply kinds a request kind's exchange takes, for the summary table.
pub(super) fn answered_by(kind: &Kind) -> String {
    let Some(e) = &kind.exchange else {
        return String::new();
    };
    let mut kinds: Vec<String> = Vec::new();
    for r in &e.replies {
        let k = format!("`{}`", r.kind);
        if !kinds.contains(&k) {
            kinds.push(k);
        }
    }
    let list = or_list(&kinds);
    match e.expects_reply {
        true => list,
        false => format!("none expected ({list} possible)"),
    }
}

/// A request kind's exchange (its states and reply rules) and what a referring kind names.
pub(super) fn exchange_text(out: &mut String, model: &Model, kind: &Kind) {
    let correlation = model
        .envelope
        .roles
        .reply_to
        .clone()
        .unwrap_or_else(|| "reply_to".into());
    if !kind.refers_to.is_empty() {
        let names: Vec<String> = kind.refers_to.iter().map(|k| format!("`{k}`")).collect();
        let _ = writeln!(
            out,
            "`{correlation}` names a {} whose exchange is not over (between the same two parties); that exchange goes on.\n",
            or_list(&names)
        );
    }
    let answers: Vec<String> = model
        .kinds
        .iter()
        .filter(|k| {
            k.exchange
                .as_ref()
                .is_some_and(|e| e.replies.iter().any(|r| r.kind == kind.name))
        })
        .map(|k| format!("`{}`", k.name))
        .collect();
    if !answers.is_empty() {
        let _ = writeln!(
            out,
            "Answers {}: `{correlation}` names the request; the request's exchange decides whether this reply fits (see the request's exchange table).\n",
            or_list(&answers)
        );
    }
    let Some(e) = &kind.exchange else {
        return;
    };
    let _ = writeln!(out, "### `{}` exchange\n", kind.name);
    let late = refusal_code(model, "already_answered");
    let deadline = match (&e.deadline, e.default_deadline) {
        (Some(m), Some(d)) => format!(" The requester stops waiting `{}` ms after the request's sent time ({d} ms when absent); a later reply is {late}.", m.trim_start_matches('/')),
        (Some(m), None) => format!(" The requester stops waiting `{}` ms after the request's sent time (no deadline when absent); a later reply is {late}.", m.trim_start_matches('/')),
        (None, Some(d)) => format!(" The requester stops waiting {d} ms after the request's sent time; a later reply is {late}."),
        (None, None) => String::new(),
    };
    let expects = match e.expects_reply {
        true => "a reply is awaited",
        false => "no reply is awaited (the replies below are possible)",
    };
    let code = |c: &str| refusal_code(model, c);
    let _ = writeln!(
        out,
        "A `{}` opens an exchange in state `open`, where {expects}; it ends in `answered`.{deadline} A reply whose `{correlation}` names no tracked request is refused as {}, one from a party the request did not go to as {}, one for an exchange that is over as {}, and any other that no rule below takes as {}.\n",
        kind.name,
        code("unknown_request"),
        code("wrong_peer"),
        code("already_answered"),
        code("unexpected_reply"),
    );
    if !e.states.is_empty() {
        let rows: Vec<Vec<String>> = e
            .states
            .iter()
            .map(|s| {
                vec![
                    format!("`{}`", s.name),
                    if s.awaiting {
                        "yes".into()
                    } else {
                        "no".into()
                    },
                    s.description.clone(),
                ]
            })
            .collect();
        table(out, &["State", "Reply awaited", "Meaning"], &rows);
    }
    let cond = |c: &[crate::model::MemberIs]| -> String {
        let parts: Vec<String> = c
            .iter()
            .map(|m| format!("`{}` is `{}`", m.member, m.value))
            .collect();
        if parts.is_empty() {
            "any".into()
        } else {
            and_list(&parts)
        }
    };
    let rows: Vec<Vec<String>> = e
        .replies
        .iter()
        .map(|r| {
            let states: Vec<String> = r.states.iter().map(|s| format!("`{s}`")).collect();
            vec![
                format!("`{}`", r.kind),
                or_list(&states),
                cond(&r.when),
                cond(&r.request),
                format!("`{}`", r.to),
            ]
        })
        .collect();
    table(
        out,
        &[
            "Reply",
            "In state",
            "Reply payload",
            "Request payload",
            "Moves to",
        ],
        &rows,
    );
    let _ = writeln!(
        out,
        "Rules are tried in order; the first that fits applies.\n"
    );
}

pub(super) fn summary_cells(kind: &Kind, model: &Model) -> (String, String) {
    let surface = match &model.containers {
        Some(c) => {
            let members: Vec<String> = c.entries.iter().map(|(_, m)| format!("`{m}`")).collect();
            match kind.rules.surface {
                Presence::Forbidden => {
                    let mut all = vec![format!("`{}`", c.member)];
                    all.extend(members);
                    format!("MUST NOT carry {}.", or_list(&all))
                }
                _ => format!(
                    "MUST carry `{}` and the matching container id ({}).",
                    c.member,
                    or_list(&members)
                ),
            }
        }
        None => match kind.rules.surface {
            Presence::Forbidden => "MUST NOT carry a conversation surface.".to_owned(),
            _ => "MUST carry a conversation surface.".to_owned(),
        },
    };
    let work = member_rule(kind, "work_id", model).unwrap_or_default();
    (surface, work)
}

pub(super) fn kinds_page(
    model: &Model,
    layout: &Layout<'_>,
    header: &str,
    examples: &BTreeMap<String, (String, String)>,
    set_dir: &str,
) -> String {
    let mut out = String::from(header);
    let _ = writeln!(out, "# Message kinds\n");
    let _ = writeln!(
        out,
        "The envelope selects the kind with its `{}` member; the `{}` then follows that kind's schema. Envelope members are described on [Envelope](envelope.md).\n",
        model.envelope.kind_member, model.envelope.body_member
    );
    for f in &model.envelope.limits.forbidden_kinds {
        let _ = writeln!(out, "Refused kind `{}`: {}\n", f.name, f.message);
    }
    let _ = writeln!(out, "## Summary\n");
    let has_work = model
        .envelope
        .roles
        .work_id
        .as_deref()
        .is_some_and(|m| model.envelope.member(m).is_some());
    let has_surface = model.containers.is_some();
    let has_exchanges = model.kinds.iter().any(|k| k.exchange.is_some());
    let rows: Vec<Vec<String>> = model
        .kinds
        .iter()
        .map(|k| {
            let (surface, work) = summary_cells(k, model);
            let mut row = vec![
                format!("[`{}`](#{})", k.name, slug(&k.name)),
                k.purpose.clone(),
            ];
            if has_surface {
                row.push(surface);
            }
            if has_work {
                row.push(work);
            }
            if has_exchanges {
                row.push(answered_by(k));
            }
            row
        })
        .collect();
    let mut head: Vec<&str> = vec!["Kind", "Purpose"];
    if has_surface {
        head.push("Conversation surface");
    }
    if has_work {
        head.push("Work field");
    }
    if has_exchanges {
        head.push("Answered by");
    }
    table(&mut out, &head, &rows);
    for kind in &model.kinds {
        out.push_str(&kind_section(
            model,
            layout,
            kind,
            examples.get(&kind.name),
            set_dir,
        ));
    }
    out
}
