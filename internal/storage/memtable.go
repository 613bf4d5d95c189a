package storage

import (
	"fmt"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/hugepage"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
)

// keyEntry is everything a keyed memtable holds for one sort key: the
// versions of each group it has seen, with what the version rules decided
// about each, and the key's deletes. Fields other than key change under the
// memtable's write lock; readers read them under its read lock.
//
// The fields a skip-list search reads of each node it passes (pfx, next and
// the first levels of the tower) come first, and an entry is 128 bytes, so
// that in a slab (64-byte aligned) they share one cache line: a search
// over cold memory then waits for one line per node instead of three (the
// entry, its tower and its key's bytes).
type keyEntry struct {
	pfx    prefix      // the key's first 16 bytes (keyPrefix)
	next   []*keyEntry // the tower: tower[:h] when h ≤ len(tower)
	tower  [2]*keyEntry
	key    []byte // sort key, in the arena: never modified
	groups []groupHist
	dels   []version.Pos
}

// groupHist is one (key, group): its retained versions in commit order and,
// parallel to them, what the rules decided (res). res[i] is kept up to date
// as later versions and deletes arrive (invariant 4 of doc.go), so a read at
// any commit is version.WinnerAt / StateAt over res: a range check.
type groupHist struct {
	id   catalog.GroupID
	reg  version.Register // versioned tables: the incremental rules
	vers []memVersion
	res  []version.Resolved
	win  int // index of the newest winner in vers, -1 while the group is empty
}

// memVersion is one retained version; its Layout is the *layout of its
// payload (nil for a version read without one: lightinputs.go).
type memVersion struct {
	v version.Version
}

// lay returns the layout of v's payload, nil when it has none.
func (v *memVersion) lay() *layout {
	l, _ := v.v.Layout.(*layout)
	return l
}

// layout names the columns of a payload (the non-key columns of a write) in
// payload order, with the types they were written under: a later ALTER
// COLUMN TYPE reads them through types.Cast (R8.1). t is the table the
// write or read that made it saw, which sameValues consults for the
// columns one payload has and another lacks.
type layout struct {
	cols  []catalog.ColumnID
	types []types.Type
	t     *catalog.Table
}

func (l *layout) index(id catalog.ColumnID) int {
	for i, c := range l.cols {
		if c == id {
			return i
		}
	}
	return -1
}

// arena hands out immutable byte slices from large blocks, so that keys,
// ordering values and payloads cost no allocation each.
type arena struct {
	buf   []byte
	slots [][]byte
	used  int64
}

const arenaBlock = 64 << 10

func (a *arena) copy(b []byte) []byte {
	if cap(a.buf)-len(a.buf) < len(b) {
		n := arenaBlock
		if len(b) > n/4 {
			n = len(b)
		}
		a.buf = make([]byte, 0, n)
		// A heap grown past hugepage.Reserve: mark its arena before
		// the block's pages are first touched.
		hugepage.Note(unsafe.Pointer(unsafe.SliceData(a.buf)))
	}
	s := len(a.buf)
	a.buf = append(a.buf, b...)
	a.used += int64(len(b))
	return a.buf[s:len(a.buf):len(a.buf)]
}

// reset empties a for reuse once nothing built in it is referenced any
// more (a read's payloads, once its batch holds copies of them), keeping
// its newest blocks: a read that dropped its arena with every batch
// allocated a fresh one per batch, its ordering-value slots alone
// ~200 bytes per key resolved.
func (a *arena) reset() {
	clear(a.slots) // the slots point into dropped blocks too
	a.buf, a.slots, a.used = a.buf[:0], a.slots[:0], 0
}

func (a *arena) orderSlots(n int) [][]byte {
	if n == 0 {
		return nil
	}
	if cap(a.slots)-len(a.slots) < n {
		a.slots = make([][]byte, 0, max(1024, n))
	}
	s := len(a.slots)
	a.slots = a.slots[:s+n]
	return a.slots[s : s+n : s+n]
}

