package merge

import (
	"bytes"
	"fmt"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/version"
)

// keyedSink merges the rows of an upsert or versioned shard. The merged
// stream arrives sorted by (key, group, commit, seq); the sink stages one
// (key, group) at a time, so its memory is bounded by the versions of the
// largest (key, group), and decides that group with the rules of package
// version (doc.go invariant 2): a version.Register for versioned tables,
// version.Decide for upsert tables. Delete markers carry group 0, so a
// key's deletes are all known before any group but the default is decided
// (invariant 3).
type keyedSink struct {
	m         *merger
	versioned bool
	full      bool
	ords      []version.Ordering
	known     []bool
	// cur and hist receive a full merge's runs; delta a partial merge's
	// only run (cur is nil then).
	cur, hist, delta *output

	key     []byte
	haveKey bool
	group   uint16
	dels    []version.Pos
	stage   *part.Data
	vs      []version.Version
	rs      []res
	arena   []byte
	orders  [][]byte
	reg     version.Register
}

func newKeyedSink(m *merger) (*keyedSink, error) {
	t := m.opts.Table
	k := &keyedSink{m: m, versioned: t.Mode == catalog.ModeVersioned, full: m.opts.Oldest, stage: m.lay.newData(0, nil)}
	for _, g := range t.Groups {
		if g.ID > 0xFFFF {
			return nil, fmt.Errorf("merge: group id %d does not fit a part", g.ID)
		}
		for int(g.ID) >= len(k.ords) {
			k.ords = append(k.ords, version.Ordering{})
			k.known = append(k.known, false)
		}
		k.ords[g.ID] = version.Ordering{Valid: t.Names(g.ValidBy), Revision: t.Names(g.RevisionBy), Horizon: m.opts.Horizon}
		k.known[g.ID] = true
	}
	switch {
	case !k.full:
		k.delta = m.newOutput(part.KindDelta)
	case k.versioned:
		k.cur = m.newOutput(part.KindCurrent)
		k.hist = m.newOutput(part.KindHistory)
	default:
		k.cur = m.newOutput(part.KindCurrent)
	}
	return k, nil
}

func (k *keyedSink) row(src *part.Data, in, i int) error {
	sk, g := src.Sort.BytesAt(i), src.Group[i]
	switch {
	case !k.haveKey || !bytes.Equal(sk, k.key):
		if k.haveKey {
			if err := k.finishGroup(); err != nil {
				return err
			}
			if err := k.finishKey(); err != nil {
				return err
			}
		}
		k.key = append(k.key[:0], sk...)
		k.haveKey, k.group, k.dels = true, g, k.dels[:0]
	case g != k.group:
		if err := k.finishGroup(); err != nil {
			return err
		}
		k.group = g
	}
	p := version.Pos{Commit: src.Commit[i], Seq: src.Seq[i]}
	if src.Tomb[i] {
		if g != 0 {
			return fmt.Errorf("%w: delete marker in group %d at commit %d", ErrInput, g, p.Commit)
		}
		// The same delete may reach a merge twice (an engine that kept it
		// in two runs); it is one delete.
		if n := len(k.dels); n == 0 || k.dels[n-1] != p {
			k.dels = append(k.dels, p)
		}
		return nil
	}
	if int(g) >= len(k.known) || !k.known[g] {
		return fmt.Errorf("%w: unknown group %d at commit %d", ErrInput, g, p.Commit)
	}
	st := k.stage
	row := st.Rows
	if err := k.m.lay.copyCols(st, src, in, i, g, false); err != nil {
		return err
	}
	st.Order.AppendFrom(src.Order, i)
	st.Commit = append(st.Commit, p.Commit)
	st.Seq = append(st.Seq, p.Seq)
	st.Rows++
	// Sub-slices of the arenas stay valid when an arena grows (the old
	// array keeps its bytes), and the arenas are rewound only after the
	// group is decided, when nothing refers to them any more.
	a := len(k.orders)
	var err error
	k.orders, err = SplitOrder(k.orders, st.Order.BytesAt(row), k.ords[g].Columns())
	if err != nil {
		return fmt.Errorf("%w: group %d at commit %d: %w", ErrInput, g, p.Commit, err)
	}
	v0 := len(k.arena)
	k.arena = appendValues(k.arena, st, row, k.m.lay.groupCols(g))
	k.vs = append(k.vs, version.Version{
		Key: k.key, Group: version.GroupID(g), Order: k.orders[a:len(k.orders):len(k.orders)],
		Commit: p.Commit, Seq: p.Seq, Values: k.arena[v0:len(k.arena):len(k.arena)],
	})
	return nil
}

