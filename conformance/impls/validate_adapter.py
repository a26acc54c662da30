#!/usr/bin/env python3
"""A second, tiny implementation of the conformance line protocol: it answers `parse` requests by
running `agh validate --format json` on each envelope, and says `unsupported` to everything else
(it keeps no lifecycle or receiver state). Usage: validate_adapter.py PATH_TO_AGH

One JSON request per line on standard input, one JSON answer per line on standard output; see
conformance/README.md.
"""
import json
import os
import subprocess
import sys
import tempfile


def parse(agh, now, text):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False, encoding="utf-8") as f:
        f.write(text)
        path = f.name
    try:
        out = subprocess.run([agh, "validate", "--format", "json", "--now", str(now), path],
                             capture_output=True, text=True)
    finally:
        os.unlink(path)
    if out.returncode not in (0, 1):
        return {"error": "agh validate exited %d: %s" % (out.returncode, out.stderr.strip())}
    line = json.loads(out.stdout.splitlines()[0])
    if line["ok"]:
        return {"verdict": "accept", "kind": line["kind"], "trust": line["trust"]}
    answer = {"verdict": "reject", "reason_code": line["reason_code"], "pointer": line["pointer"]}
    if line.get("trust"):
        answer["trust"] = line["trust"]
    return answer


def main():
    agh = sys.argv[1]
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
        except ValueError as e:
            answer = {"error": "request is not JSON: %s" % e}
        else:
            op = req.get("op")
            if op == "hello":
                answer = {"name": "agh-validate-adapter", "version": "0.1.0", "protocol": "agh-network/v0"}
            elif op == "parse":
                answer = parse(agh, req["now"], req["input"])
            else:
                answer = {"unsupported": True}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
