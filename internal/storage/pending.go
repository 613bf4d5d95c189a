package storage

import (
	"bytes"
	"fmt"
	"maps"
	"runtime"
	"slices"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/version"
)

// Read-your-writes inside BEGIN … COMMIT (R5.1).
//
// A transaction's writes are buffered by its session and committed as one
// commit at COMMIT; until then no other session sees them. Its own
// statements must see them, though, so the session reads through
// WithPending: a private state at commit n+1 (n the snapshot's commit)
// whose touched shards hold the committed memtable rows up to n plus the
// pending writes at n+1, as the commit pipeline would apply them.
//
// The choice, against reading a memtable of the pending writes as one more
// source: every read path of a shard (the memtable-only walk, the merged
// read of partscan.go, the run fast paths of runscan.go, Lookup) reads
// exactly one memtable, the newest source. Giving them a second one would
// touch all of them; a private copy of the touched shards' memtables, with
// the pending writes applied by the engine's own applyWrite, reads through
// every path unchanged. Parts are shared, never copied.
//
// Cost: per call, O(V log K) for the V retained versions and deletes of the
// K keys in the memtables of the shards the writes touch (the parts are not
// read), plus applying the pending writes twice (once to learn which
// shards they touch). The committed payloads are shared with the original
// memtable's arena, not copied. A session calls it once per statement
// after the transaction's first write.

// WithPending returns a snapshot that reads as if writes were committed at
// s.Commit()+1 on top of s, under the same version rules (R3 ordering,
// late writes, repeats, deletes, groups): reads of "now" (AsOf 0) see
// them, reads AS OF a commit ≤ s.Commit() see only what was committed.
// Commit, Commits and CommitAt still report the committed commits
// (current_commit() is unchanged), so AS OF cannot name the pending one.
// Pending versions read with _commit (and in versions()) as Commit()+1,
// the number they would get if nothing else committed first.
//
// writes must have been planned against s.Catalog(): a write the catalog
// rejects is ErrInvalidTxn. Shards, Parts and ColumnBytes (the system
// tables) count the pending rows of the memtables they copy. The returned
// snapshot holds its own references on the parts; release both. s must
// not be released during the call.
func (s *Snapshot) WithPending(writes []Write) (*Snapshot, error) {
	defer runtime.KeepAlive(s)
	if s.released.Load() {
		return nil, ErrReleased
	}
	base := s.st
	if s.pending {
		return nil, fmt.Errorf("storage: WithPending on a snapshot that already has pending writes")
	}
	if err := validateWrites(base.cat, writes); err != nil {
		return nil, err
	}
	n := base.commit
	st := &state{commit: n + 1, cat: base.cat, tables: base.tables, commits: base.commits[:min(len(base.commits), int(n)):min(len(base.commits), int(n))]}
	if len(writes) > 0 {
		st.tables = maps.Clone(base.tables)
		if err := s.e.applyPending(st, base, writes, n); err != nil {
			return nil, err
		}
	}
	h, ok := acquireState(st)
	if !ok {
		// Every part st names is one of base's, which s holds.
		return nil, fmt.Errorf("storage: a part of the snapshot at commit %d was retired while it was held", n)
	}
	out := &Snapshot{e: s.e, st: st, pending: true}
	out.hold(h)
	return out, nil
}

// applyPending fills st.tables with the touched tables' shards rebuilt
// with writes applied at commit n+1.
func (e *Engine) applyPending(st, base *state, writes []Write, n uint64) error {
	// First the writes alone, each table into fresh empty memtables: the
	// engine's routing and application decide which shards they touch
	// and what each keeps.
	fresh := map[catalog.TableID]*tableData{}
	var seq uint32
	var scratch []byte
	for i := range writes {
		w := &writes[i]
		td := base.tables[w.Table]
		t, ok := base.cat.TableByID(w.Table)
		if td == nil || !ok {
			return fmt.Errorf("%w: write %d: no table %d at commit %d", ErrInvalidTxn, i, w.Table, n)
		}
		ptd := fresh[w.Table]
		if ptd == nil {
			ptd = &tableData{id: td.id, keyed: td.keyed}
			for _, sd := range td.shards {
				psd := &shardData{num: sd.num, rng: sd.rng}
				if td.keyed {
					psd.keyed = newKeyedMem(t.Mode == catalog.ModeVersioned)
				} else {
					psd.app = newAppendMem()
				}
				ptd.shards = append(ptd.shards, psd)
			}
			fresh[w.Table] = ptd
		}
		if err := e.applyWrite(ptd, t, w, n+1, seq, &scratch); err != nil {
			return err
		}
		seq += uint32(w.Batch.Rows)
	}
	// Then each touched shard: its committed memtable rows up to n and
	// the pending ones, re-resolved together into a private memtable.
	for id, ptd := range fresh {
		td := base.tables[id]
		t, _ := base.cat.TableByID(id)
		ntd := &tableData{id: td.id, keyed: td.keyed, shards: slices.Clone(td.shards)}
		for i, psd := range ptd.shards {
			sd := td.shards[i]
			nsd := &shardData{num: sd.num, rng: sd.rng, parts: sd.parts}
			switch {
			case td.keyed && psd.keyed.list.n == 0, !td.keyed && psd.app.rows == 0:
				continue
			case td.keyed:
				m, err := mergeMemtables(t, sd.keyed, n, psd.keyed)
				if err != nil {
					return err
				}
				nsd.keyed = m
			default:
				nsd.app = mergeAppend(sd.app, n, psd.app)
			}
			ntd.shards[i] = nsd
		}
		st.tables[id] = ntd
	}
	return nil
}