// finishGroup decides the staged (key, group) and writes its rows.
func (k *keyedSink) finishGroup() error {
	var err error
	if k.versioned {
		err = k.decideVersioned()
	} else {
		k.decideUpsert()
	}
	if err == nil {
		err = k.emit()
	}
	k.stage.Reset()
	k.vs, k.rs, k.orders, k.arena = k.vs[:0], k.rs[:0], k.orders[:0], k.arena[:0]
	return err
}

// decideVersioned runs the group's versions and the key's deletes through a
// Register in commit order and records each version's resolution the way
// the engine's memtable does: the same transitions as version.Resolve.
func (k *keyedSink) decideVersioned() error {
	k.reg.Init(k.ords[k.group])
	k.resetRes()
	win, di := -1, 0
	del := func(p version.Pos) error {
		if _, _, err := k.reg.Delete(&version.Delete{Key: k.key, Commit: p.Commit, Seq: p.Seq}); err != nil {
			return fmt.Errorf("%w: delete at commit %d: %w", ErrInput, p.Commit, err)
		}
		if win >= 0 {
			r := &k.rs[win]
			r.state, r.endedAt, r.superseded = version.Deleted, p.Commit, p.Commit
		}
		win = -1
		return nil
	}
	for i := range k.vs {
		v := &k.vs[i]
		for ; di < len(k.dels) && k.dels[di].Compare(v.Pos()) < 0; di++ {
			if err := del(k.dels[di]); err != nil {
				return err
			}
		}
		step, err := k.reg.Add(v)
		if err != nil {
			return fmt.Errorf("%w: group %d at commit %d: %w", ErrInput, v.Group, v.Commit, err)
		}
		switch step.Outcome {
		case version.Won:
			k.rs[i] = res{state: version.Current, wonAt: v.Commit, endedAt: version.Forever}
			if win >= 0 {
				r := &k.rs[win]
				r.state, r.endedAt, r.superseded = version.Superseded, v.Commit, v.Commit
			}
			win = i
		case version.Lost:
			k.rs[i] = res{state: version.Late, superseded: step.Other.Commit}
		default:
			k.rs[i] = res{state: version.Dropped}
			k.m.stats.Repeats++
		}
	}
	for ; di < len(k.dels); di++ {
		if err := del(k.dels[di]); err != nil {
			return err
		}
	}
	return nil
}

// resetRes sizes k.rs to the staged versions, zeroed, reusing its array.
func (k *keyedSink) resetRes() {
	n := len(k.vs)
	if cap(k.rs) < n {
		k.rs = make([]res, n, 2*n)
	}
	k.rs = k.rs[:n]
	clear(k.rs)
}

