package storage

import (
	"errors"
	"fmt"
	"runtime"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
)

// ErrReleased is returned by reads on a Snapshot after Release.
var ErrReleased = errors.New("storage: snapshot released")

// Snapshot is a fixed view of the database at one commit: its catalog,
// its memtable views and parts. Reads on it never block commits and never
// see a later commit (R6.6). A Snapshot is safe for concurrent use; Release
// it when done so background work can drop what only it still needs.
type Snapshot struct {
	e        *Engine
	st       *state
	released atomic.Bool
	// past, on a snapshot from WithPending (pending.go), is the snapshot
	// it was built on: reads at an explicit AS OF go to it.
	past *Snapshot
	// gen holds the parts st names (lifetime.go); cleanup releases it if
	// the Snapshot becomes unreachable without Release.
	gen     *partGen
	cleanup runtime.Cleanup
	// retainAt is the instant retention is judged at for every read of
	// this snapshot (retentionNow), in Unix nanoseconds; 0 until the
	// first asks.
	retainAt atomic.Int64
}

// Snapshot returns a view at the newest published commit, which holds
// every commit up to it (invariant 3). It holds every part it may read, so
// a merge that retires one meanwhile deletes the file only after Release
// (or after the Snapshot becomes unreachable).
func (e *Engine) Snapshot() *Snapshot { return e.snapshot(true) }

// Engine returns the engine s reads.
func (s *Snapshot) Engine() *Engine { return s.e }

// ScopedSnapshot is Snapshot for a caller that releases it on every path,
// with a deferred Release: it registers no cleanup for an unreachable
// Snapshot, which costs a point lookup two allocations and a lock in the
// runtime (~4 % of its CPU). One never released keeps the parts it holds
// on disk until the process exits.
func (e *Engine) ScopedSnapshot() *Snapshot { return e.snapshot(false) }

func (e *Engine) snapshot(cleanup bool) *Snapshot {
	for {
		st := e.cur.Load()
		if g, ok := acquireState(st); ok {
			s := &Snapshot{e: e, st: st}
			if cleanup {
				s.hold(g)
			} else {
				s.gen = g
			}
			return s
		}
		// A flush, merge or split published a new generation of parts
		// between the load and the acquire and the old one's last holder
		// left; the newer state names the parts that are live.
	}
}

// Commit returns the snapshot's commit (current_commit(), R5.5).
func (s *Snapshot) Commit() uint64 { return s.st.commit }

// Catalog returns the catalog as of the snapshot's commit. Callers must not
// modify it.
func (s *Snapshot) Catalog() *catalog.Catalog { return s.st.cat }

// Release ends the snapshot; later reads on it fail with ErrReleased, and
// parts merged away since it was taken may be deleted. Releasing twice is
// harmless. A read still running on another goroutine must finish before
// Release: the parts it reads may be closed.
func (s *Snapshot) Release() {
	if !s.released.CompareAndSwap(false, true) {
		return
	}
	s.cleanup.Stop()
	s.gen.release()
}

// Commits returns every commit up to the snapshot's, oldest first
// (system.commits, R5.5). The slice is shared: do not modify it.
func (s *Snapshot) Commits() []CommitInfo {
	return s.st.commits[:min(len(s.st.commits), int(s.Commit()))]
}

// CommitAt returns the newest commit at or before t (AS OF TIMESTAMP,
// R6.7); false when every commit is later than t. Commit times never
// decrease, so this is a binary search.
func (s *Snapshot) CommitAt(t time.Time) (uint64, bool) {
	cs := s.Commits()
	i := sort.Search(len(cs), func(i int) bool { return cs[i].At.After(t) })
	if i == 0 {
		return 0, false
	}
	return cs[i-1].Commit, true
}

