"""HAVING with parameters in a read merged across shards, by psycopg 3 (server-side binding: the
values go in the Bind, in text or binary as the placeholder says, with psycopg's own type OIDs): the
rows equal PostgreSQL's for the same statement on one database holding every row.
Usage: merged_having_check.py PROXY_URL REFERENCE_CONNINFO (table e of merged_extended_test.cc)"""
import sys

import psycopg

from driver_check import put

proxy = psycopg.connect(sys.argv[1], autocommit=True, connect_timeout=10)
ref = psycopg.connect(sys.argv[2], autocommit=True, connect_timeout=10)
# Medians of the reference's groups: each HAVING keeps some groups and drops others.
count_median = ref.execute("SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY c)::int FROM "
                           "(SELECT count(*) c FROM e GROUP BY grp) s").fetchone()[0]
avg_median = ref.execute("SELECT round(percentile_cont(0.5) WITHIN GROUP (ORDER BY a)::numeric, 3) FROM "
                         "(SELECT avg(n) a FROM e GROUP BY grp) s").fetchone()[0]
groups = ref.execute("SELECT count(DISTINCT grp) + 1 FROM e").fetchone()[0]
cases = [
    ("count", "SELECT grp, count(*), sum(i) FROM e GROUP BY grp HAVING count(*) > {p} ORDER BY grp",
     (count_median,)),
    ("avg", "SELECT grp, avg(n) FROM e GROUP BY grp HAVING avg(n) >= {p} ORDER BY grp", (avg_median,)),
    ("text", "SELECT grp, max(t), count(*) FROM e GROUP BY grp HAVING NOT max(t) = {p} OR count(*) < {p} ORDER BY grp",
     ("zz8", count_median)),
]
for placeholder in ("%s", "%t", "%b"):
    for name, sql, params in cases:
        query = sql.replace("{p}", placeholder)
        want = ref.execute(query, params).fetchall()
        try:
            got = proxy.execute(query, params).fetchall()
        except psycopg.Error as e:
            got = "%s %s" % (e.sqlstate, e)
        if name == "count" and not 0 < len(want) < groups:
            sys.exit("FAIL the reference's HAVING keeps %d of %d groups" % (len(want), groups))
        if got != want:
            print("%s differs: got %r want %r" % (query, got, want), file=sys.stderr)
        put("%s_%s" % (name, placeholder[1]), got == want, True)
# A named prepared statement (prepare=True), run with three values.
sql = "SELECT grp, count(*) FROM e GROUP BY grp HAVING count(*) > %b ORDER BY grp"
rounds = [proxy.execute(sql, (count_median + d,), prepare=True).fetchall() ==
          ref.execute(sql, (count_median + d,)).fetchall() for d in (-20, 0, 20)]
put("prepared", rounds, [True, True, True])
print("done")
