package session

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/strata-db/strata/internal/storage"
)

// TestStatementsReleaseTheirSnapshots checks that every statement lets go
// of the parts it read (its snapshot is a scoped one, with no cleanup to
// catch a missed Release): after queries that succeed, fail while they
// run, or only describe, and after writes, a full merge deletes every
// part file it replaced.
func TestStatementsReleaseTheirSnapshots(t *testing.T) {
	dir := t.TempDir()
	eng, err := storage.Open(dir, storage.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	h := &harness{t: t, eng: eng, s: New(eng, Options{})}
	ctx := context.Background()
	h.ok(`CREATE TABLE t (k INT64 NOT NULL, v INT64 NULL, PRIMARY KEY (k))`)
	for i := 0; i < 3; i++ {
		h.ok(`UPSERT INTO t VALUES (1, 10), (2, 20), (3, 0)`)
		if err := eng.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	before := partFiles(t, dir)
	if before < 2 {
		t.Fatalf("%d part files before the merge, want several", before)
	}
	h.ok(`SELECT v FROM t WHERE k = 1`)
	h.ok(`SELECT count(*) FROM t`)
	if _, err := h.run(`SELECT 1 / v FROM t`); err == nil {
		t.Fatal("SELECT 1 / v with a zero v succeeded")
	}
	if _, err := h.run(`SELECT nosuch FROM t`); err == nil {
		t.Fatal("SELECT of a missing column succeeded")
	}
	h.ok(`UPDATE t SET v = v + 1 WHERE k = 2`)
	h.ok(`SHOW TABLES`)
	if err := eng.MergeNow(ctx, storage.MergeFull); err != nil {
		t.Fatal(err)
	}
	if after := partFiles(t, dir); after >= before {
		t.Fatalf("%d part files after a full merge of %d: a statement still holds the old ones", after, before)
	}
}

func partFiles(t *testing.T, dir string) int {
	t.Helper()
	fs, err := filepath.Glob(filepath.Join(dir, "parts", "*.part"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "parts")); err != nil {
		t.Fatal(err)
	}
	return len(fs)
}
