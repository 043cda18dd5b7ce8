#!/usr/bin/env python3
"""Writes the seed corpora of tests/fuzz/corpus/<target>/ (one small file per seed).

Run it after changing a seed or an input layout of a *_fuzz.cc (the layouts are described at the
top of each target); the files it writes are committed. Seeds named after a known proxy attack
(CVE-style inputs) say so in their names; see tests/fuzz/README.md.

    python3 tests/fuzz/make_seeds.py
"""
import hashlib
import hmac
import os
import shutil
import struct
import sys
from base64 import b64encode

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
CONFIG_DATA = os.path.join(HERE, "..", "unit", "config", "data")

# ---- PostgreSQL v3 messages ---------------------------------------------------------------------

def be16(n): return struct.pack(">H", n & 0xFFFF)
def be32(n): return struct.pack(">I", n & 0xFFFFFFFF)
def be64(n): return struct.pack(">Q", n & 0xFFFFFFFFFFFFFFFF)
def cstr(s): return (s.encode() if isinstance(s, str) else s) + b"\0"

def frame(type_byte, body, length=None):
    """Typed frame; `length` overrides the length word (for malformed seeds)."""
    return type_byte.encode() + be32(len(body) + 4 if length is None else length) + body

def startup(params, version=196608):
    body = be32(version) + b"".join(cstr(k) + cstr(v) for k, v in params) + b"\0"
    return be32(len(body) + 4) + body

SSL_REQUEST = be32(8) + be32(80877103)
GSSENC_REQUEST = be32(8) + be32(80877104)
CANCEL_REQUEST = be32(16) + be32(80877102) + be32(4242) + be32(0x5EC12E7)
ALICE = startup([("user", "alice"), ("database", "app"), ("application_name", "psql")])

def sasl_initial(data, mechanism="SCRAM-SHA-256", length=None):
    data = data.encode() if isinstance(data, str) else data
    return frame("p", cstr(mechanism) + be32(len(data) if length is None else length) + data)

def password(text): return frame("p", cstr(text))
def query(sql): return frame("Q", cstr(sql))

# ---- SCRAM-SHA-256 with the fixed values of startup_auth_fuzz.cc ---------------------------------

PASSWORD, SALT, ITERATIONS = b"pencil", b"shardwire-fuzz-s", 16
SERVER_NONCE, CLIENT_NONCE = "FuzzServerNonce", "rOprNGfwEbeRWgbNEkqO"

def scram_exchange():
    """client-first and a client-final whose proof verifies against the fixed secret."""
    first_bare = "n=,r=" + CLIENT_NONCE
    nonce = CLIENT_NONCE + SERVER_NONCE
    server_first = "r=%s,s=%s,i=%d" % (nonce, b64encode(SALT).decode(), ITERATIONS)
    salted = hashlib.pbkdf2_hmac("sha256", PASSWORD, SALT, ITERATIONS)
    client_key = hmac.new(salted, b"Client Key", hashlib.sha256).digest()
    stored_key = hashlib.sha256(client_key).digest()
    without_proof = "c=biws,r=" + nonce
    auth_message = ",".join([first_bare, server_first, without_proof]).encode()
    signature = hmac.new(stored_key, auth_message, hashlib.sha256).digest()
    proof = bytes(a ^ b for a, b in zip(client_key, signature))
    return "n,," + first_bare, without_proof + ",p=" + b64encode(proof).decode()

# ---- per-target seeds ---------------------------------------------------------------------------

def records(*chunks):
    """RecordSplitter layout: each chunk prefixed by its 2-byte big-endian length."""
    return b"".join(be16(len(c)) + c for c in chunks)

CLIENT, SERVER, CLIENT_TINY_LIMIT = b"\x00", b"\x01", b"\x02"

