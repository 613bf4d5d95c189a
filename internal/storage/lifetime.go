package storage

import (
	"runtime"
	"slices"
	"sync/atomic"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/vfs"
)

// Part lifetime (docs/storage-merges.md, "How parts are retired").
//
// A merge swaps its inputs for its outputs in one manifest edit and then
// publishes a state without the inputs, but snapshots taken before may
// still be reading them. So parts are held in generations: a partGen is
// the set of parts of every published state from one flush, merge or split
// to the next (commits in between publish states that share it). A
// generation counts its holders — one reference while it is the published
// one (the live reference), plus one per Snapshot taken on it — and holds
// one reference on each of its parts. Publishing a new generation takes a
// reference on each of its parts (all live, or new) and then drops the old
// generation's live reference; when a generation's last holder leaves, it
// drops its part references, and whoever drops a part's last reference
// closes the reader and deletes the file. A part only the old generation
// held is one a merge or split removed from the manifest, or a dropped
// table's, which the DDL's manifest edit removed.
//
// A Snapshot costs one atomic operation, whatever the number of parts. A
// count that reached zero never rises again (acquire refuses), which is how
// Snapshot notices it raced with a publication and retries on the newer
// state. A crash between an edit and the deletion leaves files no manifest
// names; Open removes them (removeStrayParts).

// partRefs is the reference count and the deletion duty of one part file:
// the number of generations that hold it.
type partRefs struct {
	n    atomic.Int64
	fs   vfs.FS
	path string // the file on fs
	pf   *partFile
}

// newPartRefs returns the counter of a part no generation holds yet.
func newPartRefs(fs vfs.FS, path string, pf *partFile) *partRefs {
	return &partRefs{fs: fs, path: path, pf: pf}
}

// release drops a reference; the last one closes the reader and deletes
// the file.
func (r *partRefs) release() {
	n := r.n.Add(-1)
	if n > 0 {
		return
	}
	if n < 0 {
		// A double release is a bug in the engine; losing a file to it
		// would be worse than a leak, so it is only counted (Check).
		leakedReleases.Add(1)
		return
	}
	_ = r.pf.r.Close()
	if err := r.fs.Remove(r.path); err == nil {
		retiredFiles.Add(1)
	}
}

// held returns the current count (Check and tests).
func (r *partRefs) held() int64 { return r.n.Load() }

// retiredFiles counts part files deleted after their last reader left;
// leakedReleases counts releases below zero, which Check reports.
var retiredFiles, leakedReleases atomic.Int64

// partGen is one generation of published parts.
type partGen struct {
	n     atomic.Int64
	parts []*partRefs
}

// newGen builds the generation of the parts tables name, with its live
// reference. It runs under the apply lock (or before Open returns), where
// every part named is held by the published generation or is new, so
// taking references on them cannot race their deletion.
func newGen(tables map[catalog.TableID]*tableData) *partGen {
	g := &partGen{}
	g.n.Store(1)
	for _, td := range tables {
		for _, sd := range td.shards {
			for _, pf := range sd.parts {
				pf.refs.n.Add(1)
				g.parts = append(g.parts, pf.refs)
			}
			for _, pf := range sd.asof {
				pf.refs.n.Add(1)
				g.parts = append(g.parts, pf.refs)
			}
		}
	}
	return g
}

// acquire takes a reference unless every holder already left.
func (g *partGen) acquire() bool {
	for {
		n := g.n.Load()
		if n <= 0 {
			return false
		}
		if g.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// release drops a reference; the last one releases the parts.
func (g *partGen) release() {
	if g.n.Add(-1) != 0 {
		return
	}
	for _, p := range g.parts {
		p.release()
	}
}

// releaseGen is the cleanup of an unreachable Snapshot.
func releaseGen(g *partGen) { g.release() }

// acquire takes a reference on a part unless it is already retired and
// released by everyone.
func (r *partRefs) acquire() bool {
	for {
		n := r.n.Load()
		if n <= 0 {
			return false
		}
		if r.n.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// acquireState takes a reference on the parts st names: on its generation
// when it has one (one atomic operation), else — a state built outside the
// publication path, such as a snapshot with pending writes — on each part,
// in a generation of its own. It fails, having taken nothing, when a part
// was retired since st was loaded: the caller loads the newer state and
// tries again.
func acquireState(st *state) (*partGen, bool) {
	if st.gen != nil {
		return st.gen, st.gen.acquire()
	}
	g := &partGen{}
	g.n.Store(1)
	for _, td := range st.tables {
		for _, sd := range td.shards {
			for _, pf := range slices.Concat(sd.parts, sd.asof) {
				if !pf.refs.acquire() {
					g.release()
					return nil, false
				}
				g.parts = append(g.parts, pf.refs)
			}
		}
	}
	return g, true
}

// publishParts stores st, whose parts changed, with a new generation and
// retires the generation before it. Under the apply lock.
func (e *Engine) publishParts(st *state) {
	old := e.cur.Load()
	st.gen = newGen(st.tables)
	e.cur.Store(st)
	if old != nil && old.gen != nil {
		old.gen.release()
	}
}

// hold makes s hold g (from acquireState) until Release or until s
// becomes unreachable, whichever comes first.
func (s *Snapshot) hold(g *partGen) {
	s.gen = g
	s.cleanup = runtime.AddCleanup(s, releaseGen, g)
}
