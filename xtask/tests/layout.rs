//! The workspace's layout, checked in `cargo test` (issue 29):
//!
//! - no cycles between the top-level modules of a crate: a top-level module is a file or folder
//!   directly under `src/` (`lib.rs`/`main.rs` is the crate root, named `lib`/`main`); a module
//!   depends on another when its code names `crate::other` (in a `use` or anywhere in code;
//!   comments, strings and `#[cfg(test)] mod ... { }` blocks aside), and on the root when it names
//!   an item of the root (`crate::Item`). `src/bin/` holds other crates and is not looked at.
//! - no hand-written source file over [`MAX_LINES`] lines, not counting its `#[cfg(test)]
//!   mod ... { }` blocks; generated files (first line contains `@generated`) and everything under
//!   a `tests/`, `benches/` or `fixtures/` folder are excepted.
//! - `unsafe` code only where [`UNSAFE_ALLOWED`] says: the workspace denies the `unsafe_code`
//!   lint (`deny`, not `forbid`, so that one function can allow it), every member takes the
//!   workspace's lints, and no other file names the lint (an `allow`, `expect`, `warn` or
//!   `cfg_attr` of it) or the keyword `unsafe`, tests and benches included.
//!
//! The offenders of the day are listed in [`KNOWN_CYCLES`] and [`KNOWN_LONG_FILES`]: the check
//! passes with them and fails on any other, and fails too when a listed one is gone, so the lists
//! only shrink.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The most lines a hand-written source file may have (its test module not counted).
const MAX_LINES: usize = 1000;

/// Cycles between top-level modules that exist today (issue 29 removes them): the crate's folder
/// and the modules of one strongly connected component, sorted. Remove an entry when its cycle
/// is gone; never add one.
const KNOWN_CYCLES: &[(&str, &[&str])] = &[];

/// Hand-written files over [`MAX_LINES`] today (issue 29 splits them). Remove an entry when the
/// file is short enough; never add one.
const KNOWN_LONG_FILES: &[&str] = &[];

/// The files where `unsafe` code stands, with how many times each names the lint
/// `unsafe_code` and the keyword `unsafe` (outside comments and strings). One today: the
/// message's text made a `ByteString` after `simdutf8` checked it (`agh_runtime::profile::
/// utf8_text`, BENCHMARKS.md). Adding an entry is a decision for review, with its reason here.
const UNSAFE_ALLOWED: &[(&str, usize, usize)] = &[("runtime/src/profile/mod.rs", 1, 1)];

// ---- reading Rust source -------------------------------------------------------------------

