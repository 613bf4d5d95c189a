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
	// unrecorded are, per name, the checkpoints noted since the manifest
	// last recorded one, with the commits that carried them.
	unrecorded map[string][]carried
}

// carried is a checkpoint and the commit whose record carried it.
type carried struct{ commit, processed uint64 }

// load seeds c from the manifest's records.
func (c *checkpoints) load(ms *manifest.Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m, c.unrecorded = map[string]uint64{}, map[string][]carried{}
	for _, t := range ms.Transforms() {
		c.m[t.Name] = t.Processed
	}
}

// note records the checkpoints of applied commit commit. A checkpoint
// never moves back: replay may meet a record older than what the manifest
// holds.
func (c *checkpoints) note(commit uint64, cs []Checkpoint) {
	if len(cs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range cs {
		if k.Processed > c.m[k.Name] {
			c.m[k.Name] = k.Processed
			c.unrecorded[k.Name] = append(c.unrecorded[k.Name], carried{commit, k.Processed})
		}
	}
}

// pending returns, by name, the newest checkpoint carried by a commit at
// or before upTo that the manifest does not hold yet: what a flush that
// drops the WAL up to upTo must record. Later ones stay in the WAL (and
// may name commits the manifest's log does not reach yet).
func (c *checkpoints) pending(upTo uint64) []manifest.Transform {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []manifest.Transform
	for name, cs := range c.unrecorded {
		var p uint64
		for _, k := range cs {
			if k.commit <= upTo {
				p = max(p, k.processed)
			}
		}
		if p > 0 {
			out = append(out, manifest.Transform{Name: name, Processed: p})
		}
	}
	slices.SortFunc(out, func(a, b manifest.Transform) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// recorded forgets the checkpoints carried up to upTo once the manifest
// holds what pending(upTo) returned.
func (c *checkpoints) recorded(upTo uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for name, cs := range c.unrecorded {
		cs = slices.DeleteFunc(cs, func(k carried) bool { return k.commit <= upTo })
		if len(cs) == 0 {
			delete(c.unrecorded, name)
		} else {
			c.unrecorded[name] = cs
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
