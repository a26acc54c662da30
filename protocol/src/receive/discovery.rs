//! Peer discovery and capability discovery (the peer- and capability-discovery pages, NOTES
//! section 7): Peer Cards, the local capability catalog with its brief and rich projections,
//! whois matching and answering, and channel-scoped presence.
//!
//! Shapes are checked with the generated validators of the schema types (`PeerCard`,
//! `CapabilityDocument`, `CapabilityCatalog`), so what this module emits is what the schemas say.
//! The digests come from [`crate::recipes::digest`]. Nothing here reads a clock: `now` (Unix seconds) is
//! passed in.

use std::collections::{HashMap, VecDeque};

use serde::Serialize;
use serde_json::{json, Map, Value};

use crate::generated::checks::{
    check_capability_catalog, check_capability_document, check_peer_card,
};
use crate::generated::{CapabilityDocument, MAX_ENVELOPE_BYTES, PROFILE};
use crate::message::build::MessageBuilder;
use crate::message::parse::{Message, Rejection};
use crate::problem::{Problem, Problems, ReasonCode};
use crate::recipes::digest::{self, DigestInput, DIGEST_MEMBER};
use crate::{KnownBody, PeerCard, WhoisBody, WhoisBodyType};

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

/// The string members of a capability document that are trimmed in a catalog.
const STRING_MEMBERS: [&str; 4] = ["id", "summary", "outcome", "version"];
/// The list members whose blank entries are dropped in a catalog (`requirements`: trimmed only).
const LIST_MEMBERS: [&str; 5] = [
    "context_needed",
    "artifacts_expected",
    "execution_outline",
    "constraints",
    "examples",
];

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

/// A size-limit problem: `len` bytes where at most [`MAX_ENVELOPE_BYTES`] are allowed.
fn too_large(pointer: &str, what: &str, len: usize) -> Problem {
    Problem::new(
        ReasonCode::Malformed,
        pointer,
        "envelope: size limit",
        format!(
            "{what} is {len} bytes of JSON, over the envelope size limit of {MAX_ENVELOPE_BYTES} bytes"
        ),
    )
}

/// Whether `len` bytes of JSON fit the envelope size limit ([`MAX_ENVELOPE_BYTES`], 1 MiB):
/// `Err` (`malformed`, pointer `""`) when they do not.
pub fn check_encoded_size(len: usize) -> Result<(), Problem> {
    if len > MAX_ENVELOPE_BYTES {
        Err(too_large("", "the envelope", len))
    } else {
        Ok(())
    }
}

/// The compact JSON size of `envelope`, checked against the envelope size limit: a responder
/// calls it before emitting a response it built by hand ([`answer_whois`] checks its own).
pub fn check_envelope_size<T: Serialize + ?Sized>(envelope: &T) -> Result<usize, Problem> {
    let len = serde_json::to_vec(envelope)
        .map_err(|e| {
            Problem::new(
                ReasonCode::Internal,
                "",
                "envelope: size limit",
                e.to_string(),
            )
        })?
        .len();
    check_encoded_size(len).map(|()| len)
}

/// Trims the capability document's strings and list entries (dropping blank list entries;
/// `requirements` keeps its order), and removes `null`, blank `version` and empty lists. The
/// digest does not change (the recipe normalizes the same way). Other members are kept.
fn normalize(doc: &mut Map<String, Value>) {
    for name in STRING_MEMBERS {
        if let Some(Value::String(s)) = doc.get_mut(name) {
            let trimmed = digest::trim(s);
            if trimmed.len() != s.len() {
                *s = trimmed.to_owned();
            }
        }
    }
    for name in LIST_MEMBERS.iter().chain(&["requirements"]) {
        if let Some(Value::Array(items)) = doc.get_mut(*name) {
            for item in items.iter_mut() {
                if let Value::String(s) = item {
                    *s = digest::trim(s).to_owned();
                }
            }
            items.retain(|v| v.as_str().is_none_or(|s| !s.is_empty()));
        }
    }
    doc.retain(|name, v| {
        let known = STRING_MEMBERS.contains(&name.as_str())
            || LIST_MEMBERS.contains(&name.as_str())
            || name == "requirements";
        !known
            || !(v.is_null()
                || (name == "version" && v.as_str() == Some(""))
                || v.as_array().is_some_and(Vec::is_empty))
    });
}

/// A peer's local capability catalog: capability documents in catalog order, each normalized
/// (strings and list entries trimmed, blank list entries, blank `version` and empty lists
/// removed) and carrying its canonical digest, with unique ids.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Catalog {
    docs: Vec<Value>,
    ids: Vec<String>,
}

