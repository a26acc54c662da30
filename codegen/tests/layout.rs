//! The crate's layout holds: no cycle between its top-level modules (read from the `crate::`
//! paths each file names), nothing below the crate root imports the root (`lib.rs` is the
//! pipeline; emitters and the model import the modules they need), and no hand-written source
//! file is over 1,000 lines, not counting its `#[cfg(test)]` module.

#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 1000;

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, relative to it, in path order.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// The top-level module a file belongs to (`model/kinds.rs`: `model`; `lib.rs`: the root, "").
fn top_module(rel: &Path) -> String {
    let first = rel
        .components()
        .next()
        .unwrap()
        .as_os_str()
        .to_string_lossy();
    match first.strip_suffix(".rs") {
        Some("lib") => String::new(),
        Some(stem) => stem.to_owned(),
        None => first.into_owned(),
    }
}

/// The text of a file before its `#[cfg(test)]` module.
fn without_tests(text: &str) -> &str {
    text.find("\n#[cfg(test)]\nmod ")
        .map_or(text, |i| &text[..=i])
}

/// `crate::NAME` paths a text names, including those inside `use crate::{a, b}` groups.
fn crate_paths(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("crate::") {
        let after = &rest[i + "crate::".len()..];
        if let Some(group) = after.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !name.is_empty() {
                    out.insert(name);
                }
            }
        } else {
            let name: String = after
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() {
                out.insert(name);
            }
        }
        rest = after;
    }
    out
}

#[test]
fn top_level_modules_have_no_cycles_and_do_not_import_the_root() {
    let files = rust_files(&src());
    let modules: BTreeSet<String> = files
        .iter()
        .map(|f| top_module(f))
        .filter(|m| !m.is_empty())
        .collect();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut root_imports = Vec::new();
    for rel in &files {
        let from = top_module(rel);
        if from.is_empty() {
            continue;
        }
        let text = std::fs::read_to_string(src().join(rel)).unwrap();
        for name in crate_paths(without_tests(&text)) {
            if modules.contains(&name) {
                if name != from {
                    edges.entry(from.clone()).or_default().insert(name);
                }
            } else {
                root_imports.push(format!("{}: crate::{name}", rel.display()));
            }
        }
    }
    assert!(
        root_imports.is_empty(),
        "these files import the crate root (lib.rs), not a module: {root_imports:?}"
    );
    // A cycle: a module reachable from itself.
    for start in &modules {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<Vec<String>> = vec![vec![start.clone()]];
        while let Some(path) = stack.pop() {
            let last = path.last().unwrap();
            for next in edges.get(last).into_iter().flatten() {
                assert!(
                    next != start,
                    "module cycle: {} -> {next}",
                    path.join(" -> ")
                );
                if seen.insert(next.clone()) {
                    let mut p = path.clone();
                    p.push(next.clone());
                    stack.push(p);
                }
            }
        }
    }
    // The flow's order, as ARCHITECTURE.md draws it: emit reads model and schema, model reads
    // schema; never the other way round.
    for (from, to) in [("schema", "model"), ("schema", "emit"), ("model", "emit")] {
        assert!(
            !edges.get(from).is_some_and(|e| e.contains(to)),
            "{from} imports {to}: {:?}",
            edges[from]
        );
    }
}

#[test]
fn no_source_file_is_over_a_thousand_lines_besides_its_tests() {
    let long: Vec<String> = rust_files(&src())
        .into_iter()
        .filter_map(|rel| {
            let text = std::fs::read_to_string(src().join(&rel)).unwrap();
            let n = without_tests(&text).lines().count();
            (n > MAX_LINES).then(|| format!("{} ({n} lines)", rel.display()))
        })
        .collect();
    assert!(
        long.is_empty(),
        "split these by responsibility (at most {MAX_LINES} lines besides the tests): {long:?}"
    );
}

#[test]
fn the_checks_see_what_they_check() {
    assert_eq!(top_module(Path::new("model/kinds.rs")), "model");
    assert_eq!(top_module(Path::new("error.rs")), "error");
    assert_eq!(top_module(Path::new("lib.rs")), "");
    assert_eq!(
        crate_paths("use crate::error::{Error, Result};\nuse crate::{emit, model::Model};"),
        ["emit", "error", "model"].map(String::from).into()
    );
    assert_eq!(
        without_tests("fn a() {}\n#[cfg(test)]\nmod tests {}\n"),
        "fn a() {}\n"
    );
}
