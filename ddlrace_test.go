package strata_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata"
)

// TestWritesRacingDDL runs inserts in three sessions while a fourth
// commits DDL on other tables: a write that meets a DDL which took its
// commit number but is not published yet is planned again once it is,
// so no insert fails (it used to fail with "schema changed since the
// statement was planned" after five immediate replans, all inside the
// DDL's fsync).
func TestWritesRacingDDL(t *testing.T) {
	db, err := strata.Open(t.TempDir(), strata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mustRun(t, db.NewSession(), `CREATE TABLE t (k INT64 NOT NULL, v INT64, PRIMARY KEY (k))`)
	ctx := context.Background()
	var stop atomic.Bool
	var wg sync.WaitGroup
	var inserts atomic.Int64
	errs := make(chan error, 4)
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			s := db.NewSession()
			for i := 0; !stop.Load(); i++ {
				if _, err := s.Run(ctx, `INSERT INTO t VALUES ($1, $2)`, int64(w*1_000_000+i), int64(i)); err != nil {
					errs <- fmt.Errorf("writer %d insert %d: %w", w, i, err)
					return
				}
				inserts.Add(1)
			}
		}(w)
	}
	s := db.NewSession()
	ddls := 0
	for deadline := time.Now().Add(1500 * time.Millisecond); time.Now().Before(deadline); ddls++ {
		mustRun(t, s, fmt.Sprintf(`CREATE TABLE other%d (k INT64 NOT NULL, PRIMARY KEY (k))`, ddls))
		time.Sleep(5 * time.Millisecond)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d inserts beside %d DDLs", inserts.Load(), ddls)
	if got := render(mustRun(t, s, `SELECT count(*) FROM t`), nil); got != fmt.Sprintf("SELECT 1 count:INT64 [%d];", inserts.Load()) {
		t.Fatalf("count %s, want %d", got, inserts.Load())
	}
}
