#!/usr/bin/env python3
"""Writes the single-envelope conformance fixtures under conformance/fixtures/.

Each case is written by hand below (a base envelope of the seed pages plus one change, the page
rule it tests and the verdict the pages require); this script only expands them into data files.
The capability digest is computed here independently of the Rust code, from NOTES section 6.
Run it from the repository root: python3 conformance/tools/make_fixtures.py
"""
import copy
import hashlib
import json
import os
import shutil
import sys

import fixture_numbers  # beside this script

NOW = 1776366000
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")

# ---------- the capability digest (NOTES section 6), written independently ----------
WS = "".join(chr(c) for c in [0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680] + list(range(0x2000, 0x200B)) + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000])


def go_str(s):
    out = ['"']
    for ch in s:
        o = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif ch in "<>&":
            out.append("\\u%04x" % o)
        elif o in (0x2028, 0x2029):
            out.append("\\u%04x" % o)
        elif ch == "\b":
            out.append("\\b")
        elif ch == "\f":
            out.append("\\f")
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif o < 0x20:
            out.append("\\u%04x" % o)
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def canonical(doc):
    parts = []
    for key in ["id", "summary", "outcome", "version"]:
        v = doc.get(key)
        v = (v or "").strip(WS)
        if key == "version" and not v:
            continue
        parts.append(go_str(key) + ":" + go_str(v))
    for key in ["context_needed", "artifacts_expected", "execution_outline", "constraints", "examples", "requirements"]:
        items = [x.strip(WS) for x in (doc.get(key) or [])]
        if key == "requirements":
            items = sorted(items, key=lambda s: s.encode("utf-8"))
        else:
            items = [x for x in items if x]
        if not items:
            continue
        parts.append(go_str(key) + ":[" + ",".join(go_str(x) for x in items) + "]")
    return "{" + ",".join(parts) + "}"


def digest(doc):
    return "sha256:" + hashlib.sha256(canonical(doc).encode("utf-8")).hexdigest()


# ---------- base envelopes (the seed pages' examples, with workspace_id and fresh ts) ----------
def env(kind, body, **extra):
    e = {
        "protocol": "agh-network/v0",
        "id": "msg_%s_base" % kind,
        "workspace_id": "ws_alpha",
        "kind": kind,
        "channel": "builders",
    }
    e.update(extra)
    e.setdefault("from", "ops-coordinator.session-42")
    e.setdefault("to", None)
    e["ts"] = NOW - 10
    e["body"] = body
    e["proof"] = None
    return e


PEER_CARD = {
    "peer_id": "patch-worker.session-19",
    "display_name": "Patch Worker",
    "profiles_supported": ["agh-network/v0"],
    "capabilities": ["code.patch", "test.run"],
    "artifacts_supported": ["capability"],
    "trust_modes_supported": ["unverified"],
}
CAPABILITY = {
    "id": "fix-go-migration-tests",
    "summary": "Repair failing Go migration tests and explain the change.",
    "outcome": "A validated patch summary with the corrected assertions.",
    "version": "1.2.0",
    "context_needed": ["repo", "incident bundle"],
    "artifacts_expected": ["patch summary"],
    "execution_outline": ["Replay the failing tests", "Diagnose the migration mismatch", "Propose a minimal patch"],
    "requirements": ["collect-failing-tests"],
}
CAPABILITY["digest"] = digest(CAPABILITY)

THREAD = {"surface": "thread", "thread_id": "thread_release_check_20260416"}
DIRECT = {"surface": "direct", "direct_id": "direct_99401d24bee62651d189e5a561785466"}

BASES = {
    "say": env("say", {"text": "Release branch staging is ready for smoke checks.", "intent": "notice",
                       "artifacts": [{"type": "git-ref", "repo": "github.com/acme/app", "ref": "refs/heads/staging"}]}, **THREAD),
    "say_direct": env("say", {"text": "Pinging you privately.", "intent": "handoff"}, **DIRECT,
                      **{"to": "patch-worker.session-19"}),
    "say_work": env("say", {"text": "Run the migration smoke test.", "intent": "request"}, **THREAD,
                    **{"to": "patch-worker.session-19", "work_id": "work_migration_check_20260416"}),
    "greet": env("greet", {"peer_card": PEER_CARD, "summary": "Available."}, **{"from": "patch-worker.session-19"}),
    "whois_request": env("whois", {"type": "request", "query": "test.run"}),
    "whois_response": env("whois", {"type": "response", "peer_card": PEER_CARD},
                          **{"from": "patch-worker.session-19", "to": "ops-coordinator.session-42", "reply_to": "msg_whois_req_001"}),
    "capability": env("capability", {"capability": CAPABILITY}, **THREAD,
                      **{"from": "capability-curator.session-7"}),
    "receipt": env("receipt", {"for_id": "msg_say_work_001", "status": "accepted", "detail": "Accepted."}, **THREAD,
                   **{"from": "patch-worker.session-19", "to": "ops-coordinator.session-42",
                      "work_id": "work_migration_check_20260416", "reply_to": "msg_say_work_001"}),
    "trace": env("trace", {"state": "completed", "message": "Passed.", "result": {"passed": True},
                           "artifact_refs": [{"type": "text/markdown", "uri": "agh://artifacts/report"}]}, **THREAD,
                 **{"from": "patch-worker.session-19", "to": "ops-coordinator.session-42",
                    "work_id": "work_migration_check_20260416"}),
}

DELETE = object()


def mutate(base, changes):
    e = copy.deepcopy(BASES[base])
    for path, value in changes.items():
        parts = path.strip("/").split("/")
        target = e
        for p in parts[:-1]:
            target = target[int(p)] if isinstance(target, list) else target[p]
        last = parts[-1]
        if value is DELETE:
            if isinstance(target, list):
                del target[int(last)]
            else:
                target.pop(last, None)
        elif isinstance(target, list):
            target[int(last)] = value
        else:
            target[last] = value
    return e


CASES = []


def case(group, name, rule, base, changes=None, reject=None, kind=None, raw=None, now=NOW, schema_agrees=True, preserved=None):
    """reject: (reason_code, pointer) or None for accept; preserved: {pointer: JSON text} that a
    forwarder must write back byte for byte."""
    c = {"rule": rule, "now": now}
    if raw is not None:
        c["raw"] = raw
    else:
        c["envelope"] = mutate(base, changes or {})
    if reject:
        c["expect"] = {"verdict": "reject", "reason_code": reject[0], "pointer": reject[1]}
    else:
        k = kind or (c["envelope"]["kind"] if raw is None else None)
        c["expect"] = {"verdict": "accept", "kind": k}
        if preserved:
            c["expect"]["preserved"] = preserved
    c["schema_agrees"] = schema_agrees
    CASES.append((group, name, c))


M = "malformed"
E = "core.envelope"
K = "core.message-kinds"
X = "extension"

# --- accept every base ---
for b in BASES:
    case(K if b not in ("say",) else E, "accept_%s" % b, "message kinds: the page's example of `%s` is valid" % BASES[b]["kind"], b)

# --- JSON object ---
case(E, "reject_top_level_array", "envelope: the envelope is a JSON object", None, raw='[{"protocol":"agh-network/v0"}]', reject=(M, ""))
case(E, "reject_not_json", "envelope: the envelope is a JSON object", None, raw='{"protocol": agh}', reject=(M, "/protocol"))
case(E, "reject_trailing_data", "envelope: the envelope is one JSON object", None, raw=json.dumps(BASES["say"]) + " {}", reject=(M, ""))
case(E, "reject_duplicate_top_level_key", "strict JSON: duplicate member names are malformed", None,
     raw=json.dumps(BASES["say"])[:-1] + ', "channel": "other"}', reject=(M, "/channel"), schema_agrees=False)
body_dup = json.dumps(BASES["say"]).replace('"text": ', '"text": "first", "text": ', 1)
case(E, "reject_duplicate_body_key", "strict JSON: duplicate member names are malformed", None, raw=body_dup, reject=(M, "/body/text"), schema_agrees=False)
ext_dup = json.dumps(mutate("say", {"ext": {"acme.a": 1}}))[:-2] + ', "acme.a": 2}}'
case(X, "reject_duplicate_ext_key", "strict JSON: duplicate member names are malformed", None, raw=ext_dup, reject=(M, "/ext/acme.a"), schema_agrees=False)

# --- required fields ---
for f in ["protocol", "id", "workspace_id", "kind", "channel", "from", "ts", "body"]:
    case(E, "reject_missing_%s" % f, "envelope: `%s` is REQUIRED" % f, "say", {f: DELETE}, reject=(M, "/" + f))
# --- protocol ---
case(E, "reject_protocol_other_profile", "envelope: protocol MUST be agh-network/v0", "say", {"protocol": "agh-network/v1"}, reject=("unsupported_profile", "/protocol"))
case(E, "reject_protocol_not_string", "envelope: protocol MUST be agh-network/v0", "say", {"protocol": 0}, reject=(M, "/protocol"))
# --- id ---
case(E, "reject_id_empty", "envelope: id is a non-empty string", "say", {"id": ""}, reject=(M, "/id"))
case(E, "reject_id_number", "envelope: id is a string", "say", {"id": 7}, reject=(M, "/id"))
case(E, "accept_id_uuid", "envelope: UUIDs are RECOMMENDED for id", "say", {"id": "0f8fad5b-d9cb-469f-a165-70867728950e"})
# --- workspace_id ---
case(E, "reject_workspace_id_empty", "envelope: workspace_id is non-empty", "say", {"workspace_id": ""}, reject=(M, "/workspace_id"))
for n, v in [("dot", "ws.alpha"), ("space", "ws alpha"), ("star", "ws*"), ("gt", "ws>"), ("control", "ws\u0001")]:
    case(E, "reject_workspace_id_%s" % n, "NOTES 2: workspace_id has no `.`, space, `*`, `>` or control characters (NATS subject token)", "say", {"workspace_id": v}, reject=(M, "/workspace_id"))