// decideUpsert folds the group's versions with version.Decide in commit
// order, a delete emptying the group (version rule 4), and keeps the final
// winner, marked Current. A partial merge keeps a little more: the winner's
// chain, every version that won since the group's winner last took on the
// final winner's ordering values. Decide's repeat case compares a write
// with the winner of its moment, so an older part's winner with those same
// ordering values still meets each of them in the order it would have
// (doc.go, "Merging by mode"); the versions that lost or were beaten by
// greater ordering values can never matter again.
func (k *keyedSink) decideUpsert() {
	k.resetRes()
	ord := k.ords[k.group]
	cols := ord.Columns()
	win, chain, di := -1, 0, 0
	for i := range k.vs {
		v := &k.vs[i]
		for ; di < len(k.dels) && k.dels[di].Compare(v.Pos()) < 0; di++ {
			win = -1
		}
		var w *version.Version
		if win >= 0 {
			w = &k.vs[win]
		}
		if version.Decide(ord, w, v) != version.Won {
			continue
		}
		if w == nil || cols == 0 || !sameOrder(w.Order, v.Order) {
			chain = i
		}
		win = i
	}
	if di < len(k.dels) {
		win = -1
	}
	for i := range k.rs {
		k.rs[i].state = version.Dropped
	}
	kept := int64(0)
	if win >= 0 {
		k.rs[win] = res{state: version.Current, wonAt: k.vs[win].Commit, endedAt: version.Forever}
		kept++
		if !k.full {
			// Re-run the chain's decisions to find its members.
			cur := chain
			for i := chain + 1; i < win; i++ {
				if version.Decide(ord, &k.vs[cur], &k.vs[i]) == version.Won {
					k.rs[i].state = version.Current
					cur = i
					kept++
				}
			}
			if chain != win {
				k.rs[chain].state = version.Current
				kept++
			}
		}
	}
	k.m.stats.Discarded += int64(len(k.vs)) - kept
}

// sameOrder reports whether two versions of one group have equal ordering
// values.
func sameOrder(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// emit writes the decided group, and in group 0 the key's delete markers,
// interleaved by position so that every output stays sorted.
func (k *keyedSink) emit() error {
	dels := k.dels
	if k.group != 0 {
		dels = nil
	} else if !k.versioned {
		// Upsert: the last delete alone ends everything before it; it is
		// kept only while older parts may hold versions it ends.
		if k.full {
			k.m.stats.Discarded += int64(len(dels))
			dels = nil
		} else if len(dels) > 1 {
			k.m.stats.Discarded += int64(len(dels) - 1)
			dels = dels[len(dels)-1:]
		}
	}
	di := 0
	for i := range k.vs {
		p := k.vs[i].Pos()
		for ; di < len(dels) && dels[di].Compare(p) < 0; di++ {
			k.tomb(dels[di])
		}
		r := k.rs[i]
		switch {
		case r.state == version.Dropped:
			continue
		case !k.full:
			k.copyRow(k.delta, i, zeroRes)
		case r.state == version.Current:
			k.copyRow(k.cur, i, r)
		case k.expired(i, r):
			k.m.stats.Expired++
		default:
			k.copyRow(k.hist, i, r)
		}
	}
	for ; di < len(dels); di++ {
		k.tomb(dels[di])
	}
	return nil
}

// expired reports whether staged version i, resolved as r by a versioned
// merge with Oldest, is past the merge's retention horizon.
func (k *keyedSink) expired(i int, r res) bool {
	h := k.m.opts.Expire.Horizon
	return h != 0 && k.versioned &&
		version.Expired(version.Resolved{Commit: k.stage.Commit[i], State: r.state, EndedAt: r.endedAt}, h)
}

// copyRow appends staged row i to o with resolution r.
func (k *keyedSink) copyRow(o *output, i int, r res) {
	st := k.stage
	for j, dv := range o.d.Cols {
		dv.AppendFrom(st.Cols[j], i)
	}
	o.fixed(k.key, k.group, st.Commit[i], st.Seq[i], false, st.Order.BytesAt(i), r)
}

// tomb appends a delete marker of the current key: to the history run of a
// full versioned merge, to the delta run of a partial one.
func (k *keyedSink) tomb(p version.Pos) {
	o := k.delta
	if k.full {
		o = k.hist
	}
	for _, dv := range o.d.Cols {
		dv.AppendNull()
	}
	o.fixed(k.key, 0, p.Commit, p.Seq, true, nil, zeroRes)
}

// finishKey closes output parts that have grown past PartRows, now that
// the key is complete.
func (k *keyedSink) finishKey() error {
	for _, o := range k.m.outs {
		if err := o.cut(); err != nil {
			return err
		}
	}
	return nil
}

func (k *keyedSink) finish() error {
	if !k.haveKey {
		return nil
	}
	if err := k.finishGroup(); err != nil {
		return err
	}
	return k.finishKey()
}
