#!/usr/bin/env python3
"""Writes the ACP v0.2 conformance fixtures, group `acp.core`, under conformance/fixtures/.

Every example of the draft (seeds/acp-message-types-draft.md, section "Schemas") completed into a
whole envelope, the draft's "Unknown payload fields: ignore" rule, the stances of
schemas/acp-v0.2/NOTES.md (ids, ts in milliseconds and its window, required payload members, ref
on initiating kinds and replies), and the correlation rules as sequences through one inbox. Each
case is written by hand below; this script only expands them into data files. It also writes the
draft's examples, one envelope per kind, to examples/acp-envelopes/ (the generated ACP reference
shows them), and one example of each kind added after the draft (ADDED_EXAMPLES).
Run it from the repository root: python3 conformance/tools/make_acp_fixtures.py
"""
import copy
import json
import os
import shutil

import fixture_numbers  # beside this script

GROUP = "acp.core"
PROFILE = "acp/0.2"
OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", GROUP)

NOW = 1771108000  # the receiver's clock, Unix seconds
TS = NOW * 1000  # the draft's example ts, milliseconds
KIT = "a1b2c3d4e5f60718"
FAMILY = "0123456789abcdef"
DRAFT = "acp draft: "
STANCE = "acp NOTES: "


def uid(n):
    return "%08x-0000-4000-8000-%012x" % (n, n * 7919)


def envelope(kind, ref=None, payload=None, frm=KIT, to=FAMILY, n=1, ts=TS):
    e = {"v": 1, "id": uid(n), "from": frm, "to": to, "ts": ts, "kind": kind, "ref": ref}
    if payload is not None:
        e["payload"] = payload
    return e


R = uid(100)
# The draft's examples, in its order (enum placeholders take their first value, `{ ... }` an
# object).
EXAMPLES = [
    ("ping", None, None),
    ("pong", R, {"status": "idle", "uptime_secs": 3600, "active_tasks": 2, "agent_name": "Kit"}),
    ("query", None, {"question": "What are the kids' swim schedules this week?",
                     "domain": "family.calendar", "max_tokens": 200, "deadline_ms": 30000}),
    ("response", R, {"data": {"practices": ["Mon", "Wed", "Fri"]},
                     "summary": "Three swim practices: Mon/Wed/Fri 4-5pm at the local pool",
                     "tokens_used": 47, "truncated": False}),
    ("delegate", None, {"task": "Send the family contact a message saying the user will be 30 minutes late for dinner",
                        "context": {"reason": "Meeting ran over", "dinner_time": "7:00 PM",
                                    "grace_handle": "family-contact@example.com"},
                        "priority": "normal", "report_back": True, "deadline_ms": 60000}),
    ("ack", R, {"accepted": True, "estimated_ms": 5000}),
    ("result", R, {"status": "completed",
                   "outcome": "Message sent to the family contact. She replied 'ok no worries'",
                   "data": {"reply": "ok no worries"}, "error": None}),
    ("notify", None, {"topic": "hans.location", "data": {"location": "heading to gym", "eta_back": "2h"},
                      "importance": "low"}),
    ("cancel", R, {"reason": "Plans changed, no longer needed"}),
    ("discover", None, None),
    ("capabilities", R, {"agent_name": "Family Assistant",
                         "domains": ["family", "calendar", "groceries", "school", "activities"],
                         "channels": ["imessage", "apple-reminders"],
                         "tools": ["web_search", "gog", "bluebubbles"],
                         "max_concurrent_tasks": 4, "model": "gemini-3-pro"}),
    ("error", R, {"code": "not_authorized", "message": "I don't have access to the user's work calendar",
                  "retryable": False}),
]
# Kinds added to schemas/acp-v0.2 after the draft (docs/guides/add-an-acp-kind.md, step 5): one
# example each, as (kind, ref, payload). Every kind needs one: the reference docs show it and
# agh-acp's tests require an example per kind.
ADDED_EXAMPLES = [
]
EXAMPLE = {k: envelope(k, r, p) for k, r, p in EXAMPLES + ADDED_EXAMPLES}

CASES = []