case(E, "accept_workspace_id_mixed", "envelope: workspace_id is a stable id", "say", {"workspace_id": "Acme_WS-01"})
# --- kind ---
case(K, "reject_kind_direct", "message kinds: implementations MUST reject kind:\"direct\"", "say", {"kind": "direct"}, reject=(M, "/kind"))
case(E, "reject_kind_unknown", "envelope: kind MUST be one of the six kinds", "say", {"kind": "poll"}, reject=("unsupported_kind", "/kind"))
case(E, "reject_kind_not_string", "envelope: kind is a string", "say", {"kind": 3}, reject=(M, "/kind"))
# --- channel ---
for n, v in [("uppercase", "Builders"), ("leading_dash", "-builders"), ("dot", "build.ers"), ("empty", ""), ("too_long", "b" * 65)]:
    case(E, "reject_channel_%s" % n, "envelope: channel MUST match [a-z0-9][a-z0-9_-]{0,63}", "say", {"channel": v}, reject=(M, "/channel"))
case(E, "accept_channel_64", "envelope: channel MUST match [a-z0-9][a-z0-9_-]{0,63}", "say", {"channel": "b" * 64})
case(E, "accept_channel_digits_underscore", "envelope: channel MUST match [a-z0-9][a-z0-9_-]{0,63}", "say", {"channel": "0_team-a"})
# --- from / to ---
for n, v in [("uppercase", "Ops.session"), ("leading_dot", ".ops"), ("space", "ops coordinator"), ("too_long", "a" * 129), ("empty", "")]:
    case(E, "reject_from_%s" % n, "envelope: from MUST match [a-z0-9][a-z0-9._-]{0,127}", "say", {"from": v}, reject=(M, "/from"))
case(E, "accept_from_128", "envelope: from MUST match [a-z0-9][a-z0-9._-]{0,127}", "say", {"from": "a" * 128})
case(E, "reject_to_bad_grammar", "envelope: to MUST be a Peer ID", "say", {"to": "Patch Worker"}, reject=(M, "/to"))
case(E, "reject_to_number", "envelope: to is a string or null", "say", {"to": 19}, reject=(M, "/to"))
case(E, "accept_to_omitted", "envelope: to MUST be null or omitted for broadcast", "say", {"to": DELETE})
case(E, "accept_to_peer", "envelope: to MUST be a Peer ID when directed", "say", {"to": "patch-worker.session-19"})
# --- surface, containers ---
case(E, "reject_surface_unknown", "envelope: surface MUST be thread or direct", "say", {"surface": "room"}, reject=(M, "/surface"))
case(E, "reject_thread_id_empty", "envelope: thread_id is non-empty", "say", {"thread_id": ""}, reject=(M, "/thread_id"))
case(E, "accept_thread_id_page_form", "envelope: thread_id is a non-empty string (the page); the reference's stricter form is not required", "say", {"thread_id": "Release Thread"})
case(E, "reject_direct_id_pattern", "envelope: direct_id matches ^direct_[a-f0-9]{32}$", "say_direct", {"direct_id": "direct_99401D24BEE62651D189E5A561785466"}, reject=(M, "/direct_id"))
case(E, "reject_direct_id_short", "envelope: direct_id matches ^direct_[a-f0-9]{32}$", "say_direct", {"direct_id": "direct_abc"}, reject=(M, "/direct_id"))
case(E, "reject_both_containers", "envelope: thread_id and direct_id are mutually exclusive", "say", {"direct_id": DIRECT["direct_id"]}, reject=(M, "/direct_id"), schema_agrees=False)
case(E, "reject_thread_surface_without_thread_id", "envelope: thread_id REQUIRED when surface == thread", "say", {"thread_id": DELETE}, reject=(M, "/thread_id"), schema_agrees=False)
case(E, "reject_thread_surface_thread_id_null", "envelope: thread_id REQUIRED when surface == thread", "say", {"thread_id": None}, reject=(M, "/thread_id"), schema_agrees=False)
case(E, "reject_direct_surface_without_direct_id", "envelope: direct_id REQUIRED when surface == direct", "say_direct", {"direct_id": DELETE}, reject=(M, "/direct_id"), schema_agrees=False)
case(E, "reject_direct_surface_with_thread_id", "envelope: thread_id MUST be absent unless surface == thread", "say_direct", {"thread_id": "thread_x"}, reject=(M, "/thread_id"), schema_agrees=False)
case(E, "accept_direct_surface", "envelope: surface:direct with direct_id", "say_direct")
# --- work_id grammar ---
for n, v in [("prefix", "job_1"), ("empty_suffix", "work_"), ("dot", "work_a.b"), ("too_long", "work_" + "a" * 65)]:
    case(E, "reject_work_id_%s" % n, "envelope: work_id matches ^work_[a-zA-Z0-9_-]{1,64}$", "say_work", {"work_id": v}, reject=(M, "/work_id"))
case(E, "accept_work_id_64", "envelope: work_id matches ^work_[a-zA-Z0-9_-]{1,64}$", "say_work", {"work_id": "work_" + "A" * 64})
# --- reply_to, trace_id, causation_id ---
for f in ["reply_to", "trace_id", "causation_id"]:
    case(E, "reject_%s_empty" % f, "NOTES 2: %s is a non-empty string when present" % f, "say", {f: ""}, reject=(M, "/" + f))
    case(E, "reject_%s_null" % f, "NOTES 1: %s is typed without null and must not be null" % f, "say", {f: None}, reject=(M, "/" + f))
    case(E, "accept_%s" % f, "envelope: %s MAY be present" % f, "say", {f: "msg_01jz8f5p4q0n3a2b1c9d8e7f6a"})
# --- ts, expires_at ---
case(E, "reject_ts_string", "envelope: ts is an integer", "say", {"ts": str(NOW)}, reject=(M, "/ts"))
case(E, "reject_ts_float", "envelope: ts is an integer", "say", {"ts": NOW + 0.5}, reject=(M, "/ts"))
case(E, "reject_ts_negative", "envelope: ts >= 0", "say", {"ts": -1}, reject=(M, "/ts"))
case(E, "reject_ts_exponent", "envelope: ts is an integer written as one (the reference decodes ts into an int64, which refuses 1.77636599e9; JSON Schema counts it as an integer)", None,
     raw=json.dumps(BASES["say"]).replace('"ts": %d' % (NOW - 10), '"ts": 1.77636599e9'), reject=(M, "/ts"), schema_agrees=False)
case(E, "reject_ts_beyond_i64", "NOTES 3: a ts far in the future is refused (18446744073709551615 fits the schema's integer)", "say", {"ts": 18446744073709551615}, reject=("expired", "/ts"), schema_agrees=False)
case(E, "reject_ts_null", "envelope: ts is REQUIRED and an integer", "say", {"ts": None}, reject=(M, "/ts"))
case(E, "reject_expires_at_null", "NOTES 1: expires_at is typed without null", "say", {"expires_at": None}, reject=(M, "/expires_at"))
case(E, "reject_expires_at_string", "envelope: expires_at is an integer", "say", {"expires_at": "soon"}, reject=(M, "/expires_at"))
# --- freshness ---
case(E, "reject_expires_at_equal_now", "envelope: receivers MUST reject expires_at at or before receiver time", "say", {"expires_at": NOW}, reject=("expired", "/expires_at"), schema_agrees=False)
case(E, "reject_expires_at_past", "envelope: receivers MUST reject messages whose expires_at has passed", "say", {"expires_at": NOW - 1}, reject=("expired", "/expires_at"), schema_agrees=False)
case(E, "accept_expires_at_future", "envelope: expires_at after the receiver's clock", "say", {"expires_at": NOW + 1})
case(E, "accept_old_ts_with_future_expires_at", "envelope: expires_at decides when present", "say", {"ts": NOW - 3600, "expires_at": NOW + 60})
case(E, "reject_replay_age_exceeded", "envelope: without expires_at, reject messages older than the replay age (300 s)", "say", {"ts": NOW - 301}, reject=("expired", "/ts"), schema_agrees=False)
case(E, "accept_replay_age_boundary", "envelope: a message exactly 300 s old is within the replay age", "say", {"ts": NOW - 300})
case(E, "reject_ts_far_future", "NOTES 3: ts more than the replay age in the future is refused", "say", {"ts": NOW + 301}, reject=("expired", "/ts"), schema_agrees=False)
case(E, "accept_ts_slightly_future", "NOTES 3: small clock skew is accepted", "say", {"ts": NOW + 30})
# --- body, proof, ext, unknown members ---
case(E, "reject_body_array", "envelope: body is an object", "say", {"body": []}, reject=(M, "/body"))
case(E, "reject_body_null", "envelope: body is an object", "say", {"body": None}, reject=(M, "/body"))
case(E, "accept_proof_object", "envelope: proof is an object or null (v0 receivers MUST NOT require proof processing)", "say", {"proof": {"alg": "none"}})
case(E, "accept_proof_omitted", "envelope: proof MAY be null or omitted", "say", {"proof": DELETE})
case(E, "reject_proof_string", "envelope: proof is an object or null", "say", {"proof": "sig"}, reject=(M, "/proof"))
case(X, "accept_unknown_ext_keys", "envelope: receivers MUST ignore unknown extension keys", "say", {"ext": {"acme.priority": "high", "zz.nested": {"a": [1, 2]}}})
case(X, "accept_empty_ext", "envelope: ext is an object", "say", {"ext": {}})
case(X, "reject_ext_null", "NOTES 1: ext is typed without null", "say", {"ext": None}, reject=(M, "/ext"))
case(X, "reject_ext_array", "envelope: ext is an object", "say", {"ext": ["acme"]}, reject=(M, "/ext"))
case(E, "reject_unknown_top_level_member", "envelope: additionalProperties false", "say", {"priority": "high"}, reject=(M, "/priority"))
case(E, "reject_interaction_id", "NOTES 1: interaction_id is a legacy field and is rejected", "say", {"interaction_id": "int_1"}, reject=(M, "/interaction_id"))
# --- discovery kinds: no conversation or work fields ---
for b in ["greet", "whois_request"]:
    k = BASES[b]["kind"]
    case(K, "reject_%s_with_surface" % k, "message kinds: %s MUST NOT carry surface" % k, b, {"surface": "thread", "thread_id": "thread_x"}, reject=(M, "/surface"), schema_agrees=False)
    case(K, "reject_%s_with_thread_id" % k, "message kinds: %s MUST NOT carry thread_id" % k, b, {"thread_id": "thread_x"}, reject=(M, "/thread_id"), schema_agrees=False)
    case(K, "reject_%s_with_direct_id" % k, "message kinds: %s MUST NOT carry direct_id" % k, b, {"direct_id": DIRECT["direct_id"]}, reject=(M, "/direct_id"), schema_agrees=False)
    case(K, "reject_%s_with_work_id" % k, "message kinds: %s MUST NOT carry work_id" % k, b, {"work_id": "work_1"}, reject=(M, "/work_id"), schema_agrees=False)
    case(K, "accept_%s_with_null_surface" % k, "NOTES 1: null means absent for surface", b, {"surface": None, "work_id": None})
