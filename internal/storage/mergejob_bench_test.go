package storage

import (
	"context"
	"github.com/strata-db/strata/internal/cputime"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
)

// BenchmarkMergeFull loads the balances table of BenchmarkBalances
// (-storage.keys keys, -storage.versions holding versions each, an
// activity version every fifth round; every third holding version late),
// flushed every four rounds, then times MergeNow(MergeFull): the merge of
// every part into one current and one history run, fsyncs included. It
// reports the bytes per version stored before and after, and the merge's
// throughput. Loading is not timed; run with -benchtime 1x to 3x.
func BenchmarkMergeFull(b *testing.B) {
	keys, rounds := *balKeys, *balVersions
	ctx := context.Background()
	var took, cpu time.Duration
	var before, after, index, versions float64
	for b.Loop() {
		b.StopTimer()
		e, err := Open(b.TempDir(), Options{NoBackgroundMerges: true, MemtableBytes: 1 << 40, AsOfIndex: !*balNoIndex})
		if err != nil {
			b.Fatal(err)
		}
		t := createBalances(b, e)
		versions = 0
		for r := 0; r < rounds; r++ {
			for _, g := range []string{"holding", "activity"} {
				if g == "activity" && r%5 != 0 {
					continue
				}
				for k := 0; k < keys; k += 10000 {
					w := balancesWrite(t, g, k, min(10000, keys-k), r)
					if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{w}}); err != nil {
						b.Fatal(err)
					}
					versions += float64(w.Batch.Rows)
				}
			}
			if r%4 == 3 {
				if err := e.Flush(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		if err := e.Flush(ctx); err != nil {
			b.Fatal(err)
		}
		stored := func() float64 {
			snap := e.Snapshot()
			defer snap.Release()
			var n uint64
			for _, p := range snap.Parts(t.ID) {
				n += p.Bytes
			}
			return float64(n)
		}
		before = stored()
		b.StartTimer()
		start, cpu0 := time.Now(), cputime.Process()
		if err := e.MergeNow(ctx, MergeFull); err != nil {
			b.Fatal(err)
		}
		took += time.Since(start)
		cpu += cputime.Process() - cpu0
		b.StopTimer()
		after = stored()
		index = float64(asofIndexBytes(e, t.ID))
		if err := e.Close(); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(took.Seconds()/float64(b.N), "merge-s")
	// On a shared machine wall time mostly measures the neighbours; the
	// process's CPU time over the merge is the steadier number.
	b.ReportMetric(cpu.Seconds()/float64(b.N), "merge-cpu-s")
	b.ReportMetric(versions*float64(b.N)/took.Seconds(), "versions/s")
	b.ReportMetric(before/versions, "unmerged-bytes/version")
	b.ReportMetric(after/versions, "merged-bytes/version")
	b.ReportMetric(index/versions, "index-bytes/version")
}

// BenchmarkSnapshot takes and releases a snapshot of an engine with 16
// tables of 8 parts each: one reference on the part generation, whatever
// the number of parts (lifetime.go).
func BenchmarkSnapshot(b *testing.B) {
	e, err := Open(b.TempDir(), Options{NoBackgroundMerges: true, MemtableBytes: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	ctx := context.Background()
	for i := 0; i < 16; i++ {
		name := string(rune('a' + i))
		if _, err := e.Commit(ctx, &Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, n uint64) error {
			_, _, err := c.CreateTable(kvSpec(name, catalog.ModeVersioned), n)
			return err
		}}); err != nil {
			b.Fatal(err)
		}
	}
	for p := 0; p < 8; p++ {
		var ws []Write
		for _, t := range e.Catalog().Tables() {
			ws = append(ws, benchWrite(t, p*10, 10, 1))
		}
		if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: ws}); err != nil {
			b.Fatal(err)
		}
		if err := e.Flush(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		e.Snapshot().Release()
	}
}
