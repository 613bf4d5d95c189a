package metrics

import (
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/storage/wal"
)

type fakeSource struct{ s storage.Stats }

func (f *fakeSource) Stats() storage.Stats { return f.s }

func gather(t *testing.T, m *Metrics) map[string]*dto.MetricFamily {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

func TestEngineMetrics(t *testing.T) {
	src := &fakeSource{}
	src.s.Commit, src.s.RowsWritten, src.s.Merges = 7, 1500, 2
	src.s.WAL.Bytes = 4096
	src.s.WAL.SyncLatency[0] = 3                 // < 64µs
	src.s.WAL.SyncLatency[2] = 1                 // [128µs, 256µs)
	src.s.WAL.SyncLatency[wal.SyncBuckets-1] = 1 // slower than every bound
	src.s.WAL.SyncTime = 5 * time.Second
	src.s.PageCache.Bytes, src.s.PageCache.Hits, src.s.PageCache.Misses, src.s.PageCache.Warmed = 1<<20, 90, 10, 33
	src.s.Conflicts, src.s.Exclusives = 12, 1
	src.s.Shards = []storage.ShardStats{
		{Table: "balances", Shard: 0, Parts: 4, MemtableBytes: 100, MergeDue: true},
		{Table: "balances", Shard: 1, Parts: 1},
		{Table: "events", Shard: 0, Parts: 9, MergeDue: true},
	}
	conns := int64(3)
	m := New(src, func() int64 { return conns })
	m.ObserveQuery(200 * time.Microsecond)
	m.ObserveQuery(2 * time.Millisecond)

	fams := gather(t, m)
	value := func(name string) float64 {
		t.Helper()
		f := fams[name]
		if f == nil || len(f.Metric) != 1 {
			t.Fatalf("%s: family %v, want one sample", name, f)
		}
		switch mt := f.Metric[0]; {
		case mt.Counter != nil:
			return mt.Counter.GetValue()
		case mt.Gauge != nil:
			return mt.Gauge.GetValue()
		}
		t.Fatalf("%s is neither counter nor gauge", name)
		return 0
	}
	for name, want := range map[string]float64{
		"strata_commits_total": 7, "strata_rows_written_total": 1500, "strata_merges_total": 2,
		"strata_wal_bytes_total": 4096, "strata_merge_backlog": 2, "strata_connections": 3,
		"strata_page_cache_bytes": 1 << 20, "strata_page_cache_hits_total": 90,
		"strata_page_cache_misses_total": 10, "strata_page_cache_warmed_total": 33,
		"strata_commit_conflicts_total": 12, "strata_exclusive_statements_total": 1,
	} {
		if got := value(name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}

	h := fams["strata_wal_fsync_duration_seconds"].Metric[0].Histogram
	if h.GetSampleCount() != 5 || h.GetSampleSum() != 5 {
		t.Errorf("fsync histogram count %d sum %v, want 5 and 5", h.GetSampleCount(), h.GetSampleSum())
	}
	// Cumulative: 3 below 64µs, still 3 below 128µs, 4 below 256µs, and 4
	// below the largest bound (the fifth is past it, in +Inf).
	cum := map[float64]uint64{}
	for _, b := range h.Bucket {
		cum[b.GetUpperBound()] = b.GetCumulativeCount()
	}
	for bound, want := range map[float64]uint64{64e-6: 3, 128e-6: 3, 256e-6: 4, wal.SyncBucketBound(wal.SyncBuckets - 2).Seconds(): 4} {
		if cum[bound] != want {
			t.Errorf("fsync bucket le=%v holds %d, want %d", bound, cum[bound], want)
		}
	}

	parts := map[string]float64{}
	for _, mt := range fams["strata_parts"].Metric {
		var key []string
		for _, l := range mt.Label {
			key = append(key, l.GetName()+"="+l.GetValue())
		}
		parts[strings.Join(key, ",")] = mt.Gauge.GetValue()
	}
	if len(parts) != 3 || parts["shard=1,table=balances"] != 1 || parts["shard=0,table=events"] != 9 {
		t.Errorf("strata_parts = %v", parts)
	}

	q := fams["strata_query_duration_seconds"].Metric[0].Histogram
	if q.GetSampleCount() != 2 {
		t.Errorf("query histogram holds %d, want 2", q.GetSampleCount())
	}

	// A scrape reads the source again: the numbers move with the engine.
	src.s.Commit = 8
	conns = 0
	fams = gather(t, m)
	if value("strata_commits_total") != 8 || value("strata_connections") != 0 {
		t.Error("a second scrape did not read the source again")
	}
}

func TestHandlerServesText(t *testing.T) {
	m := New(&fakeSource{s: storage.Stats{Commit: 42}}, nil)
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	body, _ := io.ReadAll(rec.Body)
	if rec.Code != 200 || !strings.Contains(string(body), "strata_commits_total 42\n") {
		t.Fatalf("GET /metrics: %d\n%s", rec.Code, body)
	}
	if strings.Contains(string(body), "strata_connections") {
		t.Error("strata_connections served without a connection source")
	}
	if !strings.Contains(string(body), "go_goroutines") {
		t.Error("the Go runtime collector is missing")
	}
}

// TestTransformationMetrics: each transformation's lag, processed commit
// and failing flag, labelled by name, read at the scrape.
func TestTransformationMetrics(t *testing.T) {
	m := New(&fakeSource{}, nil)
	xs := []Transformation{{Name: "a", Processed: 40, Lag: 3}, {Name: "b", Processed: 7, Failing: true}}
	m.WatchTransformations(func() []Transformation { return xs })
	fams := gather(t, m)
	got := map[string]float64{}
	for _, name := range []string{"strata_transformation_lag", "strata_transformation_processed_commit", "strata_transformation_failing"} {
		f := fams[name]
		if f == nil || len(f.Metric) != 2 {
			t.Fatalf("%s: %v, want a sample per transformation", name, f)
		}
		for _, mt := range f.Metric {
			got[name+"/"+mt.Label[0].GetValue()] = mt.Gauge.GetValue()
		}
	}
	want := map[string]float64{
		"strata_transformation_lag/a": 3, "strata_transformation_lag/b": 0,
		"strata_transformation_processed_commit/a": 40, "strata_transformation_processed_commit/b": 7,
		"strata_transformation_failing/a": 0, "strata_transformation_failing/b": 1,
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}