case(K, "reject_greet_with_to", "message kinds: greet `to` MUST be null or omitted", "greet", {"to": "ops-coordinator.session-42"}, reject=(M, "/to"), schema_agrees=False)
case(K, "accept_greet_without_to", "message kinds: greet `to` MUST be null or omitted", "greet", {"to": DELETE})
case(K, "reject_greet_peer_id_mismatch", "message kinds: body.peer_card.peer_id MUST match from", "greet", {"from": "someone-else"}, reject=(M, "/body/peer_card/peer_id"), schema_agrees=False)
case(K, "reject_greet_peer_card_missing", "message kinds: greet peer_card is required", "greet", {"body/peer_card": DELETE}, reject=(M, "/body/peer_card"))
for arr in ["profiles_supported", "capabilities", "artifacts_supported", "trust_modes_supported"]:
    case(K, "reject_peer_card_missing_%s" % arr, "peer discovery: Peer Card %s MUST be present" % arr, "greet", {"body/peer_card/" + arr: DELETE}, reject=(M, "/body/peer_card/" + arr))
    case(K, "reject_peer_card_null_%s" % arr, "capability discovery: arrays are never null", "greet", {"body/peer_card/" + arr: None}, reject=(M, "/body/peer_card/" + arr))
    case(K, "accept_peer_card_empty_%s" % arr, "peer discovery: arrays MUST be present even when empty", "greet", {"body/peer_card/" + arr: []})
case(K, "reject_peer_card_peer_id_grammar", "peer discovery: peer_id is a Peer ID", "greet", {"body/peer_card/peer_id": "Patch Worker", "from": "patch-worker.session-19"}, reject=(M, "/body/peer_card/peer_id"))
case(K, "reject_peer_card_capability_not_string", "peer discovery: capabilities is an array of strings", "greet", {"body/peer_card/capabilities": ["test.run", 7]}, reject=(M, "/body/peer_card/capabilities/1"))
case(X, "accept_peer_card_brief_ext", "capability discovery: brief projection in peer_card.ext", "greet",
     {"body/peer_card/ext": {"agh.capabilities_brief": [{"id": "code.patch", "summary": "Patch code."}, {"id": "test.run", "summary": "Run tests."}]}})
for label, summary in [("multi_line", "Patch code.\nThen run tests."), ("blank", "\u0085 ")]:
    case(X, "reject_peer_card_brief_summary_%s" % label, "capability discovery: a brief entry's summary is its catalog entry's, one line and not blank", "greet",
         {"body/peer_card/ext": {"agh.capabilities_brief": [{"id": "code.patch", "summary": summary}]}},
         reject=(M, "/body/peer_card/ext/agh.capabilities_brief/0/summary"))
case(K, "accept_greet_body_unknown_member", "NOTES 1: bodies are open objects", "greet", {"body/acme.note": "x"})
# --- whois ---
case(K, "reject_whois_type_unknown", "message kinds: whois type MUST be request or response", "whois_request", {"body/type": "answer"}, reject=(M, "/body/type"))
case(K, "reject_whois_type_missing", "message kinds: whois type is required", "whois_request", {"body/type": DELETE}, reject=(M, "/body/type"))
case(K, "reject_whois_request_with_peer_card", "message kinds: peer_card MUST NOT be present for request", "whois_request", {"body/peer_card": PEER_CARD}, reject=(M, "/body/peer_card"))
case(K, "accept_whois_request_null_peer_card", "NOTES 1: null means absent", "whois_request", {"body/peer_card": None})
case(K, "accept_whois_directed_request", "message kinds: whois `to` MAY be a Peer ID for targeted discovery", "whois_request", {"to": "patch-worker.session-19"})
case(K, "accept_whois_request_without_query", "peer discovery: an empty query matches every peer", "whois_request", {"body/query": DELETE})
case(K, "reject_whois_response_without_peer_card", "message kinds: peer_card MUST be present for response", "whois_response", {"body/peer_card": DELETE}, reject=(M, "/body/peer_card"))
case(K, "reject_whois_response_null_peer_card", "message kinds: peer_card MUST be present for response", "whois_response", {"body/peer_card": None}, reject=(M, "/body/peer_card"))
case(K, "reject_whois_response_without_reply_to", "message kinds: reply_to MUST be present on responses", "whois_response", {"reply_to": DELETE}, reject=(M, "/reply_to"), schema_agrees=False)
case(K, "reject_whois_response_peer_id_mismatch", "NOTES 7: a whois-response Peer Card peer_id must equal from", "whois_response", {"from": "someone-else"}, reject=(M, "/body/peer_card/peer_id"), schema_agrees=False)
case(X, "accept_whois_rich_catalog_request", "capability discovery: agh.include requests the rich catalog", "whois_request", {"to": "designer.session-19", "ext": {"agh.include": ["capability_catalog"], "agh.capability_ids": ["build-site"]}})
# --- conversation kinds: surface required ---
for b in ["say", "capability", "receipt", "trace"]:
    k = BASES[b]["kind"]
    case(K, "reject_%s_without_surface" % k, "message kinds: %s MUST carry surface and matching container ID" % k, b, {"surface": DELETE, "thread_id": DELETE}, reject=(M, "/surface"), schema_agrees=False)
    case(K, "reject_%s_surface_null" % k, "message kinds: %s MUST carry surface" % k, b, {"surface": None}, reject=(M, "/surface"), schema_agrees=False)
    case(K, "accept_%s_in_direct_room" % k, "message kinds: conversation kinds work in a direct room", b, {"surface": "direct", "thread_id": DELETE, "direct_id": DIRECT["direct_id"]})
for b in ["receipt", "trace"]:
    k = BASES[b]["kind"]
    case(K, "reject_%s_without_work_id" % k, "message kinds: work_id REQUIRED on %s" % k, b, {"work_id": DELETE}, reject=(M, "/work_id"), schema_agrees=False)
    case(K, "reject_%s_work_id_null" % k, "message kinds: work_id REQUIRED on %s" % k, b, {"work_id": None}, reject=(M, "/work_id"), schema_agrees=False)
case(K, "accept_say_without_work_id", "message kinds: say without work_id is free-form discussion", "say")
case(K, "accept_say_with_work_id", "message kinds: say MAY carry work_id", "say_work")
case(K, "accept_capability_without_work_id", "message kinds: capability work_id OPTIONAL when not work-linked", "capability")
case(K, "accept_capability_with_work_id", "message kinds: capability MUST carry work_id when work-linked", "capability", {"work_id": "work_cap_1", "to": "patch-worker.session-19"})
# --- say body ---
case(K, "reject_say_text_missing", "message kinds: say text is required", "say", {"body/text": DELETE}, reject=(M, "/body/text"))
case(K, "reject_say_text_blank", "message kinds: say text MUST be non-empty after trimming", "say", {"body/text": " \t\n "}, reject=(M, "/body/text"))
case(K, "reject_say_text_empty", "message kinds: say text MUST be non-empty after trimming", "say", {"body/text": ""}, reject=(M, "/body/text"))
case(K, "reject_say_text_number", "message kinds: say text is a string", "say", {"body/text": 42}, reject=(M, "/body/text"))
case(K, "accept_say_text_padded", "message kinds: say text non-empty after trimming", "say", {"body/text": "  ok  "})
case(K, "reject_say_artifacts_object", "message kinds: artifacts is an array", "say", {"body/artifacts": {"type": "git-ref"}}, reject=(M, "/body/artifacts"))
case(K, "reject_say_artifact_not_object", "message kinds: artifacts holds JSON artifact descriptors", "say", {"body/artifacts": ["refs/heads/staging"]}, reject=(M, "/body/artifacts/0"))
case(K, "reject_say_intent_number", "message kinds: intent is a string", "say", {"body/intent": 1}, reject=(M, "/body/intent"))
case(K, "accept_say_intent_null", "NOTES 1: optional body members may be null", "say", {"body/intent": None, "body/artifacts": None})
case(K, "accept_say_body_unknown_member", "NOTES 1: bodies are open objects", "say", {"body/acme.mood": "calm"})
# --- capability body ---
case(K, "reject_capability_missing_document", "message kinds: the body MUST contain a capability object", "capability", {"body/capability": DELETE}, reject=(M, "/body/capability"))
for f in ["id", "summary", "outcome", "digest"]:
    case(K, "reject_capability_missing_%s" % f, "message kinds: capability %s is required" % f, "capability", {"body/capability/" + f: DELETE}, reject=(M, "/body/capability/" + f))
case(K, "reject_capability_digest_mismatch", "message kinds: receivers MUST reject digest mismatches with verification_failed", "capability",
     {"body/capability/summary": "A different summary."}, reject=("verification_failed", "/body/capability/digest"), schema_agrees=False)
