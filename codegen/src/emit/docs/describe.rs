//! Shapes and rules in words: a member's type for people, the constraints its Rule cell states,
//! reason codes in the profile's spelling, presence words, conditions.

use super::text::{and_list, code, or_list};
use crate::model::{Conditional, JsonType, Model, Presence, Shape};

/// A member's type for people: `string`, `integer`, `object`, `array of strings`, `string or null`.
pub fn type_name(model: &Model, shape: &Shape) -> String {
    let nullable = shape.nullable;
    let resolved = model.resolve(shape);
    let mut names: Vec<String> = resolved
        .types
        .iter()
        .map(|t| match (t, &resolved.items) {
            (JsonType::Array, Some(items)) => {
                let inner = model.resolve(items);
                match inner.types.as_slice() {
                    [JsonType::String] => "array of strings".to_owned(),
                    [JsonType::Object] => "array of objects".to_owned(),
                    _ => "array".to_owned(),
                }
            }
            (t, _) => t.as_str().to_owned(),
        })
        .collect();
    if names.is_empty() {
        names.push("any".into());
    }
    if nullable || resolved.nullable {
        names.push("null".into());
    }
    names.join(" or ")
}

/// The named types a shape refers to, nearest first (`$ref` chain; for arrays, the items' chain).
pub(super) fn ref_chain<'m>(model: &'m Model, shape: &'m Shape) -> Vec<&'m str> {
    let mut out = Vec::new();
    let mut s = shape;
    for _ in 0..32 {
        match s.ref_type.as_deref() {
            Some(name) => {
                out.push(name);
                match model.named(name) {
                    Some(t) => s = &t.shape,
                    None => break,
                }
            }
            None => break,
        }
    }
    if out.is_empty() {
        if let Some(items) = &model.resolve(shape).items {
            return ref_chain(model, items);
        }
    }
    out
}

