-- Variances and standard deviations merged from the shards' sum, count, numeric sum of squares
-- and var_pop per group: exact for integers and numeric (numeric_stddev_internal's scale), as
-- float8_combine for float8 (sf_merged from 80_merged_expressions.sql).
query: SELECT stddev(n), variance(n), stddev_pop(n), var_pop(n), stddev_samp(n), var_samp(n) FROM sf_merged
query: SELECT stddev(id), variance(g), var_pop(tenant_id), stddev_pop(tenant_id), stddev(tenant_id) FROM sf_merged
query: SELECT g, stddev(n), var_samp(id), count(*) FROM sf_merged GROUP BY g ORDER BY g
query: SELECT stddev(n), g FROM sf_merged GROUP BY 2 ORDER BY 2 DESC
query: SELECT s, variance(n) FILTER (WHERE id > 2), stddev_pop(n) FILTER (WHERE g <> 1) AS sp FROM sf_merged GROUP BY s ORDER BY s NULLS FIRST
query params(2): SELECT g, stddev(n) FILTER (WHERE id > $1) FROM sf_merged GROUP BY g ORDER BY g
query: SELECT g, var_pop(n) FROM sf_merged GROUP BY g ORDER BY 2, 1
query: SELECT g, count(*) FROM sf_merged GROUP BY g HAVING stddev(n) > 2.6 ORDER BY g
query: SELECT g, stddev(n) FROM sf_merged GROUP BY g HAVING variance(id) > 1.9 AND var_pop(n) < 100 ORDER BY 2 DESC
query: SELECT id, g, stddev(n), var_pop(n), variance(id) FROM sf_merged WHERE tenant_id IN (1, 5, 9) GROUP BY id, g ORDER BY 1, 2
query: SELECT stddev(n), var_pop(f), variance(id), count(*) FROM sf_merged WHERE id > 100
query: SELECT variance(n * 1.005), stddev(n::numeric(10,3)), stddev_pop(n / 3) FROM sf_merged
-- Magnitudes beyond 128 bits (the merge's digit-by-digit division and square root).
query: SELECT variance(n * 100000000000000000000), stddev(n * 100000000000000000000), stddev_pop(n * 0.0000000001), var_samp(n / 7) FROM sf_merged
query params(2.6): SELECT g FROM sf_merged GROUP BY g HAVING stddev(n) > $1 ORDER BY g
query: SELECT stddev(n + CASE WHEN id = 3 AND tenant_id = 2 THEN 'NaN'::numeric ELSE 0 END), variance(n) FILTER (WHERE id = 1 AND tenant_id = 1) FROM sf_merged
query: SELECT var_samp(n) FILTER (WHERE tenant_id = 3 AND id = 1), var_pop(n) FILTER (WHERE tenant_id = 3 AND id = 1), stddev(id * 0) FROM sf_merged
-- float8: the shards' Sx and Sxx (var_pop times count) combined as float8_combine does, as a
-- parallel plan of one server combines its workers' states; the last digit can differ from a
-- serial scan's (whose result depends on the row order), so these read rows whose sums are exact.
query: SELECT variance(f), stddev_pop(f), var_pop(f), stddev(f) FROM sf_merged WHERE id = 1 AND tenant_id IN (1, 2)
query: SELECT id, var_samp(f), stddev_pop(f), stddev(f) FILTER (WHERE f > 0) FROM sf_merged WHERE tenant_id IN (4, 7) GROUP BY id ORDER BY id
query: SELECT g, var_pop(f) FROM sf_merged WHERE id = 5 AND tenant_id IN (3, 9) GROUP BY g ORDER BY g
query: SELECT variance(f + CASE WHEN id = 3 AND tenant_id = 2 THEN 'Infinity'::float8 ELSE 0 END) FROM sf_merged
error 22003: SELECT variance(g * 2000000000) FROM sf_merged
-- Refused: real (the shards' sum of real is rounded to real).
refused 0A000: SELECT stddev(f::real) FROM sf_merged