// mergeAppend returns an append memtable holding old's chunks committed at
// or before n, then pend's. Chunks are immutable and shared.
func mergeAppend(old *appendMem, n uint64, pend *appendMem) *appendMem {
	m := newAppendMem()
	for _, c := range old.view() {
		if c.commit <= n {
			m.chunks = append(m.chunks, c)
			m.rows += uint64(c.rows)
			m.note(c.commit)
		}
	}
	old.mu.RLock()
	m.used = old.used
	maps.Copy(m.colBytes, old.colBytes)
	old.mu.RUnlock()
	for _, c := range pend.chunks {
		m.chunks = append(m.chunks, c)
		m.rows += uint64(c.rows)
		m.note(c.commit)
	}
	m.used += pend.used
	for id, b := range pend.colBytes {
		m.colBytes[id] += b
	}
	return m
}

func (m *appendMem) note(commit uint64) {
	if m.minCommit == 0 || commit < m.minCommit {
		m.minCommit = commit
	}
	m.maxCommit = max(m.maxCommit, commit)
}

// mergeMemtables returns a keyed memtable holding, for every key of old
// and pend, old's inputs committed at or before n and then pend's, run
// through the version rules in position order (addVersion, deleteKey), as
// the memtable would hold them had pend's writes been committed after n.
// old is read one key at a time under its read lock (memCursor), so
// concurrent commits to it are held up for no longer than a read.
func mergeMemtables(t *catalog.Table, old *keyedMem, n uint64, pend *keyedMem) (*keyedMem, error) {
	m := newKeyedMem(old.versioned)
	old.mu.RLock()
	maps.Copy(m.colBytes, old.colBytes)
	old.mu.RUnlock()
	for id, b := range pend.colBytes {
		m.colBytes[id] += b
	}
	all := []KeyRange{{}}
	srcs := [2]*memCursor{{m: old, rs: all, n: n}, {m: pend, rs: all, n: n + 1}}
	ords := map[catalog.GroupID]version.Ordering{}
	var ins []keyInput
	var keyBuf []byte
	for {
		var least []byte
		for _, c := range srcs {
			k, err := c.key()
			if err != nil {
				return nil, err
			}
			if k != nil && (least == nil || bytes.Compare(k, least) < 0) {
				least = k
			}
		}
		if least == nil {
			return m, nil
		}
		keyBuf = append(keyBuf[:0], least...)
		ins = ins[:0]
		for _, c := range srcs {
			var err error
			if ins, err = c.take(keyBuf, ins); err != nil {
				return nil, err
			}
		}
		if len(ins) == 0 {
			// Only versions committed after n: the key does not exist yet
			// at the snapshot.
			continue
		}
		slices.SortFunc(ins, func(a, b keyInput) int { return a.pos.Compare(b.pos) })
		e := m.entry(keyBuf)
		for _, in := range ins {
			m.note(in.pos.Commit)
			if in.tomb {
				if err := m.deleteKey(e, version.Delete{Key: e.key, Commit: in.pos.Commit, Seq: in.pos.Seq}); err != nil {
					return nil, err
				}
				continue
			}
			ord, ok := ords[in.group]
			if !ok {
				g, found := t.GroupByID(in.group)
				if !found {
					return nil, fmt.Errorf("storage: table %s: unknown group %d", t.Name, in.group)
				}
				ord = ordering(t, g)
				ords[in.group] = ord
			}
			mv := in.mv
			mv.v.Key = e.key
			if err := m.addVersion(e.group(in.group, ord), mv, ord); err != nil {
				return nil, err
			}
		}
	}
}
