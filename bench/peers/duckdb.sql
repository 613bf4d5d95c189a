-- DuckDB's form of the benchmark (github.com/duckdb/duckdb-go/v2): the same
-- current + history tables, INSERT … ON CONFLICT for the current rows, and
-- arg_max over the history for AS OF (the version with the greatest
-- (balance_index, balance_version) committed at or before n). HUGEINT
-- (128 bits; sum() over it stays exact, over UHUGEINT it is a DOUBLE)
-- is DuckDB's widest exact integer.

-- name: schema
CREATE TABLE balances (
  chain_id USMALLINT NOT NULL, address VARCHAR NOT NULL, token VARCHAR NOT NULL,
  amount HUGEINT, updated_at TIMESTAMP,
  balance_index UBIGINT, balance_version UBIGINT,
  transfer_count UBIGINT, last_transfer_at TIMESTAMP,
  activity_index UBIGINT,
  PRIMARY KEY (chain_id, address, token));
CREATE TABLE history (
  chain_id USMALLINT NOT NULL, address VARCHAR NOT NULL, token VARCHAR NOT NULL,
  amount HUGEINT, updated_at TIMESTAMP,
  balance_index UBIGINT NOT NULL, balance_version UBIGINT NOT NULL,
  transfer_count UBIGINT, last_transfer_at TIMESTAMP,
  activity_index UBIGINT, commit_seq UBIGINT NOT NULL,
  PRIMARY KEY (chain_id, address, token, balance_index, balance_version))

-- name: ingest_current
INSERT INTO balances (chain_id, address, token, amount, updated_at, balance_index,
  balance_version, transfer_count, last_transfer_at, activity_index)
VALUES {{rows}}
ON CONFLICT (chain_id, address, token) DO UPDATE SET
  amount = CASE WHEN (excluded.balance_index, excluded.balance_version) > (balances.balance_index, balances.balance_version) THEN excluded.amount ELSE balances.amount END,
  updated_at = CASE WHEN (excluded.balance_index, excluded.balance_version) > (balances.balance_index, balances.balance_version) THEN excluded.updated_at ELSE balances.updated_at END,
  balance_index = CASE WHEN (excluded.balance_index, excluded.balance_version) > (balances.balance_index, balances.balance_version) THEN excluded.balance_index ELSE balances.balance_index END,
  balance_version = CASE WHEN (excluded.balance_index, excluded.balance_version) > (balances.balance_index, balances.balance_version) THEN excluded.balance_version ELSE balances.balance_version END,
  transfer_count = CASE WHEN excluded.activity_index > balances.activity_index THEN excluded.transfer_count ELSE balances.transfer_count END,
  last_transfer_at = CASE WHEN excluded.activity_index > balances.activity_index THEN excluded.last_transfer_at ELSE balances.last_transfer_at END,
  activity_index = CASE WHEN excluded.activity_index > balances.activity_index THEN excluded.activity_index ELSE balances.activity_index END
WHERE (excluded.balance_index, excluded.balance_version) > (balances.balance_index, balances.balance_version)
   OR excluded.activity_index > balances.activity_index

-- name: ingest_history
INSERT INTO history (chain_id, address, token, amount, updated_at, balance_index,
  balance_version, transfer_count, last_transfer_at, activity_index, commit_seq)
VALUES {{rows}}
ON CONFLICT DO NOTHING

-- name: current
SELECT token, count(*), CAST(sum(amount) AS VARCHAR) FROM balances GROUP BY token

-- name: asof
SELECT token, count(*), CAST(sum(amount) AS VARCHAR) FROM (
  SELECT token, arg_max(amount, (balance_index, balance_version)) AS amount
  FROM history WHERE commit_seq <= {{commit}}
  GROUP BY chain_id, address, token) w
GROUP BY token

-- name: point
SELECT CAST(amount AS VARCHAR) FROM balances WHERE chain_id = $1 AND address = $2 AND token = $3

-- name: point_asof
SELECT CAST(arg_max(amount, (balance_index, balance_version)) AS VARCHAR) FROM history
WHERE chain_id = $1 AND address = $2 AND token = $3 AND commit_seq <= {{commit}}

-- name: versions
SELECT * FROM history WHERE chain_id = $1 AND address = $2 AND token = $3
ORDER BY balance_index, balance_version

-- name: settle
CHECKPOINT

-- The bulk load (-bulk duckdb, bench/bulk.go): the state W1 leaves, built
-- from a staging table of every delivered version with its batch as
-- commit_seq. The history keeps each (key, balance_index,
-- balance_version)'s first delivery, as ON CONFLICT DO NOTHING does; the
-- current table each key's version with the greatest (balance_index,
-- balance_version), as the upsert's WHERE does (activity_index follows
-- balance_index here, so that row wins the activity group too).

-- name: bulk_stage
CREATE TEMP TABLE staging (
  chain_id USMALLINT NOT NULL, address VARCHAR NOT NULL, token VARCHAR NOT NULL,
  amount HUGEINT, updated_at TIMESTAMP,
  balance_index UBIGINT NOT NULL, balance_version UBIGINT NOT NULL,
  transfer_count UBIGINT, last_transfer_at TIMESTAMP,
  activity_index UBIGINT, commit_seq UBIGINT NOT NULL)

-- name: bulk_insert
INSERT INTO staging (chain_id, address, token, amount, updated_at, balance_index,
  balance_version, transfer_count, last_transfer_at, activity_index, commit_seq)
VALUES {{rows}}

-- name: bulk_finish
INSERT INTO history
SELECT * FROM staging
QUALIFY row_number() OVER (PARTITION BY chain_id, address, token, balance_index, balance_version ORDER BY commit_seq) = 1;
INSERT INTO balances
SELECT chain_id, address, token, amount, updated_at, balance_index, balance_version,
  transfer_count, last_transfer_at, activity_index
FROM history
QUALIFY row_number() OVER (PARTITION BY chain_id, address, token ORDER BY balance_index DESC, balance_version DESC) = 1;
DROP TABLE staging;
CHECKPOINT
