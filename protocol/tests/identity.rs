//! Identities byte-exact with the NOTES section 6 recipes. Expected direct ids and route tokens
//! were computed with Python's hashlib from the recipe text, independently of this crate; the two
//! route tokens are the worked examples of NOTES 6.
#![allow(clippy::unwrap_used)]

use agh_protocol::identity::{
    broadcast_subject, check_direct_room, checked_route_token, direct_id, direct_room,
    is_direct_room_of, peer_subject, route_token, IdentityError,
};
use agh_protocol::{Channel, Envelope, PeerId, ReasonCode, WorkspaceId};
use serde_json::json;

const OPS: &str = "ops-coordinator.session-42";
const PATCH: &str = "patch-worker.session-19";
const ROOM: &str = "direct_a610973e3c0d915853982f4bfe1534e8";

#[test]
fn route_tokens_match_the_worked_examples() {
    assert_eq!(
        route_token("reviewer.sess-xyz"),
        "790dd5515558f7784877abcbca51c5ba"
    );
    assert_eq!(route_token("echo.demo"), "96b61db360703e491489caf5fbbd45bc");
    assert_eq!(route_token("a"), "ca978112ca1bbdcafac231b39a23dc4d");
    assert_eq!(
        checked_route_token("echo.demo").unwrap(),
        "96b61db360703e491489caf5fbbd45bc"
    );
    let longest = format!("a{}", "b".repeat(127));
    assert_eq!(
        checked_route_token(&longest).unwrap(),
        "942b6e2f6d22ec4693a68707cdd6bbc5"
    );
}

#[test]
fn checked_route_token_names_the_peer_argument() {
    for bad in [
        "",
        "Echo",
        "-a",
        "a b",
        "ü",
        &format!("a{}", "b".repeat(128)),
    ] {
        let err = checked_route_token(bad).unwrap_err();
        assert_eq!(err.field(), "peer", "{bad:?}");
        assert!(err.to_string().starts_with("peer: "), "{err}");
    }
}

#[test]
fn direct_id_is_order_independent_and_scoped() {
    let id = direct_id("ws_alpha", "builders", OPS, PATCH).unwrap();
    assert_eq!(id, ROOM);
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
    // Non-ASCII workspace ids are allowed and hashed as UTF-8.
    assert_eq!(
        direct_id("ws-ü/日本", "default", "reviewer.sess-xyz", "echo.demo").unwrap(),
        "direct_2bc3a0eef47ec4648fe07997d2c4948a"
    );
    // Longest peer id and channel.
    let longest_peer = format!("a{}", "b".repeat(127));
    assert_eq!(
        direct_id("ws_alpha", "builders", "0", &longest_peer).unwrap(),
        "direct_b0d8efa56c224b69a24302d74594eb17"
    );
    let longest_channel = format!("c{}", "_".repeat(63));
    assert_eq!(
        direct_id("w", &longest_channel, "a_", "a-").unwrap(),
        "direct_e87cce2317c27a39bac00672a5353491"
    );
    // The seed pages' direct_id is illustrative, not from the recipe (NOTES 6).
    assert_ne!(id, "direct_99401d24bee62651d189e5a561785466");
}

#[test]
fn typed_direct_room() {
    let ws: WorkspaceId = "ws_alpha".parse().unwrap();
    let ch: Channel = "builders".parse().unwrap();
    let a: PeerId = OPS.parse().unwrap();
    let b: PeerId = PATCH.parse().unwrap();
    assert_eq!(direct_room(&ws, &ch, &a, &b).unwrap().as_str(), ROOM);
    assert_eq!(direct_room(&ws, &ch, &b, &a).unwrap().as_str(), ROOM);
    assert_eq!(
        direct_room(&ws, &ch, &a, &a).unwrap_err(),
        IdentityError::SamePeer { peer: OPS.into() }
    );
}

#[test]
fn direct_room_membership() {
    assert!(is_direct_room_of("ws_alpha", "builders", ROOM, PATCH, OPS));
    assert!(is_direct_room_of("ws_alpha", "builders", ROOM, OPS, PATCH));
    assert!(!is_direct_room_of(
        "ws_alpha",
        "builders",
        ROOM,
        PATCH,
        "someone-else"
    ));
    assert!(!is_direct_room_of("ws_alpha", "other", ROOM, PATCH, OPS));
    assert!(!is_direct_room_of("ws_beta", "builders", ROOM, PATCH, OPS));
    assert!(!is_direct_room_of(
        "ws_alpha",
        "builders",
        "direct_XYZ",
        PATCH,
        OPS
    ));
    assert!(!is_direct_room_of(
        "ws_alpha",
        "builders",
        &ROOM.to_uppercase(),
        PATCH,
        OPS
    ));
    assert!(!is_direct_room_of("ws_alpha", "builders", ROOM, OPS, OPS));
}

