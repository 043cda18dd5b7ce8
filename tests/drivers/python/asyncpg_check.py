"""asyncpg through shardwire: connect + fetchval (Parse/Describe/Flush), typed parameters, a
prepared statement reused, a transaction, executemany, fetchrow/fetchval (Execute with a row
limit) of reads merged across shards (in session pooling on the session's servers), COPY both
ways, a custom type codec.
A rollback and a cursor are in asyncpg_txn_check.py (they fail through shardwire today).
Usage: asyncpg_check.py URL MODE TENANT TAG"""
import asyncio
import json

import asyncpg

from driver_check import (BATCH_QTYS, COPY_ROWS, PARAM_VALUES, PARAMS_EXPECTED, TXN_QTYS, args,
                          format_params, put)


async def main(url, mode, tenant, tag):
    conn = await asyncpg.connect(url, timeout=10)
    put("connect", "ok", "ok")
    put("select1", await conn.fetchval("select 1"), 1)

    row = await conn.fetchrow(
        "SELECT $1::int, $2::text, $3::numeric, $4::timestamptz, $5::bytea, $6::text", *PARAM_VALUES)
    put("params", format_params(tuple(row)), PARAMS_EXPECTED)

    stmt = await conn.prepare("SELECT $1::int * 2")
    total = 0
    for i in range(1, 8):
        total += await stmt.fetchval(i)
    put("prepared", total, 56)

    async with conn.transaction():
        for i, qty in enumerate(TXN_QTYS):
            await conn.execute("INSERT INTO orders (tenant_id, note, qty) VALUES ($1, $2, $3)",
                               tenant, "%s-txn-%d" % (tag, i), qty)
    put("txn", len(TXN_QTYS), 3)

    async with conn.transaction():
        await conn.executemany("INSERT INTO orders (tenant_id, note, qty) VALUES ($1, $2, $3)",
                               [(tenant, "%s-batch-%d" % (tag, i), q) for i, q in enumerate(BATCH_QTYS)])
    put("batch", len(BATCH_QTYS), 5)

    keyed = await conn.prepare("SELECT count(*) FROM orders WHERE tenant_id = $1 AND note LIKE $2")
    counts = [await keyed.fetchval(tenant, tag + "-%") for _ in range(6)]
    put("keyed", ",".join(map(str, counts)), "8,8,8,8,8,8")

    try:
        await conn.fetchval("SELECT * FROM no_such_table_for_drivers")
        put("error", "none", "42P01")
    except asyncpg.PostgresError as e:
        put("error", e.sqlstate, "42P01")
    put("after_error", await conn.fetchval("select 1"), 1)

    # Keyless reads merged across shards: fetchrow and fetchval send Execute with a row limit of 1.
    # In session pooling asyncpg's Parse + Describe + Flush already holds the session's
    # default-shard server: the read runs on the session's servers.
    top = await conn.fetchrow("SELECT note, qty FROM orders WHERE note LIKE $1 ORDER BY qty DESC",
                              tag + "-%")
    most = await conn.fetchval("SELECT max(qty) FROM orders WHERE note LIKE $1", tag + "-%")
    put("merged", "%s|%s|%s" % (top["note"][len(tag):], top["qty"], most), "-batch-4|14|14")
    # The same inside a transaction (BEGIN first: asyncpg's cursors and transactions): on its legs.
    async with conn.transaction():
        top = await conn.fetchrow("SELECT note, qty FROM orders WHERE note LIKE $1 ORDER BY qty DESC",
                                  tag + "-%")
        count = await conn.fetchval("SELECT count(*) FROM orders WHERE note LIKE $1", tag + "-%")
    put("txn_merged", "%s|%s|%s" % (top["note"][len(tag):], top["qty"], count), "-batch-4|14|8")
    # A cursor of a keyless merged read inside the transaction: its portal fetched 3 rows at a time.
    async with conn.transaction():
        qtys = [r["qty"] async for r in conn.cursor(
            "SELECT qty FROM orders WHERE note LIKE $1 ORDER BY qty DESC", tag + "-%", prefetch=3)]
    put("txn_cursor", ",".join(map(str, qtys)), "14,13,12,11,10,3,2,1")

    table = "copy_" + tag
    await conn.execute("DROP TABLE IF EXISTS %s" % table)
    await conn.execute("CREATE TABLE %s (id int, note text)" % table)
    put("copy_in", await conn.copy_records_to_table(table, records=list(COPY_ROWS), columns=["id", "note"]),
        "COPY 3")
    chunks = []

    async def sink(data):
        chunks.append(bytes(data))

    await conn.copy_from_query("SELECT id, note FROM %s ORDER BY id" % table, output=sink)
    lines = b"".join(chunks).decode().splitlines()
    put("copy_out", ",".join(l.replace("\t", "|") for l in lines), "1|a,2|b,3|c")

    await conn.set_type_codec("json", encoder=json.dumps, decoder=json.loads, schema="pg_catalog")
    decoded = await conn.fetchval("SELECT $1::json", {"tenant": tenant, "tags": [tag]})
    put("codec", decoded == {"tenant": tenant, "tags": [tag]}, True)

    if mode == "session":
        pids = {await conn.fetchval("SELECT pg_backend_pid()") for _ in range(3)}
        put("session_pid", "stable" if len(pids) == 1 else "changed", "stable")
    await conn.close()
    print("done", flush=True)


asyncio.run(asyncio.wait_for(main(*args()), 60))