def frame_reader_seeds():
    bind = cstr("") + cstr("s1") + be16(1) + be16(0) + be16(2) + be32(1) + b"7" + be32(0xFFFFFFFF) + be16(0)
    parse = cstr("s1") + cstr("SELECT * FROM orders WHERE tenant_id = $1 AND id = $2") + be16(2) + be32(20) + be32(23)
    return {
        "client_simple_query": CLIENT + query("SELECT 1") + frame("S", b""),
        "client_extended_query": CLIENT + frame("P", parse) + frame("B", bind) +
            frame("D", b"P" + cstr("")) + frame("E", cstr("") + be32(0)) + frame("C", b"S" + cstr("s1")) +
            frame("H", b"") + frame("S", b"") + frame("X", b""),
        "client_bind_key_values": CLIENT + frame("B", cstr("") + cstr("s1") + be16(6) + be16(1) * 4 + be16(0) * 2 + be16(6) +
            b"".join(be32(len(v)) + v for v in [be64(-42), be32(7), be16(-1), bytes(range(16)), b" -042 ",
                                                 b"{A0EEBC99-9c0b4ef8-bb6d6bb9-bd380a11}"]) + be16(0)),
        "client_copy": CLIENT + frame("d", b"1\tone\n") + frame("c", b"") + frame("f", cstr("oops")),
        "client_password_messages": CLIENT + password("md5" + "0" * 32) + sasl_initial("n,,n=,r=abc") +
            frame("p", b"c=biws,r=abc,p=AAAA"),
        "client_tiny_limit": CLIENT_TINY_LIMIT + query("SELECT 1") + query("SELECT " + "x" * 80),
        "server_messages": SERVER + frame("R", be32(10) + cstr("SCRAM-SHA-256") + b"\0") +
            frame("R", be32(11) + b"r=abc,s=c2FsdA==,i=4096") + frame("R", be32(5) + b"salt") +
            frame("S", cstr("server_version") + cstr("15.4")) + frame("K", be32(1) + be32(2)) +
            frame("Z", b"I") + frame("C", cstr("SELECT 1")) +
            frame("E", b"SERROR\0VERROR\0C42601\0Msyntax error\0\0") + frame("N", b"SNOTICE\0Mhi\0\0"),
        "server_row_description": SERVER + frame("T", be16(2) + cstr("id") + be32(16384) + be16(1) + be32(20) +
            be16(8) + be32(0xFFFFFFFF) + be16(0) + cstr("sum") + be32(0) + be16(0) + be32(1700) + be16(0xFFFF) +
            be32(0x000A0006) + be16(1)) + frame("T", be16(0)),
        # CVE-style inputs
        "oversized_header": CLIENT + frame("Q", b"SELECT 1\0", length=0x7FFFFFFF),
        "oversized_header_server": SERVER + frame("D", b"", length=0xFFFFFFF0),
        "oversized_small_message": CLIENT + frame("S", b"", length=10001),
        "length_below_four": CLIENT + frame("Q", b"", length=3),
        "saslinitialresponse_length_overflow": CLIENT + sasl_initial("n,,n=,r=abc", length=0x7FFFFFFF),
        "saslinitialresponse_negative_length": CLIENT + sasl_initial("n,,n=,r=abc", length=0xFFFFFFFE),
        "bind_parameter_length_overflow": CLIENT + frame("B", cstr("") + cstr("") + be16(0) + be16(1) + be32(0x7FFFFFFF) + be16(0)),
        "parse_type_count_overflow": CLIENT + frame("P", cstr("") + cstr("SELECT $1") + be16(0xFFFF) + be32(23)),
        "second_startup_message": CLIENT + query("SELECT 1") + ALICE,
        "unknown_message_type": CLIENT + frame("z", b"abc"),
    }

SCRAM_FIRST, SCRAM_FINAL = scram_exchange()
TRUST, MD5, SCRAM, SCRAM_FIXED, VERIFIER = 0, 1, 2, 3, 4

def login(mode, *reads): return bytes([mode]) + records(*reads)