/// Constraints worth saying in the Rule column that the description does not already state.
pub(super) fn constraint_notes(model: &Model, shape: &Shape, description: &str) -> Vec<String> {
    let c = &model.resolve(shape).constraints;
    let said = |s: &str| description.contains(s);
    let mut notes = Vec::new();
    if let Some(v) = &c.const_value {
        let text = v.as_str().map_or(v.to_string(), str::to_owned);
        if !said(&text) {
            notes.push(format!("Constant {}.", code(v)));
        }
    }
    if let Some(values) = &c.enum_values {
        let all_said = values
            .iter()
            .all(|v| said(&v.as_str().map_or(v.to_string(), str::to_owned)));
        if !all_said {
            let list: Vec<String> = values.iter().map(code).collect();
            notes.push(format!("One of {}.", list.join(", ")));
        }
    }
    let meaning = c.pattern.as_deref().and_then(crate::emit::pattern::meaning);
    match (c.pattern.as_deref(), meaning) {
        (Some(_), Some((_, notes_of_pattern))) => {
            // Each note unless the description says it already.
            for note in notes_of_pattern {
                let said_already = if note.starts_with("Non-blank") {
                    said("Non-blank") || said("non-empty after trimming")
                } else if note.starts_with("One line") {
                    said("one line") || said("one-line")
                } else {
                    false
                };
                if !said_already {
                    notes.push(note);
                }
            }
        }
        (Some(p), None) if !said(p.trim_start_matches('^').trim_end_matches('$')) => {
            notes.push(format!("Matches `{p}`."));
        }
        _ => {}
    }
    if let Some(n) = c.min_length.filter(|n| *n > 0) {
        notes.push(if n == 1 {
            "Non-empty.".into()
        } else {
            format!("At least {n} characters.")
        });
    }
    if let Some(n) = c.max_length {
        notes.push(format!(
            "At most {} character{}.",
            thousands(n),
            if n == 1 { "" } else { "s" }
        ));
    }
    if let Some(m) = &c.minimum {
        notes.push(format!("At least {m}."));
    }
    if let Some(m) = &c.maximum {
        notes.push(format!("At most {m}."));
    }
    if let Some(m) = &c.exclusive_minimum {
        notes.push(format!("Greater than {m}."));
    }
    if let Some(m) = &c.exclusive_maximum {
        notes.push(format!("Less than {m}."));
    }
    if let Some(m) = &c.multiple_of {
        notes.push(format!("A multiple of {m} (exact decimal)."));
    }
    if let Some(n) = c.min_items {
        notes.push(if n == 1 {
            "At least one item.".into()
        } else {
            format!("At least {n} items.")
        });
    }
    if let Some(n) = c.max_items {
        notes.push(format!(
            "At most {} item{}.",
            thousands(n),
            if n == 1 { "" } else { "s" }
        ));
    }
    if let Some(not) = &c.not {
        let rules: Vec<String> = constraint_notes(model, not, "")
            .iter()
            .map(|n| lower_first(n))
            .collect();
        let form = if rules.is_empty() {
            type_name(model, not)
        } else {
            rules.join(", ")
        };
        notes.push(format!("Must not be: {form}."));
    }
    if let Some((schema, min, max)) = &c.contains {
        let mut form = vec![type_name(model, schema)];
        form.extend(
            constraint_notes(model, schema, "")
                .iter()
                .map(|n| lower_first(n)),
        );
        let form = form.join(", ");
        let bounds = match (min, max) {
            (min, Some(max)) if min == max => format!("Exactly {}", thousands(*min)),
            (0, Some(max)) => format!("At most {}", thousands(*max)),
            (min, Some(max)) => format!("From {} to {}", thousands(*min), thousands(*max)),
            (min, None) => format!("At least {}", thousands(*min)),
        };
        notes.push(format!("{bounds} of the items: {form}."));
    }
    if let Some(o) = &model.resolve(shape).object {
        let members = |n: u64| format!("{} member{}", thousands(n), if n == 1 { "" } else { "s" });
        match (o.min_properties, o.max_properties) {
            (Some(a), Some(b)) if a == b => notes.push(format!("Exactly {}.", members(a))),
            (Some(a), Some(b)) => notes.push(format!("From {} to {}.", thousands(a), members(b))),
            (Some(a), None) => notes.push(format!("At least {}.", members(a))),
            (None, Some(b)) => notes.push(format!("At most {}.", members(b))),
            (None, None) => {}
        }
        if let Some(names) = &o.property_names {
            let rules = constraint_notes(model, names, "");
            if !rules.is_empty() {
                notes.push(format!("Every member name: {}", rules.join(" ")));
            }
        }
        for (p, member) in &o.pattern_properties {
            let mut rule = vec![format!(
                "Other members whose names match `{p}`: {}.",
                type_name(model, member)
            )];
            rule.extend(constraint_notes(model, member, ""));
            notes.push(rule.join(" "));
        }
        if let Some(other) = &o.additional {
            notes.push(format!("Any other member: {}.", form(model, other)));
        }
        for (name, deps) in &o.dependent_required {
            let deps: Vec<String> = deps.iter().map(|d| format!("`{d}`")).collect();
            notes.push(format!(
                "When `{name}` is present, {} must be too.",
                and_list(&deps)
            ));
        }
    }
    if c.unique_after.is_some() {
        notes.push("Entries unique after trimming.".into());
    } else if c.unique_items {
        notes.push("Entries unique.".into());
    }
    notes.extend(applicator_notes(model, model.resolve(shape)));
    if let Some(recipe) = &c.digest {
        notes.push(format!("Digest recipe `{recipe}`."));
    }
    if let Some(code) = &c.reason_code {
        notes.push(format!(
            "Another value is refused with {}.",
            refusal_code(model, code)
        ));
    }
    notes
        .into_iter()
        .filter(|n| !said(n.trim_end_matches('.')))
        .collect()
}

/// A shape in a few words: its type and its rules (`integer, at least 10`), or the named type
/// it refers to.
pub(super) fn form(model: &Model, shape: &Shape) -> String {
    if let (Some(name), false) = (&shape.ref_type, shape.nullable) {
        return format!("`{name}`");
    }
    if shape.never && !shape.nullable {
        return "no value".into();
    }
    let mut parts = vec![type_name(model, shape)];
    if let Some(o) = &shape.object {
        for f in &o.fields {
            let required = if f.required { " (required)" } else { "" };
            let member = form(model, &f.shape);
            parts.push(if member == "any" {
                format!("with `{}`{required}", f.json_name)
            } else {
                format!("`{}` {member}{required}", f.json_name)
            });
        }
    }
    parts.extend(
        constraint_notes(model, shape, "")
            .iter()
            .map(|n| lower_first(n)),
    );
    // "any" says nothing beside the rules.
    if parts.len() > 1 && parts[0] == "any" {
        parts.remove(0);
    }
    parts.join(", ")
}

/// The rules an object schema states of the whole object beside its members (the envelope's or a
/// body's `allOf` entries other than the kind rules, `if`/`then`/`else`, ...), in one paragraph
/// about `what`; `None` when it states none.
pub(super) fn whole_object_rules(model: &Model, shape: &Shape, what: &str) -> Option<String> {
    let notes = applicator_notes(model, shape);
    (!notes.is_empty())
        .then(|| format!("The whole {what}, beside its members: {}", notes.join(" ")))
}

