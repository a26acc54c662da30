//! `lifecycle.md`: states, transitions and a Mermaid `stateDiagram-v2`.

use std::fmt::Write as _;

use super::text::{codes, or_list, table};
use crate::model::{Model, WorkRole};

pub(super) fn trigger_text(t: &crate::model::Trigger) -> String {
    let mut s = format!("`{}`", t.kind);
    if let Some((member, value)) = &t.body_match {
        let _ = write!(s, " {member} `{value}`");
    }
    if let Some(sender) = t.sender {
        let _ = write!(s, " from the {}", sender.as_str());
    }
    s
}

pub(super) fn lifecycle_page(model: &Model, header: &str) -> Option<String> {
    let l = model.lifecycle.as_ref()?;
    let mut out = String::from(header);
    let _ = writeln!(out, "# Work lifecycle\n");
    let opened: Vec<String> = codes(&l.opened_by);
    let terminal: Vec<String> = codes(&l.terminal);
    let updaters: Vec<String> = model
        .kinds
        .iter()
        .filter(|k| k.rules.work == WorkRole::Updates)
        .map(|k| format!("`{}`", k.name))
        .collect();
    let _ = writeln!(
        out,
        "Work opens in `{}` on the first {} carrying `to` and a new `work_id`; its sender is the initiator and its `to` the target. Only those two move it. A message of an updating kind that matches no transition from the current state is refused; terminal work is final: every later lifecycle message for it (a second cancel included) is refused with `work_closed`.\n",
        l.initial,
        or_list(&opened),
    );
    table(
        &mut out,
        &["Initial", "Terminal", "Opened by", "Updated by"],
        &[vec![
            format!("`{}`", l.initial),
            terminal.join(", "),
            opened.join(", "),
            updaters.join(", "),
        ]],
    );
    let _ = writeln!(out, "## States\n");
    let rows: Vec<Vec<String>> = l
        .states
        .iter()
        .map(|s| {
            let terminal = if l.terminal.contains(&s.value) {
                "Yes"
            } else {
                "No"
            };
            vec![
                format!("`{}`", s.value),
                terminal.to_owned(),
                s.description.clone(),
            ]
        })
        .collect();
    table(&mut out, &["State", "Terminal", "Meaning"], &rows);
    let _ = writeln!(out, "## Transitions\n");
    let rows: Vec<Vec<String>> = l
        .transitions
        .iter()
        .map(|t| {
            let on: Vec<String> = t.on.iter().map(trigger_text).collect();
            vec![
                format!("`{}`", t.from),
                format!("`{}`", t.to),
                on.join(", "),
            ]
        })
        .collect();
    table(&mut out, &["From", "To", "On"], &rows);
    let _ = writeln!(out, "## Diagram\n\n```mermaid\nstateDiagram-v2");
    let openers: Vec<&str> = l.opened_by.iter().map(String::as_str).collect();
    let _ = writeln!(
        out,
        "    [*] --> {}: {} with to and a new work_id",
        l.initial,
        openers.join(" / ")
    );
    for t in &l.transitions {
        let on: Vec<String> =
            t.on.iter()
                .map(|g| trigger_text(g).replace('`', ""))
                .collect();
        let _ = writeln!(out, "    {} --> {}: {}", t.from, t.to, on.join(", "));
    }
    for t in &l.terminal {
        let _ = writeln!(out, "    {t} --> [*]");
    }
    out.push_str("```\n");
    Some(out)
}
