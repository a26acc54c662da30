//! Peer Cards, brief and rich catalogs, whois matching and answering, presence (the peer- and
//! capability-discovery pages, NOTES section 7).
#![allow(clippy::unwrap_used)]

use agh_protocol::discovery::{
    answer_whois, requested_catalog, whois_matches, Catalog, PeerCardBuilder, PresenceRegistry,
    BRIEF_KEY, CATALOG_KEY,
};
use agh_protocol::{parse, MessageBuilder, Options, ReasonCode, WhoisBody};
use serde_json::{json, Value};

const NOW: i64 = 1_776_366_000;

fn catalog() -> Catalog {
    Catalog::new(vec![
        json!({"id": " build-site ", "summary": "Build the landing page.", "outcome": "A finished landing page.",
               "version": "1.0.0", "context_needed": ["repo", "brand brief"], "execution_outline": ["Inspect", "Build"],
               "constraints": ["No mocks"], "examples": [], "requirements": []}),
        json!({"id": "review-copy", "summary": "Review conversion copy.", "outcome": "Comments.", "version": ""}),
    ])
    .unwrap()
}

#[test]
fn a_card_without_catalog_has_empty_arrays_and_no_brief() {
    let card = PeerCardBuilder::new("designer.session-19")
        .build(None)
        .unwrap();
    let v = serde_json::to_value(&card).unwrap();
    assert_eq!(v["capabilities"], json!([]));
    assert_eq!(v["artifacts_supported"], json!([]));
    assert_eq!(v["trust_modes_supported"], json!([]));
    assert_eq!(v["profiles_supported"], json!(["agh-network/v0"]));
    assert!(v.get("ext").is_none());
}

#[test]
fn brief_projection_follows_catalog_order_trimmed() {
    let card = PeerCardBuilder::new("designer.session-19")
        .display_name("Designer")
        .artifact("capability")
        .trust_mode("unverified")
        .ext("acme.team", json!("web"))
        .build(Some(&catalog()))
        .unwrap();
    let v = serde_json::to_value(&card).unwrap();
    assert_eq!(v["capabilities"], json!(["build-site", "review-copy"]));
    assert_eq!(
        v["ext"][BRIEF_KEY],
        json!([{"id": "build-site", "summary": "Build the landing page."},
               {"id": "review-copy", "summary": "Review conversion copy."}])
    );
    assert_eq!(v["ext"]["acme.team"], "web");
}

#[test]
fn catalogs_compute_missing_digests_and_refuse_wrong_ones() {
    let c = catalog();
    for doc in c.documents() {
        assert!(doc["digest"].as_str().unwrap().starts_with("sha256:"));
    }
    let wrong = Catalog::new(vec![json!({"id": "a", "summary": "b", "outcome": "c",
        "digest": "sha256:0000000000000000000000000000000000000000000000000000000000000000"})])
    .unwrap_err();
    assert_eq!(
        (wrong.code, wrong.pointer.as_str()),
        (ReasonCode::VerificationFailed, "/0/digest")
    );
    let blank = Catalog::new(vec![json!({"id": "a", "summary": " ", "outcome": "c"})]).unwrap_err();
    assert_eq!(
        (blank.code, blank.pointer.as_str()),
        (ReasonCode::Malformed, "/0/summary")
    );
}

