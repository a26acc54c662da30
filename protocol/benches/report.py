#!/usr/bin/env python3
"""Prints the BENCHMARKS.md tables from criterion's last run of `cargo bench -p agh-protocol --bench parse`:
for each corpus envelope, ns per envelope for (a) serde_json::Value, (b) Value + jsonschema,
agh_protocol::parse_ref (zero-copy view), agh_protocol::parse (owned message) and
agh_protocol::Receiver::receive (parse, routing, dedup, lifecycle; each call a new message), and
the ratios measured in that same run. Run from the repository root (or where CARGO_TARGET_DIR
points: `target/criterion` under it is read)."""
import json
import os

ROOT = os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")


def mean_ns(*parts):
    path = os.path.join(ROOT, *parts, "new", "estimates.json")
    with open(path) as f:
        return json.load(f)["mean"]["point_estimate"]


def interleaved():
    path = os.path.join(ROOT, "interleaved.json")
    with open(path) as f:
        data = json.load(f)
    print("Interleaved rounds (median of %d rounds; each round times a batch of every function back to back):\n"
          % next(iter(data.values()))["rounds"])
    print("| envelope | (a) Value ns | (b) Value+jsonschema ns | agh parse_ref ns | parse_ref / (a) | (b) / parse_ref | agh parse (owned) ns | parse / (a) | parse / parse_ref | to_message alone ns |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    worst_a, worst_b = 0.0, float("inf")
    for n in sorted(data):
        d = data[n]
        worst_a, worst_b = max(worst_a, d["parse_ref_over_a"]), min(worst_b, d["b_over_parse_ref"])
        print("| %s | %.0f | %.0f | %.0f | %.2fx | %.2fx | %.0f | %.2fx | %.2fx | %.0f |" % (
            n, d["a_ns"], d["b_ns"], d["parse_ref_ns"], d["parse_ref_over_a"], d["b_over_parse_ref"],
            d["parse_ns"], d["parse_over_a"], d["parse_over_parse_ref"], d["to_message_ns"]))
    print("\nworst parse_ref / (a): %.2fx (target <= 0.5x); worst (b) / parse_ref: %.2fx (target >= 4x)\n" % (worst_a, worst_b))
    print("calls per batch: " + ", ".join("%s %d" % (n, data[n]["batch"]) for n in sorted(data)) + "\n")
    if all("copy_ns" in d for d in data.values()):
        print("The floor of an owned form, same rounds: one fresh copy of the input (`to_vec`), and (parse_ref + copy) / parse_ref:\n")
        print("| envelope | copy ns | (parse_ref + copy) / parse_ref | parse / parse_ref | one small allocation ns |")
        print("| --- | ---: | ---: | ---: | ---: |")
        for n in sorted(data):
            d = data[n]
            print("| %s | %.0f | %.2fx | %.2fx | %.1f |" % (n, d["copy_ns"], d["parse_ref_and_copy_over_parse_ref"],
                                                        d["parse_over_parse_ref"], d.get("small_allocation_ns", float("nan"))))
        print()
    cap = data.get("capability", {})
    if "c_over_parse_ref" in cap:
        print("capability, in the same rounds (context, not targets): (c) = (b) + the digest recipe on the Value "
              "%.0f ns, (c) / parse_ref %.2fx; the digest recipe alone as parse_ref runs it %.0f ns; "
              "(b) / (parse_ref - recipe) %.2fx\n" % (
                  cap["c_ns"], cap["c_over_parse_ref"], cap["recipe_ns"], cap["b_over_parse_ref_less_recipe"]))
    if all("receiver_ns" in d for d in data.values()):
        receiver(data)
    print("Criterion (each function measured for seconds, one after the other):\n")


def receiver(data):
    """The receiver pipeline, from the same interleaved rounds."""
    print("Receiver pipeline, same rounds (`Receiver::receive`, each call a new message; dedup and lifecycle "
          "steps alone, each on its own state; other = receiver - parse - dedup - lifecycle):\n")
    print("| envelope | work-bound | parse_ref ns | parse (owned) ns | receiver ns | receiver / parse_ref | receiver / parse "
          "| msg/s | dedup insert ns | lifecycle ns | other ns |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    worst = 0.0
    for n in sorted(data):
        d = data[n]
        worst = max(worst, d["receiver_over_parse_ref"])
        other = d["receiver_ns"] - d["parse_ns"] - d["dedup_ns"] - d["lifecycle_ns"]
        print("| %s | %s | %.0f | %.0f | %.0f | %.2fx | %.2fx | %.0f | %.0f | %.0f | %.0f |" % (
            n, "yes" if d["work_bound"] else "no", d["parse_ref_ns"], d["parse_ns"], d["receiver_ns"],
            d["receiver_over_parse_ref"], d["receiver_over_parse"], 1e9 / d["receiver_ns"], d["dedup_ns"],
            d["lifecycle_ns"], other))
    print("\nworst receiver / parse_ref: %.2fx (issue 34 target <= 1.5x: %s)\n" % (worst, "met" if worst <= 1.5 else "not met"))
    if all("floor_over_parse_ref" in d for d in data.values()):
        floor(data)


def floor(data):
    """The receiver's floor: the steps it must take for each envelope, each timed alone in the same rounds."""
    print("Receiver floor, same rounds: the steps every receiver must take, each alone (parse = `parse_bytes` of a "
          "fresh `Bytes`, freshness included, the message dropped; route = trust policy and routing, "
          "`Receiver::route`; dedup = the window's insert, its expiry included; lifecycle = `apply_message`, for a "
          "message outside work the check that it is); floor = their sum, per round, over parse_ref. A floor "
          ">= 1.5x: the target is infeasible for that envelope; under it, receiver - floor is what is left to cut. "
          "The steps run in batches, where the processor overlaps one dedup insert's cache miss with the next ones'; "
          "serialized = the floor with the dedup step's inserts made to wait for each other, as in the receiver, "
          "where a parse lies between two.\n")
    print("| envelope | work-bound | parse_ref ns | parse ns | route ns | dedup ns | dedup serialized ns | lifecycle ns "
          "| floor / parse_ref | floor serialized / parse_ref | receiver / parse_ref | receiver / floor | receiver - floor ns "
          "| target <= 1.5x |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
    for n in sorted(data):
        d = data[n]
        steps = d["step_parse_ns"] + d["step_route_ns"] + d["dedup_ns"] + d["lifecycle_ns"]
        fl, rr = d["floor_over_parse_ref"], d["receiver_over_parse_ref"]
        status = "met" if rr <= 1.5 else ("infeasible (floor %.2fx)" % fl if fl >= 1.5 else "not met (floor %.2fx)" % fl)
        print("| %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2fx | %.2fx | %.2fx | %.2fx | %.0f | %s |" % (
            n, "yes" if d["work_bound"] else "no", d["parse_ref_ns"], d["step_parse_ns"], d["step_route_ns"],
            d["dedup_ns"], d.get("dedup_serial_ns", float("nan")), d["lifecycle_ns"], fl,
            d.get("floor_serial_over_parse_ref", float("nan")), rr,
            d["receiver_over_floor"], d["receiver_ns"] - steps, status))
    print()


def main():
    try:
        interleaved()
    except OSError:
        pass
    if not os.path.isdir(os.path.join(ROOT, "parse", "agh_parse_ref")):
        print("(no criterion figures: the run was filtered to the interleaved rounds)")
        return
    names = sorted(os.listdir(os.path.join(ROOT, "parse", "agh_parse_ref")))
    names = [n for n in names if n != "report"]
    print("| envelope | bytes | (a) Value ns | (b) Value+jsonschema ns | agh parse_ref ns | parse_ref / (a) | (b) / parse_ref | agh parse (owned) ns | parse / (a) | receiver ns | receiver / parse_ref |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    worst_a, worst_b = 0.0, float("inf")
    for n in names:
        a = mean_ns("parse", "a_serde_value", n)
        b = mean_ns("parse", "b_value_jsonschema", n)
        ref = mean_ns("parse", "agh_parse_ref", n)
        owned = mean_ns("parse", "agh_parse", n)
        with open(os.path.join(ROOT, "parse", "agh_parse_ref", n, "new", "benchmark.json")) as f:
            size = json.load(f)["throughput"]["Bytes"]
        worst_a, worst_b = max(worst_a, ref / a), min(worst_b, b / ref)
        try:
            r = mean_ns("parse", "agh_receiver", n)
            recv = "%.0f | %.2fx" % (r, r / ref)
        except OSError:
            recv = "- | -"
        print("| %s | %d | %.0f | %.0f | %.0f | %.2fx | %.2fx | %.0f | %.2fx | %s |"
              % (n, size, a, b, ref, ref / a, b / ref, owned, owned / a, recv))
    print("\nworst parse_ref / (a): %.2fx (target <= 0.5x); worst (b) / parse_ref: %.2fx (target >= 4x)" % (worst_a, worst_b))
    try:
        c = mean_ns("parse", "c_value_jsonschema_digest", "capability")
        ref = mean_ns("parse", "agh_parse_ref", "capability")
        print("capability, (c) = (b) + the digest recipe on the Value (context, not a target): %.0f ns; (c) / parse_ref: %.2fx" % (c, c / ref))
    except OSError:
        pass
    try:
        d = mean_ns("recipe_capability_digest")
        print("capability digest recipe alone (canonical JSON + SHA-256 from the members the fields scanner kept, part of parse_ref on `capability`): %.0f ns" % d)
        t = mean_ns("recipe_capability_digest_from_text")
        print("the same from the document's text alone (verify_raw: members found in one walk first): %.0f ns" % t)
    except OSError:
        pass


if __name__ == "__main__":
    main()