def case(name, rule, env, accept=None, reject=None, code="malformed", error_code=None, agrees=None, raw=None,
         preserved=None):
    """preserved: {pointer: JSON text} that a forwarder must write back byte for byte."""
    doc = {"rule": rule, "profile": PROFILE, "now": NOW}
    if raw is not None:
        doc["raw"] = raw
    else:
        doc["envelope"] = env
    if reject is None:
        doc["expect"] = {"verdict": "accept", "kind": accept}
        if preserved:
            doc["expect"]["preserved"] = preserved
    else:
        doc["expect"] = {"verdict": "reject", "reason_code": code, "pointer": reject,
                         "error_code": error_code or code}
    # Whether plain JSON Schema validation against schemas/acp-v0.2 reaches the same verdict
    # (conformance/tests/schema_agreement.rs holds the mark to the schemas).
    doc["schema_agrees"] = bool(agrees)
    CASES.append((name, doc))


def edit(env, pointer, value=None, delete=False):
    e = copy.deepcopy(env)
    parts = pointer.strip("/").split("/")
    cur = e
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    if delete:
        del cur[parts[-1]]
    else:
        cur[parts[-1]] = value
    return e


# ---------- the draft's examples ----------
for kind, _, _ in EXAMPLES:
    case("accept_draft_example_" + kind, DRAFT + "the `%s` example of the Schemas section" % kind,
         EXAMPLE[kind], accept=kind, agrees=True)

for kind, _, _ in ADDED_EXAMPLES:
    case("accept_example_" + kind, "schemas/acp-v0.2: the example of `%s`, a kind added after the draft" % kind,
         EXAMPLE[kind], accept=kind, agrees=True)

# ---------- every listed value of a payload member is accepted ----------
# Read from the schemas (an `enum`, or the open set's `x-agh-known-values`), so a value added to a
# schema gets its fixture when this script runs again.
SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "schemas", "acp-v0.2")


def listed_values(kind):
    """(member, [values]) of the payload schema of `kind`, for members with listed values."""
    with open(os.path.join(SCHEMAS, "defs.schema.json")) as f:
        defs = json.load(f)
    path = os.path.join(SCHEMAS, "body", kind + ".schema.json")
    if not os.path.exists(path):
        return []
    with open(path) as f:
        body = json.load(f)

    def resolve(v):
        while "$ref" in v:
            target, _, pointer = v["$ref"].partition("#")
            v = defs if target.endswith("defs.schema.json") else body
            for part in pointer.strip("/").split("/"):
                v = v[part]
        return v

    out = []
    for member, schema in body.get("properties", {}).items():
        for alt in resolve(schema).get("anyOf", [schema]):
            alt = resolve(alt)
            values = alt.get("enum") or list(alt.get("x-agh-known-values", {}))
            values = [v for v in values if v is not None]
            if values:
                out.append((member, values))
    return out


# What a value brings with it by the schema's conditional rules (`result` `failed` requires `error`).
WITH_VALUE = {
    ("result", "status", "failed"): {"error": "The family contact's number is not reachable"},
}

for kind, _, payload in EXAMPLES + ADDED_EXAMPLES:
    for member, values in listed_values(kind):
        for value in values:
            if payload.get(member) == value:
                continue  # the example has it already
            env = edit(EXAMPLE[kind], "/payload/" + member, value)
            for other, v in WITH_VALUE.get((kind, member, value), {}).items():
                env = edit(env, "/payload/" + other, v)
            case("accept_%s_%s_%s" % (kind, member, value),
                 STANCE + "every listed value of `%s.%s` is accepted (`%s`)" % (kind, member, value),
                 env, accept=kind, agrees=True)

# ---------- unknown payload fields: ignore ----------
for kind in ["pong", "query", "response", "delegate", "ack", "result", "notify", "cancel", "capabilities",
             "error"]:
    case("accept_unknown_payload_member_" + kind, DRAFT + "Unknown payload fields: ignore, not reject",
         edit(EXAMPLE[kind], "/payload/x_future", {"nested": [1, 2.5, None]}), accept=kind, agrees=True)
