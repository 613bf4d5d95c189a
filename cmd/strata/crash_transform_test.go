package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestTransformationCrash (R12.2): clients insert into an append table
// over pgx while two transformations keep a keyed total per key and an
// append copy of the even rows; the server is SIGKILLed at random moments
// and restarted on the same directory. After every restart and SYNC
// TRANSFORMATIONS the totals equal the same GROUP BY over the source, and
// every even source row is in the copy exactly once: no input row is lost
// or counted twice, whatever commit the kill interrupted (the output and
// its checkpoint are one commit; the aggregate's state is rebuilt from the
// source as of the checkpoint).
func TestTransformationCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and kills servers")
	}
	bin, data := buildBinary(t)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 3))
	const workers = 3
	const rounds = 8
	var seqMu sync.Mutex
	var nextSeq int64
	var acked int
	check := func(ctx context.Context, c *pgx.Conn, round int) {
		if round > 0 {
			verifyTransformed(t, ctx, c, round)
			return
		}
		execAll(t, ctx, c,
			"CREATE TABLE events (k INT64, v INT64, seq INT64) MODE APPEND",
			"CREATE TABLE totals (k INT64, n INT64 NULL, s INT64 NULL, lo INT64 NULL, hi INT64 NULL, av DECIMAL(30, 6) NULL, PRIMARY KEY (k)) MODE UPSERT",
			"CREATE TABLE evens (k INT64, v INT64, seq INT64) MODE APPEND",
			"CREATE TRANSFORMATION tot INTO totals AS SELECT k, count(*) AS n, sum(v) AS s, min(v) AS lo, max(v) AS hi, avg(v) AS av FROM events GROUP BY k",
			"CREATE TRANSFORMATION ev INTO evens AS SELECT k, v, seq FROM events WHERE v % 2 = 0",
		)
	}
	write := func(ctx context.Context, url string, round int, stop <-chan struct{}) {
		var wg sync.WaitGroup
		for w := 0; w < workers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				wc, err := pgx.Connect(ctx, url)
				if err != nil {
					return
				}
				defer wc.Close(context.Background())
				wrng := rand.New(rand.NewPCG(seed+uint64(round*workers+w), 5))
				for {
					select {
					case <-stop:
						return
					default:
					}
					var sb strings.Builder
					sb.WriteString("INSERT INTO events VALUES ")
					n := 1 + wrng.IntN(20)
					seqMu.Lock()
					for i := 0; i < n; i++ {
						nextSeq++
						if i > 0 {
							sb.WriteString(", ")
						}
						fmt.Fprintf(&sb, "(%d, %d, %d)", wrng.IntN(13), wrng.IntN(1000)-300, nextSeq)
					}
					seqMu.Unlock()
					if _, err := wc.Exec(ctx, sb.String()); err != nil {
						return // the server is gone
					}
					seqMu.Lock()
					acked++
					seqMu.Unlock()
				}
			}()
		}
		wg.Wait()
	}
	runCrashRounds(t, bin, data, rounds, func() time.Duration { return time.Duration(100+rng.IntN(400)) * time.Millisecond }, check, write)
	if acked < rounds {
		t.Fatalf("only %d acknowledged inserts over %d rounds: the test did not exercise the server", acked, rounds)
	}
	t.Logf("%d acknowledged inserts, %d kills", acked, rounds)
}

// verifyTransformed waits for the transformations and checks their targets
// against the same queries over the source.
func verifyTransformed(t *testing.T, ctx context.Context, c *pgx.Conn, round int) {
	t.Helper()
	if _, err := c.Exec(ctx, "SYNC TRANSFORMATIONS"); err != nil {
		t.Fatalf("round %d: SYNC TRANSFORMATIONS: %v", round, err)
	}
	rowsOf := func(q string) map[string]string {
		rows, err := c.Query(ctx, q)
		if err != nil {
			t.Fatalf("round %d: %s: %v", round, q, err)
		}
		defer rows.Close()
		got := map[string]string{}
		for rows.Next() {
			var k, rest string
			if err := rows.Scan(&k, &rest); err != nil {
				t.Fatal(err)
			}
			got[k] += rest + ";"
		}
		if err := rows.Err(); err != nil {
			t.Fatalf("round %d: %s: %v", round, q, err)
		}
		return got
	}
	want := rowsOf("SELECT k::text, concat(count(*), '/', sum(v), '/', min(v), '/', max(v), '/', avg(v)::DECIMAL(30, 6)) FROM events GROUP BY k")
	got := rowsOf("SELECT k::text, concat(n, '/', s, '/', lo, '/', hi, '/', av) FROM totals")
	if len(want) == 0 {
		t.Fatalf("round %d: no source rows", round)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("round %d: totals of key %s: %q, the source gives %q", round, k, got[k], w)
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("round %d: totals has key %s, which the source lacks", round, k)
		}
	}
	evens := rowsOf("SELECT seq::text, count(*)::text FROM evens GROUP BY seq")
	src := rowsOf("SELECT seq::text, count(*)::text FROM events WHERE v % 2 = 0 GROUP BY seq")
	for s, n := range src {
		if evens[s] != n {
			t.Errorf("round %d: even row %s is in the copy %q times, in the source %q", round, s, evens[s], n)
		}
	}
	if len(evens) != len(src) {
		t.Errorf("round %d: the copy has %d distinct rows, the source %d", round, len(evens), len(src))
	}
	if t.Failed() {
		t.FailNow()
	}
}
