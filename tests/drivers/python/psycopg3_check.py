"""psycopg 3 through shardwire: server-side binding, named prepared statements, pipeline mode,
executemany, a server-side cursor, COPY both ways, and keyless reads merged across shards and a
COPY TO of every shard on a connection in psycopg's default mode (every statement inside a
transaction block).
Usage: psycopg3_check.py URL MODE TENANT TAG"""
import psycopg

from driver_check import (BATCH_QTYS, COPY_ROWS, PARAM_VALUES, PARAMS_EXPECTED, TXN_QTYS, args,
                          format_params, put)

url, mode, tenant, tag = args()
conn = psycopg.connect(url, autocommit=True, connect_timeout=10)
put("connect", "ok", "ok")
put("select1", conn.execute("SELECT 1").fetchone()[0], 1)

# Server-side binding: psycopg 3 sends the values as Bind parameters, never interpolated.
row = conn.execute("SELECT %s::int, %s::text, %s::numeric, %s::timestamptz, %s::bytea, %s::text",
                   PARAM_VALUES).fetchone()
put("params", format_params(row), PARAMS_EXPECTED)

total = 0
for i in range(1, 8):
    total += conn.execute("SELECT %s::int * 2", (i,), prepare=True).fetchone()[0]
put("prepared", total, 56)

with conn.transaction():
    for i, qty in enumerate(TXN_QTYS):
        conn.execute("INSERT INTO orders (tenant_id, note, qty) VALUES (%s, %s, %s)",
                     (tenant, "%s-txn-%d" % (tag, i), qty))
put("txn", len(TXN_QTYS), 3)

with conn.transaction():
    cur = conn.cursor()
    cur.executemany("INSERT INTO orders (tenant_id, note, qty) VALUES (%s, %s, %s)",
                    [(tenant, "%s-batch-%d" % (tag, i), q) for i, q in enumerate(BATCH_QTYS)])
put("batch", len(BATCH_QTYS), 5)

try:
    with conn.transaction():
        conn.execute("INSERT INTO orders (tenant_id, note, qty) VALUES (%s, %s, %s)",
                     (tenant, tag + "-rollback", 100))
        raise RuntimeError("roll back")
except RuntimeError:
    pass
put("rollback", conn.execute("SELECT count(*) FROM orders WHERE tenant_id = %s AND note = %s",
                             (tenant, tag + "-rollback")).fetchone()[0], 0)

counts = [conn.execute("SELECT count(*) FROM orders WHERE tenant_id = %s AND note LIKE %s",
                       (tenant, tag + "-%"), prepare=True).fetchone()[0] for _ in range(6)]
put("keyed", ",".join(map(str, counts)), "8,8,8,8,8,8")

try:
    conn.execute("SELECT * FROM no_such_table_for_drivers")
    put("error", "none", "42P01")
except psycopg.Error as e:
    put("error", e.sqlstate, "42P01")
put("after_error", conn.execute("SELECT 1").fetchone()[0], 1)

with conn.transaction():
    with conn.cursor(name="keyed_rows") as named:
        named.itersize = 2
        named.execute("SELECT qty FROM orders WHERE tenant_id = %s AND note LIKE %s ORDER BY qty",
                      (tenant, tag + "-%"))
        put("cursor", sum(r[0] for r in named), 66)

# cursor(binary=True) sends PREPARE and EXECUTE in the extended protocol with binary results:
# EXECUTE runs on the tenant's shard (it ran on the PREPARE's: a count of 0).
with conn.cursor(binary=True) as cur:
    cur.execute("PREPARE tenant_count(bigint) AS "
                "SELECT count(*) FROM orders WHERE tenant_id = $1 AND note LIKE '%s-%%'" % tag)
    cur.execute("EXECUTE tenant_count(%d)" % tenant)
    binary_count = cur.fetchone()[0]
    cur.execute("DEALLOCATE tenant_count")
put("binary_execute", binary_count, 8)