for kind in ["ping", "discover"]:
    case("accept_unknown_payload_member_" + kind,
         DRAFT + "%s: no payload; one sent anyway has its members ignored" % kind,
         edit(EXAMPLE[kind], "/payload", {"x_future": True}), accept=kind, agrees=True)
case("accept_unknown_envelope_member", DRAFT + "Unknown fields should be ignored, not rejected (envelope)",
     edit(EXAMPLE["query"], "/trace_id", "abc"), accept="query", agrees=True)
case("accept_unknown_error_code", STANCE + "error.code is an open set: an unlisted code is accepted",
     edit(EXAMPLE["error"], "/payload/code", "quota_exceeded"), accept="error", agrees=True)
case("accept_notify_broadcast", STANCE + "notify: `to` null means a broadcast",
     edit(EXAMPLE["notify"], "/to", None), accept="notify", agrees=True)
case("accept_error_without_ref", STANCE + "error: `ref` null when the offending id could not be read",
     edit(EXAMPLE["error"], "/ref", None), accept="error", agrees=True)
case("accept_ts_at_window_edge", STANCE + "ts within 300 s of the receiver's clock (ms)",
     edit(EXAMPLE["ping"], "/ts", TS - 300000), accept="ping", agrees=True)

# ---------- numbers in open content ----------
# Numbers of every size and spelling in every open member (issue 30 item 4): small, the i64/u64
# edges, between 2^64 and 2^128, beyond, decimals, exponents, beyond f64, `-0`. Each open object
# gets one member per number and an array of them all; a forwarder writes each back byte for byte.
def with_numbers(env, at):
    """`env` holding every number of fixture_numbers.NUMBERS in the open object at pointer `at`
    (`""`: the envelope): the raw text and the pointers to preserve."""
    return fixture_numbers.with_numbers(copy.deepcopy(env), at, "x_")


OPEN_MEMBERS = [("envelope", "query", "", None)]
OPEN_MEMBERS += [("payload_" + k, k, "/payload", None) for k, _, _ in EXAMPLES if EXAMPLE[k].get("payload") is not None]
OPEN_MEMBERS += [("payload_" + k, k, "/payload", {}) for k, _, _ in EXAMPLES if EXAMPLE[k].get("payload") is None]
OPEN_MEMBERS += [
    ("delegate_context", "delegate", "/payload/context", None),
    ("query_question", "query", "/payload/question", {"calendar": "swim"}),
    ("notify_data", "notify", "/payload/data", None),
    ("response_data", "response", "/payload/data", None),
    ("result_data", "result", "/payload/data", None),
]
for label, kind, at, payload in OPEN_MEMBERS:
    base = EXAMPLE[kind]
    if payload is not None:
        base = edit(base, "/payload" if at == "/payload" else at, payload)
    raw, preserved = with_numbers(base, at)
    case("accept_numbers_in_" + label,
         DRAFT + "unknown fields are ignored and open members hold any JSON: numbers of every size and spelling, "
         "kept byte for byte when forwarded", None, accept=kind, agrees=True, raw=raw, preserved=preserved)

# ---------- envelope stances ----------
case("reject_unknown_kind", DRAFT + "unknown kind: respond with error (code: unknown_kind)",
     edit(EXAMPLE["ping"], "/kind", "handshake"), reject="/kind", code="unsupported_kind", error_code="unknown_kind", agrees=True)
case("reject_version_2", STANCE + "v MUST be 1",
     edit(EXAMPLE["ping"], "/v", 2), reject="/v", code="unsupported_profile", error_code="unsupported_version", agrees=True)
case("reject_uppercase_id", STANCE + "id is a lowercase canonical UUID",
     edit(EXAMPLE["ping"], "/id", uid(1).upper()), reject="/id", agrees=True)
case("reject_agent_id_not_hex", STANCE + "from is 16 to 128 lowercase hex digits",
     edit(EXAMPLE["ping"], "/from", "kit"), reject="/from", agrees=True)
case("reject_ts_in_seconds", STANCE + "ts is Unix milliseconds: a seconds value is 56 years stale",
     edit(EXAMPLE["ping"], "/ts", NOW), reject="/ts", code="expired")
