-- A multi-row INSERT ... ON CONFLICT DO NOTHING RETURNING over several shards: the rows it
-- inserted, in VALUES order, the skipped ones left out (each shard runs one INSERT per row).
statement: CREATE TABLE sf_conflict (tenant_id bigint NOT NULL, id integer NOT NULL, v text, PRIMARY KEY (tenant_id, id))
statement: INSERT INTO sf_conflict (tenant_id, id, v) VALUES (1, 1, 'old'), (2, 2, 'old'), (3, 1, 'old'), (5, 3, 'old')
query once: INSERT INTO sf_conflict (tenant_id, id, v) VALUES (1, 1, 'a'), (2, 1, 'b'), (1, 2, 'c'), (3, 1, 'd'), (2, 2, 'e'), (3, 2, 'f'), (1, 3, 'g'), (4, 1, 'h'), (5, 3, 'i'), (5, 4, 'j') ON CONFLICT DO NOTHING RETURNING tenant_id, id, v
query once: INSERT INTO sf_conflict AS c (tenant_id, id, v) VALUES (6, 1, 'k'), (6, 1, 'l'), (7, 1, 'm'), (1, 1, 'n'), (8, 1, 'o') ON CONFLICT (tenant_id, id) DO NOTHING RETURNING c.id, c.v, tenant_id * 10 -- a comment
query once: INSERT INTO sf_conflict (tenant_id, id, v) VALUES (1, 1, 'x'), (2, 1, 'x') ON CONFLICT DO NOTHING RETURNING *
query params(9, 7, 10, 1, 11): INSERT INTO sf_conflict (tenant_id, id, v) VALUES ($1, 1, $2), ($3, 1, $2), ($1, 1, 'again'), ($4, $5, $2), ($3, 2, $2) ON CONFLICT DO NOTHING RETURNING v, id, tenant_id
query: SELECT * FROM sf_conflict ORDER BY tenant_id, id
