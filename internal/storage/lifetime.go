package storage

import (
	"runtime"
	"sync/atomic"

	"github.com/strata-db/strata/internal/vfs"
)

// Part lifetime (docs/storage-merges.md, "Retiring parts").
//
// A merge swaps its inputs for its outputs in one manifest edit and then
// publishes a state without the inputs, but snapshots taken before may
// still be reading them. So every partFile counts its holders: one
// reference while the published state names it (the live reference), and
// one per Snapshot whose state names it. A merge drops the live reference
// of each input after its edit; whoever drops the last reference closes
// the reader and deletes the file. A count that reached zero never rises
// again (acquire refuses), which is how Snapshot notices it raced with a
// merge and retries on the newer state.
//
// A crash between the edit and the deletion leaves files no manifest
// names; Open removes them (removeStrayParts).

// partRefs is the reference count and the deletion duty of one part file.
// It is kept apart from partFile so that a Snapshot's cleanup, which must
// not reach the Snapshot, holds only these.
type partRefs struct {
	n    atomic.Int64
	fs   vfs.FS
	path string // the file on fs; "" for a part whose file must stay
	pf   *partFile
}

// newPartRefs returns the counter of a part the published state is about
// to name: it starts with the live reference.
func newPartRefs(fs vfs.FS, path string, pf *partFile) *partRefs {
	r := &partRefs{fs: fs, path: path, pf: pf}
	r.n.Store(1)
	return r
}

// acquire takes a reference unless the part is already retired and
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

// release drops a reference; the last one closes the reader and deletes
// the file. The live reference is dropped only after the manifest edit
// that removed the part, so the file is never needed again by then.
func (r *partRefs) release() {
	n := r.n.Add(-1)
	if n > 0 {
		return
	}
	if n < 0 {
		// A double release is a bug in the engine; losing a file to it
		// would be worse than a leak, so it is only counted.
		leakedReleases.Add(1)
		return
	}
	_ = r.pf.r.Close()
	if r.path != "" {
		if err := r.fs.Remove(r.path); err == nil {
			retiredFiles.Add(1)
		}
	}
}

// held returns the current count (Check and tests).
func (r *partRefs) held() int64 { return r.n.Load() }

// retiredFiles counts part files deleted after their last reader left;
// leakedReleases counts releases below zero, which Check reports.
var retiredFiles, leakedReleases atomic.Int64

// snapRefs is what one Snapshot holds: a reference on every part of its
// state.
type snapRefs struct {
	parts []*partRefs
}

// releaseAll drops the snapshot's references. It is the cleanup of an
// unreachable Snapshot as well as the body of Release.
func releaseAll(h *snapRefs) {
	for _, r := range h.parts {
		r.release()
	}
	h.parts = nil
}

// acquireState takes a reference on every part st names. It fails, having
// taken nothing, when one of them was retired since st was loaded: the
// caller loads the newer state and tries again.
func acquireState(st *state) (*snapRefs, bool) {
	h := &snapRefs{}
	for _, td := range st.tables {
		for _, sd := range td.shards {
			for _, pf := range sd.parts {
				if !pf.refs.acquire() {
					releaseAll(h)
					return nil, false
				}
				h.parts = append(h.parts, pf.refs)
			}
		}
	}
	return h, true
}

// hold makes s hold the parts of its state until Release or until
// it becomes unreachable, whichever comes first.
func (s *Snapshot) hold(h *snapRefs) {
	s.refs = h
	if len(h.parts) > 0 {
		s.cleanup = runtime.AddCleanup(s, releaseAll, h)
		s.hasCleanup = true
	}
}
