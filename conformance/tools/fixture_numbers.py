"""Numbers of every size and spelling for the numbers-in-open-content fixtures (issue 30 item 4),
shared by make_fixtures.py (AGH Network v0) and make_acp_fixtures.py (ACP v0.2): small, the
i64/u64 edges, between 2^64 and 2^128, beyond, decimals, exponents, beyond f64, `-0`."""
import json

NUMBERS = [
    "0", "1", "-1", "9007199254740993", "9223372036854775807", "-9223372036854775808",
    "9223372036854775808", "-9223372036854775809", "18446744073709551615", "18446744073709551616",
    "-18446744073709551616", "340282366920938463463374607431768211455",
    "340282366920938463463374607431768211456", "-340282366920938463463374607431768211457",
    "123456789012345678901234567890123456789012345678901234567890", "1.0", "1.5", "-0.25", "0.1",
    "0.09999999999999999999", "1e3", "1E3", "1e+3", "1E-7", "-1.5e-300", "1.7976931348623157e308",
    "5e-324", "1e400", "-1e400", "-0", "-0.0", "-0e0",
]


def with_numbers(doc, at, prefix):
    """`doc` (modified in place) with, in the open object at pointer `at` (`""`: the document),
    members `<prefix>n0`... (one per number) and `<prefix>all` (an array of them all); returns the
    JSON text, numbers written as above, and the pointers a forwarder must keep byte for byte."""
    target = doc
    for p in [p for p in at.split("/") if p]:
        target = target[int(p)] if isinstance(target, list) else target[p]
    preserved = {}
    for i, n in enumerate(NUMBERS):
        target["%sn%d" % (prefix, i)] = "__N%d__" % i
        preserved["%s/%sn%d" % (at, prefix, i)] = n
    target["%sall" % prefix] = ["__N%d__" % i for i in range(len(NUMBERS))]
    for i, n in enumerate(NUMBERS):
        preserved["%s/%sall/%d" % (at, prefix, i)] = n
    raw = json.dumps(doc, ensure_ascii=False)
    for i, n in reversed(list(enumerate(NUMBERS))):
        raw = raw.replace('"__N%d__"' % i, n)
    return raw, preserved