case(K, "reject_capability_digest_shape", "message kinds: digest is the canonical sha256 digest", "capability", {"body/capability/digest": "sha1:abc"}, reject=(M, "/body/capability/digest"))
case(K, "reject_capability_requirement_blank", "message kinds: requirements entries MUST be non-empty", "capability", {"body/capability/requirements": ["  "]}, reject=(M, "/body/capability/requirements/0"))
case(K, "reject_capability_requirements_duplicate_after_trim", "message kinds: requirements unique after normalization", "capability",
     {"body/capability/requirements": ["collect-failing-tests", " collect-failing-tests "]}, reject=(M, "/body/capability/requirements/1"), schema_agrees=False)
cap_extra = copy.deepcopy(CAPABILITY)
cap_extra["workspace_id"] = "ws_alpha"
case(K, "accept_capability_document_extra_member", "NOTES 1: capability documents are open objects (the page's example carries workspace_id)", "capability", {"body/capability": cap_extra})
cap_ws = copy.deepcopy(CAPABILITY)
cap_ws.update({"summary": "  Padded <b>summary</b> & more  ", "examples": ["", "e.g. \u2028 line"], "requirements": ["zeta", "alpha"], "version": ""})
cap_ws["digest"] = digest(cap_ws)
case(K, "accept_capability_digest_normalized", "NOTES 6: digest over trimmed strings, blank entries dropped, requirements sorted, Go escaping", "capability", {"body/capability": cap_ws})
# Unicode White_Space (NOTES 2): the trim of the digest recipe; ECMA-262's \\s differs on both.
case(K, "reject_say_text_nel_only", "NOTES 2: say text of U+0085 (NEL, Unicode White_Space) alone is blank", "say", {"body/text": "\u0085"}, reject=(M, "/body/text"))
case(K, "reject_say_text_white_space_mix", "NOTES 2: say text of Unicode White_Space alone is blank", "say", {"body/text": "\u2028\u00a0\u3000\u0085 \t"}, reject=(M, "/body/text"))
case(K, "accept_say_text_bom_only", "NOTES 2: U+FEFF (BOM) is not Unicode White_Space: say text of it alone is not blank", "say", {"body/text": "\ufeff"})
case(K, "reject_capability_requirement_nel_only", "NOTES 2: a requirements entry of U+0085 alone is blank", "capability", {"body/capability/requirements": ["\u0085"]}, reject=(M, "/body/capability/requirements/0"))
for label, brk in [("lf", "\n"), ("cr", "\r"), ("nel", "\u0085"), ("line_separator", "\u2028"), ("paragraph_separator", "\u2029")]:
    cap_lines = copy.deepcopy(CAPABILITY)
    cap_lines["summary"] = "Repair failing tests." + brk + "Explain the change."
    cap_lines["digest"] = digest(cap_lines)
    case(K, "reject_capability_summary_multi_line_%s" % label, "message kinds / NOTES 2: capability summary MUST be one line (no U+000A, U+000D, U+0085, U+2028, U+2029)", "capability",
         {"body/capability": cap_lines}, reject=(M, "/body/capability/summary"))
cap_bom = copy.deepcopy(CAPABILITY)
cap_bom["summary"] = "\ufeff"
cap_bom["digest"] = digest(cap_bom)
case(K, "accept_capability_summary_bom_only", "NOTES 2: a summary of U+FEFF alone is one line and not blank", "capability", {"body/capability": cap_bom})
cap_tab = copy.deepcopy(CAPABILITY)
cap_tab["summary"] = "Repair\tfailing tests\u00a0now."
cap_tab["digest"] = digest(cap_tab)
case(K, "accept_capability_summary_tab_and_nbsp", "NOTES 2: a tab or no-break space is not a line break: still one line", "capability", {"body/capability": cap_tab})


# Numbers in open content (NOTES 1, issue #20): any valid JSON number, kept as written; range rules
# only for the members the schemas type as integers.
def with_number(base, changes, number):
    return json.dumps(mutate(base, changes), ensure_ascii=False).replace('"__NUMBER__"', number)


# `expect.preserved`: forwarded (the line protocol's `forward`), the number is written as it came.
for label, number in [("integer_beyond_64_bits", "18446744073709551616"), ("beyond_f64", "1e400")]:
    case(X, "accept_ext_%s" % label, "envelope: receivers MUST ignore unknown extension keys, whatever valid JSON they hold (%s), and keep them when forwarding" % number, None,
         raw=with_number("say", {"ext": {"acme.count": "__NUMBER__", "acme.nested": {"n": ["__NUMBER__"]}}}, number), kind="say",
         preserved={"/ext/acme.count": number, "/ext/acme.nested/n/0": number})
    case(K, "accept_trace_result_%s" % label, "message kinds: trace result is an open object; any JSON number in it is kept (%s)" % number, None,
         raw=with_number("trace", {"body/result": {"passed": True, "count": "__NUMBER__"}}, number), kind="trace",
         preserved={"/body/result/count": number})
    case(K, "accept_peer_card_unknown_member_%s" % label, "NOTES 1: Peer Cards are open objects; an unknown member may hold any JSON number (%s), kept when forwarded" % number, None,
         raw=with_number("greet", {"body/peer_card/acme.load": "__NUMBER__"}, number), kind="greet",
         preserved={"/body/peer_card/acme.load": number})
    case(K, "accept_artifact_descriptor_%s" % label, "message kinds: artifact descriptors are open objects (%s), kept when forwarded" % number, None,
         raw=with_number("say", {"body/artifacts/0/size": "__NUMBER__"}, number), kind="say",
         preserved={"/body/artifacts/0/size": number})

# Numbers of every size and spelling in every open member (issue 30 item 4): small, the i64/u64
# edges, between 2^64 and 2^128, beyond, decimals, exponents, beyond f64, `-0`. Each open object
# gets one member per number and an array of them all; each is written back byte for byte.
def with_numbers(base, at, extra=None):
    """`base` (with `extra` changes) holding every number of fixture_numbers.NUMBERS in the open
    object at pointer `at`: the raw text and the pointers to preserve."""
    return fixture_numbers.with_numbers(mutate(base, extra or {}), at, "acme.")


BRIEF = {"agh.capabilities_brief": [{"id": "code.patch", "summary": "Patch code."}, {"id": "test.run", "summary": "Run tests."}]}
OPEN_MEMBERS = [
    (X, "ext", "say", "/ext", {"ext": {}}, "envelope: ext keys hold any valid JSON"),
    (K, "say_body", "say", "/body", None, "message kinds: unknown body members are ignored and kept"),
    (K, "say_artifact", "say", "/body/artifacts/0", None, "message kinds: artifact descriptors are open objects"),
    (K, "greet_body", "greet", "/body", None, "message kinds: unknown body members are ignored and kept"),
    (K, "greet_peer_card", "greet", "/body/peer_card", None, "NOTES 1: Peer Cards are open objects"),
    (X, "greet_peer_card_ext", "greet", "/body/peer_card/ext", {"body/peer_card/ext": BRIEF}, "capability discovery: peer_card.ext holds any valid JSON"),
    (X, "greet_brief_entry", "greet", "/body/peer_card/ext/agh.capabilities_brief/0", {"body/peer_card/ext": BRIEF}, "capability discovery: brief entries are open objects"),
    (K, "whois_request_body", "whois_request", "/body", None, "message kinds: unknown body members are ignored and kept"),
    (K, "whois_response_body", "whois_response", "/body", None, "message kinds: unknown body members are ignored and kept"),
    (K, "whois_response_peer_card", "whois_response", "/body/peer_card", None, "NOTES 1: Peer Cards are open objects"),
    (K, "capability_body", "capability", "/body", None, "message kinds: unknown body members are ignored and kept"),
    (K, "capability_document", "capability", "/body/capability", None, "message kinds: capability documents are open (unknown members are not digested)"),
    (K, "receipt_body", "receipt", "/body", None, "message kinds: unknown body members are ignored and kept"),
    (K, "trace_body", "trace", "/body", None, "message kinds: unknown body members are ignored and kept"),
    (K, "trace_result", "trace", "/body/result", None, "message kinds: trace result is an open object"),
    (K, "trace_artifact_ref", "trace", "/body/artifact_refs/0", None, "message kinds: artifact descriptors are open objects"),
]
for group, label, base, at, extra, rule in OPEN_MEMBERS:
    raw, preserved = with_numbers(base, at, extra)
    case(group, "accept_numbers_in_%s" % label, rule + ": numbers of every size and spelling, kept byte for byte when forwarded", None,
         raw=raw, kind=BASES[base]["kind"], preserved=preserved)
case(E, "reject_ts_beyond_64_bits", "envelope: ts is an integer (Unix seconds); beyond 64 bits it is out of range", None,
     raw=with_number("say", {"ts": "__NUMBER__"}, "18446744073709551616"), reject=(M, "/ts"), schema_agrees=False)
case(E, "reject_expires_at_beyond_f64", "envelope: expires_at is an integer (Unix seconds)", None,
     raw=with_number("say", {"expires_at": "__NUMBER__"}, "1e400"), reject=(M, "/expires_at"))
# --- receipt body ---
case(K, "reject_receipt_status_unknown", "message kinds: receipt status enum", "receipt", {"body/status": "ok"}, reject=(M, "/body/status"))
case(K, "reject_receipt_for_id_missing", "message kinds: receipt for_id is required", "receipt", {"body/for_id": DELETE}, reject=(M, "/body/for_id"))
case(K, "reject_receipt_accepted_with_reason", "message kinds: reason_code MUST be absent for accepted", "receipt", {"body/reason_code": "busy"}, reject=(M, "/body/reason_code"))
case(K, "accept_receipt_accepted_reason_null", "NOTES 1: null means absent (the RFC's accepted receipt carries reason_code null)", "receipt", {"body/reason_code": None})
for st in ["rejected", "duplicate", "expired", "unsupported"]:
    case(K, "reject_receipt_%s_without_reason" % st, "message kinds: reason_code REQUIRED for %s" % st, "receipt", {"body/status": st}, reject=(M, "/body/reason_code"))
    case(K, "accept_receipt_%s_with_reason" % st, "message kinds: reason_code given for %s" % st, "receipt", {"body/status": st, "body/reason_code": {"rejected": "busy", "duplicate": "duplicate", "expired": "expired", "unsupported": "unsupported_kind"}[st]})