#[test]
fn bad_inputs_name_the_argument_and_the_schema_rule() {
    let err = direct_id("ws.alpha", "builders", OPS, PATCH).unwrap_err();
    assert_eq!(
        err,
        IdentityError::Grammar {
            argument: "workspace_id",
            value: "ws.alpha".into(),
            message: r#"doesn't match pattern "^[^.*> \u0000-\u001f\u007f]+$""#.into(),
        }
    );
    assert_eq!(err.reason_code(), ReasonCode::Malformed);
    assert_eq!(
        err.to_string(),
        r#"workspace_id: "ws.alpha" doesn't match pattern "^[^.*> \u0000-\u001f\u007f]+$""#
    );
    let err = direct_id("ws", "Builders", OPS, PATCH).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"channel: "Builders" doesn't match pattern "^[a-z0-9][a-z0-9_-]{0,63}$""#
    );
    let err = direct_id("ws", "c", "Bad Peer", PATCH).unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"peer_a: "Bad Peer" doesn't match pattern "^(?:[a-z0-9][a-z0-9._-]{0,127}|[a-z0-9_-]{1,32}@[a-f0-9]{32})$""#
    );
    assert_eq!(direct_id("ws", "c", OPS, "").unwrap_err().field(), "peer_b");
    let err = direct_id("ws", "c", OPS, OPS).unwrap_err();
    assert_eq!(err, IdentityError::SamePeer { peer: OPS.into() });
    assert_eq!(err.field(), "peer_b");
}

#[test]
fn grammars_come_from_the_schema() {
    for ws in [
        "", "a.b", "a b", "a*", "a>", "a\u{0}", "a\u{1f}", "a\u{7f}", "\t",
    ] {
        let err = direct_id(ws, "c", "a", "b").unwrap_err();
        assert_eq!(err.field(), "workspace_id", "{ws:?}");
    }
    for ws in ["ws_alpha", "A:B/C", "\u{80}", "ws-ü"] {
        assert!(direct_id(ws, "c", "a", "b").is_ok(), "{ws:?}");
    }
    let too_long = format!("a{}", "b".repeat(64));
    for ch in ["", "_a", "-a", "A", "a.b", "a b", "é", too_long.as_str()] {
        assert_eq!(
            direct_id("ws", ch, "a", "b").unwrap_err().field(),
            "channel",
            "{ch:?}"
        );
    }
    let too_long = format!("a{}", "b".repeat(128));
    for peer in ["", ".a", "_a", "Echo", "a b", "a/b", "ü", too_long.as_str()] {
        assert_eq!(
            direct_id("ws", "c", peer, "b").unwrap_err().field(),
            "peer_a",
            "{peer:?}"
        );
    }
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
    assert_eq!(
        peer_subject("ws_alpha", "builders", "reviewer.sess-xyz").unwrap(),
        "agh.network.v0.ws_alpha.builders.peer.790dd5515558f7784877abcbca51c5ba"
    );
    // A workspace id with a `.` (or `*`, `>`) would break the subject's tokens.
    for ws in ["ws.alpha", "ws*", "ws>"] {
        assert_eq!(
            broadcast_subject(ws, "builders").unwrap_err().field(),
            "workspace_id"
        );
    }
    assert_eq!(peer_subject("ws", "c", "Echo").unwrap_err().field(), "peer");
    assert_eq!(
        peer_subject("ws", "C", "echo").unwrap_err().field(),
        "channel"
    );
}

fn direct_envelope(from: &str, to: Option<&str>, direct_id: &str) -> Envelope {
    serde_json::from_value(json!({
        "protocol": "agh-network/v0",
        "id": "msg_1",
        "kind": "say",
        "workspace_id": "ws_alpha",
        "channel": "builders",
        "surface": "direct",
        "direct_id": direct_id,
        "from": from,
        "to": to,
        "ts": 1776366000,
        "body": {"text": "hi"},
        "proof": null
    }))
    .unwrap()
}

#[test]
fn a_direct_envelope_belongs_to_its_peers() {
    let ops: PeerId = OPS.parse().unwrap();
    let patch: PeerId = PATCH.parse().unwrap();
    // from and to.
    assert_eq!(
        check_direct_room(&direct_envelope(OPS, Some(PATCH), ROOM), None),
        Ok(())
    );
    assert_eq!(
        check_direct_room(&direct_envelope(PATCH, Some(OPS), ROOM), Some(&patch)),
        Ok(())
    );
    // Without `to`: the receiving peer is the other one.
    assert_eq!(
        check_direct_room(&direct_envelope(OPS, None, ROOM), Some(&patch)),
        Ok(())
    );
    assert_eq!(
        check_direct_room(&direct_envelope(OPS, None, ROOM), None),
        Err(IdentityError::MissingPeer)
    );
    // Another peer's room.
    let other_room = direct_id("ws_alpha", "builders", OPS, "someone-else").unwrap();
    let err = check_direct_room(&direct_envelope(OPS, Some(PATCH), &other_room), None).unwrap_err();
    assert_eq!(
        err,
        IdentityError::NotTheRoom {
            direct_id: other_room.clone(),
            expected: ROOM.into(),
            peers: (OPS.into(), PATCH.into()),
        }
    );
    let problem = err.to_problem();
    assert_eq!(
        (problem.code, problem.pointer.as_str()),
        (ReasonCode::Malformed, "/direct_id")
    );
    // A message to oneself has no room.
    assert_eq!(
        check_direct_room(&direct_envelope(OPS, Some(OPS), ROOM), None),
        Err(IdentityError::SamePeer { peer: OPS.into() })
    );
    // `to` wins over the receiver.
    assert!(check_direct_room(&direct_envelope(OPS, Some(PATCH), ROOM), Some(&ops)).is_ok());
    // No direct_id: nothing to check.
    let mut thread = direct_envelope(OPS, None, ROOM);
    thread.direct_id = None;
    assert_eq!(check_direct_room(&thread, None), Ok(()));
}
