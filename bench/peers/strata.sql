-- Strata's statements for the benchmark (bench/README.md says how
-- these files are read). The schema is the seed's balances table of SPEC
-- §14, verbatim; every batch is one multi-row UPSERT (one commit), and the
-- engine itself keeps the current row per group and every version.
-- The key lookups cast $1 to the key column's type: an untyped integer
-- parameter binds as INT64, and chain_id widened to INT64 is no longer a
-- key prefix, so the planner would scan instead of looking the key up.
-- Over the wire (strata-pg) they read the amount as text, as every peer's
-- do (wire_point, wire_point_asof): a UINT256 is a numeric there, which pgx
-- asks for in binary and turns into a string at ~12 µs of the client's CPU
-- a lookup. Embedded, the session hands back the typed value.

-- name: schema
CREATE TABLE balances (
  chain_id UINT16 NOT NULL, address STRING NOT NULL, token STRING NOT NULL,
  amount UINT256 NULL, updated_at DATETIME64(3, 'UTC') NULL,
  balance_index UINT128 NULL, balance_version UINT64 NULL,
  transfer_count UINT64 NULL, last_transfer_at DATETIME64(3, 'UTC') NULL,
  activity_index UINT128 NULL,
  PRIMARY KEY (chain_id, address, token),
  ATTRIBUTE GROUP holding (amount, updated_at, balance_index, balance_version)
    VALID BY (balance_index) REVISION BY (balance_version),
  ATTRIBUTE GROUP activity (transfer_count, last_transfer_at, activity_index)
    VALID BY (activity_index))
MODE VERSIONED
SHARD BY (address) SHARDS AUTO
ORDER BY (chain_id, address, token)

-- name: ingest
UPSERT INTO balances (chain_id, address, token, amount, updated_at, balance_index,
  balance_version, transfer_count, last_transfer_at, activity_index)
VALUES {{rows}}

-- name: current
SELECT token, count(*), sum(amount) FROM balances GROUP BY token

-- name: asof
SELECT token, count(*), sum(amount) FROM balances GROUP BY token AS OF COMMIT {{commit}}

-- name: point
SELECT amount FROM balances WHERE chain_id = $1::UINT16 AND address = $2 AND token = $3

-- name: point_asof
SELECT amount FROM balances AS OF COMMIT {{commit}} WHERE chain_id = $1::UINT16 AND address = $2 AND token = $3

-- name: wire_point
SELECT amount::STRING FROM balances WHERE chain_id = $1::UINT16 AND address = $2 AND token = $3

-- name: wire_point_asof
SELECT amount::STRING FROM balances AS OF COMMIT {{commit}} WHERE chain_id = $1::UINT16 AND address = $2 AND token = $3

-- name: versions
SELECT * FROM versions(balances) WHERE chain_id = $1::UINT16 AND address = $2 AND token = $3
