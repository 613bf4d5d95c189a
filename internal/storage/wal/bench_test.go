package wal

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/strata-db/strata/internal/vfs"
)

// BenchmarkGroupCommit measures Commit throughput on the real disk with 1, 8
// and 64 concurrent writers of 100-byte records; records/s and fsyncs/s are
// reported as metrics, records/fsync shows how much batching happened.
func BenchmarkGroupCommit(b *testing.B) {
	for _, writers := range []int{1, 8, 64} {
		for _, pre := range []bool{false, true} {
			for _, lead := range []bool{false, true} {
				benchGroupCommit(b, writers, pre, lead)
			}
		}
	}
}

// benchGroupCommit commits from writers goroutines; with lead each submits
// through SubmitCompressed, whose Wait writes the batch itself when no
// flush runs (the engine's path), else through Commit.
func benchGroupCommit(b *testing.B, writers int, pre, lead bool) {
	{
		b.Run(fmt.Sprintf("writers=%d/prealloc=%v/lead=%v", writers, pre, lead), func(b *testing.B) {
			w, err := Open(vfs.OS{}, filepath.Join(b.TempDir(), "wal"), Options{Logger: discard(), Preallocate: pre})
			if err != nil {
				b.Fatal(err)
			}
			payload := make([]byte, 100)
			var n atomic.Int64
			var wg sync.WaitGroup
			b.ResetTimer()
			for range writers {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						c := n.Add(1)
						if c > int64(b.N) {
							return
						}
						var err error
						if lead {
							// Commit order is not the log's order here,
							// which the Writer does not check.
							pc := Compress(payload)
							var p Pending
							if p, err = w.SubmitCompressed(uint64(c), &pc); err == nil {
								err = p.Wait(context.Background())
							}
							pc.Release()
						} else {
							err = w.Commit(context.Background(), uint64(c), payload)
						}
						if err != nil {
							b.Error(err)
							return
						}
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			st := w.Stats()
			secs := b.Elapsed().Seconds()
			b.ReportMetric(float64(st.Records)/secs, "records/s")
			b.ReportMetric(float64(st.Fsyncs)/secs, "fsyncs/s")
			b.ReportMetric(float64(st.Records)/float64(max(st.Fsyncs, 1)), "records/fsync")
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// BenchmarkAppendSync1MB measures Append of a 1 MiB payload followed by
// Sync: one write and one fsync of a megabyte per iteration.
func BenchmarkAppendSync1MB(b *testing.B) {
	w, err := Open(vfs.OS{}, filepath.Join(b.TempDir(), "wal"), Options{Logger: discard()})
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 1<<20)
	for i := range payload {
		payload[i] = byte(i * 31)
	}
	b.SetBytes(int64(len(payload)))
	b.ResetTimer()
	for i := range b.N {
		if err := w.Append(uint64(i+1), payload); err != nil {
			b.Fatal(err)
		}
		if err := w.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(w.Stats().Fsyncs)/b.Elapsed().Seconds(), "fsyncs/s")
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkReplay measures reading back 100-byte records.
func BenchmarkReplay(b *testing.B) {
	m := vfs.NewMem()
	m.MkdirAll("/wal")
	w, err := Open(m, "/wal", Options{Logger: discard()})
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 100)
	const records = 100000
	for c := range uint64(records) {
		w.Append(c+1, payload)
	}
	w.Close()
	b.SetBytes(records * (recordHeaderSize + 100))
	b.ResetTimer()
	for range b.N {
		n := 0
		if _, err := Replay(m, "/wal", 0, discard(), func(uint64, []byte) error { n++; return nil }); err != nil || n != records {
			b.Fatal(n, err)
		}
	}
}

// BenchmarkCommitMem measures the Writer's own cost per Commit, with an
// in-memory file system so no disk time hides it.
func BenchmarkCommitMem(b *testing.B) {
	m := vfs.NewMem()
	m.MkdirAll("/wal")
	w, err := Open(m, "/wal", Options{Logger: discard(), SegmentSize: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	payload := make([]byte, 100)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if err := w.Commit(ctx, uint64(i+1), payload); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	w.Close()
}
