-- LIMIT and OFFSET as parameters on a merged read (as ORMs send them), over sf_keys as 20_keys.sql
-- leaves it.
query params(3, 2): SELECT tenant_id, id FROM sf_keys ORDER BY tenant_id, id LIMIT $1 OFFSET $2
query params(5): SELECT tenant_id, id FROM sf_keys ORDER BY tenant_id DESC, id LIMIT $1
query params(70): SELECT tenant_id, id FROM sf_keys ORDER BY tenant_id, id OFFSET $1
query params(NULL, 1): SELECT tenant_id, id FROM sf_keys ORDER BY tenant_id, id LIMIT $1 OFFSET $2
query params(2, 1): SELECT tenant_id, count(*) FROM sf_keys GROUP BY tenant_id ORDER BY tenant_id LIMIT $1 OFFSET $2
query params(2, 1): SELECT v, count(*) FROM sf_keys GROUP BY v ORDER BY v LIMIT $1 OFFSET $2
query params(1, 0): SELECT count(*) FROM sf_keys LIMIT $1 OFFSET $2
query params(4, 3): SELECT DISTINCT id FROM sf_keys ORDER BY id DESC LIMIT $2 OFFSET $1
query params(3, 1): SELECT tenant_id, id FROM sf_keys WHERE tenant_id IN (1, 2, 3, 4, 5) ORDER BY 1, 2 LIMIT $1 OFFSET $2
query params(2): SELECT tenant_id, id FROM sf_keys ORDER BY tenant_id, id FETCH FIRST $1 ROWS ONLY
error 2201W params(-1): SELECT tenant_id, id FROM sf_keys ORDER BY tenant_id, id LIMIT $1
error 2201X params(-1): SELECT tenant_id, id FROM sf_keys ORDER BY tenant_id, id OFFSET $1
