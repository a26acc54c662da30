#!/usr/bin/env python3
"""A small, independent AGH Network v0 peer over NATS (NATS Peer level).

Written from the seed pages (envelope, message kinds, peer discovery, capability discovery) and
NOTES sections 3-7 and 9, not from the Rust implementation. It joins one workspace channel,
greets on the broadcast subject and again every interval, answers whois (broadcast when the query
matches, directed always; the rich catalog only when `agh.include` asks for it), validates every
inbound envelope in the envelope page's order, deduplicates by (from, id), keeps the work
lifecycle, sends the receipts NOTES 5 asks for (never for a refused receipt), and works on every
work request directed to it: receipt `accepted`, trace `working`, trace `completed` (the wire
kit's harness contract).

    python3 nats_peer.py --nats nats://127.0.0.1:4222 --workspace ws --channel builders \\
        --id py.worker [--greet-interval 1] [--break NAME]...

`--break NAME` switches each break one requirement on purpose, so that a test can check that the
wire kit (`agh conformance wire`) catches it; `--list-breaks` prints them. Needs `nats-py`.
"""

import argparse
import asyncio
import hashlib
import json
import re
import signal
import sys
import time

import nats

PROTOCOL = "agh-network/v0"
PREFIX = "agh.network.v0"
REPLAY_AGE = 300
MAX_BYTES = 1024 * 1024
KINDS = ("greet", "whois", "say", "capability", "receipt", "trace")
CONVERSATION = ("say", "capability", "receipt", "trace")
PEER_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,127}$")
CHANNEL_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
WORK_RE = re.compile(r"^work_[a-zA-Z0-9_-]{1,64}$")
DIRECT_RE = re.compile(r"^direct_[a-f0-9]{32}$")
STATUSES = ("accepted", "rejected", "duplicate", "expired", "unsupported", "canceled")
STATES = ("submitted", "working", "needs_input", "completed", "failed", "canceled")
TERMINAL = ("completed", "failed", "canceled")

BREAKS = {
    "no-greet": "never greets",
    "whois-on-broadcast": "publishes whois responses on the broadcast subject",
    "wrong-route-token": "listens on the SHA-256 of its id in full (32 bytes) instead of the route token",
    "no-duplicate": "does not deduplicate: a repeated envelope is processed again",
    "answer-refused-receipt": "answers a refused receipt with a receipt",
    "reopen-closed-work": "takes new messages on completed work (reopens it) instead of work_closed",
    "no-expiry": "does not check freshness: stale envelopes are processed",
    "no-not-target": "processes envelopes directed to other peers",
    "malformed-silent": "sends no receipt for a malformed envelope",
    "unknown-kind-silent": "drops envelopes of unknown kinds without a receipt",
    "no-catalog": "ignores agh.include (no rich catalog)",
    "catalog-always": "attaches the rich catalog to every whois response",
    "answer-everyone": "answers every broadcast whois, whatever its query",
    "ts-as-string": "writes `ts` as a string in its receipts",
    "skip-working": "goes straight to completed, without the `working` trace",
}


def route_token(peer_id):
    """NOTES 6: hex of the first 16 bytes of SHA-256 of the UTF-8 peer id."""
    return hashlib.sha256(peer_id.encode("utf-8")).digest()[:16].hex()


class Refuse(Exception):
    """An inbound envelope refused with a reason code."""

    def __init__(self, code, pointer, message):
        super().__init__(message)
        self.code = code
        self.pointer = pointer


