//! The value-set pages (`receipts.md`, `values.md`): one table per value set, with the effect of
//! each value on the body's conditional members.

use std::fmt::Write as _;

use super::{
    layout::{body_fields, ValuePage, ValueSet},
    text::{slug, table},
};
use crate::model::{Conditional, Field, Kind, Model};

pub(super) fn value_table(out: &mut String, set: &ValueSet<'_>, extra: &[(String, Vec<String>)]) {
    let mut head: Vec<&str> = vec!["Value", "Meaning"];
    head.extend(extra.iter().map(|(h, _)| h.as_str()));
    let rows: Vec<Vec<String>> = set
        .values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let mut row = vec![format!("`{}`", v.value), v.description.clone()];
            row.extend(extra.iter().map(|(_, cells)| cells[i].clone()));
            row
        })
        .collect();
    table(out, &head, &rows);
}

/// For a body member holding an enum that conditionals test: per affected member, its
/// requirement under each value (`REQUIRED`, `MUST be absent`, `Optional`).
pub(super) fn conditional_columns(
    kind: &Kind,
    body: &[Field],
    member: &str,
    set: &ValueSet<'_>,
) -> Vec<(String, Vec<String>)> {
    let conds: Vec<&Conditional> = kind
        .conditionals
        .iter()
        .filter(|c| c.when.member == member)
        .collect();
    let mut affected: Vec<&Field> = body
        .iter()
        .filter(|f| {
            conds
                .iter()
                .any(|c| c.required.contains(&f.json_name) || c.absent.contains(&f.json_name))
        })
        .collect();
    affected.dedup_by_key(|f| f.json_name.clone());
    affected
        .into_iter()
        .map(|f| {
            let cells = set
                .values
                .iter()
                .map(|v| {
                    let holds: Vec<&&Conditional> = conds
                        .iter()
                        .filter(|c| c.when.values.iter().any(|x| x.as_str() == Some(&v.value)))
                        .collect();
                    if f.required || holds.iter().any(|c| c.required.contains(&f.json_name)) {
                        "REQUIRED".to_owned()
                    } else if holds.iter().any(|c| c.absent.contains(&f.json_name)) {
                        "MUST be absent".to_owned()
                    } else {
                        "OPTIONAL".to_owned()
                    }
                })
                .collect();
            (format!("`{}`", f.json_name), cells)
        })
        .collect()
}

pub(super) fn value_page(model: &Model, page: &ValuePage<'_>, header: &str) -> String {
    let mut out = String::from(header);
    let kind = page.kind;
    let _ = writeln!(out, "# {}\n", page.title);
    let _ = writeln!(
        out,
        "The value sets the [`{}`](message-kinds.md#{}) body uses. `{}`: {}\n",
        kind.name,
        slug(&kind.name),
        kind.name,
        kind.purpose
    );
    let body = body_fields(model, kind);
    for (set, fields) in &page.sets {
        let _ = writeln!(out, "## {}\n\n{}\n", set.type_name, set.description);
        let members: Vec<String> = fields
            .iter()
            .map(|f| format!("`{}`", f.json_name))
            .collect();
        let _ = writeln!(
            out,
            "Used by the `{}` body {} {}.{}\n",
            kind.name,
            if members.len() == 1 {
                "member"
            } else {
                "members"
            },
            members.join(", "),
            if set.known {
                " Known values: other values are not malformed."
            } else {
                ""
            }
        );
        let extra: Vec<(String, Vec<String>)> = fields
            .iter()
            .flat_map(|f| conditional_columns(kind, body, &f.json_name, set))
            .collect();
        value_table(&mut out, set, &extra);
    }
    out
}

pub(super) fn other_values_page(sets: &[ValueSet<'_>], header: &str) -> String {
    let mut out = String::from(header);
    let _ = writeln!(
        out,
        "# Values\n\nEnumerations and known values of the schema set that no other page shows.\n"
    );
    for set in sets {
        let _ = writeln!(out, "## {}\n\n{}\n", set.type_name, set.description);
        if set.known {
            let _ = writeln!(out, "Known values: other values are not malformed.\n");
        }
        value_table(&mut out, set, &[]);
    }
    out
}
