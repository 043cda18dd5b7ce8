"""A multi-row INSERT whose rows fall on several shards, through shardwire, by psycopg 3 or asyncpg
(autocommit; psycopg also inside its transaction, committed and rolled back): RETURNING rows in the
order of the VALUES rows, text and binary parameters and results, a named (prepared) statement, and
a unique violation on one shard that writes nothing; executemany over the tenants (psycopg:
pipeline mode, RETURNING rows in the rows' order), and one whose last row is a duplicate, which
writes nothing.
Usage: split_insert_check.py URL psycopg|asyncpg TENANTS TAG
TENANTS: comma-separated keys, each on another shard; rows go to them in the order
t2, t0, t1, t0 (so RETURNING order differs from shard order)."""
import asyncio
import sys

from driver_check import put


def rows_for(tenants, tag, round_):
    order = [tenants[2], tenants[0], tenants[1], tenants[0]]
    return [(t, "%s-%s-%d" % (tag, round_, i), 10 * round_ + i) for i, t in enumerate(order)]


def insert_sql(n, mark):
    values = ", ".join("(%s, %s, %s)" % ((mark(3 * i + 1), mark(3 * i + 2), mark(3 * i + 3))) for i in range(n))
    return "INSERT INTO orders (tenant_id, note, qty) VALUES %s RETURNING note, qty" % values


def flat(rows):
    return [v for row in rows for v in row]


def expected(rows):
    return ",".join("%s:%d" % (note, qty) for _, note, qty in rows)


def run_psycopg(url, tenants, tag):
    import psycopg
    with psycopg.connect(url, autocommit=True) as conn:
        for round_, (mark, binary, prepare) in enumerate(
                [(lambda n: "%s", False, False), (lambda n: "%b", True, False), (lambda n: "%s", False, True)]):
            rows = rows_for(tenants, tag, round_)
            cur = conn.cursor(binary=binary)
            cur.execute(insert_sql(len(rows), mark), flat(rows), prepare=prepare)
            got = ",".join("%s:%d" % (note, qty) for note, qty in cur.fetchall())
            put("returning_%d" % round_, got, expected(rows))
            put("rowcount_%d" % round_, cur.rowcount, len(rows))
        # executemany (pipeline mode: a Flush after the Executes, the Sync later) for tenants on 3
        # shards runs as one transaction over them: RETURNING rows in the order of the rows.
        rows = rows_for(tenants, tag, 3)
        cur = conn.cursor()
        cur.executemany("INSERT INTO orders (tenant_id, note, qty) VALUES (%s, %s, %s) RETURNING note, qty",
                        rows, returning=True)
        got = []
        while True:
            got.extend("%s:%d" % (note, qty) for note, qty in cur.fetchall())
            if not cur.nextset():
                break
        put("executemany", ",".join(got), expected(rows))
        rows = [(tenants[0], tag + "-dup-0", 1), (tenants[1], tag + "-dup-1", 2)]
        conn.execute("INSERT INTO orders (tenant_id, id, note) VALUES (%s, 424242, 'there')", [tenants[1]])
        try:
            conn.execute("INSERT INTO orders (tenant_id, id, note, qty) VALUES (%s, 424242, %s, %s), "
                         "(%s, 424242, %s, %s)", flat(rows))
            put("unique", "none", "23505")
        except psycopg.Error as e:
            put("unique", e.sqlstate, "23505")
        put("dup_rows", conn.execute("SELECT count(*) FROM orders WHERE note LIKE %s", [tag + "-dup-%"])
            .fetchone()[0], 0)
        # executemany whose last row is a duplicate on one shard: nothing of it is written anywhere.
        bad = [(tenants[0], tag + "-dup-2", 1, 424243), (tenants[2], tag + "-dup-3", 1, 424244),
               (tenants[1], tag + "-dup-4", 1, 424242)]
        try:
            conn.cursor().executemany("INSERT INTO orders (tenant_id, note, qty, id) VALUES (%s, %s, %s, %s)", bad)
            put("executemany_unique", "none", "23505")
        except psycopg.Error as e:
            put("executemany_unique", e.sqlstate, "23505")
        put("executemany_rows", conn.execute("SELECT count(*) FROM orders WHERE note LIKE %s",
                                             [tag + "-dup-%"]).fetchone()[0], 0)
    # Not autocommit: the split runs inside the driver's transaction; COMMIT writes every owner,
    # ROLLBACK none (notes txc-/txr-, outside the rounds' TAG- notes).
    with psycopg.connect(url) as conn:
        for end in ("commit", "rollback"):
            rows = [(t, "tx%s-%s" % (end[0], note), qty) for t, note, qty in rows_for(tenants, tag, 4)]
            cur = conn.execute(insert_sql(len(rows), lambda n: "%s"), flat(rows))
            got = ",".join("%s:%d" % (note, qty) for note, qty in cur.fetchall())
            put("tx_returning_" + end, got, expected(rows))
            seen = conn.execute("SELECT count(*) FROM orders WHERE tenant_id = %s AND note LIKE %s",
                                [tenants[0], "tx%s-%%" % end[0]]).fetchone()[0]
            put("tx_seen_" + end, seen, 2)
            if end == "commit":
                conn.commit()
            else:
                conn.rollback()
        conn.autocommit = True
        counts = [conn.execute("SELECT count(*) FROM orders WHERE tenant_id = %s AND note LIKE 'tx%%'", [t])
                  .fetchone()[0] for t in tenants]
        put("tx_rows", ",".join(map(str, counts)), "2,1,1")


