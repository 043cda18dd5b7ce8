-- Savepoints in a transaction whose BEGIN the proxy still holds (no shard yet), and around a
-- multi-shard INSERT that fails on one shard.
statement: BEGIN
statement: SAVEPOINT a
error 3B001 once: RELEASE SAVEPOINT b
error 25P02 once: SELECT 1
statement: ROLLBACK TO SAVEPOINT a
statement: RELEASE a
error 3B001 once: ROLLBACK TO SAVEPOINT a
statement: ROLLBACK
statement: BEGIN
statement: SAVEPOINT "Mixed"
error 3B001 once: RELEASE mixed
statement: ROLLBACK TO "Mixed"
statement: SAVEPOINT s2
statement: RELEASE s2
error 3B001 once: ROLLBACK TO s2
statement: ROLLBACK
-- A multi-shard INSERT that fails on one shard: ROLLBACK TO SAVEPOINT recovers every leg.
statement: INSERT INTO sf_dates (tenant_id, id, d, ts, tz) VALUES (1, 1, NULL, NULL, NULL), (2, 1, NULL, NULL, NULL), (3, 1, NULL, NULL, NULL)
statement: BEGIN
statement: SAVEPOINT s
error 23505 once: INSERT INTO sf_dates (tenant_id, id, d, ts, tz) VALUES (1, 2, NULL, NULL, NULL), (2, 1, NULL, NULL, NULL), (3, 2, NULL, NULL, NULL)
statement: ROLLBACK TO SAVEPOINT s
query once: SELECT tenant_id, id FROM sf_dates ORDER BY 1, 2
statement: INSERT INTO sf_dates (tenant_id, id, d, ts, tz) VALUES (1, 3, NULL, NULL, NULL), (2, 3, NULL, NULL, NULL)
statement: COMMIT
query: SELECT tenant_id, id FROM sf_dates ORDER BY 1, 2
-- The same after the transaction wrote on one shard first.
statement: BEGIN
statement: INSERT INTO sf_dates (tenant_id, id, d, ts, tz) VALUES (4, 1, NULL, NULL, NULL)
statement: SAVEPOINT s
error 23505 once: INSERT INTO sf_dates (tenant_id, id, d, ts, tz) VALUES (1, 4, NULL, NULL, NULL), (2, 1, NULL, NULL, NULL), (3, 4, NULL, NULL, NULL)
statement: ROLLBACK TO SAVEPOINT s
statement: INSERT INTO sf_dates (tenant_id, id, d, ts, tz) VALUES (1, 5, NULL, NULL, NULL), (2, 5, NULL, NULL, NULL)
statement: COMMIT
query: SELECT tenant_id, id FROM sf_dates ORDER BY 1, 2
statement: DELETE FROM sf_dates WHERE tenant_id IN (1, 2, 3, 4)
