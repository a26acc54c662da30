//! The schema patterns that codegen compiles to code (`generated::checks::COMPILED_PATTERNS`)
//! agree with the regex engine on random and edge-case strings.

use agh_protocol::generated::checks::COMPILED_PATTERNS;
use proptest::prelude::*;

/// The regex engine as the generated validators run it: ECMA-262 with the Unicode flag.
fn regex_says(pattern: &str, s: &str) -> bool {
    regress::Regex::with_flags(pattern, "u")
        .expect("the schema pattern compiles")
        .find(s)
        .is_some()
}

#[test]
fn every_schema_pattern_is_compiled() {
    // The six identifier grammars (the Peer ID with its verified form, an alternation split
    // at `@`), the verified identity alone, non-blank text, one-line non-blank text (summary),
    // and the trust proof's base64url public key and signature.
    assert_eq!(COMPILED_PATTERNS.len(), 11);
}

#[test]
fn edge_cases_agree() {
    let long = |c: char, n: usize| c.to_string().repeat(n);
    let mut cases = vec![
        String::new(),
        "a".into(),
        "A".into(),
        "0".into(),
        "-a".into(),
        "a-".into(),
        "a.b".into(),
        "direct_".into(),
        "work_".into(),
        "work_x".into(),
        "sha256:".into(),
        " ".into(),
        "\u{0}".into(),
        "a\u{7f}".into(),
        "é".into(),
        "😀".into(),
        "ws.alpha".into(),
        "ws>".into(),
        "ws*".into(),
        format!("direct_{}", long('a', 32)),
        format!("direct_{}", long('a', 31)),
        format!("direct_{}", long('a', 33)),
        format!("sha256:{}", long('f', 64)),
        format!("sha256:{}", long('F', 64)),
        format!("a{}", long('b', 63)),
        format!("a{}", long('b', 64)),
        format!("a{}", long('b', 127)),
        format!("a{}", long('b', 128)),
        format!("work_{}", long('Z', 64)),
        format!("work_{}", long('Z', 65)),
    ];
    cases.push("direct_0123456789abcdef0123456789abcdef".into());
    // Verified identities (nickname@fingerprint) and the proof's base64url members.
    let fp = "0123456789abcdef0123456789abcdef";
    for id in [
        format!("ops@{fp}"),
        format!("_-@{fp}"),
        format!("{}@{fp}", long('a', 32)),
        format!("{}@{fp}", long('a', 33)),
        format!("@{fp}"),
        format!("ops@{}", &fp[1..]),
        format!("ops@{fp}0"),
        format!("ops@@{fp}"),
        format!("ops@{}", fp.to_uppercase()),
        format!("o.ps@{fp}"),
        "ops@".into(),
    ] {
        cases.push(id);
    }
    for (n, last) in [
        (42, "A"),
        (42, "B"),
        (42, "w"),
        (41, "A"),
        (43, "A"),
        (85, "Q"),
        (85, "R"),
        (86, "A"),
    ] {
        cases.push(format!("{}{last}", long('_', n)));
        cases.push(format!("{}{last}=", long('-', n)));
    }
    // White space as ECMA-262 `\s` counts it, alone and around text.
    for c in [
        '\t', '\n', '\u{b}', '\u{c}', '\r', ' ', '\u{85}', '\u{a0}', '\u{1680}', '\u{180e}',
        '\u{2000}', '\u{200a}', '\u{200b}', '\u{2028}', '\u{2029}', '\u{202f}', '\u{205f}',
        '\u{3000}', '\u{feff}', '\u{1c}', '\u{1f}',
    ] {
        cases.push(c.to_string());
        cases.push(format!("{c}{c}x{c}"));
        cases.push(format!("x{c}"));
        cases.push(format!("{c}\u{feff}"));
    }
    for (pattern, matcher) in COMPILED_PATTERNS {
        for s in &cases {
            assert_eq!(matcher(s), regex_says(pattern, s), "{pattern} on {s:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn random_strings_agree(
        s in "(direct_|work_|sha256:|ws|)[a-zA-Z0-9._\\- >*@\\x00-\\x1f\\x7fé😀\u{85}\u{a0}\u{1680}\u{2000}-\u{200b}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}]{0,140}",
    ) {
        for (pattern, matcher) in COMPILED_PATTERNS {
            prop_assert_eq!(matcher(&s), regex_says(pattern, &s), "{} on {:?}", pattern, s);
        }
    }
}
