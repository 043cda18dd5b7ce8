-- Merged forms beyond plain aggregates: FILTER on mergeable aggregates, DISTINCT ON with an
-- ORDER BY starting with its expressions; and the forms shardwire refuses rather than answer
-- differently (each refusal says what to write instead).
statement: CREATE TABLE sf_forms (tenant_id bigint NOT NULL, id integer NOT NULL, g integer, s text COLLATE "C", n numeric, PRIMARY KEY (tenant_id, id))
statement: INSERT INTO sf_forms (tenant_id, id, g, s, n) VALUES (1, 1, 2, 'bee', 10.5), (1, 2, 0, 'cat', 2.0), (1, 3, 1, 'dog', 5.5), (1, 4, 2, 'eel', 8.0), (2, 1, 0, 'cat', 6.5), (2, 2, 1, 'eel', 9.0), (2, 3, 2, 'ant', 1.5), (2, 4, 0, 'cat', 4.0), (3, 1, 1, 'dog', 2.5), (3, 2, 2, 'ant', 5.0), (3, 3, 0, 'dog', 8.5), (3, 4, 1, 'ant', NULL), (4, 1, 2, 'eel', 9.5), (4, 2, 0, 'cat', 1.0), (4, 3, 1, 'ant', NULL), (4, 4, 2, 'eel', 7.0), (5, 1, 0, NULL, 5.5), (5, 2, 1, 'eel', NULL), (5, 3, 2, 'dog', 0.5), (5, 4, 0, 'cat', 3.0), (6, 1, 1, 'ant', NULL), (6, 2, 2, 'ant', 4.0), (6, 3, 0, 'ant', 7.5), (6, 4, 1, 'ant', 10.0), (7, 1, 2, 'bee', 8.5), (7, 2, 0, 'cat', 0.0), (7, 3, 1, 'dog', 3.5), (7, 4, 2, 'eel', 6.0), (8, 1, 0, 'cat', 4.5), (8, 2, 1, 'eel', 7.0), (8, 3, 2, 'ant', 10.5), (8, 4, 0, 'cat', 2.0), (9, 1, 1, 'dog', 0.5), (9, 2, 2, 'ant', 3.0), (9, 3, 0, 'dog', 6.5), (9, 4, 1, 'ant', 9.0), (10, 1, 2, 'eel', 7.5), (10, 2, 0, 'cat', 10.0), (10, 3, 1, 'ant', 2.5), (10, 4, 2, 'eel', NULL), (11, 1, 0, NULL, 3.5), (11, 2, 1, 'eel', 6.0), (11, 3, 2, 'dog', NULL), (11, 4, 0, 'cat', 1.0), (12, 1, 1, 'ant', 10.5), (12, 2, 2, 'ant', NULL), (12, 3, 0, 'ant', 5.5), (12, 4, 1, 'ant', 8.0)
-- FILTER: each shard aggregates its filtered rows, the proxy combines the partial results.
query: SELECT count(*) FILTER (WHERE n > 5), sum(n) FILTER (WHERE g = 1), min(s) FILTER (WHERE g <> 1), max(id) FILTER (WHERE n IS NULL), bool_or(n > 9) FILTER (WHERE g = 2) FROM sf_forms
query: SELECT g, count(*) FILTER (WHERE n > 5) AS big, count(n) FILTER (WHERE s IS NOT NULL), count(*) FROM sf_forms GROUP BY g ORDER BY g
query: SELECT g, count(*) FILTER (WHERE n > 5) FROM sf_forms GROUP BY g HAVING count(*) FILTER (WHERE n > 5) > 5 ORDER BY g
query params(5): SELECT count(*) FILTER (WHERE n > $1), sum(id) FILTER (WHERE n <= $1) FROM sf_forms
query: SELECT s, sum(n) FILTER (WHERE tenant_id > 6), count(*) FROM sf_forms GROUP BY s ORDER BY s NULLS FIRST
query: SELECT count(*) FILTER (WHERE false), sum(n) FILTER (WHERE false) FROM sf_forms
-- count(DISTINCT key): every key value lives on one shard, so the shards' counts add up.
query: SELECT count(DISTINCT tenant_id) FROM sf_forms
query: SELECT g, count(DISTINCT tenant_id), count(*) FROM sf_forms GROUP BY g ORDER BY g
query: SELECT count(DISTINCT tenant_id) FILTER (WHERE n > 8), count(DISTINCT TENANT_ID) FROM sf_forms
query: SELECT count(DISTINCT tenant_id) FROM sf_forms WHERE tenant_id IN (1, 2, 3, 4, 5)
-- HAVING on aggregates not selected: the shards select them first, the proxy compares and drops them.
query: SELECT g FROM sf_forms GROUP BY g HAVING count(*) > 15 ORDER BY g
query: SELECT g, min(s) FROM sf_forms GROUP BY g HAVING sum(n) > 80 AND avg(n) < 7 ORDER BY g
query: SELECT s FROM sf_forms GROUP BY s HAVING max(n) >= 10 OR count(*) = 6 ORDER BY s NULLS FIRST
query params(3): SELECT g, count(*) FROM sf_forms GROUP BY 1 HAVING min(id) < $1 AND count(*) > $1 ORDER BY 1
query: SELECT count(*) FROM sf_forms HAVING sum(n) > 0
query: SELECT avg(n), g FROM sf_forms GROUP BY 2 HAVING avg(n) > 5 AND avg(id) < 3 ORDER BY 2
-- DISTINCT ON: each shard keeps its first row per key, the merge the first of those.
query: SELECT DISTINCT ON (g) g, tenant_id, id, s FROM sf_forms ORDER BY g, n DESC, tenant_id, id
query: SELECT DISTINCT ON (g) g, s FROM sf_forms ORDER BY g, n DESC NULLS LAST, tenant_id, id
query: SELECT DISTINCT ON (s) s, g, id FROM sf_forms ORDER BY s, id DESC, tenant_id LIMIT 3 OFFSET 1
query: SELECT DISTINCT ON (1) g, id FROM sf_forms ORDER BY 1, 2 DESC, tenant_id DESC
query: SELECT DISTINCT ON (g, s) g, s, id FROM sf_forms ORDER BY s, g, id DESC, tenant_id
query params(2): SELECT DISTINCT ON (g) g, id, tenant_id FROM sf_forms ORDER BY g DESC, id, tenant_id LIMIT $1
query: SELECT DISTINCT ON (n) n, s FROM sf_forms WHERE tenant_id IN (1, 2, 3, 4, 5) ORDER BY n NULLS FIRST, s, tenant_id, id
refused 0A000: SELECT DISTINCT ON (g) id FROM sf_forms ORDER BY g, id
refused 0A000: SELECT DISTINCT ON (g) g, id FROM sf_forms
refused 0A000: SELECT DISTINCT ON (g) g, count(*) FROM sf_forms GROUP BY g, id ORDER BY g
-- Merged by the aggregate's sort keys (96_ordered_aggregates.sql has more).
query: SELECT string_agg(s, ',' ORDER BY s) FROM sf_forms
query: SELECT array_agg(id ORDER BY id) FROM sf_forms
-- Refused: what no merge of the shards' partial results computes exactly.
refused 0A000: SELECT json_agg(DISTINCT g) FROM sf_forms
query: SELECT sum(DISTINCT g), avg(DISTINCT g) FROM sf_forms
query: SELECT stddev(n), variance(n) FROM sf_forms
query: SELECT sum(n) / count(*) FROM sf_forms
query: SELECT sum(n) + 1 FROM sf_forms
query: SELECT g FROM sf_forms GROUP BY g HAVING sum(n) / count(*) > 2 ORDER BY g
refused 0A000: SELECT sum(n) ^ 2, g FROM sf_forms GROUP BY g
query: SELECT sum(n) % 2, g FROM sf_forms GROUP BY g ORDER BY g
refused 0A000: SELECT id, row_number() OVER (ORDER BY id) FROM sf_forms
query: UPDATE sf_forms SET g = g WHERE id < 0
query: DELETE FROM sf_forms WHERE id < 0
query once: UPDATE sf_forms SET tenant_id = 99 WHERE tenant_id = 1 AND id < 0
query: SELECT * FROM sf_forms ORDER BY tenant_id, id
