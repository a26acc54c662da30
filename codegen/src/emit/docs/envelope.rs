//! `envelope.md`: the Fields table, the conversation surfaces, the kind rules at a glance, the
//! validation order and the limits.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::{
    describe::{type_name, when, whole_object_rules},
    layout::{rule_cell, Layout},
    text::{and_list, capitalize, slug, table},
};
use crate::model::{Conditional, Field, Kind, Model, Presence};

/// Envelope members whose presence the kind rules (`x-agh-kind`) govern: `to`, `reply_to`,
/// `work_id`, the surface member and the container members, those the envelope has.
pub(super) fn governed_members(model: &Model) -> Vec<String> {
    let roles = &model.envelope.roles;
    let mut v: Vec<String> = [&roles.to, &roles.reply_to]
        .into_iter()
        .flatten()
        .cloned()
        .collect();
    if let Some(c) = &model.containers {
        v.push(c.member.clone());
        v.extend(c.entries.iter().map(|(_, m)| m.clone()));
    }
    v.extend(roles.work_id.clone());
    v.retain(|m| model.envelope.member(m).is_some());
    v
}

/// The runtime role an envelope member plays (`to`, `reply_to`, `work_id`), or the member name
/// itself (surface and container members).
pub(super) fn role_of<'m>(model: &Model, member: &'m str) -> &'m str {
    let roles = &model.envelope.roles;
    for (role, m) in [
        ("to", &roles.to),
        ("reply_to", &roles.reply_to),
        ("work_id", &roles.work_id),
    ] {
        if m.as_deref() == Some(member) {
            return role;
        }
    }
    member
}

/// Whether the kinds of the set put any condition on the presence of the body member (not all
/// of them require it).
pub(super) fn body_presence_varies(model: &Model) -> bool {
    model
        .kinds
        .iter()
        .any(|k| k.rules.body != Presence::Required)
}

/// The body member's requirement for a kind.
pub(super) fn body_presence_rule(model: &Model, body_member: &str, p: Presence) -> String {
    match p {
        Presence::Required => "REQUIRED.".into(),
        Presence::Recommended => "SHOULD be present.".into(),
        Presence::Optional => format!("MAY be absent or null; members of a `{body_member}` sent anyway are ignored when the kind has none."),
        Presence::Forbidden => absent_rule(model, body_member).into(),
    }
}

/// What a forbidden envelope member must be: absent, or also `null` where its schema allows
/// `null` (null reads as absent there).
pub(super) fn absent_rule(model: &Model, member: &str) -> &'static str {
    let nullable = model
        .envelope
        .member(member)
        .is_some_and(|f| f.shape.nullable || model.resolve(&f.shape).nullable);
    if nullable {
        "MUST be absent or null."
    } else {
        "MUST be absent."
    }
}

/// A kind's presence rule for a governed envelope member, and how a conditional overrides it.
pub(super) fn presence_rule(
    model: &Model,
    kind: &Kind,
    member: &str,
) -> (Presence, fn(&Conditional) -> Option<Presence>) {
    let r = &kind.rules;
    match role_of(model, member) {
        "to" => (r.to, |c| c.envelope.to),
        "reply_to" => (r.reply_to, |c| c.envelope.reply_to),
        "work_id" => (r.work_id, |_| None),
        _ => (r.surface, |_| None),
    }
}

/// The presences the kinds (and their conditional overrides) give an envelope member.
pub(super) fn member_presences(model: &Model, member: &str) -> BTreeSet<&'static str> {
    let mut out = BTreeSet::new();
    for k in &model.kinds {
        let (base, pick) = presence_rule(model, k, member);
        out.insert(base.as_str());
        out.extend(k.conditionals.iter().filter_map(pick).map(Presence::as_str));
    }
    out
}

pub(super) fn envelope_required(model: &Model, f: &Field, governed: &[String]) -> &'static str {
    if f.required {
        return "Yes";
    }
    if !governed.contains(&f.json_name) {
        return "Optional";
    }
    let container = model
        .containers
        .as_ref()
        .is_some_and(|c| c.entries.iter().any(|(_, m)| *m == f.json_name));
    let presences = member_presences(model, &f.json_name);
    if (container && presences.contains("required")) || presences.len() > 1 {
        "Conditional"
    } else {
        "Optional"
    }
}

