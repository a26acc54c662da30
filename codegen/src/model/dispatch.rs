//! The kind table read off the general model. The envelope's `allOf` (like any schema's) is read
//! by the applicator parser (`applicators.rs`: a list of shapes, each an `if`/`then`/`else`);
//! here the entries that are the kind dispatch (`if` the selecting member is a constant, `then`
//! the body member is a kind's body schema) are recognized on those shapes and taken out of the
//! envelope's `allOf`, to be emitted as the match on the kind. Every other entry stays in the
//! `allOf` as a general rule, which the envelope's validator and scanner check like any other.
//! [`Builder::take_entries`] is the walk both this and a body's conditional rules
//! (`conditionals.rs`) use.

use super::{Builder, NamedType, ObjectShape, Shape};
use crate::error::{join_pointer, Result};
use crate::schema::load::Location;

/// One entry of the kind dispatch.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct DispatchEntry {
    /// Where it is written in the envelope schema (`/allOf/1`, `/allOf/0/allOf/2`).
    pub pointer: String,
    /// The member whose constant selects the kind.
    pub selector: String,
    /// The kind.
    pub kind: String,
    /// The member that holds the body.
    pub body_member: String,
    /// Rust name of the body type.
    pub body_type: String,
    /// Where the body type is defined.
    pub body_location: Location,
    /// `then.required` lists the body member.
    pub listed: bool,
    /// The body member is `anyOf: [{"$ref": ..}, {"type": "null"}]`: it may be absent or null.
    pub nullable: bool,
}

/// The object shape of `{"properties": ..., "required": ...}` with these members and no other
/// keyword.
pub(super) fn members(fields: Vec<super::Field>) -> ObjectShape {
    ObjectShape {
        fields,
        open: true,
        min_properties: None,
        max_properties: None,
        dependent_required: Vec::new(),
        pattern_properties: Vec::new(),
        additional: None,
        property_names: None,
    }
}

/// An object shape with no keyword of its own but its members.
fn members_only(o: &ObjectShape) -> bool {
    o == &members(o.fields.clone())
}

/// A shape that is only an object's members (no `type`, no other keyword).
pub(super) fn object_only(s: &Shape) -> Option<&ObjectShape> {
    let o = s.object.as_ref()?;
    let bare = Shape {
        object: None,
        ..s.clone()
    };
    (bare == Shape::default() && members_only(o)).then_some(o)
}

/// The `if`/`then`/`else` of an `allOf` entry that holds nothing else.
pub(super) fn only_conditional(s: &Shape) -> Option<&super::IfThenElse> {
    let c = s.applicators.conditional.as_deref()?;
    let mut rest = s.clone();
    rest.applicators.conditional = None;
    (rest == Shape::default()).then_some(c)
}

