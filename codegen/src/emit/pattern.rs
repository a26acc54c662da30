//! Compiles the simple anchored `pattern`s of the schemas (identifier grammars such as
//! `^[a-z0-9][a-z0-9._-]{0,127}$`) to straight-line Rust, so that the generated checks do not run
//! a regex engine for them. Anything outside the subset below is left to `regress`.
//!
//! The subset:
//! - `^`, then atoms, then `$`. An atom is a literal ASCII character or a class `[...]` /
//!   `[^...]` of characters, ranges and `\uXXXX` escapes, with an optional quantifier. Every atom
//!   but the last must have a fixed width (no quantifier, or `{n}`); the last may take `{m,n}`,
//!   `{m,}`, `+`, `*` or `?`. With fixed-width atoms before it, greedy matching is exact, so no
//!   backtracking is needed.
//! - `^[A]*[B][A]*$` where every character of class `B` is in class `A`: every character is in
//!   `A` and some character is in `B` (the one-line, non-blank text of a capability `summary`).
//! - One class, unanchored (`[^...]`): some character is in it (non-blank text, with the white
//!   space set spelled out); and `\S`, the same with ECMA-262's white space.
//! - `^X(\cX)*$` where no string `^X$` matches holds the escaped punctuation `c` (dotted names):
//!   every piece of the string split at `c` matches `^X$`.
//!
//! The last two shapes read the string byte by byte through ASCII (a table lookup a byte) and
//! decode a character only where a byte is 0x80 or more; the one-line shape, once it has seen a
//! character of its inner class, skips 8-byte words holding no byte to stop at.

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
    let atoms = parse_atoms(src)?;
    // Only the last atom may vary in width.
    let fixed = |a: &Atom| a.max == Some(a.min);
    // Only the last atom may vary in width, or one whose characters no later atom takes (as
    // base64's `[A-Za-z0-9+/]*` before `={0,2}`): matching it greedily is then exact too.
    for (i, a) in atoms.iter().enumerate() {
        let later = atoms.get(i + 1..).unwrap_or_default();
        if !fixed(a) && !later.is_empty() && !later.iter().all(|b| disjoint(&a.set, &b.set)) {
            return None;
        }
    }
    Some(atoms)
}