fn is_ident_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// The source with comments and the insides of string and character literals blanked to spaces
/// (newlines kept, so line numbers stay true): what is left is code.
fn code_only(src: &str) -> String {
    let chars: Vec<char> = src.chars().collect();
    let mut out: Vec<char> = Vec::with_capacity(chars.len());
    let blank = |out: &mut Vec<char>, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev_ident = i > 0 && is_ident_char(chars[i - 1]);
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    blank(&mut out, '/');
                    blank(&mut out, '*');
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    blank(&mut out, '*');
                    blank(&mut out, '/');
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if !prev_ident && (c == 'r' || (c == 'b' && next == Some('r'))) && {
            // A raw string: r"..", r#".."#, br"..".
            let start = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = chars[start.min(chars.len())..]
                .iter()
                .take_while(|h| **h == '#')
                .count();
            chars.get(start + hashes) == Some(&'"')
        } {
            let start = if c == 'b' { i + 2 } else { i + 1 };
            let hashes = chars[start..].iter().take_while(|h| **h == '#').count();
            let mut j = start + hashes + 1;
            loop {
                if j >= chars.len() {
                    break;
                }
                if chars[j] == '"' && chars[j + 1..].iter().take(hashes).all(|h| *h == '#') {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            let end = j.min(chars.len());
            for k in &chars[i..end] {
                blank(&mut out, *k);
            }
            i = end;
        } else if c == '"' {
            blank(&mut out, c);
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
            if i < chars.len() {
                blank(&mut out, '"');
                i += 1;
            }
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal ('x', '\n', '\'', '\u{1F}'); else a lifetime, which is code.
            blank(&mut out, c);
            i += 1;
            if chars.get(i) == Some(&'\\') {
                blank(&mut out, '\\');
                i += 1;
                if i < chars.len() {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
            while i < chars.len() && chars[i] != '\'' {
                blank(&mut out, chars[i]);
                i += 1;
            }
            if i < chars.len() {
                blank(&mut out, '\'');
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    out.into_iter().collect()
}

/// 1-based line of char offset `at` in `text`.
fn line_of(chars: &[char], at: usize) -> usize {
    1 + chars[..at].iter().filter(|c| **c == '\n').count()
}

/// The line ranges (1-based, inclusive) of the `#[cfg(test)] mod NAME { ... }` blocks in `code`
/// (as returned by [`code_only`]), from the attribute's line to the closing brace's.
fn test_modules(code: &str) -> Vec<(usize, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let needle: Vec<char> = "#[cfg(test)]".chars().collect();
    let mut ranges = Vec::new();
    let mut i = 0;
    while i + needle.len() <= chars.len() {
        if chars[i..i + needle.len()] != needle[..] {
            i += 1;
            continue;
        }
        let start = i;
        let mut j = i + needle.len();
        // Other attributes, visibility, `mod`, the name, then `{`.
        let skip_ws = |j: &mut usize| {
            while *j < chars.len() && chars[*j].is_whitespace() {
                *j += 1;
            }
        };
        loop {
            skip_ws(&mut j);
            if chars.get(j) == Some(&'#') && chars.get(j + 1) == Some(&'[') {
                let mut depth = 0;
                while j < chars.len() {
                    match chars[j] {
                        '[' => depth += 1,
                        ']' => {
                            depth -= 1;
                            if depth == 0 {
                                j += 1;
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
            } else {
                break;
            }
        }
        let word = |j: usize| -> String {
            chars[j.min(chars.len())..]
                .iter()
                .take_while(|c| is_ident_char(**c))
                .collect()
        };
        if word(j) == "pub" {
            j += 3;
            if chars.get(j) == Some(&'(') {
                while j < chars.len() && chars[j] != ')' {
                    j += 1;
                }
                j += 1;
            }
            skip_ws(&mut j);
        }
        if word(j) != "mod" {
            i += needle.len();
            continue;
        }
        j += 3;
        skip_ws(&mut j);
        j += word(j).chars().count();
        skip_ws(&mut j);
        if chars.get(j) != Some(&'{') {
            i += needle.len();
            continue;
        }
        let mut depth = 0;
        while j < chars.len() {
            match chars[j] {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        let end = j.min(chars.len().saturating_sub(1));
        ranges.push((line_of(&chars, start), line_of(&chars, end)));
        i = end + 1;
    }
    ranges
}

/// The file's lines, not counting its `#[cfg(test)] mod ... { }` blocks.
fn counted_lines(src: &str) -> usize {
    let code = code_only(src);
    let total = src.lines().count();
    let tests: usize = test_modules(&code).iter().map(|(a, b)| b - a + 1).sum();
    total - tests
}

/// Every first segment after `crate::` in `code` (as returned by [`code_only`]), with its line:
/// `crate::a::b` gives `a`, `use crate::{a::X, b}` gives `a` and `b`. `$crate` (in macros) and
/// `pub(crate)` are not references.
fn crate_refs(code: &str) -> Vec<(String, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let mut refs = Vec::new();
    let skip_ws = |j: &mut usize| {
        while *j < chars.len() && chars[*j].is_whitespace() {
            *j += 1;
        }
    };
    let ident_at = |j: usize| -> String {
        chars[j.min(chars.len())..]
            .iter()
            .take_while(|c| is_ident_char(**c))
            .collect()
    };
    let mut i = 0;
    while i + 5 <= chars.len() {
        let is_word = chars[i..i + 5].iter().collect::<String>() == "crate"
            && (i == 0 || !(is_ident_char(chars[i - 1]) || chars[i - 1] == '$'))
            && chars.get(i + 5).is_none_or(|c| !is_ident_char(*c));
        if !is_word {
            i += 1;
            continue;
        }
        let mut j = i + 5;
        skip_ws(&mut j);
        if !(chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':')) {
            i += 5;
            continue;
        }
        j += 2;
        skip_ws(&mut j);
        if chars.get(j) == Some(&'{') {
            // A group: the first segment of each item at depth 1.
            let mut depth = 0;
            let mut expect_item = true;
            while j < chars.len() {
                match chars[j] {
                    '{' => {
                        depth += 1;
                        j += 1;
                    }
                    '}' => {
                        depth -= 1;
                        j += 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    ',' => {
                        if depth == 1 {
                            expect_item = true;
                        }
                        j += 1;
                    }
                    c if depth == 1 && expect_item && is_ident_char(c) => {
                        let name = ident_at(j);
                        refs.push((name.clone(), line_of(&chars, j)));
                        expect_item = false;
                        j += name.chars().count();
                    }
                    _ => j += 1,
                }
            }
        } else {
            let name = ident_at(j);
            if !name.is_empty() {
                refs.push((name, line_of(&chars, j)));
            }
        }
        i = j.max(i + 5);
    }
    refs
}

// ---- module graphs -------------------------------------------------------------------------

/// One edge's evidence: the file (as given) and line of a reference.
type Evidence = Vec<(String, usize)>;

/// A cycle found: the modules of one strongly connected component (sorted) and the edges
/// between them with the lines that make them.
#[derive(Debug)]
struct Cycle {
    modules: Vec<String>,
    edges: BTreeMap<(String, String), Evidence>,
}

impl Cycle {
    fn describe(&self, krate: &str) -> String {
        let mut s = format!("{krate}: cycle between {}:", self.modules.join(", "));
        for ((from, to), lines) in &self.edges {
            let at: Vec<String> = lines.iter().map(|(f, l)| format!("{f}:{l}")).collect();
            s.push_str(&format!("\n    {from} -> {to} ({})", at.join(", ")));
        }
        s
    }
}

/// The top-level module of a file given by its path under `src/` (`None` for `src/bin/`).
fn module_of(rel: &Path) -> Option<String> {
    let mut parts = rel.components();
    let first = parts.next()?.as_os_str().to_str()?.to_owned();
    if parts.next().is_some() {
        return (first != "bin").then_some(first);
    }
    Some(first.strip_suffix(".rs").unwrap_or(&first).to_owned())
}

/// What the crate root (`lib.rs`/`main.rs`) holds, for resolving `crate::Name`: the names it
/// defines, the names it re-exports from a top-level module (`pub use m::{A, B as C}`), and the
/// modules it glob-re-exports (`pub use m::*`).
#[derive(Debug, Default)]
struct Root {
    defined: BTreeSet<String>,
    reexports: BTreeMap<String, String>,
    globs: Vec<String>,
}

impl Root {
    fn read(code: &str, modules: &BTreeSet<String>) -> Root {
        let chars: Vec<char> = code.chars().collect();
        let mut root = Root::default();
        let words = words_of(&chars);
        for (n, (word, _)) in words.iter().enumerate() {
            let next = words.get(n + 1).map(|(w, _)| w.as_str());
            let defines = [
                "fn", "struct", "enum", "trait", "type", "const", "static", "union",
            ];
            if defines.contains(&word.as_str()) || word == "macro_rules" {
                if let Some(name) = next {
                    root.defined.insert(name.to_owned());
                }
            }
        }
        // `use` items: the text from `use` to `;`.
        for (word, at) in &words {
            if word != "use" {
                continue;
            }
            let end = chars[*at..]
                .iter()
                .position(|c| *c == ';')
                .map_or(chars.len(), |p| at + p);
            let tree: String = chars[at + 3..end].iter().collect();
            let tree = tree.trim();
            let tree = tree
                .strip_prefix("crate::")
                .or_else(|| tree.strip_prefix("self::"))
                .unwrap_or(tree)
                .trim_start();
            let module: String = tree.chars().take_while(|c| is_ident_char(*c)).collect();
            if !modules.contains(&module) {
                continue;
            }
            if tree.contains('*') {
                root.globs.push(module.clone());
            }
            // Leaves: a name followed by `,`, `}` or the end (after `as`, the alias).
            let tree_chars: Vec<char> = tree.chars().collect();
            let tree_words = words_of(&tree_chars);
            for (k, (w, at)) in tree_words.iter().enumerate() {
                let after = tree_chars[at + w.chars().count()..]
                    .iter()
                    .find(|c| !c.is_whitespace());
                let is_leaf = matches!(after, None | Some(',') | Some('}'));
                let aliased = tree_words.get(k + 1).is_some_and(|(n, _)| n == "as");
                if is_leaf && !aliased && w != "self" && k > 0 {
                    root.reexports.insert(w.clone(), module.clone());
                }
            }
        }
        root
    }

    /// The top-level module `crate::name` belongs to.
    fn resolve(&self, name: &str, modules: &BTreeSet<String>, root_name: &str) -> String {
        if modules.contains(name) {
            return name.to_owned();
        }
        if self.defined.contains(name) {
            return root_name.to_owned();
        }
        if let Some(m) = self.reexports.get(name) {
            return m.clone();
        }
        match self.globs.as_slice() {
            [only] => only.clone(),
            _ => root_name.to_owned(),
        }
    }
}

/// The identifiers (whole words) of `chars` with their offsets.
fn words_of(chars: &[char]) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if is_ident_char(chars[i]) && (i == 0 || !is_ident_char(chars[i - 1])) {
            let w: String = chars[i..]
                .iter()
                .take_while(|c| is_ident_char(**c))
                .collect();
            let len = w.chars().count();
            out.push((w, i));
            i += len;
        } else {
            i += 1;
        }
    }
    out
}

/// In the crate root, the paths that start with a top-level module's name (`docs::emit(..)`,
/// `pub use load::SchemaSet`), with their lines: the root's own references to its modules.
fn root_refs(code: &str, modules: &BTreeSet<String>) -> Vec<(String, usize)> {
    let chars: Vec<char> = code.chars().collect();
    let mut refs = Vec::new();
    for (w, at) in words_of(&chars) {
        if !modules.contains(&w) {
            continue;
        }
        // Not a later segment (`x::name`, `self::name`) nor `$crate`-like.
        let mut before = chars[..at].iter().rev().filter(|c| !c.is_whitespace());
        let (b1, b2) = (before.next(), before.next());
        let path_start = !(b1 == Some(&':') && b2 == Some(&':')) && b1 != Some(&'$');
        let mut j = at + w.chars().count();
        while j < chars.len() && chars[j].is_whitespace() {
            j += 1;
        }
        if path_start && chars.get(j) == Some(&':') && chars.get(j + 1) == Some(&':') {
            refs.push((w, line_of(&chars, at)));
        }
    }
    refs
}

/// `code` with the lines of its `#[cfg(test)] mod ... { }` blocks emptied.
fn without_test_modules(code: &str) -> String {
    let tests = test_modules(code);
    code.split('\n')
        .enumerate()
        .map(|(n, l)| {
            if tests.iter().any(|(a, b)| (*a..=*b).contains(&(n + 1))) {
                ""
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The cycles between the top-level modules of one crate, from its `src/` files (paths relative
/// to `src/`, and their text).
fn cycles(files: &[(PathBuf, String)]) -> Vec<Cycle> {
    let root_name = if files.iter().any(|(p, _)| p == Path::new("lib.rs")) {
        "lib"
    } else {
        "main"
    };
    let modules: BTreeSet<String> = files
        .iter()
        .filter_map(|(p, _)| module_of(p))
        .filter(|m| m != root_name)
        .collect();
    let codes: Vec<(&PathBuf, String)> = files
        .iter()
        .map(|(p, t)| (p, without_test_modules(&code_only(t))))
        .collect();
    let root = codes
        .iter()
        .find(|(p, _)| module_of(p).as_deref() == Some(root_name))
        .map(|(_, code)| Root::read(code, &modules))
        .unwrap_or_default();
    let mut edges: BTreeMap<(String, String), Evidence> = BTreeMap::new();
    for (path, code) in &codes {
        let Some(from) = module_of(path) else {
            continue;
        };
        let mut targets: Vec<(String, usize)> = crate_refs(code)
            .into_iter()
            .map(|(name, line)| (root.resolve(&name, &modules, root_name), line))
            .collect();
        if from == root_name {
            targets.extend(root_refs(code, &modules));
        }
        for (to, line) in targets {
            if to != from {
                edges
                    .entry((from.clone(), to))
                    .or_default()
                    .push((format!("src/{}", path.display()), line));
            }
        }
    }
    for evidence in edges.values_mut() {
        evidence.sort();
        evidence.dedup();
    }
    let mut all = modules.clone();
    all.insert(root_name.to_owned());
    strongly_connected(&all, &edges)
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|component| {
            let inside: BTreeMap<(String, String), Evidence> = edges
                .iter()
                .filter(|((a, b), _)| component.contains(a) && component.contains(b))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Cycle {
                modules: component.into_iter().collect(),
                edges: inside,
            }
        })
        .collect()
}

/// The strongly connected components of the graph (Tarjan's algorithm).
fn strongly_connected(
    nodes: &BTreeSet<String>,
    edges: &BTreeMap<(String, String), Evidence>,
) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        edges: &'a BTreeMap<(String, String), Evidence>,
        index: BTreeMap<String, usize>,
        low: BTreeMap<String, usize>,
        stack: Vec<String>,
        on_stack: BTreeSet<String>,
        next: usize,
        out: Vec<BTreeSet<String>>,
    }
    fn visit(s: &mut State<'_>, v: &str) {
        s.index.insert(v.to_owned(), s.next);
        s.low.insert(v.to_owned(), s.next);
        s.next += 1;
        s.stack.push(v.to_owned());
        s.on_stack.insert(v.to_owned());
        let succ: Vec<String> = s
            .edges
            .keys()
            .filter(|(a, _)| a == v)
            .map(|(_, b)| b.clone())
            .collect();
        for w in succ {
            if !s.index.contains_key(&w) {
                visit(s, &w);
                let lw = s.low[&w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on_stack.contains(&w) {
                let iw = s.index[&w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = BTreeSet::new();
            while let Some(w) = s.stack.pop() {
                s.on_stack.remove(&w);
                let done = w == v;
                component.insert(w);
                if done {
                    break;
                }
            }
            s.out.push(component);
        }
    }
    let mut all: BTreeSet<String> = nodes.clone();
    for (a, b) in edges.keys() {
        all.insert(a.clone());
        all.insert(b.clone());
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        out: Vec::new(),
    };
    for v in &all {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    s.out
}

// ---- the workspace -------------------------------------------------------------------------

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The workspace's member folders (`members = [...]` of the root `Cargo.toml`).
fn members(root: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let start = manifest.find("members").expect("workspace members");
    let list = &manifest[start..];
    let list = &list[list.find('[').unwrap() + 1..list.find(']').unwrap()];
    list.split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty())
        .collect()
}

/// Every `.rs` file under `dir` (paths relative to `dir`), skipping `target/`, hidden folders and,
/// when `skip_test_dirs`, `tests/`, `benches/` and `fixtures/` folders.
fn rust_files(dir: &Path, skip_test_dirs: bool) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![PathBuf::new()];
    while let Some(rel) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(dir.join(&rel)) else {
            continue;
        };
        for entry in entries {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = rel.join(&name);
            if entry.file_type().unwrap().is_dir() {
                let skipped = name.starts_with('.')
                    || name == "target"
                    || (skip_test_dirs
                        && ["tests", "benches", "fixtures"].contains(&name.as_str()));
                if !skipped {
                    todo.push(path);
                }
            } else if name.ends_with(".rs") {
                found.push(path);
            }
        }
    }
    found.sort();
    found
}

fn is_generated(text: &str) -> bool {
    text.lines()
        .next()
        .is_some_and(|l| l.contains("@generated"))
}

#[test]
fn no_new_cycles_between_top_level_modules() {
    let root = workspace_root();
    let mut found: BTreeMap<(String, Vec<String>), String> = BTreeMap::new();
    for member in members(&root) {
        let src = root.join(&member).join("src");
        let files: Vec<(PathBuf, String)> = rust_files(&src, false)
            .into_iter()
            .map(|p| {
                let text = std::fs::read_to_string(src.join(&p)).unwrap();
                (p, text)
            })
            .collect();
        for c in cycles(&files) {
            let text = c.describe(&member);
            found.insert((member.clone(), c.modules), text);
        }
    }
    let known: BTreeSet<(String, Vec<String>)> = KNOWN_CYCLES
        .iter()
        .map(|(k, m)| ((*k).to_owned(), m.iter().map(|s| (*s).to_owned()).collect()))
        .collect();
    let mut problems = Vec::new();
    for (key, text) in &found {
        if !known.contains(key) {
            problems.push(format!("new {text}"));
        }
    }
    for (krate, modules) in &known {
        if !found.contains_key(&(krate.clone(), modules.clone())) {
            problems.push(format!(
                "{krate}: the listed cycle between {} no longer occurs: update KNOWN_CYCLES in \
                 xtask/tests/layout.rs (remove it, or list the smaller cycle found above)",
                modules.join(", ")
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_new_source_file_over_the_line_limit() {
    let root = workspace_root();
    let mut long = BTreeMap::new();
    for rel in rust_files(&root, true) {
        let text = std::fs::read_to_string(root.join(&rel)).unwrap();
        if is_generated(&text) {
            continue;
        }
        let n = counted_lines(&text);
        if n > MAX_LINES {
            long.insert(rel.to_string_lossy().replace('\\', "/"), n);
        }
    }
    let mut problems = Vec::new();
    for (file, n) in &long {
        if !KNOWN_LONG_FILES.contains(&file.as_str()) {
            problems.push(format!(
                "{file}: {n} lines without its test module, over {MAX_LINES}: split it by responsibility"
            ));
        }
    }
    for file in KNOWN_LONG_FILES {
        if !long.contains_key(*file) {
            problems.push(format!(
                "{file} is listed as over {MAX_LINES} lines but is not (any more): remove it from \
                 KNOWN_LONG_FILES in xtask/tests/layout.rs"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// How many times the code of `src` (comments and strings aside) names the lint `unsafe_code`
/// and the keyword `unsafe`.
fn unsafe_words(src: &str) -> (usize, usize) {
    let chars: Vec<char> = code_only(src).chars().collect();
    let words = words_of(&chars);
    let count = |name: &str| words.iter().filter(|(w, _)| w == name).count();
    (count("unsafe_code"), count("unsafe"))
}

#[test]
fn unsafe_code_only_where_allowed() {
    let root = workspace_root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let mut problems = Vec::new();
    if !manifest.contains("unsafe_code = \"deny\"")
        && !manifest.contains("unsafe_code = \"forbid\"")
    {
        problems
            .push("Cargo.toml: [workspace.lints.rust] must deny (or forbid) unsafe_code".into());
    }
    for member in members(&root) {
        let text = std::fs::read_to_string(root.join(&member).join("Cargo.toml")).unwrap();
        let takes_workspace_lints = text
            .split("[lints]")
            .nth(1)
            .and_then(|rest| rest.lines().map(str::trim).find(|l| !l.is_empty()))
            == Some("workspace = true");
        if !takes_workspace_lints {
            problems.push(format!(
                "{member}/Cargo.toml: no `[lints] workspace = true`: the crate would not deny unsafe_code"
            ));
        }
    }
    let mut found = BTreeMap::new();
    for rel in rust_files(&root, false) {
        let text = std::fs::read_to_string(root.join(&rel)).unwrap();
        let words = unsafe_words(&text);
        if words != (0, 0) {
            found.insert(rel.to_string_lossy().replace('\\', "/"), words);
        }
    }
    for (file, (lint, keyword)) in &found {
        let allowed = UNSAFE_ALLOWED.iter().find(|(f, _, _)| f == file);
        if allowed.map(|(_, l, k)| (*l, *k)) != Some((*lint, *keyword)) {
            problems.push(format!(
                "{file}: names the lint unsafe_code {lint} times and the keyword unsafe {keyword} \
                 times; allowed: {}",
                allowed.map_or("none".to_owned(), |(_, l, k)| format!("{l} and {k}"))
            ));
        }
    }
    for (file, _, _) in UNSAFE_ALLOWED {
        if !found.contains_key(*file) {
            problems.push(format!(
                "{file} is listed in UNSAFE_ALLOWED but has no unsafe code (any more): remove it"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

// ---- the checks themselves, on small examples ----------------------------------------------

fn krate(files: &[(&str, &str)]) -> Vec<(PathBuf, String)> {
    files
        .iter()
        .map(|(p, t)| (PathBuf::from(p), (*t).to_owned()))
        .collect()
}

#[test]
fn a_planted_cycle_is_caught_with_its_lines() {
    let files = krate(&[
        ("lib.rs", "pub mod a;\npub mod b;\npub mod c;\n"),
        ("a.rs", "use crate::b::Thing;\n"),
        (
            "b.rs",
            "pub struct Thing;\n\npub fn f() {\n    crate::a::g();\n}\n",
        ),
        ("c.rs", "use crate::a::G;\n"),
    ]);
    let found = cycles(&files);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].modules, ["a", "b"]);
    let text = found[0].describe("demo");
    assert!(text.contains("a -> b (src/a.rs:1)"), "{text}");
    assert!(text.contains("b -> a (src/b.rs:4)"), "{text}");
    assert!(
        !text.contains("c ->"),
        "c only depends on the cycle: {text}"
    );
}

#[test]
fn no_cycle_in_a_layered_crate() {
    let files = krate(&[
        ("lib.rs", "mod a;\nmod b;\npub use a::X;\n"),
        ("a/mod.rs", "mod inner;\nuse crate::b::Y;\n"),
        (
            "a/inner.rs",
            "use crate::b::{Y, Z};\nuse crate::a::other;\n",
        ),
        ("b.rs", "pub struct Y;\n"),
    ]);
    assert!(cycles(&files).is_empty());
}

#[test]
fn a_cycle_through_the_crate_root_and_a_folder_module() {
    // The root calls the emitter (a path from the root starts with the module's name), the
    // emitter uses an item the root defines: emit <-> lib.
    let files = krate(&[
        (
            "lib.rs",
            "mod emit;\npub struct Options;\npub fn run() -> O {\n    O { f: emit::docs::go() }\n}\n",
        ),
        ("emit/mod.rs", "pub mod docs;\n"),
        ("emit/docs.rs", "use crate::Options;\npub fn go() {}\n"),
    ]);
    let found = cycles(&files);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].modules, ["emit", "lib"]);
    let text = found[0].describe("demo");
    assert!(text.contains("lib -> emit (src/lib.rs:4)"), "{text}");
    assert!(text.contains("emit -> lib (src/emit/docs.rs:1)"), "{text}");
    // A name the root re-exports belongs to the module it comes from: no cycle through the root.
    let files = krate(&[
        (
            "lib.rs",
            "mod error;\nmod emit;\npub use error::{Error, Result as R};\npub use emit::*;\npub fn run() { emit::go() }\n",
        ),
        ("error.rs", "pub struct Error;\n"),
        ("emit.rs", "use crate::{Error, R};\npub fn go() {}\n"),
    ]);
    assert!(cycles(&files).is_empty(), "{:?}", cycles(&files));
    // A name only a glob re-export can give comes from the globbed module.
    let files = krate(&[
        (
            "lib.rs",
            "mod generated;\nmod problem;\npub use generated::*;\n",
        ),
        ("generated.rs", "use crate::problem::P;\npub enum Code {}\n"),
        ("problem.rs", "use crate::Code;\npub struct P;\n"),
    ]);
    let found = cycles(&files);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].modules, ["generated", "problem"]);
}

#[test]
fn a_three_module_cycle_is_one_component() {
    let files = krate(&[
        ("lib.rs", "mod profile; mod recipes; mod digest;\n"),
        ("profile.rs", "use crate::recipes::R;\n"),
        (
            "recipes.rs",
            "use crate::{\n    digest::D,\n    profile,\n};\n",
        ),
        ("digest.rs", "fn f() -> crate::profile::P { todo!() }\n"),
    ]);
    let found = cycles(&files);
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].modules, ["digest", "profile", "recipes"]);
    let text = found[0].describe("demo");
    assert!(
        text.contains("recipes -> digest (src/recipes.rs:2)"),
        "{text}"
    );
    assert!(
        text.contains("recipes -> profile (src/recipes.rs:3)"),
        "{text}"
    );
}

#[test]
fn comments_strings_macros_and_tests_are_not_references() {
    let files = krate(&[
        ("lib.rs", "mod a;\nmod b;\n"),
        ("a.rs", "use crate::b::Y;\n"),
        (
            "b.rs",
            concat!(
                "// crate::a::x in a comment\n",
                "/* crate::a /* nested */ crate::a */\n",
                "/// [`crate::a::X`] in a doc link\n",
                "const S: &str = \"crate::a::x\";\n",
                "const R: &str = r#\"crate::a \"x\" \"#;\n",
                "const C: char = '\"';\n",
                "fn f<'a>(x: &'a str) -> &'a str { x }\n",
                "macro_rules! m { () => { $crate::a::x() } }\n",
                "pub(crate) fn g() {}\n",
                "#[cfg(test)]\nmod tests {\n    use crate::a::x;\n}\n",
            ),
        ),
    ]);
    assert!(cycles(&files).is_empty(), "{:?}", cycles(&files));
    // The same reference in code is one.
    let mut with_ref = files.clone();
    with_ref[2].1.push_str("fn h() { crate::a::x() }\n");
    assert_eq!(cycles(&with_ref).len(), 1);
}

#[test]
fn bin_folder_files_are_other_crates() {
    let files = krate(&[
        ("main.rs", "mod a;\nfn main() {}\n"),
        ("a.rs", "use crate::b;\n"),
        ("bin/tool.rs", "use crate::a;\n"),
    ]);
    assert_eq!(module_of(Path::new("bin/tool.rs")), None);
    // a refers to `crate::b`, which is no module: an item of the root (main).
    assert!(cycles(&files).is_empty());
}

#[test]
fn the_test_module_is_not_counted() {
    let mut src = String::from("//! A module.\n\npub fn f() -> u8 {\n    1\n}\n");
    src.push_str("\n#[cfg(test)]\n#[allow(clippy::unwrap_used)]\nmod tests {\n");
    src.push_str("    const OPEN: &str = \"}\";\n    fn brace() -> char { '}' }\n");
    src.push_str("    #[test]\n    fn t() { assert_eq!(super::f(), 1) }\n}\n");
    assert_eq!(src.lines().count(), 14);
    // 6 lines of code (the blank line before the attribute included); the 8 of the test module
    // (its attributes through its closing brace) are not counted.
    assert_eq!(counted_lines(&src), 6);
    // A test module declared as a file, or cfg(test) on something else, is code like any other.
    let other = "#[cfg(test)]\nmod tests;\n#[cfg(test)]\nfn helper() {\n}\n";
    assert_eq!(counted_lines(other), 5);
}

#[test]
fn the_line_limit_catches_a_long_file() {
    let long: String = (0..=MAX_LINES)
        .map(|i| format!("const C{i}: u32 = {i};\n"))
        .collect();
    assert_eq!(counted_lines(&long), MAX_LINES + 1);
    assert!(!is_generated(&long));
    let generated = format!("// @generated by `cargo xtask codegen`. Do not edit.\n{long}");
    assert!(is_generated(&generated));
}

#[test]
fn unsafe_is_counted_in_code_not_in_comments_or_strings() {
    let src =
        "// unsafe { }\n#[allow(unsafe_code)]\nfn f() { let _ = \"unsafe\"; unsafe { g() } }\n\
               /// unsafe_code\nfn not_unsafe_at_all() {}\n";
    assert_eq!(unsafe_words(src), (1, 1));
    assert_eq!(unsafe_words("#![cfg_attr(x, allow(unsafe_code))]"), (1, 0));
    assert_eq!(unsafe_words("unsafe impl Send for X {}"), (0, 1));
}
