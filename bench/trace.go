package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/storage/part"
)

// lookupTrace is what one point read decoded, by part kind (delta, current
// run, history run, other), as the engine's per-lookup trace reports it.
type lookupTrace struct {
	path  string
	kinds [4]part.PageTrace
}

var kindLabels = [4]string{"delta", "current", "history", "other"}

// tracer is a system that can say what each point read decoded.
type tracer interface {
	// traceLookups starts (on) or stops recording each lookup's trace;
	// lastTrace returns the trace of the most recent one.
	traceLookups(on bool)
	lastTrace() lookupTrace
}

func (x *strataEmbedded) traceLookups(on bool) {
	if !on {
		storage.SetLookupTraceHook(nil)
		return
	}
	storage.SetLookupTraceHook(func(t *storage.LookupTrace) {
		x.last = lookupTrace{path: t.Path.String(), kinds: [4]part.PageTrace{t.Delta, t.Current, t.History, t.Other}}
	})
}

func (x *strataEmbedded) lastTrace() lookupTrace { return x.last }

// printTraces prints, for all lookups and for those in idx (the slowest),
// the paths taken and per part kind the mean pages sought, served from a
// cache and decoded, rows and stored KB decoded, and decode time.
func printTraces(name, label string, ts []lookupTrace, idx []int, what string) {
	if len(ts) == 0 {
		return
	}
	all := make([]int, len(ts))
	for i := range all {
		all[i] = i
	}
	for _, g := range []struct {
		name string
		idx  []int
	}{{"all", all}, {what, idx}} {
		paths := map[string]int{}
		var sum [4]part.PageTrace
		for _, i := range g.idx {
			paths[ts[i].path]++
			for k := range sum {
				sum[k].Add(&ts[i].kinds[k])
			}
		}
		n := float64(len(g.idx))
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %s trace, %s (%d): paths %v;", name, label, g.name, len(g.idx), paths)
		for k, s := range sum {
			if s == (part.PageTrace{}) {
				continue
			}
			fmt.Fprintf(&b, " %s seeks %.2f hits %.2f decoded %.2f (%.0f rows, %.1f KB stored, %.1f KB read, %.0f µs)",
				kindLabels[k], float64(s.Seeks)/n, float64(s.Hits+s.ChunkHits)/n, float64(s.Decoded)/n,
				float64(s.Rows)/n, float64(s.Stored)/n/1024, float64(s.Read)/n/1024, float64(time.Duration(s.Nanos).Microseconds())/n)
			fmt.Fprint(&b, ";")
		}
		fmt.Println(b.String())
	}
}