case(K, "accept_receipt_canceled_without_reason", "NOTES 5: reason_code optional for canceled", "receipt", {"body/status": "canceled"})
case(K, "accept_receipt_unknown_reason_code", "NOTES 5: reason_code SHOULD be a listed code; an unknown one is not malformed", "receipt", {"body/status": "rejected", "body/reason_code": "acme_quota"})
case(K, "reject_receipt_reason_code_empty", "message kinds: reason_code is a non-empty string", "receipt", {"body/status": "rejected", "body/reason_code": ""}, reject=(M, "/body/reason_code"))
case(K, "accept_receipt_without_to", "message kinds: receipt `to` SHOULD target the peer (not MUST)", "receipt", {"to": None})
cap_min = {"id": "min", "summary": "Minimal.", "outcome": "Done."}
cap_min["digest"] = digest(cap_min)
case(K, "accept_capability_minimal", "message kinds: only id, summary, outcome and digest are required", "capability", {"body/capability": cap_min})
case(K, "reject_capability_list_not_strings", "message kinds: context_needed is an array of strings", "capability", {"body/capability/context_needed": ["repo", 3]}, reject=(M, "/body/capability/context_needed/1"))
case(K, "reject_say_text_null", "message kinds: say text is a required string", "say", {"body/text": None}, reject=(M, "/body/text"))
case(K, "reject_greet_summary_number", "message kinds: greet summary is a string", "greet", {"body/summary": 5}, reject=(M, "/body/summary"))
case(K, "reject_peer_card_ext_array", "peer discovery: Peer Card ext is an object", "greet", {"body/peer_card/ext": []}, reject=(M, "/body/peer_card/ext"))
case(K, "reject_peer_card_display_name_number", "peer discovery: display_name is a string", "greet", {"body/peer_card/display_name": 1}, reject=(M, "/body/peer_card/display_name"))
case(K, "accept_whois_response_without_to", "message kinds: a whois response SHOULD be directed (not MUST)", "whois_response", {"to": None})
case(K, "reject_receipt_detail_number", "message kinds: receipt detail is a string", "receipt", {"body/detail": 7}, reject=(M, "/body/detail"))
case(K, "reject_trace_message_number", "message kinds: trace message is a string", "trace", {"body/message": 7}, reject=(M, "/body/message"))
# --- trace body ---
case(K, "reject_trace_state_unknown", "message kinds: trace state enum", "trace", {"body/state": "done"}, reject=(M, "/body/state"))
case(K, "reject_trace_state_missing", "message kinds: trace state is required", "trace", {"body/state": DELETE}, reject=(M, "/body/state"))
case(K, "reject_trace_result_array", "message kinds: trace result is an object", "trace", {"body/result": [1]}, reject=(M, "/body/result"))
case(K, "reject_trace_artifact_refs_object", "message kinds: artifact_refs is an array", "trace", {"body/artifact_refs": {}}, reject=(M, "/body/artifact_refs"))
for st in ["submitted", "working", "needs_input", "completed", "failed", "canceled"]:
    case(K, "accept_trace_state_%s" % st, "message kinds: trace state %s is a valid state" % st, "trace", {"body/state": st})


# ---------- sequences: the work lifecycle (NOTES 4) and delivery (NOTES 3, 5) ----------
O = "ops-coordinator.session-42"   # initiator
P = "patch-worker.session-19"      # target
X = "observer.session-7"           # a third peer
SEQUENCES = []
_seq = [0]


def msg(kind, frm, to, body, work_id="work_w1", container=("thread", "thread_t1"), ts=NOW, mid=None, **extra):
    _seq[0] += 1
    e = {"protocol": "agh-network/v0", "id": mid or "msg_%04d" % _seq[0], "workspace_id": "ws_alpha",
         "kind": kind, "channel": "builders"}
    if container:
        surface, cid = container
        e["surface"] = surface
        e["thread_id" if surface == "thread" else "direct_id"] = cid
    e["from"] = frm
    e["to"] = to
    if work_id:
        e["work_id"] = work_id
    e["ts"] = ts
    e["body"] = body
    e["proof"] = None
    e.update(extra)
    return e


def say(frm, to, text="Do the thing.", **kw):
    return msg("say", frm, to, {"text": text}, **kw)


def receipt(frm, to, status, for_id="msg_x", reason=None, **kw):
    body = {"for_id": for_id, "status": status}
    if reason:
        body["reason_code"] = reason
    return msg("receipt", frm, to, body, **kw)


def trace(frm, to, state, **kw):
    return msg("trace", frm, to, {"state": state}, **kw)


def lifecycle(name, rule, steps):
    """steps: (envelope, outcome, state_or_code)"""
    out = []
    for env_, outcome, extra in steps:
        exp = {"outcome": outcome}
        if outcome == "refused":
            exp["reason_code"] = extra
        elif outcome == "ignored":
            pass
        else:
            exp["state"] = extra
        out.append({"envelope": env_, "expect": exp})
    SEQUENCES.append(("core.lifecycle", name, {"rule": rule, "steps": out}))


DIRECT_ROOM = ("direct", "direct_0123456789abcdef0123456789abcdef")
for label, cont in [("thread", ("thread", "thread_t1")), ("direct", DIRECT_ROOM)]:
    lifecycle("full_unit_%s" % label, "lifecycle: open, accept, progress, needs_input, input, complete (%s)" % label, [
        (say(O, P, container=cont), "opened", "submitted"),
        (receipt(P, O, "accepted", container=cont), "transitioned", "working"),
        (trace(P, O, "working", container=cont), "unchanged", "working"),
        (trace(P, O, "needs_input", container=cont), "transitioned", "needs_input"),
        (say(O, P, "Here is the input.", container=cont), "transitioned", "working"),
        (trace(P, O, "completed", container=cont), "transitioned", "completed"),
        (trace(P, O, "working", container=cont), "refused", "work_closed"),
    ])
lifecycle("capability_opens_work", "lifecycle: a directed capability with a new work_id opens work", [
    (msg("capability", O, P, {"capability": CAPABILITY}), "opened", "submitted"),
    (trace(P, O, "working"), "transitioned", "working"),
    (trace(P, O, "failed"), "transitioned", "failed"),
])
lifecycle("say_without_to_opens_nothing", "lifecycle: only a say with `to` and a new work_id opens work", [
    (say(O, None), "ignored", None),
    (receipt(P, O, "accepted"), "ignored", None),
])
lifecycle("say_without_work_id_opens_nothing", "lifecycle: a say without work_id never opens work", [
    (say(O, P, work_id=None), "ignored", None),
])
lifecycle("receipt_for_unopened_work", "lifecycle: receipt or trace for work never opened changes nothing", [
    (receipt(P, O, "accepted"), "ignored", None),
    (trace(P, O, "working"), "ignored", None),
])
lifecycle("rejected_receipt_fails_work", "lifecycle: submitted -> failed on a rejected receipt", [
    (say(O, P), "opened", "submitted"),
    (receipt(P, O, "rejected", reason="busy"), "transitioned", "failed"),
    (say(O, P, "Again?"), "refused", "work_closed"),
])
lifecycle("second_cancel_is_work_closed", "lifecycle (NOTES 4): terminal work is final; a second cancel is work_closed (no idempotent cancel)", [
    (say(O, P), "opened", "submitted"),
    (receipt(O, P, "canceled"), "transitioned", "canceled"),
    (receipt(O, P, "canceled"), "refused", "work_closed"),
    (trace(P, O, "canceled"), "refused", "work_closed"),
    (trace(P, O, "completed"), "refused", "work_closed"),
])
lifecycle("cancel_while_working", "lifecycle: working -> canceled", [
    (say(O, P), "opened", "submitted"),
    (trace(P, O, "working"), "transitioned", "working"),
    (trace(P, O, "canceled"), "transitioned", "canceled"),
])
lifecycle("cancel_while_needs_input", "lifecycle: needs_input -> canceled", [
    (say(O, P), "opened", "submitted"),
    (receipt(P, O, "accepted"), "transitioned", "working"),
    (trace(P, O, "needs_input"), "transitioned", "needs_input"),
    (receipt(O, P, "canceled"), "transitioned", "canceled"),
])
lifecycle("needs_input_completes", "lifecycle: needs_input -> completed / failed", [
    (say(O, P), "opened", "submitted"),
    (receipt(P, O, "accepted"), "transitioned", "working"),
    (trace(P, O, "needs_input"), "transitioned", "needs_input"),
    (trace(P, O, "completed"), "transitioned", "completed"),
])
lifecycle("trace_never_moves_back_to_submitted", "message kinds: a trace MUST NOT move existing work back to submitted", [
    (say(O, P), "opened", "submitted"),
    (trace(P, O, "submitted"), "refused", "internal"),
    (receipt(P, O, "accepted"), "transitioned", "working"),
    (trace(P, O, "submitted"), "refused", "internal"),
])
lifecycle("non_participant_changes_nothing", "lifecycle: only the initiator and the target may move work", [
    (say(O, P), "opened", "submitted"),
    (receipt(X, O, "accepted"), "ignored", None),
    (trace(X, O, "completed"), "ignored", None),
    (receipt(X, P, "canceled"), "ignored", None),
    (receipt(P, O, "accepted"), "transitioned", "working"),
])
lifecycle("input_from_a_participant_resumes_work", "lifecycle (NOTES 4): a say or capability from a participant moves needs_input back to working", [
    (say(O, P), "opened", "submitted"),
    (receipt(P, O, "accepted"), "transitioned", "working"),
    (trace(P, O, "needs_input"), "transitioned", "needs_input"),
    (say(P, O, "Still waiting."), "transitioned", "working"),
    (say(O, P, "Input."), "unchanged", "working"),
])
lifecycle("cross_container_continuation", "lifecycle: same work_id in another container while active is work_container_mismatch", [
    (say(O, P), "opened", "submitted"),
    (receipt(P, O, "accepted", container=("thread", "thread_other")), "refused", "work_container_mismatch"),
    (trace(P, O, "working", container=DIRECT_ROOM), "refused", "work_container_mismatch"),
    (trace(P, O, "working"), "transitioned", "working"),
    (trace(P, O, "completed"), "transitioned", "completed"),
    (say(O, P, container=("thread", "thread_other")), "opened", "submitted"),
])
lifecycle("same_work_id_two_channels_of_work", "lifecycle: the key includes the work_id; two work ids are two units", [
    (say(O, P, work_id="work_a"), "opened", "submitted"),
    (say(O, P, work_id="work_b"), "opened", "submitted"),
    (receipt(P, O, "accepted", work_id="work_b"), "transitioned", "working"),
    (trace(P, O, "completed", work_id="work_a"), "transitioned", "completed"),
    (trace(P, O, "working", work_id="work_a"), "refused", "work_closed"),
])
lifecycle("submitted_cancel_by_trace", "lifecycle: submitted -> canceled by a trace", [
    (say(O, P), "opened", "submitted"),
    (trace(P, O, "canceled"), "transitioned", "canceled"),
])
lifecycle("continuation_while_working", "lifecycle: a say on active work continues it", [
    (say(O, P), "opened", "submitted"),
    (receipt(P, O, "accepted"), "transitioned", "working"),
    (say(O, P, "More context."), "unchanged", "working"),
    (say(P, O, "Noted."), "unchanged", "working"),
])