// Per-version memory beyond its bytes, for MemtableBytes accounting: the
// memVersion, its Resolved and the Register's entry.
const versionOverhead = 200

// keyedMem is the memtable of one shard of a keyed table.
type keyedMem struct {
	mu        sync.RWMutex
	list      *skiplist
	arena     arena
	versioned bool
	rows      uint64 // retained version rows
	deletes   uint64
	minCommit uint64
	maxCommit uint64
	colBytes  map[catalog.ColumnID]uint64
	// The bytes the Sort and Order columns of a flush of the versions and
	// deletes added here take, so that the flush sizes them without a pass
	// over every version. Versions a memtable shares with another
	// (memBuilder.clone) are not counted: an underestimate only regrows.
	sortBytes, orderBytes uint64
	// Slabs that new keys, their groups and the groups' first versions are
	// cut from (cut, pending.go): one allocation per many keys instead of
	// several per key, and far fewer objects for the garbage collector.
	slabEntries []keyEntry
	groups      []groupHist
	vers        []memVersion
	res         []version.Resolved
	// The slab the Registers' counted sets grow into (versioned tables).
	counted version.Slab
	// tied is set when an outcome consulted a version's values (a tie on
	// every ordering value, version.Step.Tied): a read resolving versions
	// fed without their values (runscan.go, resolveLight) must then feed
	// them again with them. Only a reader's scratch memtable looks at it.
	tied bool
	// scratch of entries, kept between writes.
	scratch entryScratch
	// unlinked is how many keys the skip list holds unlinked, or is
	// linking (set under mu; read without it by ordered); linkMu is held
	// by the one ordered call that links them, and linking (under mu) is
	// how many keys that call took and has not finished linking.
	unlinked atomic.Int64
	linkMu   sync.Mutex
	linking  int
}

// entryScratch is the work space of keyedMem.entries. It keeps the
// previous call's keys and entries (prev) beside the current ones: a
// statement that writes two attribute groups is two writes of the same
// keys in the same rows, and the second finds each row's entry by
// comparing its key with the first's, warm in the cache, instead of a
// hash probe. Entries are never removed from a memtable, so an entry
// found by any earlier call is still the key's entry.
type entryScratch struct {
	keys          []byte
	offs, missing []int
	ents          []*keyEntry
	colSizes      []uint64     // applyVersions' bytes per payload column
	groups        []*groupHist // addEncoded's rows' groups, looked up ahead
	sink          uint64       // what groupsAhead read, kept so the loads stay
	prev          struct {
		keys []byte
		offs []int // len(ents)+1 bounds
		ents []*keyEntry
	}
}

// rotate makes the current keys and entries the previous ones and empties
// the current ones, reusing the old previous ones' memory.
func (sc *entryScratch) rotate() {
	p := &sc.prev
	p.keys, sc.keys = sc.keys, p.keys[:0]
	p.offs, sc.offs = sc.offs, p.offs[:0]
	p.ents, sc.ents = sc.ents, p.ents[:0]
	sc.missing = sc.missing[:0]
}

// firstVersions is the capacity a group's version lists start with: a
// memtable typically holds a few versions of each key between flushes.
const firstVersions = 2

func newKeyedMem(versioned bool) *keyedMem { return newKeyedMemSized(versioned, 0) }

// newKeyedMemSized returns an empty keyed memtable with room in its key
// index for keys keys.
func newKeyedMemSized(versioned bool, keys int) *keyedMem {
	return &keyedMem{list: newSkiplist(keys), versioned: versioned, colBytes: map[catalog.ColumnID]uint64{}}
}

// keys returns how many keys the memtable holds.
func (m *keyedMem) keys() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.list.n
}

// bytes estimates the memory the memtable holds.
func (m *keyedMem) bytes() uint64 {
	return uint64(m.arena.used) + m.rows*versionOverhead + uint64(m.list.n)*64
}