impl Builder<'_> {
    /// Walks the `allOf` of `shape` (at `ptr`), nested `allOf`s that hold nothing else included,
    /// handing each entry to `pick` with its pointer; an entry `pick` takes is replaced by the
    /// `true` schema (so the others keep their pointers; the emitters skip it), and an `allOf`
    /// left with nothing but `true` is emptied.
    pub(super) fn take_entries<T>(
        shape: &mut Shape,
        ptr: &str,
        pick: &mut dyn FnMut(&str, &Shape) -> Result<Option<T>>,
    ) -> Result<Vec<T>> {
        let mut out = Vec::new();
        let at = join_pointer(ptr, "allOf");
        for (i, entry) in shape.applicators.all_of.iter_mut().enumerate() {
            let p = join_pointer(&at, &i.to_string());
            if let Some(t) = pick(&p, entry)? {
                out.push(t);
                *entry = Shape::default();
                continue;
            }
            let nested = Shape {
                applicators: super::Applicators {
                    all_of: entry.applicators.all_of.clone(),
                    ..Default::default()
                },
                ..Shape::default()
            };
            if !entry.applicators.all_of.is_empty() && *entry == nested {
                out.extend(Self::take_entries(entry, &p, pick)?);
                if entry.applicators.all_of.is_empty() {
                    *entry = Shape::default();
                }
            }
        }
        if shape
            .applicators
            .all_of
            .iter()
            .all(|s| *s == Shape::default())
        {
            shape.applicators.all_of.clear();
        }
        Ok(out)
    }

    /// The kind dispatch of the envelope (the file declaring `x-agh-envelope`), taken out of its
    /// type's `allOf`. An entry whose `then` gives a member the body schema of a kind
    /// (`x-agh-kind`) must be written in the dispatch form, or it is refused naming its pointer;
    /// any other entry is left as a general rule.
    pub(super) fn dispatch(&self, types: &mut [NamedType]) -> Result<Vec<DispatchEntry>> {
        let Some(file) = self
            .set
            .files()
            .find(|f| f.doc.get("x-agh-envelope").is_some())
        else {
            return Ok(Vec::new());
        };
        let id = file.id.clone();
        let kind_bodies: Vec<(String, Location)> = types
            .iter()
            .filter(|t| {
                self.set
                    .get(&t.location)
                    .is_some_and(|s| s.get("x-agh-kind").is_some())
            })
            .map(|t| (t.rust_name.clone(), t.location.clone()))
            .collect();
        let Some(envelope) = types
            .iter_mut()
            .find(|t| t.location.id == id && t.location.pointer.is_empty())
        else {
            return Ok(Vec::new());
        };
        let mut pick = |p: &str, entry: &Shape| -> Result<Option<DispatchEntry>> {
            let Some(c) = entry.applicators.conditional.as_deref() else {
                return Ok(None);
            };
            let routed = c.then.iter().flat_map(|t| t.object.iter()).flat_map(|o| {
                o.fields.iter().filter_map(|f| {
                    let name = f.shape.ref_type.as_ref()?;
                    let (_, loc) = kind_bodies.iter().find(|(n, _)| n == name)?;
                    Some((f, name.clone(), loc.clone()))
                })
            });
            let Some((route, body_type, body_location)) = routed.into_iter().next() else {
                return Ok(None);
            };
            // It gives a member a kind's body schema: it is a dispatch entry, in the one form
            // the match on the kind says exactly.
            let form = "a kind's dispatch entry is `{\"if\": {\"properties\": {<member>: {\"const\": <kind>}}, \"required\": [<member>]}, \"then\": {\"properties\": {<body>: {\"$ref\": <schema>}}}}` (the body may also be `{\"anyOf\": [{\"$ref\": ..}, {\"type\": \"null\"}]}`, and `then.required` may list it)";
            let bad =
                |at: &str, why: &str| self.err(&id, &format!("{p}{at}"), format!("{form}: {why}"));
            if only_conditional(entry).is_none() {
                return Err(bad("", "the entry holds other keywords beside `if`/`then`"));
            }
            if c.otherwise.is_some() {
                return Err(bad(
                    "/else",
                    "it has no `else` (the dispatch is a match on the kind; write any other rule as an `allOf` entry of its own)",
                ));
            }
            let selector = object_only(&c.condition)
                .and_then(|o| match o.fields.as_slice() {
                    [f] if f.required => Some(f),
                    _ => None,
                })
                .and_then(|f| {
                    let kind = f.shape.constraints.const_value.as_ref()?.as_str()?;
                    let mut only = Shape::default();
                    only.constraints.const_value = f.shape.constraints.const_value.clone();
                    (f.shape == only).then(|| (f.json_name.clone(), kind.to_owned()))
                });
            let Some((selector, kind)) = selector else {
                return Err(bad(
                    "/if",
                    "`if` must name exactly one member, required, with a string `const` and nothing else",
                ));
            };
            let then = c.then.as_ref().and_then(object_only);
            let plain_ref = Shape {
                ref_type: Some(body_type.clone()),
                nullable: route.shape.nullable,
                ..Shape::default()
            };
            if then.is_none_or(|o| o.fields.len() != 1) || route.shape != plain_ref {
                return Err(bad(
                    "/then",
                    "`then` must give exactly one member its body schema, with `properties` (and `required` listing that member) only",
                ));
            }
            Ok(Some(DispatchEntry {
                pointer: p.to_owned(),
                selector,
                kind,
                body_member: route.json_name.clone(),
                body_type,
                body_location,
                listed: route.required,
                nullable: route.shape.nullable,
            }))
        };
        let ptr = envelope.location.pointer.clone();
        Self::take_entries(&mut envelope.shape, &ptr, &mut pick)
    }
}
