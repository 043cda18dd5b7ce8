"""psycopg2 through shardwire (client-side interpolation, simple protocol): parameters, a
transaction, executemany, a named (server-side) cursor, copy_expert both ways, and keyless reads
merged across shards in psycopg2's default mode (every statement inside a transaction block).
Usage: psycopg2_check.py URL MODE TENANT TAG"""
import io

import psycopg2

from driver_check import (BATCH_QTYS, COPY_ROWS, PARAM_VALUES, PARAMS_EXPECTED, TXN_QTYS, args,
                          format_params, put)

url, mode, tenant, tag = args()
conn = psycopg2.connect(url, connect_timeout=10)
conn.autocommit = True
cur = conn.cursor()
put("connect", "ok", "ok")
cur.execute("SELECT 1")
put("select1", cur.fetchone()[0], 1)

cur.execute("SELECT %s::int, %s::text, %s::numeric, %s::timestamptz, %s::bytea, %s::text",
            PARAM_VALUES)
put("params", format_params(cur.fetchone()), PARAMS_EXPECTED)

# SQL-level PREPARE/EXECUTE of a statement that names no table (default shard).
cur.execute("PREPARE twice(int) AS SELECT $1 * 2")
total = 0
for i in range(1, 8):
    cur.execute("EXECUTE twice(%s)", (i,))
    total += cur.fetchone()[0]
cur.execute("DEALLOCATE twice")
put("prepared", total, 56)

conn.autocommit = False
for i, qty in enumerate(TXN_QTYS):
    cur.execute("INSERT INTO orders (tenant_id, note, qty) VALUES (%s, %s, %s)",
                (tenant, "%s-txn-%d" % (tag, i), qty))
conn.commit()
put("txn", len(TXN_QTYS), 3)

cur.executemany("INSERT INTO orders (tenant_id, note, qty) VALUES (%s, %s, %s)",
                [(tenant, "%s-batch-%d" % (tag, i), q) for i, q in enumerate(BATCH_QTYS)])
conn.commit()
put("batch", len(BATCH_QTYS), 5)

cur.execute("INSERT INTO orders (tenant_id, note, qty) VALUES (%s, %s, %s)", (tenant, tag + "-rollback", 100))
conn.rollback()
cur.execute("SELECT count(*) FROM orders WHERE tenant_id = %s AND note = %s", (tenant, tag + "-rollback"))
put("rollback", cur.fetchone()[0], 0)
conn.commit()

counts = []
for _ in range(6):
    cur.execute("SELECT count(*) FROM orders WHERE tenant_id = %s AND note LIKE %s",
                (tenant, tag + "-%"))
    counts.append(cur.fetchone()[0])
conn.commit()
put("keyed", ",".join(map(str, counts)), "8,8,8,8,8,8")

try:
    cur.execute("SELECT * FROM no_such_table_for_drivers")
    put("error", "none", "42P01")
except psycopg2.Error as e:
    put("error", e.pgcode, "42P01")
conn.rollback()
cur.execute("SELECT 1")
put("after_error", cur.fetchone()[0], 1)
conn.commit()

named = conn.cursor(name="keyed_rows")
named.itersize = 2
named.execute("SELECT qty FROM orders WHERE tenant_id = %s AND note LIKE %s ORDER BY qty",
              (tenant, tag + "-%"))
put("cursor", sum(r[0] for r in named), 66)
named.close()
conn.commit()

conn.autocommit = True
table = "copy_" + tag
cur.execute("DROP TABLE IF EXISTS %s" % table)
cur.execute("CREATE TABLE %s (id int, note text)" % table)
cur.copy_expert("COPY %s (id, note) FROM STDIN" % table,
                io.StringIO("".join("%d\t%s\n" % r for r in COPY_ROWS)))
put("copy_in", cur.rowcount, 3)
buf = io.StringIO()
cur.copy_expert("COPY (SELECT id, note FROM %s ORDER BY id) TO STDOUT" % table, buf)
put("copy_out", ",".join(l.replace("\t", "|") for l in buf.getvalue().splitlines()), "1|a,2|b,3|c")

default_mode = psycopg2.connect(url, connect_timeout=10)  # autocommit off: BEGIN first
with default_mode.cursor() as merged:
    merged.execute("SELECT count(*) FROM orders WHERE note LIKE %s", (tag + "-%",))
    count = merged.fetchone()[0]
    merged.execute("SELECT note, qty FROM orders WHERE note LIKE %s ORDER BY qty DESC LIMIT 1", (tag + "-%",))
    top = merged.fetchone()
in_block = default_mode.get_transaction_status() == psycopg2.extensions.TRANSACTION_STATUS_INTRANS
default_mode.commit()
default_mode.close()
put("txn_merged", "%s|%s|%s|%s" % (count, top[0][len(tag):], top[1], in_block), "8|-batch-4|14|True")

if mode == "session":
    pids = set()
    for _ in range(3):
        cur.execute("SELECT pg_backend_pid()")
        pids.add(cur.fetchone()[0])
    put("session_pid", "stable" if len(pids) == 1 else "changed", "stable")
conn.close()
print("done", flush=True)