// keyedWrite is a Write prepared for applying: where its key, ordering and
// payload columns sit in the batch. It is built once per write per commit.
type keyedWrite struct {
	w      *Write
	keyPos []int // batch positions of the ORDER BY columns, in order
	ordPos []int // batch positions of the group's VALID BY then REVISION BY
	payPos []int // batch positions of the payload (non-key) columns
	lay    *layout
	ord    version.Ordering
	seq0   uint32
	groups int // the table's attribute groups: room a new key's entry gets
}

func (m *keyedMem) note(commit uint64) {
	if m.minCommit == 0 || commit < m.minCommit {
		m.minCommit = commit
	}
	m.maxCommit = max(m.maxCommit, commit)
}

// entry returns the entry of key, inserting it (with key copied into the
// arena, and room for groups groups) if the memtable has none. Callers hold
// the write lock.
func (m *keyedMem) entry(key []byte, groups int) *keyEntry {
	if e := m.list.get(key); e != nil {
		return e
	}
	var prev [maxHeight]*keyEntry
	m.list.seek(key, &prev) // only for prev: the key is not there
	return m.newEntry(key, groups, &prev)
}

// newEntry inserts an entry for key, which the memtable lacks, after the
// nodes prev that a seek for key filled.
func (m *keyedMem) newEntry(key []byte, groups int, prev *[maxHeight]*keyEntry) *keyEntry {
	e := m.makeEntry(key, groups)
	m.list.insert(e, prev)
	return e
}

// addEntry adds an entry for key, which the memtable lacks, to its key
// index, to be linked into its order later (skiplist.add).
func (m *keyedMem) addEntry(key []byte, groups int) *keyEntry {
	e := m.makeEntry(key, groups)
	m.list.add(e)
	return e
}

// makeEntry returns a new entry for key, from the memtable's slabs.
func (m *keyedMem) makeEntry(key []byte, groups int) *keyEntry {
	e := &cut(&m.slabEntries, 1)[0]
	e.key = m.arena.copy(key)
	// The groups come from a slab too; group() fills an element within
	// capacity in place, as it does for a reused scratch entry.
	if groups > 0 {
		e.groups = cut(&m.groups, groups)[:0]
	}
	return e
}

// entries returns the entry of each row's key, adding the keys the
// memtable lacks (insertMissing). Rows are still applied in their order.
// The result is valid until the next call.
//
// sp, when not nil, is the lookup of the same rows made while the commit's
// fsync ran (prepare.go): its found entries are taken as they are, and its
// missing keys are looked up again only if m has had keys inserted since.
func (m *keyedMem) entries(kw *keyedWrite, rows []int, sp *shardPrep) []*keyEntry {
	b := kw.w.Batch
	sc := &m.scratch
	sc.rotate()
	pw := &sc.prev
	if sp != nil && sp.m == m && len(sp.ents) == len(rows) && slices.Equal(sp.keyPos, kw.keyPos) {
		sc.keys = append(sc.keys, sp.keys...)
		sc.offs = append(sc.offs, sp.offs...)
		sc.ents = append(sc.ents, sp.ents...)
		grown := m.list.n != sp.n
		for _, i := range sp.missing {
			if grown {
				k := sc.keys[sc.offs[i]:sc.offs[i+1]]
				var e *keyEntry
				if i < len(pw.ents) && string(pw.keys[pw.offs[i]:pw.offs[i+1]]) == string(k) {
					e = pw.ents[i]
				} else {
					e = m.list.get(k)
				}
				if e != nil {
					sc.ents[i] = e
					continue
				}
			}
			sc.missing = append(sc.missing, i)
		}
		return m.insertMissing(kw)
	}
	for i, r := range rows {
		start := len(sc.keys)
		for _, p := range kw.keyPos {
			sc.keys = types.AppendKeyAt(sc.keys, b.Cols[p], r)
		}
		sc.offs = append(sc.offs, start)
		k := sc.keys[start:]
		var e *keyEntry
		if i < len(pw.ents) && string(pw.keys[pw.offs[i]:pw.offs[i+1]]) == string(k) {
			e = pw.ents[i] // the same key in the same row of the previous write
		} else if e = m.list.get(k); e == nil {
			sc.missing = append(sc.missing, i)
		}
		sc.ents = append(sc.ents, e)
	}
	sc.offs = append(sc.offs, len(sc.keys))
	return m.insertMissing(kw)
}

