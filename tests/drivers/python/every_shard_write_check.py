"""COPY FROM STDIN into the sharded `orders` and parameterized writes of the reference table
`plans` inside a transaction, through shardwire (tests/integration/every_shard_write_test.cc):
  psycopg   cursor.copy() and cursor.execute("INSERT INTO plans ... %s") in conn.transaction();
  asyncpg   copy_records_to_table() and execute("INSERT INTO plans ... $1") in conn.transaction().
Each run commits one transaction (plan id ID) and rolls back another (plan id ID+1); the rows
are read back key by key. Prints key=value lines (driver_check.put).
Usage: every_shard_write_check.py URL ID TENANTS TAG psycopg|asyncpg
(ID: a plan id; TENANTS: comma-separated keys, one or more per shard; TAG: a note prefix)."""
import asyncio
import sys

from driver_check import put


class Rollback(Exception):
    pass


def psycopg_run(url, tenants, tag, plan):
    import psycopg

    conn = psycopg.connect(url, connect_timeout=10)
    for commit in (True, False):
        note = tag + ("-c" if commit else "-r")
        try:
            with conn.transaction():
                with conn.cursor() as cur:
                    with cur.copy("COPY orders (tenant_id, note) FROM STDIN") as copy:
                        for t in tenants:
                            copy.write_row((t, note))
                    put("copy_" + note, cur.rowcount, len(tenants))
                    cur.execute("INSERT INTO plans VALUES (%s, %s)", (plan + (0 if commit else 1), note))
                    put("insert_" + note, cur.rowcount, 1)
                    if not commit:
                        raise Rollback()
        except Rollback:
            pass
        seen = 0
        with conn.cursor() as cur:
            for t in tenants:
                cur.execute("SELECT count(*) FROM orders WHERE tenant_id = %s AND note = %s", (t, note))
                seen += cur.fetchone()[0]
            conn.commit()
        put("seen_" + note, seen, len(tenants) if commit else 0)
    conn.close()


async def asyncpg_run(url, tenants, tag, plan):
    import asyncpg

    conn = await asyncpg.connect(url, timeout=10)
    for commit in (True, False):
        note = tag + ("-c" if commit else "-r")
        try:
            async with conn.transaction():
                status = await conn.copy_records_to_table(
                    "orders", records=[(t, note) for t in tenants], columns=["tenant_id", "note"])
                put("copy_" + note, status, "COPY %d" % len(tenants))
                status = await conn.execute("INSERT INTO plans VALUES ($1, $2)", plan + (0 if commit else 1), note)
                put("insert_" + note, status, "INSERT 0 1")
                if not commit:
                    raise Rollback()
        except Rollback:
            pass
        seen = 0
        for t in tenants:
            seen += await conn.fetchval("SELECT count(*) FROM orders WHERE tenant_id = $1 AND note = $2", t, note)
        put("seen_" + note, seen, len(tenants) if commit else 0)
    await conn.close()


def main():
    if len(sys.argv) != 6 or sys.argv[5] not in ("psycopg", "asyncpg"):
        sys.exit("usage: %s URL ID TENANTS TAG psycopg|asyncpg" % sys.argv[0])
    url, plan, tenants, tag, driver = sys.argv[1:]
    keys = [int(t) for t in tenants.split(",")]
    if driver == "psycopg":
        psycopg_run(url, keys, tag, int(plan))
    else:
        asyncio.run(asyncio.wait_for(asyncpg_run(url, keys, tag, int(plan)), 60))
    print("done", flush=True)


main()
