package storage

import (
	"bytes"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"unsafe"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/hugepage"
	"github.com/strata-db/strata/internal/version"
)

// Read-your-writes inside BEGIN … COMMIT (R5.1).
//
// A transaction's writes are buffered by its session and committed as one
// commit at COMMIT; until then no other session sees them. Its own
// statements must see them, though, so the session reads through
// WithPending: a private state whose touched shards hold the committed
// memtable rows up to the snapshot's commit n plus the pending writes, as
// the commit pipeline would apply them.
//
// Where the pending writes sit: at commit n itself, at positions from
// pendingSeq on, after every row commit n really has (R3.1 orders by
// commit, then position). Any later position would do for the rules, but
// not n+1 or later: the shards the writes do not touch are shared with
// the published state and read at the snapshot's commit, and commit n+1
// is the one another session may take meanwhile. A read at an explicit
// AS OF goes to the snapshot the pending one was built on (readsAt), so
// AS OF n reads the committed commit n only.
//
// The choice, against reading a memtable of the pending writes as one more
// source: every read path of a shard (the memtable-only walk, the merged
// read of partscan.go, the run fast paths of runscan.go, Lookup) reads
// exactly one memtable, the newest source. Giving them a second one would
// touch all of them; a private copy of the touched shards' memtables, with
// the pending writes applied by the engine's own applyWrite, reads through
// every path unchanged. Parts are shared, never copied.
//
// Cost: per call, O(K) for the K keys of the memtables of the shards the
// writes touch — keys the writes do not touch are cloned as they stand
// (mergeMemtables), keys they touch re-resolved by the rules — plus
// applying the pending writes twice (once to learn which shards they
// touch). Parts are not read and payloads are shared with the original
// memtable's arena. BenchmarkWithPending has the numbers.

// pendingSeq is the first position inside commit n of the pending writes:
// above any real commit's rows (a commit is bounded by wal.MaxPayload).
const pendingSeq = 1 << 31

// WithPending returns a snapshot that reads as if writes were committed
// right after s's commit, on top of s, under the same version rules (R3
// ordering, late writes, repeats, deletes, groups): reads of "now" (AsOf
// 0) see them, reads at an explicit AS OF (any commit ≤ s.Commit()) see
// only what was committed. Commit, Commits and CommitAt report s's
// (current_commit() is unchanged). The pending rows read with _commit
// s.Commit() (and so do versions() and _superseded_by): they are placed
// after every row of that commit, a number they share until COMMIT gives
// them theirs.
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
	if s.past != nil {
		return nil, fmt.Errorf("storage: WithPending on a snapshot that already has pending writes")
	}
	base := s.st
	if err := validateWrites(base.cat, writes); err != nil {
		return nil, err
	}
	st := &state{commit: base.commit, cat: base.cat, tables: base.tables, commits: base.commits}
	if len(writes) > 0 {
		st.tables = maps.Clone(base.tables)
		if err := s.e.applyPending(st, base, writes); err != nil {
			return nil, err
		}
	}
	h, ok := acquireState(st)
	if !ok {
		// Every part st names is one of base's, which s holds.
		return nil, fmt.Errorf("storage: a part of the snapshot at commit %d was retired while it was held", base.commit)
	}
	// past is never released itself: the parts it reads are the ones
	// the pending snapshot holds.
	out := &Snapshot{e: s.e, st: st, past: &Snapshot{e: s.e, st: base}}
	out.hold(h)
	return out, nil
}

// readsAt returns the snapshot a read at asOf uses: for a snapshot with
// pending writes and an explicit AS OF, the one it was built on. A
// released snapshot answers for itself (ErrReleased).
func (s *Snapshot) readsAt(asOf uint64) *Snapshot {
	if s.past != nil && asOf != 0 && !s.released.Load() {
		return s.past
	}
	return s
}