// insertMissing adds the keys of the rows sc.missing lists (skiplist.add:
// to the key index, linked into the list's order later) and fills their
// entries in; it returns the scratch's entries.
func (m *keyedMem) insertMissing(kw *keyedWrite) []*keyEntry {
	sc := &m.scratch
	if len(sc.missing) == 0 {
		return sc.ents
	}
	for _, i := range sc.missing {
		k := sc.keys[sc.offs[i]:sc.offs[i+1]]
		e := m.list.get(k) // the same new key earlier in the write
		if e == nil {
			e = m.addEntry(k, kw.groups)
		}
		sc.ents[i] = e
	}
	m.unlinked.Store(int64(len(m.list.unlinked) + m.linking))
	return sc.ents
}

// ordered links the keys added since it last ran into m's skip list, so
// that a walk of the list in key order sees every key. Every such walk
// calls it first, holding none of m's locks; a memtable whose keys are all
// linked costs it an atomic load. The keys are sorted without the write
// lock and linked linkChunk at a time under it, so that a scan arriving
// after a long ingest (400 k random keys take ~0.15 s to sort and link) holds
// commits up for a few milliseconds at a time, not for all of it. One
// caller links at a time (linkMu); the count stays above zero until the
// keys it took are linked, so another waits for them rather than walking
// without them.
func (m *keyedMem) ordered() {
	if m.unlinked.Load() == 0 {
		return
	}
	m.linkMu.Lock()
	defer m.linkMu.Unlock()
	m.mu.Lock()
	es := m.list.takeUnlinked()
	m.linking = len(es)
	m.mu.Unlock()
	es = sortEntries(es)
	var prev [maxHeight]*keyEntry
	for i := 0; i < len(es); i += linkChunk {
		m.mu.Lock()
		m.list.linkSorted(es[i:min(i+linkChunk, len(es))], &prev, i == 0)
		m.mu.Unlock()
	}
	m.mu.Lock()
	m.linking = 0
	m.unlinked.Store(int64(len(m.list.unlinked)))
	m.mu.Unlock()
}

// linkChunk is how many keys ordered links per hold of the write lock.
const linkChunk = 4096

func (e *keyEntry) group(id catalog.GroupID, ord version.Ordering) *groupHist {
	for i := range e.groups {
		if e.groups[i].id == id {
			return &e.groups[i]
		}
	}
	if n := len(e.groups); n < cap(e.groups) {
		// A reused scratch entry (reader.resolveKey): keep the slices'
		// memory.
		e.groups = e.groups[:n+1]
		g := &e.groups[n]
		g.id, g.win, g.vers, g.res = id, -1, g.vers[:0], g.res[:0]
		g.reg.Init(ord)
		return g
	}
	e.groups = append(e.groups, groupHist{id: id, win: -1})
	g := &e.groups[len(e.groups)-1]
	g.reg.Init(ord)
	return g
}

// find returns the index of the version at position p (binary search: vers
// is in commit order).
func (g *groupHist) find(p version.Pos) int {
	if g.win >= 0 && g.vers[g.win].v.Pos() == p {
		return g.win // what a new version beats or loses to is mostly the newest winner
	}
	i := sort.Search(len(g.vers), func(i int) bool { return g.vers[i].v.Pos().Compare(p) >= 0 })
	if i < len(g.vers) && g.vers[i].v.Pos() == p {
		return i
	}
	return -1
}

