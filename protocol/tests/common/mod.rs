//! Helpers shared by the integration tests.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::PathBuf;

use serde_json::Value;

/// `../shared/seeds/` beside the repository.
pub fn seeds_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/seeds")
}

/// This crate's `tests/fixtures/`.
pub fn fixtures_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// The JSON objects embedded in `text`: every balanced `{...}` that starts a line, parsed.
pub fn json_objects(text: &str) -> Vec<Value> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let line_start = i == 0 || bytes[i - 1] == b'\n';
        if !(line_start && bytes[i] == b'{') {
            i += 1;
            continue;
        }
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        let mut end = None;
        for (j, &b) in bytes.iter().enumerate().skip(i) {
            if in_string {
                match (escaped, b) {
                    (true, _) => escaped = false,
                    (false, b'\\') => escaped = true,
                    (false, b'"') => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(j + 1);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else { break };
        if let Ok(v) = serde_json::from_str::<Value>(&text[i..end]) {
            out.push(v);
        }
        i = end;
    }
    out
}

/// Every envelope example of the seed pages (objects with a `protocol` member), with its file name.
pub fn seed_envelope_examples() -> Vec<(String, Value)> {
    let mut names: Vec<_> = std::fs::read_dir(seeds_dir())
        .expect("../shared/seeds beside the repository")
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".txt"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let text = std::fs::read_to_string(seeds_dir().join(&name)).unwrap();
        for v in json_objects(&text) {
            if v.get("protocol").is_some() {
                out.push((name.clone(), v));
            }
        }
    }
    out
}