def delivery(name, rule, steps, local=P, replay=300, cap=1000):
    out = []
    for st in steps:
        now, env_, verdict = st[0], st[1], st[2]
        exp = {"verdict": verdict}
        if len(st) > 3 and st[3]:
            exp["reason_code"] = st[3]
        if len(st) > 4:
            exp["receipt"] = st[4]
        step = {"now": now, "expect": exp}
        if verdict == "sent":
            step["direction"] = "sent"
            exp["verdict"] = "recorded"
        if isinstance(env_, str):
            step["raw"] = env_
        else:
            step["envelope"] = env_
        out.append(step)
    SEQUENCES.append(("core.delivery", name, {
        "rule": rule,
        "receiver": {"workspace_id": "ws_alpha", "channel": "builders", "local_peer": local,
                     "replay_age_secs": replay, "dedup_cap": cap},
        "steps": out}))


d1 = say(O, P, ts=NOW)
delivery("duplicate_id_in_window", "delivery: a repeated id inside the replay window is duplicate, with a receipt", [
    (NOW, d1, "delivered"),
    (NOW + 5, d1, "refused", "duplicate", {"status": "duplicate", "reason_code": "duplicate", "for_id": d1["id"], "to": O, "work_id": "work_w1"}),
])
d2 = say(O, P, work_id=None, ts=NOW)
delivery("duplicate_without_work_gets_no_receipt", "delivery: a receipt needs a work_id; a refused say without one gets none", [
    (NOW, d2, "delivered"),
    (NOW + 1, d2, "refused", "duplicate", None),
])
d3 = say(O, P, ts=NOW - 400)
delivery("expired_by_replay_age", "delivery: without expires_at, older than the replay age is expired", [
    (NOW, d3, "refused", "expired", {"status": "expired", "reason_code": "expired", "for_id": d3["id"], "to": O, "work_id": "work_w1"}),
])
d4 = say(O, P, ts=NOW - 10, expires_at=NOW - 1)
delivery("expired_by_expires_at", "delivery: expires_at at or before the receiver clock is expired", [
    (NOW, d4, "refused", "expired", {"status": "expired", "reason_code": "expired", "for_id": d4["id"], "to": O, "work_id": "work_w1"}),
])
d5 = say(O, X, ts=NOW)
delivery("not_target", "delivery: a directed envelope for another peer is not_target", [
    (NOW, d5, "refused", "not_target", {"status": "rejected", "reason_code": "not_target", "for_id": d5["id"], "to": O, "work_id": "work_w1"}),
])
d6 = say(O, None, work_id=None, ts=NOW)
d6b = copy.deepcopy(d6); d6b["workspace_id"] = "ws_beta"; d6b["id"] = "msg_other_ws"
d6c = copy.deepcopy(d6); d6c["channel"] = "ops"; d6c["id"] = "msg_other_channel"
delivery("broadcast_and_routing", "delivery: broadcasts are delivered; other workspaces and channels are not this receiver's", [
    (NOW, d6, "delivered"),
    (NOW, d6b, "ignored"),
    (NOW, d6c, "ignored"),
])
seq = [say(O, P, ts=NOW), receipt(P, O, "accepted", ts=NOW + 1), trace(P, O, "completed", ts=NOW + 2)]
late = trace(P, O, "working", ts=NOW + 3)
delivery("work_closed_with_receipt", "delivery: a message for terminal work gets work_closed", [
    (NOW, seq[0], "sent"),
    (NOW + 1, seq[1], "delivered"),
    (NOW + 2, seq[2], "delivered"),
    (NOW + 3, late, "refused", "work_closed", {"status": "rejected", "reason_code": "work_closed", "for_id": late["id"], "to": P, "work_id": "work_w1"}),
], local=O)
a = say(O, P, ts=NOW)
b = say(O, P, ts=NOW + 1, container=("thread", "thread_other"))
b2 = receipt(O, P, "canceled", ts=NOW + 2, container=("thread", "thread_other"))
delivery("work_container_mismatch_with_receipt", "delivery: continuing active work in another container is work_container_mismatch", [
    (NOW, a, "delivered"),
    (NOW + 2, b2, "refused", "work_container_mismatch", {"status": "rejected", "reason_code": "work_container_mismatch", "for_id": b2["id"], "to": O, "work_id": "work_w1"}),
])
bad = say(O, P, ts=NOW)
bad["body"]["text"] = "   "
delivery("malformed_with_receipt", "delivery: a malformed but addressable envelope gets a rejected receipt", [
    (NOW, bad, "refused", "malformed", {"status": "rejected", "reason_code": "malformed", "for_id": bad["id"], "to": O, "work_id": "work_w1"}),
])
delivery("unparseable_gets_no_receipt", "delivery: an envelope that cannot be read cannot be answered", [
    (NOW, "{not json", "refused", "malformed", None),
])
gone = say(O, P, ts=NOW)
delivery("repeat_after_window_is_expired_not_duplicate", "delivery: outside the replay window a repeat is expired by freshness", [
    (NOW, gone, "delivered"),
    (NOW + 301, gone, "refused", "expired", {"status": "expired", "reason_code": "expired", "for_id": gone["id"], "to": O, "work_id": "work_w1"}),
])
nonp = receipt(X, P, "canceled", ts=NOW + 1)
delivery("non_participant_ignored", "delivery: lifecycle messages from non-participants are ignored without a receipt", [
    (NOW, say(O, P, ts=NOW), "delivered"),
    (NOW + 1, nonp, "ignored"),
])
def room(ws, ch, a, b):
    a, b = sorted([a, b], key=lambda x: x.encode("utf-8"))
    parts = b"\0".join([b"agh-network/direct-room/v0", ws.encode(), ch.encode(), a.encode(), b.encode()])
    return "direct_" + hashlib.sha256(parts).hexdigest()[:32]


right_room = ("direct", room("ws_alpha", "builders", O, P))
in_room = say(O, P, ts=NOW, container=right_room)
to_none = say(O, None, ts=NOW, work_id=None, container=right_room)
wrong = say(O, P, ts=NOW, container=("direct", room("ws_alpha", "builders", O, X)))
delivery("direct_room_belongs_to_its_peers", "NOTES 6 / envelope: direct_id is derived from the workspace, channel and the two peers", [
    (NOW, in_room, "delivered"),
    (NOW, to_none, "delivered"),
    (NOW, wrong, "refused", "malformed", {"status": "rejected", "reason_code": "malformed", "for_id": wrong["id"], "to": O, "work_id": "work_w1"}),
])
cap_msgs = [say(O, P, work_id=None, ts=NOW, mid="msg_cap_%d" % i) for i in range(4)]
delivery("dedup_cap_evicts_oldest", "delivery: the dedup window is bounded; the oldest id goes first", [
    (NOW, cap_msgs[0], "delivered"),
    (NOW, cap_msgs[1], "delivered"),
    (NOW, cap_msgs[2], "delivered"),
    (NOW, cap_msgs[1], "refused", "duplicate", None),
    (NOW, cap_msgs[3], "delivered"),
    (NOW, cap_msgs[0], "delivered"),
], cap=3)

