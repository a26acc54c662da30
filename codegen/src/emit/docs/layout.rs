//! Which page shows what: the type pages (grouped by schema file), the value-set pages (per kind),
//! the other value sets, and the link anchors; a member's Rule cell.

use std::collections::{BTreeMap, BTreeSet};

use super::{
    describe::{constraint_notes, ref_chain},
    text::{capitalize, plural, slug},
};
use crate::model::{EnumValue, Field, Kind, Model, NamedType};

/// A set of documented values: an enum with value descriptions, or known values.
#[derive(Clone, Copy)]
pub(super) struct ValueSet<'m> {
    pub(super) type_name: &'m str,
    pub(super) description: &'m str,
    pub(super) values: &'m [EnumValue],
    pub(super) known: bool,
}

/// A page of object types: the types of a group of schema files.
pub(super) struct TypePage<'m> {
    pub(super) file: String,
    pub(super) title: String,
    pub(super) types: Vec<&'m NamedType>,
}

/// A page of the value sets a kind's body uses.
pub(super) struct ValuePage<'m> {
    pub(super) file: String,
    pub(super) title: String,
    pub(super) kind: &'m Kind,
    /// Each set with the body members that use it.
    pub(super) sets: Vec<(ValueSet<'m>, Vec<&'m Field>)>,
}

/// Which page shows each type, kind and value set, and the link targets.
pub(super) struct Layout<'m> {
    pub(super) type_pages: Vec<TypePage<'m>>,
    pub(super) value_pages: Vec<ValuePage<'m>>,
    /// Value sets no other page shows.
    pub(super) other_values: Vec<ValueSet<'m>>,
    /// Named type (Rust name) -> `page.md#anchor`.
    pub(super) anchors: BTreeMap<String, String>,
}

pub(super) fn body_fields<'m>(model: &'m Model, kind: &Kind) -> &'m [Field] {
    model
        .named(&kind.body_type)
        .and_then(|b| b.shape.object.as_ref())
        .map_or(&[], |o| o.fields.as_slice())
}

/// `peer-card.schema.json` -> `peer-card`.
pub(super) fn file_stem(file: &str) -> &str {
    let name = file.rsplit('/').next().unwrap_or(file);
    name.strip_suffix(".schema.json")
        .or_else(|| name.strip_suffix(".json"))
        .unwrap_or(name)
}

impl<'m> Layout<'m> {
    pub(super) fn new(model: &'m Model) -> Self {
        let mut anchors = BTreeMap::new();
        for k in &model.kinds {
            anchors.insert(
                k.body_type.clone(),
                format!("message-kinds.md#{}", slug(&k.name)),
            );
        }
        let sets: Vec<ValueSet<'m>> = model
            .enums
            .iter()
            .map(|e| ValueSet {
                type_name: &e.type_name,
                description: &e.description,
                values: &e.values,
                known: false,
            })
            .chain(model.known_values.iter().map(|k| ValueSet {
                type_name: &k.type_name,
                description: &k.description,
                values: &k.values,
                known: true,
            }))
            .collect();
        // Value sets shown elsewhere: the surface (envelope page) and the work states (lifecycle).
        let mut placed: BTreeSet<&str> = BTreeSet::new();
        if let Some(c) = &model.containers {
            placed.insert(&c.type_name);
            anchors.insert(
                c.type_name.clone(),
                "envelope.md#conversation-surface-fields".into(),
            );
        }
        if let Some(l) = &model.lifecycle {
            placed.insert(&l.type_name);
            anchors.insert(l.type_name.clone(), "lifecycle.md#states".into());
        }
        // The value sets each kind's body uses, on the first such kind's page.
        let mut value_pages = Vec::new();
        for kind in &model.kinds {
            let mut used: Vec<(ValueSet<'m>, Vec<&'m Field>)> = Vec::new();
            for f in body_fields(model, kind) {
                let chain = ref_chain(model, &f.shape);
                let Some(set) = chain
                    .iter()
                    .find_map(|n| sets.iter().find(|s| s.type_name == *n))
                else {
                    continue;
                };
                if placed.contains(set.type_name) {
                    continue;
                }
                match used.iter_mut().find(|(s, _)| s.type_name == set.type_name) {
                    Some((_, fields)) => fields.push(f),
                    None => used.push((*set, vec![f])),
                }
            }
            if used.is_empty() {
                continue;
            }
            let file = format!("{}.md", plural(&kind.name));
            for (s, _) in &used {
                placed.insert(s.type_name);
                anchors.insert(
                    s.type_name.to_owned(),
                    format!("{file}#{}", slug(s.type_name)),
                );
            }
            value_pages.push(ValuePage {
                title: capitalize(&plural(&kind.name)),
                file,
                kind,
                sets: used,
            });
        }
        let other_values: Vec<ValueSet<'m>> = sets
            .iter()
            .filter(|s| !placed.contains(s.type_name))
            .copied()
            .collect();
        for s in &other_values {
            anchors.insert(
                s.type_name.to_owned(),
                format!("values.md#{}", slug(s.type_name)),
            );
        }
        let type_pages = Self::type_pages(model);
        for p in &type_pages {
            for t in &p.types {
                anchors.insert(
                    t.rust_name.clone(),
                    format!("{}#{}", p.file, slug(&t.rust_name)),
                );
            }
        }
        Layout {
            type_pages,
            value_pages,
            other_values,
            anchors,
        }
    }

