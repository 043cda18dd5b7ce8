"""asyncpg transactions through shardwire, one check per run (VARIANT):
  rollback  a transaction that raises rolls back and leaves no row;
  cursor    a cursor in a transaction (Bind to a named portal, Execute 2 rows, Sync, Execute
            again) reads every row.
Both fail through shardwire today (see tests/drivers/README.md).
Usage: asyncpg_txn_check.py URL MODE TENANT TAG rollback|cursor"""
import asyncio

import asyncpg

from driver_check import args, put


async def main(url, mode, tenant, tag, variant):
    conn = await asyncpg.connect(url, timeout=10)
    put("connect", "ok", "ok")
    if variant == "rollback":
        try:
            async with conn.transaction():
                await conn.execute("INSERT INTO orders (tenant_id, note, qty) VALUES ($1, $2, $3)",
                                   tenant, tag + "-rollback", 100)
                raise RuntimeError("roll back")
        except RuntimeError:
            pass
        put("rollback", await conn.fetchval("SELECT count(*) FROM orders WHERE tenant_id = $1 AND note = $2",
                                            tenant, tag + "-rollback"), 0)
    else:
        async with conn.transaction():
            total = 0
            async for r in conn.cursor("SELECT generate_series(1, 5)", prefetch=2):
                total += r[0]
            put("cursor", total, 15)
    await conn.close()
    print("done", flush=True)


asyncio.run(asyncio.wait_for(main(*args(("rollback", "cursor"))), 60))
