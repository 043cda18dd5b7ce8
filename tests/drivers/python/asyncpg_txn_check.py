"""asyncpg transactions through shardwire: a transaction that rolls back leaves no row, and a
cursor (Bind to a named portal, Execute 2 rows, Sync, Execute again) reads every row in its
transaction. Both fail through shardwire today (see tests/drivers/README.md).
Usage: asyncpg_txn_check.py URL MODE TENANT TAG"""
import asyncio

import asyncpg

from driver_check import args, put


async def main(url, mode, tenant, tag):
    conn = await asyncpg.connect(url, timeout=10)
    put("connect", "ok", "ok")
    try:
        async with conn.transaction():
            await conn.execute("INSERT INTO orders (tenant_id, note, qty) VALUES ($1, $2, $3)",
                               tenant, tag + "-rollback", 100)
            raise RuntimeError("roll back")
    except RuntimeError:
        pass
    put("rollback", await conn.fetchval("SELECT count(*) FROM orders WHERE tenant_id = $1 AND note = $2",
                                        tenant, tag + "-rollback"), 0)

    async with conn.transaction():
        total = 0
        async for r in conn.cursor("SELECT generate_series(1, 5)", prefetch=2):
            total += r[0]
        put("cursor", total, 15)
    await conn.close()
    print("done", flush=True)


asyncio.run(asyncio.wait_for(main(*args()), 60))
