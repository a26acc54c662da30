//! Identities byte-exact with the NOTES section 6 recipes. Expected direct ids were computed with
//! Python's hashlib from the recipe text, independently of this crate.
#![allow(clippy::unwrap_used)]

use agh_protocol::identity::{
    broadcast_subject, direct_id, is_direct_room_of, peer_subject, route_token, IdentityError,
};
use agh_protocol::ReasonCode;

const OPS: &str = "ops-coordinator.session-42";
const PATCH: &str = "patch-worker.session-19";

#[test]
fn route_tokens_match_the_worked_examples() {
    assert_eq!(
        route_token("reviewer.sess-xyz"),
        "790dd5515558f7784877abcbca51c5ba"
    );
    assert_eq!(route_token("echo.demo"), "96b61db360703e491489caf5fbbd45bc");
}

#[test]
fn direct_id_is_order_independent_and_scoped() {
    let id = direct_id("ws_alpha", "builders", OPS, PATCH).unwrap();
    assert_eq!(id, "direct_a610973e3c0d915853982f4bfe1534e8");
    assert_eq!(direct_id("ws_alpha", "builders", PATCH, OPS).unwrap(), id);
    assert_eq!(
        direct_id("ws_beta", "builders", OPS, PATCH).unwrap(),
        "direct_06fa087b47db5ba5c23122963ddfe957"
    );
    // Bytewise order: "a" < "a.b".
    assert_eq!(
        direct_id("Acme-WS", "c", "a.b", "a").unwrap(),
        "direct_2a9e50ec21692ca1f588e4e6474c0d8a"
    );
    // The seed pages' direct_id is illustrative, not from the recipe (NOTES 6).
    assert_ne!(id, "direct_99401d24bee62651d189e5a561785466");
}

#[test]
fn direct_room_membership() {
    let id = direct_id("ws_alpha", "builders", OPS, PATCH).unwrap();
    assert!(is_direct_room_of("ws_alpha", "builders", &id, PATCH, OPS));
    assert!(!is_direct_room_of(
        "ws_alpha",
        "builders",
        &id,
        PATCH,
        "someone-else"
    ));
    assert!(!is_direct_room_of("ws_alpha", "other", &id, PATCH, OPS));
    assert!(!is_direct_room_of(
        "ws_alpha",
        "builders",
        "direct_XYZ",
        PATCH,
        OPS
    ));
}

#[test]
fn bad_inputs_name_the_argument_and_the_schema_rule() {
    let err = direct_id("ws.alpha", "builders", OPS, PATCH).unwrap_err();
    match &err {
        IdentityError::Grammar {
            argument,
            value,
            message,
        } => {
            assert_eq!(*argument, "workspace_id");
            assert_eq!(value, "ws.alpha");
            assert!(message.contains("does not match"), "{message}");
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(err.reason_code(), ReasonCode::Malformed);
    let err = direct_id("ws", "Builders", OPS, PATCH).unwrap_err();
    assert!(err.to_string().starts_with("channel:"), "{err}");
    let err = direct_id("ws", "c", "Bad Peer", PATCH).unwrap_err();
    assert!(err.to_string().starts_with("peer_a:"), "{err}");
    assert_eq!(
        direct_id("ws", "c", OPS, OPS).unwrap_err(),
        IdentityError::SamePeer { peer: OPS.into() }
    );
}

#[test]
fn subjects() {
    assert_eq!(
        broadcast_subject("ws_alpha", "builders").unwrap(),
        "agh.network.v0.ws_alpha.builders.broadcast"
    );
    assert_eq!(
        peer_subject("ws_alpha", "builders", "echo.demo").unwrap(),
        "agh.network.v0.ws_alpha.builders.peer.96b61db360703e491489caf5fbbd45bc"
    );
    // A workspace id with a `.` would break the subject's tokens.
    assert!(broadcast_subject("ws.alpha", "builders").is_err());
    assert!(peer_subject("ws", "c", "Echo").is_err());
}
