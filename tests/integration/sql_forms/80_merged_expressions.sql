-- Merged forms computed from more than the plain partial aggregates: avg with FILTER (each
-- shard's sum and count filtered), window functions partitioned by the key (each shard's window
-- results are final, its rows merged like plain rows).
statement: CREATE TABLE sf_merged (tenant_id bigint NOT NULL, id integer NOT NULL, g integer, s text COLLATE "C", n numeric, f float8, PRIMARY KEY (tenant_id, id))
statement: INSERT INTO sf_merged (tenant_id, id, g, s, n, f) VALUES (1, 1, 2, 'cat', 5.0, -0.75), (1, 2, 0, NULL, 6.75, 1.375), (1, 3, 1, 'ant', 8.5, 0.625), (1, 4, 2, 'bee', NULL, -0.125), (1, 5, 0, 'cat', 1.75, -0.875), (2, 1, 0, NULL, 8.25, 0.25), (2, 2, 1, 'ant', 10.0, -0.5), (2, 3, 2, 'bee', NULL, 1.625), (2, 4, 0, 'cat', 3.25, 0.875), (2, 5, 1, NULL, 5.0, 0.125), (3, 1, 1, 'ant', 1.25, 1.25), (3, 2, 2, 'bee', NULL, 0.5), (3, 3, 0, 'cat', 4.75, -0.25), (3, 4, 1, NULL, 6.5, -1.0), (3, 5, 2, 'ant', 8.25, 1.125), (4, 1, 2, 'bee', NULL, -0.625), (4, 2, 0, 'cat', 6.25, 1.5), (4, 3, 1, NULL, 8.0, 0.75), (4, 4, 2, 'ant', 9.75, 0.0), (4, 5, 0, 'bee', 1.25, -0.75), (5, 1, 0, 'cat', 7.75, 0.375), (5, 2, 1, NULL, 9.5, -0.375), (5, 3, 2, 'ant', 1.0, 1.75), (5, 4, 0, 'bee', 2.75, 1.0), (5, 5, 1, 'cat', NULL, 0.25), (6, 1, 1, NULL, 0.75, 1.375), (6, 2, 2, 'ant', 2.5, 0.625), (6, 3, 0, 'bee', 4.25, -0.125), (6, 4, 1, 'cat', NULL, -0.875), (6, 5, 2, NULL, 7.75, 1.25), (7, 1, 2, 'ant', 4.0, -0.5), (7, 2, 0, 'bee', 5.75, 1.625), (7, 3, 1, 'cat', NULL, 0.875), (7, 4, 2, NULL, 9.25, 0.125), (7, 5, 0, 'ant', 0.75, -0.625), (8, 1, 0, 'bee', 7.25, 0.5), (8, 2, 1, 'cat', NULL, -0.25), (8, 3, 2, NULL, 0.5, -1.0), (8, 4, 0, 'ant', 2.25, 1.125), (8, 5, 1, 'bee', 4.0, 0.375), (9, 1, 1, 'cat', NULL, 1.5), (9, 2, 2, NULL, 2.0, 0.75), (9, 3, 0, 'ant', 3.75, 0.0), (9, 4, 1, 'bee', 5.5, -0.75), (9, 5, 2, 'cat', 7.25, 1.375), (10, 1, 2, NULL, 3.5, -0.375), (10, 2, 0, 'ant', 5.25, 1.75), (10, 3, 1, 'bee', 7.0, 1.0), (10, 4, 2, 'cat', 8.75, 0.25), (10, 5, 0, NULL, NULL, -0.5), (11, 1, 0, 'ant', 6.75, 0.625), (11, 2, 1, 'bee', 8.5, -0.125), (11, 3, 2, 'cat', 0.0, -0.875), (11, 4, 0, NULL, NULL, 1.25), (11, 5, 1, 'ant', 3.5, 0.5), (12, 1, 1, 'bee', 10.0, 1.625), (12, 2, 2, 'cat', 1.5, 0.875), (12, 3, 0, NULL, NULL, 0.125), (12, 4, 1, 'ant', 5.0, -0.625), (12, 5, 2, 'bee', 6.75, 1.5)
-- avg with FILTER: the shards run sum and count with the FILTER, the proxy divides.
query: SELECT avg(n) FILTER (WHERE g = 1) FROM sf_merged
query: SELECT avg(n) FILTER (WHERE g = 1), avg(id) filter(where n > 3), avg(f) FILTER (WHERE s = 'cat'), count(*) FROM sf_merged
query: SELECT g, avg(n) FILTER (WHERE s IS NOT NULL) AS a, avg(id) FILTER (WHERE false) FROM sf_merged GROUP BY g ORDER BY g
query: SELECT s, avg(n) FILTER (WHERE id > 2), avg(n) FROM sf_merged GROUP BY 1 ORDER BY 1 NULLS FIRST
query params(2): SELECT g, avg(n) FILTER (WHERE id > $1) FROM sf_merged GROUP BY g ORDER BY 2 DESC, 1
query: SELECT g, avg(n) FILTER (WHERE id > 1) FROM sf_merged GROUP BY g HAVING avg(n) FILTER (WHERE id > 1) > 4 ORDER BY g
query: SELECT avg(n) FILTER (WHERE g = 1) FROM sf_merged WHERE tenant_id IN (1, 2, 3, 4)
-- Window functions whose every window is partitioned by the key: final on each shard.
query: SELECT tenant_id, id, row_number() OVER (PARTITION BY tenant_id ORDER BY id DESC) FROM sf_merged ORDER BY tenant_id, id
query: SELECT tenant_id, id, n, sum(n) OVER (PARTITION BY tenant_id ORDER BY id), rank() OVER (PARTITION BY g, tenant_id ORDER BY n NULLS FIRST, id) FROM sf_merged ORDER BY 1, 2
query: SELECT id, tenant_id, avg(n) OVER w, count(*) OVER (w ORDER BY id), lag(s) OVER (w ORDER BY id) FROM sf_merged m WINDOW w AS (PARTITION BY m.tenant_id) ORDER BY id, tenant_id
query: SELECT m.tenant_id, first_value(id) OVER (PARTITION BY tenant_id ORDER BY f, id) AS first FROM sf_merged m ORDER BY first DESC, tenant_id LIMIT 7 OFFSET 2
query rowsort: SELECT tenant_id, id, dense_rank() OVER (PARTITION BY tenant_id ORDER BY g) FROM sf_merged
query: SELECT DISTINCT g, max(id) OVER (PARTITION BY tenant_id, g) FROM sf_merged ORDER BY 1, 2
query params(3): SELECT tenant_id, id, ntile(2) OVER (PARTITION BY tenant_id ORDER BY id) FROM sf_merged WHERE id <= $1 ORDER BY tenant_id, id LIMIT $1
query: SELECT tenant_id, count(*), sum(count(*)) OVER (PARTITION BY tenant_id) FROM sf_merged GROUP BY tenant_id, g ORDER BY 1, 2
query: SELECT tenant_id, id, row_number() OVER (PARTITION BY tenant_id ORDER BY id) FROM sf_merged WHERE tenant_id IN (2, 5, 9) ORDER BY 3, 1
-- Refused: windows over rows of several shards.
refused 0A000: SELECT id, row_number() OVER (ORDER BY tenant_id, id) FROM sf_merged
refused 0A000: SELECT id, sum(n) OVER (PARTITION BY g) FROM sf_merged
refused 0A000: SELECT id, sum(n) OVER w, rank() OVER (ORDER BY id) FROM sf_merged WINDOW w AS (PARTITION BY tenant_id)
refused 0A000: SELECT g, count(*), rank() OVER (ORDER BY count(*)) FROM sf_merged GROUP BY g
-- x IN (SELECT y ...) on the key in the WHERE's AND chain: co-located like a join on the key
-- (NOT IN, under OR, or a subquery with LIMIT stay refused: tests/routing/queries.route).
statement: CREATE TABLE sf_merged_tags (tenant_id bigint NOT NULL, tag text COLLATE "C" NOT NULL, PRIMARY KEY (tenant_id, tag))
statement: INSERT INTO sf_merged_tags (tenant_id, tag) VALUES (1, 'gold'), (2, 'gold'), (2, 'new'), (3, 'new'), (5, 'gold'), (8, 'new'), (9, 'gold'), (9, 'new'), (11, 'gold'), (13, 'gold')
query: SELECT count(*), sum(n) FROM sf_merged WHERE tenant_id IN (SELECT tenant_id FROM sf_merged_tags WHERE tag = 'gold')
query: SELECT m.tenant_id, m.id FROM sf_merged m WHERE m.g = 1 AND m.tenant_id IN (SELECT t.tenant_id FROM sf_merged_tags t WHERE t.tag <> 'x') ORDER BY 1, 2
query: SELECT id, s FROM sf_merged WHERE tenant_id = 9 AND tenant_id IN (SELECT tenant_id FROM sf_merged_tags) ORDER BY id
query params(2): SELECT g, count(*) FROM sf_merged WHERE tenant_id = ANY (SELECT tenant_id FROM sf_merged_tags WHERE length(tag) > $1 + 1) GROUP BY g ORDER BY g
query: SELECT tag, count(*) FROM sf_merged_tags WHERE tenant_id IN (SELECT tenant_id FROM sf_merged WHERE n > 9) GROUP BY tag ORDER BY tag
