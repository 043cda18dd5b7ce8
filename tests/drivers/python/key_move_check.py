"""An UPDATE that sets the shard key to a value another shard owns, through shardwire, by psycopg 3
(which sends parameters in the extended protocol: unnamed, prepared, text and binary) and asyncpg
(prepares and describes the statement first, binary parameters and results). RETURNING's
description must be what plain PostgreSQL gives for the same UPDATE (PLAIN, a shard's database,
run there in a transaction rolled back). Each tenant starts with three rows (qty 1..3, note n1..n3).
Usage: key_move_check.py URL PLAIN A0,B1,C2 (psycopg 3's checks, then asyncpg's)
A0, B1, C2: keys on shards 0, 1, 2."""
import asyncio
import sys

from driver_check import put

RETURNING = "UPDATE orders SET tenant_id = %s WHERE tenant_id = %s AND qty = %s RETURNING tenant_id, note, qty"


def description(cur):
    """What RowDescription said of each column, but the table OID (another database's): whether
    there is one."""
    res = cur.pgresult
    return [(res.fname(i), res.ftable(i) != 0, res.ftablecol(i), res.ftype(i), res.fsize(i), res.fmod(i),
             res.fformat(i)) for i in range(res.nfields)]


def plain_description(plain_url, tenants, binary):
    import psycopg
    with psycopg.connect(plain_url) as conn:
        cur = conn.cursor(binary=binary)
        cur.execute(RETURNING, [tenants[1], tenants[0], 1])
        described = description(cur)
        conn.rollback()
    return described


def run_psycopg(url, plain_url, tenants):
    import psycopg
    a0, b1, c2 = tenants
    with psycopg.connect(url, autocommit=True) as conn:
        # Unnamed, text parameters and results: a0's qty-1 row to shard 1.
        cur = conn.execute(RETURNING, [b1, a0, 1])
        put("text_rowcount", cur.rowcount, 1)
        put("text_rows", cur.fetchall(), [(b1, "n1", 1)])
        put("text_description", description(cur) == plain_description(plain_url, tenants, False), True)
        # Binary parameters and results: b1's qty-1 rows (its own and the moved one) to shard 2.
        cur = conn.cursor(binary=True)
        cur.execute(RETURNING, [c2, b1, 1])
        put("binary_rowcount", cur.rowcount, 2)
        put("binary_rows", sorted(cur.fetchall()), [(c2, "n1", 1), (c2, "n1", 1)])
        put("binary_description", description(cur) == plain_description(plain_url, tenants, True), True)
        # Prepared on the server (a named statement), no RETURNING: c2's qty-2 row to shard 0.
        cur = conn.execute("UPDATE orders SET tenant_id = %s, note = %s WHERE tenant_id = %s AND qty = 2",
                           [a0, "back", c2], prepare=True)
        put("prepared_rowcount", cur.rowcount, 1)
        put("prepared_moved", conn.execute("SELECT count(*) FROM orders WHERE note = 'back'").fetchone()[0], 1)
        # The simple query protocol (client-side binding): c2's qty-3 row to shard 1.
        cur = psycopg.ClientCursor(conn)
        cur.execute(RETURNING, [b1, c2, 3])
        put("simple_rows", cur.fetchall(), [(b1, "n3", 3)])
        put("simple_description", description(cur) == plain_description(plain_url, tenants, False), True)
    with psycopg.connect(url) as conn:  # a transaction block: rolled back, then committed
        conn.execute("UPDATE orders SET tenant_id = %s WHERE tenant_id = %s", [b1, a0])
        put("in_transaction", conn.execute("SELECT count(*) FROM orders WHERE tenant_id = %s", [a0]).fetchone()[0], 0)
        conn.rollback()
        put("rolled_back", conn.execute("SELECT count(*) FROM orders WHERE tenant_id = %s", [a0]).fetchone()[0], 3)
        cur = conn.execute("UPDATE orders SET tenant_id = %s WHERE tenant_id = %s", [b1, a0])
        put("committed_rowcount", cur.rowcount, 3)
        conn.commit()
        put("committed", conn.execute("SELECT count(*) FROM orders WHERE tenant_id = %s", [b1]).fetchone()[0], 6)


async def run_asyncpg(url, tenants):
    """After run_psycopg: c2 holds three qty-1 rows (n1), b1 six rows (qty 2 and 3), a0 none."""
    import asyncpg
    a0, b1, c2 = tenants
    conn = await asyncpg.connect(url)
    rows = await conn.fetch("UPDATE orders SET tenant_id = $1 WHERE tenant_id = $2 RETURNING tenant_id, note, qty",
                            a0, c2)
    put("asyncpg_fetch", [tuple(r) for r in rows], [(a0, "n1", 1)] * 3)
    status = await conn.execute("UPDATE orders SET tenant_id = $1 WHERE tenant_id = $2 AND qty = $3", c2, b1, 3)
    put("asyncpg_execute", status, "UPDATE 3")
    put("asyncpg_left", await conn.fetchval("SELECT count(*) FROM orders WHERE tenant_id = $1", b1), 3)
    await conn.close()


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: %s URL PLAIN A0,B1,C2" % sys.argv[0])
    url, plain_url = sys.argv[1:3]
    tenants = [int(t) for t in sys.argv[3].split(",")]
    run_psycopg(url, plain_url, tenants)
    asyncio.run(run_asyncpg(url, tenants))
    print("done", flush=True)


main()
