//! Peer discovery and capability discovery (the peer- and capability-discovery pages, NOTES
//! section 7): Peer Cards, the local capability catalog with its brief and rich projections,
//! whois matching and answering, and channel-scoped presence.
//!
//! Shapes are checked with the generated validators of the schema types (`PeerCard`,
//! `CapabilityDocument`, `CapabilityCatalog`), so what this module emits is what the schemas say.

use std::collections::HashMap;

use serde_json::{json, Map, Value};

use crate::build::MessageBuilder;
use crate::generated::checks::{
    check_capability_catalog, check_capability_document, check_peer_card,
};
use crate::parse::{Message, Rejection};
use crate::problem::{Problem, Problems, ReasonCode};
use crate::recipes::capability_digest;
use crate::{PeerCard, WhoisBody};

/// `peer_card.ext` key of the brief projection.
pub const BRIEF_KEY: &str = "agh.capabilities_brief";
/// Request `ext` key listing what to include in a whois response.
pub const INCLUDE_KEY: &str = "agh.include";
/// The `agh.include` value that asks for the rich catalog.
pub const INCLUDE_CATALOG: &str = "capability_catalog";
/// Request `ext` key narrowing the rich catalog to some capability ids.
pub const IDS_KEY: &str = "agh.capability_ids";
/// Response `ext` key of the rich catalog.
pub const CATALOG_KEY: &str = "agh.capability_catalog";

fn first_problem(
    check: fn(&Value, &mut String, &mut Problems),
    v: &Value,
    at: &str,
) -> Option<Problem> {
    let mut problems = Problems::first_only();
    let mut at = at.to_owned();
    check(v, &mut at, &mut problems);
    problems.into_vec().into_iter().next()
}

/// A peer's local capability catalog: capability documents in catalog order, each with its
/// canonical digest.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Catalog {
    docs: Vec<Value>,
}

impl Catalog {
    /// A catalog of `docs` (capability documents, in catalog order). Each must be a valid
    /// capability document; a missing `digest` is computed, a wrong one is refused
    /// (`verification_failed`). Problems point at `/<index>/...`.
    pub fn new(docs: Vec<Value>) -> Result<Catalog, Problem> {
        let mut out = Vec::with_capacity(docs.len());
        for (i, mut doc) in docs.into_iter().enumerate() {
            let at = format!("/{i}");
            let digest = capability_digest(&doc).map_err(|(p, m)| {
                Problem::new(
                    ReasonCode::Malformed,
                    format!("{at}{p}"),
                    "recipe capability-v0",
                    m,
                )
            })?;
            match doc.get("digest").and_then(Value::as_str) {
                Some(d) if d != digest => {
                    return Err(Problem::new(
                        ReasonCode::VerificationFailed,
                        format!("{at}/digest"),
                        "recipe capability-v0",
                        format!("digest {d} does not match the canonical digest {digest}"),
                    ))
                }
                Some(_) => {}
                None => {
                    if let Some(m) = doc.as_object_mut() {
                        m.insert("digest".into(), digest.into());
                    }
                }
            }
            if let Some(p) = first_problem(check_capability_document, &doc, &at) {
                return Err(p);
            }
            out.push(doc);
        }
        Ok(Catalog { docs: out })
    }

    /// The documents, in catalog order.
    pub fn documents(&self) -> &[Value] {
        &self.docs
    }

    /// The capability ids, trimmed, in catalog order.
    pub fn ids(&self) -> Vec<String> {
        self.docs
            .iter()
            .map(|d| d["id"].as_str().unwrap_or_default().trim().to_owned())
            .collect()
    }

    /// The brief projection: `{id, summary}` per entry, in catalog order.
    pub fn brief(&self) -> Vec<Value> {
        self.docs
            .iter()
            .map(|d| {
                json!({
                    "id": d["id"].as_str().unwrap_or_default().trim(),
                    "summary": d["summary"].as_str().unwrap_or_default().trim(),
                })
            })
            .collect()
    }

