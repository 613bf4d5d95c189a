package strata

// End-to-end benchmarks of issue 4's measures through the public API, on the
// seed's balances schema: the grouped aggregate current and AS OF a middle
// commit, a point SELECT by the full key, and one 10 000-row UPSERT.
// Scale with -balances.keys and -balances.versions. The file is in package
// strata (not strata_test) only to reach the engine's MergeNow: the data is
// flushed and fully merged before the reads are measured, as a long-running
// database's would be.

import (
	"context"
	"flag"
	"fmt"
	"github.com/strata-db/strata/internal/cputime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/storage"
)

var (
	benchKeys     = flag.Int("balances.keys", 100_000, "keys of the balances benchmarks")
	benchVersions = flag.Int("balances.versions", 4, "versions per key of the balances benchmarks")
)

const balancesDDL = `CREATE TABLE balances (
  chain_id UINT16 NOT NULL, address STRING NOT NULL, token STRING NOT NULL,
  amount UINT256 NULL, balance_index UINT128 NULL, balance_version UINT64 NULL,
  transfer_count UINT64 NULL, activity_index UINT128 NULL,
  PRIMARY KEY (chain_id, address, token),
  ATTRIBUTE GROUP holding (amount, balance_index, balance_version)
    VALID BY (balance_index) REVISION BY (balance_version),
  ATTRIBUTE GROUP activity (transfer_count, activity_index) VALID BY (activity_index))
MODE VERSIONED`

// upsertSQL builds one UPSERT of n holding versions starting at key from;
// every third row is late (an index below one written earlier).
func upsertSQL(from, n, round int) string {
	var b strings.Builder
	b.WriteString("UPSERT INTO balances (chain_id, address, token, amount, balance_index, balance_version) VALUES ")
	for i := 0; i < n; i++ {
		k := from + i
		idx := round*10 + 5
		if (k+round)%3 == 0 && round > 0 {
			idx = round*10 - 7 // late: below the previous round's index
		}
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "(%d, '0x%08x', 'T%02d', %d, %d, 1)", k%4, k/20, k%20, 1000+k+round, idx)
	}
	b.WriteString(" ATTRIBUTE GROUP holding")
	return b.String()
}

func loadBalances(b *testing.B) (*Session, uint64) {
	b.Helper()
	return loadBalancesWith(b, Options{})
}

// loadBalancesWith is loadBalances on a database opened with opts.
func loadBalancesWith(b *testing.B, opts Options) (*Session, uint64) {
	b.Helper()
	db, err := Open(b.TempDir(), opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { db.Close() })
	s := db.NewSession()
	ctx := context.Background()
	if _, err := s.Run(ctx, balancesDDL); err != nil {
		b.Fatal(err)
	}
	var middle uint64
	for round := 0; round < *benchVersions; round++ {
		for from := 0; from < *benchKeys; from += 10_000 {
			n := min(10_000, *benchKeys-from)
			if _, err := s.Run(ctx, upsertSQL(from, n, round)); err != nil {
				b.Fatal(err)
			}
		}
		if round == *benchVersions/2-1 || *benchVersions == 1 {
			middle = s.LastCommit()
		}
	}
	if err := db.eng.MergeNow(ctx, storage.MergeFull); err != nil {
		b.Fatal(err)
	}
	return s, middle
}