// applyVersions adds rows of a WriteVersion (indexes into the batch) at
// commit. scratch is reused between calls.
func (m *keyedMem) applyVersions(kw *keyedWrite, rows []int, commit uint64, scratch *[]byte, sp *shardPrep) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.note(commit)
	b := kw.w.Batch
	ents := m.entries(kw, rows, sp)
	// The payload columns' bytes, added to colBytes once per write rather
	// than by a map update per value.
	sizes := zeros(m.scratch.colSizes, len(kw.payPos))
	m.scratch.colSizes = sizes
	defer m.addColBytes(kw, sizes)
	acc := m.acc()
	defer m.fold(&acc)
	// The rows' values encoded while the fsync ran (prepare.go): the
	// memtable keeps that block instead of copies in its arena.
	if pv := sp.encoded(m, rows, kw); pv != nil {
		vals, segs := m.takeEncoded(pv, sizes)
		slots := m.arena.orderSlots(len(rows) * len(kw.ordPos))
		return m.addEncoded(kw, rows, ents, commit, vals, segs, slots, &acc)
	}
	for ri, r := range rows {
		e := ents[ri]
		v := version.Version{Key: e.key, Group: version.GroupID(kw.w.Group), Commit: commit, Seq: kw.seq0 + uint32(r)}
		v.Order = m.arena.orderSlots(len(kw.ordPos))
		buf := (*scratch)[:0]
		for i, p := range kw.ordPos {
			buf = types.AppendKeyAt(buf[:0], b.Cols[p], r)
			v.Order[i] = m.arena.copy(buf)
		}
		buf = buf[:0]
		for i, p := range kw.payPos {
			n := len(buf)
			buf = types.AppendBinaryAt(buf, b.Cols[p], r)
			sizes[i] += uint64(len(buf) - n)
		}
		v.Values = m.arena.copy(buf)
		*scratch = buf
		g := e.group(kw.w.Group, kw.ord)
		if err := acc.add(m.versioned, g, mv(v, kw.lay), kw.ord); err != nil {
			return err
		}
	}
	return nil
}

// zeros returns n zeros in s's memory.
func zeros(s []uint64, n int) []uint64 {
	s = slices.Grow(s[:0], n)[:n]
	clear(s)
	return s
}

// addColBytes adds a write's bytes per payload column to colBytes.
func (m *keyedMem) addColBytes(kw *keyedWrite, sizes []uint64) {
	for i, p := range kw.payPos {
		m.colBytes[kw.w.Cols[p]] += sizes[i]
	}
}

// takeEncoded hands the block of values pv encoded to the memtable, which
// keeps it, and adds its bytes per payload column to sizes.
func (m *keyedMem) takeEncoded(pv *shardPrep, sizes []uint64) (vals []byte, segs []int) {
	copy(sizes, pv.sizes)
	vals, segs = pv.vals, pv.segs
	// Its capacity is what the memtable holds: sized from the previous
	// block's rows (maybe another table's), it can exceed what is used.
	m.arena.used += int64(cap(vals))
	pv.vals = nil // the memtable's now, not the prepare's to reuse
	return vals, segs
}

// addEncoded runs the rules on rows of kw whose ordering values and
// payloads are in vals (segments segs, as shardPrep.encode lays them out),
// taking their Order slices from slots (len(kw.ordPos) per row). ents[i]
// is row i's entry.
func (m *keyedMem) addEncoded(kw *keyedWrite, rows []int, ents []*keyEntry, commit uint64, vals []byte, segs []int, slots [][]byte, acc *versionAcc) error {
	o := len(kw.ordPos)
	k := o + 1
	gs := m.scratch.groups
	for ri, r := range rows {
		if ri%lookAhead == 0 {
			gs = m.groupsAhead(kw, ents[ri:min(ri+lookAhead, len(rows))], gs)
		}
		v := version.Version{Key: ents[ri].key, Group: version.GroupID(kw.w.Group), Commit: commit, Seq: kw.seq0 + uint32(r)}
		if o > 0 {
			v.Order = slots[ri*o : ri*o+o : ri*o+o]
		}
		// Capped so that nothing appends into the next value.
		for i := range v.Order {
			lo, hi := segs[ri*k+i], segs[ri*k+i+1]
			v.Order[i] = vals[lo:hi:hi]
		}
		lo, hi := segs[ri*k+k-1], segs[ri*k+k]
		v.Values = vals[lo:hi:hi]
		if err := acc.add(m.versioned, gs[ri%lookAhead], mv(v, kw.lay), kw.ord); err != nil {
			return err
		}
	}
	clear(gs)
	m.scratch.groups = gs[:0]
	return nil
}

