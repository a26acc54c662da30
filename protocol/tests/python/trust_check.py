#!/usr/bin/env python3
"""An independent implementation of the checks the Rust tests hold agh-protocol to: RFC 8785
canonical JSON by the `rfc8785` package (Trail of Bits) and Ed25519 by `cryptography`, with the
verification steps of the trust profile written out again here from TRUST.md, and the strictness
`cryptography` lacks (small-order keys and `R`) computed here from the curve's equation.

Reads JSON lines on stdin and answers one line each:
  {"op": "jcs", "text": "<json text>"}        -> {"ok": true, "jcs": "<canonical text>"} or {"ok": false, "error": ...}
  {"op": "verify", "text": "<envelope text>"} -> {"ok": true, "state": "verified" | "unverified" | "rejected", "why": ...}
                                                 (for `rejected`, `why` is the failing step's name, as agh-protocol's `Step` spells it)
  {"op": "small_order"}                       -> {"ok": true, "encodings": ["<64 hex>", ...]}
"""
import base64
import hashlib
import json
import re
import sys

import rfc8785
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

PROFILE = "agh-network.trust.ed25519-jcs/v1"
MEMBERS = {"profile", "alg", "key_id", "pubkey", "sig"}
# The verified identity: nickname [a-z0-9_-]{1,32}, fingerprint 32 lowercase hex (TRUST.md).
VERIFIED_ID = re.compile(r"([a-z0-9_-]{1,32})@([a-f0-9]{32})")

# ---- edwards25519 (RFC 8032 section 5.1): -x^2 + y^2 = 1 + d x^2 y^2 over GF(p) ----
P = 2**255 - 19
D = -121665 * pow(121666, P - 2, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)
# The order of the prime subgroup: a canonical S is below it.
L = 2**252 + 27742317777372353535851937790883648493
IDENTITY = (0, 1)


def add(a, b):
    (x1, y1), (x2, y2) = a, b
    t = D * x1 * x2 * y1 * y2 % P
    x3 = (x1 * y2 + x2 * y1) * pow(1 + t, P - 2, P) % P
    y3 = (y1 * y2 + x1 * x2) * pow(1 - t, P - 2, P) % P
    return (x3, y3)


def mul(k, pt):
    out = IDENTITY
    while k:
        if k & 1:
            out = add(out, pt)
        pt = add(pt, pt)
        k >>= 1
    return out