impl Catalog {
    /// A catalog of `docs` (capability documents, in catalog order). Each must be a valid
    /// capability document; a missing `digest` is computed, a wrong one is refused
    /// (`verification_failed`); an id that repeats an earlier one (after trimming) is refused.
    /// Problems point at `/<index>/...`.
    pub fn new(docs: Vec<Value>) -> Result<Catalog, Problem> {
        let mut out = Catalog {
            docs: Vec::with_capacity(docs.len()),
            ids: Vec::with_capacity(docs.len()),
        };
        let mut seen: HashMap<String, usize> = HashMap::with_capacity(docs.len());
        for (i, doc) in docs.into_iter().enumerate() {
            let at = format!("/{i}");
            let Value::Object(mut map) = doc else {
                return Err(Problem::new(
                    ReasonCode::Malformed,
                    at,
                    "capability document",
                    "a capability document is a JSON object",
                ));
            };
            let computed = DigestInput::from_map(&map)
                .and_then(|input| input.digest())
                .map_err(|e| e.under(&at).to_problem())?;
            match map.get(DIGEST_MEMBER) {
                None | Some(Value::Null) => {
                    map.insert(DIGEST_MEMBER.into(), computed.into());
                }
                Some(_) => {
                    digest::verify_map(&map).map_err(|e| e.under(&at).to_problem())?;
                }
            }
            normalize(&mut map);
            let doc = Value::Object(map);
            if let Some(p) = first_problem(check_capability_document, &doc, &at) {
                return Err(p);
            }
            let id = doc["id"].as_str().unwrap_or_default().to_owned();
            if let Some(first) = seen.insert(id.clone(), i) {
                return Err(Problem::new(
                    ReasonCode::Malformed,
                    format!("{at}/id"),
                    "capability discovery: catalog ids",
                    format!("capability id {id:?} repeats the id of entry {first}"),
                ));
            }
            out.ids.push(id);
            out.docs.push(doc);
        }
        Ok(out)
    }

