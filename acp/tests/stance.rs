//! ACP's stances on `x-agh-envelope` (issue 30 item 3): integers written as digits only
//! (`"integers": "digits"`) and at most 64 levels of nesting (`"max_depth": 64`).
#![allow(clippy::unwrap_used)]

const PING: &str = r#"{"v":1,"id":"00000001-0000-4000-8000-000000001eef","from":"a1b2c3d4e5f60718","to":"0123456789abcdef","ts":1771108000000,"kind":"ping","ref":null}"#;

#[test]
fn acp_declares_64_levels() {
    assert_eq!(agh_acp::SPEC.max_depth, 64);
    assert_eq!(agh_acp::options(0).max_depth, 64);
}

#[test]
fn an_integer_written_otherwise_is_refused() {
    let options = agh_acp::options(1_771_108_000);
    assert!(agh_acp::parse(PING.as_bytes(), &options).is_ok());
    for spelled in ["1771108000000.0", "1.771108e12", "177110800000e1"] {
        let text = PING.replace("1771108000000", spelled);
        let refused = agh_acp::parse(text.as_bytes(), &options).unwrap_err();
        assert_eq!(refused.pointer, "/ts", "{spelled}");
        assert_eq!(
            agh_acp::explain(text.as_bytes(), &options)[0].pointer,
            "/ts"
        );
    }
}

#[test]
fn nesting_beyond_64_levels_is_refused() {
    // The envelope is level 1, `payload` 2, `context` 3, the arrays in its member `a` 4 on.
    let options = agh_acp::options(1_771_108_000);
    for (levels, ok) in [(61, true), (62, false)] {
        let context = format!(r#"{{"a":{}0{}}}"#, "[".repeat(levels), "]".repeat(levels));
        let text = PING
            .replace("\"ping\",\"ref\":null", "\"delegate\",\"ref\":null")
            .replace(
                "}",
                &format!(r#","payload":{{"task":"t","context":{context}}}}}"#),
            );
        let verdict = agh_acp::parse(text.as_bytes(), &options);
        assert_eq!(verdict.is_ok(), ok, "{levels}: {verdict:?}");
        assert_eq!(agh_acp::explain(text.as_bytes(), &options).is_empty(), ok);
    }
}
