package main

import (
	"net/http"

	"github.com/strata-db/strata/internal/metrics"
	"github.com/strata-db/strata/internal/pgwire"
	"github.com/strata-db/strata/internal/session"
	"github.com/strata-db/strata/internal/storage"
)

// init puts /metrics on `strata serve --http` (issue 5, item 7): the
// engine's counters and shards and the transformations' progress read at
// each scrape, the server's connections, and a histogram of statement
// latency the server feeds.
func init() {
	httpHandlers = append(httpHandlers, func(mux *http.ServeMux, srv *pgwire.Server, eng *storage.Engine) {
		m := metrics.New(eng, srv.Connections)
		m.WatchTransformations(func() []metrics.Transformation {
			var out []metrics.Transformation
			for _, x := range session.Transformations(eng) {
				out = append(out, metrics.Transformation(x))
			}
			return out
		})
		srv.ObserveStatements(m.ObserveQuery)
		mux.Handle("GET /metrics", m.Handler())
	})
}