    /// The rich catalog payload (`ext["agh.capability_catalog"]`): every entry, or only those
    /// whose id is in `ids` (catalog order kept; unknown ids match nothing). Members that are
    /// empty (`""`, `[]`, `null`) are omitted.
    pub fn rich(&self, ids: Option<&[String]>) -> Value {
        let entries: Vec<Value> = self
            .docs
            .iter()
            .filter(|d| {
                let id = d["id"].as_str().unwrap_or_default().trim();
                ids.is_none_or(|ids| ids.iter().any(|x| x.trim() == id))
            })
            .map(|d| {
                let mut entry = d.clone();
                if let Some(m) = entry.as_object_mut() {
                    m.retain(|_, v| !is_empty(v));
                }
                entry
            })
            .collect();
        json!({ "capabilities": entries })
    }
}

fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.trim().is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// Builds a Peer Card that always carries the four arrays, with the catalog's brief projection.
#[derive(Clone, Debug)]
pub struct PeerCardBuilder {
    peer_id: String,
    display_name: Option<String>,
    profiles: Vec<String>,
    artifacts: Vec<String>,
    trust_modes: Vec<String>,
    ext: Map<String, Value>,
}

impl PeerCardBuilder {
    /// A card for `peer_id` supporting the core profile (`agh-network/v0`), with empty artifact
    /// and trust-mode lists.
    pub fn new(peer_id: &str) -> Self {
        let profile = crate::generated::rules::KINDS
            .first()
            .map(|k| k.rules.profile.to_owned());
        PeerCardBuilder {
            peer_id: peer_id.to_owned(),
            display_name: None,
            profiles: profile.into_iter().collect(),
            artifacts: Vec::new(),
            trust_modes: Vec::new(),
            ext: Map::new(),
        }
    }

    /// A human-readable label.
    pub fn display_name(mut self, name: &str) -> Self {
        self.display_name = Some(name.to_owned());
        self
    }

    /// Adds a supported profile.
    pub fn profile(mut self, profile: &str) -> Self {
        self.profiles.push(profile.to_owned());
        self
    }

    /// Adds a supported artifact type (`capability` for unified capability transfer).
    pub fn artifact(mut self, artifact: &str) -> Self {
        self.artifacts.push(artifact.to_owned());
        self
    }

    /// Adds a trust mode (`unverified`, ...).
    pub fn trust_mode(mut self, mode: &str) -> Self {
        self.trust_modes.push(mode.to_owned());
        self
    }

    /// Adds an extension key to `peer_card.ext`.
    pub fn ext(mut self, key: &str, value: Value) -> Self {
        self.ext.insert(key.to_owned(), value);
        self
    }

    /// The card. With a catalog, `capabilities` lists its ids and `ext["agh.capabilities_brief"]`
    /// its brief projection; without one, `capabilities` is `[]` and there is no brief key. The
    /// card is checked against the Peer Card schema (problems point at `/peer_card/...`).
    pub fn build(&self, catalog: Option<&Catalog>) -> Result<PeerCard, Problem> {
        let mut ext = self.ext.clone();
        ext.remove(BRIEF_KEY);
        let capabilities = match catalog {
            Some(c) => {
                ext.insert(BRIEF_KEY.into(), Value::Array(c.brief()));
                c.ids()
            }
            None => Vec::new(),
        };
        let mut card = json!({
            "peer_id": self.peer_id,
            "profiles_supported": self.profiles,
            "capabilities": capabilities,
            "artifacts_supported": self.artifacts,
            "trust_modes_supported": self.trust_modes,
        });
        if let Some(name) = &self.display_name {
            card["display_name"] = name.clone().into();
        }
        if !ext.is_empty() {
            card["ext"] = Value::Object(ext);
        }
        if let Some(p) = first_problem(check_peer_card, &card, "/peer_card") {
            return Err(p);
        }
        serde_json::from_value(card).map_err(|e| {
            Problem::new(
                ReasonCode::Malformed,
                "/peer_card",
                "peer discovery: Peer Card",
                e.to_string(),
            )
        })
    }
}

