-- UPDATE that moves rows, in the forms beyond `SET key = expression`: FROM a co-located table
-- joined on the key (DELETE ... USING on each shard, one joined row per target row, as UPDATE
-- ... FROM), the client's WITH list, and multi-column SET from a list, ROW(...) or a sub-select.
statement: CREATE TABLE sf_move_forms (tenant_id bigint NOT NULL, id integer NOT NULL, g integer, s text COLLATE "C", PRIMARY KEY (tenant_id, id))
statement: CREATE TABLE sf_move_src (tenant_id bigint NOT NULL, seq integer NOT NULL, to_tenant bigint, label text COLLATE "C", PRIMARY KEY (tenant_id, seq))
statement: INSERT INTO sf_move_forms (tenant_id, id, g, s) VALUES (1, 11, 1, 'r1.1'), (1, 12, 2, 'r1.2'), (1, 13, 3, 'r1.3'), (2, 21, 1, 'r2.1'), (2, 22, 2, 'r2.2'), (2, 23, 3, 'r2.3'), (3, 31, 1, 'r3.1'), (3, 32, 2, 'r3.2'), (3, 33, 3, 'r3.3'), (4, 41, 1, 'r4.1'), (4, 42, 2, 'r4.2'), (4, 43, 3, 'r4.3'), (5, 51, 1, 'r5.1'), (5, 52, 2, 'r5.2'), (5, 53, 3, 'r5.3'), (6, 61, 1, 'r6.1'), (6, 62, 2, 'r6.2'), (6, 63, 3, 'r6.3'), (7, 71, 1, 'r7.1'), (7, 72, 2, 'r7.2'), (7, 73, 3, 'r7.3'), (8, 81, 1, 'r8.1'), (8, 82, 2, 'r8.2'), (8, 83, 3, 'r8.3')
statement: INSERT INTO sf_move_src (tenant_id, seq, to_tenant, label) VALUES (1, 1, 41, 'to41'), (2, 1, 42, 'to42'), (3, 1, 43, 'to43'), (4, 1, 44, 'to44'), (5, 1, 45, 'to45'), (6, 1, 46, 'to46'), (7, 1, 47, 'to47'), (8, 1, 48, 'to48')
statement: INSERT INTO sf_move_src (tenant_id, seq, to_tenant, label) VALUES (1, 2, NULL, 'extra'), (2, 2, NULL, 'extra'), (3, 2, NULL, 'extra'), (4, 2, NULL, 'extra')
-- FROM joined on the key, SET reading the FROM row that matches once per target row.
query once: UPDATE sf_move_forms f SET tenant_id = src.to_tenant, s = src.label || ':' || f.s FROM sf_move_src src WHERE src.tenant_id = f.tenant_id AND src.seq = 1 AND f.g = 1
-- Several FROM rows per target row (tenants 1-4 have two): each row is updated once.
query once: UPDATE sf_move_forms SET tenant_id = sf_move_forms.tenant_id + 100 FROM sf_move_src WHERE sf_move_src.tenant_id = sf_move_forms.tenant_id AND sf_move_forms.g = 2
query params(3): UPDATE sf_move_forms AS f SET tenant_id = f.tenant_id + 200, g = g + $1 FROM sf_move_src AS src, sf_move_src AS src2 WHERE src.tenant_id = f.tenant_id AND src2.tenant_id = src.tenant_id AND src2.seq = 1 AND f.g = 3
query: SELECT tenant_id, id, g, s FROM sf_move_forms ORDER BY tenant_id, id
-- The client's WITH list, read by the SET and the WHERE.
query rowsort once: WITH shift AS (SELECT 1000 AS by), chosen AS (SELECT 41::bigint AS t UNION ALL SELECT 43) UPDATE sf_move_forms SET tenant_id = tenant_id + (SELECT by FROM shift) WHERE tenant_id IN (SELECT t FROM chosen) RETURNING tenant_id, id, s
query rowsort params(5): WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < $1) UPDATE sf_move_forms SET tenant_id = tenant_id * 3 WHERE g - 3 IN (SELECT x FROM n) RETURNING id, g, tenant_id
query: SELECT tenant_id, id, g, s FROM sf_move_forms ORDER BY tenant_id, id
-- Multi-column SET: a list, ROW(...), a sub-select (correlated, once per row; no row: NULLs).
query rowsort once: UPDATE sf_move_forms SET (tenant_id, g) = (tenant_id + 7, g * 10) WHERE id % 2 = 0 RETURNING tenant_id, id, g
query rowsort once: UPDATE sf_move_forms SET (g, tenant_id, s) = ROW(g + 1, tenant_id - 5, upper(s)) WHERE id % 3 = 0 RETURNING *
query rowsort params(2): UPDATE sf_move_forms AS f SET (tenant_id, s) = (SELECT f.tenant_id + $1, 'sub' || f.id) WHERE id % 5 = 1 RETURNING tenant_id, id, s
query rowsort once: UPDATE sf_move_forms AS f SET (tenant_id, g) = (SELECT coalesce(max(src.to_tenant), f.tenant_id + 50), count(*) FROM sf_move_src src WHERE src.tenant_id = f.tenant_id) WHERE f.id % 7 = 2 RETURNING tenant_id, id, g
query rowsort once: UPDATE sf_move_forms SET tenant_id = tenant_id + 1, (g, s) = (SELECT 1, 'none' WHERE false) WHERE id % 4 = 3 RETURNING tenant_id, id, g, s
query: SELECT tenant_id, id, g, s FROM sf_move_forms ORDER BY tenant_id, id
-- Inside a transaction, then rolled back.
statement: BEGIN
query once: UPDATE sf_move_forms f SET (tenant_id, g) = (src.to_tenant, 0) FROM sf_move_src src WHERE src.tenant_id = f.tenant_id AND src.seq = 1
query once: SELECT count(*), sum(tenant_id) FROM sf_move_forms WHERE g = 0
statement: ROLLBACK
query: SELECT tenant_id, id, g, s FROM sf_move_forms ORDER BY tenant_id, id
-- Forms still refused, with what to write instead: RETURNING with FROM (it could read the FROM
-- tables), a FROM table not joined on the key, a write in the WITH list.
refused 0A000: UPDATE sf_move_forms f SET tenant_id = src.to_tenant FROM sf_move_src src WHERE src.tenant_id = f.tenant_id AND f.id < 0 RETURNING f.id
refused 0A000: UPDATE sf_move_forms f SET tenant_id = f.tenant_id + 1 FROM sf_move_src src WHERE src.seq = f.g AND f.id < 0
refused 0A000: WITH gone AS (DELETE FROM sf_move_src WHERE seq < 0 RETURNING tenant_id) UPDATE sf_move_forms SET tenant_id = tenant_id + 1 WHERE tenant_id IN (SELECT tenant_id FROM gone)
query: SELECT tenant_id, id, g, s FROM sf_move_forms ORDER BY tenant_id, id
query once: DELETE FROM sf_move_forms
query once: DELETE FROM sf_move_src