// lookAhead is how many rows addEncoded finds the groups of, and touches
// the memory of, before it adds their versions: a memtable of a million
// keys is far larger than the caches, and each row's entry, group, lists
// and winner's ordering values are cache misses (half the committing
// goroutine's time at 1 M keys), which taken row by row follow one
// another. Looked up in a loop of their own they overlap; 256 rows'
// worth (~100 KB) stays in L2 until the rows are added.
const lookAhead = 256

// groupsAhead returns, in gs's memory, the group of kw's group of each
// entry in ents (creating it where the entry has none), having read the
// memory adding a version to each reads first.
func (m *keyedMem) groupsAhead(kw *keyedWrite, ents []*keyEntry, gs []*groupHist) []*groupHist {
	gs = gs[:0]
	for _, e := range ents {
		gs = append(gs, e.group(kw.w.Group, kw.ord))
	}
	// A group's slice within its entry does not move while the rows are
	// added: adding versions never adds a group.
	var sink uint64
	for _, g := range gs {
		if w := g.win; w >= 0 {
			sink += g.vers[w].v.Commit + g.res[w].EndedAt
		}
		sink += uint64(g.reg.Touch())
	}
	m.scratch.sink += sink
	return gs
}

// growIn returns s moved to a piece of slab with twice its capacity
// (firstVersions if it has none), for s full. The old piece is left as it
// is: a memtable cloned from this one (memBuilder.clone) may share it.
func growIn[T any](slab *[]T, s []T) []T {
	out := cut(slab, max(firstVersions, 2*cap(s)))[:len(s)]
	copy(out, s)
	return out
}

func mv(v version.Version, lay *layout) memVersion {
	v.Layout = lay
	return memVersion{v: v}
}

// versionAcc is what adding versions changes of a memtable beyond the
// groups themselves: the counts a flush sizes its part by, whether an
// outcome was a tie, and the slabs new groups' first versions come from,
// folded into the memtable once per write (fold).
//
// The slabs are used for growth too: a group's lists that outgrow their
// piece move to one twice as large cut from the same slab, rather than to
// the heap, so that adding versions allocates per slab, not per version
// (the old piece stays in the slab, as the first did before: a memtable's
// slabs are dropped together).
type versionAcc struct {
	rows, sortBytes, orderBytes uint64
	tied                        bool
	vers                        *[]memVersion
	res                         *[]version.Resolved
	counted                     *version.Slab
}

// acc returns a versionAcc over m's own slabs.
func (m *keyedMem) acc() versionAcc {
	return versionAcc{vers: &m.vers, res: &m.res, counted: &m.counted}
}

// fold adds acc's counts to m and empties them.
func (m *keyedMem) fold(acc *versionAcc) {
	m.rows += acc.rows
	m.sortBytes += acc.sortBytes
	m.orderBytes += acc.orderBytes
	m.tied = m.tied || acc.tied
	acc.rows, acc.sortBytes, acc.orderBytes, acc.tied = 0, 0, 0, false
}

// addVersion runs the rules on one new version of g and records the result
// (invariant 4 of doc.go).
func (m *keyedMem) addVersion(g *groupHist, nv memVersion, ord version.Ordering) error {
	acc := m.acc()
	err := acc.add(m.versioned, g, nv, ord)
	m.fold(&acc)
	return err
}