/// Whether a whois `query` matches a Peer Card (NOTES 7): an empty or absent query, or one equal
/// to the peer id, the display name, one capability, profile, artifact type or trust mode.
pub fn whois_matches(query: Option<&str>, card: &PeerCard) -> bool {
    let Some(q) = query.map(str::trim).filter(|q| !q.is_empty()) else {
        return true;
    };
    *card.peer_id == q
        || card.display_name.as_deref() == Some(q)
        || [
            &card.capabilities,
            &card.profiles_supported,
            &card.artifacts_supported,
            &card.trust_modes_supported,
        ]
        .iter()
        .any(|list| list.iter().any(|x| x == q))
}

/// The rich catalog a whois request asks for, if it asks (`ext["agh.include"]` contains
/// `capability_catalog`): `{"capabilities": [...]}`, `[]` without a catalog.
pub fn requested_catalog(
    request_ext: &Map<String, Value>,
    catalog: Option<&Catalog>,
) -> Option<Value> {
    let wants = request_ext
        .get(INCLUDE_KEY)
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(INCLUDE_CATALOG)));
    if !wants {
        return None;
    }
    let ids: Option<Vec<String>> = request_ext.get(IDS_KEY).and_then(Value::as_array).map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect()
    });
    Some(match catalog {
        Some(c) => c.rich(ids.as_deref()),
        None => json!({ "capabilities": [] }),
    })
}

/// Answers a whois request as the local peer: `Ok(None)` when the request is not a request, or
/// does not match and is not directed to the local peer; otherwise the response, directed to the
/// requester with `reply_to` = the request id, carrying the card (with its brief projection) and,
/// when asked for, the rich catalog in the envelope `ext`. A response that would break a rule —
/// the envelope size limit among them — is refused here, before emission.
pub fn answer_whois(
    request: &Message,
    card: &PeerCard,
    catalog: Option<&Catalog>,
    response_id: &str,
    now: i64,
) -> Result<Option<Message>, Rejection> {
    let env = request.envelope();
    let Some(crate::KnownBody::Whois(body)) = request.known() else {
        return Ok(None);
    };
    if body.type_.to_string() != "request" {
        return Ok(None);
    }
    let directed = env.to.as_ref().is_some_and(|to| **to == *card.peer_id);
    if !directed && !whois_matches(body.query.as_deref(), card) {
        return Ok(None);
    }
    let response: WhoisBody = serde_json::from_value(json!({
        "type": "response",
        "peer_card": card,
    }))
    .map_err(|e| {
        Rejection::from_problem(Problem::new(
            ReasonCode::Internal,
            "/body",
            "whois",
            e.to_string(),
        ))
    })?;
    let mut builder = MessageBuilder::new(&env.workspace_id, &env.channel, &card.peer_id)
        .id(response_id)
        .ts(now)
        .to(&env.from)
        .reply_to(&env.id);
    if let Some(rich) = requested_catalog(&env.ext, catalog) {
        if let Some(p) = first_problem(
            check_capability_catalog,
            &rich,
            &format!("/ext/{CATALOG_KEY}"),
        ) {
            return Err(Rejection::from_problem(p));
        }
        builder = builder.ext(CATALOG_KEY, rich);
    }
    builder.body(&response).map(Some)
}

/// One peer known in a channel.
#[derive(Clone, Debug)]
pub struct PresenceEntry {
    /// Its card.
    pub card: PeerCard,
    /// When it was last seen (Unix seconds); local peers never expire.
    pub last_seen: i64,
    /// Whether the peer is local to this runtime.
    pub local: bool,
}

