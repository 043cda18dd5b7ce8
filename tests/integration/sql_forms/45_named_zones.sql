-- Named time zones whose abbreviations are alphabetic (EST/EDT, CET/CEST) under a DateStyle other
-- than ISO: merged reads of timestamptz (ORDER BY, min/max, GROUP BY, DISTINCT) over sf_dates
-- (40_datestyle.sql), around a daylight-saving change (2024-11-03 01:30 happens twice in New York).
-- The text names the offset only by its abbreviation, which the proxy cannot read without the
-- time zone database: refused (0A000, saying to SET DateStyle ISO or a numeric TimeZone), never a
-- wrong order. Under ISO the same reads merge (the offset is printed).
statement: SET TimeZone = 'America/New_York'
statement: SET DateStyle = 'SQL, MDY'
refused 0A000: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
refused 0A000: SELECT min(tz), max(tz) FROM sf_dates
refused 0A000: SELECT tz, count(*) FROM sf_dates GROUP BY tz ORDER BY tz DESC
refused 0A000: SELECT DISTINCT tz FROM sf_dates ORDER BY tz
statement: SET DateStyle = 'Postgres, DMY'
refused 0A000: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz DESC, tenant_id, id LIMIT 9
refused 0A000: SELECT min(tz), max(tz) FROM sf_dates
refused 0A000: SELECT tz, count(*) FROM sf_dates GROUP BY tz
statement: SET DateStyle = 'German'
refused 0A000: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
refused 0A000: SELECT min(tz), max(tz) FROM sf_dates
statement: SET TimeZone = 'Europe/Berlin'
statement: SET DateStyle = 'SQL, DMY'
refused 0A000: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
refused 0A000: SELECT min(tz), max(tz) FROM sf_dates
refused 0A000: SELECT DISTINCT tz FROM sf_dates
statement: SET DateStyle = 'ISO, MDY'
statement: SET TimeZone = 'America/New_York'
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(tz), max(tz) FROM sf_dates
query: SELECT tz, count(*) FROM sf_dates GROUP BY tz ORDER BY tz DESC
