package strata

import (
	"context"
	"testing"
)

// TestLZ4ColumnsReadBack: columns declared CODEC(LZ4), holding values
// that compress poorly (hashes, scrambled integers), read back from parts
// as they were written, before and after a restart. parquet-go up to
// v0.32.1 returned other bytes for such LZ4 pages
// (parquet-go/parquet-go#608); Strata decodes them itself
// (internal/storage/part, splitpages.go).
func TestLZ4ColumnsReadBack(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := db.NewSession()
	for _, q := range []string{
		"CREATE TABLE h (k INT64 NOT NULL, s STRING CODEC(LZ4), x INT64 CODEC(LZ4), d INT64 CODEC(DELTA, LZ4), a UINT256 CODEC(LZ4), PRIMARY KEY (k))",
		"INSERT INTO h SELECT g, md5(CAST(g AS STRING)), (g * 2654435761) % 4294967291 * 2147483629 % 9223372036854775783, g * g % 1000003, CAST((g * 2654435761) % 4294967291 AS UINT256) * CAST(4294967291 AS UINT256) FROM generate_series(1, 6000) g",
	} {
		if _, err := s.Run(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Every row into parts, which are what the reads below decode.
	if err := db.eng.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	parts := 0
	for _, sh := range db.eng.Stats().Shards {
		parts += sh.Parts
		if sh.MemtableBytes != 0 {
			t.Fatalf("shard %d still holds %d memtable bytes after the flush", sh.Shard, sh.MemtableBytes)
		}
	}
	if parts == 0 {
		t.Fatal("no parts after the flush")
	}
	const read = "SELECT count(*), count(DISTINCT s), sum(x % 1000), sum(d), sum(a % CAST(1000 AS UINT256)), min(s), max(s) FROM h"
	const want = "SELECT count(*), count(DISTINCT md5(CAST(g AS STRING))), sum((g * 2654435761) % 4294967291 * 2147483629 % 9223372036854775783 % 1000), sum(g * g % 1000003), " +
		"sum(CAST((g * 2654435761) % 4294967291 AS UINT256) * CAST(4294967291 AS UINT256) % CAST(1000 AS UINT256)), min(md5(CAST(g AS STRING))), max(md5(CAST(g AS STRING))) FROM generate_series(1, 6000) g"
	check := func(when string) {
		t.Helper()
		got, err := s.Run(ctx, read)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		exp, err := s.Run(ctx, want)
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if len(got.Rows) != 1 || len(exp.Rows) != 1 || len(got.Rows[0]) != len(exp.Rows[0]) {
			t.Fatalf("%s: %v, want %v", when, got.Rows, exp.Rows)
		}
		for i := range got.Rows[0] {
			if got.Rows[0][i].String() != exp.Rows[0][i].String() {
				t.Fatalf("%s: column %d is %s, want %s", when, i, got.Rows[0][i], exp.Rows[0][i])
			}
		}
		one, err := s.Run(ctx, "SELECT s, a FROM h WHERE k = 4321")
		if err != nil || len(one.Rows) != 1 {
			t.Fatalf("%s: lookup: %v, %v", when, one, err)
		}
		if w, err := s.Run(ctx, "SELECT md5('4321'), CAST((4321 * 2654435761) % 4294967291 AS UINT256) * CAST(4294967291 AS UINT256)"); err != nil ||
			one.Rows[0][0].String() != w.Rows[0][0].String() || one.Rows[0][1].String() != w.Rows[0][1].String() {
			t.Fatalf("%s: lookup of k = 4321: %v, want %v (%v)", when, one.Rows, w, err)
		}
	}
	check("before a restart")
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(dir, Options{}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s = db.NewSession()
	check("after a restart")
}
