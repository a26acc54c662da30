//! ACP's schema patterns that codegen compiles to code (`generated::checks::COMPILED_PATTERNS`)
//! agree with the regex engine (`regress`, ECMA-262 with the Unicode flag, as the generated
//! validators ran them before) on edge cases and random strings, ASCII and not: the byte-level
//! matchers (ASCII bytes by table, characters from U+0080 up decoded) and the dot-separated
//! names split at their separator.

use agh_acp::generated::checks::COMPILED_PATTERNS;
use proptest::prelude::*;

/// The regex engine's matcher of each compiled pattern, built once.
static REGEXES: std::sync::LazyLock<Vec<regress::Regex>> = std::sync::LazyLock::new(|| {
    COMPILED_PATTERNS
        .iter()
        .map(|(p, _)| regress::Regex::with_flags(p, "u").expect("the schema pattern compiles"))
        .collect()
});

fn agree(s: &str) {
    for ((pattern, matcher), regex) in COMPILED_PATTERNS.iter().zip(REGEXES.iter()) {
        assert_eq!(matcher(s), regex.find(s).is_some(), "{pattern} on {s:?}");
    }
}

/// Every `pattern` string anywhere in the files under `dir`.
fn schema_patterns(dir: &std::path::Path, out: &mut std::collections::BTreeSet<String>) {
    fn walk(v: &serde_json::Value, out: &mut std::collections::BTreeSet<String>) {
        match v {
            serde_json::Value::Object(m) => {
                for (k, v) in m {
                    match (k.as_str(), v) {
                        ("pattern", serde_json::Value::String(p)) => {
                            out.insert(p.clone());
                        }
                        _ => walk(v, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            _ => {}
        }
    }
    for entry in std::fs::read_dir(dir).expect("the schema folder") {
        let path = entry.expect("an entry").path();
        if path.is_dir() {
            schema_patterns(&path, out);
        } else if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read_to_string(&path).expect("a schema file");
            walk(&serde_json::from_str(&text).expect("JSON"), out);
        }
    }
}

#[test]
fn every_acp_pattern_is_compiled() {
    // Every pattern the ACP schemas write is matched by generated code, not the regex engine.
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../schemas/acp-v0.2");
    let mut patterns = std::collections::BTreeSet::new();
    schema_patterns(&dir, &mut patterns);
    let compiled: std::collections::BTreeSet<String> = COMPILED_PATTERNS
        .iter()
        .map(|(p, _)| p.to_string())
        .collect();
    assert!(
        !patterns.is_empty(),
        "no pattern found under {}",
        dir.display()
    );
    assert_eq!(patterns, compiled);
}

#[test]
fn edge_cases_agree() {
    let mut cases: Vec<String> = [
        "",
        "a",
        ".",
        "a.",
        ".a",
        "a..b",
        "a.b",
        "a.b.c",
        "0.9",
        "a-b_c.d-e",
        "a.-b",
        "a._",
        "A",
        "a.B",
        "ab.c_d",
        " ",
        "\u{85}",
        "x\u{85}",
        "é",
        "a.é",
        "😀",
        "x\ny",
        "x\r",
        "\u{2028}x",
        "x\u{2029}",
        "\u{3000}",
        "\u{3000}a",
        "a\u{3000}",
        "\t\t",
        "\u{feff}",
        "\u{180e}",
        "0123456789abcdef",
        "0123456789abcdeF",
        "01234567-89ab-cdef-0123-456789abcdef",
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect();
    // Long ASCII runs with one character of each kind at the start, in the middle, at the end:
    // the second run of the one-line matcher stops at it.
    for c in [
        '\n', '\r', '\u{85}', '\u{2028}', '\u{2029}', '\u{a0}', 'é', '😀', ' ', '\t', '\u{b}',
    ] {
        let run = "q".repeat(300);
        let blank = " ".repeat(300);
        for s in [
            format!("{c}{run}"),
            format!("{run}{c}{run}"),
            format!("{run}{c}"),
            format!("{blank}{c}{blank}"),
            format!("{c}{blank}"),
        ] {
            cases.push(s);
        }
    }
    // The stop character at every offset of the 8-byte words the one-line matcher skips.
    for c in ['\n', '\r', '\u{85}', '\u{2028}', 'é', '\u{7f}', '\u{b}'] {
        for k in 0..20 {
            cases.push(format!("{}{c}{}", "q".repeat(k), "q".repeat(k % 9)));
            cases.push(format!("x{}{c}", " ".repeat(k)));
        }
    }
    for s in &cases {
        agree(s);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn random_strings_agree(
        s in "[a-zA-Z0-9._\\- \\x00-\\x1f\\x7f\u{80}-\u{ff}é😀\u{85}\u{a0}\u{1680}\u{180e}\u{2000}-\u{200b}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}]{0,80}",
    ) {
        for ((pattern, matcher), regex) in COMPILED_PATTERNS.iter().zip(REGEXES.iter()) {
            prop_assert_eq!(matcher(&s), regex.find(&s).is_some(), "{} on {:?}", pattern, s);
        }
    }

    #[test]
    fn names_and_lines_agree(
        s in "([a-z0-9_\\-]{0,4}\\.?){0,6}|[a-z]{0,40}[ \\n\\r\u{85}\u{2028}é😀\u{3000}]?[a-z ]{0,40}",
    ) {
        for ((pattern, matcher), regex) in COMPILED_PATTERNS.iter().zip(REGEXES.iter()) {
            prop_assert_eq!(matcher(&s), regex.find(&s).is_some(), "{} on {:?}", pattern, s);
        }
    }
}
