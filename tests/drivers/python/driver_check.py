"""Shared contract of the Python driver checks (see tests/drivers/README.md).

Each check prints `key=value` on stdout once its value is exactly the expected one; a wrong value
ends the script with exit code 1 and `FAIL key: got ... want ...` on stderr.
"""
import datetime
import decimal
import sys

# The parameter round trip: int, text, numeric, timestamptz, bytea, NULL.
PARAM_VALUES = (
    42,
    "h\u00e9llo",
    decimal.Decimal("12.50"),
    datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
    b"\x00\xff",
    None,
)
PARAMS_EXPECTED = "42|h\u00e9llo|12.50|1704164645|00ff|null"
TXN_QTYS = (1, 2, 3)
BATCH_QTYS = (10, 11, 12, 13, 14)
COPY_ROWS = ((1, "a"), (2, "b"), (3, "c"))


def args(variants=None):
    """URL MODE TENANT TAG, then VARIANT (one of `variants`) when the script has variants."""
    want = 6 if variants else 5
    if len(sys.argv) != want or (variants and sys.argv[5] not in variants):
        sys.exit("usage: %s URL MODE TENANT TAG%s" % (sys.argv[0], " " + "|".join(variants) if variants else ""))
    url, mode, tenant, tag = sys.argv[1:5]
    if mode not in ("transaction", "session"):
        sys.exit("mode must be transaction or session")
    return (url, mode, int(tenant), tag) + ((sys.argv[5],) if variants else ())


def format_params(row):
    n, t, num, ts, b, null = row
    return "|".join([
        str(n), t, str(num), str(int(ts.timestamp())), bytes(b).hex(),
        "null" if null is None else repr(null),
    ])


def put(key, got, want):
    if got != want:
        print("FAIL %s: got %r want %r" % (key, got, want), file=sys.stderr, flush=True)
        sys.exit(1)
    print("%s=%s" % (key, got), flush=True)