// table returns the catalog table and storage of id.
func (s *Snapshot) table(id catalog.TableID) (*catalog.Table, *tableData, error) {
	if s.released.Load() {
		return nil, nil, ErrReleased
	}
	t, ok := s.st.cat.TableByID(id)
	td := s.st.tables[id]
	if !ok || td == nil {
		return nil, nil, fmt.Errorf("storage: no table %d at commit %d", id, s.st.commit)
	}
	return t, td, nil
}

// Shards describes the shards of a table (system.shards). Rows counts the
// stored rows: every retained version, delete marker and append row,
// in parts and memtable.
func (s *Snapshot) Shards(table catalog.TableID) []ShardInfo {
	t, td, err := s.table(table)
	if err != nil {
		return nil
	}
	out := make([]ShardInfo, 0, len(td.shards))
	for _, sd := range td.shards {
		info := ShardInfo{Table: table, Shard: sd.num, Location: manifest.LocationLocal, Bytes: sd.memBytes(), Home: s.e.homeOf(s.st.cat, t, sd.num)}
		for _, m := range sd.memtables() {
			if m.keyed != nil {
				m.keyed.mu.RLock()
				info.Rows += m.keyed.rows + m.keyed.deletes
				m.keyed.mu.RUnlock()
			} else {
				m.app.mu.RLock()
				info.Rows += m.app.rows
				m.app.mu.RUnlock()
			}
		}
		for _, pf := range sd.parts {
			info.Rows += pf.man.Rows
			info.Bytes += pf.man.Bytes
			info.Parts++
			if pf.man.OnDisk() && pf.man.Location != info.Home {
				info.Misplaced++
			}
			if l := pf.man.Location; l != manifest.LocationLocal {
				if !pf.man.OnDisk() {
					info.ObjectBytes += pf.man.Bytes
				}
				if !strings.Contains(info.Location+", ", ", "+l+", ") {
					info.Location += ", " + l
				}
			}
		}
		// The AS OF index takes disk but holds no row of its own.
		for _, pf := range sd.asof {
			info.Bytes += pf.man.Bytes
			if pf.man.OnDisk() && pf.man.Location != info.Home {
				info.Misplaced++
			}
		}
		out = append(out, info)
	}
	return out
}

// Parts describes the immutable parts of a table the snapshot reads
// (system.parts).
func (s *Snapshot) Parts(table catalog.TableID) []PartInfo {
	_, td, err := s.table(table)
	if err != nil {
		return nil
	}
	var out []PartInfo
	for _, sd := range td.shards {
		for _, pf := range sd.parts {
			p := pf.man
			out = append(out, PartInfo{Table: table, Shard: p.Shard, Part: p.ID, Level: p.Level, Rows: p.Rows, Bytes: p.Bytes,
				MinCommit: p.MinCommit, MaxCommit: p.MaxCommit, Location: p.Location})
		}
	}
	return out
}

// ColumnBytes returns, per column id, [compressed, uncompressed] bytes
// stored (system.table_column_codecs): parts as the part files report
// them, plus memtable data, which counts as uncompressed only until a
// flush writes it to a part.
func (s *Snapshot) ColumnBytes(table catalog.TableID) map[catalog.ColumnID][2]uint64 {
	_, td, err := s.table(table)
	if err != nil {
		return nil
	}
	out := map[catalog.ColumnID][2]uint64{}
	for _, sd := range td.shards {
		for _, pf := range sd.parts {
			for _, c := range pf.r.Info().Columns {
				v := out[c.ID]
				v[0] += uint64(c.Compressed)
				v[1] += uint64(c.Uncompressed)
				out[c.ID] = v
			}
		}
		for _, m := range sd.memtables() {
			if m.keyed != nil {
				m.keyed.mu.RLock()
				for id, n := range m.keyed.colBytes {
					v := out[id]
					v[1] += n
					out[id] = v
				}
				m.keyed.mu.RUnlock()
				continue
			}
			m.app.mu.RLock()
			for id, n := range m.app.colBytes {
				v := out[id]
				v[1] += n
				out[id] = v
			}
			m.app.mu.RUnlock()
		}
	}
	return out
}
