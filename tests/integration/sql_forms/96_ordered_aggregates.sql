-- array_agg / string_agg across shards: each shard answers per group array_agg of the value and
-- of each sort key in the call's order; the proxy merges them by the keys and prints the array
-- (quoting, NULL elements) or the joined text as PostgreSQL does. sf_blocks comes from
-- 90_from_blocks.sql (and 95_count_distinct.sql); these rows add texts array_out quotes.
statement: INSERT INTO sf_blocks (tenant_id, id, g, s, amount) VALUES (13, 1, 1, 'a b', 1.25), (14, 1, 2, 'say "hi"', -3), (15, 1, 1, 'NULL', 2), (16, 1, 2, '', 4.5), (17, 1, 1, 'x,y\z', NULL), (18, 1, 0, '{}', 6)
query: SELECT string_agg(s, ',' ORDER BY tenant_id, id) FROM sf_blocks
query: SELECT array_agg(s ORDER BY tenant_id DESC, id DESC), array_agg(amount ORDER BY tenant_id, id) FROM sf_blocks WHERE g > 0
query: SELECT g, string_agg(s, ' | ' ORDER BY amount DESC NULLS LAST, tenant_id DESC, id), count(*) FROM sf_blocks GROUP BY g ORDER BY g NULLS FIRST
query: SELECT g, array_agg(amount ORDER BY tenant_id DESC, id), array_agg(s ORDER BY s NULLS FIRST, tenant_id, id) FROM sf_blocks WHERE id < 3 GROUP BY g ORDER BY g NULLS FIRST
query: SELECT array_agg(id ORDER BY tenant_id, id) FILTER (WHERE g = 1), string_agg(s, '' ORDER BY tenant_id, id) FILTER (WHERE amount > 5), sum(amount) FROM sf_blocks
query: SELECT array_agg(DISTINCT s ORDER BY s), string_agg(DISTINCT s, ',' ORDER BY s DESC) FROM sf_blocks
-- DISTINCT alone: sorted by the value (values that differ only in spelling, 1.5 and 1.50, are
-- left out: which one PostgreSQL keeps is unspecified).
query: SELECT array_agg(DISTINCT g), array_agg(DISTINCT s) FROM sf_blocks WHERE g > 0
query: SELECT array_agg(s || '.' ORDER BY tenant_id, id), string_agg(s, NULL ORDER BY tenant_id, id) FROM sf_blocks WHERE g = 2
query: SELECT s, array_agg(tenant_id ORDER BY amount NULLS FIRST, tenant_id, id) FROM sf_blocks GROUP BY s ORDER BY s NULLS FIRST
query: SELECT array_agg(s ORDER BY tenant_id, id), string_agg(s, ',' ORDER BY tenant_id, id) FROM sf_blocks WHERE id > 100
query: SELECT g, array_agg(tenant_id ORDER BY tenant_id DESC, id) FROM sf_blocks WHERE id > 100 GROUP BY g
query params(1, 3): SELECT string_agg(s, ';' ORDER BY tenant_id, id), array_agg(amount ORDER BY tenant_id DESC, id) FROM sf_blocks WHERE g = $1 AND id < $2
query: SELECT string_agg(s, E'\n' ORDER BY s DESC, tenant_id) FROM sf_blocks WHERE g = 1
query: SELECT array_agg(coalesce(s, 'none') ORDER BY coalesce(s, 'a,b') NULLS FIRST, (id + tenant_id) * 2 DESC) FROM sf_blocks WHERE amount < 3
-- Output positions after an aggregate the shards answer as several columns; a parameter in FILTER.
query: SELECT string_agg(s, ',' ORDER BY id, tenant_id), g FROM sf_blocks GROUP BY 2 ORDER BY 2 NULLS FIRST
query params(1): SELECT g, array_agg(tenant_id ORDER BY tenant_id, id) FILTER (WHERE id = $1) FROM sf_blocks GROUP BY g ORDER BY 1 NULLS FIRST
-- Through a block text sort keys need COLLATE "C" (their collation cannot be told otherwise).
query: WITH t AS (SELECT s, tenant_id, id FROM sf_blocks WHERE g > 0) SELECT string_agg(s, ',' ORDER BY s COLLATE "C", tenant_id, id) FROM t
-- A separator that is not a literal cannot be told before the rows come: refused.
refused 0A000: SELECT string_agg(s, s ORDER BY tenant_id, id) FROM sf_blocks
-- Past fanout.max_distinct_values (60 in this suite's proxy; two aggregates over 34 rows hold
-- 68 values): 54000, naming the limit.
refused 54000: SELECT array_agg(s ORDER BY tenant_id, id), array_agg(amount ORDER BY tenant_id, id) FROM sf_blocks
-- In HAVING: an ordered aggregate compared with a constant is merged (the proxy compares the
-- merged text), selected or not (then the shards select its arrays first, hidden); inside an
-- expression it is refused, saying what to write.
query: SELECT g, string_agg(s, ',' ORDER BY tenant_id, id) FROM sf_blocks WHERE id < 3 GROUP BY g HAVING string_agg(s, ',' ORDER BY tenant_id, id) = 'a b,NULL,x,y\z' ORDER BY g NULLS FIRST
query: SELECT g, string_agg(s, ',' ORDER BY s DESC) FROM sf_blocks WHERE id < 3 GROUP BY g HAVING string_agg(s, ',' ORDER BY s DESC) > 'b' ORDER BY g NULLS FIRST
query: SELECT g, count(*) FROM sf_blocks WHERE id < 3 GROUP BY g HAVING string_agg(s, ',' ORDER BY tenant_id, id) <> '' ORDER BY g NULLS FIRST
query: SELECT g, count(*) FROM sf_blocks WHERE id < 3 GROUP BY g HAVING string_agg(s, ',' ORDER BY s DESC) > 'b' AND count(*) > 1 ORDER BY g NULLS FIRST
query: SELECT g, max(s) FROM sf_blocks GROUP BY g HAVING string_agg(DISTINCT s, '/') FILTER (WHERE id < 3) >= 'b' ORDER BY g NULLS FIRST
query: SELECT g FROM sf_blocks WHERE id < 3 GROUP BY g ORDER BY string_agg(s, ',' ORDER BY s) NULLS FIRST, g NULLS FIRST
-- HAVING on FILTERed aggregates not selected: the FILTER goes with each shard column.
query: SELECT g, count(*) FROM sf_blocks GROUP BY g HAVING sum(amount) FILTER (WHERE s > 'b') > 10 ORDER BY g NULLS FIRST
query: SELECT g, count(*) FROM sf_blocks GROUP BY g HAVING avg(amount) FILTER (WHERE id < 3) > 4 OR count(DISTINCT s) FILTER (WHERE amount > 2) > 3 ORDER BY g NULLS FIRST
refused 0A000: SELECT g, count(*) FROM sf_blocks WHERE id < 3 GROUP BY g HAVING array_length(array_agg(s ORDER BY s), 1) > 2 ORDER BY g NULLS FIRST
