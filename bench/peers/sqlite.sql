-- SQLite's form of the benchmark (modernc.org/sqlite; WAL journal,
-- synchronous=FULL): the same current + history tables and statements as
-- postgres.sql. AS OF picks each key's greatest version committed at or
-- before n with row_number() (SQLite has no DISTINCT ON). SQLite's widest
-- exact integer is 64 bits, which is why the generator keeps amounts below
-- 10^12 (sums over every key still fit).

-- name: schema
CREATE TABLE balances (
  chain_id INTEGER NOT NULL, address TEXT NOT NULL, token TEXT NOT NULL,
  amount INTEGER, updated_at TEXT,
  balance_index INTEGER, balance_version INTEGER,
  transfer_count INTEGER, last_transfer_at TEXT,
  activity_index INTEGER,
  PRIMARY KEY (chain_id, address, token)) WITHOUT ROWID;
CREATE TABLE history (
  chain_id INTEGER NOT NULL, address TEXT NOT NULL, token TEXT NOT NULL,
  amount INTEGER, updated_at TEXT,
  balance_index INTEGER NOT NULL, balance_version INTEGER NOT NULL,
  transfer_count INTEGER, last_transfer_at TEXT,
  activity_index INTEGER, commit_seq INTEGER NOT NULL,
  PRIMARY KEY (chain_id, address, token, balance_index, balance_version)) WITHOUT ROWID

-- name: ingest_current
INSERT INTO balances AS t (chain_id, address, token, amount, updated_at, balance_index,
  balance_version, transfer_count, last_transfer_at, activity_index)
VALUES {{rows}}
ON CONFLICT (chain_id, address, token) DO UPDATE SET
  amount = CASE WHEN (excluded.balance_index, excluded.balance_version) > (t.balance_index, t.balance_version) THEN excluded.amount ELSE t.amount END,
  updated_at = CASE WHEN (excluded.balance_index, excluded.balance_version) > (t.balance_index, t.balance_version) THEN excluded.updated_at ELSE t.updated_at END,
  balance_index = CASE WHEN (excluded.balance_index, excluded.balance_version) > (t.balance_index, t.balance_version) THEN excluded.balance_index ELSE t.balance_index END,
  balance_version = CASE WHEN (excluded.balance_index, excluded.balance_version) > (t.balance_index, t.balance_version) THEN excluded.balance_version ELSE t.balance_version END,
  transfer_count = CASE WHEN excluded.activity_index > t.activity_index THEN excluded.transfer_count ELSE t.transfer_count END,
  last_transfer_at = CASE WHEN excluded.activity_index > t.activity_index THEN excluded.last_transfer_at ELSE t.last_transfer_at END,
  activity_index = CASE WHEN excluded.activity_index > t.activity_index THEN excluded.activity_index ELSE t.activity_index END
WHERE (excluded.balance_index, excluded.balance_version) > (t.balance_index, t.balance_version)
   OR excluded.activity_index > t.activity_index

-- name: ingest_history
INSERT INTO history (chain_id, address, token, amount, updated_at, balance_index,
  balance_version, transfer_count, last_transfer_at, activity_index, commit_seq)
VALUES {{rows}}
ON CONFLICT DO NOTHING

-- name: current
SELECT token, count(*), CAST(sum(amount) AS TEXT) FROM balances GROUP BY token

-- name: asof
SELECT token, count(*), CAST(sum(amount) AS TEXT) FROM (
  SELECT token, amount, row_number() OVER (PARTITION BY chain_id, address, token
    ORDER BY balance_index DESC, balance_version DESC) AS rn
  FROM history WHERE commit_seq <= {{commit}}) w
WHERE rn = 1 GROUP BY token

-- name: point
SELECT CAST(amount AS TEXT) FROM balances WHERE chain_id = ?1 AND address = ?2 AND token = ?3

-- name: point_asof
SELECT CAST(amount AS TEXT) FROM history
WHERE chain_id = ?1 AND address = ?2 AND token = ?3 AND commit_seq <= {{commit}}
ORDER BY balance_index DESC, balance_version DESC LIMIT 1

-- name: versions
SELECT * FROM history WHERE chain_id = ?1 AND address = ?2 AND token = ?3
ORDER BY balance_index, balance_version

-- name: settle
PRAGMA wal_checkpoint(TRUNCATE)