def startup_auth_seeds():
    empty_name_body = be32(196608) + cstr("user") + cstr("alice") + b"\0" + cstr("app") + b"\0"
    return {
        "trust_login": login(TRUST, ALICE + query("SELECT 1")),
        "trust_unknown_user": login(TRUST, startup([("user", "mallory")])),
        "md5_login": login(MD5, ALICE, password("md5" + "0123456789abcdef" * 2)),
        "scram_login": login(SCRAM, ALICE, sasl_initial(SCRAM_FIRST), frame("p", SCRAM_FINAL.encode())),
        "scram_login_verifier": login(SCRAM | VERIFIER, ALICE, sasl_initial(SCRAM_FIRST)),
        "scram_fixed_nonce_success": login(SCRAM_FIXED, ALICE, sasl_initial(SCRAM_FIRST),
                                           frame("p", SCRAM_FINAL.encode()) + query("SELECT 1")),
        "scram_fixed_nonce_unknown_user": login(SCRAM_FIXED, startup([("user", "mallory")]),
                                                sasl_initial(SCRAM_FIRST), frame("p", SCRAM_FINAL.encode())),
        "scram_channel_binding_requested": login(SCRAM, ALICE, sasl_initial("p=tls-server-end-point,,n=,r=abc")),
        "scram_wrong_mechanism": login(SCRAM, ALICE, sasl_initial("n,,n=,r=abc", mechanism="SCRAM-SHA-1")),
        "ssl_then_startup": login(SCRAM, SSL_REQUEST, ALICE),
        "ssl_twice": login(TRUST, SSL_REQUEST, SSL_REQUEST),
        "gssenc_then_startup": login(TRUST, GSSENC_REQUEST + ALICE),
        "cancel_request": login(TRUST, CANCEL_REQUEST),
        "startup_split_reads": login(TRUST, ALICE[:3], ALICE[3:9], ALICE[9:]),
        "protocol_version_2": login(TRUST, startup([("user", "alice")], version=0x00020000)),
        "startup_without_user": login(TRUST, startup([("database", "app")])),
        # CVE-style inputs
        "saslinitialresponse_length_overflow": login(SCRAM, ALICE, sasl_initial(SCRAM_FIRST, length=0x7FFFFFFF)),
        "saslinitialresponse_negative_length": login(SCRAM, ALICE, sasl_initial(SCRAM_FIRST, length=0xFFFFFFFE)),
        "oversized_header": login(TRUST, be32(0x7FFFFFFF) + be32(196608)),
        "oversized_startup_packet": login(TRUST, be32(10001) + be32(196608) + b"user\0alice\0" * 900),
        "oversized_password_header": login(SCRAM, ALICE, frame("p", b"x", length=0x7FFFFFFF)),
        "empty_option_name": login(TRUST, be32(len(empty_name_body) + 4) + empty_name_body),
        "startup_missing_terminator": login(TRUST, be32(4 + 4 + 11) + be32(196608) + b"user\0alice\0"),
        "bytes_after_sslrequest": login(SCRAM, SSL_REQUEST + ALICE),
        "second_startup_message": login(TRUST, ALICE + ALICE),
        "second_startup_message_during_auth": login(SCRAM, ALICE, ALICE),
    }

def xlog(message, lsn=0x16B374D848):
    return b"w" + be64(lsn) + be64(lsn + 0x100) + be64(0) + message

def relation(oid, schema, name, columns, identity=b"d"):
    cols = b"".join(bytes([flags]) + cstr(n) + be32(t) + be32(0xFFFFFFFF) for flags, n, t in columns)
    return b"R" + be32(oid) + cstr(schema) + cstr(name) + identity + be16(len(columns)) + cols

def tuple_data(values):
    out = be16(len(values))
    for v in values:
        if v is None: out += b"n"
        elif v == "<toast>": out += b"u"
        else: out += b"t" + be32(len(v)) + v.encode()
    return out

ORDERS = relation(16390, "public", "orders", [(1, "tenant_id", 20), (1, "id", 20), (0, "row_version", 20), (0, "note", 25)])
USERS = relation(16400, "", "users", [(1, "name", 25), (0, "email", 25)])
BEGIN = b"B" + be64(0x16B374D900) + be64(0) + be32(771)
COMMIT = b"C" + b"\0" + be64(0x16B374D900) + be64(0x16B374D930) + be64(0)

