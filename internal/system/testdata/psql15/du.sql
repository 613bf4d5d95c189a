-- psql 15.18 -E, \du, against PostgreSQL 15.18 with
--   CREATE TABLE balances(account text primary key, amount numeric(20,0) not null, at timestamptz, n int8 default 0);
--   CREATE INDEX bal_at ON balances(at);
-- (balances had oid 16384 there). The queries follow verbatim, one per statement; PostgreSQL's output:
--                                      List of roles
--    Role name |                         Attributes                         | Member of 
--   -----------+------------------------------------------------------------+-----------
--    postgres  | Superuser, Create role, Create DB, Replication, Bypass RLS | {}

SELECT r.rolname, r.rolsuper, r.rolinherit,
  r.rolcreaterole, r.rolcreatedb, r.rolcanlogin,
  r.rolconnlimit, r.rolvaliduntil,
  ARRAY(SELECT b.rolname
        FROM pg_catalog.pg_auth_members m
        JOIN pg_catalog.pg_roles b ON (m.roleid = b.oid)
        WHERE m.member = r.oid) as memberof
, r.rolreplication
, r.rolbypassrls
FROM pg_catalog.pg_roles r
WHERE r.rolname !~ '^pg_'
ORDER BY 1;

