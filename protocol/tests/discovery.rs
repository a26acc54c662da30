//! Peer Cards, brief and rich catalogs, whois matching and answering, presence (the peer- and
//! capability-discovery pages, NOTES section 7).
#![allow(clippy::unwrap_used)]

use agh_protocol::digest::{capability_digest, verify};
use agh_protocol::discovery::{
    answer_whois, check_encoded_size, check_envelope_size, requested_catalog, should_answer_whois,
    wants_catalog, whois_matches, Catalog, PeerCardBuilder, PresenceRegistry, BRIEF_KEY,
    CATALOG_KEY,
};
use agh_protocol::{
    parse, CapabilityCatalog, MessageBuilder, Options, PeerCard, ReasonCode, WhoisBody,
    MAX_ENVELOPE_BYTES,
};
use serde_json::{json, Map, Value};

const NOW: i64 = 1_776_366_000;
const DESIGNER: &str = "designer.session-19";
const OPS: &str = "ops-coordinator.session-42";

fn catalog() -> Catalog {
    Catalog::new(vec![
        json!({"id": " build-site ", "summary": "Build the landing page.", "outcome": "A finished landing page.",
               "version": "1.0.0", "context_needed": ["repo", "brand brief"], "execution_outline": ["Inspect", "Build"],
               "constraints": ["No mocks"], "examples": [], "requirements": []}),
        json!({"id": "review-copy", "summary": "Review conversion copy.", "outcome": "Comments.", "version": ""}),
    ])
    .unwrap()
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => panic!("not an object"),
    }
}

#[test]
fn a_card_without_catalog_has_empty_arrays_and_no_brief() {
    let card = PeerCardBuilder::new(DESIGNER).build(None).unwrap();
    assert_eq!(
        serde_json::to_value(&card).unwrap(),
        json!({
            "peer_id": DESIGNER,
            "profiles_supported": ["agh-network/v0"],
            "capabilities": [],
            "artifacts_supported": [],
            "trust_modes_supported": []
        })
    );
    // An empty catalog is no catalog.
    let empty = Catalog::new(vec![]).unwrap();
    let card = PeerCardBuilder::new(DESIGNER).build(Some(&empty)).unwrap();
    let v = serde_json::to_value(&card).unwrap();
    assert_eq!(v["capabilities"], json!([]));
    assert!(v.get("ext").is_none());
}

#[test]
fn the_seed_page_card_is_reproduced() {
    let card = PeerCardBuilder::new(DESIGNER)
        .display_name("Designer")
        .artifact("capability")
        .trust_mode("unverified")
        .build(Some(&catalog()))
        .unwrap();
    // The capability discovery page's example Peer Card, member for member.
    assert_eq!(
        serde_json::to_value(&card).unwrap(),
        json!({
            "peer_id": "designer.session-19",
            "display_name": "Designer",
            "profiles_supported": ["agh-network/v0"],
            "capabilities": ["build-site", "review-copy"],
            "artifacts_supported": ["capability"],
            "trust_modes_supported": ["unverified"],
            "ext": {
                "agh.capabilities_brief": [
                    { "id": "build-site", "summary": "Build the landing page." },
                    { "id": "review-copy", "summary": "Review conversion copy." }
                ]
            }
        })
    );
}

#[test]
fn card_ext_keeps_other_keys_and_drops_reserved_ones() {
    let card = PeerCardBuilder::new(DESIGNER)
        .ext("acme.team", json!("web"))
        .ext(BRIEF_KEY, json!([{"id": "forged", "summary": "x"}]))
        .ext(CATALOG_KEY, json!({"capabilities": []}))
        .build(None)
        .unwrap();
    let v = serde_json::to_value(&card).unwrap();
    assert_eq!(v["ext"], json!({"acme.team": "web"}));
    let card = PeerCardBuilder::new(DESIGNER)
        .ext(BRIEF_KEY, json!([{"id": "forged", "summary": "x"}]))
        .build(Some(&catalog()))
        .unwrap();
    let v = serde_json::to_value(&card).unwrap();
    assert_eq!(v["ext"][BRIEF_KEY][0]["id"], "build-site");
}

#[test]
fn a_bad_peer_id_is_named() {
    let p = PeerCardBuilder::new("Designer").build(None).unwrap_err();
    assert_eq!(
        (p.code, p.pointer.as_str()),
        (ReasonCode::Malformed, "/peer_card/peer_id")
    );
}