def pgoutput_seeds():
    row = ["3", "17", "2", "hello"]
    return {
        "keepalive": records(b"k" + be64(0x16B374D848) + be64(0) + b"\x01"),
        "insert_transaction": records(xlog(BEGIN), xlog(ORDERS), xlog(b"I" + be32(16390) + b"N" + tuple_data(row)), xlog(COMMIT)),
        "update_and_delete": records(xlog(BEGIN), xlog(ORDERS), xlog(USERS),
            xlog(b"U" + be32(16390) + b"K" + tuple_data(["3", "17", None, None]) + b"N" + tuple_data(["5", "17", "3", "<toast>"])),
            xlog(b"U" + be32(16390) + b"N" + tuple_data(["3", "17", "4", "<toast>"])),
            xlog(b"D" + be32(16400) + b"K" + tuple_data(["ann", None])),
            xlog(b"T" + be32(2) + b"\x01" + be32(16390) + be32(16400)), xlog(COMMIT)),
        "streamed_transaction": records(xlog(b"S" + be32(900) + b"\x01"), xlog(b"R" + be32(900) + ORDERS[1:]),
            xlog(b"I" + be32(900) + be32(16390) + b"N" + tuple_data(row)), xlog(b"E"),
            xlog(b"c" + be32(900) + b"\0" + be64(1) + be64(2) + be64(0)), xlog(b"A" + be32(901) + be32(901))),
        "origin_type_message": records(xlog(b"O" + be64(5) + cstr("origin1")), xlog(b"Y" + be32(600) + cstr("public") + cstr("mood")),
            xlog(b"M" + b"\x01" + be64(7) + cstr("shardwire") + be32(5) + b"hello")),
        "tuple_column_count_overflow": records(xlog(ORDERS), xlog(b"I" + be32(16390) + b"N" + be16(0xFFFF) + b"n")),
        "column_length_negative": records(xlog(ORDERS), xlog(b"I" + be32(16390) + b"N" + be16(1) + b"t" + be32(0xFFFFFFFF))),
        "column_length_past_end": records(xlog(ORDERS), xlog(b"I" + be32(16390) + b"N" + be16(1) + b"t" + be32(1000) + b"ab")),
        "relation_column_count_overflow": records(xlog(b"R" + be32(1) + cstr("s") + cstr("t") + b"d" + be16(0xFFFF))),
        "truncate_count_overflow": records(xlog(b"T" + be32(0xFFFFFFFF) + b"\0" + be32(1))),
        "two_phase_rejected": records(xlog(b"P" + be64(1))),
    }

