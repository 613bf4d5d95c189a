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

// newPinnedClock is a pinnedClock at a fixed date.
func newPinnedClock() *pinnedClock {
	return &pinnedClock{now: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)}
}

// openPinned returns a function opening the database in dir with clock.
func openPinned(t *testing.T, dir string, clock *pinnedClock) func() *strata.DB {
	return func() *strata.DB {
		db, err := strata.Open(dir, strata.Options{Clock: clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
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
	clock := newPinnedClock()
	open := openPinned(t, t.TempDir(), clock)
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

// TestRetentionPolicyChanges binds, lengthens and shortens retention on
// tables that hold data (R9.2, R9.3): each setting expires what it
// expired while it was bound and judges the writes of its own commits, so
// every read is the same whether or not merges ran in between, and a
// longer interval bound later brings nothing back.
func TestRetentionPolicyChanges(t *testing.T) {
	type step struct {
		sql     string
		advance time.Duration
	}
	run := func(t *testing.T, steps []step, checkpoints bool, reads []string) string {
		clock := newPinnedClock()
		db := openPinned(t, t.TempDir(), clock)()
		defer db.Close()
		s := db.NewSession()
		for _, st := range steps {
			clock.advance(st.advance)
			if st.sql != "" {
				mustRun(t, s, st.sql)
			}
			if checkpoints {
				mustRun(t, s, `CHECKPOINT`)
			}
		}
		var b strings.Builder
		for _, q := range reads {
			b.WriteString(render(s.Run(context.Background(), q)))
			b.WriteString("\n")
		}
		return b.String()
	}
	cases := []struct {
		name  string
		steps []step
		reads []string
		want  []string // substrings of the answer
	}{{
		name: "append, a longer interval later",
		steps: []step{
			{sql: `CREATE POLICY short FOR RETENTION (rows = INTERVAL '1000 seconds')`},
			{sql: `CREATE POLICY long FOR RETENTION (rows = INTERVAL '100000 seconds')`},
			{sql: `CREATE TABLE a (x INT64) MODE APPEND POLICY short`},
			{sql: `INSERT INTO a VALUES (1), (2)`},             // 4
			{sql: `INSERT INTO a VALUES (3)`, advance: 3000e9}, // 5
			{sql: `ALTER TABLE a SET POLICY long`},
		},
		reads: []string{`SELECT x FROM a ORDER BY x`, `SELECT horizon_commit FROM system.table_storage_plans WHERE table_name = 'a' AND role = 'retention'`, `SELECT x FROM a AS OF COMMIT 3`},
		want:  []string{"[3];", "[4];", "older than the retention horizon of table a, commit 4"},
	}, {
		name: "versioned, bound after a repeat arrived",
		steps: []step{
			{sql: `CREATE POLICY keep FOR RETENTION (history = INTERVAL '1000 seconds')`},
			{sql: `CREATE TABLE h (k INT64 NOT NULL, v STRING, i INT64, PRIMARY KEY (k)) MODE VERSIONED VALID BY (i)`},
			{sql: `INSERT INTO h VALUES (1, 'a', 5)`},
			{sql: `INSERT INTO h VALUES (1, 'b', 5)`},
			{sql: `INSERT INTO h VALUES (1, 'a', 5)`, advance: 2000e9}, // a repeat: nothing expired when it came
			{sql: `ALTER TABLE h SET POLICY keep`, advance: 10e9},
		},
		reads: []string{`SELECT v FROM h`, `SELECT count(*) FROM versions(h)`},
		want:  []string{"[b];", "[1];"},
	}, {
		name: "versioned, a shorter interval later",
		steps: []step{
			{sql: `CREATE POLICY long FOR RETENTION (history = INTERVAL '100000 seconds')`},
			{sql: `CREATE POLICY short FOR RETENTION (history = INTERVAL '1000 seconds')`},
			{sql: `CREATE TABLE h (k INT64 NOT NULL, v STRING, i INT64, PRIMARY KEY (k)) MODE VERSIONED VALID BY (i) POLICY long`},
			{sql: `INSERT INTO h VALUES (1, 'a', 5)`},
			{sql: `INSERT INTO h VALUES (1, 'b', 5)`},
			{sql: `INSERT INTO h VALUES (1, 'a', 5)`, advance: 2000e9}, // a repeat under the long interval
			{sql: `ALTER TABLE h SET POLICY short`, advance: 10e9},
		},
		reads: []string{`SELECT v FROM h`, `SELECT count(*) FROM versions(h)`},
		want:  []string{"[b];", "[1];"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			plain := run(t, c.steps, false, c.reads)
			merged := run(t, c.steps, true, c.reads)
			if plain != merged {
				t.Fatalf("reads depend on merges:\nwithout CHECKPOINTs:\n%s\nwith them:\n%s", plain, merged)
			}
			for _, w := range c.want {
				if !strings.Contains(plain, w) {
					t.Errorf("answer lacks %q:\n%s", w, plain)
				}
			}
		})
	}
}

// TestRetentionClockSetBack restarts a database whose merges expired
// versions with the clock set back by more than the time since (R9.3,
// docs/retention.md): the manifest keeps the clock reading the merge
// judged at, so the horizon does not move back over versions already
// dropped, and a new commit is not timed before that reading.
func TestRetentionClockSetBack(t *testing.T) {
	clock := newPinnedClock()
	start := clock.Now()
	dir := t.TempDir()
	open := openPinned(t, dir, clock)
	db := open()
	s := db.NewSession()
	mustRun(t, s, `CREATE POLICY hour FOR RETENTION (history = INTERVAL '1 hour')`)                         // 1
	mustRun(t, s, `CREATE TABLE h (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) MODE VERSIONED POLICY hour`) // 2
	for i := int64(3); i <= 6; i++ {
		mustRun(t, s, `INSERT INTO h VALUES (1, $1)`, i) // commits 3..6, 30 minutes apart
		clock.advance(30 * time.Minute)
	}
	clock.advance(3 * time.Hour) // every superseded version expired
	mustRun(t, s, `CHECKPOINT`)  // and the merge for retention drops them
	ctx := context.Background()
	asOf4 := func() string { return render(s.Run(ctx, `SELECT v FROM h AS OF COMMIT 4 WHERE k = 1`)) }
	if got := asOf4(); !strings.Contains(got, "older than the retention horizon") {
		t.Fatalf("AS OF 4 after the merge: %s", got)
	}
	if got := render(mustRun(t, s, `SELECT count(*) FROM versions(h)`), nil); !strings.Contains(got, "[1]") {
		t.Fatalf("versions after the merge: %s", got)
	}
	judged := clock.Now()
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	// Back to 40 minutes after the first write: by that clock commit 4 (at
	// 30 minutes) would be inside the hour, but its version is gone.
	clock.advance(start.Add(40 * time.Minute).Sub(clock.Now()))
	db = open()
	defer db.Close()
	s = db.NewSession()
	if got := asOf4(); !strings.Contains(got, "older than the retention horizon") {
		t.Fatalf("AS OF 4 after a restart with the clock set back: %s", got)
	}
	mustRun(t, s, `INSERT INTO h VALUES (2, 7)`) // commit 7
	r := mustRun(t, s, `SELECT committed_at FROM system.commits WHERE commit = 7`)
	if at, ok := r.Rows[0][0].Time(); !ok || at.Before(judged.Truncate(time.Microsecond)) {
		t.Fatalf("commit 7 timed %v, before the merge's reading %v", r.Rows[0][0], judged)
	}
}

// TestRetentionMergeSkipsSettledHistory checks that a merge for retention
// rewrites a versioned shard only once the horizon reaches a version of
// its history (manifest.Part.ExpiresFrom), not every quarter period after
// it first expired something (R9.3, docs/retention.md).
func TestRetentionMergeSkipsSettledHistory(t *testing.T) {
	clock := newPinnedClock()
	db := openPinned(t, t.TempDir(), clock)()
	defer db.Close()
	s := db.NewSession()
	mustRun(t, s, `CREATE POLICY hour FOR RETENTION (history = INTERVAL '1 hour')`)                         // 1
	mustRun(t, s, `CREATE TABLE h (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) MODE VERSIONED POLICY hour`) // 2
	mustRun(t, s, `INSERT INTO h SELECT g, 1 FROM generate_series(1, 100) g`)                               // 3, at 0
	clock.advance(10 * time.Minute)
	mustRun(t, s, `INSERT INTO h SELECT g, 2 FROM generate_series(1, 50) g`) // 4, at 10 min: ends v 1 of keys 1..50
	clock.advance(2 * time.Hour)
	mustRun(t, s, `INSERT INTO h SELECT g, 3 FROM generate_series(51, 100) g`) // 5, at 2 h 10: ends v 1 of keys 51..100
	clock.advance(30 * time.Minute)                                            // 2 h 40: the horizon is commit 4
	mustRun(t, s, `CHECKPOINT`)
	parts := func() string {
		return render(mustRun(t, s, `SELECT part, level, rows FROM system.parts WHERE table_name = 'h' ORDER BY part`), nil)
	}
	versions := func() string { return render(mustRun(t, s, `SELECT count(*) FROM versions(h)`), nil) }
	if got := versions(); !strings.Contains(got, "[150]") {
		t.Fatalf("versions at 2 h 40: %s", got) // 200 written, keys 1..50's first expired
	}
	settled := parts()
	// Half an hour on, twice a quarter period: the horizon is still
	// commit 4, below every version the history holds (ended at 5).
	clock.advance(30 * time.Minute)
	mustRun(t, s, `CHECKPOINT`)
	if got := parts(); got != settled {
		t.Fatalf("a merge for retention rewrote a history the horizon had not reached:\nbefore %s\nafter  %s", settled, got)
	}
	// At 3 h 20 the horizon is commit 5: keys 51..100's first versions go.
	clock.advance(10 * time.Minute)
	mustRun(t, s, `CHECKPOINT`)
	if got := versions(); !strings.Contains(got, "[100]") {
		t.Fatalf("versions at 3 h 20: %s", got)
	}
	if got := parts(); got == settled {
		t.Fatalf("no merge dropped the expired versions: %s", got)
	}
}

// TestRetentionClockWholeMicroseconds restarts with the clock set back
// after an append table's merge expired rows at a clock reading with
// nanoseconds: the commits stamped from that reading are whole
// microseconds, so AS OF TIMESTAMP of their own committed_at finds them
// (R6.7).
func TestRetentionClockWholeMicroseconds(t *testing.T) {
	clock := newPinnedClock()
	start := clock.Now()
	clock.advance(123456789 * time.Nanosecond)
	open := openPinned(t, t.TempDir(), clock)
	db := open()
	s := db.NewSession()
	mustRun(t, s, `CREATE POLICY short FOR RETENTION (rows = INTERVAL '1000 seconds')`)
	mustRun(t, s, `CREATE TABLE a (x INT64) MODE APPEND POLICY short`)
	mustRun(t, s, `CREATE TABLE v (k INT64 NOT NULL, x INT64, PRIMARY KEY (k)) MODE VERSIONED`)
	mustRun(t, s, `INSERT INTO a VALUES (1)`)
	clock.advance(2 * time.Hour)
	mustRun(t, s, `INSERT INTO a VALUES (2)`)
	mustRun(t, s, `CHECKPOINT`)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	clock.advance(start.Add(30 * time.Minute).Sub(clock.Now()))
	db = open()
	defer db.Close()
	s = db.NewSession()
	mustRun(t, s, `INSERT INTO v VALUES (1, 1)`)
	got := render(mustRun(t, s, `SELECT x FROM v AS OF TIMESTAMP (SELECT max(committed_at) FROM system.commits) WHERE k = 1`), nil)
	if !strings.Contains(got, "[1]") {
		t.Fatalf("AS OF TIMESTAMP of the last commit's committed_at: %s", got)
	}
}
