// Package metrics is Strata's /metrics: a Prometheus registry
// (github.com/prometheus/client_golang) with what an operator watches on
// a database (issue 5, item 7):
//
//	strata_commits_total                  commits applied (the newest commit number)
//	strata_rows_written_total             rows written by those commits
//	strata_merges_total                   merges published since the server started
//	strata_wal_fsync_duration_seconds     histogram of WAL fsyncs (one per group commit)
//	strata_wal_bytes_total                bytes the WAL made durable since start
//	strata_parts{table,shard}             parts each shard reads
//	strata_memtable_bytes{table,shard}    bytes each shard holds in memory, not yet in a part
//	strata_merge_backlog                  shards the compaction policy would merge now
//	strata_query_duration_seconds         histogram of statement latency, as the server saw it
//	strata_connections                    open client connections
//	strata_transformation_lag{name}       commits that wrote a transformation's sources, not yet processed
//	strata_transformation_processed_commit{name}  the commit it has processed up to
//	strata_transformation_failing{name}   1 while its last step failed (system.transformations' last_error)
//
// plus the Go runtime's and the process's standard collectors.
//
// Everything but the query histogram is read when scraped, from
// storage.Engine.Stats, the transformations' progress and the server's
// connection count, so the commit
// path and the read path carry no metric code: a scrape costs a pass over
// the commit list and the shards, a statement one histogram observation.
package metrics

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/storage/wal"
)

// StatsSource is what the metrics read at a scrape; *storage.Engine is one.
type StatsSource interface {
	Stats() storage.Stats
}

// Metrics is one registry and the histogram the server feeds. It is safe
// for concurrent use.
type Metrics struct {
	reg     *prometheus.Registry
	queries prometheus.Histogram
}

// Transformation is one transformation's progress at a scrape, as
// system.transformations shows it.
type Transformation struct {
	Name      string
	Processed uint64
	Lag       uint64
	Failing   bool
}

// WatchTransformations adds the transformation gauges, read from progress
// at each scrape (session.Transformations of the served engine).
func (m *Metrics) WatchTransformations(progress func() []Transformation) {
	m.reg.MustRegister(&transformCollector{progress: progress})
}

var (
	descTransformLag = prometheus.NewDesc("strata_transformation_lag",
		"Commits that wrote one of the transformation's sources and that it has not processed yet.", []string{"name"}, nil)
	descTransformProcessed = prometheus.NewDesc("strata_transformation_processed_commit",
		"The commit the transformation has processed up to.", []string{"name"}, nil)
	descTransformFailing = prometheus.NewDesc("strata_transformation_failing",
		"1 while the transformation's last step failed (system.transformations.last_error), else 0.", []string{"name"}, nil)
)

// transformCollector reads the transformations' progress at a scrape.
type transformCollector struct{ progress func() []Transformation }

func (c *transformCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- descTransformLag
	ch <- descTransformProcessed
	ch <- descTransformFailing
}

func (c *transformCollector) Collect(ch chan<- prometheus.Metric) {
	for _, x := range c.progress() {
		failing := 0.0
		if x.Failing {
			failing = 1
		}
		ch <- prometheus.MustNewConstMetric(descTransformLag, prometheus.GaugeValue, float64(x.Lag), x.Name)
		ch <- prometheus.MustNewConstMetric(descTransformProcessed, prometheus.GaugeValue, float64(x.Processed), x.Name)
		ch <- prometheus.MustNewConstMetric(descTransformFailing, prometheus.GaugeValue, failing, x.Name)
	}
}

// New returns the metrics of eng; connections, if not nil, reports the open
// client connections (pgwire.Server.Connections).
func New(eng StatsSource, connections func() int64) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		queries: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "strata_query_duration_seconds",
			Help: "Latency of statements run for clients, from the statement's start to its result.",
			// 50µs to ~26s: a point read on a warm memtable to a full scan.
			Buckets: prometheus.ExponentialBuckets(50e-6, 2, 20),
		}),
	}
	m.reg.MustRegister(m.queries, &engineCollector{eng: eng},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if connections != nil {
		m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "strata_connections",
			Help: "Open client connections.",
		}, func() float64 { return float64(connections()) }))
	}
	return m
}

// ObserveQuery records one statement's latency.
func (m *Metrics) ObserveQuery(d time.Duration) { m.queries.Observe(d.Seconds()) }

// Handler serves the registry in the Prometheus text format (or
// OpenMetrics when the scraper asks for it).
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg, EnableOpenMetrics: true})
}

// Gatherer exposes the registry, for tests and for pushing elsewhere.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

