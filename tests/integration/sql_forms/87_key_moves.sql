-- UPDATE that sets the key to a value another shard owns: the rows move (deleted on the old
-- owner, inserted on the new one, committed together); SET is evaluated on the old rows, the tag
-- counts every row updated, RETURNING gives the new rows.
statement: CREATE TABLE sf_moves (tenant_id bigint NOT NULL, id integer NOT NULL, g integer, n numeric, s text COLLATE "C", f float8, PRIMARY KEY (tenant_id, id))
statement: INSERT INTO sf_moves (tenant_id, id, g, n, s, f) VALUES (1, 1, 0, 1.5, 'a', 0.1), (1, 2, 1, 2.5, 'b''q', 0.30000000000000004), (2, 3, 2, 3.5, 'c\d', -0.0), (2, 50, 0, 4.5, 'd', 1e300), (3, 5, 1, 5.5, NULL, NULL), (3, 50, 2, 6.5, 'f', 'Infinity'), (4, 7, 0, 7.5, 'g', 2.5), (4, 8, 1, NULL, 'h', 3.5), (5, 9, 2, 9.5, 'i', 4.5), (5, 10, 0, 10.5, NULL, 5.5), (6, 11, 1, 11.5, 'k', 6.5), (6, 12, 2, 12.5, 'l', 7.5), (7, 13, 0, 13.5, 'm', 8.5), (7, 14, 1, 14.5, 'n', 9.5), (8, 15, 2, 15.5, 'o', 10.5), (8, 16, 0, 16.5, 'p', 11.5)
query rowsort once: UPDATE sf_moves SET tenant_id = 20, n = n * 2 WHERE tenant_id = 1 RETURNING tenant_id, id, n, s, f
query once: UPDATE sf_moves SET tenant_id = tenant_id + 100 WHERE g = 1
query rowsort once: UPDATE sf_moves AS m SET tenant_id = m.id * 7, s = m.s || '!' WHERE m.n > 10 RETURNING *
query rowsort once: UPDATE sf_moves SET tenant_id = tenant_id * 10 + 1, g = g + 1 RETURNING tenant_id, id, g, f::text
query: SELECT tenant_id, id, g, n, s, f::text FROM sf_moves ORDER BY tenant_id, id
-- Inside a transaction: the move joins the transaction's legs and commits or rolls back with it.
statement: BEGIN
query once: UPDATE sf_moves SET tenant_id = 1000 WHERE id < 8
query once: SELECT count(*), sum(id) FROM sf_moves WHERE tenant_id = 1000
statement: ROLLBACK
query once: SELECT count(*), sum(id) FROM sf_moves WHERE tenant_id = 1000
statement: BEGIN
query once: UPDATE sf_moves SET tenant_id = 1000 WHERE id < 8
statement: COMMIT
query: SELECT tenant_id, id, g, n, s, f::text FROM sf_moves ORDER BY tenant_id, id
-- A row whose new key is taken (tenant 21, id 50): the UPDATE fails and nothing moves.
error 23505 once: UPDATE sf_moves SET tenant_id = 21 WHERE id = 50 AND tenant_id = 31
query: SELECT tenant_id, id, g, n, s, f::text FROM sf_moves ORDER BY tenant_id, id
-- The extended protocol as ORMs send it (Bind values, the new key from one, the old from another;
-- text and binary results): each protocol's run moves the rows on.
query rowsort params(1000, 8): UPDATE sf_moves SET tenant_id = $1, g = g + 1 WHERE id = $2 RETURNING tenant_id, id, g, n, s, f
query rowsort params(7, 10): UPDATE sf_moves SET tenant_id = tenant_id + $1 WHERE id > $2 RETURNING tenant_id, id, n, s, f
query params(2, 1000, 8): UPDATE sf_moves SET tenant_id = $1 WHERE tenant_id = $2 AND id = $3
query: SELECT tenant_id, id, g, n, s, f::text FROM sf_moves ORDER BY tenant_id, id
query once: DELETE FROM sf_moves