def x_of(y, sign):
    """The x of a point with this y and sign bit, or None (RFC 8032 5.1.3, y already reduced)."""
    u, v = (y * y - 1) % P, (D * y * y + 1) % P
    x = u * pow(v, 3, P) * pow(u * pow(v, 7, P), (P - 5) // 8, P) % P
    if v * x * x % P == (-u) % P:
        x = x * SQRT_M1 % P
    if v * x * x % P != u:
        return None
    if x == 0 and sign:
        return None
    return P - x if x & 1 != sign else x


def small_order_encodings():
    """Every 32-byte encoding of a point of order dividing 8: the eight points, each by its
    canonical encoding and by the non-canonical ones a lenient decoder reads as it (y + p where
    that fits in 255 bits; the sign bit set on x = 0)."""
    # A point of order exactly 8: [L]Q for some curve point Q, kept if [4] of it is not the identity.
    y = 2
    while True:
        x = x_of(y, 0)
        if x is not None:
            t = mul(L, (x, y))
            if mul(4, t) != IDENTITY:
                break
        y += 1
    points = {mul(k, t) for k in range(8)}
    assert len(points) == 8 and all(mul(8, q) == IDENTITY for q in points)
    out = set()
    for (x, y) in points:
        for yy in [y] + ([y + P] if y + P < 2**255 else []):
            for sign in {x & 1, 1} if x == 0 else {x & 1}:
                out.add((yy | sign << 255).to_bytes(32, "little"))
    return out


SMALL_ORDER = small_order_encodings()


def is_point(enc):
    """Whether the bytes decode to a curve point (y read modulo p, as lenient decoders do)."""
    n = int.from_bytes(enc, "little")
    y, sign = (n & (2**255 - 1)) % P, n >> 255
    return x_of(y, sign) is not None or (sign and x_of(y, 0) == 0)


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("duplicate member name")
    return dict(pairs)


def b64url(s):
    if not isinstance(s, str) or "=" in s or any(c not in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_" for c in s):
        raise ValueError("not unpadded base64url")
    raw = base64.urlsafe_b64decode(s + "=" * (-len(s) % 4))
    if base64.urlsafe_b64encode(raw).decode().rstrip("=") != s:
        raise ValueError("non-canonical base64url")
    return raw


def verify(envelope):
    """(state, why): why is the failing step's name when rejected."""
    frm = envelope.get("from", "")
    if not isinstance(frm, str):
        frm = ""
    ident = VERIFIED_ID.fullmatch(frm)

    def unchecked(why):
        # No proof this receiver can check: a verified-form `from` is then proof stripping.
        return ("rejected", "proof_stripped") if ident else ("unverified", why)

    proof = envelope.get("proof")
    if proof is None:
        return unchecked("no proof")
    if not isinstance(proof, dict):
        return ("rejected", "proof_shape")
    # The `profile` member decides: absent or null names no profile (v0 receivers MUST NOT
    # require proof processing); a non-empty string names one; anything else is a malformed proof.
    profile = proof.get("profile")
    if profile is None:
        return unchecked("the proof names no profile")
    if not isinstance(profile, str) or profile == "":
        return ("rejected", "profile")
    if profile != PROFILE:
        return unchecked("other profile")
    if set(proof) - MEMBERS:
        return ("rejected", "proof_shape")
    # 2.
    if proof.get("alg") != "Ed25519":
        return ("rejected", "alg")
    # 3.
    try:
        pub = b64url(proof.get("pubkey"))
    except Exception:
        return ("rejected", "pubkey")
    if len(pub) != 32:
        return ("rejected", "pubkey")
    # 4, 5.
    digest = hashlib.sha256(pub).hexdigest()
    if proof.get("key_id") != "sha256:" + digest:
        return ("rejected", "key_id")
    # 6.
    if not ident or ident.group(2) != digest[:32]:
        return ("rejected", "fingerprint")
    # 7.
    unsigned = dict(envelope)
    unsigned["proof"] = {k: v for k, v in proof.items() if k != "sig"}
    try:
        signed = rfc8785.dumps(unsigned)
    except Exception:
        return ("rejected", "canonical_json")
    # 8. Strictly: 64 bytes, S below L, A and R curve points not of small order.
    try:
        sig = b64url(proof.get("sig"))
    except Exception:
        return ("rejected", "signature")
    if len(sig) != 64 or int.from_bytes(sig[32:], "little") >= L:
        return ("rejected", "signature")
    for enc in (pub, sig[:32]):
        if enc in SMALL_ORDER or not is_point(enc):
            return ("rejected", "signature")
    try:
        Ed25519PublicKey.from_public_bytes(pub).verify(sig, signed)
    except (InvalidSignature, ValueError):
        return ("rejected", "signature")
    return ("verified", ident.group(2))


def main():
    for line in sys.stdin:
        req = json.loads(line)
        try:
            if req["op"] == "small_order":
                out = {"ok": True, "encodings": sorted(e.hex() for e in SMALL_ORDER)}
            elif req["op"] == "pem_public_key":
                # A key file as `agh key new` writes it, read by `cryptography` (OpenSSL's parser).
                from cryptography.hazmat.primitives import serialization
                key = serialization.load_pem_private_key(req["text"].encode("ascii"), password=None)
                raw = key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
                out = {"ok": True, "public_key": raw.hex()}
            else:
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
