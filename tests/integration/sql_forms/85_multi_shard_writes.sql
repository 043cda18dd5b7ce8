-- UPDATE and DELETE without a key: every shard writes the rows of the buckets it owns, the
-- shards commit together (two-phase commit), RETURNING rows of every shard, the tag the total.
statement: CREATE TABLE sf_writes (tenant_id bigint NOT NULL, id integer NOT NULL, g integer, n numeric, s text COLLATE "C", PRIMARY KEY (tenant_id, id))
statement: INSERT INTO sf_writes (tenant_id, id, g, n, s) VALUES (1, 1, 0, 1.5, 'a'), (1, 2, 1, 2.5, 'b'), (2, 1, 2, 3.5, 'c'), (2, 2, 0, 4.5, 'd'), (3, 1, 1, 5.5, 'e'), (3, 2, 2, 6.5, 'f'), (4, 1, 0, 7.5, 'g'), (4, 2, 1, NULL, 'h'), (5, 1, 2, 9.5, 'i'), (5, 2, 0, 10.5, NULL), (6, 1, 1, 11.5, 'k'), (6, 2, 2, 12.5, 'l'), (7, 1, 0, 13.5, 'm'), (7, 2, 1, 14.5, 'n'), (8, 1, 2, 15.5, 'o'), (8, 2, 0, 16.5, 'p')
-- Each protocol runs the line once more on both sides: the same rows change on both.
query rowsort: UPDATE sf_writes SET n = n + 1 WHERE g = 1 RETURNING tenant_id, id, n
query: UPDATE sf_writes SET s = s || 'x' WHERE id = 2 AND s IS NOT NULL
query rowsort: UPDATE sf_writes AS w SET g = w.g + 1 WHERE w.n > 12 RETURNING w.tenant_id, w.id, w.g, w.n * 2 AS twice
query rowsort params(2): UPDATE sf_writes SET n = n * $1 WHERE g = $1 RETURNING tenant_id, id, n
query: UPDATE sf_writes SET s = upper(s) -- no WHERE, a trailing comment
query rowsort: UPDATE sf_writes SET n = n - 1 WHERE (g = 0 OR g = 3) AND tenant_id > 2 RETURNING *;
query rowsort: DELETE FROM sf_writes WHERE n > 30 RETURNING tenant_id, id
query params(0): DELETE FROM sf_writes WHERE n < $1
query: SELECT * FROM sf_writes ORDER BY tenant_id, id
-- Inside a transaction: the write joins the transaction's legs and commits or rolls back with it.
statement: BEGIN
query rowsort once: DELETE FROM sf_writes WHERE g = 0 RETURNING tenant_id, id, s
query once: SELECT count(*), sum(n) FROM sf_writes
statement: ROLLBACK
query once: SELECT count(*), sum(n) FROM sf_writes
statement: BEGIN
query once: UPDATE sf_writes SET n = 0 WHERE g = 2
query once: DELETE FROM sf_writes WHERE id = 1 AND tenant_id IN (1, 2, 3)
statement: COMMIT
query: SELECT * FROM sf_writes ORDER BY tenant_id, id
query once: DELETE FROM sf_writes
query: SELECT count(*) FROM sf_writes
-- Tied by the key through IN (SELECT key ...) of a table sharded alike: each shard's subquery sees
-- the keys it holds, so the write stays on each shard's own rows.
statement: INSERT INTO sf_writes (tenant_id, id, g, n, s) VALUES (1, 1, 0, 1.5, 'a'), (2, 1, 2, 3.5, 'c'), (3, 1, 1, 5.5, 'e'), (4, 1, 0, 7.5, 'g'), (8, 2, 0, 16.5, 'p'), (9, 1, 1, 1.0, 'q')
query rowsort once: UPDATE sf_writes SET g = 9 WHERE tenant_id IN (SELECT tenant_id FROM sf_merged_tags WHERE tag = 'gold') RETURNING tenant_id, id, g
query rowsort once: DELETE FROM sf_writes WHERE tenant_id IN (SELECT tenant_id FROM sf_merged_tags WHERE tag = 'new') RETURNING tenant_id, id
query: SELECT * FROM sf_writes ORDER BY tenant_id, id
query once: DELETE FROM sf_writes
