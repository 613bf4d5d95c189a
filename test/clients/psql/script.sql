-- psql against Strata (issue 5, item 5): run by clients_test.go as
--   psql -X -q -v ON_ERROR_STOP=1 -v amount_type=UINT256 -v at_type="DATETIME64(3, 'UTC')" -f script.sql
-- and compared with expected.out. The two type variables let the same
-- script run on PostgreSQL 15 (numeric, timestamptz(3)) to check it.
DROP TABLE IF EXISTS psql_t;
CREATE TABLE psql_t (id BIGINT NOT NULL, amount :amount_type NULL, at :at_type NULL, note TEXT NULL, PRIMARY KEY (id));
INSERT INTO psql_t (id, amount, at, note) VALUES
  (1, 115792089237316195423570985008687907853269984665640564039457584007913129639935, '2026-10-01 12:05:00.123+00', 'max'),
  (2, 0, '2026-10-01 00:00:00+00', NULL);
SELECT id, amount, at, note FROM psql_t ORDER BY id;
\pset format unaligned
SELECT amount FROM psql_t WHERE id = 1;
\pset format aligned
\dt
\d psql_t
