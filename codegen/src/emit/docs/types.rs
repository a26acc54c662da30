//! The type pages: a Field | Type | Required | Rule table per object type, and where it is used.

use std::collections::BTreeSet;
use std::fmt::Write as _;

use super::{
    describe::{ref_chain, type_name},
    layout::{body_fields, rule_cell, Layout, TypePage},
    text::{slug, table},
};
use crate::model::{Field, Model};

/// Where a named type is used: `` `greet` body `peer_card` ``, `` `PeerCardExt` `agh.x` ``.
pub(super) fn uses(model: &Model, layout: &Layout<'_>, name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let refers = |f: &Field| ref_chain(model, &f.shape).first() == Some(&name);
    for f in model.envelope.members.iter().filter(|f| refers(f)) {
        out.push(format!("[Envelope](envelope.md) `{}`", f.json_name));
    }
    for k in &model.kinds {
        for f in body_fields(model, k).iter().filter(|f| refers(f)) {
            out.push(format!(
                "[`{}`](message-kinds.md#{}) body `{}`",
                k.name,
                slug(&k.name),
                f.json_name
            ));
        }
    }
    let bodies: BTreeSet<&str> = model.kinds.iter().map(|k| k.body_type.as_str()).collect();
    for t in &model.types {
        if t.rust_name == model.envelope.type_name || bodies.contains(t.rust_name.as_str()) {
            continue;
        }
        let Some(o) = &t.shape.object else { continue };
        for f in o.fields.iter().filter(|f| refers(f)) {
            let owner = layout
                .link(&t.rust_name)
                .unwrap_or_else(|| format!("`{}`", t.rust_name));
            out.push(format!("{owner} `{}`", f.json_name));
        }
    }
    out
}

pub(super) fn type_page(
    model: &Model,
    layout: &Layout<'_>,
    page: &TypePage<'_>,
    header: &str,
    set_dir: &str,
) -> String {
    let mut out = String::from(header);
    let _ = writeln!(out, "# {}\n", page.title);
    let names: Vec<String> = page
        .types
        .iter()
        .map(|t| format!("[`{}`](#{})", t.rust_name, slug(&t.rust_name)))
        .collect();
    let _ = writeln!(out, "Object types: {}.\n", names.join(", "));
    for t in &page.types {
        let Some(obj) = &t.shape.object else { continue };
        let _ = writeln!(out, "## {}\n\n{}\n", t.rust_name, t.description);
        let pointer = if t.location.pointer.is_empty() {
            String::new()
        } else {
            format!("#{}", t.location.pointer)
        };
        let openness = if obj.open {
            "open: other members are ignored and preserved"
        } else {
            "closed: other members are malformed"
        };
        let _ = writeln!(
            out,
            "Schema: `schemas/{set_dir}/{}{pointer}` ({openness}).\n",
            t.file
        );
        let used = uses(model, layout, &t.rust_name);
        if !used.is_empty() {
            let _ = writeln!(out, "Used in: {}.\n", used.join(", "));
        }
        let rows: Vec<Vec<String>> = obj
            .fields
            .iter()
            .map(|f| {
                vec![
                    format!("`{}`", f.json_name),
                    type_name(model, &f.shape),
                    if f.required { "Yes" } else { "Optional" }.to_owned(),
                    rule_cell(model, layout, f, &[]),
                ]
            })
            .collect();
        table(&mut out, &["Field", "Type", "Required", "Rule"], &rows);
    }
    out
}
