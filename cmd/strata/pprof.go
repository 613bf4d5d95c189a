package main

import (
	"net/http"
	"net/http/pprof"

	"github.com/strata-db/strata/internal/pgwire"
	"github.com/strata-db/strata/internal/storage"
)

// The Go runtime's profiles under /debug/pprof/ on the --http address, as
// CockroachDB and most Go servers serve them: how an operator finds where a
// slow server spends its CPU, its memory and its waits without restarting it.
// --http listens on loopback unless told otherwise, like /metrics.
func init() {
	httpHandlers = append(httpHandlers, func(mux *http.ServeMux, _ *pgwire.Server, _ *storage.Engine) {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	})
}