async def run_asyncpg(url, tenants, tag):
    import asyncpg
    conn = await asyncpg.connect(url, timeout=10)
    try:
        for round_ in range(2):
            rows = rows_for(tenants, tag, round_)
            sql = insert_sql(len(rows), lambda n: "$%d" % n)
            if round_ == 0:
                records = await conn.fetch(sql, *flat(rows))
            else:
                stmt = await conn.prepare(sql)
                records = await stmt.fetch(*flat(rows))
            got = ",".join("%s:%d" % (r["note"], r["qty"]) for r in records)
            put("returning_%d" % round_, got, expected(rows))
        # executemany: Bind/Execute per row for tenants on 3 shards, one Sync, atomic.
        rows = rows_for(tenants, tag, 2)
        await conn.executemany("INSERT INTO orders (tenant_id, note, qty) VALUES ($1, $2, $3)", rows)
        counts = [await conn.fetchval("SELECT count(*) FROM orders WHERE tenant_id = $1 AND note LIKE $2", t,
                                      tag + "-2-%") for t in tenants]
        put("executemany", ",".join(map(str, counts)), "2,1,1")
        await conn.execute("INSERT INTO orders (tenant_id, id, note) VALUES ($1, 424242, 'there')", tenants[1])
        try:
            await conn.execute("INSERT INTO orders (tenant_id, id, note, qty) VALUES ($1, 424242, $2, 1), "
                               "($3, 424242, $4, 2)", tenants[0], tag + "-dup-0", tenants[1], tag + "-dup-1")
            put("unique", "none", "23505")
        except asyncpg.PostgresError as e:
            put("unique", e.sqlstate, "23505")
        dup = [await conn.fetchval("SELECT count(*) FROM orders WHERE tenant_id = $1 AND note LIKE $2", t,
                                   tag + "-dup-%") for t in tenants[:2]]
        put("dup_rows", sum(dup), 0)
        # executemany whose last row is a duplicate on one shard: nothing of it is written.
        bad = [(tenants[0], tag + "-dup-2", 1), (tenants[2], tag + "-dup-3", 1), (tenants[1], tag + "-dup-4", 1)]
        try:
            await conn.executemany("INSERT INTO orders (tenant_id, id, note, qty) VALUES ($1, $4, $2, $3)",
                                   [row + (id_,) for row, id_ in zip(bad, (424243, 424244, 424242))])
            put("executemany_unique", "none", "23505")
        except asyncpg.PostgresError as e:
            put("executemany_unique", e.sqlstate, "23505")
        dup = [await conn.fetchval("SELECT count(*) FROM orders WHERE tenant_id = $1 AND note LIKE $2", t,
                                   tag + "-dup-%") for t in tenants]
        put("executemany_rows", sum(dup), 0)
    finally:
        await conn.close()


def main():
    if len(sys.argv) != 5 or sys.argv[2] not in ("psycopg", "asyncpg"):
        sys.exit("usage: %s URL psycopg|asyncpg TENANTS TAG" % sys.argv[0])
    url, driver, tenants, tag = sys.argv[1], sys.argv[2], [int(t) for t in sys.argv[3].split(",")], sys.argv[4]
    if driver == "psycopg":
        run_psycopg(url, tenants, tag)
    else:
        asyncio.run(run_asyncpg(url, tenants, tag))
    print("done", flush=True)


if __name__ == "__main__":
    main()
