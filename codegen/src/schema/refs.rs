//! `$ref` resolution as draft 2020-12 specifies it: the reference is resolved (RFC 3986) against
//! the base URI in effect where it is written (the innermost `$id`, else the file's), names a
//! resource of the set by its absolute URI, and its fragment, percent-decoded, is either empty
//! (the resource itself), a JSON Pointer into the resource (`~0` `~`, `~1` `/`) or an `$anchor`
//! name. A reference to a document outside the set is refused, not fetched. Also the checks that
//! every `$ref` of the set resolves and that no chain of references loops without consuming data.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::load::{Location, SchemaSet};
use super::uri::percent_decode;
use crate::error::{join_pointer, Result};

impl SchemaSet {
    /// Resolves `reference` (the value of a `$ref` found at `at_pointer` in the file `from_id`)
    /// to the location of the schema it names.
    pub fn resolve_ref(
        &self,
        from_id: &str,
        at_pointer: &str,
        reference: &str,
    ) -> Result<Location> {
        let err = |msg: String| self.error(from_id, at_pointer, msg);
        let Some(base) = self.resources().base_at(from_id, at_pointer) else {
            return Err(err(format!("no schema file has $id {from_id}")));
        };
        let target = base.resolve(reference);
        let Some(root) = self.resources().root(&target) else {
            return Err(err(format!(
                "unresolvable $ref {reference:?}: it names {}, and no schema of the set has that \
                 $id (a remote reference outside the set is not fetched)",
                target.without_fragment()
            )));
        };
        let fragment = percent_decode(target.fragment.as_deref().unwrap_or_default())
            .map_err(|why| err(format!("$ref {reference:?}: its fragment: {why}")))?;
        if fragment.is_empty() {
            return Ok(root.clone());
        }
        if fragment.starts_with('/') {
            if let Some(bad) = bad_escape(&fragment) {
                return Err(err(format!(
                    "$ref {reference:?}: `{bad}` is not a JSON Pointer escape (`~0` is `~`, `~1` \
                     is `/`)"
                )));
            }
            let loc = Location {
                id: root.id.clone(),
                pointer: format!("{}{fragment}", root.pointer),
            };
            if self.get(&loc).is_none() {
                return Err(err(format!(
                    "unresolvable $ref {reference:?}: {} has nothing at {fragment:?}",
                    target.without_fragment()
                )));
            }
            return Ok(loc);
        }
        self.resources()
            .anchor(&target, &fragment)
            .cloned()
            .ok_or_else(|| {
                err(format!(
                    "unresolvable $ref {reference:?}: {} has no `$anchor` {fragment:?} (a \
                     fragment is a JSON Pointer starting with `/` or an anchor name)",
                    target.without_fragment()
                ))
            })
    }

    /// Every `$ref` of the set resolves, and no chain of them comes back to where it started
    /// without consuming data (`{"$ref": "#"}` at a root, `allOf: [{"$ref": "#/$defs/a"}]` in
    /// `a`): validating such a schema would never end.
    pub(super) fn check_refs(&self) -> Result<()> {
        // The schema holding each `$ref` (its location without `/$ref`) -> (where the `$ref` is,
        // its target).
        let mut edges: BTreeMap<Location, (Location, Location)> = BTreeMap::new();
        for site in self.resources().refs() {
            let target = self.resolve_ref(&site.at.id, &site.at.pointer, &site.reference)?;
            let holder = Location {
                id: site.at.id.clone(),
                pointer: site.at.pointer[..site.at.pointer.len() - "/$ref".len()].to_owned(),
            };
            edges.insert(holder, (site.at.clone(), target));
        }
        // From each schema holding a `$ref`: the schemas holding one that its target applies to
        // the same value (the target itself, its `allOf`/`anyOf`/`oneOf` items, `not`, `if`,
        // `then`, `else`, `dependentSchemas`, and theirs).
        let next = |holder: &Location| -> Vec<Location> {
            let target = &edges[holder].1;
            let mut found = Vec::new();
            let mut todo = vec![target.pointer.clone()];
            while let Some(pointer) = todo.pop() {
                let loc = Location {
                    id: target.id.clone(),
                    pointer,
                };
                let Some(Value::Object(map)) = self.get(&loc) else {
                    continue;
                };
                for (below, _) in super::resources::subschemas(map) {
                    if IN_PLACE.iter().any(|k| in_keyword(&below, k)) {
                        todo.push(format!("{}{below}", loc.pointer));
                    }
                }
                if edges.contains_key(&loc) {
                    found.push(loc);
                }
            }
            found
        };
        let graph: BTreeMap<&Location, Vec<Location>> =
            edges.keys().map(|h| (h, next(h))).collect();
        let mut done = BTreeSet::new();
        for start in edges.keys() {
            if let Some(cycle) = find_cycle(start, &graph, &mut done, &mut Vec::new()) {
                return Err(self.loop_error(&cycle, &edges));
            }
        }
        Ok(())
    }

    fn loop_error(
        &self,
        cycle: &[Location],
        edges: &BTreeMap<Location, (Location, Location)>,
    ) -> crate::error::Error {
        let chain: Vec<String> = cycle
            .iter()
            .map(|h| {
                let at = &edges[h].0;
                format!("{}#{}", self.path_of(&at.id).display(), at.pointer)
            })
            .collect();
        let at = &edges[&cycle[0]].0;
        self.error(
            &at.id,
            &at.pointer,
            format!(
                "`$ref` loop that consumes no data: {} comes back here without descending into a \
                 member or item, so validating would never end",
                chain.join(" -> ")
            ),
        )
    }
}

/// A cycle of `graph` reachable from `node` (depth first; `path` is the chain followed so far,
/// `done` the nodes from which none is reachable).
fn find_cycle(
    node: &Location,
    graph: &BTreeMap<&Location, Vec<Location>>,
    done: &mut BTreeSet<Location>,
    path: &mut Vec<Location>,
) -> Option<Vec<Location>> {
    if let Some(i) = path.iter().position(|p| p == node) {
        return Some(path[i..].to_vec());
    }
    if done.contains(node) {
        return None;
    }
    path.push(node.clone());
    for next in graph.get(node).into_iter().flatten() {
        if let Some(cycle) = find_cycle(next, graph, done, path) {
            return Some(cycle);
        }
    }
    path.pop();
    done.insert(node.clone());
    None
}

/// The keywords whose subschemas apply to the same value as their parent.
const IN_PLACE: &[&str] = &[
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
    "dependentSchemas",
];

/// Whether the relative pointer `below` (`/allOf/0`) is under keyword `k`.
fn in_keyword(below: &str, k: &str) -> bool {
    let token = join_pointer("", k);
    below == token
        || below
            .strip_prefix(&token)
            .is_some_and(|r| r.starts_with('/'))
}

/// The first `~` in a JSON Pointer not followed by `0` or `1`, with what follows it.
fn bad_escape(pointer: &str) -> Option<String> {
    let mut rest = pointer;
    while let Some(i) = rest.find('~') {
        let after = &rest[i + 1..];
        if !after.starts_with(['0', '1']) {
            return Some(rest[i..].chars().take(2).collect());
        }
        rest = &after[1..];
    }
    None
}

#[cfg(test)]
mod tests {
    use super::bad_escape;

    #[test]
    fn finds_bad_pointer_escapes() {
        assert_eq!(bad_escape("/$defs/a~0b~1c"), None);
        assert_eq!(bad_escape("/$defs/a~2"), Some("~2".into()));
        assert_eq!(bad_escape("/$defs/a~"), Some("~".into()));
        assert_eq!(bad_escape("/~01"), None);
    }
}