var (
	descCommits = prometheus.NewDesc("strata_commits_total",
		"Commits applied since the data directory was created (the newest commit number).", nil, nil)
	descRows = prometheus.NewDesc("strata_rows_written_total",
		"Rows written by the commits applied since the data directory was created.", nil, nil)
	descMerges = prometheus.NewDesc("strata_merges_total",
		"Merges of parts published since the server started.", nil, nil)
	descFsync = prometheus.NewDesc("strata_wal_fsync_duration_seconds",
		"Duration of WAL segment fsyncs since the server started; one fsync makes a group of commits durable.", nil, nil)
	descWALBytes = prometheus.NewDesc("strata_wal_bytes_total",
		"Bytes the WAL made durable since the server started.", nil, nil)
	descParts = prometheus.NewDesc("strata_parts",
		"Immutable parts a shard reads.", []string{"table", "shard"}, nil)
	descMem = prometheus.NewDesc("strata_memtable_bytes",
		"Bytes a shard holds in its memtable, not yet flushed to a part.", []string{"table", "shard"}, nil)
	descBacklog = prometheus.NewDesc("strata_merge_backlog",
		"Shards whose parts the compaction policy would merge now.", nil, nil)
	descCacheBytes = prometheus.NewDesc("strata_page_cache_bytes",
		"Bytes of decoded part pages the page cache holds (--page-cache-mib bounds it).", nil, nil)
	descCacheHits = prometheus.NewDesc("strata_page_cache_hits_total",
		"Page reads of point lookups served by the page cache since the server started.", nil, nil)
	descCacheMisses = prometheus.NewDesc("strata_page_cache_misses_total",
		"Page reads of point lookups that decoded their page since the server started.", nil, nil)
	descConflicts = prometheus.NewDesc("strata_commit_conflicts_total",
		"Commits of UPDATE, DELETE, INSERT … ON CONFLICT or a transaction refused since the server started because another commit wrote one of their keys after they read it (the statement ran again, or COMMIT failed with 40001).", nil, nil)
	descExclusives = prometheus.NewDesc("strata_exclusive_statements_total",
		"Statements that lost the race for their keys repeatedly and ran with every other commit held off, since the server started.", nil, nil)
	descCacheWarmed = prometheus.NewDesc("strata_page_cache_warmed_total",
		"Pages put in the page cache from parts as they were written (--warm-writes, folds) since the server started.", nil, nil)
)

// fsyncBounds are the histogram's upper bounds in seconds, the WAL's
// buckets but the last, which has no bound (+Inf).
var fsyncBounds = func() []float64 {
	b := make([]float64, wal.SyncBuckets-1)
	for i := range b {
		b[i] = wal.SyncBucketBound(i).Seconds()
	}
	return b
}()

// engineCollector turns one storage.Stats into samples at each scrape.
type engineCollector struct {
	eng StatsSource
}

func (c *engineCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descCommits, descRows, descMerges, descFsync, descWALBytes, descParts, descMem, descBacklog,
		descCacheBytes, descCacheHits, descCacheMisses, descCacheWarmed, descConflicts, descExclusives} {
		ch <- d
	}
}

func (c *engineCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.eng.Stats()
	ch <- prometheus.MustNewConstMetric(descCommits, prometheus.CounterValue, float64(s.Commit))
	ch <- prometheus.MustNewConstMetric(descRows, prometheus.CounterValue, float64(s.RowsWritten))
	ch <- prometheus.MustNewConstMetric(descMerges, prometheus.CounterValue, float64(s.Merges))
	ch <- prometheus.MustNewConstMetric(descWALBytes, prometheus.CounterValue, float64(s.WAL.Bytes))
	ch <- prometheus.MustNewConstMetric(descCacheBytes, prometheus.GaugeValue, float64(s.PageCache.Bytes))
	ch <- prometheus.MustNewConstMetric(descCacheHits, prometheus.CounterValue, float64(s.PageCache.Hits))
	ch <- prometheus.MustNewConstMetric(descCacheMisses, prometheus.CounterValue, float64(s.PageCache.Misses))
	ch <- prometheus.MustNewConstMetric(descCacheWarmed, prometheus.CounterValue, float64(s.PageCache.Warmed))
	ch <- prometheus.MustNewConstMetric(descConflicts, prometheus.CounterValue, float64(s.Conflicts))
	ch <- prometheus.MustNewConstMetric(descExclusives, prometheus.CounterValue, float64(s.Exclusives))

	// Prometheus buckets are cumulative; the WAL's are not.
	buckets := make(map[float64]uint64, len(fsyncBounds))
	var n uint64
	for i, bound := range fsyncBounds {
		n += s.WAL.SyncLatency[i]
		buckets[bound] = n
	}
	n += s.WAL.SyncLatency[wal.SyncBuckets-1]
	ch <- prometheus.MustNewConstHistogram(descFsync, n, s.WAL.SyncTime.Seconds(), buckets)

	backlog := 0
	for _, sh := range s.Shards {
		shard := strconv.FormatUint(uint64(sh.Shard), 10)
		ch <- prometheus.MustNewConstMetric(descParts, prometheus.GaugeValue, float64(sh.Parts), sh.Table, shard)
		ch <- prometheus.MustNewConstMetric(descMem, prometheus.GaugeValue, float64(sh.MemtableBytes), sh.Table, shard)
		if sh.MergeDue {
			backlog++
		}
	}
	ch <- prometheus.MustNewConstMetric(descBacklog, prometheus.GaugeValue, float64(backlog))
}
