//! JSON Schema's equality of instances (`const`, `enum`, `uniqueItems`): numbers by value,
//! objects in any member order. Shared by the validators (`crate::schema::check` re-exports it)
//! and the scanner.

use std::collections::HashMap;

use serde_json::Value;

/// A text that two JSON values share exactly when JSON Schema holds them equal (`const`, `enum`,
/// `uniqueItems`): numbers by their mathematical value (`1` and `1.0` are equal), objects
/// whatever the order of their members, strings, arrays, booleans and `null` as they are. It is
/// JSON text itself: strings escaped, object members sorted by name, each number in one form
/// (its significant digits and a decimal exponent, exact at any size: `canonical_number`).
pub fn equality_key(v: &Value) -> String {
    fn write(v: &Value, out: &mut String) {
        match v {
            Value::Number(n) => out.push_str(&canonical_number(n.as_str())),
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            Value::Object(map) => {
                let mut members: Vec<_> = map.iter().collect();
                members.sort_unstable_by(|a, b| a.0.cmp(b.0));
                out.push('{');
                for (i, (name, value)) in members.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(&Value::from(name.as_str()).to_string());
                    out.push(':');
                    write(value, out);
                }
                out.push('}');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut out = String::new();
    write(v, &mut out);
    out
}

/// The first pair of equal items `(first, again)` as JSON Schema compares them
/// ([`equality_key`]), in linear expected time.
pub fn first_duplicate(items: &[Value]) -> Option<(usize, usize)> {
    let mut seen: HashMap<String, usize> = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let key = equality_key(item);
        if let Some(&first) = seen.get(&key) {
            return Some((first, i));
        }
        seen.insert(key, i);
    }
    None
}

/// The first pair of string items equal after trimming Unicode white space.
pub fn first_duplicate_trimmed(items: &[Value]) -> Option<(usize, usize)> {
    let mut seen: HashMap<&str, usize> = HashMap::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let Some(s) = item.as_str() else { continue };
        let key = s.trim();
        if let Some(&first) = seen.get(key) {
            return Some((first, i));
        }
        seen.insert(key, i);
    }
    None
}

/// The canonical form of a JSON number's mathematical value: the significant digits with the
/// sign and a decimal exponent (`1`, `1.0` and `10e-1` all give `1`; `1.5` gives `15e-1`), exact
/// at any size.
fn canonical_number(text: &str) -> String {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], &unsigned[i + 1..]),
        None => (unsigned, "0"),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits: String = int.chars().chain(frac.chars()).collect();
    let digits = digits.trim_start_matches('0');
    if digits.is_empty() {
        return "0".to_owned();
    }
    let trimmed = digits.trim_end_matches('0');
    // The exponent may exceed any machine integer: add in i128, saturating (a JSON text of at
    // most a few MiB cannot reach it).
    let exp: i128 =
        exponent
            .trim_start_matches('+')
            .parse()
            .unwrap_or(if exponent.starts_with('-') {
                i128::MIN / 2
            } else {
                i128::MAX / 2
            });
    let shift = i128::try_from(digits.len() - trimmed.len()).unwrap_or(0)
        - i128::try_from(frac.len()).unwrap_or(0);
    let exp = exp.saturating_add(shift);
    let sign = if negative { "-" } else { "" };
    if exp == 0 {
        format!("{sign}{trimmed}")
    } else {
        format!("{sign}{trimmed}e{exp}")
    }
}
