-- psql 15.18 -E, \l, against PostgreSQL 15.18 with
--   CREATE TABLE balances(account text primary key, amount numeric(20,0) not null, at timestamptz, n int8 default 0);
--   CREATE INDEX bal_at ON balances(at);
-- (balances had oid 16384 there). The queries follow verbatim, one per statement; PostgreSQL's output:
--                                                List of databases
--      Name    |  Owner   | Encoding | Collate |  Ctype  | ICU Locale | Locale Provider |   Access privileges   
--   -----------+----------+----------+---------+---------+------------+-----------------+-----------------------
--    postgres  | postgres | UTF8     | C.UTF-8 | C.UTF-8 |            | libc            | 
--    template0 | postgres | UTF8     | C.UTF-8 | C.UTF-8 |            | libc            | =c/postgres          +
--              |          |          |         |         |            |                 | postgres=CTc/postgres
--    template1 | postgres | UTF8     | C.UTF-8 | C.UTF-8 |            | libc            | =c/postgres          +
--              |          |          |         |         |            |                 | postgres=CTc/postgres
--   (3 rows)

SELECT d.datname as "Name",
       pg_catalog.pg_get_userbyid(d.datdba) as "Owner",
       pg_catalog.pg_encoding_to_char(d.encoding) as "Encoding",
       d.datcollate as "Collate",
       d.datctype as "Ctype",
       d.daticulocale as "ICU Locale",
       CASE d.datlocprovider WHEN 'c' THEN 'libc' WHEN 'i' THEN 'icu' END AS "Locale Provider",
       pg_catalog.array_to_string(d.datacl, E'\n') AS "Access privileges"
FROM pg_catalog.pg_database d
ORDER BY 1;