def parser_seeds():
    sql = {
        "select_key": "SELECT * FROM orders WHERE tenant_id = 42 AND note = 'x'",
        "select_in_list": "SELECT id FROM orders o WHERE o.tenant_id IN (1, 2, $1) OR id = -7",
        "join_using": "SELECT * FROM orders JOIN items USING (tenant_id) LEFT JOIN users u ON u.id = orders.user_id",
        "insert_values": "INSERT INTO orders (tenant_id, id, note) VALUES (1, 2, 'a'), ($1, $2, E'b\\n') ON CONFLICT (tenant_id, id) DO UPDATE SET note = EXCLUDED.note RETURNING id",
        "update_delete": "UPDATE orders SET note = $3, row_version = row_version + 1 WHERE tenant_id = $1::bigint AND id = $2; DELETE FROM orders WHERE tenant_id = '7'::int8",
        "cte_subquery": "WITH moved AS (DELETE FROM orders WHERE tenant_id = 3 RETURNING *) SELECT count(*) FROM (SELECT * FROM moved) m WHERE EXISTS (SELECT 1 FROM users WHERE users.tenant_id = m.tenant_id)",
        "scatter_features": "SELECT DISTINCT tenant_id, sum(total) OVER (PARTITION BY id) FROM orders GROUP BY 1 HAVING count(*) > 1 ORDER BY 1 LIMIT 10 UNION ALL SELECT 1, 2",
        "session_statements": "BEGIN; SET search_path = app, public; SET LOCAL statement_timeout = '5s'; RESET ALL; SAVEPOINT a; ROLLBACK TO SAVEPOINT a; COMMIT",
        "utility": "PREPARE q(int) AS SELECT $1; EXECUTE q(1); DEALLOCATE q; LISTEN ch; NOTIFY ch, 'x'; DISCARD ALL; SHOW work_mem",
        "ddl": "CREATE TABLE orders (tenant_id bigint, id bigint, PRIMARY KEY (tenant_id, id)); ALTER TABLE orders ADD COLUMN note text; CREATE INDEX ON orders (note); DROP TABLE IF EXISTS x",
        "copy_explain": "COPY orders (tenant_id, id) FROM STDIN; EXPLAIN ANALYZE SELECT * FROM orders WHERE tenant_id = 1; COPY (SELECT 1) TO STDOUT",
        "literals": "SELECT U&'\\0041', $$dollar$$, $tag$x$tag$, B'101', X'ff', 1.5e3, -0, 'it''s', uuid 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', TRUE, NULL",
        "merge": "MERGE INTO orders o USING src s ON o.tenant_id = s.tenant_id WHEN MATCHED THEN UPDATE SET note = s.note WHEN NOT MATCHED THEN INSERT VALUES (s.tenant_id)",
        "comment_only": "-- nothing here\n/* nor /* here */ */",
        "nested_parens": "SELECT " + "(" * 300 + "1" + ")" * 300,
        "nested_subqueries": "SELECT * FROM orders WHERE tenant_id IN (" * 60 + "SELECT 1" + ")" * 60,
        "syntax_error": "SELEC * FROM",
        "param_zero": "SELECT * FROM orders WHERE tenant_id = $0 AND id = $4294967297",
    }
    return {name: text.encode() for name, text in sql.items()}

def admin_seeds():
    commands = ["SHOW HELP;", "show version", "SHOW CONFIG", "SHOW POOLS;;", "SHOW BUCKETS s1", "SHOW ROUTE SELECT * FROM orders WHERE tenant_id = 1",
                "PAUSE", "RESUME", "RELOAD", "RECONNECT", "KILL_CLIENT c12", "KILL_CLIENT 99999999999999999999",
                "SHUTDOWN WAIT_FOR_CLIENTS", "SHOW MIGRATIONS", "MOVE BUCKETS 1,5,10-20 TO s3", "MOVE BUCKETS 0-4095 TO s0",
                "MOVE BUCKETS 20-10 TO s1", "REBALANCE", "REBALANCE TO s0, s1, s3 DRY RUN", "REBALANCE TO s0 DRY RUN",
                "PAUSE MIGRATION 3", "RESUME MIGRATION 3", "CANCEL MIGRATION 3", "ROLLBACK MIGRATION 3",
                "EXPIRE ROLLBACK 3", "VERIFY BUCKET 4095", "SHOW HELP; SHOW VERSION", "   ",
                "REBALANCE TO s0, s1 BY BUCKETS DRY RUN", "rebalance by data"]
    return {"cmd_%02d" % i: c.encode() for i, c in enumerate(commands)}

MINIMAL_CONFIG = """listen: { host: 127.0.0.1, port: 6432 }
auth:
  method: md5
  users: [ { name: app, password: secret } ]
pool: { mode: session, size: 5 }
shards:
  - { name: s0, dsn: "host=127.0.0.1 port=5433 dbname=app user=postgres sslmode=require" }
sharding:
  buckets: 16
  tables: [ { name: app.users, key: name, type: text } ]
"""

