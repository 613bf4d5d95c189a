package strata

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/cputime"
)

// BenchmarkTiered runs BenchmarkBalances' reads on the same fully merged
// table twice in one process: with its parts local, then moved to a
// file: object store (docs/tiering.md), which reads them by ranges.
func BenchmarkTiered(b *testing.B) {
	clock := newBenchClock()
	s, middle := loadBalancesWith(b, Options{Clock: clock.now})
	ctx := context.Background()
	agg := "SELECT token, count(*), sum(amount) FROM balances GROUP BY token"
	point := "SELECT amount FROM balances WHERE chain_id = 1 AND address = '0x00000010' AND token = 'T01'"
	reads := func(b *testing.B, where string) {
		b.Run(where+"/aggregate", func(b *testing.B) { benchQuery(b, s, agg, *benchKeys) })
		b.Run(where+"/aggregate-asof", func(b *testing.B) { benchQuery(b, s, agg+fmt.Sprintf(" AS OF COMMIT %d", middle), *benchKeys) })
		b.Run(where+"/point", func(b *testing.B) { benchQuery(b, s, point, 1) })
	}
	reads(b, "local")
	took, cpu := bindAndCheckpoint(b, s, clock, `CREATE POLICY cold FOR STORAGE (object_store = 'file:cold', move_after = INTERVAL '1 second')`, "cold")
	r, err := s.Run(ctx, "SELECT count(*), sum(bytes) FROM system.parts WHERE table_name = 'balances' AND location <> 'local'")
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("moved %v parts (count, bytes) in %v, %v CPU", r.Rows, took, cpu)
	reads(b, "object")
}

// BenchmarkRetentionExpiry binds a history policy to the fully merged
// balances table once its superseded versions are older than it, and
// times the CHECKPOINT whose merge drops them (docs/retention.md). Run
// with -benchtime 1x.
func BenchmarkRetentionExpiry(b *testing.B) {
	for b.Loop() {
		b.StopTimer()
		clock := newBenchClock()
		s, _ := loadBalancesWith(b, Options{Clock: clock.now})
		ctx := context.Background()
		rows := func() string {
			r, err := s.Run(ctx, "SELECT sum(rows), sum(bytes) FROM system.parts WHERE table_name = 'balances'")
			if err != nil {
				b.Fatal(err)
			}
			return fmt.Sprint(r.Rows)
		}
		before := rows()
		took, cpu := bindAndCheckpoint(b, s, clock, `CREATE POLICY keep FOR RETENTION (history = INTERVAL '1 second')`, "keep")
		b.Logf("expired in %v (%v CPU); stored rows, bytes: %s before, %s after", took, cpu, before, rows())
		b.StartTimer()
	}
}

// benchClock is a clock that runs with real time plus a skip the
// benchmark adds.
type benchClock struct {
	mu   sync.Mutex
	skip time.Duration
}

func newBenchClock() *benchClock { return &benchClock{} }

func (c *benchClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.Now().Add(c.skip)
}

func (c *benchClock) advance(d time.Duration) {
	c.mu.Lock()
	c.skip += d
	c.mu.Unlock()
}

// bindAndCheckpoint creates a policy, binds it (name) to the balances
// table, moves the clock 2 s on and times the CHECKPOINT that then does
// what the policy asks. The background merger may start that work once
// the clock moves; CHECKPOINT then waits for it: the time is the work's
// either way.
func bindAndCheckpoint(b *testing.B, s *Session, clock *benchClock, create, name string) (time.Duration, time.Duration) {
	ctx := context.Background()
	for _, q := range []string{create, "ALTER TABLE balances SET POLICY " + name} {
		if _, err := s.Run(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
	clock.advance(2 * time.Second)
	start, cpu := time.Now(), cputime.Process()
	if _, err := s.Run(ctx, "CHECKPOINT"); err != nil {
		b.Fatal(err)
	}
	return time.Since(start), cputime.Process() - cpu
}
