-- Merged aggregates: FETCH FIRST beside a keyless aggregate or GROUP BY; float sums of -0 and
-- overflow raised as PostgreSQL raises it.
statement: CREATE TABLE sf_agg (tenant_id bigint NOT NULL, id integer NOT NULL, g integer, f float8, z float8, h float8, m float8, PRIMARY KEY (tenant_id, id))
statement: INSERT INTO sf_agg (tenant_id, id, g, f, z, h, m) VALUES (1, 1, 1, 2.5, '-0', -1e300, 1e308), (1, 2, 2, 3.5, '-0', 1e300, 1e308), (1, 3, 0, 4.5, '-0', -1e300, 1e308), (1, 4, 1, 5.5, '-0', 1e300, 1e308), (2, 1, 1, 4.0, '-0', -2e300, 1e308), (2, 2, 2, 5.0, '-0', 2e300, 1e308), (2, 3, 0, 6.0, '-0', -2e300, 1e308), (2, 4, 1, 7.0, '-0', 2e300, 1e308), (3, 1, 1, 5.5, '-0', -3e300, 1e308), (3, 2, 2, 6.5, '-0', 3e300, 1e308), (3, 3, 0, 7.5, '-0', -3e300, 1e308), (3, 4, 1, 8.5, '-0', 3e300, 1e308), (4, 1, 1, 7.0, '-0', -4e300, 1e308), (4, 2, 2, 8.0, '-0', 4e300, 1e308), (4, 3, 0, 9.0, '-0', -4e300, 1e308), (4, 4, 1, 10.0, '-0', 4e300, 1e308), (5, 1, 1, 8.5, '-0', -5e300, 1e308), (5, 2, 2, 9.5, '-0', 5e300, 1e308), (5, 3, 0, 10.5, '-0', -5e300, 1e308), (5, 4, 1, 11.5, '-0', 5e300, 1e308), (6, 1, 1, 10.0, '-0', -6e300, 1e308), (6, 2, 2, 11.0, '-0', 6e300, 1e308), (6, 3, 0, 12.0, '-0', -6e300, 1e308), (6, 4, 1, 13.0, '-0', 6e300, 1e308), (7, 1, 1, 11.5, '-0', -7e300, 1e308), (7, 2, 2, 12.5, '-0', 7e300, 1e308), (7, 3, 0, 13.5, '-0', -7e300, 1e308), (7, 4, 1, 14.5, '-0', 7e300, 1e308), (8, 1, 1, 13.0, '-0', -8e300, 1e308), (8, 2, 2, 14.0, '-0', 8e300, 1e308), (8, 3, 0, 15.0, '-0', -8e300, 1e308), (8, 4, 1, 16.0, '-0', 8e300, 1e308), (9, 1, 1, 14.5, '-0', -9e300, 1e308), (9, 2, 2, 15.5, '-0', 9e300, 1e308), (9, 3, 0, 16.5, '-0', -9e300, 1e308), (9, 4, 1, 17.5, '-0', 9e300, 1e308), (10, 1, 1, 16.0, '-0', -10e300, 1e308), (10, 2, 2, 17.0, '-0', 10e300, 1e308), (10, 3, 0, 18.0, '-0', -10e300, 1e308), (10, 4, 1, 19.0, '-0', 10e300, 1e308), (11, 1, 1, 17.5, '-0', -11e300, 1e308), (11, 2, 2, 18.5, '-0', 11e300, 1e308), (11, 3, 0, 19.5, '-0', -11e300, 1e308), (11, 4, 1, 20.5, '-0', 11e300, 1e308), (12, 1, 1, 19.0, '-0', -12e300, 1e308), (12, 2, 2, 20.0, '-0', 12e300, 1e308), (12, 3, 0, 21.0, '-0', -12e300, 1e308), (12, 4, 1, 22.0, '-0', 12e300, 1e308)
query: SELECT count(*) FROM sf_agg FETCH FIRST 1 ROWS ONLY
query: SELECT g, count(*), sum(f) FROM sf_agg GROUP BY g ORDER BY g FETCH FIRST 2 ROWS ONLY
query: SELECT g, count(*) FROM sf_agg GROUP BY g ORDER BY g OFFSET 1 ROWS FETCH NEXT 1 ROW ONLY
query: SELECT tenant_id, id FROM sf_agg ORDER BY tenant_id, id OFFSET 5 ROWS FETCH FIRST 3 ROWS ONLY
query: SELECT sum(z), avg(z), min(z), max(z) FROM sf_agg
query: SELECT g, sum(z) FROM sf_agg GROUP BY g ORDER BY g
query: SELECT sum(z::float4) FROM sf_agg
query: SELECT avg(f), sum(f) FROM sf_agg
error 22003: SELECT avg(h) FROM sf_agg
error 22003: SELECT g, avg(h) FROM sf_agg GROUP BY g
query: SELECT sum(h), count(h) FROM sf_agg
query: SELECT avg(m) FROM sf_agg WHERE tenant_id = 1 AND id = 1
error 22003: SELECT sum(m) FROM sf_agg
