package strata

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestWarmWrites: with Options.WarmWrites, the part a flush writes has
// its lookup pages put in the page cache as it is opened; without it,
// none are (until a fold, which warms either way and is told apart by
// the merge count). A lookup through the warmed pages answers as one
// that decodes them.
func TestWarmWrites(t *testing.T) {
	ctx := context.Background()
	for _, warm := range []bool{false, true} {
		t.Run(fmt.Sprint("warm=", warm), func(t *testing.T) {
			db, err := Open(t.TempDir(), Options{MemtableBytes: 1, WarmWrites: warm})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			s := db.NewSession()
			if _, err := s.Run(ctx, "CREATE TABLE kv (k INT64 NOT NULL, v STRING, PRIMARY KEY (k))"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Run(ctx, "INSERT INTO kv VALUES (1, 'one'), (2, 'two'), (3, 'three')"); err != nil {
				t.Fatal(err)
			}
			// The flush runs in the background; wait for its part.
			deadline := time.Now().Add(10 * time.Second)
			for {
				parts := 0
				for _, sh := range db.eng.Stats().Shards {
					parts += sh.Parts
				}
				if parts > 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatal("no part flushed")
				}
				time.Sleep(5 * time.Millisecond)
			}
			st := db.eng.Stats()
			if st.Merges == 0 && (st.PageCache.Warmed > 0) != warm {
				t.Fatalf("WarmWrites %v: %d pages warmed after a flush", warm, st.PageCache.Warmed)
			}
			res, err := s.Run(ctx, "SELECT v FROM kv WHERE k = 2")
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Rows) != 1 || res.Rows[0][0].String() != "two" {
				t.Fatalf("lookup of k = 2: %v", res.Rows)
			}
		})
	}
}
