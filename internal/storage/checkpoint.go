package storage

import (
	"slices"
	"strings"
	"sync"

	"github.com/strata-db/strata/internal/storage/manifest"
)

// checkpoints holds the newest transformation checkpoint of each name
// (R12.2). A checkpoint rides in its commit's WAL record
// (Txn.Checkpoints) and is noted here when the commit is applied, live or
// replayed; a flush that moves the WAL checkpoint past such records copies
// the ones changed since into the manifest (SetTransforms), so that
// dropping those WAL segments loses none.
type checkpoints struct {
	mu sync.Mutex
	m  map[string]uint64
	// dirty are the names noted since the manifest last recorded them.
	dirty map[string]bool
}

// load seeds c from the manifest's records.
func (c *checkpoints) load(ms *manifest.Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m, c.dirty = map[string]uint64{}, map[string]bool{}
	for _, t := range ms.Transforms() {
		c.m[t.Name] = t.Processed
	}
}

// note records the checkpoints of an applied commit. A checkpoint never
// moves back: replay may meet a record older than what the manifest holds.
func (c *checkpoints) note(cs []Checkpoint) {
	if len(cs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range cs {
		if k.Processed > c.m[k.Name] {
			c.m[k.Name] = k.Processed
			c.dirty[k.Name] = true
		}
	}
}

// pending returns the checkpoints not yet in the manifest, by name. A
// checkpoint noted here is of an applied, hence durable, commit, so the
// manifest may hold it before the WAL records up to it are dropped.
func (c *checkpoints) pending() []manifest.Transform {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]manifest.Transform, 0, len(c.dirty))
	for name := range c.dirty {
		out = append(out, manifest.Transform{Name: name, Processed: c.m[name]})
	}
	slices.SortFunc(out, func(a, b manifest.Transform) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// recorded clears the dirty mark of checkpoints the manifest now holds,
// unless a newer one was noted meanwhile.
func (c *checkpoints) recorded(ts []manifest.Transform) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range ts {
		if c.m[t.Name] == t.Processed {
			delete(c.dirty, t.Name)
		}
	}
}

// Checkpoint returns the newest checkpoint committed under name, and
// whether there is one.
func (e *Engine) Checkpoint(name string) (uint64, bool) {
	e.ckpt.mu.Lock()
	defer e.ckpt.mu.Unlock()
	p, ok := e.ckpt.m[name]
	return p, ok
}