# The corrected transitions (NOTES 4, issue #20): a trace moves active work to any state but
# `submitted`, from either participant; terminal work refuses everything with work_closed.
lifecycle("trace_completes_submitted_work", "lifecycle (NOTES 4): a fast worker's trace goes straight from submitted to completed", [
    (say(O, P), "opened", "submitted"),
    (trace(P, O, "completed"), "transitioned", "completed"),
    (trace(P, O, "working"), "refused", "work_closed"),
])
lifecycle("trace_submitted_to_needs_input", "lifecycle (NOTES 4): a trace moves submitted work to needs_input; input resumes it", [
    (say(O, P), "opened", "submitted"),
    (trace(P, O, "needs_input"), "transitioned", "needs_input"),
    (trace(P, O, "needs_input"), "unchanged", "needs_input"),
    (say(O, P, "Here is the input."), "transitioned", "working"),
    (trace(P, O, "failed"), "transitioned", "failed"),
])
lifecycle("trace_from_the_initiator", "lifecycle (NOTES 4): a trace moves work from either participant, the initiator included", [
    (say(O, P), "opened", "submitted"),
    (trace(O, P, "working"), "transitioned", "working"),
    (trace(O, P, "needs_input"), "transitioned", "needs_input"),
    (trace(O, P, "working"), "transitioned", "working"),
    (trace(O, P, "canceled"), "transitioned", "canceled"),
])
lifecycle("trace_state_submitted_refused", "message kinds: a trace MUST NOT move existing work back to submitted (nor keep it there), in any active state", [
    (say(O, P), "opened", "submitted"),
    (trace(O, P, "submitted"), "refused", "internal"),
    (trace(P, O, "needs_input"), "transitioned", "needs_input"),
    (trace(P, O, "submitted"), "refused", "internal"),
    (trace(P, O, "working"), "transitioned", "working"),
])
lifecycle("trace_after_cancel_is_work_closed", "lifecycle (NOTES 4): after a cancel every trace is work_closed", [
    (say(O, P), "opened", "submitted"),
    (receipt(O, P, "canceled"), "transitioned", "canceled"),
    (trace(P, O, "working"), "refused", "work_closed"),
    (trace(P, O, "completed"), "refused", "work_closed"),
])
lifecycle("receipts_on_active_work", "lifecycle (NOTES 4): rejected fails and canceled cancels active work; accepted, duplicate, expired, unsupported change nothing", [
    (say(O, P), "opened", "submitted"),
    (receipt(P, O, "duplicate", reason="duplicate"), "unchanged", "submitted"),
    (receipt(P, O, "accepted"), "transitioned", "working"),
    (receipt(P, O, "accepted"), "unchanged", "working"),
    (receipt(P, O, "expired", reason="expired"), "unchanged", "working"),
    (receipt(P, O, "unsupported", reason="unsupported_kind"), "unchanged", "working"),
    (receipt(P, O, "rejected", reason="busy"), "transitioned", "failed"),
    (receipt(P, O, "accepted"), "refused", "work_closed"),
])
same_a = say(O, P, ts=NOW, work_id=None, mid="msg_shared_id")
same_b = say(X, P, "From another sender.", ts=NOW, work_id=None, mid="msg_shared_id")
same_a_work = say(O, P, ts=NOW, mid="msg_shared_work")
delivery("same_id_from_two_senders", "envelope page / NOTES 3: id is unique within the sender's replay window; dedup keys by (from, id)", [
    (NOW, same_a, "delivered"),
    (NOW + 1, same_b, "delivered"),
    (NOW + 2, same_b, "refused", "duplicate", None),
    (NOW + 3, same_a, "refused", "duplicate", None),
    (NOW + 4, same_a_work, "delivered"),
    (NOW + 5, same_a_work, "refused", "duplicate", {"status": "duplicate", "reason_code": "duplicate", "for_id": "msg_shared_work", "to": O, "work_id": "work_w1"}),
])


# ---------- capability digest vectors (protocol/tests/fixtures/digest/vectors.json) ----------
DIGEST_VECTORS = [
    ("minimal", {"id": "a", "summary": "b", "outcome": "c"}),
    ("page_example", {k: v for k, v in CAPABILITY.items() if k != "digest"}),
    ("html_characters", {"id": "x", "summary": "<b>bold</b> & 'quoted' \"double\"", "outcome": "a>b<c&d"}),
    ("non_ascii", {"id": "café", "summary": "naïve résumé — 日本語 🚀", "outcome": "ok"}),
    # Line breaks only where a document may hold them (`summary` is one line: NOTES 2).
    ("line_separators", {"id": "x", "summary": "a b c", "outcome": "a\u2028b\u2029c\u0085 next line"}),
    ("controls", {"id": "x", "summary": "tab\there\bbs\fff", "outcome": "nl\ncr\r\u0001\u001f\u007f"}),
    ("padded_whitespace", {"id": "  x\t", "summary": "\u00a0 padded \u3000", "outcome": "\n o \n", "version": "  1.0  "}),
    ("file_separators_kept", {"id": "x\u001c", "summary": "\u001dy\u001e", "outcome": "\u001f"}),
    ("blank_list_entries_dropped", {"id": "x", "summary": "y", "outcome": "z", "context_needed": ["", "  ", "repo", " "], "examples": ["   "]}),
    ("unsorted_requirements", {"id": "x", "summary": "y", "outcome": "z", "requirements": ["zeta", "Alpha", "alpha", " beta ", "é"]}),
    ("empty_version_and_lists_omitted", {"id": "x", "summary": "y", "outcome": "z", "version": "", "constraints": [], "artifacts_expected": []}),
    ("other_members_ignored", {"id": "x", "summary": "y", "outcome": "z", "workspace_id": "ws", "digest": "sha256:00", "acme.tag": [1]}),
    ("all_lists_in_order", {"examples": ["e"], "constraints": ["c"], "execution_outline": ["o"], "artifacts_expected": ["a"], "context_needed": ["n"], "requirements": ["r"], "version": "2", "outcome": "z", "summary": "y", "id": "x"}),
]
DIGEST_ERRORS = [
    ("blank_requirement", {"id": "x", "summary": "y", "outcome": "z", "requirements": ["a", "  "]}, "/requirements/1"),
    ("duplicate_requirement_after_trim", {"id": "x", "summary": "y", "outcome": "z", "requirements": ["a", " a"]}, "/requirements/1"),
    ("summary_not_a_string", {"id": "x", "summary": 3, "outcome": "z"}, "/summary"),
]


def write_digest_vectors():
    out = {"vectors": [{"name": n, "document": d, "canonical": canonical(d), "digest": digest(d)} for n, d in DIGEST_VECTORS],
           "errors": [{"name": n, "document": d, "pointer": p} for n, d, p in DIGEST_ERRORS]}
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "protocol", "tests", "fixtures", "digest")
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "vectors.json"), "w") as f:
        json.dump(out, f, indent=2, ensure_ascii=False)
        f.write("\n")


# ---------- trust: the Ed25519 + JCS profile (TRUST.md), signed here independently ----------
# Keys from fixed seeds; canonical JSON by PyPI's `rfc8785`, Ed25519 by `cryptography`: the Rust
# implementation verifies what this script signs (and protocol/tests/trust_python.rs checks the
# other direction).
T = "trust"
TRUST_PROFILE = "agh-network.trust.ed25519-jcs/v1"


def b64u(raw):
    import base64
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def trust_key(seed_byte):
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives import serialization
    key = Ed25519PrivateKey.from_private_bytes(bytes([seed_byte]) * 32)
    pub = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return key, pub, hashlib.sha256(pub).hexdigest()


def sign(e, seed_byte, nickname="ops-coordinator", proof_edit=None, from_edit=None):
    """`e` signed by the key of `seed_byte` (its `from` made `nickname@fingerprint` first)."""
    import rfc8785
    key, pub, h = trust_key(seed_byte)
    e = copy.deepcopy(e)
    e["from"] = from_edit if from_edit is not None else "%s@%s" % (nickname, h[:32])
    e["proof"] = {"profile": TRUST_PROFILE, "alg": "Ed25519", "key_id": "sha256:" + h, "pubkey": b64u(pub)}
    e["proof"]["sig"] = b64u(key.sign(rfc8785.dumps(e)))
    return e