/// Channel-scoped presence: remote peers refreshed by `greet` and expired at
/// `last_seen + 2 x interval`; local peers shadow remote ones with the same `(channel, peer_id)`.
#[derive(Clone, Debug)]
pub struct PresenceRegistry {
    interval_secs: i64,
    remote: HashMap<(String, String), PresenceEntry>,
    local: HashMap<(String, String), PresenceEntry>,
}

impl Default for PresenceRegistry {
    fn default() -> Self {
        PresenceRegistry::new(Self::DEFAULT_INTERVAL_SECS)
    }
}

impl PresenceRegistry {
    /// The reference runtime's greet interval.
    pub const DEFAULT_INTERVAL_SECS: u64 = 30;

    /// A registry with this greet interval.
    pub fn new(interval_secs: u64) -> Self {
        PresenceRegistry {
            interval_secs: i64::try_from(interval_secs).unwrap_or(i64::MAX / 4),
            remote: HashMap::new(),
            local: HashMap::new(),
        }
    }

    /// Registers a local peer in `channel`.
    pub fn add_local(&mut self, channel: &str, card: PeerCard) {
        let key = (channel.to_owned(), card.peer_id.to_string());
        self.local.insert(
            key,
            PresenceEntry {
                card,
                last_seen: i64::MAX,
                local: true,
            },
        );
    }

    /// Removes a local peer.
    pub fn remove_local(&mut self, channel: &str, peer_id: &str) -> bool {
        self.local
            .remove(&(channel.to_owned(), peer_id.to_owned()))
            .is_some()
    }

    /// Records a remote peer's greet (or whois response) at `now`.
    pub fn refresh(&mut self, channel: &str, card: PeerCard, now: i64) {
        let key = (channel.to_owned(), card.peer_id.to_string());
        self.remote.insert(
            key,
            PresenceEntry {
                card,
                last_seen: now,
                local: false,
            },
        );
    }

    /// Records a parsed `greet` (other kinds are ignored); returns whether it refreshed presence.
    pub fn observe(&mut self, message: &Message) -> bool {
        match message.known() {
            Some(crate::KnownBody::Greet(g)) => {
                let env = message.envelope();
                let ts = i64::try_from(*env.ts).unwrap_or(i64::MAX);
                self.refresh(&env.channel, g.peer_card.clone(), ts);
                true
            }
            _ => false,
        }
    }

    fn alive(&self, entry: &PresenceEntry, now: i64) -> bool {
        entry.local || now < entry.last_seen.saturating_add(2 * self.interval_secs)
    }

    /// The peer `peer_id` in `channel` at `now`: the local one if any, else a remote one that has
    /// not expired.
    pub fn get(&self, channel: &str, peer_id: &str, now: i64) -> Option<&PresenceEntry> {
        let key = (channel.to_owned(), peer_id.to_owned());
        self.local
            .get(&key)
            .or_else(|| self.remote.get(&key).filter(|e| self.alive(e, now)))
    }

    /// The peers present in `channel` at `now`, each once (local shadowing remote), by peer id.
    pub fn peers(&self, channel: &str, now: i64) -> Vec<&PresenceEntry> {
        let mut out: Vec<&PresenceEntry> = self
            .local
            .iter()
            .filter(|((c, _), _)| c == channel)
            .map(|(_, e)| e)
            .collect();
        out.extend(self.remote.iter().filter_map(|((c, p), e)| {
            let shadowed = self.local.contains_key(&(c.clone(), p.clone()));
            (c == channel && !shadowed && self.alive(e, now)).then_some(e)
        }));
        out.sort_by(|a, b| a.card.peer_id.cmp(&b.card.peer_id));
        out
    }

    /// Forgets remote peers that expired before `now`; returns how many.
    pub fn expire(&mut self, now: i64) -> usize {
        let before = self.remote.len();
        let interval = self.interval_secs;
        self.remote
            .retain(|_, e| now < e.last_seen.saturating_add(2 * interval));
        before - self.remote.len()
    }
}