// applyPending fills st.tables with the touched tables' shards rebuilt
// with writes applied at base's commit, from pendingSeq on.
func (e *Engine) applyPending(st, base *state, writes []Write) error {
	n := base.commit
	// First the writes alone, each table into fresh empty memtables: the
	// engine's routing and application decide which shards they touch
	// and what each keeps.
	fresh := map[catalog.TableID]*tableData{}
	seq := uint32(pendingSeq)
	var scratch []byte
	for i := range writes {
		w := &writes[i]
		td := base.tables[w.Table]
		t, ok := base.cat.TableByID(w.Table)
		if td == nil || !ok {
			return fmt.Errorf("%w: write %d: no table %d at commit %d", ErrInvalidTxn, i, w.Table, n)
		}
		if uint64(seq)+uint64(w.Batch.Rows) > 1<<32-1 {
			return fmt.Errorf("storage: a transaction of more than %d rows cannot be read before its commit", uint64(1<<32-1-pendingSeq))
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
		if err := e.applyWrite(ptd, t, w, n, seq, &scratch, nil); err != nil {
			return err
		}
		seq += uint32(w.Batch.Rows)
	}
	// Then each touched shard: its committed memtable rows up to n and
	// the pending ones, together in a private memtable.
	for id, ptd := range fresh {
		td := base.tables[id]
		t, _ := base.cat.TableByID(id)
		ntd := &tableData{id: td.id, keyed: td.keyed, shards: slices.Clone(td.shards)}
		for i, psd := range ptd.shards {
			sd := td.shards[i]
			nsd := &shardData{num: sd.num, rng: sd.rng, frozen: sd.frozen, parts: sd.parts, asof: sd.asof}
			switch {
			case td.keyed && psd.keyed.list.n == 0, !td.keyed && psd.app.rows == 0:
				continue
			case td.keyed:
				m, err := mergeMemtables(t, sd.keyed, n, psd.keyed, e.horizonFn(t))
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
// and pend, old's inputs committed at or before n and then pend's (all at
// n, from pendingSeq on), as the memtable would hold them had pend's
// writes been committed right after n's rows.
//
// A key only old has, with nothing committed after n, is cloned as it
// stands (nothing after n changed it): its versions and deletes, which are
// never changed once appended, are shared with old up to their length;
// its groups and what the rules decided (rewritten in place by later
// commits) are copied into slabs shared by all cloned keys. Every other key — one pend writes, or one a commit after n
// touched — is re-resolved from its inputs in position order by the rules
// (addVersion, deleteKey), as a merged read does. Keys arrive in order, so
// the skip list is built by appending. old is read under its read lock,
// released every cloneBatch keys so that commits to it wait for no more
// than that.
func mergeMemtables(t *catalog.Table, old *keyedMem, n uint64, pend *keyedMem, horizon func(uint64) uint64) (*keyedMem, error) {
	m := newKeyedMem(old.versioned)
	for id, b := range pend.colBytes {
		m.colBytes[id] += b
	}
	b := &memBuilder{m: m, t: t, ords: map[catalog.GroupID]version.Ordering{}, horizon: horizon}
	b.initTail()
	old.ordered()
	pend.ordered()
	old.mu.RLock()
	locked := true
	defer func() {
		if locked {
			old.mu.RUnlock()
		}
	}()
	for id, c := range old.colBytes {
		m.colBytes[id] += c
	}
	oe, pe := old.list.first(), pend.list.first()
	for steps := 1; oe != nil || pe != nil; steps++ {
		if steps%cloneBatch == 0 {
			// Entries are never removed, so oe stays valid; what is
			// inserted meanwhile is committed after n.
			old.mu.RUnlock()
			old.mu.RLock()
		}
		c := 0
		switch {
		case pe == nil:
			c = -1
		case oe == nil:
			c = 1
		default:
			c = bytes.Compare(oe.key, pe.key)
		}
		var err error
		switch {
		case c < 0 && committedBy(oe, n):
			b.clone(oe)
		case c < 0:
			err = b.resolve(oe.key, inputs(b.ins[:0], oe, n))
		case c > 0:
			err = b.resolve(pe.key, inputs(b.ins[:0], pe, n))
		default:
			err = b.resolve(oe.key, inputs(inputs(b.ins[:0], oe, n), pe, n))
		}
		if err != nil {
			return nil, err
		}
		if c <= 0 {
			oe = oe.next[0]
		}
		if c >= 0 {
			pe = pe.next[0]
		}
	}
	old.mu.RUnlock()
	locked = false
	return m, nil
}

// cloneBatch is how many keys mergeMemtables reads per hold of the
// original memtable's read lock.
const cloneBatch = 512

// committedBy reports whether every input of e is committed at or before n.
func committedBy(e *keyEntry, n uint64) bool {
	for gi := range e.groups {
		g := &e.groups[gi]
		if len(g.vers) > 0 && g.vers[len(g.vers)-1].v.Commit > n {
			return false // vers are in commit order
		}
	}
	for _, d := range e.dels {
		if d.Commit > n {
			return false
		}
	}
	return true
}

// inputs appends e's versions and deletes committed at or before n.
func inputs(ins []keyInput, e *keyEntry, n uint64) []keyInput {
	for gi := range e.groups {
		g := &e.groups[gi]
		for i := range g.vers {
			if v := g.vers[i]; v.v.Commit <= n {
				ins = append(ins, keyInput{pos: v.v.Pos(), group: g.id, mv: v})
			}
		}
	}
	for _, p := range e.dels {
		if p.Commit <= n {
			ins = append(ins, keyInput{pos: p, tomb: true})
		}
	}
	return ins
}

// memBuilder fills a private keyed memtable with keys in ascending order.
type memBuilder struct {
	m    *keyedMem
	t    *catalog.Table
	ords map[catalog.GroupID]version.Ordering
	// horizon is the table's Ordering.Horizon (Engine.horizonFn).
	horizon func(uint64) uint64
	ins     []keyInput
	tail    [maxHeight]*keyEntry
	// Slabs the cloned entries are cut from: one allocation per many keys.
	entries []keyEntry
	groups  []groupHist
	res     []version.Resolved
	nexts   []*keyEntry
}

func (b *memBuilder) initTail() {
	for lvl := range b.tail {
		b.tail[lvl] = &b.m.list.head
	}
}

// slabSize is the length of the next slab after one of length prev, for
// at least k elements: doubling from 16 up to 1024, so that a copy of a
// few keys stays small and one of many costs one allocation per 1024.
func slabSize(prev, k int) int {
	return max(k, min(1024, max(16, 2*prev)))
}

// appendEntry links a new entry for key, greater than every key so far,
// at the end of the skip list.
func (b *memBuilder) appendEntry(key []byte) *keyEntry {
	if len(b.entries) == cap(b.entries) {
		b.entries = make([]keyEntry, 0, slabSize(cap(b.entries), 1))
	}
	b.entries = b.entries[:len(b.entries)+1]
	e := &b.entries[len(b.entries)-1]
	e.key, e.pfx = key, keyPrefix(key)
	l := b.m.list
	h := l.randomHeight()
	if h > l.height {
		l.height = h
	}
	e.next = e.towerOf(h, &b.nexts)
	for lvl := 0; lvl < h; lvl++ {
		b.tail[lvl].next[lvl] = e
		b.tail[lvl] = e
	}
	l.indexed(e)
	return e
}

// clone appends a copy of src, which nothing after the read commit
// touched: its key (immutable, in the original's arena), versions and
// deletes are shared, its groups and what the rules decided copied.
func (b *memBuilder) clone(src *keyEntry) {
	e := b.appendEntry(src.key)
	m := b.m
	if len(src.groups) > 0 {
		e.groups = cut(&b.groups, len(src.groups))
		for gi := range src.groups {
			sg, g := &src.groups[gi], &e.groups[gi]
			g.id, g.win = sg.id, sg.win
			// A version is never changed once appended, and appends
			// after n land beyond this length: the array is shared.
			g.vers = sg.vers[:len(sg.vers):len(sg.vers)]
			// What the rules decided is rewritten in place by later
			// commits: copied.
			g.res = cut(&b.res, len(sg.res))
			copy(g.res, sg.res)
			m.rows += uint64(len(sg.vers))
			if k := len(sg.vers); k > 0 {
				m.note(sg.vers[0].v.Commit)
				m.note(sg.vers[k-1].v.Commit)
			}
		}
	}
	if len(src.dels) > 0 {
		e.dels = src.dels[:len(src.dels):len(src.dels)] // append-only, as vers
		m.deletes += uint64(len(src.dels))
		m.note(src.dels[0].Commit)
		m.note(src.dels[len(src.dels)-1].Commit)
	}
}

// cut returns k zeroed elements from a slab, with their capacity capped
// so that an append never writes into a neighbour's.
func cut[T any](slab *[]T, k int) []T {
	if cap(*slab)-len(*slab) < k {
		*slab = make([]T, 0, slabSize(cap(*slab), k))
		hugepage.Note(unsafe.Pointer(unsafe.SliceData(*slab))) // as arena.copy does
	}
	s := len(*slab)
	*slab = (*slab)[:s+k]
	return (*slab)[s : s+k : s+k]
}

// resolve appends key with ins run through the version rules in position
// order; a key with no input (only later commits touched it) is left out.
func (b *memBuilder) resolve(key []byte, ins []keyInput) error {
	b.ins = ins
	if len(ins) == 0 {
		return nil
	}
	m := b.m
	slices.SortFunc(ins, func(a, b keyInput) int { return a.pos.Compare(b.pos) })
	e := b.appendEntry(m.arena.copy(key))
	for _, in := range ins {
		m.note(in.pos.Commit)
		if in.tomb {
			if err := m.deleteKey(e, version.Delete{Key: e.key, Commit: in.pos.Commit, Seq: in.pos.Seq}); err != nil {
				return err
			}
			continue
		}
		ord, ok := b.ords[in.group]
		if !ok {
			g, found := b.t.GroupByID(in.group)
			if !found {
				return fmt.Errorf("storage: table %s: unknown group %d", b.t.Name, in.group)
			}
			ord = ordering(b.t, g)
			ord.Horizon = b.horizon
			b.ords[in.group] = ord
		}
		mv := in.mv
		mv.v.Key = e.key
		if err := m.addVersion(e.group(in.group, ord), mv, ord); err != nil {
			return err
		}
	}
	return nil
}