def strict_loads(data):
    """JSON with duplicate keys refused (NOTES 1)."""

    def pairs(items):
        seen = {}
        for k, v in items:
            if k in seen:
                raise ValueError("duplicate key %r" % k)
            seen[k] = v
        return seen

    return json.loads(data.decode("utf-8"), object_pairs_hook=pairs)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check(env, now, check_freshness):
    """Steps 2-5 of the envelope page's validation order. Raises Refuse."""
    for member in ("protocol", "id", "workspace_id", "kind", "channel", "from", "ts", "body"):
        if member not in env:
            raise Refuse("malformed", "/" + member, "`%s` is required" % member)
    if env["protocol"] != PROTOCOL:
        raise Refuse("unsupported_profile", "/protocol", "protocol must be " + PROTOCOL)
    for member in ("id", "workspace_id", "kind", "channel", "from"):
        if not isinstance(env[member], str) or not env[member]:
            raise Refuse("malformed", "/" + member, "`%s` must be a non-empty string" % member)
    if not CHANNEL_RE.match(env["channel"]):
        raise Refuse("malformed", "/channel", "channel grammar")
    if not PEER_RE.match(env["from"]):
        raise Refuse("malformed", "/from", "peer id grammar")
    to = env.get("to")
    if to is not None and (not isinstance(to, str) or not PEER_RE.match(to)):
        raise Refuse("malformed", "/to", "peer id grammar")
    if not is_int(env["ts"]):
        raise Refuse("malformed", "/ts", "ts must be an integer")
    kind = env["kind"]
    if kind not in KINDS:
        raise Refuse("unsupported_kind", "/kind", "kind %r is not supported" % kind)
    if check_freshness:
        expires = env.get("expires_at")
        if expires is not None:
            if not is_int(expires):
                raise Refuse("malformed", "/expires_at", "must be an integer")
            if expires <= now:
                raise Refuse("expired", "/expires_at", "expired")
        elif now - env["ts"] > REPLAY_AGE:
            raise Refuse("expired", "/ts", "older than the replay age")
        if env["ts"] - now > REPLAY_AGE:
            raise Refuse("expired", "/ts", "too far in the future")
    surface = env.get("surface")
    if kind in ("greet", "whois"):
        for m in ("surface", "thread_id", "direct_id", "work_id"):
            if env.get(m) is not None or m in env:
                raise Refuse("malformed", "/" + m, "discovery envelopes carry no " + m)
    else:
        if surface == "thread":
            if not isinstance(env.get("thread_id"), str) or not env["thread_id"]:
                raise Refuse("malformed", "/thread_id", "thread_id is required")
            if env.get("direct_id") is not None:
                raise Refuse("malformed", "/direct_id", "not with a thread")
        elif surface == "direct":
            if not isinstance(env.get("direct_id"), str) or not DIRECT_RE.match(env["direct_id"]):
                raise Refuse("malformed", "/direct_id", "direct_id grammar")
            if env.get("thread_id") is not None:
                raise Refuse("malformed", "/thread_id", "not with a direct room")
        else:
            raise Refuse("malformed", "/surface", "surface must be thread or direct")
    work = env.get("work_id")
    if work is not None and (not isinstance(work, str) or not WORK_RE.match(work)):
        raise Refuse("malformed", "/work_id", "work_id grammar")
    if kind in ("receipt", "trace") and work is None:
        raise Refuse("malformed", "/work_id", "work_id is required on " + kind)
    body = env["body"]
    if not isinstance(body, dict):
        raise Refuse("malformed", "/body", "body must be an object")
    check_body(kind, body, env)


def check_body(kind, body, env):
    def need_str(member):
        if not isinstance(body.get(member), str):
            raise Refuse("malformed", "/body/" + member, "`%s` must be a string" % member)

    if kind == "say":
        need_str("text")
    elif kind == "greet":
        check_card(body.get("peer_card"), env, "/body/peer_card")
    elif kind == "whois":
        if body.get("type") not in ("request", "response"):
            raise Refuse("malformed", "/body/type", "request or response")
        q = body.get("query")
        if q is not None and not isinstance(q, str):
            raise Refuse("malformed", "/body/query", "a string")
        if body["type"] == "response":
            check_card(body.get("peer_card"), env, "/body/peer_card")
            if not isinstance(env.get("reply_to"), str):
                raise Refuse("malformed", "/reply_to", "a whois response replies to a request")
    elif kind == "receipt":
        need_str("for_id")
        if body.get("status") not in STATUSES:
            raise Refuse("malformed", "/body/status", "unknown status")
        if body["status"] == "accepted" and body.get("reason_code") is not None:
            raise Refuse("malformed", "/body/reason_code", "absent for accepted")
    elif kind == "trace":
        if body.get("state") not in STATES:
            raise Refuse("malformed", "/body/state", "unknown state")
    elif kind == "capability":
        if not isinstance(body.get("capability"), dict):
            raise Refuse("malformed", "/body/capability", "an object")


def check_card(card, env, at):
    if not isinstance(card, dict):
        raise Refuse("malformed", at, "a Peer Card object")
    if card.get("peer_id") != env["from"]:
        raise Refuse("malformed", at + "/peer_id", "must be the sender")
    for member in ("profiles_supported", "capabilities", "artifacts_supported", "trust_modes_supported"):
        if not isinstance(card.get(member), list):
            raise Refuse("malformed", at + "/" + member, "an array")