case("reject_ts_past_window", STANCE + "ts more than 300 s before the receiver's clock is expired",
     edit(EXAMPLE["ping"], "/ts", TS - 300001), reject="/ts", code="expired")
case("reject_ts_future_window", STANCE + "ts more than 300 s after the receiver's clock is expired",
     edit(EXAMPLE["ping"], "/ts", TS + 300001), reject="/ts", code="expired")
case("reject_missing_to", STANCE + "to is REQUIRED on every kind but notify",
     edit(EXAMPLE["query"], "/to", delete=True), reject="/to")
case("reject_ref_on_query", DRAFT + "ref: null for initiating messages",
     edit(EXAMPLE["query"], "/ref", uid(5)), reject="/ref")
case("reject_pong_without_ref", DRAFT + "ref: set for all response types",
     edit(EXAMPLE["pong"], "/ref", None), reject="/ref")
case("reject_cancel_without_ref", STANCE + "cancel names the delegation it cancels in ref",
     edit(EXAMPLE["cancel"], "/ref", None), reject="/ref")
case("reject_query_without_payload", STANCE + "payload is REQUIRED on every kind but ping, discover and cancel",
     edit(EXAMPLE["query"], "/payload", delete=True), reject="/payload", agrees=True)
case("reject_payload_not_object", STANCE + "payload is an object",
     edit(EXAMPLE["notify"], "/payload", [1]), reject="/payload", agrees=True)
case("reject_duplicate_member", STANCE + "strict JSON: no duplicate member names",
     None, reject="/v", raw='{"v":1,"v":1,"id":"%s","from":"%s","to":"%s","ts":%d,"kind":"ping","ref":null}'
     % (uid(1), KIT, FAMILY, TS))

# ---------- payload stances ----------
case("reject_pong_status_unknown", DRAFT + "pong.status is idle, busy or overloaded",
     edit(EXAMPLE["pong"], "/payload/status", "asleep"), reject="/payload/status", agrees=True)
case("reject_query_blank_question", STANCE + "text members are non-blank",
     edit(EXAMPLE["query"], "/payload/question", " \t"), reject="/payload/question", agrees=True)
case("accept_query_structured_question", DRAFT + "question: natural language or structured query",
     edit(EXAMPLE["query"], "/payload/question", {"calendar": "swim", "week": 7}), accept="query", agrees=True)
case("reject_response_multiline_summary", STANCE + "response.summary is one line",
     edit(EXAMPLE["response"], "/payload/summary", "two\nlines"), reject="/payload/summary", agrees=True)
case("reject_delegate_priority", DRAFT + "delegate.priority is normal or urgent",
     edit(EXAMPLE["delegate"], "/payload/priority", "high"), reject="/payload/priority", agrees=True)
case("reject_delegate_deadline_zero", STANCE + "deadlines are integers of at least 1 ms",
     edit(EXAMPLE["delegate"], "/payload/deadline_ms", 0), reject="/payload/deadline_ms", agrees=True)
case("reject_result_failed_without_error", STANCE + "result.error is REQUIRED when status is failed",
     edit(EXAMPLE["result"], "/payload/status", "failed"), reject="/payload/error", agrees=True)
case("reject_result_completed_with_error", DRAFT + "result.error: null on success",
     edit(EXAMPLE["result"], "/payload/error", "it broke"), reject="/payload/error", agrees=True)
case("reject_notify_topic_grammar", STANCE + "topics are dot-separated lowercase segments",
     edit(EXAMPLE["notify"], "/payload/topic", "Hans Location"), reject="/payload/topic", agrees=True)
case("reject_capabilities_repeated_domain", STANCE + "lists of names have no repeats",
     edit(EXAMPLE["capabilities"], "/payload/domains", ["family", "family"]), reject="/payload/domains/1", agrees=True)
case("reject_error_code_grammar", STANCE + "error.code is lowercase letters, digits and _",
     edit(EXAMPLE["error"], "/payload/code", "Not-Authorized"), reject="/payload/code", agrees=True)