# A small statement cache (2) with every statement prepared: psycopg evicts one with DEALLOCATE
# after running the next, in the same request; each write succeeds and is counted once.
with psycopg.connect(url, connect_timeout=10, prepare_threshold=0) as cached:
    cached.prepared_max = 2
    for i in range(4):
        cached.execute("UPDATE orders SET qty = qty + 0 WHERE tenant_id = %%s AND note = %%s AND %d = %d" % (i, i),
                       (tenant, tag + "-txn-0"))
    cached.commit()
    put("prepared_cache", cached.execute("SELECT count(*) FROM orders WHERE tenant_id = %s AND note = %s",
                                         (tenant, tag + "-txn-0")).fetchone()[0], 1)

# SET client_encoding inside psycopg's transaction block: psycopg encodes by the ParameterStatus it
# gets; without it the server stored latin9 bytes for the UTF-8 of a euro sign.
with psycopg.connect(url, connect_timeout=10) as default_mode:
    default_mode.execute("SET client_encoding TO latin9")
    encoding = default_mode.info.encoding
    euro = default_mode.execute("SELECT %s::text = chr(8364)", ("\u20ac",)).fetchone()[0]
    default_mode.rollback()
    put("encoding_in_block", "%s|%s|%s" % (encoding, euro, default_mode.info.encoding),
        "iso8859-15|True|utf-8")

table = "copy_" + tag
conn.execute("DROP TABLE IF EXISTS %s" % table)
conn.execute("CREATE TABLE %s (id int, note text)" % table)
with conn.cursor() as cur:
    with cur.copy("COPY %s (id, note) FROM STDIN" % table) as copy:
        for r in COPY_ROWS:
            copy.write_row(r)
    put("copy_in", cur.rowcount, 3)
    out = []
    with cur.copy("COPY (SELECT id, note FROM %s ORDER BY id) TO STDOUT" % table) as copy:
        for r in copy.rows():
            out.append("%s|%s" % r)
    put("copy_out", ",".join(out), "1|a,2|b,3|c")

with conn.pipeline():
    c1 = conn.execute("SELECT count(*) FROM orders WHERE tenant_id = %s AND note LIKE %s",
                      (tenant, tag + "-txn-%"))
    c2 = conn.execute("SELECT %s::text || '!'", ("piped",))
    c3 = conn.execute("SELECT sum(qty)::int FROM orders WHERE tenant_id = %s AND note LIKE %s",
                      (tenant, tag + "-batch-%"))
put("pipeline", "%s,%s,%s" % (c1.fetchone()[0], c2.fetchone()[0], c3.fetchone()[0]), "3,piped!,60")

# psycopg's default (autocommit off): BEGIN before the first statement, so these keyless reads of
# every shard run inside the transaction block, on its legs.
with psycopg.connect(url, connect_timeout=10) as default_mode:
    count = default_mode.execute("SELECT count(*) FROM orders WHERE note LIKE %s", (tag + "-%",)).fetchone()[0]
    top = default_mode.execute("SELECT note, qty FROM orders WHERE note LIKE %s ORDER BY qty DESC LIMIT 1",
                               (tag + "-%",)).fetchone()
    in_block = default_mode.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
    default_mode.commit()
    put("txn_merged", "%s|%s|%s|%s" % (count, top[0][len(tag):], top[1], in_block), "8|-batch-4|14|True")

# cursor.copy() of every shard inside psycopg's default transaction: the copy holds the
# transaction's own uncommitted row; the rollback leaves it nowhere.
with psycopg.connect(url, connect_timeout=10) as default_mode:
    default_mode.execute("INSERT INTO orders (tenant_id, note, qty) VALUES (%s, %s, %s)",
                         (tenant, tag + "-copytxn", 7))
    notes = []
    with default_mode.cursor() as cur:
        with cur.copy("COPY (SELECT note FROM orders WHERE starts_with(note, '%s-')) TO STDOUT" % tag) as copy:
            for r in copy.rows():
                notes.append(r[0])
    in_block = default_mode.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
    default_mode.rollback()
    put("txn_copy", "%d|%s|%s" % (len(notes), (tag + "-copytxn") in notes, in_block), "9|True|True")

if mode == "session":
    pids = {conn.execute("SELECT pg_backend_pid()").fetchone()[0] for _ in range(3)}
    put("session_pid", "stable" if len(pids) == 1 else "changed", "stable")
conn.close()
print("done", flush=True)
