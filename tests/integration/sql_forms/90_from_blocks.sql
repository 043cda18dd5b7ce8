-- CTEs and subqueries in FROM that filter and project one sharded table row by row (no
-- aggregates, LIMIT, DISTINCT, ORDER BY or windows inside, read once): every shard runs the
-- whole statement on its own rows and the proxy merges as for the table itself.
statement: CREATE TABLE sf_blocks (tenant_id bigint NOT NULL, id integer NOT NULL, g integer, s text COLLATE "C", amount numeric, PRIMARY KEY (tenant_id, id))
statement: INSERT INTO sf_blocks (tenant_id, id, g, s, amount) VALUES (1, 1, 2, 'bee', 10.5), (1, 2, 0, 'cat', 2.0), (1, 3, 1, 'dog', 5.5), (2, 1, 0, 'cat', 6.5), (2, 2, 1, 'eel', 9.0), (2, 3, 2, 'ant', 1.5), (3, 1, 1, 'dog', 2.5), (3, 2, 2, 'ant', 5.0), (3, 3, 0, 'dog', NULL), (4, 1, 2, 'eel', 9.5), (4, 2, 0, 'cat', 1.0), (4, 3, 1, 'ant', NULL), (5, 1, 0, NULL, 5.5), (5, 2, 1, 'eel', 3.0), (5, 3, 2, 'dog', 0.5), (6, 1, 1, 'ant', 7.0), (6, 2, 2, 'ant', 4.0), (6, 3, 0, 'ant', 7.5), (7, 1, 2, 'bee', 8.5), (7, 2, 0, 'cat', 0.0), (7, 3, 1, 'dog', 3.5), (8, 1, 0, 'cat', 4.5), (8, 2, 1, 'eel', 7.0), (8, 3, 2, 'ant', 10.5)
query: WITH t AS (SELECT tenant_id, amount FROM sf_blocks WHERE g > 0) SELECT count(*), sum(amount), min(amount), max(amount), avg(amount) FROM t
query: WITH t AS (SELECT * FROM sf_blocks WHERE amount > 2) SELECT g, count(*), sum(amount) FROM t GROUP BY g ORDER BY g
query: SELECT s, count(*) FROM (SELECT s, amount FROM sf_blocks WHERE id <> 2) b GROUP BY s ORDER BY s NULLS FIRST
query: SELECT x.tenant_id, x.id, x.doubled FROM (SELECT tenant_id, id, amount * 2 AS doubled FROM sf_blocks) AS x ORDER BY x.doubled DESC NULLS LAST, x.tenant_id, x.id LIMIT 5
query rowsort: SELECT b.id, b.s FROM (SELECT id, s FROM sf_blocks WHERE g = 1) b
query: WITH t AS (SELECT g AS tenant_id, amount FROM sf_blocks) SELECT tenant_id, count(*), sum(amount) FROM t GROUP BY tenant_id ORDER BY tenant_id
-- Through a block the key's name may be another column's: no shortcut by the key (counted as
-- any other column's distinct values).
query: WITH t AS (SELECT g AS tenant_id FROM sf_blocks) SELECT count(DISTINCT tenant_id) FROM t
query: WITH a AS (SELECT tenant_id, g, amount FROM sf_blocks WHERE amount IS NOT NULL), b AS (SELECT g, amount FROM a WHERE g <> 0) SELECT g, max(amount) FROM b GROUP BY g ORDER BY g
query: SELECT count(*) FROM (SELECT * FROM (SELECT tenant_id, g FROM sf_blocks WHERE g < 2) i WHERE g > 0) o
query params(1): WITH t AS (SELECT * FROM sf_blocks WHERE g = $1) SELECT count(*), sum(amount) FROM t
query: SELECT DISTINCT s FROM (SELECT s FROM sf_blocks) b ORDER BY s NULLS LAST
query: SELECT b.id FROM (SELECT tenant_id, id, amount FROM sf_blocks) b ORDER BY b.amount DESC NULLS LAST, b.tenant_id, b.id LIMIT 4 OFFSET 1
query: WITH t AS (SELECT g, amount FROM sf_blocks) SELECT g FROM t GROUP BY g HAVING sum(amount) > 30 ORDER BY g
query: SELECT DISTINCT ON (g) g, tenant_id, id FROM (SELECT * FROM sf_blocks WHERE amount IS NOT NULL) b ORDER BY g, amount DESC, tenant_id, id
query: SELECT v.x, count(*), sum(b.amount) FROM (VALUES (0), (1)) v(x) JOIN (SELECT g, amount FROM sf_blocks) b ON b.g = v.x GROUP BY v.x ORDER BY v.x
query: WITH t AS (SELECT * FROM sf_blocks WHERE tenant_id IN (SELECT tenant_id FROM sf_forms WHERE g = 1)) SELECT count(*), sum(amount) FROM t
query params(0, 3): SELECT s, count(*) FROM (SELECT s FROM sf_blocks WHERE g > $1) b GROUP BY s ORDER BY s NULLS FIRST LIMIT $2
-- Keyed inside the block: one shard.
query: WITH t AS (SELECT * FROM sf_blocks WHERE tenant_id = 3) SELECT count(*), sum(amount) FROM t
query: SELECT sum(amount) FROM (SELECT amount FROM sf_blocks WHERE tenant_id IN (2, 7)) k
-- Refused: what no per-shard run merges exactly.
refused 0A000: WITH t AS (SELECT g, count(*) AS n FROM sf_blocks GROUP BY g) SELECT sum(n) FROM t
refused 0A000: SELECT count(*) FROM (SELECT * FROM sf_blocks ORDER BY amount LIMIT 3) b
refused 0A000: SELECT count(*) FROM (SELECT DISTINCT s FROM sf_blocks) b
refused 0A000: WITH t AS (SELECT * FROM sf_blocks) SELECT count(*) FROM t a JOIN t b ON a.g = b.g
refused 0A000: WITH RECURSIVE r(n) AS (SELECT min(id) FROM sf_blocks UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT count(*) FROM r
refused 0A000: WITH d AS (DELETE FROM sf_blocks WHERE id < 0 RETURNING *) SELECT count(*) FROM d
refused 0A000: SELECT (SELECT max(amount) FROM sf_blocks) AS m
refused 0A000: SELECT count(*) FROM (VALUES (1)) v(x) LEFT JOIN (SELECT * FROM sf_blocks) b ON b.id = v.x