def on_curve(enc):
    """Whether 32 bytes encode an edwards25519 point (RFC 8032 5.1.3: x^2 = (y^2 - 1)/(d y^2 + 1)
    has a root)."""
    p = 2**255 - 19
    d = -121665 * pow(121666, p - 2, p) % p
    y = int.from_bytes(enc, "little") & (2**255 - 1)
    if y >= p:
        return False
    u, v = (y * y - 1) % p, (d * y * y + 1) % p
    x2 = u * pow(v, p - 2, p) % p
    return x2 == 0 or pow(x2, (p - 1) // 2, p) == 1


def trust_case(name, rule, envelope, state, reject=None, raw=None, code="verification_failed"):
    c = {"rule": rule, "now": NOW}
    if raw is not None:
        c["raw"] = raw
    else:
        c["envelope"] = envelope
    if reject:
        c["expect"] = {"verdict": "reject", "reason_code": code, "pointer": reject}
        if code == "verification_failed":
            c["expect"]["trust"] = "rejected"
    else:
        c["expect"] = {"verdict": "accept", "kind": envelope["kind"], "trust": state}
    # Plain JSON Schema checks shapes, not signatures: it agrees on the accepted cases and on
    # a grammar failure, not on a signature that does not verify.
    c["schema_agrees"] = reject is None or code != "verification_failed"
    CASES.append((T, name, c))


def trust_cases():
    try:
        import rfc8785  # noqa: F401
        import cryptography  # noqa: F401
    except ImportError:
        sys.exit("the trust fixtures need PyPI's rfc8785 and cryptography: pip install rfc8785 cryptography")
    R = "trust (TRUST.md): "
    say = BASES["say"]
    good = sign(say, 1)
    trust_case("accept_signed_say", R + "a proof of the profile that passes every step is verified", good, "verified")
    greet_id = "patch-worker@" + trust_key(2)[2][:32]
    greet = mutate("greet", {"body/peer_card/peer_id": greet_id,
                             "body/peer_card/trust_modes_supported": [TRUST_PROFILE, "unverified"]})
    trust_case("accept_signed_greet", R + "a Verified Peer greets signed, its Peer Card naming its verified id and advertising the profile",
               sign(greet, 2, "patch-worker"), "verified")
    trust_case("accept_signed_receipt_with_ext", R + "ext members are signed as received",
               sign(mutate("receipt", {"ext": {"acme.trace": [1.5, "é", {"z": None, "a": 1e21}]}}), 3, "patch-worker"), "verified")
    trust_case("accept_signed_without_to", R + "absent members are signed by their absence (no `to: null` injected)",
               sign(mutate("say", {"to": DELETE}), 4), "verified")
    trust_case("accept_unsigned", R + "no proof and a v0 `from`: unverified", say, "unverified")
    trust_case("accept_other_profile", R + "a proof of another well-formed profile: unverified",
               mutate("say", {"proof": {"profile": "example.other-profile/v2", "sig": "x"}}), "unverified")
    trust_case("accept_proof_naming_no_profile", R + "a proof naming no profile: unverified (v0 receivers MUST NOT require proof processing; the seed pages win)",
               mutate("say", {"proof": {"alg": "none"}}), "unverified")

    def edit(e, path, value):
        e = copy.deepcopy(e)
        parts = path.strip("/").split("/")
        t = e
        for p in parts[:-1]:
            t = t[p]
        if value is DELETE:
            t.pop(parts[-1], None)
        else:
            t[parts[-1]] = value
        return e

    _, other_pub, other_h = trust_key(9)
    trust_case("reject_tampered_body", R + "step 8: one byte of the body changed", edit(good, "/body/text", good["body"]["text"] + "!"), None, reject="/proof/sig")
    trust_case("reject_stripped_proof", R + "a verified-form `from` without a proof (proof stripping)", edit(good, "/proof", None), None, reject="/from")
    trust_case("reject_stripped_proof_member", R + "a verified-form `from` without a proof member at all", edit(good, "/proof", DELETE), None, reject="/from")
    trust_case("reject_other_profile_verified_from", R + "a verified-form `from` with a proof this receiver cannot check",
               edit(good, "/proof", {"profile": "example.other-profile/v2"}), None, reject="/from")
    trust_case("reject_wrong_alg", R + "step 2: `alg` is `Ed25519`",
               edit(good, "/proof/alg", "EdDSA"), None, reject="/proof/alg")
    # Step 1: `profile` decides. Absent or null names no profile; a non-empty string names one;
    # anything else is a malformed proof, refused at step 1.
    trust_case("accept_proof_profile_null", R + "a proof whose `profile` is null names no profile: unverified",
               mutate("say", {"proof": {"profile": None, "alg": "none"}}), "unverified")
    trust_case("reject_empty_profile", R + "step 1: a `profile` that is no identifier (empty) is a malformed proof",
               edit(good, "/proof/profile", ""), None, reject="/proof/profile")
    trust_case("reject_non_string_profile", R + "step 1: a `profile` that is no identifier (a number) is a malformed proof, whatever `from` is",
               mutate("say", {"proof": {"profile": 5}}), None, reject="/proof/profile")
    # Two faults: the earlier step is reported (a padded `sig` is step 8's, `key_id` step 5's).
    trust_case("reject_two_faults_earlier_step_wins", R + "steps in order: a wrong key_id (step 5) is reported before a padded sig (step 8)",
               edit(edit(good, "/proof/sig", good["proof"]["sig"] + "=="), "/proof/key_id", "sha256:" + other_h), None, reject="/proof/key_id")
    trust_case("reject_swapped_pubkey", R + "steps 4-6: another key swapped in (its key_id too) no longer matches `from`",
               edit(edit(good, "/proof/pubkey", b64u(other_pub)), "/proof/key_id", "sha256:" + other_h), None, reject="/from")
    trust_case("reject_key_id_mismatch", R + "step 5: key_id is the SHA-256 of pubkey", edit(good, "/proof/key_id", "sha256:" + other_h), None, reject="/proof/key_id")
    trust_case("reject_fingerprint_mismatch", R + "step 6: the fingerprint in `from` is the key's",
               edit(good, "/from", "ops-coordinator@" + other_h[:32]), None, reject="/from")
    trust_case("reject_nickname_changed", R + "step 8: `from` is signed", edit(good, "/from", "ops-other@" + good["from"].split("@")[1]), None, reject="/proof/sig")
    reused = sign(mutate("say", {"id": "msg_say_other"}), 1)
    trust_case("reject_signature_reused", R + "step 8: a signature of another envelope", edit(reused, "/proof/sig", good["proof"]["sig"]), None, reject="/proof/sig")
    trust_case("reject_padded_pubkey", R + "step 3: base64url without padding (a padded value is refused)",
               edit(good, "/proof/pubkey", good["proof"]["pubkey"] + "="), None, reject="/proof/pubkey")
    trust_case("reject_padded_sig", R + "step 8: base64url without padding (a padded value is refused)",
               edit(good, "/proof/sig", good["proof"]["sig"] + "=="), None, reject="/proof/sig")
    trust_case("reject_short_pubkey", R + "step 3: pubkey is 32 bytes", edit(good, "/proof/pubkey", good["proof"]["pubkey"][:-2]), None, reject="/proof/pubkey")
    trust_case("reject_unknown_proof_member", R + "the proof of this profile has exactly its five members",
               edit(good, "/proof/nonce", "1"), None, reject="/proof")
    trust_case("reject_missing_sig", R + "step 8: a proof of this profile without `sig` (all five members are required) verifies nothing", edit(good, "/proof/sig", DELETE), None, reject="/proof/sig")
    # S + L: the same point equation, a non-canonical S (strict verification refuses it).
    import base64
    sig = bytearray(base64.urlsafe_b64decode(good["proof"]["sig"] + "=="))
    L = 2**252 + 27742317777372353535851937790883648493
    s_val = int.from_bytes(sig[32:], "little") + L
    sig[32:] = s_val.to_bytes(32, "little")
    trust_case("reject_non_canonical_s", R + "step 8: strict verification refuses a non-canonical S",
               edit(good, "/proof/sig", b64u(bytes(sig))), None, reject="/proof/sig")
    # Step 7: 1e400 has no canonical (ECMAScript) form. Written as raw text (Python's json would
    # write `Infinity`); the proof is untouched, so steps 1-6 hold.
    big = edit(good, "/ext", {"acme.big": "__BIG__"})
    trust_case("reject_canonical_json", R + "step 7: an envelope with a number JCS cannot write (1e400) has no canonical form",
               None, None, reject="/proof", raw=json.dumps(big, ensure_ascii=False).replace('"__BIG__"', "1e400"))
    # Step 7: an integer literal beyond +-(2^53 - 1) has no canonical form either (distinct
    # integers there share one double, so a signature would not protect the value a reader keeps);
    # the largest exact integer signs and verifies.
    unsafe = edit(good, "/ext", {"acme.amount": "__BIG__"})
    trust_case("reject_integer_beyond_2_53", R + "step 7: an integer beyond +-(2^53 - 1) (9007199254740993) has no canonical form: it shares its double with 9007199254740992",
               None, None, reject="/proof", raw=json.dumps(unsafe, ensure_ascii=False).replace('"__BIG__"', "9007199254740993"))
    trust_case("accept_signed_largest_exact_integer", R + "the largest exact integer, 2^53 - 1, is signed and verified as written",
               sign(mutate("say", {"ext": {"acme.amount": 9007199254740991}}), 1), "verified")
    # Step 8, strict verification: points of small order (here the identity, y = 1) as key or as
    # `R`, and a key that is no curve point. With key = R = identity and S = 0 the equation
    # [S]B = R + [k]A holds for every message: a lax verifier (`cryptography`'s) accepts it.
    identity = bytes([1]) + bytes(31)

    def raw_key(pub, sig):
        h = hashlib.sha256(pub).hexdigest()
        e = copy.deepcopy(say)
        e["from"] = "ops-coordinator@" + h[:32]
        e["proof"] = {"profile": TRUST_PROFILE, "alg": "Ed25519", "key_id": "sha256:" + h, "pubkey": b64u(pub), "sig": b64u(sig)}
        return e

    trust_case("reject_small_order_pubkey", R + "step 8: strict verification refuses a small-order key (the identity, with R = identity and S = 0)",
               raw_key(identity, identity + bytes(32)), None, reject="/proof/sig")
    trust_case("reject_small_order_r", R + "step 8: strict verification refuses a small-order R",
               edit(good, "/proof/sig", b64u(identity + bytes(32))), None, reject="/proof/sig")
    # The first y from 2 up with no x on the curve (y = 2: (y^2 - 1)/(d y^2 + 1) is no square).
    not_a_point = next(bytes([y]) + bytes(31) for y in range(2, 256) if not on_curve(bytes([y]) + bytes(31)))
    trust_case("reject_pubkey_not_a_point", R + "step 8: a 32-byte pubkey that is no curve point verifies nothing",
               raw_key(not_a_point, bytes(64)), None, reject="/proof/sig")
    trust_case("reject_bad_nickname", R + "a verified identity's nickname is [a-z0-9_-]{1,32}",
               sign(say, 1, from_edit="Ops@" + trust_key(1)[2][:32]), None, reject="/from", code="malformed")


trust_cases()


def main():
    write_digest_vectors()
    if os.path.isdir(OUT):
        for g in os.listdir(OUT):
            p = os.path.join(OUT, g)
            if os.path.isdir(p) and g in {c[0] for c in CASES + SEQUENCES}:
                shutil.rmtree(p)
    seen = set()
    for group, name, c in CASES:
        key = (group, name)
        if key in seen:
            sys.exit("duplicate fixture %s/%s" % key)
        seen.add(key)
        d = os.path.join(OUT, group)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name + ".json"), "w") as f:
            json.dump(c, f, indent=2, ensure_ascii=False)
            f.write("\n")
    for group, name, c in SEQUENCES:
        key = (group, name)
        if key in seen:
            sys.exit("duplicate fixture %s/%s" % key)
        seen.add(key)
        d = os.path.join(OUT, group)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, name + ".json"), "w") as f:
            json.dump(c, f, indent=2, ensure_ascii=False)
            f.write("\n")
    print("%d fixtures, %d sequences" % (len(CASES), len(SEQUENCES)))


if __name__ == "__main__":
    main()