class Peer:
    def __init__(self, args):
        self.args = args
        self.breaks = set(args.breaks)
        self.me = args.id
        ws, ch = args.workspace, args.channel
        self.broadcast = "%s.%s.%s.broadcast" % (PREFIX, ws, ch)
        token = route_token(self.me)
        if "wrong-route-token" in self.breaks:
            token = hashlib.sha256(self.me.encode("utf-8")).hexdigest()
        self.own = "%s.%s.%s.peer.%s" % (PREFIX, ws, ch, token)
        self.card = {
            "peer_id": self.me,
            "display_name": "Python wire peer",
            "profiles_supported": [PROTOCOL],
            "capabilities": [],
            "artifacts_supported": ["capability"],
            "trust_modes_supported": [],
        }
        self.seen = {}  # (from, id) -> ts first seen (the dedup window)
        self.work = {}  # (surface, container, work_id) -> {"state", "initiator", "target"}
        self.seq = 0
        self.nc = None

    def next_id(self, prefix):
        self.seq += 1
        return "%s-%s-%d-%d" % (prefix, self.me, int(time.time() * 1000), self.seq)

    def subject_for(self, to):
        if to is None:
            return self.broadcast
        return "%s.%s.%s.peer.%s" % (PREFIX, self.args.workspace, self.args.channel, route_token(to))

    def envelope(self, kind, body, to=None, **members):
        env = {
            "protocol": PROTOCOL,
            "id": self.next_id(kind),
            "workspace_id": self.args.workspace,
            "kind": kind,
            "channel": self.args.channel,
            "from": self.me,
            "to": to,
            "ts": int(time.time()),
            "body": body,
            "proof": None,
        }
        env.update(members)
        return env

    async def send(self, env, subject=None):
        await self.nc.publish(subject or self.subject_for(env.get("to")), json.dumps(env).encode("utf-8"))

    async def greet(self):
        if "no-greet" in self.breaks:
            return
        await self.send(self.envelope("greet", {"peer_card": self.card}))

    def container(self, env):
        c = env.get("thread_id") if env.get("surface") == "thread" else env.get("direct_id")
        return (env.get("surface"), c)

    async def receipt(self, env, status, code=None, detail=None):
        """NOTES 5: same surface, container and work_id; reply_to and for_id = its id; to = sender."""
        body = {"for_id": env["id"], "status": status}
        if code is not None:
            body["reason_code"] = code
        if detail:
            body["detail"] = detail
        surface, container = self.container(env)
        members = {"surface": surface, "work_id": env["work_id"], "reply_to": env["id"]}
        members["thread_id" if surface == "thread" else "direct_id"] = container
        r = self.envelope("receipt", body, to=env["from"], **members)
        if "ts-as-string" in self.breaks:
            r["ts"] = str(r["ts"])
        await self.send(r)

    async def trace(self, env, state, text):
        surface, container = self.container(env)
        members = {"surface": surface, "work_id": env["work_id"], "causation_id": env["id"]}
        members["thread_id" if surface == "thread" else "direct_id"] = container
        await self.send(self.envelope("trace", {"state": state, "message": text}, to=env["from"], **members))

    def status_for(self, code):
        return {"expired": "expired", "duplicate": "duplicate", "unsupported_kind": "unsupported",
                "unsupported_profile": "unsupported"}.get(code, "rejected")

    async def refuse(self, env, refusal):
        """Answers a refusal with a receipt when it can be addressed (never a refused receipt)."""
        if not isinstance(env, dict):
            return
        if refusal.code == "malformed" and "malformed-silent" in self.breaks:
            return
        if refusal.code == "unsupported_kind" and "unknown-kind-silent" in self.breaks:
            return
        if env.get("kind") == "receipt" and "answer-refused-receipt" not in self.breaks:
            return
        ok = (isinstance(env.get("id"), str) and isinstance(env.get("from"), str)
              and PEER_RE.match(env["from"]) and env["from"] != self.me
              and env.get("surface") in ("thread", "direct")
              and isinstance(env.get("work_id"), str) and WORK_RE.match(env["work_id"])
              and isinstance(self.container(env)[1], str))
        if not ok:
            return
        await self.receipt(env, self.status_for(refusal.code), refusal.code, str(refusal))

    async def on_message(self, msg):
        try:
            await self.handle(msg.data)
        except Exception as e:  # a peer never stops on one bad message
            print("error: %r" % e, file=sys.stderr, flush=True)

    async def handle(self, data):
        now = int(time.time())
        if len(data) > MAX_BYTES:
            return  # too big to be an envelope: refused, nothing to address
        try:
            env = strict_loads(data)
        except (ValueError, UnicodeDecodeError):
            return  # not JSON: refused, nothing to address
        if not isinstance(env, dict):
            return
        if env.get("from") == self.me:
            return  # our own broadcast, echoed back
        try:
            check(env, now, "no-expiry" not in self.breaks)
        except Refuse as r:
            await self.refuse(env, r)
            return
        # Step 6: routing.
        if env["workspace_id"] != self.args.workspace or env["channel"] != self.args.channel:
            return
        to = env.get("to")
        if to is not None and to != self.me and "no-not-target" not in self.breaks:
            await self.refuse(env, Refuse("not_target", "/to", "directed to " + to))
            return
        key = (env["from"], env["id"])
        if key in self.seen and "no-duplicate" not in self.breaks:
            await self.refuse(env, Refuse("duplicate", "/id", "already processed"))
            return
        self.seen[key] = now
        for k in [k for k, t in self.seen.items() if now - t > REPLAY_AGE]:
            del self.seen[k]
        kind = env["kind"]
        if kind == "whois":
            await self.on_whois(env)
            return
        if kind == "greet":
            return
        # Step 7: the work lifecycle (NOTES 4).
        work_id = env.get("work_id")
        if work_id is None:
            return
        surface, container = self.container(env)
        wkey = (surface, container, work_id)
        unit = self.work.get(wkey)
        if unit is None:
            if any(k[2] == work_id for k in self.work) and kind in ("say", "capability"):
                await self.refuse(env, Refuse("work_container_mismatch", "", "another container"))
                return
            if kind in ("say", "capability") and to is not None:
                self.work[wkey] = {"state": "submitted", "initiator": env["from"], "target": to}
                if to == self.me:
                    await self.work_on(env, wkey)
            return  # a receipt or trace for work never opened changes nothing
        if env["from"] not in (unit["initiator"], unit["target"]):
            return
        if unit["state"] in TERMINAL:
            if "reopen-closed-work" in self.breaks and kind in ("say", "capability"):
                unit["state"] = "submitted"
                await self.work_on(env, wkey)
                return
            await self.refuse(env, Refuse("work_closed", "/work_id", "work is " + unit["state"]))
            return
        if kind == "trace":
            state = env["body"]["state"]
            if state == "submitted":
                await self.refuse(env, Refuse("internal", "/body/state", "never back to submitted"))
                return
            unit["state"] = state
        elif kind == "receipt":
            status = env["body"]["status"]
            if status == "rejected":
                unit["state"] = "failed"
            elif status == "canceled":
                unit["state"] = "canceled"

    async def work_on(self, env, wkey):
        """The harness contract: accept, work, complete."""
        await self.receipt(env, "accepted")
        self.work[wkey]["state"] = "working"
        if "skip-working" not in self.breaks:
            await self.trace(env, "working", "working on it")
        self.work[wkey]["state"] = "completed"
        await self.trace(env, "completed", "done")

    def matches(self, query):
        """NOTES 7: empty, or equal to the peer id, display name, a capability, profile, artifact or trust mode."""
        if query is None or query == "":
            return True
        c = self.card
        return (query in (c["peer_id"], c.get("display_name")) or query in c["capabilities"]
                or query in c["profiles_supported"] or query in c["artifacts_supported"]
                or query in c["trust_modes_supported"])

    async def on_whois(self, env):
        body = env["body"]
        if body["type"] != "request":
            return
        directed = env.get("to") == self.me
        if not directed and not self.matches(body.get("query")) and "answer-everyone" not in self.breaks:
            return
        ext = {}
        include = (env.get("ext") or {}).get("agh.include")
        asked = isinstance(include, list) and "capability_catalog" in include
        if (asked and "no-catalog" not in self.breaks) or "catalog-always" in self.breaks:
            ext["agh.capability_catalog"] = {"capabilities": []}
        members = {"reply_to": env["id"]}
        if ext:
            members["ext"] = ext
        response = self.envelope("whois", {"type": "response", "peer_card": self.card},
                                 to=env["from"], **members)
        subject = self.broadcast if "whois-on-broadcast" in self.breaks else None
        await self.send(response, subject)

    async def run(self):
        self.nc = await nats.connect(self.args.nats, max_reconnect_attempts=-1)
        await self.nc.subscribe(self.broadcast, cb=self.on_message)
        await self.nc.subscribe(self.own, cb=self.on_message)
        await self.nc.flush()
        await self.greet()
        print("joined %s as %s on %s" % (self.broadcast, self.me, self.own), flush=True)
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for s in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(s, stop.set)
        while not stop.is_set():
            try:
                await asyncio.wait_for(stop.wait(), timeout=self.args.greet_interval)
            except asyncio.TimeoutError:
                await self.greet()
        await self.nc.drain()


def main():
    p = argparse.ArgumentParser(description="An independent AGH Network v0 peer over NATS")
    p.add_argument("--nats", default="nats://127.0.0.1:4222")
    p.add_argument("--workspace")
    p.add_argument("--channel")
    p.add_argument("--id")
    p.add_argument("--greet-interval", type=float, default=30.0)
    p.add_argument("--break", dest="breaks", action="append", default=[], choices=sorted(BREAKS))
    p.add_argument("--list-breaks", action="store_true")
    args = p.parse_args()
    if args.list_breaks:
        for name in sorted(BREAKS):
            print("%s\t%s" % (name, BREAKS[name]))
        return
    for member in ("workspace", "channel", "id"):
        if not getattr(args, member):
            p.error("--%s is required" % member)
    if not PEER_RE.match(args.id) or not CHANNEL_RE.match(args.channel):
        p.error("--id or --channel does not match the protocol grammar")
    asyncio.run(Peer(args).run())


if __name__ == "__main__":
    main()
