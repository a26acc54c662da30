#!/usr/bin/env python3
"""An independent implementation of the checks the Rust tests hold agh-protocol to: RFC 8785
canonical JSON by the `rfc8785` package (Trail of Bits) and Ed25519 by `cryptography`, with the
verification steps of the trust profile written out again here from TRUST.md.

Reads JSON lines on stdin and answers one line each:
  {"op": "jcs", "text": "<json text>"}        -> {"ok": true, "jcs": "<canonical text>"} or {"ok": false, "error": ...}
  {"op": "verify", "text": "<envelope text>"} -> {"ok": true, "state": "verified" | "unverified" | "rejected", "why": ...}
"""
import base64
import hashlib
import json
import sys

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

PROFILE = "agh-network.trust.ed25519-jcs/v1"
# The group order of Ed25519: a canonical S is below it.
L = 2**252 + 27742317777372353535851937790883648493


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate member name")
    return dict(pairs)


def b64url(s):
    if "=" in s or any(c not in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" for c in s):
        raise ValueError("not unpadded base64url")
    raw = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    if base64.urlsafe_b64encode(raw).decode().rstrip("=") != s:
        raise ValueError("non-canonical base64url")
    return raw


def verify(envelope):
    proof = envelope.get("proof")
    frm = envelope.get("from", "")
    nick, _, fp = frm.partition("@")
    if proof is None:
        return ("rejected", "proof stripped") if "@" in frm else ("unverified", "no proof")
    if not isinstance(proof, dict):
        return ("rejected", "malformed proof")
    if not isinstance(proof.get("profile"), str):
        # No profile named: no proof of any (v0 receivers MUST NOT require proof processing).
        return ("rejected", "verified-form from, no profile") if "@" in frm else ("unverified", "no profile")
    if proof["profile"] != PROFILE:
        return ("rejected", "verified-form from, other profile") if "@" in frm else ("unverified", "other profile")
    if sorted(proof) != sorted(["profile", "alg", "key_id", "pubkey", "sig"]) or not all(isinstance(v, str) for v in proof.values()):
        return ("rejected", "proof shape")
    if proof["alg"] != "Ed25519":
        return ("rejected", "alg")
    try:
        pub = b64url(proof["pubkey"])
    except Exception:
        return ("rejected", "pubkey")
    if len(pub) != 32:
        return ("rejected", "pubkey")
    digest = hashlib.sha256(pub).hexdigest()
    if proof["key_id"] != "sha256:" + digest:
        return ("rejected", "key_id")
    if fp != digest[:32]:
        return ("rejected", "fingerprint")
    unsigned = dict(envelope)
    unsigned["proof"] = {k: v for k, v in proof.items() if k != "sig"}
    try:
        signed = rfc8785.dumps(unsigned)
    except Exception as e:
        return ("rejected", "canonical json: %s" % e)
    try:
        sig = b64url(proof["sig"])
    except Exception:
        return ("rejected", "sig")
    if len(sig) != 64 or int.from_bytes(sig[32:], "little") >= L:
        return ("rejected", "sig")
    try:
        Ed25519PublicKey.from_public_bytes(pub).verify(sig, signed)
    except (InvalidSignature, ValueError):
        return ("rejected", "signature")
    return ("verified", fp)


def main():
    for line in sys.stdin:
        req = json.loads(line)
        try:
            value = json.loads(req["text"], object_pairs_hook=no_duplicates)
            if req["op"] == "jcs":
                out = {"ok": True, "jcs": rfc8785.dumps(value).decode("utf-8")}
            else:
                state, why = verify(value)
                out = {"ok": True, "state": state, "why": why}
        except Exception as e:  # an answer per line, whatever the input
            out = {"ok": False, "error": "%s: %s" % (type(e).__name__, e)}
        sys.stdout.write(json.dumps(out) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