#[test]
fn catalogs_compute_missing_digests_and_refuse_wrong_ones() {
    let c = catalog();
    assert_eq!(c.len(), 2);
    for doc in c.documents() {
        // Each document carries its canonical digest and verifies.
        assert_eq!(
            verify(doc).unwrap(),
            capability_digest(doc).unwrap(),
            "{doc}"
        );
    }
    assert_eq!(
        c.documents()[1]["digest"],
        capability_digest(&json!({"id": "review-copy", "summary": "Review conversion copy.", "outcome": "Comments."}))
            .unwrap()
    );
    let wrong = Catalog::new(vec![json!({"id": "a", "summary": "b", "outcome": "c",
        "digest": "sha256:0000000000000000000000000000000000000000000000000000000000000000"})])
    .unwrap_err();
    assert_eq!(
        (wrong.code, wrong.pointer.as_str()),
        (ReasonCode::VerificationFailed, "/0/digest")
    );
    // The right digest is kept.
    let digest = capability_digest(&json!({"id": "a", "summary": "b", "outcome": "c"})).unwrap();
    let ok = Catalog::new(vec![
        json!({"id": "a", "summary": "b", "outcome": "c", "digest": digest}),
    ])
    .unwrap();
    assert_eq!(ok.documents()[0]["digest"], digest.as_str());
}

#[test]
fn catalog_problems_name_the_entry_and_member() {
    let cases = [
        (
            json!({"id": "a", "summary": " ", "outcome": "c"}),
            ReasonCode::Malformed,
            "/1/summary",
        ),
        (
            json!({"id": "a", "summary": "b"}),
            ReasonCode::Malformed,
            "/1/outcome",
        ),
        (
            json!({"id": 3, "summary": "b", "outcome": "c"}),
            ReasonCode::Malformed,
            "/1/id",
        ),
        (
            json!({"id": "a", "summary": "b", "outcome": "c", "requirements": ["x", " x"]}),
            ReasonCode::Malformed,
            "/1/requirements/1",
        ),
        (
            json!({"id": "a", "summary": "b", "outcome": "c", "examples": "x"}),
            ReasonCode::Malformed,
            "/1/examples",
        ),
        (
            json!({"id": " ok ", "summary": "b", "outcome": "c"}),
            ReasonCode::Malformed,
            "/1/id",
        ),
        (json!("not a document"), ReasonCode::Malformed, "/1"),
    ];
    for (doc, code, pointer) in cases {
        let first = json!({"id": "ok", "summary": "s", "outcome": "o"});
        let p = Catalog::new(vec![first, doc.clone()]).unwrap_err();
        assert_eq!((p.code, p.pointer.as_str()), (code, pointer), "{doc}");
    }
    let p = Catalog::new(vec![
        json!({"id": "ok", "summary": "s", "outcome": "o"}),
        json!({"id": " ok\t", "summary": "s", "outcome": "o"}),
    ])
    .unwrap_err();
    assert_eq!(p.message, "capability id \"ok\" repeats the id of entry 0");
}

#[test]
fn catalog_documents_are_normalized() {
    let c = Catalog::new(vec![json!({
        "id": " a ", "summary": " s\u{3000}", "outcome": "\to", "version": "  ",
        "context_needed": ["", " repo "], "examples": ["  "], "requirements": [" z", "b "],
        "constraints": null, "acme.extra": ""
    })])
    .unwrap();
    let d = &c.documents()[0];
    let digest = d["digest"].as_str().unwrap();
    assert_eq!(
        *d,
        json!({"id": "a", "summary": "s", "outcome": "o", "context_needed": ["repo"],
               "requirements": ["z", "b"], "acme.extra": "", "digest": digest})
    );
    assert_eq!(c.document("  a"), Some(d));
    assert_eq!(c.document("b"), None);
}

#[test]
fn typed_documents_make_a_catalog() {
    let docs: Vec<agh_protocol::CapabilityDocument> = catalog()
        .documents()
        .iter()
        .map(|d| serde_json::from_value(d.clone()).unwrap())
        .collect();
    let c = Catalog::from_documents(&docs).unwrap();
    assert_eq!(c, catalog());
}

