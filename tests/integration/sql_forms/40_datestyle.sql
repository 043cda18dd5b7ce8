-- DateStyle other than ISO: merged reads of date, timestamp and timestamptz (ORDER BY, min/max,
-- GROUP BY, DISTINCT) give the client the session's style. A timestamptz outside ISO is read with a
-- numeric zone or UTC (Sao Paulo prints -03, Kathmandu +0545), or an alphabetic abbreviation (EST)
-- read from the zone's file (46_named_zones_merged.sql).
statement: CREATE TABLE sf_dates (tenant_id bigint NOT NULL, id integer NOT NULL, d date, ts timestamp, tz timestamptz, PRIMARY KEY (tenant_id, id))
statement: INSERT INTO sf_dates (tenant_id, id, d, ts, tz) VALUES (10, 1, '2021-12-04', '2024-12-24 10:10:13.010', '2024-11-12 11:50:00+14'), (10, 2, '2022-01-05', '2024-01-25 20:10:26.020', '2024-09-13 12:50:00+00'), (10, 3, '2023-02-06', '2024-02-26 06:10:39.030', '2024-11-03 01:30:00-05'), (11, 1, '2028-01-07', '2024-01-01 11:17:13.011', '2024-12-13 12:01:00+00'), (11, 2, '2029-02-08', '2024-02-02 22:17:26.022', '2024-11-14 13:01:00-08'), (11, 3, '1990-03-09', '2024-03-03 09:17:39.033', '2024-11-03 01:30:00-04'), (12, 1, '1995-02-10', '2024-02-06 12:24:13.012', '2024-01-14 13:12:00-08'), (12, 2, '1996-03-11', '2024-03-07 00:24:26.024', '2024-01-15 14:12:00+05:30'), (12, 3, '1997-04-12', '2024-04-08 12:24:39.036', '2024-11-03 01:30:00-05'), (13, 1, '2002-03-13', '2024-03-11 13:31:13.013', '2024-02-15 14:23:00+05:30'), (13, 2, '2003-04-14', '2024-04-12 02:31:26.026', '2024-03-16 15:23:00+09'), (13, 3, '2004-05-15', '2024-05-13 15:31:39.039', '2024-11-03 01:30:00-04'), (14, 1, '2009-04-16', '2024-04-16 14:38:13.014', '2024-03-16 15:34:00+09'), (14, 2, '2010-05-17', '2024-05-17 04:38:26.028', '2024-05-17 16:34:00-03:30'), (14, 3, '2011-06-18', '2024-06-18 18:38:39.042', '2024-11-03 01:30:00-05'), (15, 1, '2016-05-19', '2024-05-21 15:45:13.015', '2024-04-17 16:45:00-03:30'), (15, 2, '2017-06-20', '2024-06-22 06:45:26.030', '2024-07-18 17:45:00+14'), (15, 3, '2018-07-21', '2024-07-23 21:45:39.045', '2024-11-03 01:30:00-04'), (16, 1, '2023-06-22', '2024-06-26 16:52:13.016', '2024-05-18 17:56:00+14'), (16, 2, '2024-07-23', '2024-07-27 08:52:26.032', '2024-09-19 18:56:00+00'), (16, 3, '2025-08-24', '2024-08-28 00:52:39.048', '2024-11-03 01:30:00-05'), (17, 1, '1990-07-25', '2024-07-03 17:59:13.017', '2024-06-19 18:07:00+00'), (17, 2, '1991-08-26', '2024-08-04 10:59:26.034', '2024-11-20 19:07:00-08'), (17, 3, '1992-09-27', '2024-09-05 03:59:39.051', '2024-11-03 01:30:00-04'), (18, 1, '1997-08-28', '2024-08-08 18:06:13.018', '2024-07-20 19:18:00-08'), (18, 2, '1998-09-01', '2024-09-09 12:06:26.036', '2024-01-21 20:18:00+05:30'), (18, 3, '1999-10-02', '2024-10-10 06:06:39.054', '2024-11-03 01:30:00-05'), (19, 1, '2004-09-03', '2024-09-13 19:13:13.019', '2024-08-21 20:29:00+05:30'), (19, 2, '2005-10-04', '2024-10-14 14:13:26.038', '2024-03-22 21:29:00+09'), (19, 3, '2006-11-05', '2024-11-15 09:13:39.057', '2024-11-03 01:30:00-04'), (20, 1, '2011-10-06', '2024-10-18 20:20:13.020', '2024-09-22 21:40:00+09'), (20, 2, '2012-11-07', '2024-11-19 16:20:26.040', '2024-05-23 22:40:00-03:30'), (20, 3, '2013-12-08', '2024-12-20 12:20:39.060', '2024-11-03 01:30:00-05'), (21, 1, '0044-03-15 BC', '0044-03-15 12:00:00 BC', '2024-10-23 22:51:00-03:30'), (21, 2, '2019-12-10', '2024-12-24 18:27:26.042', '2024-07-24 23:51:00+14'), (21, 3, '2020-01-11', '2024-01-25 15:27:39.063', '2024-11-03 01:30:00-04')
statement: SET DateStyle = 'German'
query: SELECT tenant_id, id, d, ts, tz FROM sf_dates ORDER BY d, tenant_id, id
query: SELECT tenant_id, id, ts FROM sf_dates ORDER BY ts DESC, tenant_id, id LIMIT 7
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(d), max(d), min(ts), max(ts), min(tz), max(tz) FROM sf_dates
query: SELECT d, count(*) FROM sf_dates GROUP BY d ORDER BY d
query rowsort: SELECT tz, count(*) FROM sf_dates GROUP BY tz
query rowsort: SELECT DISTINCT ts FROM sf_dates
query: SELECT DISTINCT tz FROM sf_dates ORDER BY tz DESC
statement: SET DateStyle = 'SQL, DMY'
query: SELECT tenant_id, id, d, ts, tz FROM sf_dates ORDER BY d, tenant_id, id
query: SELECT tenant_id, id, ts FROM sf_dates ORDER BY ts DESC, tenant_id, id LIMIT 7
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(d), max(d), min(ts), max(ts), min(tz), max(tz) FROM sf_dates
query: SELECT d, count(*) FROM sf_dates GROUP BY d ORDER BY d
query rowsort: SELECT tz, count(*) FROM sf_dates GROUP BY tz
query rowsort: SELECT DISTINCT ts FROM sf_dates
query: SELECT DISTINCT tz FROM sf_dates ORDER BY tz DESC
statement: SET DateStyle = 'SQL, MDY'
query: SELECT tenant_id, id, d, ts, tz FROM sf_dates ORDER BY d, tenant_id, id
query: SELECT tenant_id, id, ts FROM sf_dates ORDER BY ts DESC, tenant_id, id LIMIT 7
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(d), max(d), min(ts), max(ts), min(tz), max(tz) FROM sf_dates
query: SELECT d, count(*) FROM sf_dates GROUP BY d ORDER BY d
query rowsort: SELECT tz, count(*) FROM sf_dates GROUP BY tz
query rowsort: SELECT DISTINCT ts FROM sf_dates
query: SELECT DISTINCT tz FROM sf_dates ORDER BY tz DESC
statement: SET DateStyle = 'Postgres, DMY'
query: SELECT tenant_id, id, d, ts, tz FROM sf_dates ORDER BY d, tenant_id, id
query: SELECT tenant_id, id, ts FROM sf_dates ORDER BY ts DESC, tenant_id, id LIMIT 7
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(d), max(d), min(ts), max(ts), min(tz), max(tz) FROM sf_dates
query: SELECT d, count(*) FROM sf_dates GROUP BY d ORDER BY d
query rowsort: SELECT tz, count(*) FROM sf_dates GROUP BY tz
query rowsort: SELECT DISTINCT ts FROM sf_dates
query: SELECT DISTINCT tz FROM sf_dates ORDER BY tz DESC
statement: SET DateStyle = 'Postgres, MDY'
query: SELECT tenant_id, id, d, ts, tz FROM sf_dates ORDER BY d, tenant_id, id
query: SELECT tenant_id, id, ts FROM sf_dates ORDER BY ts DESC, tenant_id, id LIMIT 7
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(d), max(d), min(ts), max(ts), min(tz), max(tz) FROM sf_dates
query: SELECT d, count(*) FROM sf_dates GROUP BY d ORDER BY d
query rowsort: SELECT tz, count(*) FROM sf_dates GROUP BY tz
query rowsort: SELECT DISTINCT ts FROM sf_dates
query: SELECT DISTINCT tz FROM sf_dates ORDER BY tz DESC
statement: SET TimeZone = 'America/Sao_Paulo'
query: SELECT tenant_id, id, d, ts, tz FROM sf_dates ORDER BY d, tenant_id, id
query: SELECT tenant_id, id, ts FROM sf_dates ORDER BY ts DESC, tenant_id, id LIMIT 7
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(d), max(d), min(ts), max(ts), min(tz), max(tz) FROM sf_dates
query: SELECT d, count(*) FROM sf_dates GROUP BY d ORDER BY d
query rowsort: SELECT tz, count(*) FROM sf_dates GROUP BY tz
query rowsort: SELECT DISTINCT ts FROM sf_dates
query: SELECT DISTINCT tz FROM sf_dates ORDER BY tz DESC
statement: SET DateStyle = 'Postgres'
query: SELECT tenant_id, id, d, ts, tz FROM sf_dates ORDER BY d, tenant_id, id
query: SELECT tenant_id, id, ts FROM sf_dates ORDER BY ts DESC, tenant_id, id LIMIT 7
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(d), max(d), min(ts), max(ts), min(tz), max(tz) FROM sf_dates
query: SELECT d, count(*) FROM sf_dates GROUP BY d ORDER BY d
query rowsort: SELECT tz, count(*) FROM sf_dates GROUP BY tz
query rowsort: SELECT DISTINCT ts FROM sf_dates
query: SELECT DISTINCT tz FROM sf_dates ORDER BY tz DESC
statement: SET TimeZone = 'Asia/Kathmandu'
query: SELECT tenant_id, id, d, ts, tz FROM sf_dates ORDER BY d, tenant_id, id
query: SELECT tenant_id, id, ts FROM sf_dates ORDER BY ts DESC, tenant_id, id LIMIT 7
query: SELECT tenant_id, id, tz FROM sf_dates ORDER BY tz, tenant_id, id
query: SELECT min(d), max(d), min(ts), max(ts), min(tz), max(tz) FROM sf_dates
query: SELECT d, count(*) FROM sf_dates GROUP BY d ORDER BY d
query rowsort: SELECT tz, count(*) FROM sf_dates GROUP BY tz
query rowsort: SELECT DISTINCT ts FROM sf_dates
query: SELECT DISTINCT tz FROM sf_dates ORDER BY tz DESC