def config_seeds():
    seeds = {"minimal": MINIMAL_CONFIG.encode(),
             "anchors": b"base: &b { name: s0, dsn: 'host=h' }\nshards: [ *b ]\nauth: { method: trust, users: [] }\n",
             "unknown_key": MINIMAL_CONFIG.replace("pool:", "pools:").encode(),
             "bad_duration": MINIMAL_CONFIG.replace("size: 5", "size: 5, idle_timeout: 5 weeks").encode(),
             "deep_nesting": b"shards: " + b"[" * 3000}
    for name in ("full", "block"):
        with open(os.path.join(CONFIG_DATA, name + ".yaml"), "rb") as f:
            seeds[name] = f.read()
    return seeds

def copy_rows_seeds():
    """Mode byte (format, key field, HEADER, FORCE_NOT_NULL, NULL 'N'), piece size, COPY data."""
    pgcopy = b"PGCOPY\n\xff\r\n\0" + be32(0) + be32(0)
    def tuple_(*fields):
        return be16(len(fields)) + b"".join(be32(0xFFFFFFFF) if f is None else be32(len(f)) + f for f in fields)
    return {
        "text": bytes([0x00, 3]) + b"1\ta\\tb\n\\x41\\102\tz\n\\N\tq\n7\t\\\n x\n\\.\nafter\n",
        "text_header_crlf": bytes([0x10 | 0x04, 5]) + b"a\tk\r\nx\t5\r\ny\t\\N\r\n",
        "text_mixed_eol": bytes([0x00, 0]) + b"1\n2\r\n",
        "text_marker_mid_line": bytes([0x00, 2]) + b"1\n2\\.\n",
        "csv": bytes([0x01, 4]) + b'1,"a,b"\n"2","multi\nline"\n"3""x",y\n,empty\n"",q\n\\.\n',
        "csv_quote_escape": bytes([0x03 | 0x04 | 0x10, 2]) + b"a,k\nx,'it\\'s'\nx,''\n",
        "csv_force_not_null": bytes([0x01 | 0x20 | 0x40, 1]) + b"N,1\n\"N\",2\n",
        "csv_unterminated": bytes([0x01, 0]) + b'1,"open\n',
        "binary": bytes([0x02, 7]) + pgcopy + tuple_(be64(5), None) + tuple_(None, b"abc") + be16(0xFFFF),
        "binary_key_field_1": bytes([0x02 | 0x04, 3]) + pgcopy + tuple_(b"x", b"key") + be16(0xFFFF),
        "binary_after_trailer": bytes([0x02, 0]) + pgcopy + be16(0xFFFF) + be16(0xFFFF),
        "binary_oids": bytes([0x02, 0]) + b"PGCOPY\n\xff\r\n\0" + be32(1 << 16) + be32(0),
        "binary_extension": bytes([0x02, 1]) + b"PGCOPY\n\xff\r\n\0" + be32(0) + be32(3) + b"ext" + tuple_(b"k"),
        "binary_huge_field": bytes([0x02, 0]) + pgcopy + be16(1) + be32(0x7FFFFFFF) + b"x",
    }

TARGETS = {
    "frame_reader": frame_reader_seeds, "startup_auth": startup_auth_seeds, "pgoutput": pgoutput_seeds,
    "parser_facts": parser_seeds, "admin_command": admin_seeds, "config_loader": config_seeds,
    "copy_rows": copy_rows_seeds,
}

def main():
    for target, make in TARGETS.items():
        directory = os.path.join(CORPUS, target)
        # Regression inputs (crash-*, found by fuzzing) are kept; generated seeds are rewritten.
        kept = [f for f in os.listdir(directory) if f.startswith("regression_")] if os.path.isdir(directory) else []
        seeds = make()
        os.makedirs(directory, exist_ok=True)
        for f in os.listdir(directory):
            if f not in kept: os.remove(os.path.join(directory, f))
        for name, data in seeds.items():
            with open(os.path.join(directory, name), "wb") as f:
                f.write(data)
        print("%-14s %3d seeds, %d regression inputs" % (target, len(seeds), len(kept)))

if __name__ == "__main__":
    sys.exit(main())