// add runs the rules on one new version of g, versioned or upsert, and
// records the result (invariant 4 of doc.go), counting it in acc.
func (acc *versionAcc) add(versioned bool, g *groupHist, nv memVersion, ord version.Ordering) error {
	v := &nv.v
	idx := len(g.vers)
	res := version.Resolved{Commit: v.Commit, Seq: v.Seq, By: -1}
	var outcome version.Outcome
	var other version.Pos
	var hasOther bool
	if versioned {
		st, err := g.reg.AddIn(v, acc.counted)
		if err != nil {
			return fmt.Errorf("storage: commit %d: %w", v.Commit, err)
		}
		outcome, other, hasOther = st.Outcome, st.Other, st.HasOther
		acc.tied = acc.tied || st.Tied
	} else {
		// Upsert (rule 4): only the winner is consulted, losers and repeats
		// are accepted and discarded.
		var w *version.Version
		if g.win >= 0 {
			w = &g.vers[g.win].v
			other, hasOther = w.Pos(), true
		}
		acc.tied = acc.tied || version.Tied(ord, w, v)
		outcome = version.Decide(ord, w, v)
	}
	switch outcome {
	case version.Repeat:
		if !versioned || ord.Horizon == nil || other.Commit > ord.Horizon(v.Commit) {
			return nil
		}
		// Under retention, whether v repeats the version it equals
		// depends on when that one stopped counting, which versions in
		// parts may have decided: the memtable sees only its own. Keep v,
		// marked dropped as this memtable sees it; a read that resolves
		// the key with its parts decides again (rule 3, Ordering.Horizon).
		res.State = version.Dropped
		res.WonAt, res.EndedAt = version.NoCommit, version.NoCommit
		res.SupersededBy = other.Commit
		res.By = g.find(other)
	case version.Lost:
		if !versioned {
			return nil
		}
		res.State = version.Late
		res.WonAt, res.EndedAt = version.NoCommit, version.NoCommit
		res.SupersededBy = other.Commit
		res.By = g.find(other)
	case version.Won:
		res.State = version.Current
		res.WonAt, res.EndedAt = v.Commit, version.Forever
		if hasOther {
			if i := g.find(other); i >= 0 {
				p := &g.res[i]
				p.State, p.EndedAt, p.SupersededBy, p.By = version.Superseded, v.Commit, v.Commit, idx
			}
		}
		g.win = idx
	}
	if len(g.vers) == cap(g.vers) {
		g.vers = growIn(acc.vers, g.vers)
	}
	if len(g.res) == cap(g.res) {
		g.res = growIn(acc.res, g.res)
	}
	g.vers = append(g.vers, nv)
	g.res = append(g.res, res)
	acc.rows++
	acc.sortBytes += uint64(len(v.Key))
	for _, o := range v.Order {
		acc.orderBytes += uint64(uvarintLen(uint64(len(o))) + len(o))
	}
	return nil
}

// applyDeletes ends every group of each key at its position (R5.4).
func (m *keyedMem) applyDeletes(kw *keyedWrite, rows []int, commit uint64, scratch *[]byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.note(commit)
	b := kw.w.Batch
	for _, r := range rows {
		buf := (*scratch)[:0]
		for _, p := range kw.keyPos {
			buf = types.AppendKeyAt(buf, b.Cols[p], r)
		}
		*scratch = buf
		e := m.entry(buf, kw.groups)
		if err := m.deleteKey(e, version.Delete{Key: e.key, Commit: commit, Seq: kw.seq0 + uint32(r)}); err != nil {
			return err
		}
	}
	return nil
}

// deleteKey ends every group of e at d's position.
func (m *keyedMem) deleteKey(e *keyEntry, d version.Delete) error {
	e.dels = append(e.dels, d.Pos())
	m.deletes++
	m.sortBytes += uint64(len(d.Key))
	for gi := range e.groups {
		g := &e.groups[gi]
		if m.versioned {
			if _, _, err := g.reg.Delete(&d); err != nil {
				return fmt.Errorf("storage: commit %d: %w", d.Commit, err)
			}
		}
		if g.win >= 0 {
			p := &g.res[g.win]
			p.State, p.EndedAt, p.SupersededBy, p.By = version.Deleted, d.Commit, d.Commit, -1
			g.win = -1
		}
	}
	return nil
}

// winnerAt returns the index of g's winner at commit n, or -1.
func (g *groupHist) winnerAt(n uint64) int {
	if g.win >= 0 && version.StateAt(g.res[g.win], n) == version.Current {
		return g.win // the common case: reading at or after the newest winner
	}
	return version.WinnerAt(g.res, n)
}
