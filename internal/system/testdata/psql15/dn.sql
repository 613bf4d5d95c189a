-- psql 15.18 -E, \dn, against PostgreSQL 15.18 with
--   CREATE TABLE balances(account text primary key, amount numeric(20,0) not null, at timestamptz, n int8 default 0);
--   CREATE INDEX bal_at ON balances(at);
-- (balances had oid 16384 there). The queries follow verbatim, one per statement; PostgreSQL's output:
--         List of schemas
--     Name  |       Owner       
--   --------+-------------------
--    public | pg_database_owner
--   (1 row)

SELECT n.nspname AS "Name",
  pg_catalog.pg_get_userbyid(n.nspowner) AS "Owner"
FROM pg_catalog.pg_namespace n
WHERE n.nspname !~ '^pg_' AND n.nspname <> 'information_schema'
ORDER BY 1;