# ---------- correlation: sequences through the Family Agent's inbox ----------
SEQUENCES = []


def sequence(name, rule, steps):
    SEQUENCES.append((name, {"rule": rule, "profile": PROFILE, "inbox": {"local": FAMILY}, "steps": steps}))


def step(env, direction=None, **expect):
    s = {"envelope": env, "expect": expect}
    if direction:
        s["direction"] = direction
    return s


def msg(kind, n, ref=None, payload=None, from_kit=True, dt=0):
    frm, to = (KIT, FAMILY) if from_kit else (FAMILY, KIT)
    return envelope(kind, ref, payload, frm=frm, to=to, n=n, ts=TS + dt)


Q = {"question": "When is swim?"}
sequence("ping_answered_once", DRAFT + "ping -> pong; a second pong answers nothing open", [
    step(msg("ping", 1), verdict="delivered", correlation="opened"),
    step(msg("pong", 2, uid(1), {"status": "idle"}, from_kit=False, dt=10), "sent",
         verdict="recorded", correlation="answered", state="answered"),
    step(msg("pong", 3, uid(1), {"status": "busy"}, from_kit=False, dt=20), "sent",
         verdict="refused", reason_code="already_answered", error_code="already_answered"),
])
sequence("reply_to_unknown_request", DRAFT + "ref: how senders correlate responses to requests", [
    step(msg("pong", 2, uid(77), {"status": "idle"}), verdict="refused",
         reason_code="unknown_request", error_code="unknown_ref"),
])
sequence("wrong_reply_kind", DRAFT + "query is answered by response", [
    step(msg("query", 1, None, Q, from_kit=False), "sent", verdict="recorded", correlation="opened"),
    step(msg("pong", 2, uid(1), {"status": "idle"}, dt=10), verdict="refused",
         reason_code="unexpected_reply", error_code="unexpected_reply"),
    step(msg("response", 3, uid(1), {"summary": "Mon/Wed/Fri"}, dt=20), verdict="delivered",
         correlation="answered", state="answered"),
    step(msg("response", 4, uid(1), {"summary": "again"}, dt=30), verdict="refused",
         reason_code="already_answered", error_code="already_answered"),
])
sequence("delegate_ack_result", DRAFT + "delegate -> ack, then result when report_back", [
    step(msg("delegate", 1, None, {"task": "t", "report_back": True}, from_kit=False), "sent",
         verdict="recorded", correlation="opened"),
    step(msg("ack", 2, uid(1), {"accepted": True}, dt=10), verdict="delivered",
         correlation="answered", state="working"),
    step(msg("ack", 3, uid(1), {"accepted": True}, dt=20), verdict="refused",
         reason_code="unexpected_reply", error_code="unexpected_reply"),
    step(msg("result", 4, uid(1), {"status": "completed", "outcome": "done"}, dt=30), verdict="delivered",
         correlation="answered", state="answered"),
])
sequence("delegate_without_report_back", DRAFT + "report_back false: the ack ends the delegation", [
    step(msg("delegate", 1, None, {"task": "t"}, from_kit=False), "sent", verdict="recorded", correlation="opened"),
    step(msg("ack", 2, uid(1), {"accepted": True}, dt=10), verdict="delivered", correlation="answered",
         state="answered"),
    step(msg("result", 3, uid(1), {"status": "completed", "outcome": "x"}, dt=20), verdict="refused",
         reason_code="already_answered", error_code="already_answered"),
])
sequence("cancel_then_ack", DRAFT + "cancel -> ack; cancel names the delegation in ref", [
    step(msg("delegate", 1, None, {"task": "t", "report_back": True}), verdict="delivered", correlation="opened"),
    step(msg("cancel", 2, uid(1), {"reason": "Plans changed"}, dt=10), verdict="delivered", correlation="opened"),
    step(msg("ack", 3, uid(2), {"accepted": True}, from_kit=False, dt=20), "sent", verdict="recorded",
         correlation="answered", state="answered"),
    step(msg("error", 4, uid(1), {"code": "cancelled", "message": "Cancelled as asked"}, from_kit=False, dt=30),
         "sent", verdict="recorded", correlation="answered", state="answered"),
    step(msg("cancel", 5, uid(1), None, dt=40), verdict="delivered", correlation="opened"),
])
sequence("cancel_after_the_ack", DRAFT + "cancellation is best-effort (task may already be complete)", [
    step(msg("delegate", 1, None, {"task": "t"}), verdict="delivered", correlation="opened"),
    step(msg("ack", 2, uid(1), {"accepted": True}, from_kit=False, dt=10), "sent", verdict="recorded",
         correlation="answered", state="answered"),
    step(msg("cancel", 3, uid(1), {"reason": "Plans changed"}, dt=20), verdict="delivered", correlation="opened"),
    step(msg("ack", 4, uid(3), {"accepted": False}, from_kit=False, dt=30), "sent", verdict="recorded",
         correlation="answered", state="answered"),
])
sequence("error_for_any_ref", DRAFT + "error can be sent at any time for any ref", [
    step(msg("error", 1, uid(77), {"code": "unknown_kind", "message": "No such kind here"}), verdict="delivered",
         correlation="unrelated"),
    step(msg("ping", 2), verdict="delivered", correlation="opened"),
    step(msg("pong", 3, uid(2), {"status": "idle"}, from_kit=False, dt=10), "sent", verdict="recorded",
         correlation="answered", state="answered"),
    step(msg("error", 4, uid(2), {"code": "internal", "message": "Too late"}, dt=20), verdict="delivered",
         correlation="unrelated"),
])
sequence("reply_from_another_agent", STANCE + "a reply comes from the agent the request went to", [
    step(msg("discover", 1, None, None, from_kit=False), "sent", verdict="recorded", correlation="opened"),
    step(edit(msg("capabilities", 2, uid(1), {"domains": []}, dt=10), "/from", "fedcba9876543210"),
         verdict="refused", reason_code="wrong_peer", error_code="not_authorized"),
    step(msg("capabilities", 3, uid(1), {"domains": []}, dt=20), verdict="delivered",
         correlation="answered", state="answered"),
])
sequence("unknown_kind_is_refused", DRAFT + "unknown kind: respond with error (code: unknown_kind)", [
    step(msg("handshake", 1, None, {"versions": [1, 2]}), verdict="refused", reason_code="unsupported_kind",
         error_code="unknown_kind", reply="error"),
])
sequence("duplicate_and_not_target", STANCE + "per-sender dedup and addressing before correlation", [
    step(msg("ping", 1), verdict="delivered", correlation="opened"),
    step(msg("ping", 1), verdict="refused", reason_code="duplicate", error_code="duplicate"),
    step(edit(msg("ping", 2), "/to", "fedcba9876543210"), verdict="refused", reason_code="not_target",
         error_code="not_target"),
])


