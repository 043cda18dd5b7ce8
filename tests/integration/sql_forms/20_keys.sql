-- A shard key written as a number of another type, or as a typed literal in a key list: the key's
-- value by PostgreSQL's own rules (numeric and float comparisons, assignment casts).
statement: CREATE TABLE sf_keys (tenant_id bigint NOT NULL, id integer NOT NULL, v text, PRIMARY KEY (tenant_id, id))
statement: CREATE TABLE sf_small (k integer NOT NULL, v text, PRIMARY KEY (k))
statement: INSERT INTO sf_keys (tenant_id, id, v) VALUES (1, 1, 'v1-1'), (1, 2, 'v1-2'), (1, 3, 'v1-3'), (2, 1, 'v2-1'), (2, 2, 'v2-2'), (2, 3, 'v2-3'), (3, 1, 'v3-1'), (3, 2, 'v3-2'), (3, 3, 'v3-3'), (4, 1, 'v4-1'), (4, 2, 'v4-2'), (4, 3, 'v4-3'), (5, 1, 'v5-1'), (5, 2, 'v5-2'), (5, 3, 'v5-3'), (6, 1, 'v6-1'), (6, 2, 'v6-2'), (6, 3, 'v6-3'), (7, 1, 'v7-1'), (7, 2, 'v7-2'), (7, 3, 'v7-3'), (8, 1, 'v8-1'), (8, 2, 'v8-2'), (8, 3, 'v8-3'), (9, 1, 'v9-1'), (9, 2, 'v9-2'), (9, 3, 'v9-3'), (10, 1, 'v10-1'), (10, 2, 'v10-2'), (10, 3, 'v10-3'), (11, 1, 'v11-1'), (11, 2, 'v11-2'), (11, 3, 'v11-3'), (12, 1, 'v12-1'), (12, 2, 'v12-2'), (12, 3, 'v12-3'), (13, 1, 'v13-1'), (13, 2, 'v13-2'), (13, 3, 'v13-3'), (14, 1, 'v14-1'), (14, 2, 'v14-2'), (14, 3, 'v14-3'), (15, 1, 'v15-1'), (15, 2, 'v15-2'), (15, 3, 'v15-3'), (16, 1, 'v16-1'), (16, 2, 'v16-2'), (16, 3, 'v16-3'), (17, 1, 'v17-1'), (17, 2, 'v17-2'), (17, 3, 'v17-3'), (18, 1, 'v18-1'), (18, 2, 'v18-2'), (18, 3, 'v18-3'), (19, 1, 'v19-1'), (19, 2, 'v19-2'), (19, 3, 'v19-3'), (20, 1, 'v20-1'), (20, 2, 'v20-2'), (20, 3, 'v20-3'), (21, 1, 'v21-1'), (21, 2, 'v21-2'), (21, 3, 'v21-3'), (22, 1, 'v22-1'), (22, 2, 'v22-2'), (22, 3, 'v22-3'), (23, 1, 'v23-1'), (23, 2, 'v23-2'), (23, 3, 'v23-3'), (24, 1, 'v24-1'), (24, 2, 'v24-2'), (24, 3, 'v24-3')
statement: INSERT INTO sf_small (k, v) VALUES (1, 'k1'), (2, 'k2'), (3, 'k3'), (4, 'k4'), (5, 'k5'), (6, 'k6'), (7, 'k7'), (8, 'k8'), (9, 'k9'), (10, 'k10'), (11, 'k11'), (12, 'k12'), (13, 'k13'), (14, 'k14'), (15, 'k15'), (16, 'k16'), (17, 'k17'), (18, 'k18'), (19, 'k19'), (20, 'k20'), (21, 'k21'), (22, 'k22'), (23, 'k23'), (24, 'k24')
-- Compared: numeric and float literals, integers beyond the key's type, typed literals.
query: SELECT * FROM sf_keys WHERE tenant_id = 1.0 ORDER BY id
query: SELECT * FROM sf_keys WHERE tenant_id = 2e0 ORDER BY id
query: SELECT * FROM sf_keys WHERE tenant_id = 1.5 ORDER BY id
query: SELECT * FROM sf_keys WHERE tenant_id = -3.000 ORDER BY id
query: SELECT * FROM sf_keys WHERE tenant_id = 99999999999999999999 ORDER BY id
query: SELECT * FROM sf_keys WHERE tenant_id = 'NaN'::numeric ORDER BY id
query: SELECT * FROM sf_keys WHERE tenant_id = float8 '4' ORDER BY id
query: SELECT * FROM sf_keys WHERE tenant_id = 4.5::float4 ORDER BY id
query: SELECT * FROM sf_keys WHERE tenant_id = 5.5::int8 ORDER BY id
query: SELECT * FROM sf_keys WHERE tenant_id = 9007199254740993::float8 ORDER BY id
query: SELECT * FROM sf_small WHERE k = 3000000000
query: SELECT * FROM sf_small WHERE k = 7.0
query rowsort: SELECT * FROM sf_keys WHERE tenant_id IN (1, 2.0, 3.5, '4')
query rowsort: SELECT * FROM sf_keys WHERE tenant_id IN ('5.0', 2.5)
query rowsort: SELECT * FROM sf_keys WHERE tenant_id = ANY(ARRAY[6.0, 7, 8e0])
error 22P02: SELECT * FROM sf_keys WHERE tenant_id = '1.0'
error 22003: SELECT * FROM sf_small WHERE k = '3000000000'
query params(1.0): SELECT * FROM sf_keys WHERE tenant_id = $1::numeric ORDER BY id
query params(9.5): SELECT * FROM sf_keys WHERE tenant_id = $1::numeric ORDER BY id
-- Typed literals in a key list spanning shards: reads, and split UPDATE / DELETE.
query rowsort: SELECT * FROM sf_keys WHERE tenant_id IN (1, int8 '2', bigint '3', '4'::int8, CAST('5' AS bigint))
query: SELECT count(*), sum(id) FROM sf_keys WHERE tenant_id IN (int8 '10', int8 '11', int8 '12')
statement: UPDATE sf_keys SET v = 'u' WHERE tenant_id IN (int8 '13', bigint '14', 15) AND id = 1
statement: DELETE FROM sf_keys WHERE tenant_id IN (int8 '16', int8 '17', 18.0) AND id = 2
query: SELECT * FROM sf_keys ORDER BY tenant_id, id
-- Assigned: numeric rounds half away from zero, float8 half to even; out of range is an error.
statement: INSERT INTO sf_keys (tenant_id, id, v) VALUES (30.0, 1, 'a'), (31.5, 1, 'b'), (2.5::float8, 9, 'c'), (-1.5, 1, 'd')
statement: INSERT INTO sf_keys (tenant_id, id, v) VALUES (33e0, 1, 'e')
statement: UPDATE sf_keys SET tenant_id = 30.0 WHERE tenant_id = 30 AND id = 1
error 22003 once: INSERT INTO sf_keys (tenant_id, id, v) VALUES (99999999999999999999, 1, 'x')
error 0A000 once: INSERT INTO sf_keys (tenant_id, id, v) VALUES ('NaN'::numeric, 1, 'x')
error 22003 once: INSERT INTO sf_small (k, v) VALUES (3000000000, 'x')
error 22P02 once: INSERT INTO sf_keys (tenant_id, id, v) VALUES ('1.5', 1, 'x')
query: SELECT * FROM sf_keys WHERE tenant_id > 24 OR tenant_id < 1 OR id = 9 ORDER BY tenant_id, id
