//! Compiles the simple anchored `pattern`s of the schemas (identifier grammars such as
//! `^[a-z0-9][a-z0-9._-]{0,127}$`) to straight-line Rust, so that the generated checks do not run
//! a regex engine for them. Anything outside the subset below is left to `regress`.
//!
//! The subset: `^`, then atoms, then `$`. An atom is a literal ASCII character or a class
//! `[...]` / `[^...]` of ASCII characters, ranges and `\uXXXX` escapes, with an optional
//! quantifier. Every atom but the last must have a fixed width (no quantifier, or `{n}`); the
//! last may take `{m,n}`, `{m,}`, `+`, `*` or `?`. With fixed-width atoms before it, greedy
//! matching is exact, so no backtracking is needed.

use proc_macro2::TokenStream;
use quote::quote;

#[derive(Clone, Debug, PartialEq)]
enum Set {
    /// One character.
    Char(char),
    /// A class: ranges, negated or not.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

#[derive(Clone, Debug, PartialEq)]
struct Atom {
    set: Set,
    min: usize,
    /// `None`: unbounded.
    max: Option<usize>,
}

fn parse_class_char(chars: &[char], i: &mut usize) -> Option<char> {
    let c = *chars.get(*i)?;
    *i += 1;
    if c != '\\' {
        return (c != '[' && c != ']').then_some(c);
    }
    let e = *chars.get(*i)?;
    *i += 1;
    match e {
        'u' => {
            let hex: String = chars.get(*i..*i + 4)?.iter().collect();
            *i += 4;
            char::from_u32(u32::from_str_radix(&hex, 16).ok()?)
        }
        '-' | '.' | '\\' | ']' | '[' | '^' | '/' => Some(e),
        _ => None,
    }
}

fn parse(src: &str) -> Option<Vec<Atom>> {
    let chars: Vec<char> = src.chars().collect();
    if chars.first() != Some(&'^') || chars.last() != Some(&'$') || chars.len() < 2 {
        return None;
    }
    let body = &chars[1..chars.len() - 1];
    let mut atoms = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let set = match body[i] {
            '[' => {
                i += 1;
                let negated = body.get(i) == Some(&'^');
                if negated {
                    i += 1;
                }
                let mut ranges = Vec::new();
                loop {
                    if body.get(i) == Some(&']') {
                        i += 1;
                        break;
                    }
                    let lo = parse_class_char(body, &mut i)?;
                    let hi = if body.get(i) == Some(&'-')
                        && body.get(i + 1).is_some_and(|c| *c != ']')
                    {
                        i += 1;
                        parse_class_char(body, &mut i)?
                    } else {
                        lo
                    };
                    if !lo.is_ascii() || !hi.is_ascii() || lo > hi {
                        return None;
                    }
                    ranges.push((lo, hi));
                }
                if ranges.is_empty() {
                    return None;
                }
                Set::Class { negated, ranges }
            }
            c if c.is_ascii_alphanumeric() || "_:-/@#=,;'\"~!%&<> ".contains(c) => {
                i += 1;
                Set::Char(c)
            }
            _ => return None,
        };
        let (min, max) = match body.get(i) {
            Some('+') => {
                i += 1;
                (1, None)
            }
            Some('*') => {
                i += 1;
                (0, None)
            }
            Some('?') => {
                i += 1;
                (0, Some(1))
            }
            Some('{') => {
                let close = body[i..].iter().position(|c| *c == '}')? + i;
                let inner: String = body[i + 1..close].iter().collect();
                i = close + 1;
                match inner.split_once(',') {
                    None => {
                        let n = inner.parse().ok()?;
                        (n, Some(n))
                    }
                    Some((m, "")) => (m.parse().ok()?, None),
                    Some((m, n)) => (m.parse().ok()?, Some(n.parse().ok()?)),
                }
            }
            _ => (1, Some(1)),
        };
        if max.is_some_and(|max| max < min) {
            return None;
        }
        atoms.push(Atom { set, min, max });
    }
    // Only the last atom may vary in width.
    let fixed = |a: &Atom| a.max == Some(a.min);
    if atoms.iter().rev().skip(1).any(|a| !fixed(a)) {
        return None;
    }
    Some(atoms)
}