EXAMPLES_OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "acp-envelopes")


def write_examples():
    """The draft's examples as envelope files, one per kind: the examples of docs/reference/acp/."""
    if os.path.isdir(EXAMPLES_OUT):
        shutil.rmtree(EXAMPLES_OUT)
    os.makedirs(EXAMPLES_OUT)
    for kind, _, _ in EXAMPLES:
        with open(os.path.join(EXAMPLES_OUT, kind + "-draft.json"), "w") as f:
            json.dump(EXAMPLE[kind], f, indent=2, ensure_ascii=False)
            f.write("\n")
    for kind, _, _ in ADDED_EXAMPLES:
        with open(os.path.join(EXAMPLES_OUT, kind + "-example.json"), "w") as f:
            json.dump(EXAMPLE[kind], f, indent=2, ensure_ascii=False)
            f.write("\n")


def main():
    write_examples()
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    seen = set()
    for name, doc in CASES + SEQUENCES:
        if name in seen:
            raise SystemExit("duplicate fixture " + name)
        seen.add(name)
        with open(os.path.join(OUT, name + ".json"), "w") as f:
            json.dump(doc, f, indent=2, ensure_ascii=False)
            f.write("\n")
    print("wrote %d fixtures to %s" % (len(seen), os.path.relpath(OUT)))


if __name__ == "__main__":
    main()