    /// Object types other than the envelope and the bodies, grouped by schema file: files whose
    /// names share a first word (`capability-document`, `capability-catalog`) share a page named
    /// by it; another file gets a page named by its stem.
    fn type_pages(model: &'m Model) -> Vec<TypePage<'m>> {
        let bodies: BTreeSet<&str> = model.kinds.iter().map(|k| k.body_type.as_str()).collect();
        let types: Vec<&NamedType> = model
            .types
            .iter()
            .filter(|t| {
                t.rust_name != model.envelope.type_name
                    && !bodies.contains(t.rust_name.as_str())
                    && t.shape
                        .object
                        .as_ref()
                        .is_some_and(|o| !o.fields.is_empty())
            })
            .collect();
        let stems: BTreeSet<&str> = types.iter().map(|t| file_stem(&t.file)).collect();
        let first_word = |stem: &str| stem.split('-').next().unwrap_or(stem).to_owned();
        let group_of = |stem: &str| {
            let word = first_word(stem);
            if stems.iter().filter(|s| first_word(s) == word).count() > 1 {
                word
            } else {
                stem.to_owned()
            }
        };
        // How close to a body a type is: referenced by a body member (0), by another type (1),
        // by nothing (2). Pages and types within a page go nearest first.
        let referenced_by_body = |name: &str| {
            model.kinds.iter().any(|k| {
                body_fields(model, k)
                    .iter()
                    .any(|f| ref_chain(model, &f.shape).contains(&name))
            })
        };
        let referenced = |name: &str| {
            model.types.iter().any(|t| {
                t.shape.object.as_ref().is_some_and(|o| {
                    o.fields
                        .iter()
                        .any(|f| ref_chain(model, &f.shape).contains(&name))
                })
            })
        };
        let rank = |t: &NamedType| {
            if referenced_by_body(&t.rust_name) {
                0
            } else if referenced(&t.rust_name) {
                1
            } else {
                2
            }
        };
        let mut groups: BTreeMap<String, Vec<&NamedType>> = BTreeMap::new();
        for t in types {
            groups
                .entry(group_of(file_stem(&t.file)))
                .or_default()
                .push(t);
        }
        groups
            .into_iter()
            .map(|(group, mut types)| {
                // Files nearest a body first, then by name; in a file, the root type first.
                let file_rank: BTreeMap<&str, usize> =
                    types.iter().fold(BTreeMap::new(), |mut m, t| {
                        let r = rank(t);
                        let e = m.entry(t.file.as_str()).or_insert(r);
                        *e = (*e).min(r);
                        m
                    });
                types.sort_by_key(|t| {
                    (
                        file_rank[t.file.as_str()],
                        t.file.clone(),
                        !t.location.pointer.is_empty(),
                        t.rust_name.clone(),
                    )
                });
                TypePage {
                    file: format!("{group}.md"),
                    title: capitalize(&group.replace('-', " ")),
                    types,
                }
            })
            .collect()
    }

    /// A markdown link to the page that shows the named type, if a page shows it.
    pub(super) fn link(&self, name: &str) -> Option<String> {
        self.anchors.get(name).map(|a| format!("[`{name}`]({a})"))
    }
}

/// The Rule cell of a member: its description, the constraints it does not state, `extra`, and a
/// link to the page of the type or value set it refers to.
pub(super) fn rule_cell(model: &Model, layout: &Layout<'_>, f: &Field, extra: &[String]) -> String {
    let mut parts = vec![f.description.clone()];
    parts.extend(constraint_notes(model, &f.shape, &f.description));
    parts.extend(extra.iter().cloned());
    if let Some(link) = ref_chain(model, &f.shape)
        .iter()
        .find_map(|n| layout.link(n))
    {
        parts.push(format!("See {link}."));
    }
    parts.join(" ")
}
