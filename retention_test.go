package strata_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	strata "github.com/strata-db/strata"
)

// pinnedClock is a clock tests move by hand.
type pinnedClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *pinnedClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *pinnedClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestRetentionHorizonMoves follows one versioned table's retention horizon
// as the clock moves (R9.3, R6.3): the horizon is the last commit made
// before now minus the history setting, reads before it are refused by
// plain and prepared (templated) point SELECTs alike, and it survives a
// restart.
func TestRetentionHorizonMoves(t *testing.T) {
	clock := &pinnedClock{now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
	dir := t.TempDir()
	open := func() *strata.DB {
		db, err := strata.Open(dir, strata.Options{Clock: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open()
	s := db.NewSession()
	mustRun(t, s, `CREATE POLICY day FOR RETENTION (history = INTERVAL '1 day')`)                          // 1
	mustRun(t, s, `CREATE TABLE h (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) MODE VERSIONED POLICY day`) // 2
	for i := 0; i < 5; i++ {
		// commits 3..7, six hours apart: v = commit
		mustRun(t, s, `INSERT INTO h VALUES (1, $1)`, int64(3+i))
		clock.advance(6 * time.Hour)
	}
	// Now is 30 hours after the start, so the cutoff is at 6 h: commit 3
	// (0 h) is the last made before it; commit 4 was made at 6 h exactly.
	horizon := func() string {
		r := mustRun(t, s, `SELECT horizon_commit FROM system.table_storage_plans WHERE table_name = 'h' AND role = 'retention'`)
		return strings.TrimSpace(strings.Trim(strings.TrimSpace(render(r, nil)), ";"))
	}
	if got := horizon(); !strings.Contains(got, "[3]") {
		t.Fatalf("horizon after 30 h: %s", got)
	}
	const q = `SELECT v FROM h WHERE k = $1 AS OF COMMIT $2`
	ctx := context.Background()
	check := func(commit int64, want string) {
		t.Helper()
		for i := 0; i < 3; i++ { // the session's template serves the later runs
			got := render(s.Run(ctx, q, int64(1), commit))
			if !strings.Contains(got, want) {
				t.Fatalf("AS OF %d (run %d): %s, want %q", commit, i, got, want)
			}
		}
	}
	check(4, "[4]")
	check(3, "[3]")
	clock.advance(12 * time.Hour) // 42 h: the cutoff at 18 h; commit 5 (12 h) is the last before it
	check(6, "[6]")
	check(5, "[5]")
	check(4, "commit 4 is older than the retention horizon of table h, commit 5")
	if got := horizon(); !strings.Contains(got, "[5]") {
		t.Fatalf("horizon after 42 h: %s", got)
	}
	// v 3 and 4 stopped counting at commits 4 and 5, by the horizon; v 5
	// at commit 6 (18 h, the cutoff itself), after it.
	r := mustRun(t, s, `SELECT v, _state FROM versions(h) ORDER BY v`)
	if got := render(r, nil); !strings.HasSuffix(got, " [5 superseded];[6 superseded];[7 current];") {
		t.Fatalf("versions: %s", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open()
	defer db.Close()
	s = db.NewSession()
	check(5, "[5]")
	check(4, "older than the retention horizon")
}
