package strata_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	strata "github.com/strata-db/strata"
)

// TestLookupRowsOutliveLookups: the rows point lookups return stay intact
// while other sessions look up other keys through the pooled arenas and
// buffers of storage (seekPool).
func TestLookupRowsOutliveLookups(t *testing.T) {
	db, s := openDB(t)
	ctx := context.Background()
	mustRun(t, s, `CREATE TABLE r (k INT64 NOT NULL, b BYTES NULL, s STRING NULL, PRIMARY KEY (k)) MODE VERSIONED`)
	const keys = 50
	val := func(k, round int) []byte { return bytes.Repeat([]byte{byte(k)}, 10+k%7+round) }
	for round := 0; round < 3; round++ {
		for k := 0; k < keys; k++ {
			mustRun(t, s, `UPSERT INTO r VALUES ($1, $2, $3)`, k, val(k, round), string(val(k, round)))
		}
		if err := db.MergeNow(ctx); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := db.NewSession()
			var kept []strata.Value
			for i := 0; i < 400; i++ {
				k := (i*7 + g) % keys
				r, err := s.Run(ctx, `SELECT b, s FROM r WHERE k = $1`, k)
				if err != nil {
					errs <- err
					return
				}
				kept = append(kept, r.Rows[0][0], r.Rows[0][1])
			}
			for i := 0; i < 400; i++ {
				k := (i*7 + g) % keys
				want := val(k, 2)
				b, _ := kept[2*i].Any().([]byte)
				if !bytes.Equal(b, want) || kept[2*i+1].String() != string(want) {
					errs <- fmt.Errorf("lookup %d of key %d: %x %q, want %x", i, k, b, kept[2*i+1].String(), want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestPlanCacheConcurrent: sessions running one cached point SELECT while
// another session writes and alters the table see every key's value only
// grow, and the writer's last value at the end.
func TestPlanCacheConcurrent(t *testing.T) {
	db, s := openDB(t)
	ctx := context.Background()
	mustRun(t, s, `CREATE TABLE c (k INT64 NOT NULL, v INT64 NULL, PRIMARY KEY (k)) MODE VERSIONED`)
	const keys, writes = 4, 300
	for k := 0; k < keys; k++ {
		mustRun(t, s, `UPSERT INTO c VALUES ($1, 0)`, k)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	stop := make(chan struct{})
	for g := 0; g < 3; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := db.NewSession()
			last := make([]int64, keys)
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := (i + g) % keys
				r, err := s.Run(ctx, `SELECT v FROM c WHERE k = $1`, k)
				if err != nil {
					errs <- err
					return
				}
				v, _ := r.Rows[0][0].Any().(int64)
				if v < last[k] {
					errs <- fmt.Errorf("key %d: %d after %d", k, v, last[k])
					return
				}
				last[k] = v
			}
		}()
	}
	for i := 1; i <= writes; i++ {
		mustRun(t, s, `UPSERT INTO c VALUES ($1, $2)`, i%keys, i)
		switch i % 100 {
		case 50:
			mustRun(t, s, fmt.Sprintf(`ALTER TABLE c ADD COLUMN z%d INT64 DEFAULT 1`, i))
		case 0:
			if err := db.MergeNow(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	r := db.NewSession()
	for k := 0; k < keys; k++ {
		got := mustRun(t, r, `SELECT v FROM c WHERE k = $1`, k).Rows[0][0].Any()
		if want := int64(writes - (writes-k)%keys); got != want {
			t.Fatalf("key %d: %v, want %d", k, got, want)
		}
	}
}

// TestExplainAnalyzeLookup: EXPLAIN ANALYZE of a point SELECT says how the
// lookup was answered and which part kinds it read pages of.
func TestExplainAnalyzeLookup(t *testing.T) {
	db, s := openDB(t)
	ctx := context.Background()
	mustRun(t, s, `CREATE TABLE r (k INT64 NOT NULL, v STRING NULL, PRIMARY KEY (k)) MODE VERSIONED`)
	for k := 0; k < 10; k++ {
		mustRun(t, s, `UPSERT INTO r VALUES ($1, 'a')`, k)
	}
	if err := db.MergeNow(ctx); err != nil {
		t.Fatal(err)
	}
	explain := func() string {
		t.Helper()
		r, err := s.Run(ctx, `EXPLAIN ANALYZE SELECT v FROM r WHERE k = 3`)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, row := range r.Rows {
			out = append(out, row[0].String())
		}
		return strings.Join(out, "\n")
	}
	if got := explain(); !strings.Contains(got, "lookup path=") || !strings.Contains(got, "(seeks=1 ") {
		t.Fatalf("after a merge:\n%s", got)
	}
	mustRun(t, s, `UPSERT INTO r VALUES (3, 'b')`)
	if got := explain(); !strings.Contains(got, "lookup path=parts") {
		t.Fatalf("with the key in the memtable too:\n%s", got)
	}
}
