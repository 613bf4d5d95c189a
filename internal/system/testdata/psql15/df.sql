-- psql 15.18 -E, \df, against PostgreSQL 15.18 with
--   CREATE TABLE balances(account text primary key, amount numeric(20,0) not null, at timestamptz, n int8 default 0);
--   CREATE INDEX bal_at ON balances(at);
-- (balances had oid 16384 there). The queries follow verbatim, one per statement; PostgreSQL's output:
--                          List of functions
--    Schema | Name | Result data type | Argument data types | Type 
--   --------+------+------------------+---------------------+------
--   (0 rows)

SELECT n.nspname as "Schema",
  p.proname as "Name",
  pg_catalog.pg_get_function_result(p.oid) as "Result data type",
  pg_catalog.pg_get_function_arguments(p.oid) as "Argument data types",
 CASE p.prokind
  WHEN 'a' THEN 'agg'
  WHEN 'w' THEN 'window'
  WHEN 'p' THEN 'proc'
  ELSE 'func'
 END as "Type"
FROM pg_catalog.pg_proc p
     LEFT JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
WHERE pg_catalog.pg_function_is_visible(p.oid)
      AND n.nspname <> 'pg_catalog'
      AND n.nspname <> 'information_schema'
ORDER BY 1, 2, 4;