pub(super) fn envelope_page(
    model: &Model,
    layout: &Layout<'_>,
    header: &str,
    set_dir: &str,
) -> String {
    let env = &model.envelope;
    let mut out = String::from(header);
    let _ = writeln!(out, "# Envelope\n\n{}\n", env.description);
    let _ = writeln!(
        out,
        "Schema: `schemas/{set_dir}/{}` (`{}`).\n",
        env.file, env.type_name
    );
    let _ = writeln!(out, "## Fields\n");
    let governed = governed_members(model);
    let rows: Vec<Vec<String>> = env
        .members
        .iter()
        .map(|f| {
            vec![
                format!("`{}`", f.json_name),
                type_name(model, &f.shape),
                envelope_required(model, f, &governed).to_owned(),
                rule_cell(model, layout, f, &[]),
            ]
        })
        .collect();
    table(&mut out, &["Field", "Type", "Required", "Rule"], &rows);
    let whole = model
        .named(&env.type_name)
        .and_then(|t| whole_object_rules(model, &t.shape, "envelope"));
    if let Some(rules) = whole {
        let _ = writeln!(out, "{rules}\n");
    }
    if env.open {
        let _ = writeln!(
            out,
            "Unknown top-level members are ignored and preserved. Members typed with `null` treat `null` as absent; the others must not be `null`.\n"
        );
    } else {
        let _ = writeln!(
            out,
            "Unknown top-level members are malformed (`additionalProperties: false`). Members typed with `null` treat `null` as absent; the others must not be `null`.\n"
        );
    }
    let null_written: Vec<String> = env
        .members
        .iter()
        .filter(|f| f.serialize_null)
        .map(|f| format!("`{}`", f.json_name))
        .collect();
    if !null_written.is_empty() {
        let _ = writeln!(
            out,
            "Written as `null` when absent: {}.\n",
            null_written.join(", ")
        );
    }
    if !env.limits.forbidden_members.is_empty() {
        let _ = writeln!(out, "Refused by name:\n");
        for f in &env.limits.forbidden_members {
            let _ = writeln!(out, "- `{}`: {}", f.name, f.message);
        }
        out.push('\n');
    }
    if let Some(c) = &model.containers {
        let _ = writeln!(out, "## Conversation surface fields\n");
        let docs = model.enums.iter().find(|e| e.type_name == c.type_name);
        if let Some(d) = docs {
            let _ = writeln!(out, "{}\n", d.description);
        }
        let rows: Vec<Vec<String>> = c
            .entries
            .iter()
            .map(|(surface, member)| {
                let meaning = docs
                    .and_then(|d| d.values.iter().find(|v| &v.value == surface))
                    .map(|v| v.description.clone())
                    .unwrap_or_default();
                vec![
                    format!("`{}: \"{surface}\"`", c.member),
                    format!("`{member}`"),
                    meaning,
                ]
            })
            .collect();
        table(
            &mut out,
            &["Surface", "Required field", "Container meaning"],
            &rows,
        );
        let members: Vec<String> = c.entries.iter().map(|(_, m)| format!("`{m}`")).collect();
        let _ = writeln!(
            out,
            "{} are mutually exclusive: the surface selects one, the others must be absent.\n",
            and_list(&members)
        );
        let (with, without): (Vec<&Kind>, Vec<&Kind>) = model
            .kinds
            .iter()
            .partition(|k| k.rules.surface != Presence::Forbidden);
        let names = |ks: &[&Kind]| {
            and_list(
                &ks.iter()
                    .map(|k| format!("`{}`", k.name))
                    .collect::<Vec<_>>(),
            )
        };
        if !with.is_empty() {
            let _ = writeln!(
                out,
                "Conversation-bearing kinds ({}) MUST carry `{}` and its container id.",
                names(&with),
                c.member
            );
        }
        if !without.is_empty() {
            let _ = writeln!(
                out,
                "{} MUST NOT carry `{}` or a container id.",
                capitalize(&names(&without)),
                c.member
            );
        }
        out.push('\n');
    }
    kind_rules_table(&mut out, model, &governed);
    if !env.limits.validation_order.is_empty() {
        let _ = writeln!(out, "## Validation order\n");
        for (i, step) in env.limits.validation_order.iter().enumerate() {
            let _ = writeln!(out, "{}. {step}", i + 1);
        }
        out.push('\n');
    }
    let expiry = if env.member("expires_at").is_some() {
        "; without `expires_at`, older envelopes are `expired`"
    } else {
        "; older envelopes are `expired`"
    };
    let _ = writeln!(
        out,
        "## Limits\n\n- Size: at most {} bytes of JSON, checked before parsing.\n- Replay age: {} seconds by default{expiry}.\n- {}\n- {}\n",
        env.limits.max_bytes,
        env.limits.replay_age_seconds,
        depth_words(env.limits.max_depth),
        integers_words(env.limits.integers, env.limits.integer_bits),
    );
    binding_section(&mut out, model);
    out
}

/// The depth limit in words (`x-agh-envelope.max_depth`).
fn depth_words(max_depth: Option<u64>) -> String {
    match max_depth {
        Some(d) => format!(
            "Nesting: at most {d} levels of arrays and objects (the envelope object is level 1); deeper is `malformed` (`x-agh-envelope.max_depth`)."
        ),
        None => format!(
            "Nesting: no limit of the profile's; the runtime refuses more than {} levels of arrays and objects (the deepest nesting the owned message decodes) as `malformed`.",
            crate::model::DEPTH_GUARD
        ),
    }
}

