package strata_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/strata-db/strata"
)

// The seed's example (SPEC §14): a late write to an attribute group is kept
// as history, and the current row keeps the greater VALID BY value.
func Example_seed() {
	dir, err := os.MkdirTemp("", "strata-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := strata.Open(dir, strata.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	s := db.NewSession()
	_, err = s.Exec(ctx, `
CREATE TABLE balances (
  chain_id UINT16 NOT NULL, address STRING NOT NULL, token STRING NOT NULL,
  amount UINT256 NULL, updated_at DATETIME64(3, 'UTC') NULL,
  balance_index UINT128 NULL, balance_version UINT64 NULL,
  PRIMARY KEY (chain_id, address, token),
  ATTRIBUTE GROUP holding (amount, updated_at, balance_index, balance_version)
    VALID BY (balance_index) REVISION BY (balance_version))
MODE VERSIONED SHARD BY (address) SHARDS AUTO ORDER BY (chain_id, address, token);

UPSERT INTO balances (chain_id, address, token, amount, updated_at, balance_index, balance_version)
VALUES (1, '0x9c2e4f1a', 'USDC', 2750000000, '2026-10-01 12:05:00.000', 1002, 1)
ATTRIBUTE GROUP holding;
UPSERT INTO balances (chain_id, address, token, amount, updated_at, balance_index, balance_version)
VALUES (1, '0x9c2e4f1a', 'USDC', 2500000000, '2026-10-01 12:00:00.000', 1001, 1)
ATTRIBUTE GROUP holding;`)
	if err != nil {
		log.Fatal(err)
	}
	res, err := s.Run(ctx, "SELECT address, token, amount, updated_at FROM balances WHERE chain_id = $1", 1)
	if err != nil {
		log.Fatal(err)
	}
	for _, row := range res.Rows {
		fmt.Println(row[0], row[1], row[2], row[3])
	}
	res, err = s.Run(ctx, "SELECT _commit, amount, _state FROM versions(balances) ORDER BY _commit")
	if err != nil {
		log.Fatal(err)
	}
	for _, row := range res.Rows {
		fmt.Println(row[0], row[1], row[2])
	}
	_, err = s.Run(ctx, "SELECT amount FROM balances AS OF COMMIT 42")
	fmt.Println(err)
	// Output:
	// 0x9c2e4f1a USDC 2750000000 2026-10-01 12:05:00.000
	// 2 2750000000 current
	// 3 2500000000 late
	// commit 42 is later than the newest commit 3 (line 1, column 42)
}

// Errors carry a SQLSTATE and the position of what is wrong.
func ExampleError() {
	dir, _ := os.MkdirTemp("", "strata-example")
	defer os.RemoveAll(dir)
	db, err := strata.Open(dir, strata.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	s := db.NewSession()
	ctx := context.Background()
	if _, err := s.Run(ctx, "CREATE TABLE small (k UINT8 NOT NULL, PRIMARY KEY (k))"); err != nil {
		log.Fatal(err)
	}
	_, err = s.Run(ctx, "INSERT INTO small VALUES (300)")
	e := err.(*strata.Error)
	fmt.Println(e.Code, e.Message)
	// Output:
	// 22003 column "k": value 300 is out of range for UINT8
}

// Exec runs a script; each statement's result carries its command tag and
// the commit it took.
func ExampleSession_Exec() {
	dir, _ := os.MkdirTemp("", "strata-example")
	defer os.RemoveAll(dir)
	db, err := strata.Open(dir, strata.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	results, err := db.NewSession().Exec(context.Background(), `
		CREATE TABLE kv (k STRING NOT NULL, v INT64, PRIMARY KEY (k));
		INSERT INTO kv VALUES ('a', 1), ('b', 2);
		UPSERT INTO kv VALUES ('a', 3);`)
	if err != nil {
		log.Fatal(err)
	}
	for _, r := range results {
		fmt.Println(r.Tag, r.Commit)
	}
	// Output:
	// CREATE TABLE 1
	// INSERT 0 2 2
	// UPSERT 1 3
}

// Query reads a result row by row while the query runs; the tag comes
// once the rows are done.
func ExampleSession_Query() {
	dir, _ := os.MkdirTemp("", "strata-example")
	defer os.RemoveAll(dir)
	db, err := strata.Open(dir, strata.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	s := db.NewSession()
	ctx := context.Background()
	rows, err := s.Query(ctx, "SELECT x, x * x AS square FROM generate_series(1, $1) AS g(x)", 3)
	if err != nil {
		log.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		row := rows.Row()
		fmt.Println(row[0], row[1])
	}
	if err := rows.Err(); err != nil {
		log.Fatal(err)
	}
	fmt.Println(rows.Result().Tag)
	// Output:
	// 1 1
	// 2 4
	// 3 9
	// SELECT 3
}
