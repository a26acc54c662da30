//! `agh direct-id`, `route-token`, `subject`, `digest`: the value alone on one line.
#![allow(clippy::unwrap_used)]

mod common;

fn agh(args: &[&str], stdin: &str) -> (i32, String, String) {
    common::run(common::agh().args(args), stdin)
}

#[test]
fn identities() {
    let (code, out, _) = agh(
        &[
            "direct-id",
            "ws_alpha",
            "builders",
            "patch-worker.session-19",
            "ops-coordinator.session-42",
        ],
        "",
    );
    assert_eq!(
        (code, out.as_str()),
        (0, "direct_a610973e3c0d915853982f4bfe1534e8\n")
    );
    let (_, out, _) = agh(&["route-token", "reviewer.sess-xyz"], "");
    assert_eq!(out, "790dd5515558f7784877abcbca51c5ba\n");
    let (_, out, _) = agh(&["subject", "ws_alpha", "builders"], "");
    assert_eq!(out, "agh.network.v0.ws_alpha.builders.broadcast\n");
    let (_, out, _) = agh(&["subject", "ws_alpha", "builders", "echo.demo"], "");
    assert_eq!(
        out,
        "agh.network.v0.ws_alpha.builders.peer.96b61db360703e491489caf5fbbd45bc\n"
    );
    let (code, out, err) = agh(&["direct-id", "ws.alpha", "builders", "a", "b"], "");
    assert_eq!((code, out.as_str()), (1, ""));
    assert!(
        err.contains("malformed") && err.contains("workspace_id"),
        "{err}"
    );
    let (code, _, _) = agh(&["route-token"], "");
    assert_eq!(code, 2);
}

#[test]
fn digest_and_verify() {
    let doc = r#"{"id":"a","summary":"b","outcome":"c"}"#;
    let (code, out, _) = agh(&["digest", "-"], doc);
    let want = "sha256:b809f5fa5b3dad8297c249055ae9d8fa8de86e71ad676db4c418cced1ade2bfd\n";
    assert_eq!((code, out.as_str()), (0, want));
    let with = format!(
        r#"{{"id":"a","summary":"b","outcome":"c","digest":"{}"}}"#,
        want.trim()
    );
    let (code, _, _) = agh(&["digest", "--verify"], &with);
    assert_eq!(code, 0);
    let tampered = with.replace(r#""b""#, r#""B""#);
    let (code, _, err) = agh(&["digest", "--verify", "-"], &tampered);
    assert_eq!(code, 1);
    assert!(err.contains("verification_failed at /digest"), "{err}");
    let (code, _, err) = agh(
        &["digest"],
        r#"{"id":"a","summary":"b","outcome":"c","requirements":[" "]}"#,
    );
    assert_eq!(code, 1);
    assert!(err.contains("/requirements/0"), "{err}");
    let (code, _, _) = agh(&["digest", "/no/such.json"], "");
    assert_eq!(code, 2);
}