/// The atoms of an anchored pattern, of any widths.
fn parse_atoms(src: &str) -> Option<Vec<Atom>> {
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
                    if lo > hi {
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
    Some(atoms)
}

/// The highest Unicode scalar value.
const MAX_CHAR: u32 = 0x10_ffff;

/// The characters of `set` as sorted, disjoint, non-adjacent ranges of code points (a negated
/// class is complemented over all of Unicode).
fn code_points(set: &Set) -> Vec<(u32, u32)> {
    let (negated, mut ranges): (bool, Vec<(u32, u32)>) = match set {
        Set::Char(c) => (false, vec![(u32::from(*c), u32::from(*c))]),
        Set::Class { negated, ranges } => (
            *negated,
            ranges
                .iter()
                .map(|(lo, hi)| (u32::from(*lo), u32::from(*hi)))
                .collect(),
        ),
    };
    ranges.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::new();
    for (lo, hi) in ranges {
        match merged.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    if !negated {
        return merged;
    }
    let mut out = Vec::new();
    let mut next = 0u32;
    for (lo, hi) in merged {
        if lo > next {
            out.push((next, lo - 1));
        }
        next = hi + 1;
    }
    if next <= MAX_CHAR {
        out.push((next, MAX_CHAR));
    }
    out
}

/// Whether no character is in both sets.
fn disjoint(a: &Set, b: &Set) -> bool {
    let b = code_points(b);
    code_points(a)
        .iter()
        .all(|(lo, hi)| b.iter().all(|(blo, bhi)| hi < blo || bhi < lo))
}

/// Whether every character of `inner` is in `outer`.
fn is_subset(inner: &Set, outer: &Set) -> bool {
    let outer = code_points(outer);
    code_points(inner)
        .iter()
        .all(|(lo, hi)| outer.iter().any(|(olo, ohi)| olo <= lo && hi <= ohi))
}

/// The character set of an unanchored one-class pattern (`[...]` or `[^...]`).
fn unanchored_class(src: &str) -> Option<Set> {
    if !src.starts_with('[') || !src.ends_with(']') {
        return None;
    }
    match parse_atoms(&format!("^{src}$"))?.as_slice() {
        [Atom {
            set: set @ Set::Class { .. },
            min: 1,
            max: Some(1),
        }] => Some(set.clone()),
        _ => None,
    }
}

/// The classes `(A, B)` of a pattern `^[A]*[B][A]*$` whose `B` lies inside `A`.
fn all_and_some(src: &str) -> Option<(Set, Set)> {
    match parse_atoms(src)?.as_slice() {
        [Atom {
            set: all,
            min: 0,
            max: None,
        }, Atom {
            set: some,
            min: 1,
            max: Some(1),
        }, Atom {
            set: again,
            min: 0,
            max: None,
        }] if all == again && is_subset(some, all) => Some((all.clone(), some.clone())),
        _ => None,
    }
}

/// Whether `set` is exactly Unicode White_Space (Rust's `char::is_whitespace`, the trim of the
/// digest recipe), or its complement when `negated`.
fn is_white_space(set: &Set, negated: bool) -> bool {
    // The White_Space set, read once from `char::is_whitespace` over every code point.
    static WHITE: std::sync::OnceLock<Vec<(char, char)>> = std::sync::OnceLock::new();
    let white = WHITE.get_or_init(|| {
        (0..=MAX_CHAR)
            .filter_map(char::from_u32)
            .filter(|c| c.is_whitespace())
            .map(|c| (c, c))
            .collect()
    });
    code_points(set)
        == code_points(&Set::Class {
            negated,
            ranges: white.clone(),
        })
}

/// `U+000A, U+000D or U+0085`: the characters a negated class leaves out.
fn excluded_list(set: &Set) -> Option<String> {
    let Set::Class {
        negated: true,
        ranges,
    } = set
    else {
        return None;
    };
    let mut names: Vec<String> = Vec::new();
    for (lo, hi) in ranges {
        if lo == hi {
            names.push(format!("U+{:04X}", u32::from(*lo)));
        } else {
            names.push(format!(
                "U+{:04X}..U+{:04X}",
                u32::from(*lo),
                u32::from(*hi)
            ));
        }
    }
    Some(match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => return None,
    })
}

/// What a pattern of one of the recognized text shapes means, for messages and docs:
/// the problem message, and the docs notes (each opens with its topic: `Non-blank`, `One line`).
/// `None` for other patterns (identifier grammars: the docs show the pattern itself).
pub fn meaning(src: &str) -> Option<(String, Vec<String>)> {
    const NON_BLANK: &str = "must contain a character that is not white space";
    const NON_BLANK_NOTE: &str =
        "Non-blank: at least one character that is not Unicode White_Space.";
    if src == "\\S" {
        return Some((
            "must contain a non-whitespace character".to_owned(),
            vec!["Non-blank.".to_owned()],
        ));
    }
    if let Some(set) = unanchored_class(src) {
        if is_white_space(&set, true) {
            return Some((
                format!("{NON_BLANK} (Unicode White_Space)"),
                vec![NON_BLANK_NOTE.to_owned()],
            ));
        }
        return None;
    }
    let (all, some) = all_and_some(src)?;
    let excluded = excluded_list(&all)?;
    if !is_white_space(&some, true) {
        return None;
    }
    Some((
        format!("must be one line (no {excluded}) and {NON_BLANK} (Unicode White_Space)"),
        vec![
            format!("One line: no {excluded}."),
            NON_BLANK_NOTE.to_owned(),
        ],
    ))
}

/// The test of `c` against `set`; with `bytes`, `c` is a `u8` (every character of the set is
/// ASCII and the set is not negated, so a byte of a multi-byte character never matches).
fn test_as(set: &Set, bytes: bool) -> TokenStream {
    let rt = &crate::emit::paths::runtime();
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
                const SET: [bool; 256] = #rt::check::byte_set(&[#(#pairs),*]);
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

/// `check::byte_set` of the ASCII characters of `set`, plus every byte from 0x80 up when
/// `high`: a table a byte-level loop reads for each byte (a byte from 0x80 up starts or
/// continues a multi-byte character, which the loop decodes instead).
fn ascii_table(set: &Set, high: bool) -> TokenStream {
    let rt = &crate::emit::paths::runtime();
    let mut ranges: Vec<(u8, u8)> = code_points(set)
        .into_iter()
        .filter(|(lo, _)| *lo < 0x80)
        .map(|(lo, hi)| (lo as u8, hi.min(0x7f) as u8))
        .collect();
    if high {
        ranges.push((0x80, 0xff));
    }
    let pairs = ranges.iter().map(|(lo, hi)| {
        let (l, h) = (
            syn::LitByte::new(*lo, proc_macro2::Span::call_site()),
            syn::LitByte::new(*hi, proc_macro2::Span::call_site()),
        );
        quote!((#l, #h))
    });
    quote!(#rt::check::byte_set(&[#(#pairs),*]))
}

/// The character at byte `i` of `s` (a character boundary: the loops below step over whole
/// characters), for the tests of the non-ASCII characters; the loop ends the match with
/// `false` if there is none (never: `i` is inside `s`).
fn decode_at() -> TokenStream {
    quote! {
        let Some(c) = s.get(i..).and_then(|rest| rest.chars().next()) else {
            return false;
        };
    }
}

/// Some character of `s` is in `set` (an unanchored one-class pattern): byte by byte through
/// ASCII, a table lookup each; a character from U+0080 up decoded and tested as a `char`.
fn some_char_in(set: &Set) -> TokenStream {
    let (table, test, decode) = (ascii_table(set, false), test_as(set, false), decode_at());
    quote! {
        const IN: [bool; 256] = #table;
        let b = s.as_bytes();
        let mut i = 0usize;
        while let Some(&x) = b.get(i) {
            if x < 0x80 {
                if IN[x as usize] {
                    return true;
                }
                i += 1;
                continue;
            }
            #decode
            if #test {
                return true;
            }
            i += c.len_utf8();
        }
        false
    }
}

/// Where the byte-by-byte search for a stop byte (one of `set`'s ASCII characters, or a byte
/// from 0x80 up) in `rest` starts: `let n`, past the leading 8-byte words that hold none, each
/// word tested at once when the set has at most four ASCII characters (a byte from 0x80 up has
/// its high bit set; a byte equal to `c` is a zero byte of the word xor `c` repeated, which
/// `(x - 0x01..) & !x & 0x80..` finds exactly); `0` otherwise.
fn skip_words(set: &Set) -> TokenStream {
    let ascii: Vec<u8> = code_points(set)
        .into_iter()
        .filter(|(lo, _)| *lo < 0x80)
        .flat_map(|(lo, hi)| lo..=hi.min(0x7f))
        .filter_map(|c| u8::try_from(c).ok())
        .collect();
    if ascii.len() > 4 {
        return quote!(let n = 0usize;);
    }
    let tests = ascii.iter().map(|c| {
        let c = u64::from(*c);
        quote!(| zero(w ^ (L * #c)))
    });
    quote! {
        const L: u64 = 0x0101_0101_0101_0101;
        const H: u64 = 0x8080_8080_8080_8080;
        let zero = |x: u64| x.wrapping_sub(L) & !x & H;
        let mut n = 0usize;
        while let Some(Ok(w)) = rest.get(n..n + 8).map(<[u8; 8]>::try_from) {
            let w = u64::from_le_bytes(w);
            if (w & H) #(#tests)* != 0 {
                break;
            }
            n += 8;
        }
    }
}

/// No character of `s` in `outside` and some character in `some`: byte by byte, in two runs.
/// Until the first character in `some`, each ASCII byte is looked up in both tables; after it,
/// one table says where the next byte to stop at is (one of `outside`'s ASCII bytes, or any
/// from 0x80 up), so ASCII text costs one lookup a byte. A character from U+0080 up is
/// decoded and tested as a `char`.
fn all_and_some_bytes(outside: &Set, some: &Set) -> TokenStream {
    let (out_ascii, stop) = (ascii_table(outside, false), ascii_table(outside, true));
    let some_ascii = ascii_table(some, false);
    let (out_char, some_char, decode) =
        (test_as(outside, false), test_as(some, false), decode_at());
    let skip = skip_words(outside);
    quote! {
        const OUT: [bool; 256] = #out_ascii;
        const SOME: [bool; 256] = #some_ascii;
        const STOP: [bool; 256] = #stop;
        let b = s.as_bytes();
        let mut i = 0usize;
        let mut some = false;
        while !some {
            let Some(&x) = b.get(i) else {
                return false;
            };
            if x < 0x80 {
                if OUT[x as usize] {
                    return false;
                }
                some = SOME[x as usize];
                i += 1;
                continue;
            }
            #decode
            if #out_char {
                return false;
            }
            some = #some_char;
            i += c.len_utf8();
        }
        loop {
            let rest = b.get(i..).unwrap_or_default();
            #skip
            let Some(k) = rest.get(n..).unwrap_or_default().iter().position(|x| STOP[*x as usize]) else {
                return true;
            };
            i += n + k;
            if rest[n + k] < 0x80 {
                return false;
            }
            #decode
            if #out_char {
                return false;
            }
            i += c.len_utf8();
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

/// The branches of a top-level alternation `^(?:A|B|...)$` whose branches hold no group or
/// alternation of their own (a `|` inside a class does not split).
fn top_alternation(src: &str) -> Option<Vec<&str>> {
    let inner = src.strip_prefix("^(?:")?.strip_suffix(")$")?;
    let mut branches = Vec::new();
    let (mut start, mut in_class, mut escaped) = (0, false, false);
    for (i, c) in inner.char_indices() {
        match (escaped, in_class, c) {
            (true, ..) => escaped = false,
            (false, _, '\\') => escaped = true,
            (false, false, '[') => in_class = true,
            (false, true, ']') => in_class = false,
            (false, false, '(' | ')') => return None,
            (false, false, '|') => {
                branches.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    branches.push(&inner[start..]);
    (branches.len() > 1).then_some(branches)
}

/// `^L<c>R$` split at its first top-level literal `c` (not in a class, a count or an escape)
/// such that no string `^L$` matches holds `c`: then a string matches when it splits at its
/// first `c` into one matching `^L$` and one matching `^R$` (no backtracking).
fn literal_split(src: &str) -> Option<(char, String, String)> {
    let body = src.strip_prefix('^')?.strip_suffix('$')?;
    let (mut in_class, mut in_count, mut escaped) = (false, false, false);
    for (i, c) in body.char_indices() {
        match (escaped, in_class, in_count, c) {
            (true, ..) => escaped = false,
            (false, _, _, '\\') => escaped = true,
            (false, false, false, '[') => in_class = true,
            (false, true, _, ']') => in_class = false,
            (false, false, false, '{') => in_count = true,
            (false, false, true, '}') => in_count = false,
            (false, false, false, c)
                if i > 0 && !c.is_alphanumeric() && !"()|.*+?^$".contains(c) =>
            {
                let left = format!("^{}$", &body[..i]);
                let right = format!("^{}$", &body[i + c.len_utf8()..]);
                let holds_c = parse_atoms(&left)?.iter().any(|a| {
                    code_points(&a.set)
                        .iter()
                        .any(|(lo, hi)| (*lo..=*hi).contains(&u32::from(c)))
                });
                return (!holds_c).then_some((c, left, right));
            }
            _ => {}
        }
    }
    None
}

/// `^X(\cX)*$` (dot-separated names: `^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$`) whose
/// items `^X$` never hold the separator `c` (an escaped ASCII punctuation character): the
/// separator and `^X$`. A string then matches when each piece of it split at `c` matches `^X$`.
fn separated_items(src: &str) -> Option<(char, String)> {
    let body = src.strip_prefix('^')?.strip_suffix(")*$")?;
    let (item, group) = body.split_once('(')?;
    let rest = group.strip_prefix('\\')?;
    let c = rest.chars().next().filter(|c| c.is_ascii_punctuation())?;
    if item.is_empty() || &rest[1..] != item {
        return None;
    }
    let item = format!("^{item}$");
    let holds_c = parse(&item)?.iter().any(|a| {
        code_points(&a.set)
            .iter()
            .any(|(lo, hi)| (*lo..=*hi).contains(&u32::from(c)))
    });
    (!holds_c).then_some((c, item))
}

/// The body of `fn(s: &str) -> bool` matching `src`, when `src` is in the subset.
pub fn compile(src: &str) -> Option<TokenStream> {
    // `^` then literal characters, open at the end (`^https://`): a prefix.
    if let Some(prefix) = src.strip_prefix('^') {
        let literal = |c: char| c.is_ascii_alphanumeric() || "_:-/@#=,;'\"~!%&<> ".contains(c);
        if !prefix.is_empty() && prefix.chars().all(literal) {
            return Some(quote!(s.starts_with(#prefix)));
        }
    }
    if parse(src).is_none() {
        if let Some((c, left, right)) = literal_split(src) {
            let (left, right) = (compile(&left)?, compile(&right)?);
            return Some(quote! {
                match s.split_once(#c) {
                    Some((l, r)) => (|s: &str| -> bool { #left })(l) && (|s: &str| -> bool { #right })(r),
                    None => false,
                }
            });
        }
    }
    if let Some((c, item)) = separated_items(src) {
        // Items joined by a separator no item holds: every piece between separators is one.
        let item = compile(&item)?;
        return Some(quote!(s.split(#c).all(|s: &str| -> bool { #item })));
    }
    if let Some(branches) = top_alternation(src) {
        // Each branch anchored on its own; the string matches when one branch does.
        let bodies = branches
            .iter()
            .map(|b| compile(&format!("^{b}$")))
            .collect::<Option<Vec<_>>>()?;
        return Some(quote!(#((|| -> bool { #bodies })())||*));
    }
    if src == "\\S" {
        return Some(some_char_in(&Set::Class {
            negated: true,
            ranges: ECMA_SPACE.to_vec(),
        }));
    }
    if let Some(set) = unanchored_class(src) {
        return Some(some_char_in(&set));
    }
    if let Some((all, some)) = all_and_some(src) {
        // Every character in `all` and one in `some`: as `some` lies inside `all`, the one in
        // `some` can stand between the two runs of `all`, so no backtracking is needed.
        let outside = match all {
            Set::Char(c) => Set::Class {
                negated: true,
                ranges: vec![(c, c)],
            },
            Set::Class { negated, ranges } => Set::Class {
                negated: !negated,
                ranges,
            },
        };
        return Some(all_and_some_bytes(&outside, &some));
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
        if atom.max != Some(n) {
            // Greedy: no later atom takes these characters.
            body.extend(match atom.max {
                None if n == 0 => quote! {
                    while chars.clone().next().is_some_and(|c| #t) {
                        chars.next();
                    }
                },
                max => {
                    let more = match max {
                        Some(max) => quote!(n < #max &&),
                        None => quote!(),
                    };
                    let short = if n == 0 {
                        quote!()
                    } else {
                        quote!(if n < #n { return false; })
                    };
                    quote! {{
                        let mut n = 0usize;
                        while #more chars.clone().next().is_some_and(|c| #t) {
                            chars.next();
                            n += 1;
                        }
                        #short
                    }}
                }
            });
            continue;
        }
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
    fn a_variable_atom_before_characters_it_does_not_take_is_in_the_subset() {
        for p in [
            "^[A-Za-z0-9+/]*={0,2}$",
            "^[a-z]+-[0-9]{1,3}$",
            "^[a-z]{2,}[0-9]$",
        ] {
            assert!(parse(p).is_some(), "{p}");
        }
        // A later atom takes some of the same characters: a match may need backtracking.
        for p in ["^[a-z]*-?[a-z]$", "^[a-z0-9]+[0-9]$", "^[^-]*-[a-z]*x$"] {
            assert!(parse(p).is_none(), "{p}");
        }
    }

    #[test]
    fn a_literal_prefix_open_at_the_end_is_compiled() {
        for p in ["^https://", "^urn:agh:", "^x-"] {
            let code = super::compile(p).map(|c| c.to_string());
            assert!(code.is_some_and(|c| c.contains("starts_with")), "{p}");
        }
        // A metacharacter, or an end anchor: not a plain prefix.
        for p in ["^a.b", "^a+", "^(ab)"] {
            assert!(super::compile(p).is_none(), "{p}");
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
            "^a{3,1}$",
        ] {
            assert!(parse(p).is_none(), "{p}");
        }
        for p in [
            // The middle class is not inside the outer one: a match may need backtracking.
            "^[a-z]*[0-9][a-z]*$",
            // The runs differ.
            "^[a-z]*[a][b-z]*$",
            // Two classes unanchored.
            "[a][b]",
            "[^a]+",
        ] {
            assert!(super::compile(p).is_none(), "{p}");
        }
    }

    const NON_BLANK: &str = "[^\\u0009-\\u000d\\u0020\\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]";

    #[test]
    fn non_ascii_classes_are_in_the_subset() {
        assert!(parse("^[é]$").is_some());
        assert!(parse("^[^\\u2028]{1,4}$").is_some());
    }

    #[test]
    fn the_white_space_class_is_recognized_only_when_it_is_exactly_white_space() {
        let (problem, notes) = super::meaning(NON_BLANK).expect("recognized");
        assert!(problem.contains("not white space"), "{problem}");
        assert_eq!(notes.len(), 1);
        assert!(notes[0].starts_with("Non-blank"));
        // One character short of White_Space (no U+0085), or one too many (U+FEFF): a plain class.
        assert!(super::meaning(&NON_BLANK.replace("\\u0085", "")).is_none());
        assert!(super::meaning(&NON_BLANK.replace("\\u3000", "\\u3000\\ufeff")).is_none());
        assert!(super::compile(NON_BLANK).is_some());
    }

    #[test]
    fn one_line_non_blank_text_is_compiled_and_described() {
        let line = "[^\\u000a\\u000d\\u0085\\u2028\\u2029]";
        let src = format!("^{line}*{NON_BLANK}{line}*$");
        assert!(super::compile(&src).is_some());
        let (problem, notes) = super::meaning(&src).expect("recognized");
        assert!(
            problem.contains("U+000A, U+000D, U+0085, U+2028 or U+2029"),
            "{problem}"
        );
        assert!(notes[0].starts_with("One line"), "{notes:?}");
        assert!(notes[1].starts_with("Non-blank"), "{notes:?}");
    }

    #[test]
    fn dot_separated_names_split_at_their_separator() {
        let dotted = "^[a-z0-9][a-z0-9_-]*(\\.[a-z0-9][a-z0-9_-]*)*$";
        assert_eq!(
            super::separated_items(dotted),
            Some(('.', "^[a-z0-9][a-z0-9_-]*$".to_owned()))
        );
        let code = super::compile(dotted).map(|c| c.to_string());
        assert!(code.is_some_and(|c| c.contains("split")), "{dotted}");
        // The items may hold the separator, the group differs from the item, or the separator
        // is no escaped punctuation: left to the other shapes or the regex engine.
        for p in [
            "^[a-z.]+(\\.[a-z.]+)*$",
            "^[a-z]+(\\.[a-z0-9]+)*$",
            "^[a-z]+(\\d[a-z]+)*$",
            "^[a-z]+(\\.[a-z]+)+$",
            "^(\\.[a-z]+)*$",
        ] {
            assert!(super::separated_items(p).is_none(), "{p}");
        }
    }

    #[test]
    fn classes_are_matched_byte_by_byte_through_ascii() {
        // The one-line text and the non-blank text read bytes by table, chars only past ASCII.
        let line = "[^\\u000a\\u000d\\u0085\\u2028\\u2029]";
        let src = format!("^{line}*{NON_BLANK}{line}*$");
        for p in [src.as_str(), NON_BLANK, "\\S"] {
            let code = super::compile(p).map(|c| c.to_string()).unwrap_or_default();
            assert!(code.contains("as_bytes"), "{p}: {code}");
            assert!(code.contains("len_utf8"), "{p}: {code}");
        }
    }

    #[test]
    fn code_points_complement_and_merge() {
        use super::{code_points, Set};
        let set = Set::Class {
            negated: true,
            ranges: vec![('b', 'c'), ('a', 'a'), ('\u{10ffff}', '\u{10ffff}')],
        };
        assert_eq!(code_points(&set), vec![(0, 0x60), (0x64, 0x10_fffe)]);
    }
}
