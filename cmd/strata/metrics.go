package main

import (
	"net/http"

	"github.com/strata-db/strata/internal/metrics"
	"github.com/strata-db/strata/internal/pgwire"
	"github.com/strata-db/strata/internal/storage"
)

// init puts /metrics on `strata serve --http` (issue 5, item 7): the
// engine's counters and shards read at each scrape, the server's
// connections, and a histogram of statement latency the server feeds.
func init() {
	httpHandlers = append(httpHandlers, func(mux *http.ServeMux, srv *pgwire.Server, eng *storage.Engine) {
		m := metrics.New(eng, srv.Connections)
		srv.ObserveStatements(m.ObserveQuery)
		mux.Handle("GET /metrics", m.Handler())
	})
}
