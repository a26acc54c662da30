//! Markdown and English helpers: table cells and tables, inline code, word lists, heading
//! anchors, plurals.

use std::fmt::Write as _;

use serde_json::Value;

/// Escapes a table cell.
pub(super) fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub(super) fn table(out: &mut String, head: &[&str], rows: &[Vec<String>]) {
    let _ = writeln!(out, "| {} |", head.join(" | "));
    let _ = writeln!(out, "|{}", " --- |".repeat(head.len()));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out.push('\n');
}

/// A JSON value as inline code: strings without their quotes.
pub(super) fn code(v: &Value) -> String {
    format!("`{}`", v.as_str().map_or(v.to_string(), str::to_owned))
}

pub(super) fn codes<'a>(names: impl IntoIterator<Item = &'a String>) -> Vec<String> {
    names.into_iter().map(|n| format!("`{n}`")).collect()
}

/// `a`, `a or b`, `a, b or c`.
pub(super) fn or_list(items: &[String]) -> String {
    word_list(items, "or")
}

/// `a`, `a and b`, `a, b and c`.
pub(super) fn and_list(items: &[String]) -> String {
    word_list(items, "and")
}

pub(super) fn word_list(items: &[String], word: &str) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} {word} {last}", init.join(", ")),
    }
}

/// The anchor GitHub gives a heading.
pub(super) fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The English plural of a kind name (`receipt`: `receipts`, `notify`: `notifies`, `class`:
/// `classes`); a name that already reads as a plural (`capabilities`) stays as it is.
pub(super) fn plural(word: &str) -> String {
    let vowel = |c: char| "aeiou".contains(c);
    let mut chars = word.chars().rev();
    match (chars.next(), chars.next()) {
        (Some('y'), Some(c)) if !vowel(c) => format!("{}ies", &word[..word.len() - 1]),
        (Some('s'), Some('s' | 'u')) | (Some('x' | 'z'), _) | (Some('h'), Some('c' | 's')) => {
            format!("{word}es")
        }
        (Some('s'), _) => word.to_owned(),
        _ => format!("{word}s"),
    }
}

pub(super) fn capitalize(s: &str) -> String {
    let mut chars = s.chars();
    chars.next().map_or_else(String::new, |c| {
        c.to_uppercase().chain(chars).collect::<String>()
    })
}

#[cfg(test)]
mod tests {
    use super::plural;

    #[test]
    fn page_names_are_english_plurals_of_the_kind() {
        for (kind, want) in [
            ("receipt", "receipts"),
            ("notify", "notifies"),
            ("pong", "pongs"),
            ("delay", "delays"),
            ("class", "classes"),
            ("match", "matches"),
            ("box", "boxes"),
            ("status", "statuses"),
            ("capabilities", "capabilities"),
        ] {
            assert_eq!(plural(kind), want, "{kind}");
        }
    }
}
