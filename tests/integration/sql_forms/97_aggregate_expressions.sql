-- Expressions over aggregates of a read merged across shards (no GROUP BY key): the shards return
-- each aggregate's partials, the proxy combines them and then computes the expression as
-- PostgreSQL does: integer division and overflow, numeric scales, float8, NULLs, division by zero,
-- casts, round / coalesce / nullif, in the select list, ORDER BY and HAVING, with parameters.
statement: CREATE TABLE sf_exprs (tenant_id bigint NOT NULL, id integer NOT NULL, g integer, a integer, b bigint, c smallint, n numeric, f float8, z integer, PRIMARY KEY (tenant_id, id))
statement: INSERT INTO sf_exprs (tenant_id, id, g, a, b, c, n, f, z) VALUES (1, 1, 1, 5, 10, 7, 1.25, 0.5, 0), (2, 1, 1, 8, 20, 3, 2.50, -0.25, 1), (3, 1, 1, 3, 30, 2, 0.125, 1.75, -1), (4, 1, 2, NULL, 40, 20000, NULL, 2.5, 0), (5, 1, 2, NULL, 50, 1, NULL, 0.125, 0), (6, 1, 2, NULL, NULL, 5, NULL, NULL, 0), (7, 1, 3, 100, 9000000000000000000, 4, 10.5, 8.0, 2), (8, 1, 3, -7, 9000000000000000000, 6, -3.75, -4.0, 3), (9, 1, NULL, 11, 70, 9, 4.0, 0.75, 5), (1, 2, 1, 2, 15, 1, 0.75, 3.0, 2), (4, 2, 3, 9, 1, 1, 2.25, 0.375, 4), (9, 2, NULL, 6, 2, 2, 1.5, -1.5, 6)
query: SELECT sum(a) / count(*) FROM sf_exprs
query: SELECT sum(a) + 1, count(*) * 2, sum(a) - count(a), -sum(a), -(avg(n)) FROM sf_exprs
query: SELECT sum(a)::numeric / count(*), avg(n) * 2, round(avg(n), 2), round(avg(n)), coalesce(max(a), 0), sum(n) / nullif(count(a), 0) FROM sf_exprs
query: SELECT g, sum(a) + 1, sum(a)::numeric / count(*), avg(n) * 2, round(avg(n), 2), coalesce(max(a), 0), sum(n) / nullif(count(a), 0) FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
query: SELECT g, sum(f) / count(*), max(f) - min(f), sum(a) * 1.5, sum(f) * 2 + 1 FROM sf_exprs GROUP BY g ORDER BY g
query: SELECT g, (sum(a) + 1) * (count(*) - 1), sum(n) * sum(n), sum(b) / 3, max(c) * 1000, sum(c) / 2 FROM sf_exprs GROUP BY g ORDER BY g
query: SELECT g, sum(a)::float8 / count(*), avg(n)::int4, (sum(n) / 3)::int8, sum(f)::numeric, max(c)::int8 + 1 FROM sf_exprs GROUP BY g ORDER BY 1
query: SELECT g, coalesce(sum(a), -1), coalesce(avg(n), 0), nullif(max(a), 5), g * count(*) FROM sf_exprs GROUP BY g ORDER BY g NULLS LAST
query: SELECT sum(a) + 1 AS total, count(*) * 2 FROM sf_exprs WHERE id > 1000
query: SELECT g, sum(a) + 1 FROM sf_exprs WHERE id > 1000 GROUP BY g
-- Column names as PostgreSQL gives them: an alias with or without AS, a cast's argument's name.
query: SELECT g, sum(a)::numeric / count(*) ratio, CAST(sum(n) AS float8), sum(n)::float8, coalesce(max(a), 0) AS "Max A", (sum(a) + 1)::int4 FROM sf_exprs GROUP BY g ORDER BY ratio NULLS LAST, g
-- ORDER BY an expression over aggregates: selected (by name, position, or the same expression),
-- or not selected.
query: SELECT g, sum(a)::numeric / count(*) AS r FROM sf_exprs GROUP BY g ORDER BY r DESC NULLS LAST, g
query: SELECT g, sum(n) - 1 FROM sf_exprs GROUP BY g ORDER BY 2, 1
query: SELECT g, sum(n) / count(*) FROM sf_exprs GROUP BY g ORDER BY sum(n) / count(*) NULLS FIRST, g
query: SELECT g FROM sf_exprs GROUP BY g ORDER BY sum(a) * 2 - count(*) DESC NULLS LAST, g
query: SELECT g, count(*) FROM sf_exprs GROUP BY g ORDER BY max(a) DESC NULLS FIRST LIMIT 3
query: SELECT g, sum(a) + 1 FROM sf_exprs GROUP BY g ORDER BY 2 DESC NULLS LAST LIMIT 2 OFFSET 1
-- HAVING on an expression over aggregates, also next to one over selected columns.
query: SELECT g, count(*) FROM sf_exprs GROUP BY g HAVING sum(a) / count(*) > 2 ORDER BY g
query: SELECT g, sum(n) FROM sf_exprs GROUP BY g HAVING sum(n) / count(*) > 1 AND count(*) > 2 ORDER BY g
query: SELECT g, sum(a) + 1 AS s FROM sf_exprs GROUP BY g HAVING sum(a) + 1 > 10 OR max(c) * 2 > 100 ORDER BY g
query: SELECT g FROM sf_exprs GROUP BY g HAVING coalesce(sum(a), 0) = 0 ORDER BY g
-- Parameters inside the expressions and in HAVING.
query params(10): SELECT g, sum(a) + $1 FROM sf_exprs GROUP BY g ORDER BY g
query params(2): SELECT g, sum(n) * $1, count(*) FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
query params(1.5): SELECT g, count(*) FROM sf_exprs GROUP BY g HAVING sum(n) / count(*) > $1 ORDER BY g
query params(3, 1): SELECT g, sum(a) / $1 FROM sf_exprs WHERE id >= $2 GROUP BY g ORDER BY 2 NULLS FIRST, 1
-- Division by zero, overflow: PostgreSQL's errors (integer, numeric, float8).
error 22012: SELECT g, count(*) / sum(z) FROM sf_exprs GROUP BY g ORDER BY g
error 22012: SELECT sum(b) / sum(z) FROM sf_exprs WHERE g = 2
error 22012: SELECT sum(f) / sum(z) FROM sf_exprs WHERE g = 2
error 22012: SELECT g FROM sf_exprs GROUP BY g HAVING count(*) / sum(z) > 1
error 22003: SELECT max(c) + max(c) FROM sf_exprs
error 22003: SELECT count(*) * 9223372036854775807 FROM sf_exprs
error 22003: SELECT sum(a) * 4611686018427387904 FROM sf_exprs
query: SELECT sum(b) * 2, sum(b) / count(*) FROM sf_exprs
-- HAVING drops the groups whose expression would fail (PostgreSQL computes the select list only
-- for the groups HAVING keeps).
query: SELECT g, count(*) / sum(z) FROM sf_exprs GROUP BY g HAVING sum(z) <> 0 ORDER BY g
-- Refused: what the merge does not compute.
refused 0A000: SELECT g, sum(a) ^ 2 FROM sf_exprs GROUP BY g
refused 0A000: SELECT g, sqrt(sum(a)) FROM sf_exprs GROUP BY g
-- %, abs, ceil/ceiling, floor, greatest, least: integers (int4mod: the dividend's sign; 22012 for
-- zero), numeric (mod_var at the larger scale), float8 (ceil, floor, abs).
query: SELECT g, sum(a) % 2, sum(b) % 7, max(c) % 3, count(*) % 2, sum(n) % 1, sum(n) % 0.3, -sum(a) % 4 FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
query: SELECT g, abs(sum(a)), abs(-max(c)), abs(sum(n)), abs(sum(f)), abs(min(z)) FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
query: SELECT g, ceil(avg(n)), floor(avg(n)), ceiling(sum(f)), floor(sum(f)), ceil(sum(a)), floor(max(c)) FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
query: SELECT g, greatest(sum(a), max(c), 5), least(sum(n), min(a)), greatest(sum(f), avg(n)), least(max(a), NULL) FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
query: SELECT g, count(*) FROM sf_exprs GROUP BY g HAVING sum(a) % 2 = 1 ORDER BY g NULLS FIRST
query: SELECT g FROM sf_exprs GROUP BY g ORDER BY abs(sum(n) - 3) NULLS FIRST, g NULLS FIRST
query params(3, 4): SELECT g, sum(a) % $1, greatest(max(a), $2) FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
error 22012: SELECT g, count(*) % sum(z) FROM sf_exprs GROUP BY g ORDER BY g
error 22012: SELECT sum(b) % sum(z) FROM sf_exprs WHERE g = 2
error 22012: SELECT sum(n) % (count(*) - count(*)) FROM sf_exprs WHERE g = 1
error 22003: SELECT abs(min(a) * 0 - 2147483647 - 1) FROM sf_exprs WHERE g = 1
-- CASE over aggregates: searched and simple, conditions comparing numbers of mixed types (NaN
-- ordering, NULL's three-valued logic, IS [NOT] NULL, AND / OR / NOT), ELSE missing, results of
-- a common number type or text literals; in the select list, ORDER BY and HAVING.
query: SELECT g, CASE WHEN sum(a) > 10 THEN 'big' ELSE 'small' END, CASE count(*) WHEN 0 THEN NULL ELSE sum(a) / count(*) END FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
query: SELECT g, CASE WHEN sum(n) >= 3 AND count(*) > 2 THEN sum(n) WHEN sum(a) IS NULL THEN -1 END, CASE WHEN NOT (max(f) < 1 OR min(a) = 3) THEN 1 ELSE 2.5 END FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
query: SELECT g, CASE WHEN avg(f) > 1 THEN avg(f) WHEN sum(b) <> 20 THEN sum(c) ELSE 0 END, CASE max(c) WHEN 20000 THEN 'top' WHEN 3 THEN 'three' END FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
query: SELECT g, CASE WHEN sum(a) IS NOT NULL AND sum(a) % 2 = 0 THEN 'even' WHEN sum(a) IS NULL THEN 'none' ELSE 'odd' END AS parity FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
query: SELECT g, CASE WHEN max(f) > 1e300 THEN 'huge' WHEN max(f) = 0.5 THEN 'half' ELSE 'other' END, CASE WHEN -sum(f) <= -1.0 THEN 1.5 ELSE 0 END FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
query: SELECT CASE WHEN count(*) > 5 THEN sum(b) ELSE 0 END, CASE WHEN sum(a) < 0 OR NULL::int4 > 1 THEN 1 ELSE 0 END FROM sf_exprs
query: SELECT g FROM sf_exprs GROUP BY g ORDER BY CASE WHEN sum(a) > 10 THEN 0 ELSE 1 END, g NULLS FIRST
query: SELECT g, count(*) FROM sf_exprs GROUP BY g HAVING CASE WHEN count(*) > 2 THEN sum(n) ELSE 0 END > 1 ORDER BY g NULLS FIRST
query params(10, 5): SELECT g, CASE WHEN sum(a) > $1 THEN $2 ELSE count(*) END FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
error 22012: SELECT g, CASE WHEN count(*) / min(z) > 0 THEN 1 END FROM sf_exprs GROUP BY g ORDER BY g
query: SELECT g, CASE WHEN min(z) = 0 THEN NULL ELSE count(*) / min(z) END FROM sf_exprs GROUP BY g ORDER BY g NULLS FIRST
-- Refused: results mixing a string literal and numbers (PostgreSQL casts the literal), text
-- operators over a CASE.
refused 0A000: SELECT g, CASE WHEN max(a) > 1 THEN '7' ELSE sum(a) END FROM sf_exprs GROUP BY g
refused 0A000: SELECT g, CASE WHEN count(*) > 1 THEN 'x' END || 'y' FROM sf_exprs GROUP BY g