/// The subschemas a shape combines, in words: "one of the following shapes", ...
fn applicator_notes(model: &Model, shape: &Shape) -> Vec<String> {
    let a = &shape.applicators;
    let list = |shapes: &[Shape]| -> String {
        shapes
            .iter()
            .enumerate()
            .map(|(i, s)| format!("({}) {}", i + 1, form(model, s)))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let mut notes = Vec::new();
    if shape.never {
        notes.push(if shape.nullable {
            "Only `null`.".to_owned()
        } else {
            "No value is allowed.".to_owned()
        });
    }
    if !shape.prefix_items.is_empty() {
        let items: Vec<String> = shape
            .prefix_items
            .iter()
            .enumerate()
            .map(|(i, s)| format!("item {i}: {}", form(model, s)))
            .collect();
        notes.push(format!("By position: {}.", items.join("; ")));
        if shape.items.as_ref().is_some_and(|i| i.never && !i.nullable) {
            notes.push("No other items.".into());
        }
    }
    // Items that combine shapes of their own (the item's type alone is said by the type column).
    if let Some(items) = shape.items.as_deref().filter(|i| !i.applicators.is_empty()) {
        notes.push(format!("Each item: {}.", form(model, items)));
    }
    if let Some(target) = &a.reference {
        notes.push(format!("Also matches {}.", form(model, target)));
    }
    let all_of: Vec<Shape> = a.conjuncts().map(|(_, s)| s.clone()).collect();
    if !all_of.is_empty() {
        notes.push(format!("All of the following shapes: {}.", list(&all_of)));
    }
    if !a.any_of.is_empty() {
        notes.push(format!(
            "At least one of the following shapes: {}.",
            list(&a.any_of)
        ));
    }
    if !a.one_of.is_empty() {
        notes.push(format!(
            "Exactly one of the following shapes: {}.",
            list(&a.one_of)
        ));
    }
    if let Some(cond) = &a.conditional {
        let mut sentence = format!("If it is {}", form(model, &cond.condition));
        if let Some(then) = &cond.then {
            sentence.push_str(&format!(", it must also be {}", form(model, then)));
        }
        if let Some(otherwise) = &cond.otherwise {
            sentence.push_str(&format!(
                "; otherwise it must be {}",
                form(model, otherwise)
            ));
        }
        notes.push(format!("{sentence}."));
    }
    for (name, s) in &a.dependent {
        notes.push(format!(
            "When `{name}` is present, the object must also be {}.",
            form(model, s)
        ));
    }
    notes
}

/// A runtime reason code as a reader of this set's docs meets it: in the profile's own spelling
/// when it declares one (`x-agh-refusal-codes`), naming the runtime's code beside it when the two
/// differ (`` `unknown_ref` (the runtime's `unknown_request`) ``).
pub(super) fn refusal_code(model: &Model, code: &str) -> String {
    let spelled = model.refusal_codes.as_ref().and_then(|r| {
        r.entries
            .iter()
            .find(|(runtime, _)| runtime == code)
            .map(|(_, own)| own)
    });
    match spelled {
        Some(own) if own != code => format!("`{own}` (the runtime's `{code}`)"),
        _ => format!("`{code}`"),
    }
}

pub(super) fn presence_word(p: Presence) -> &'static str {
    match p {
        Presence::Required => "REQUIRED.",
        Presence::Recommended => "SHOULD be present.",
        Presence::Optional => "MAY be present.",
        Presence::Forbidden => "MUST be absent or null.",
    }
}

pub(super) fn when(cond: &Conditional) -> String {
    let values: Vec<String> = cond.when.values.iter().map(code).collect();
    format!("`body.{}` is {}", cond.when.member, or_list(&values))
}

/// A note inside a sentence: its first letter lower case, without its full stop.
fn lower_first(note: &str) -> String {
    let mut chars = note.trim_end_matches('.').chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_lowercase().chain(chars).collect::<String>()
    })
}

/// A count with thousands separators (`65,536`).
pub(super) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::thousands;

    #[test]
    fn counts_read_with_thousands_separators() {
        for (n, want) in [
            (0, "0"),
            (8, "8"),
            (999, "999"),
            (1000, "1,000"),
            (65536, "65,536"),
        ] {
            assert_eq!(thousands(n), want);
        }
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