func benchQuery(b *testing.B, s *Session, sql string, rows int) {
	// The label (bench=<benchmark name>) follows the statement into the
	// goroutines it starts, so -cpuprofile's samples of one benchmark are
	// `go tool pprof -tagfocus bench=<name>`, shard scans included.
	ctx := labelled(b)
	b.ResetTimer()
	cpu := cputime.Process()
	for i := 0; i < b.N; i++ {
		if _, err := s.Run(ctx, sql); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// reportCPU reports the process CPU per operation since from as cpu-ns/op.
func reportCPU(b *testing.B, from time.Duration) {
	b.ReportMetric(float64(cputime.Process()-from)/float64(b.N), "cpu-ns/op")
}

// labelled labels the benchmark's goroutine bench=<its name> until it
// ends and returns a context with the label.
func labelled(b *testing.B) context.Context {
	ctx := pprof.WithLabels(context.Background(), pprof.Labels("bench", b.Name()))
	pprof.SetGoroutineLabels(ctx)
	b.Cleanup(func() { pprof.SetGoroutineLabels(context.Background()) })
	return ctx
}

func BenchmarkBalances(b *testing.B) {
	s, middle := loadBalances(b)
	agg := "SELECT token, count(*), sum(amount) FROM balances GROUP BY token"
	b.Run("aggregate/current", func(b *testing.B) { benchQuery(b, s, agg, *benchKeys) })
	b.Run("aggregate/asof-middle", func(b *testing.B) {
		benchQuery(b, s, agg+fmt.Sprintf(" AS OF COMMIT %d", middle), *benchKeys)
	})
	b.Run("point", func(b *testing.B) {
		benchQuery(b, s, "SELECT amount FROM balances WHERE chain_id = 1 AND address = '0x00000010' AND token = 'T01'", 1)
	})
	b.Run("versions", func(b *testing.B) {
		// Every version of one key (bench/ R5), as a client sends it.
		const q = "SELECT * FROM versions(balances) WHERE chain_id = $1::UINT16 AND address = $2 AND token = $3"
		ctx := labelled(b)
		cpu := cputime.Process()
		for b.Loop() {
			if r, err := s.Run(ctx, q, 1, "0x00000010", "T01"); err != nil || len(r.Rows) == 0 {
				b.Fatal(err, r)
			}
		}
		reportCPU(b, cpu)
	})
	b.Run("prefix", func(b *testing.B) {
		// chain 1's five tokens of one address: a key-prefix range.
		benchQuery(b, s, "SELECT token, amount FROM balances WHERE chain_id = 1 AND address = '0x00000010'", 5)
	})
}

func BenchmarkUpsert10k(b *testing.B) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	s := db.NewSession()
	ctx := context.Background()
	if _, err := s.Run(ctx, balancesDDL); err != nil {
		b.Fatal(err)
	}
	sqls := make([]string, 8)
	for i := range sqls {
		sqls[i] = upsertSQL(0, 10_000, i+1)
	}
	ctx = labelled(b)
	b.ResetTimer()
	cpu := cputime.Process()
	for i := 0; i < b.N; i++ {
		if _, err := s.Run(ctx, sqls[i%len(sqls)]); err != nil {
			b.Fatal(err)
		}
	}
	reportCPU(b, cpu)
	b.ReportMetric(10_000*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkPointMemtable is the point SELECT over rows still in the
// memtable, where storage's lookup costs a few µs: what remains is the
// query layer's per-statement cost (parse, bind, plan, run, result rows),
// with its allocations per statement.
func BenchmarkPointMemtable(b *testing.B) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { b.StopTimer(); db.Close() }()
	s := db.NewSession()
	ctx := context.Background()
	if _, err := s.Run(ctx, balancesDDL); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Run(ctx, upsertSQL(0, 10_000, 1)); err != nil {
		b.Fatal(err)
	}
	benchQuery(b, s, "SELECT amount FROM balances WHERE chain_id = 1 AND address = '0x00000010' AND token = 'T01'", 1)
}

// BenchmarkPointMemtableParams is BenchmarkPointMemtable with the key as
// parameters, the way clients send it (and the statement plan.Template
// serves).
func BenchmarkPointMemtableParams(b *testing.B) {
	benchPointParams(b, "SELECT amount FROM balances WHERE chain_id = $1::UINT16 AND address = $2 AND token = $3")
}

// BenchmarkPointMemtableParamsCast reads the amount as text, as a client
// over the wire does (bench/peers): a template too, its Project over a
// scan of the one column.
func BenchmarkPointMemtableParamsCast(b *testing.B) {
	benchPointParams(b, "SELECT amount::STRING FROM balances WHERE chain_id = $1::UINT16 AND address = $2 AND token = $3")
}

// BenchmarkPointMemtableQuery is BenchmarkPointMemtableParamsCast read
// through Query and Rows instead of Run.
func BenchmarkPointMemtableQuery(b *testing.B) {
	benchPointParamsWith(b, "SELECT amount::STRING FROM balances WHERE chain_id = $1::UINT16 AND address = $2 AND token = $3", true)
}

func benchPointParams(b *testing.B, q string) { benchPointParamsWith(b, q, false) }

// benchPointParamsWith runs point SELECT q with the key as parameters,
// through Query and Rows when rows is set, else Run.
func benchPointParamsWith(b *testing.B, q string, rows bool) {
	db, err := Open(b.TempDir(), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { b.StopTimer(); db.Close() }()
	s := db.NewSession()
	ctx := context.Background()
	if _, err := s.Run(ctx, balancesDDL); err != nil {
		b.Fatal(err)
	}
	if _, err := s.Run(ctx, upsertSQL(0, 10_000, 1)); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		k := i % 10_000
		if rows {
			rs, err := s.Query(ctx, q, k%4, fmt.Sprintf("0x%08x", k/20), fmt.Sprintf("T%02d", k%20))
			if err != nil {
				b.Fatal(err)
			}
			n := 0
			for rs.Next() {
				n += len(rs.Row())
			}
			if err := rs.Close(); err != nil || n != 1 {
				b.Fatal(err, n)
			}
			continue
		}
		r, err := s.Run(ctx, q, k%4, fmt.Sprintf("0x%08x", k/20), fmt.Sprintf("T%02d", k%20))
		if err != nil || len(r.Rows) != 1 {
			b.Fatal(err, r)
		}
	}
}
