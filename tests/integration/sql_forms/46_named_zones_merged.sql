-- Named time zones whose abbreviations are alphabetic (EST/EDT, CET/CEST, IST/GMT, LMT) under each
-- DateStyle other than ISO: merged reads of timestamptz (ORDER BY, min/max, GROUP BY, DISTINCT)
-- over sf_dates (40_datestyle.sql). The proxy reads each abbreviation's offset at that local time
-- from the zone's file in the system tz database, as PostgreSQL does: both 01:30 of New York's
-- 2024-11-03 (EDT, then EST) and of Berlin's 2024-10-27 (CEST, then CET) order as instants.
statement: INSERT INTO sf_dates (tenant_id, id, tz) VALUES (22, 1, '2024-10-27 00:30:00+00'), (22, 2, '2024-10-27 01:30:00+00'), (22, 3, '0044-03-15 12:00:00+00 BC'), (23, 1, '2024-10-27 01:00:00+00'), (23, 2, '1879-12-31 23:00:00+00'), (23, 3, '2050-07-01 00:00:00+00')
statement: SET TimeZone = 'America/New_York'
statement: SET DateStyle = 'SQL, MDY'
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(tz), max(tz) FROM sf_dates
query: SELECT tz, count(*) FROM sf_dates GROUP BY tz ORDER BY tz DESC
query: SELECT DISTINCT tz FROM sf_dates ORDER BY tz
statement: SET DateStyle = 'SQL, DMY'
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz DESC, tenant_id, id LIMIT 9
query: SELECT min(tz), max(tz) FROM sf_dates WHERE tenant_id < 22
statement: SET DateStyle = 'Postgres, MDY'
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(tz), max(tz) FROM sf_dates
query rowsort: SELECT tz, count(*) FROM sf_dates GROUP BY tz
statement: SET DateStyle = 'Postgres, DMY'
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz DESC, tenant_id, id LIMIT 9
query: SELECT tz, count(*) FROM sf_dates GROUP BY tz ORDER BY tz
statement: SET DateStyle = 'German'
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(tz), max(tz) FROM sf_dates
query: SELECT DISTINCT tz FROM sf_dates ORDER BY tz DESC
statement: SET TimeZone = 'Europe/Berlin'
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(tz), max(tz) FROM sf_dates WHERE tenant_id > 11
query: SELECT tz, count(*) FROM sf_dates GROUP BY tz ORDER BY tz DESC
statement: SET DateStyle = 'SQL, DMY'
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT DISTINCT tz FROM sf_dates ORDER BY tz
statement: SET DateStyle = 'Postgres, DMY'
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz DESC, tenant_id, id
query: SELECT min(tz), max(tz) FROM sf_dates
-- Dublin's summer IST is its standard time and winter GMT its negative daylight saving; Tokyo
-- has one abbreviation today.
statement: SET TimeZone = 'Europe/Dublin'
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT tz, count(*) FROM sf_dates GROUP BY tz ORDER BY tz
statement: SET TimeZone = 'Asia/Tokyo'
statement: SET DateStyle = 'SQL, MDY'
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(tz), max(tz) FROM sf_dates
-- Lord Howe's half-hour daylight saving prints numeric abbreviations (+1030, +11).
statement: SET TimeZone = 'Australia/Lord_Howe'
statement: SET DateStyle = 'German'
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT tz, count(*) FROM sf_dates GROUP BY tz ORDER BY tz DESC
statement: DELETE FROM sf_dates WHERE tenant_id IN (22, 23)