/// How an `integer` is written and how large it may be, in words (`x-agh-envelope.integers`,
/// `integer_bits`).
fn integers_words(integers: crate::model::Integers, bits: Option<u64>) -> String {
    use crate::model::Integers;
    let open = "Numbers in open content are any JSON number, kept as written.";
    let any_size = "of any size (no `x-agh-envelope.integer_bits: 64`): one whose schema does not bound it within 64 bits is typed `agh_runtime::json::BigInt`, kept as written";
    match (integers, bits) {
        (Integers::Digits, Some(_)) => format!("Integers: where a schema types a member `integer`, it is written as digits only: `1.0`, `1e3` and `-0` are `malformed` there, though JSON Schema counts them as integers (`x-agh-envelope.integers: \"digits\"`); it fits 64 bits. {open}"),
        (Integers::Value, Some(_)) => format!("Integers: as JSON Schema counts them: any number of integral value, however written (`1.0`, `1e3` and `-0` are integers); it fits 64 bits (the generated Rust integer). {open}"),
        (Integers::Digits, None) => format!("Integers: where a schema types a member `integer`, it is written as digits only: `1.0`, `1e3` and `-0` are `malformed` there, though JSON Schema counts them as integers (`x-agh-envelope.integers: \"digits\"`); {any_size}. {open}"),
        (Integers::Value, None) => format!("Integers: as JSON Schema counts them: any number of integral value, however written (`1.0`, `1e3` and `-0` are integers), {any_size}. {open}"),
    }
}

/// `x-agh-binding`: the subjects and which requests are NATS request/reply.
fn binding_section(out: &mut String, model: &Model) {
    let Some(b) = &model.binding else {
        return;
    };
    let _ = writeln!(out, "## Transport binding ({})\n", b.transport);
    if !b.description.is_empty() {
        let _ = writeln!(out, "{}\n", b.description);
    }
    let mut rows = vec![vec![
        "to one party".to_owned(),
        format!("`{}`", b.direct.template.replace('|', "\\|")),
    ]];
    if let Some(t) = &b.broadcast {
        rows.push(vec![
            "to nobody in particular".to_owned(),
            format!("`{}`", t.template.replace('|', "\\|")),
        ]);
    }
    table(
        out,
        &[
            "Messages",
            "Subject (`{member}`: its value; `{member\\|recipe}`: through the recipe)",
        ],
        &rows,
    );
    if b.request_reply.is_empty() {
        let _ = writeln!(
            out,
            "Every message is a plain publish; no kind uses NATS request/reply.\n"
        );
    } else {
        let kinds: Vec<String> = b.request_reply.iter().map(|k| format!("`{k}`")).collect();
        let _ = writeln!(
            out,
            "Sent as NATS request/reply: {}. The request's first reply comes back on the NATS reply subject; later replies and every other kind are published on the subjects above.\n",
            and_list(&kinds)
        );
    }
}

/// The envelope rules of every kind in one table.
pub(super) fn kind_rules_table(out: &mut String, model: &Model, governed: &[String]) {
    if model.kinds.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "## Kind rules at a glance\n\nWhat each kind's `x-agh-kind` rules say about the envelope members (details on [Message kinds](message-kinds.md)).\n"
    );
    let surface_member = model.containers.as_ref().map(|c| c.member.clone());
    let columns: Vec<&String> = governed
        .iter()
        .filter(|m| {
            Some(*m) == surface_member.as_ref()
                || model
                    .containers
                    .as_ref()
                    .is_none_or(|c| !c.entries.iter().any(|(_, e)| e == *m))
        })
        .collect();
    let mut head: Vec<String> = vec!["Kind".into()];
    head.extend(columns.iter().map(|m| format!("`{m}`")));
    let body_column = body_presence_varies(model);
    if body_column {
        head.push(format!("`{}`", model.envelope.body_member));
    }
    let lifecycle_column = model.lifecycle.is_some();
    if lifecycle_column {
        head.push("Lifecycle".into());
    }
    let rows: Vec<Vec<String>> = model
        .kinds
        .iter()
        .map(|k| {
            let mut row = vec![format!(
                "[`{}`](message-kinds.md#{})",
                k.name,
                slug(&k.name)
            )];
            for m in &columns {
                let (base, pick) = presence_rule(model, k, m);
                let mut text = base.as_str().to_owned();
                for c in &k.conditionals {
                    if let Some(p) = pick(c) {
                        let _ = write!(text, "; {} when {}", p.as_str(), when(c));
                    }
                }
                row.push(text);
            }
            if body_column {
                row.push(k.rules.body.as_str().to_owned());
            }
            if lifecycle_column {
                row.push(k.rules.work.as_str().to_owned());
            }
            row
        })
        .collect();
    let head: Vec<&str> = head.iter().map(String::as_str).collect();
    table(out, &head, &rows);
}
