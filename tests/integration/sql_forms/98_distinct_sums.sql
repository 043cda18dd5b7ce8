-- sum(DISTINCT x) and avg(DISTINCT x) of a column that is not the key: each shard answers
-- array_agg(DISTINCT x) per group, the proxy unions the values and adds them in the type's order
-- with sum's and avg's rules (int2/int4 sum to bigint, bigint to numeric, avg of integers numeric
-- at numeric_div's scale, floats in float, added in the sorted order PostgreSQL adds them in, so
-- the float sums below, which depend on that order, are bit-identical). The values repeat within
-- and across shards; NULLs are ignored.
statement: CREATE TABLE sf_dsums (tenant_id bigint NOT NULL, id integer NOT NULL, g integer, i integer, s smallint, b bigint, n numeric, r real, f float8, PRIMARY KEY (tenant_id, id))
statement: INSERT INTO sf_dsums (tenant_id, id, g, i, s, b, n, r, f) VALUES (1, 1, 1, 5, 2, 9000000000000000000, 1.25, 0.1, 1e16), (2, 1, 1, 5, 2, 9000000000000000000, 1.25, 0.1, 1), (3, 1, 1, 7, 3, 8000000000000000000, 2.50, 0.2, -1e16), (4, 1, 2, 7, 3, 1, 2.50, 0.3, 0.5), (5, 1, 2, NULL, NULL, NULL, NULL, NULL, NULL), (6, 1, 2, 9, 4, 2, 0.125, 16777216, 3.3), (7, 1, 3, 5, 2, 3, 1.25, 0.1, 1.1), (8, 1, 3, -4, -1, -5, 10.50, -2.5, 2.2), (9, 1, NULL, 11, 7, 70, 4.00, 1, 1e16), (10, 1, NULL, 11, 7, 70, 4.00, 1, 0.1), (11, 1, 1, 2, 1, 9000000000000000000, 0.75, 3, 0.2), (12, 1, 3, 9, 4, 2, 0.125, 16777217, 0.3), (1, 2, 2, 5, 2, 1, 2.50, 0.3, 3.3), (4, 2, 3, 6, 5, 6, 7.25, 0.7, -0.0), (9, 2, 1, 3, 6, 4, 1.10, 5, 0.7)
query: SELECT sum(DISTINCT i), avg(DISTINCT i), sum(DISTINCT s), avg(DISTINCT s), sum(DISTINCT b), avg(DISTINCT b) FROM sf_dsums
query: SELECT sum(DISTINCT n), avg(DISTINCT n), sum(DISTINCT r), avg(DISTINCT r), sum(DISTINCT f), avg(DISTINCT f) FROM sf_dsums
query: SELECT sum(DISTINCT i), sum(i), count(DISTINCT i), count(*), avg(DISTINCT n), avg(n) FROM sf_dsums
query: SELECT g, sum(DISTINCT i), avg(DISTINCT i), sum(DISTINCT b), sum(DISTINCT n), avg(DISTINCT f), count(*) FROM sf_dsums GROUP BY g ORDER BY g NULLS FIRST
query: SELECT g, sum(DISTINCT r), avg(DISTINCT r), sum(DISTINCT f) FROM sf_dsums GROUP BY g ORDER BY g NULLS LAST
query: SELECT sum(DISTINCT i) FILTER (WHERE g > 1), avg(DISTINCT n) FILTER (WHERE g <> 3) FROM sf_dsums
query: SELECT SUM ( DISTINCT i ), Avg(DISTINCT(i)) AS m FROM sf_dsums
query: SELECT sum(DISTINCT tenant_id), avg(DISTINCT tenant_id) FROM sf_dsums
-- DISTINCT changes nothing for min, max, bool_and, bool_or: merged as without it.
query: SELECT g, min(DISTINCT i), max(DISTINCT n), bool_and(DISTINCT i > 0), bool_or(DISTINCT f < 0), every(DISTINCT s > 0) FROM sf_dsums GROUP BY g ORDER BY g NULLS FIRST
query: SELECT max(DISTINCT f) FILTER (WHERE g = 1), min(DISTINCT r) FROM sf_dsums HAVING max(DISTINCT b) > 1
-- No rows: NULL, as PostgreSQL.
query: SELECT sum(DISTINCT i), avg(DISTINCT n), sum(DISTINCT f) FROM sf_dsums WHERE id > 1000
query: SELECT g, sum(DISTINCT i) FROM sf_dsums WHERE id > 1000 GROUP BY g
query: SELECT g, sum(DISTINCT i), avg(DISTINCT f) FROM sf_dsums WHERE i IS NULL GROUP BY g
-- In HAVING (selected or not), ORDER BY (selected or not), expressions over them.
query: SELECT g, sum(DISTINCT i) FROM sf_dsums GROUP BY g HAVING sum(DISTINCT i) > 12 ORDER BY g NULLS FIRST
query: SELECT g, count(*) FROM sf_dsums GROUP BY g HAVING avg(DISTINCT n) > 2 ORDER BY g NULLS FIRST
query: SELECT g FROM sf_dsums GROUP BY g ORDER BY sum(DISTINCT i) DESC, g NULLS FIRST
query: SELECT g, avg(DISTINCT i) AS m FROM sf_dsums GROUP BY g ORDER BY m, g NULLS FIRST
query: SELECT g, sum(DISTINCT i) + 1, avg(DISTINCT n) * 2, round(avg(DISTINCT i), 2), sum(DISTINCT f) / count(*), sum(DISTINCT i) - sum(i) FROM sf_dsums GROUP BY g ORDER BY g NULLS FIRST
query: SELECT g FROM sf_dsums GROUP BY g HAVING sum(DISTINCT i) + 1 > 14 ORDER BY g NULLS FIRST
query params(12): SELECT g, sum(DISTINCT i) FROM sf_dsums GROUP BY g HAVING sum(DISTINCT i) > $1 ORDER BY g NULLS FIRST
query params(1): SELECT sum(DISTINCT i), avg(DISTINCT n) FROM sf_dsums WHERE id > $1
query: WITH t AS (SELECT g, i FROM sf_dsums WHERE g > 1) SELECT sum(DISTINCT i), avg(DISTINCT i) FROM t
-- PostgreSQL's errors: float8 overflow (22003) in the sum, and in avg's running sum of squares.
statement: INSERT INTO sf_dsums (tenant_id, id, g, f) VALUES (1, 3, 7, 1.7e308), (2, 3, 7, 1.6e308), (3, 3, 8, 1), (4, 3, 8, 2), (5, 3, 8, 3), (6, 3, 8, 4), (7, 3, 8, 6e153)
error 22003: SELECT sum(DISTINCT f) FROM sf_dsums WHERE g = 7
error 22003: SELECT avg(DISTINCT f) FROM sf_dsums WHERE g = 8
query: SELECT avg(DISTINCT f) FROM sf_dsums WHERE g = 8 AND f < 1e100
-- Refused: a type without an exact merge, and past fanout.max_distinct_values (54000).
refused 0A000: SELECT sum(DISTINCT interval '1 day' * i) FROM sf_dsums
refused 54000: SELECT sum(DISTINCT tenant_id * 1000 + id * 10 + v) FROM sf_dsums CROSS JOIN generate_series(1, 5) v
