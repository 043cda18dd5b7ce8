"""An UPDATE and a DELETE whose key lists fall on several shards, through shardwire, by psycopg 3,
psycopg2 or asyncpg in autocommit: each driver's own way of passing a list (psycopg 3: a list
parameter for `= ANY(%s)`, sent as a text array, and one parameter per IN item; psycopg2: a tuple
for `IN %s`, interpolated as a literal list; asyncpg: one parameter per IN item, and a list for
`= ANY($1)`, which it sends as a binary array), the summed row
count, RETURNING rows from every shard. Each tenant starts with two rows (qty 1 and 2).
Usage: split_write_check.py URL psycopg|psycopg2|asyncpg TENANTS
TENANTS: comma-separated keys, each on another shard."""
import asyncio
import sys

from driver_check import put


def run_psycopg(url, tenants):
    import psycopg
    with psycopg.connect(url, autocommit=True) as conn:
        cur = conn.execute("UPDATE orders SET qty = qty + 10 WHERE tenant_id = ANY(%s) RETURNING qty",
                           [tenants])
        put("update_any", cur.rowcount, 6)
        put("update_any_rows", sorted(r[0] for r in cur.fetchall()), [11, 11, 11, 12, 12, 12])
        cur = conn.execute("DELETE FROM orders WHERE tenant_id IN (%s, %s) AND qty = %s",
                           [tenants[0], tenants[2], 11])
        put("delete_in", cur.rowcount, 2)
        put("left", conn.execute("SELECT count(*) FROM orders").fetchone()[0], 4)


def run_psycopg2(url, tenants):
    import psycopg2
    conn = psycopg2.connect(url)
    conn.autocommit = True
    cur = conn.cursor()
    cur.execute("UPDATE orders SET qty = qty + 10 WHERE tenant_id IN %s", (tuple(tenants),))
    put("update_in", cur.rowcount, 6)
    cur.execute("DELETE FROM orders WHERE tenant_id IN %s AND qty = 11 RETURNING tenant_id",
                (tuple(tenants[:2]),))
    put("delete_in", sorted(r[0] for r in cur.fetchall()), sorted(tenants[:2]))
    cur.execute("SELECT count(*) FROM orders")
    put("left", cur.fetchone()[0], 4)
    conn.close()


async def run_asyncpg(url, tenants):
    import asyncpg
    conn = await asyncpg.connect(url)
    status = await conn.execute("UPDATE orders SET qty = qty + 10 WHERE tenant_id IN ($1, $2, $3)", *tenants)
    put("update_in", status, "UPDATE 6")
    rows = await conn.fetch("DELETE FROM orders WHERE tenant_id IN ($1, $2) AND qty = $3 RETURNING tenant_id",
                            tenants[1], tenants[2], 12)
    put("delete_in", sorted(r[0] for r in rows), sorted(tenants[1:]))
    put("left", await conn.fetchval("SELECT count(*) FROM orders"), 4)
    # A list bound to = ANY($1): asyncpg sends it as a binary int8[]; each shard gets its own elements.
    put("read_any", await conn.fetchval("SELECT count(*) FROM orders WHERE tenant_id = ANY($1)", tenants[:2]), 3)
    status = await conn.execute("UPDATE orders SET qty = 0 WHERE tenant_id = ANY($1)", tenants)
    put("update_any", status, "UPDATE 4")
    put("zeroed", await conn.fetchval("SELECT count(*) FROM orders WHERE qty = 0"), 4)
    await conn.close()


def main():
    if len(sys.argv) != 4 or sys.argv[2] not in ("psycopg", "psycopg2", "asyncpg"):
        sys.exit("usage: %s URL psycopg|psycopg2|asyncpg TENANTS" % sys.argv[0])
    url, driver = sys.argv[1], sys.argv[2]
    tenants = [int(t) for t in sys.argv[3].split(",")]
    if driver == "psycopg":
        run_psycopg(url, tenants)
    elif driver == "psycopg2":
        run_psycopg2(url, tenants)
    else:
        asyncio.run(run_asyncpg(url, tenants))
    print("done", flush=True)


main()