fn ids_of(rich: &Value) -> Vec<&str> {
    rich["capabilities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect()
}

#[test]
fn rich_catalog_rules() {
    let c = catalog();
    let all = c.rich(None);
    // The rich payload is a valid CapabilityCatalog.
    let typed: CapabilityCatalog = serde_json::from_value(all.clone()).unwrap();
    assert_eq!(typed.capabilities.len(), 2);
    let digest = c.documents()[0]["digest"].as_str().unwrap();
    // Required members and the digest are there, empty optionals are omitted.
    assert_eq!(
        all["capabilities"][0],
        json!({"id": "build-site", "summary": "Build the landing page.", "outcome": "A finished landing page.",
               "version": "1.0.0", "context_needed": ["repo", "brand brief"], "execution_outline": ["Inspect", "Build"],
               "constraints": ["No mocks"], "digest": digest})
    );
    assert_eq!(
        all["capabilities"][1],
        json!({"id": "review-copy", "summary": "Review conversion copy.", "outcome": "Comments.",
               "digest": c.documents()[1]["digest"]})
    );
    // Filtering keeps catalog order, ids compared trimmed; unknown ids give [].
    let ext = obj(
        json!({"agh.include": ["other", "capability_catalog"], "agh.capability_ids": ["review-copy", " build-site", "nope"]}),
    );
    assert_eq!(
        ids_of(&requested_catalog(&ext, Some(&c)).unwrap()),
        ["build-site", "review-copy"]
    );
    let one =
        obj(json!({"agh.include": ["capability_catalog"], "agh.capability_ids": ["review-copy"]}));
    assert_eq!(
        ids_of(&requested_catalog(&one, Some(&c)).unwrap()),
        ["review-copy"]
    );
    for ids in [json!(["nope"]), json!([])] {
        let ext = obj(json!({"agh.include": ["capability_catalog"], "agh.capability_ids": ids}));
        assert_eq!(
            requested_catalog(&ext, Some(&c)).unwrap(),
            json!({"capabilities": []})
        );
    }
    let no_catalog = obj(json!({"agh.include": ["capability_catalog"]}));
    assert_eq!(
        requested_catalog(&no_catalog, None).unwrap(),
        json!({"capabilities": []})
    );
    // Without `capability_catalog` in agh.include: nothing.
    for ext in [
        json!({"agh.include": ["something_else"]}),
        json!({"agh.include": "capability_catalog"}),
        json!({"agh.capability_ids": ["build-site"]}),
        json!({}),
    ] {
        let ext = obj(ext);
        assert!(!wants_catalog(&ext));
        assert!(requested_catalog(&ext, Some(&c)).is_none(), "{ext:?}");
    }
}

fn patch_worker_card() -> PeerCard {
    PeerCardBuilder::new("patch-worker.session-19")
        .display_name("Patch Worker")
        .artifact("capability")
        .trust_mode("unverified")
        .build(Some(&catalog()))
        .unwrap()
}

#[test]
fn whois_matching() {
    let card = patch_worker_card();
    for q in [
        None,
        Some(""),
        Some("  "),
        Some("patch-worker.session-19"),
        Some("Patch Worker"),
        Some("build-site"),
        Some(" review-copy "),
        Some("agh-network/v0"),
        Some("capability"),
        Some("unverified"),
    ] {
        assert!(whois_matches(q, &card), "{q:?}");
    }
    for q in [
        "patch-worker",
        "Build-site",
        "verified",
        "test.run",
        "patch worker",
        "Build the landing page.",
    ] {
        assert!(!whois_matches(Some(q), &card), "{q}");
    }
}

#[test]
fn directed_whois_is_answered_by_its_target_only() {
    let card = patch_worker_card();
    // Directed to the card's peer: answered even when nothing matches.
    assert!(should_answer_whois(
        Some("patch-worker.session-19"),
        Some("test.run"),
        &card
    ));
    // Directed to another peer: not answered even when the query matches.
    assert!(!should_answer_whois(Some(OPS), Some("build-site"), &card));
    assert!(!should_answer_whois(Some(OPS), None, &card));
    // Broadcast: answered when the query matches.
    assert!(should_answer_whois(None, Some("build-site"), &card));
    assert!(!should_answer_whois(None, Some("test.run"), &card));
}

fn whois_request(to: Option<&str>, query: &str, ext: Option<Value>) -> agh_protocol::Message {
    let body: WhoisBody =
        serde_json::from_value(json!({"type": "request", "query": query})).unwrap();
    let mut b = MessageBuilder::new("ws_alpha", "builders", OPS)
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
    let card = PeerCardBuilder::new(DESIGNER)
        .artifact("capability")
        .build(Some(&c))
        .unwrap();
    // Broadcast that does not match: no answer. Directed to us: answered anyway.
    let answer = |req: &agh_protocol::Message, id: &str| {
        answer_whois(req, &card, Some(&c), id, NOW + 1).unwrap()
    };
    assert!(answer(&whois_request(None, "test.run", None), "r1").is_none());
    assert!(answer(
        &whois_request(Some("someone-else"), "build-site", None),
        "r1"
    )
    .is_none());
    let directed = answer(&whois_request(Some(DESIGNER), "test.run", None), "r1").unwrap();
    let v = directed.to_value();
    assert_eq!(v["id"], "r1");
    assert_eq!(v["ts"], NOW + 1);
    assert_eq!(v["from"], DESIGNER);
    assert_eq!(v["to"], OPS);
    assert_eq!(v["reply_to"], "msg_whois_1");
    assert_eq!(v["workspace_id"], "ws_alpha");
    assert_eq!(v["channel"], "builders");
    assert_eq!(v["body"]["type"], "response");
    assert_eq!(v["body"]["peer_card"], serde_json::to_value(&card).unwrap());
    assert!(v.get("ext").is_none(), "no rich catalog unless asked");
    // Rich catalog on request, in the envelope ext, never in peer_card.ext.
    let ext = json!({"agh.include": ["capability_catalog"], "agh.capability_ids": ["build-site"]});
    let rich = answer(&whois_request(None, "build-site", Some(ext)), "r2").unwrap();
    let v = rich.to_value();
    assert_eq!(
        v["ext"][CATALOG_KEY],
        c.rich(Some(&["build-site".to_owned()]))
    );
    assert_eq!(ids_of(&v["ext"][CATALOG_KEY]), ["build-site"]);
    assert!(v["body"]["peer_card"]["ext"].get(CATALOG_KEY).is_none());
    assert_eq!(
        v["body"]["peer_card"]["ext"][BRIEF_KEY]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // The response is a valid envelope for a strict receiver.
    assert!(parse(&rich.to_vec(), &Options::at(NOW)).is_ok());
    // A whois response is not answered.
    assert!(answer(&rich, "r3").is_none());
}

#[test]
fn size_helpers() {
    assert_eq!(check_encoded_size(MAX_ENVELOPE_BYTES), Ok(()));
    let p = check_encoded_size(MAX_ENVELOPE_BYTES + 1).unwrap_err();
    assert_eq!((p.code, p.pointer.as_str()), (ReasonCode::Malformed, ""));
    assert_eq!(
        p.message,
        "the envelope is 1048577 bytes of JSON, over the envelope size limit of 1048576 bytes"
    );
    assert_eq!(check_envelope_size(&json!({"a": 1})), Ok(7));
    let big = json!({ "a": "x".repeat(MAX_ENVELOPE_BYTES) });
    assert!(check_envelope_size(&big).is_err());
}

#[test]
fn a_rich_catalog_over_the_size_limit_is_refused_before_emission() {
    let big: Vec<Value> = (0..2000)
        .map(|i| json!({"id": format!("cap-{i}"), "summary": "s".repeat(300), "outcome": "o".repeat(300)}))
        .collect();
    let c = Catalog::new(big).unwrap();
    let card = PeerCardBuilder::new(DESIGNER).build(None).unwrap();
    let ext = json!({"agh.include": ["capability_catalog"]});
    let r = answer_whois(
        &whois_request(None, "", Some(ext)),
        &card,
        Some(&c),
        "r3",
        NOW,
    )
    .unwrap_err();
    assert_eq!(
        (r.code, r.pointer.as_str()),
        (ReasonCode::Malformed, "/ext/agh.capability_catalog")
    );
    assert!(r.message.contains("size limit"), "{}", r.message);
}

#[test]
fn a_response_over_the_size_limit_is_refused_before_emission() {
    // A catalog just under the limit on its own: the envelope around it is over.
    let one = |summary: &str| {
        Catalog::new(vec![
            json!({"id": "big", "summary": summary, "outcome": "o"}),
        ])
        .unwrap()
    };
    let base = serde_json::to_vec(&one("s").rich(None)).unwrap().len() - 1;
    let c = one(&"s".repeat(MAX_ENVELOPE_BYTES - 10 - base));
    assert_eq!(
        serde_json::to_vec(&c.rich(None)).unwrap().len(),
        MAX_ENVELOPE_BYTES - 10
    );
    let card = PeerCardBuilder::new(DESIGNER).build(None).unwrap();
    let ext = json!({"agh.include": ["capability_catalog"]});
    let r = answer_whois(
        &whois_request(None, "", Some(ext)),
        &card,
        Some(&c),
        "r4",
        NOW,
    )
    .unwrap_err();
    assert_eq!((r.code, r.pointer.as_str()), (ReasonCode::Malformed, ""));
    assert!(r.message.contains("limit"), "{}", r.message);
}

#[test]
fn presence_expiry_and_local_shadowing() {
    let mut reg = PresenceRegistry::new(30);
    assert_eq!(reg.interval_secs(), 30);
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
    assert_eq!(reg.expiry(NOW), NOW + 60);
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
    // A greet refreshes; an older one does not move last_seen back.
    reg.refresh("builders", remote.clone(), NOW + 50);
    reg.refresh("builders", remote, NOW + 10);
    assert_eq!(
        reg.get("builders", "echo.demo", NOW).unwrap().last_seen,
        NOW + 50
    );
    assert!(reg.get("builders", "echo.demo", NOW + 109).is_some());
    assert!(reg.get("builders", "echo.demo", NOW + 110).is_none());
    // A local peer shadows the remote one and never expires.
    reg.add_local("builders", local);
    let e = reg.get("builders", "echo.demo", NOW + 10_000).unwrap();
    assert!(e.local);
    assert_eq!(e.card.display_name.as_deref(), Some("Local"));
    let peers = reg.peers("builders", NOW + 59);
    let ids: Vec<(&str, bool)> = peers
        .iter()
        .map(|p| (p.card.peer_id.as_str(), p.local))
        .collect();
    assert_eq!(ids, [("echo.demo", true), ("other.demo", false)]);
    assert!(reg.peers("ops", NOW).is_empty());
    assert_eq!(reg.expire(NOW + 1000), 2);
    assert!(reg.remove_local("builders", "echo.demo"));
    assert!(!reg.remove_local("builders", "echo.demo"));
    assert!(reg.peers("builders", NOW).is_empty());
}

#[test]
fn the_greet_interval_is_configurable() {
    let mut reg = PresenceRegistry::new(5);
    let card = PeerCardBuilder::new("echo.demo").build(None).unwrap();
    reg.refresh("default", card, NOW);
    assert!(reg.get("default", "echo.demo", NOW + 9).is_some());
    assert!(reg.get("default", "echo.demo", NOW + 10).is_none());
    assert_eq!(reg.expire(NOW + 9), 0);
    assert_eq!(reg.expire(NOW + 10), 1);
    assert_eq!(
        PresenceRegistry::default().interval_secs(),
        PresenceRegistry::DEFAULT_INTERVAL_SECS
    );
    assert_eq!(PresenceRegistry::DEFAULT_INTERVAL_SECS, 30);
    // Huge intervals and clocks do not overflow.
    let mut reg = PresenceRegistry::new(u64::MAX);
    let card = PeerCardBuilder::new("echo.demo").build(None).unwrap();
    reg.refresh("default", card, i64::MAX - 1);
    assert!(reg.get("default", "echo.demo", i64::MAX - 1).is_some());
    assert_eq!(reg.expire(i64::MIN), 0);
}

#[test]
fn greets_refresh_presence_on_the_receivers_clock() {
    let mut reg = PresenceRegistry::default();
    let bytes = std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../examples/envelopes/greet-greet_001.json"),
    )
    .unwrap();
    let greet = parse(&bytes, &Options::at(NOW)).unwrap();
    // Received 100 s after its ts: presence counts from the receiver's clock.
    assert!(reg.observe(&greet, NOW + 100));
    let e = reg
        .get("builders", "patch-worker.session-19", NOW + 159)
        .unwrap();
    assert_eq!(e.last_seen, NOW + 100);
    assert!(!e.local);
    assert!(reg
        .get("builders", "patch-worker.session-19", NOW + 160)
        .is_none());
    // Other kinds do not count.
    let whois = whois_request(None, "", None);
    assert!(!reg.observe(&whois, NOW));
    // The registry answers whois for the present peers.
    let found: Vec<&str> = reg
        .whois("builders", None, Some("patch-worker.session-19"), NOW + 100)
        .iter()
        .map(|e| e.card.peer_id.as_str())
        .collect();
    assert_eq!(found, ["patch-worker.session-19"]);
    assert!(reg
        .whois("builders", None, Some("nobody"), NOW + 100)
        .is_empty());
    assert_eq!(
        reg.whois(
            "builders",
            Some("patch-worker.session-19"),
            Some("nobody"),
            NOW + 100
        )
        .len(),
        1
    );
}