#[test]
fn rich_catalog_rules() {
    let c = catalog();
    let all = c.rich(None);
    let entries = all["capabilities"].as_array().unwrap();
    assert_eq!(entries.len(), 2);
    // Empty optionals are omitted; required members and the digest are there.
    assert!(entries[0].get("examples").is_none() && entries[0].get("requirements").is_none());
    assert!(entries[1].get("version").is_none());
    assert_eq!(entries[0]["constraints"], json!(["No mocks"]));
    assert_eq!(entries[0]["digest"], c.documents()[0]["digest"]);
    // Filtering keeps catalog order; unknown ids give [].
    let ext = json!({"agh.include": ["other", "capability_catalog"], "agh.capability_ids": ["review-copy", "build-site"]});
    let filtered = requested_catalog(ext.as_object().unwrap(), Some(&c)).unwrap();
    let ids: Vec<&str> = filtered["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [" build-site ", "review-copy"]);
    let none = json!({"agh.include": ["capability_catalog"], "agh.capability_ids": ["nope"]});
    assert_eq!(
        requested_catalog(none.as_object().unwrap(), Some(&c)).unwrap(),
        json!({"capabilities": []})
    );
    let no_catalog = json!({"agh.include": ["capability_catalog"]});
    assert_eq!(
        requested_catalog(no_catalog.as_object().unwrap(), None).unwrap(),
        json!({"capabilities": []})
    );
    // Without `capability_catalog` in agh.include: nothing.
    let other = json!({"agh.include": ["something_else"]});
    assert!(requested_catalog(other.as_object().unwrap(), Some(&c)).is_none());
    assert!(requested_catalog(&serde_json::Map::new(), Some(&c)).is_none());
}

#[test]
fn whois_matching() {
    let card = PeerCardBuilder::new("patch-worker.session-19")
        .display_name("Patch Worker")
        .artifact("capability")
        .trust_mode("unverified")
        .build(Some(&catalog()))
        .unwrap();
    for q in [
        None,
        Some(""),
        Some("patch-worker.session-19"),
        Some("Patch Worker"),
        Some("build-site"),
        Some("agh-network/v0"),
        Some("capability"),
        Some("unverified"),
    ] {
        assert!(whois_matches(q, &card), "{q:?}");
    }
    for q in ["patch-worker", "Build-site", "verified", "test.run"] {
        assert!(!whois_matches(Some(q), &card), "{q}");
    }
}

fn whois_request(to: Option<&str>, query: &str, ext: Option<Value>) -> agh_protocol::Message {
    let body: WhoisBody =
        serde_json::from_value(json!({"type": "request", "query": query})).unwrap();
    let mut b = MessageBuilder::new("ws_alpha", "builders", "ops-coordinator.session-42")
        .id("msg_whois_1")
        .ts(NOW);
    if let Some(to) = to {
        b = b.to(to);
    }
    if let Some(Value::Object(ext)) = ext {
        for (k, v) in ext {
            b = b.ext(&k, v);
        }
    }
    b.body(&body).unwrap()
}

#[test]
fn answering_whois() {
    let c = catalog();
    let card = PeerCardBuilder::new("designer.session-19")
        .artifact("capability")
        .build(Some(&c))
        .unwrap();
    // Broadcast that does not match: no answer. Directed to us: answered anyway.
    assert!(answer_whois(
        &whois_request(None, "test.run", None),
        &card,
        Some(&c),
        "r1",
        NOW
    )
    .unwrap()
    .is_none());
    let directed = answer_whois(
        &whois_request(Some("designer.session-19"), "test.run", None),
        &card,
        Some(&c),
        "r1",
        NOW,
    )
    .unwrap()
    .unwrap();
    let v = directed.to_value().unwrap();
    assert_eq!(v["to"], "ops-coordinator.session-42");
    assert_eq!(v["reply_to"], "msg_whois_1");
    assert_eq!(v["body"]["type"], "response");
    assert_eq!(v["body"]["peer_card"]["peer_id"], "designer.session-19");
    assert!(v.get("ext").is_none(), "no rich catalog unless asked");
    // Rich catalog on request, in the envelope ext, never in peer_card.ext.
    let ext = json!({"agh.include": ["capability_catalog"], "agh.capability_ids": ["build-site"]});
    let rich = answer_whois(
        &whois_request(None, "build-site", Some(ext)),
        &card,
        Some(&c),
        "r2",
        NOW,
    )
    .unwrap()
    .unwrap();
    let v = rich.to_value().unwrap();
    assert_eq!(
        v["ext"][CATALOG_KEY]["capabilities"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(v["body"]["peer_card"]["ext"].get(CATALOG_KEY).is_none());
    // The response is a valid envelope for a strict receiver.
    assert!(parse(&rich.to_vec().unwrap(), &Options::at(NOW)).is_ok());
}

#[test]
fn responses_over_the_size_limit_are_refused_before_emission() {
    let big: Vec<Value> = (0..2000)
        .map(|i| json!({"id": format!("cap-{i}"), "summary": "s".repeat(300), "outcome": "o".repeat(300)}))
        .collect();
    let c = Catalog::new(big).unwrap();
    let card = PeerCardBuilder::new("designer.session-19")
        .build(None)
        .unwrap();
    let ext = json!({"agh.include": ["capability_catalog"]});
    let r = answer_whois(
        &whois_request(None, "", Some(ext)),
        &card,
        Some(&c),
        "r3",
        NOW,
    )
    .unwrap_err();
    assert_eq!((r.code, r.pointer.as_str()), (ReasonCode::Malformed, ""));
    assert!(r.message.contains("limit"), "{}", r.message);
}

#[test]
fn presence_expiry_and_local_shadowing() {
    let mut reg = PresenceRegistry::new(30);
    let remote = PeerCardBuilder::new("echo.demo")
        .display_name("Remote")
        .build(None)
        .unwrap();
    let local = PeerCardBuilder::new("echo.demo")
        .display_name("Local")
        .build(None)
        .unwrap();
    let other = PeerCardBuilder::new("other.demo").build(None).unwrap();
    reg.refresh("builders", remote.clone(), NOW);
    reg.refresh("builders", other, NOW);
    assert_eq!(
        reg.get("builders", "echo.demo", NOW + 59)
            .unwrap()
            .card
            .display_name
            .as_deref(),
        Some("Remote")
    );
    // Expires at last_seen + 2 x interval.
    assert!(reg.get("builders", "echo.demo", NOW + 60).is_none());
    // Presence is per channel.
    assert!(reg.get("ops", "echo.demo", NOW).is_none());
    // A greet refreshes.
    reg.refresh("builders", remote, NOW + 50);
    assert!(reg.get("builders", "echo.demo", NOW + 100).is_some());
    // A local peer shadows the remote one and never expires.
    reg.add_local("builders", local);
    let e = reg.get("builders", "echo.demo", NOW + 10_000).unwrap();
    assert!(e.local);
    assert_eq!(e.card.display_name.as_deref(), Some("Local"));
    let peers = reg.peers("builders", NOW + 59);
    assert_eq!(peers.len(), 2);
    assert!(peers
        .iter()
        .any(|p| p.local && *p.card.peer_id == "echo.demo"));
    assert_eq!(reg.expire(NOW + 1000), 2);
    assert!(reg.remove_local("builders", "echo.demo"));
    assert!(reg.peers("builders", NOW).is_empty());
}

#[test]
fn greets_refresh_presence() {
    let mut reg = PresenceRegistry::default();
    let bytes = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/envelopes/greet-greet_001.json"),
    )
    .unwrap();
    let greet = parse(&bytes, &Options::at(NOW)).unwrap();
    assert!(reg.observe(&greet));
    assert!(reg
        .get("builders", "patch-worker.session-19", NOW + 30)
        .is_some());
}
