#!/usr/bin/env python3
"""Prints the BENCHMARKS.md table from criterion's last run of `cargo bench -p agh-protocol --bench parse`:
for each corpus envelope, ns per envelope for (a) serde_json::Value, (b) Value + jsonschema and
agh_protocol::parse, and the ratios measured in that same run. Run from the repository root."""
import json
import os

ROOT = os.path.join("target", "criterion")


def mean_ns(*parts):
    path = os.path.join(ROOT, *parts, "new", "estimates.json")
    with open(path) as f:
        return json.load(f)["mean"]["point_estimate"]


def main():
    names = sorted(os.listdir(os.path.join(ROOT, "parse", "agh_parse")))
    names = [n for n in names if n != "report"]
    sizes = {}
    print("| envelope | bytes | (a) Value ns | (b) Value+jsonschema ns | agh parse ns | agh / (a) | (b) / agh |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in names:
        a = mean_ns("parse", "a_serde_value", n)
        b = mean_ns("parse", "b_value_jsonschema", n)
        ours = mean_ns("parse", "agh_parse", n)
        with open(os.path.join(ROOT, "parse", "agh_parse", n, "new", "benchmark.json")) as f:
            size = json.load(f)["throughput"]["Bytes"]
        print("| %s | %d | %.0f | %.0f | %.0f | %.2fx | %.2fx |" % (n, size, a, b, ours, ours / a, b / ours))
    r = mean_ns("receiver_say_opening_work")
    print("\nreceiver pipeline (parse + routing + dedup + lifecycle), new say opening work: %.0f ns per message" % r)


if __name__ == "__main__":
    main()