    /// A catalog of typed capability documents (their digests are verified).
    pub fn from_documents(docs: &[CapabilityDocument]) -> Result<Catalog, Problem> {
        let values = docs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                serde_json::to_value(d).map_err(|e| {
                    Problem::new(
                        ReasonCode::Internal,
                        format!("/{i}"),
                        "capability document",
                        e.to_string(),
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Catalog::new(values)
    }

    /// The normalized documents, in catalog order, each with its `digest` (what a
    /// `kind: "capability"` transfer carries).
    pub fn documents(&self) -> &[Value] {
        &self.docs
    }

    /// The document with this id (trimmed), if any.
    pub fn document(&self, id: &str) -> Option<&Value> {
        let id = digest::trim(id);
        self.ids
            .iter()
            .position(|x| x == id)
            .and_then(|i| self.docs.get(i))
    }

    /// The number of capabilities.
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// Whether the catalog has no capability.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The capability ids, trimmed, in catalog order (`peer_card.capabilities`).
    pub fn ids(&self) -> Vec<String> {
        self.ids.clone()
    }

    /// The brief projection (`peer_card.ext["agh.capabilities_brief"]`): `{id, summary}` per
    /// entry, in catalog order.
    pub fn brief(&self) -> Vec<Value> {
        self.docs
            .iter()
            .map(|d| json!({ "id": d["id"], "summary": d["summary"] }))
            .collect()
    }

    /// The rich catalog payload (`ext["agh.capability_catalog"]`): every entry, or only those
    /// whose id is in `ids` (compared trimmed; catalog order kept; unknown ids match nothing, so
    /// an empty `ids` gives `[]`). Entries are the normalized documents: empty optional members
    /// are omitted, the digest is included.
    pub fn rich(&self, ids: Option<&[String]>) -> Value {
        let entries: Vec<Value> = self
            .ids
            .iter()
            .zip(&self.docs)
            .filter(|(id, _)| ids.is_none_or(|ids| ids.iter().any(|x| digest::trim(x) == *id)))
            .map(|(_, d)| d.clone())
            .collect();
        json!({ "capabilities": entries })
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
    /// and trust-mode lists. The peer id is checked by [`PeerCardBuilder::build`].
    pub fn new(peer_id: &str) -> Self {
        PeerCardBuilder {
            peer_id: peer_id.to_owned(),
            display_name: None,
            profiles: vec![PROFILE.to_owned()],
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

    /// Adds an extension key to `peer_card.ext`. The brief key is the catalog's to write and
    /// the rich catalog never rides in a Peer Card: `agh.capabilities_brief` and
    /// `agh.capability_catalog` given here are dropped.
    pub fn ext(mut self, key: &str, value: Value) -> Self {
        self.ext.insert(key.to_owned(), value);
        self
    }

    /// The card. With a non-empty catalog, `capabilities` lists its ids and
    /// `ext["agh.capabilities_brief"]` its brief projection; without one, `capabilities` is `[]`
    /// and there is no brief key. The card is checked against the Peer Card schema (problems
    /// point at `/peer_card/...`).
    pub fn build(&self, catalog: Option<&Catalog>) -> Result<PeerCard, Problem> {
        let mut ext = self.ext.clone();
        ext.remove(BRIEF_KEY);
        ext.remove(CATALOG_KEY);
        let capabilities = match catalog.filter(|c| !c.is_empty()) {
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

/// Whether a whois `query` matches a Peer Card (NOTES 7): an empty, blank or absent query, or
/// one equal (after trimming the query) to the peer id, the display name, one capability,
/// profile, artifact type or trust mode. Comparisons are exact (case-sensitive).
pub fn whois_matches(query: Option<&str>, card: &PeerCard) -> bool {
    let Some(q) = query.map(digest::trim).filter(|q| !q.is_empty()) else {
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

/// Whether the peer of `card` answers a whois request with this envelope `to` and body `query`:
/// a request directed to it is answered even when nothing matches; a request directed to another
/// peer is not answered; a broadcast request is answered when the query matches.
pub fn should_answer_whois(to: Option<&str>, query: Option<&str>, card: &PeerCard) -> bool {
    match to {
        Some(to) => to == card.peer_id.as_str(),
        None => whois_matches(query, card),
    }
}

/// Whether a whois request's `ext` asks for the rich catalog: `agh.include` is an array that
/// contains the string `capability_catalog` (other values are ignored; any other shape asks for
/// nothing).
pub fn wants_catalog(request_ext: &Map<String, Value>) -> bool {
    request_ext
        .get(INCLUDE_KEY)
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(INCLUDE_CATALOG)))
}

/// The rich catalog a whois request asks for, if it asks ([`wants_catalog`]):
/// `{"capabilities": [...]}`, narrowed by `agh.capability_ids` when that is an array (its string
/// entries are the filter), `[]` without a catalog.
pub fn requested_catalog(
    request_ext: &Map<String, Value>,
    catalog: Option<&Catalog>,
) -> Option<Value> {
    if !wants_catalog(request_ext) {
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

/// Answers a whois request as the local peer of `card`: `Ok(None)` when the message is not a
/// whois request, or [`should_answer_whois`] says no; otherwise the response, directed to the
/// requester with `reply_to` = the request id, carrying the card (with its brief projection)
/// and, when asked for, the rich catalog in the envelope `ext`. A response that would break a
/// rule, the envelope size limit among them, is refused here, before emission.
pub fn answer_whois(
    request: &Message,
    card: &PeerCard,
    catalog: Option<&Catalog>,
    response_id: &str,
    now: i64,
) -> Result<Option<Message>, Rejection> {
    answer_whois_signed(request, card, catalog, response_id, now, None)
}

/// [`answer_whois`] for a Verified Peer: the response is signed with `key` (trust profile
/// `agh-network.trust.ed25519-jcs/v1`; the card's `peer_id` is then the key's
/// `nickname@fingerprint`).
pub fn answer_whois_signed(
    request: &Message,
    card: &PeerCard,
    catalog: Option<&Catalog>,
    response_id: &str,
    now: i64,
    key: Option<&crate::trust::Key>,
) -> Result<Option<Message>, Rejection> {
    let env = request.envelope();
    let Some(KnownBody::Whois(body)) = request.known() else {
        return Ok(None);
    };
    if body.type_ != WhoisBodyType::Request {
        return Ok(None);
    }
    let to = env.to.as_deref();
    if !should_answer_whois(to, body.query.as_deref(), card) {
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
    if let Some(key) = key {
        builder = builder.sign(key);
    }
    let ext = match env.ext.map(|e| e.to_value()) {
        Some(Value::Object(ext)) => ext,
        _ => Map::new(),
    };
    if let Some(rich) = requested_catalog(&ext, catalog) {
        let at = format!("/ext/{CATALOG_KEY}");
        if let Some(p) = first_problem(check_capability_catalog, &rich, &at) {
            return Err(Rejection::from_problem(p));
        }
        // The catalog alone may already be too large: say so before building the envelope.
        let len = serde_json::to_vec(&rich).map_or(0, |b| b.len());
        if len > MAX_ENVELOPE_BYTES {
            return Err(Rejection::from_problem(too_large(
                &at,
                "the rich catalog",
                len,
            )));
        }
        builder = builder.ext(CATALOG_KEY, rich);
    }
    // The builder runs the parser, size limit included.
    builder.body(&response).map(Some)
}

/// One peer known in a channel.
#[derive(Clone, Debug)]
pub struct PresenceEntry {
    /// Its card.
    pub card: PeerCard,
    /// When it was last seen (Unix seconds, the receiver's clock); local peers never expire.
    pub last_seen: i64,
    /// Whether the peer is local to this runtime.
    pub local: bool,
}

/// Channel-scoped presence, keyed by `(channel, peer_id)`: remote peers are refreshed by
/// `greet` and expire at `last_seen + 2 x interval` (present while `now` is before that);
/// local peers never expire and shadow remote ones with the same key. The clock is passed in.
///
/// Remote entries are bounded: at most `cap` of them, holding at most `bytes_cap` bytes of
/// cards (as the caller sized them, e.g. the greet's length); past either bound the least
/// recently seen entry is forgotten ([`PresenceRegistry::refresh_sized`] returns it).
#[derive(Clone, Debug)]
pub struct PresenceRegistry {
    interval_secs: i64,
    remote: HashMap<(String, String), PresenceEntry>,
    local: HashMap<(String, String), PresenceEntry>,
    /// Per remote entry: its sequence number in `order` and its size in bytes.
    slots: HashMap<(String, String), (u64, usize)>,
    /// (sequence number, key), least recently seen first; stale numbers are skipped.
    order: VecDeque<(u64, (String, String))>,
    next_seq: u64,
    bytes: usize,
    cap: usize,
    bytes_cap: usize,
}

impl Default for PresenceRegistry {
    fn default() -> Self {
        PresenceRegistry::new(Self::DEFAULT_INTERVAL_SECS)
    }
}

impl PresenceRegistry {
    /// The reference runtime's greet interval.
    pub const DEFAULT_INTERVAL_SECS: u64 = 30;

    /// A registry with this greet interval (seconds; capped so that expiry times never
    /// overflow).
    pub fn new(interval_secs: u64) -> Self {
        PresenceRegistry {
            interval_secs: i64::try_from(interval_secs)
                .unwrap_or(i64::MAX)
                .min(i64::MAX / 4),
            remote: HashMap::new(),
            local: HashMap::new(),
            slots: HashMap::new(),
            order: VecDeque::new(),
            next_seq: 0,
            bytes: 0,
            cap: Self::DEFAULT_CAP,
            bytes_cap: Self::DEFAULT_BYTES_CAP,
        }
    }

    /// Default bound on remote entries.
    pub const DEFAULT_CAP: usize = 10_000;
    /// Default bound on the bytes of remote cards: 32 MiB.
    pub const DEFAULT_BYTES_CAP: usize = 32 << 20;

    /// The same registry holding at most `cap` remote entries (at least 1) of at most
    /// `bytes_cap` bytes in all.
    pub fn with_cap(mut self, cap: usize, bytes_cap: usize) -> Self {
        self.cap = cap.max(1);
        self.bytes_cap = bytes_cap;
        self.evict();
        self
    }

    /// The bound on remote entries.
    pub fn cap(&self) -> usize {
        self.cap
    }

    /// The bound on the bytes of remote cards.
    pub fn bytes_cap(&self) -> usize {
        self.bytes_cap
    }

    /// How many remote entries are kept (expired ones included until [`PresenceRegistry::expire`]).
    pub fn remote_len(&self) -> usize {
        self.remote.len()
    }

    /// The bytes of the remote cards kept.
    pub fn remote_bytes(&self) -> usize {
        self.bytes
    }

    /// [`PresenceRegistry::refresh`] of a card of `bytes` bytes; returns the entries forgotten to
    /// stay within the bounds, least recently seen first (the card itself when it alone is over
    /// the bytes bound).
    pub fn refresh_sized(
        &mut self,
        channel: &str,
        card: PeerCard,
        now: i64,
        bytes: usize,
    ) -> Vec<PresenceEntry> {
        let key = (channel.to_owned(), card.peer_id.to_string());
        let last_seen = self.remote.get(&key).map_or(now, |e| e.last_seen.max(now));
        let seq = self.next_seq;
        self.next_seq += 1;
        if let Some((_, old)) = self.slots.insert(key.clone(), (seq, bytes)) {
            self.bytes = self.bytes.saturating_sub(old);
        }
        self.bytes = self.bytes.saturating_add(bytes);
        self.order.push_back((seq, key.clone()));
        self.remote.insert(
            key,
            PresenceEntry {
                card,
                last_seen,
                local: false,
            },
        );
        self.evict()
    }

    /// Forgets the least recently seen remote entries while over a bound.
    fn evict(&mut self) -> Vec<PresenceEntry> {
        let mut out = Vec::new();
        while self.remote.len() > self.cap || self.bytes > self.bytes_cap {
            let Some((seq, key)) = self.order.pop_front() else {
                break;
            };
            if self.slots.get(&key).is_some_and(|(s, _)| *s == seq) {
                if let Some((_, size)) = self.slots.remove(&key) {
                    self.bytes = self.bytes.saturating_sub(size);
                }
                if let Some(e) = self.remote.remove(&key) {
                    out.push(e);
                }
            }
        }
        // Stale sequence numbers (refreshed or expired entries): keep the queue within twice
        // the entries.
        if self.order.len() > 2 * self.remote.len() + 64 {
            let slots = &self.slots;
            self.order
                .retain(|(seq, key)| slots.get(key).is_some_and(|(s, _)| s == seq));
        }
        out
    }

    /// The greet interval, seconds.
    pub fn interval_secs(&self) -> u64 {
        u64::try_from(self.interval_secs).unwrap_or(0)
    }

    /// When a remote peer last seen at `last_seen` expires: `last_seen + 2 x interval`.
    pub fn expiry(&self, last_seen: i64) -> i64 {
        last_seen.saturating_add(2 * self.interval_secs)
    }

    /// Registers (or replaces) a local peer in `channel`.
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

    /// Removes a local peer; whether there was one.
    pub fn remove_local(&mut self, channel: &str, peer_id: &str) -> bool {
        self.local
            .remove(&(channel.to_owned(), peer_id.to_owned()))
            .is_some()
    }

    /// Records a remote peer's greet in `channel` at `now`: its card replaces the previous one
    /// and `last_seen` moves to `now` (never backwards).
    pub fn refresh(&mut self, channel: &str, card: PeerCard, now: i64) {
        let bytes = serde_json::to_vec(&card).map_or(0, |b| b.len());
        self.refresh_sized(channel, card, now, bytes);
    }

    /// Records a parsed `greet` received at `now` (the receiver's clock, not the envelope's
    /// `ts`); other kinds are ignored. Returns whether it refreshed presence.
    pub fn observe(&mut self, message: &Message, now: i64) -> bool {
        match message.known() {
            Some(KnownBody::Greet(g)) => {
                let channel = message.channel().to_owned();
                self.refresh(&channel, g.peer_card.clone(), now);
                true
            }
            _ => false,
        }
    }

    fn alive(&self, entry: &PresenceEntry, now: i64) -> bool {
        entry.local || now < self.expiry(entry.last_seen)
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
        out.extend(self.remote.iter().filter_map(|(key, e)| {
            let shadowed = self.local.contains_key(key);
            (key.0 == channel && !shadowed && self.alive(e, now)).then_some(e)
        }));
        out.sort_by(|a, b| a.card.peer_id.cmp(&b.card.peer_id));
        out
    }

    /// The peers present in `channel` at `now` that answer a whois request with this `to` and
    /// `query` ([`should_answer_whois`]), by peer id.
    pub fn whois(
        &self,
        channel: &str,
        to: Option<&str>,
        query: Option<&str>,
        now: i64,
    ) -> Vec<&PresenceEntry> {
        self.peers(channel, now)
            .into_iter()
            .filter(|e| should_answer_whois(to, query, &e.card))
            .collect()
    }

    /// Forgets remote peers that have expired at `now`; returns how many.
    pub fn expire(&mut self, now: i64) -> usize {
        let before = self.remote.len();
        let interval = self.interval_secs;
        self.remote
            .retain(|_, e| now < e.last_seen.saturating_add(2 * interval));
        if self.remote.len() < before {
            let remote = &self.remote;
            let mut freed = 0;
            self.slots.retain(|k, (_, size)| {
                let keep = remote.contains_key(k);
                if !keep {
                    freed += *size;
                }
                keep
            });
            self.bytes = self.bytes.saturating_sub(freed);
            self.evict();
        }
        before - self.remote.len()
    }
}
