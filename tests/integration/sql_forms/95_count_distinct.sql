-- count(DISTINCT x) of a column that is not the key: each shard answers array_agg(DISTINCT x)
-- per group and the proxy counts the union (NULLs ignored, 1.5 = 1.50), beside the other
-- aggregates, with FILTER, in HAVING. sf_blocks comes from 90_from_blocks.sql; these rows add
-- values equal to others in another spelling and values that repeat across shards.
statement: INSERT INTO sf_blocks (tenant_id, id, g, s, amount) VALUES (9, 1, 1, 'cat', 1.50), (10, 1, 2, 'fox', 2.00), (11, 1, NULL, NULL, NULL), (12, 1, 0, 'bee', 10.50)
query: SELECT count(DISTINCT s) FROM sf_blocks
query: SELECT count(DISTINCT amount), count(*), count(amount), sum(amount), min(s), max(g), avg(amount) FROM sf_blocks
query: SELECT g, count(DISTINCT s), count(*), sum(amount) FROM sf_blocks GROUP BY g ORDER BY g NULLS FIRST
query: SELECT g, count(DISTINCT s) AS kinds, count(DISTINCT amount) FROM sf_blocks GROUP BY g ORDER BY kinds DESC, g NULLS LAST
query: SELECT count(DISTINCT s) FILTER (WHERE amount > 3), count(DISTINCT g) FROM sf_blocks
query: SELECT count(DISTINCT lower(s)), count(DISTINCT id) FROM sf_blocks WHERE g IS NOT NULL
query: SELECT s, count(DISTINCT g) FROM sf_blocks GROUP BY s HAVING count(DISTINCT g) > 1 ORDER BY s NULLS FIRST
query: SELECT g, count(DISTINCT s) FROM sf_blocks GROUP BY g HAVING count(*) > 3 ORDER BY g NULLS FIRST
query: SELECT count(DISTINCT tenant_id), count(DISTINCT s) FROM sf_blocks
query: SELECT count(DISTINCT s) FROM sf_blocks WHERE id > 100
query: SELECT g, count(DISTINCT s) FROM sf_blocks WHERE id > 100 GROUP BY g
query params(1): SELECT count(DISTINCT s), count(DISTINCT amount) FROM sf_blocks WHERE id > $1
query: WITH t AS (SELECT s, g FROM sf_blocks WHERE g > 0) SELECT count(DISTINCT g) FROM t
query: WITH t AS (SELECT s, g FROM sf_blocks WHERE g > 0) SELECT count(DISTINCT s COLLATE "C") FROM t
-- Text through a block is refused (0A000: its collation cannot be told), as for GROUP BY; the
-- message asks for COLLATE "C", not the "instead" this file's refused lines check for.
-- Past fanout.max_distinct_values (60 in this suite's proxy): 54000, naming the limit.
refused 54000: SELECT count(DISTINCT tenant_id * 1000 + id * 10 + v) FROM sf_blocks CROSS JOIN generate_series(1, 5) v
