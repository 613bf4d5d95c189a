package storage

import (
	"fmt"
	"strings"
	"sync/atomic"

	"github.com/strata-db/strata/internal/storage/part"
)

// A point lookup's time is mostly the pages it decodes, and which part
// those pages belong to (a delta a lookup must seek, the current run, the
// history run) decides what would make it cheaper. LookupTrace records
// that per lookup, in the lookup's own reader: nothing is counted in
// shared memory, and a lookup without a trace only tests a nil pointer.

// LookupPath says how a lookup was answered.
type LookupPath uint8

// The ways a lookup is answered (Snapshot.Lookup).
const (
	// PathNone: the lookup returned before reading a source (an error).
	PathNone LookupPath = iota
	// PathRun: from a merged run's stored winners at or after its newest
	// commit (lookupRun), no newer source holding the key.
	PathRun
	// PathInterval: from a merged run's stored intervals, before its
	// newest commit (lookupRun).
	PathInterval
	// PathParts: the key's inputs gathered from each part and memtable
	// and resolved afresh (lookupParts).
	PathParts
	// PathMerge: a merge of the shard's sources over the key's range (a
	// part not laid out for seeking).
	PathMerge
	// PathMemtable: a shard with no parts, from its memtable alone.
	PathMemtable
)

var pathNames = [...]string{"none", "run", "interval", "parts", "merge", "memtable"}

// String names the path as EXPLAIN ANALYZE prints it.
func (p LookupPath) String() string {
	if int(p) < len(pathNames) {
		return pathNames[p]
	}
	return fmt.Sprintf("LookupPath(%d)", uint8(p))
}

// LookupTrace is what one Snapshot.Lookup read, filled in when
// ScanSpec.Trace points to it (or a hook is set: SetLookupTraceHook).
type LookupTrace struct {
	Path LookupPath
	// FilterSkips counts the parts whose key filter ruled the key out,
	// KeyProbes those it let through to a seek of their sort keys.
	FilterSkips, KeyProbes int
	// Delta, Current and History count the pages read of parts of each
	// kind (Other: any other kind).
	Delta, Current, History, Other part.PageTrace
}

// Kind returns the counters of parts of kind k.
func (t *LookupTrace) Kind(k part.Kind) *part.PageTrace {
	switch k {
	case part.KindDelta:
		return &t.Delta
	case part.KindCurrent:
		return &t.Current
	case part.KindHistory:
		return &t.History
	}
	return &t.Other
}

// Pages is the pages the lookup decoded (not served by a cache).
func (t *LookupTrace) Pages() int {
	return t.Delta.Decoded + t.Current.Decoded + t.History.Decoded + t.Other.Decoded
}

// String formats the trace for EXPLAIN ANALYZE: the path, then per part
// kind that was sought the pages hit and decoded.
func (t *LookupTrace) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "path=%s filter_skips=%d", t.Path, t.FilterSkips)
	for _, k := range []part.Kind{part.KindDelta, part.KindCurrent, part.KindHistory, 0} {
		pt := t.Kind(k)
		if *pt == (part.PageTrace{}) {
			continue
		}
		name := "other"
		if k != 0 {
			name = k.String()
		}
		fmt.Fprintf(&b, " %s(seeks=%d hits=%d decoded=%d rows=%d bytes=%d)", name, pt.Seeks, pt.Hits+pt.ChunkHits, pt.Decoded, pt.Rows, pt.Stored)
	}
	return b.String()
}

// lookupTraceHook, when set, receives the trace of every lookup made
// without one of its own: how bench/ sees what its SQL point reads did.
var lookupTraceHook atomic.Pointer[func(*LookupTrace)]

// SetLookupTraceHook makes every later Lookup that was not given a
// ScanSpec.Trace record one and hand it to fn when it returns (fn nil:
// stop). For benchmarks: fn is called on the lookup's goroutine, and the
// trace is reused once fn returns.
func SetLookupTraceHook(fn func(*LookupTrace)) {
	if fn == nil {
		lookupTraceHook.Store(nil)
		return
	}
	lookupTraceHook.Store(&fn)
}

// pageTrace returns the counters that reads of pf's pages add to, nil
// when the lookup is not traced.
func (rd *reader) pageTrace(pf *partFile) *part.PageTrace {
	if rd.trace == nil {
		return nil
	}
	return rd.trace.Kind(pf.r.Meta().Kind)
}

// tracePath records the path a traced lookup took.
func (rd *reader) tracePath(p LookupPath) {
	if rd.trace != nil {
		rd.trace.Path = p
	}
}