/// The test of `c` against `set`; with `bytes`, `c` is a `u8` (every character of the set is
/// ASCII and the set is not negated, so a byte of a multi-byte character never matches).
fn test_as(set: &Set, bytes: bool) -> TokenStream {
    let lit = |c: char| -> TokenStream {
        if bytes {
            let b = syn::LitByte::new(c as u8, proc_macro2::Span::call_site());
            quote!(#b)
        } else {
            quote!(#c)
        }
    };
    match set {
        Set::Char(c) => {
            let c = lit(*c);
            quote!(c == #c)
        }
        // A byte class of more than one range: one load from a 256-entry table built at
        // compile time (`check::byte_set`).
        Set::Class { negated, ranges } if bytes && ranges.len() > 1 => {
            let pairs = ranges.iter().map(|(lo, hi)| {
                let (l, h) = (lit(*lo), lit(*hi));
                quote!((#l, #h))
            });
            let test = quote!({
                const SET: [bool; 256] = ::agh_protocol::check::byte_set(&[#(#pairs),*]);
                SET[c as usize]
            });
            if *negated {
                quote!(!#test)
            } else {
                test
            }
        }
        Set::Class { negated, ranges } => {
            let arms = ranges.iter().map(|(lo, hi)| {
                let (l, h) = (lit(*lo), lit(*hi));
                if lo == hi {
                    quote!(#l)
                } else {
                    quote!(#l..=#h)
                }
            });
            if *negated {
                quote!(!matches!(c, #(#arms)|*))
            } else {
                quote!(matches!(c, #(#arms)|*))
            }
        }
    }
}

/// ECMA-262 `\s`: the WhiteSpace (tab, VT, FF, space, NBSP, ZWNBSP and the other `Zs`
/// characters) and LineTerminator code points.
const ECMA_SPACE: &[(char, char)] = &[
    ('\t', '\r'),
    (' ', ' '),
    ('\u{a0}', '\u{a0}'),
    ('\u{1680}', '\u{1680}'),
    ('\u{2000}', '\u{200a}'),
    ('\u{2028}', '\u{2029}'),
    ('\u{202f}', '\u{202f}'),
    ('\u{205f}', '\u{205f}'),
    ('\u{3000}', '\u{3000}'),
    ('\u{feff}', '\u{feff}'),
];

/// The body of `fn(s: &str) -> bool` matching `src`, when `src` is in the subset (or is the
/// unanchored `\S`: some character that is not ECMA-262 white space).
pub fn compile(src: &str) -> Option<TokenStream> {
    if src == "\\S" {
        let set = test_as(
            &Set::Class {
                negated: true,
                ranges: ECMA_SPACE.to_vec(),
            },
            false,
        );
        return Some(quote!(s.chars().any(|c| #set)));
    }
    let atoms = parse(src)?;
    let (last, fixed) = atoms.split_last()?;
    // A literal prefix is one comparison.
    let literal = fixed
        .iter()
        .take_while(|a| a.min == 1 && a.max == Some(1) && matches!(a.set, Set::Char(_)))
        .count();
    let prefix: String = fixed[..literal]
        .iter()
        .filter_map(|a| match a.set {
            Set::Char(c) => Some(c),
            Set::Class { .. } => None,
        })
        .collect();
    // Byte-wise when no class is negated: a non-ASCII character never matches, and then every
    // matching character is one byte, so counting bytes counts characters.
    let bytes = atoms.iter().all(|a| match &a.set {
        Set::Char(c) => c.is_ascii(),
        Set::Class { negated, ranges } => {
            !negated && ranges.iter().all(|(lo, hi)| lo.is_ascii() && hi.is_ascii())
        }
    });
    let test = |set: &Set| test_as(set, bytes);
    let iter = if bytes {
        quote!(bytes())
    } else {
        quote!(chars())
    };
    let mut body = if prefix.is_empty() {
        quote! { let mut chars = s.#iter; }
    } else {
        quote! {
            let Some(rest) = s.strip_prefix(#prefix) else { return false; };
            let mut chars = rest.#iter;
        }
    };
    for atom in &fixed[literal..] {
        let t = test(&atom.set);
        let n = atom.min;
        body.extend(quote! {
            for _ in 0..#n {
                match chars.next() {
                    Some(c) if #t => {}
                    _ => return false,
                }
            }
        });
    }
    let t = test(&last.set);
    let min = last.min;
    if bytes {
        // One byte per character: the count is the length of what is left, known before any
        // byte is tested, and the tests are one loop with no counter.
        let count = match last.max {
            None if min == 0 => quote!(),
            None => quote!(if chars.len() < #min { return false; }),
            Some(max) => quote!(if !(#min..=#max).contains(&chars.len()) { return false; }),
        };
        body.extend(quote! {
            #count
            chars.all(|c| #t)
        });
        return Some(body);
    }
    body.extend(match (min, last.max) {
        (0, None) => quote! {
            chars.all(|c| #t)
        },
        (min, None) => quote! {
            let mut n = 0usize;
            for c in chars {
                if !(#t) {
                    return false;
                }
                n += 1;
            }
            n >= #min
        },
        (min, Some(max)) => {
            let enough = if min == 0 {
                quote!(true)
            } else {
                quote!(n >= #min)
            };
            quote! {
                let mut n = 0usize;
                for c in chars {
                    if !(#t) {
                        return false;
                    }
                    n += 1;
                    if n > #max {
                        return false;
                    }
                }
                #enough
            }
        }
    });
    Some(body)
}

#[cfg(test)]
mod tests {
    use super::parse;

    #[test]
    fn the_schema_grammars_are_in_the_subset() {
        for p in [
            "^[a-z0-9][a-z0-9_-]{0,63}$",
            "^[a-z0-9][a-z0-9._-]{0,127}$",
            "^direct_[a-f0-9]{32}$",
            "^work_[a-zA-Z0-9_-]{1,64}$",
            "^sha256:[a-f0-9]{64}$",
            "^[^.*> \\u0000-\\u001f\\u007f]+$",
        ] {
            assert!(parse(p).is_some(), "{p}");
        }
    }

    #[test]
    fn non_space_is_compiled_though_it_is_not_anchored() {
        assert!(super::compile("\\S").is_some());
        assert!(super::compile("\\s").is_none());
    }

    #[test]
    fn others_are_left_to_the_regex_engine() {
        for p in [
            "\\S",
            "^a{1,3}ab$",
            "^(a|b)$",
            "^a.b$",
            "[a-z]+",
            "^\\d+$",
            "^[é]$",
            "^a{3,1}$",
        ] {
            assert!(parse(p).is_none(), "{p}");
        }
    }
}
