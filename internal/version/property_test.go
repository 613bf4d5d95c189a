package version

import (
	"bytes"
	"fmt"
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// history is a generated table: its groups, its versions and its deletes,
// committed at commits 1..newest.
type history struct {
	groups []Ordering
	vs     []Version
	ds     []Delete
	newest uint64
}

// genGroups draws 1–3 groups with 0–2 ordering columns each.
func genGroups(t *rapid.T, minCols int) []Ordering {
	gs := make([]Ordering, rapid.IntRange(1, 3).Draw(t, "groups"))
	for g := range gs {
		nv := rapid.IntRange(0, 2).Draw(t, "valid")
		nr := rapid.IntRange(max(0, minCols-nv), 2-nv).Draw(t, "revision")
		var valid, rev []string
		for i := range nv {
			valid = append(valid, fmt.Sprintf("v%d_%d", g, i))
		}
		for i := range nr {
			rev = append(rev, fmt.Sprintf("r%d_%d", g, i))
		}
		gs[g] = ord(valid, rev)
	}
	return gs
}

// genOrder draws ordering values from a small domain so that ties happen.
func genOrder(t *rapid.T, n int) [][]byte {
	xs := make([]uint64, n)
	for i := range xs {
		xs[i] = uint64(rapid.IntRange(0, 2).Draw(t, "ord"))
	}
	return ints(xs...)
}

// genHistory draws 1–8 commits of 1–3 rows each over 1–3 keys. A row is a
// delete (when deletes is set) or a write of a non-empty set of groups, all
// at the row's position; values come from a domain of three so that exact
// repeats happen. Seqs step by 10 so tests can slip writes in between.
func genHistory(t *rapid.T, deletes bool) history {
	h := history{groups: genGroups(t, 0)}
	nk := rapid.IntRange(1, 3).Draw(t, "keys")
	h.newest = uint64(rapid.IntRange(1, 8).Draw(t, "commits"))
	for c := uint64(1); c <= h.newest; c++ {
		rows := rapid.IntRange(1, 3).Draw(t, "rows")
		for s := range rows {
			seq := uint32(10 * s)
			key := []byte{byte(rapid.IntRange(0, nk-1).Draw(t, "key"))}
			if deletes && rapid.IntRange(0, 5).Draw(t, "delete?") == 0 {
				h.ds = append(h.ds, Delete{Key: key, Commit: c, Seq: seq})
				continue
			}
			mask := rapid.IntRange(1, 1<<len(h.groups)-1).Draw(t, "touched")
			for g := range h.groups {
				if mask&(1<<g) == 0 {
					continue
				}
				h.vs = append(h.vs, Version{
					Key: key, Group: GroupID(g), Commit: c, Seq: seq,
					Order:  genOrder(t, h.groups[g].Columns()),
					Values: []byte{byte(rapid.IntRange(0, 2).Draw(t, "value"))},
				})
			}
		}
	}
	return h
}

// oracle reads rules 1–5 naively, version against version, with none of
// Resolve's or Register's machinery.
type oracle struct {
	h       history
	dropped []bool
}

func newOracle(h history) *oracle {
	o := &oracle{h: h, dropped: make([]bool, len(h.vs))}
	byPos := make([]int, len(h.vs))
	for i := range byPos {
		byPos[i] = i
	}
	slices.SortFunc(byPos, func(a, b int) int { return h.vs[a].Pos().Compare(h.vs[b].Pos()) })
	for _, i := range byPos {
		o.dropped[i] = o.repeats(i) >= 0
	}
	return o
}

func (o *oracle) sameGroup(i, j int) bool {
	a, b := &o.h.vs[i], &o.h.vs[j]
	return a.Group == b.Group && bytes.Equal(a.Key, b.Key)
}

// between reports whether a delete of key falls strictly between p and q.
func (o *oracle) between(key []byte, p, q Pos) bool {
	for _, d := range o.h.ds {
		if bytes.Equal(d.Key, key) && p.Compare(d.Pos()) < 0 && d.Pos().Compare(q) < 0 {
			return true
		}
	}
	return false
}

// sameEpoch reports whether version j, earlier than i, shares i's epoch.
func (o *oracle) sameEpoch(j, i int) bool {
	return o.sameGroup(i, j) && o.h.vs[j].Pos().Compare(o.h.vs[i].Pos()) < 0 &&
		!o.between(o.h.vs[i].Key, o.h.vs[j].Pos(), o.h.vs[i].Pos())
}

// repeats returns the counted version that version i repeats, or -1.
// dropped must be final for every version before i.
func (o *oracle) repeats(i int) int {
	v := &o.h.vs[i]
	if !o.h.groups[v.Group].Ordered() {
		return -1
	}
	for j := range o.h.vs {
		u := &o.h.vs[j]
		if o.sameEpoch(j, i) && !o.dropped[j] && slices.EqualFunc(u.Order, v.Order, bytes.Equal) &&
			bytes.Equal(u.Values, v.Values) {
			return j
		}
	}
	return -1
}

func (o *oracle) greater(a, b int) bool {
	return Compare(o.h.groups[o.h.vs[a].Group], &o.h.vs[a], &o.h.vs[b]) > 0
}

// winnerAt is rule 2 read literally.
func (o *oracle) winnerAt(key []byte, g GroupID, n uint64) int {
	var last *Delete
	for k := range o.h.ds {
		d := &o.h.ds[k]
		if bytes.Equal(d.Key, key) && d.Commit <= n && (last == nil || last.Pos().Compare(d.Pos()) < 0) {
			last = d
		}
	}
	best := -1
	for i := range o.h.vs {
		v := &o.h.vs[i]
		if !bytes.Equal(v.Key, key) || v.Group != g || v.Commit > n || o.dropped[i] {
			continue
		}
		if last != nil && v.Pos().Compare(last.Pos()) < 0 {
			continue
		}
		if best < 0 || o.greater(i, best) {
			best = i
		}
	}
	return best
}

// stateAt is rule 5 read literally: the state of version i at n and the
// commit of whatever decided it.
func (o *oracle) stateAt(i int, n uint64) (State, uint64) {
	v := &o.h.vs[i]
	if v.Commit > n {
		return Invisible, NoCommit
	}
	if o.dropped[i] {
		return Dropped, o.h.vs[o.repeats(i)].Commit
	}
	if o.winnerAt(v.Key, v.Group, n) == i {
		return Current, NoCommit
	}
	w := -1 // the winner when i arrived
	for j := range o.h.vs {
		if o.sameEpoch(j, i) && !o.dropped[j] && (w < 0 || o.greater(j, w)) {
			w = j
		}
	}
	if w >= 0 && o.greater(w, i) {
		return Late, o.h.vs[w].Commit
	}
	// i won on arrival: the first of a greater arrival or a delete ended it.
	var end *Pos
	state, by := Invisible, NoCommit
	for j := range o.h.vs {
		u := &o.h.vs[j]
		if u.Commit <= n && o.sameEpoch(i, j) && !o.dropped[j] && o.greater(j, i) &&
			(end == nil || u.Pos().Compare(*end) < 0) {
			p := u.Pos()
			end, state, by = &p, Superseded, u.Commit
		}
	}
	for k := range o.h.ds {
		d := &o.h.ds[k]
		if bytes.Equal(d.Key, v.Key) && d.Commit <= n && v.Pos().Compare(d.Pos()) < 0 &&
			(end == nil || d.Pos().Compare(*end) < 0) {
			p := d.Pos()
			end, state, by = &p, Deleted, d.Commit
		}
	}
	return state, by
}

// groupsOf lists the (key, group) pairs of h.
func groupsOf(h history) [][2]int {
	var out [][2]int
	for i := range h.vs {
		p := [2]int{int(h.vs[i].Key[0]), int(h.vs[i].Group)}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func TestPropResolveMatchesOracle(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t, true)
		rs := mustResolve(t, h.groups, h.vs, h.ds)
		o := newOracle(h)
		for n := uint64(1); n <= h.newest; n++ {
			for i := range h.vs {
				state, by := o.stateAt(i, n)
				got := StateAt(rs[i], n)
				if got != state {
					t.Fatalf("version %d %+v at %d: state %v, oracle %v", i, h.vs[i], n, got, state)
				}
				if got != Current && got != Invisible && rs[i].SupersededBy != by {
					t.Fatalf("version %d at %d: superseded_by %d, oracle %d", i, n, rs[i].SupersededBy, by)
				}
			}
			for _, kg := range groupsOf(h) {
				key, g := []byte{byte(kg[0])}, GroupID(kg[1])
				sub, at := pick(h.vs, rs, string(key), g)
				w, want := WinnerAt(sub, n), o.winnerAt(key, g, n)
				if (w < 0) != (want < 0) || (w >= 0 && at[w] != want) {
					t.Fatalf("winner of %v at %d: %d, oracle %d", kg, n, w, want)
				}
			}
		}
	})
}

func TestPropRegisterAgreesWithResolve(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t, true)
		rs := mustResolve(t, h.groups, h.vs, h.ds)

		type slot struct {
			key byte
			g   GroupID
		}
		// slabbed are the same Registers fed through AddIn with one
		// shared Slab, as a memtable feeds its groups' Registers: they
		// must take every step the heap-grown ones take.
		regs, slabbed := map[slot]*Register{}, map[slot]*Register{}
		var slab Slab
		reg := func(key byte, g GroupID) *Register {
			s := slot{key, g}
			if regs[s] == nil {
				regs[s], slabbed[s] = new(Register), new(Register)
				regs[s].Init(h.groups[g])
				slabbed[s].Init(h.groups[g])
			}
			return regs[s]
		}
		find := func(key byte, g GroupID, p Pos) int {
			for i := range h.vs {
				if h.vs[i].Key[0] == key && h.vs[i].Group == g && h.vs[i].Pos() == p {
					return i
				}
			}
			t.Fatalf("no version of %d/%d at %v", key, g, p)
			return -1
		}
		// Deliver every input in commit order; a delete goes to every
		// group of its key.
		type event struct {
			pos Pos
			v   int // version index, or -1
			d   int // delete index, or -1
		}
		var evs []event
		for i := range h.vs {
			evs = append(evs, event{h.vs[i].Pos(), i, -1})
		}
		for k := range h.ds {
			evs = append(evs, event{h.ds[k].Pos(), -1, k})
		}
		slices.SortStableFunc(evs, func(a, b event) int { return a.pos.Compare(b.pos) })
		got := make([]Resolved, len(h.vs))
		for _, e := range evs {
			if e.d >= 0 {
				d := &h.ds[e.d]
				for g := range h.groups {
					ended, ok, err := reg(d.Key[0], GroupID(g)).Delete(d)
					if err != nil {
						t.Fatal(err)
					}
					ended2, ok2, err := slabbed[slot{d.Key[0], GroupID(g)}].Delete(d)
					if err != nil || ended2 != ended || ok2 != ok {
						t.Fatalf("delete %+v: slabbed Register ended %v %v (%v), heap one %v %v", d, ended2, ok2, err, ended, ok)
					}
					if ok {
						r := &got[find(d.Key[0], GroupID(g), ended)]
						r.State, r.EndedAt, r.SupersededBy = Deleted, d.Commit, d.Commit
					}
				}
				continue
			}
			v := &h.vs[e.v]
			step, err := reg(v.Key[0], v.Group).Add(v)
			if err != nil {
				t.Fatal(err)
			}
			if step2, err := slabbed[slot{v.Key[0], v.Group}].AddIn(v, &slab); err != nil || step2 != step {
				t.Fatalf("version %+v: slabbed Register %+v (%v), heap one %+v", v, step2, err, step)
			}
			r := &got[e.v]
			r.Commit, r.Seq, r.By = v.Commit, v.Seq, -1
			switch step.Outcome {
			case Won:
				r.State, r.WonAt, r.EndedAt = Current, v.Commit, Forever
				if step.HasOther {
					p := &got[find(v.Key[0], v.Group, step.Other)]
					p.State, p.EndedAt, p.SupersededBy = Superseded, v.Commit, v.Commit
				}
			case Lost, Repeat:
				r.State, r.SupersededBy = Late, step.Other.Commit
				if step.Outcome == Repeat {
					r.State = Dropped
				}
				r.By = find(v.Key[0], v.Group, step.Other)
			}
		}
		for i := range h.vs {
			a, b := got[i], rs[i]
			if a.State != b.State || a.WonAt != b.WonAt || a.EndedAt != b.EndedAt || a.SupersededBy != b.SupersededBy {
				t.Fatalf("version %d %+v: Register %+v, Resolve %+v", i, h.vs[i], a, b)
			}
			if a.By >= 0 && a.By != b.By {
				t.Fatalf("version %d: Register decided by %d, Resolve by %d", i, a.By, b.By)
			}
		}
		for s, r := range regs {
			if !slices.EqualFunc(slabbed[s].counted, r.counted, func(a, b entry) bool { return a.pos == b.pos }) {
				t.Fatalf("%v: slabbed Register holds %v, heap one %v", s, slabbed[s].counted, r.counted)
			}
			sub, at := pick(h.vs, rs, string([]byte{s.key}), s.g)
			w := WinnerAt(sub, h.newest)
			p, ok := r.Winner()
			if ok != (w >= 0) || (ok && h.vs[at[w]].Pos() != p) {
				t.Fatalf("winner of %v: Register %v %v, Resolve %d", s, p, ok, w)
			}
			// Restoring: adding the current epoch's retained versions
			// again, in commit order, rebuilds the same state.
			var last *Pos
			for _, d := range h.ds {
				if d.Key[0] == s.key && (last == nil || last.Compare(d.Pos()) < 0) {
					p := d.Pos()
					last = &p
				}
			}
			var fresh Register
			fresh.Init(h.groups[s.g])
			for _, i := range at {
				if rs[i].State == Dropped || (last != nil && h.vs[i].Pos().Compare(*last) < 0) {
					continue
				}
				if st, err := fresh.Add(&h.vs[i]); err != nil || st.Outcome == Repeat {
					t.Fatalf("rebuilding %v: %+v %v", s, st, err)
				}
			}
			if !slices.EqualFunc(fresh.counted, r.counted, func(a, b entry) bool { return a.pos == b.pos }) {
				t.Fatalf("rebuilt %v holds %v, the original %v", s, fresh.counted, r.counted)
			}
		}
	})
}

func TestPropAsOfEqualsPrefix(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t, true)
		full := mustResolve(t, h.groups, h.vs, h.ds)
		for n := uint64(1); n <= h.newest; n++ {
			var vs []Version
			var at []int
			for i := range h.vs {
				if h.vs[i].Commit <= n {
					vs, at = append(vs, h.vs[i]), append(at, i)
				}
			}
			var ds []Delete
			for _, d := range h.ds {
				if d.Commit <= n {
					ds = append(ds, d)
				}
			}
			part := mustResolve(t, h.groups, vs, ds)
			for j, p := range part {
				f := full[at[j]]
				if s := StateAt(f, n); s != p.State {
					t.Fatalf("version %d at %d: from intervals %v, from scratch %v", at[j], n, s, p.State)
				}
				if p.State == Current {
					if f.EndedAt <= n || p.EndedAt != Forever {
						t.Fatalf("version %d at %d: current but ended at %d/%d", at[j], n, f.EndedAt, p.EndedAt)
					}
				} else if p.EndedAt != f.EndedAt || p.SupersededBy != f.SupersededBy || p.Reason != f.Reason {
					t.Fatalf("version %d at %d: full %+v, prefix %+v", at[j], n, f, p)
				}
				if p.WonAt != f.WonAt {
					t.Fatalf("version %d at %d: won at %d, from scratch %d", at[j], n, f.WonAt, p.WonAt)
				}
			}
		}
	})
}

// genWrites draws writes without deletes to ordered groups only, no two of
// one key and group tying on all ordering values unless they are exact
// repeats, and delivers them in a random order with random commit
// boundaries.
func genWrites(t *rapid.T) ([]Ordering, []Version) {
	gs := genGroups(t, 1)
	type write struct {
		key   byte
		g     GroupID
		order []uint64
		value byte
	}
	gen := rapid.Custom(func(t *rapid.T) write {
		w := write{key: byte(rapid.IntRange(0, 2).Draw(t, "key")), g: GroupID(rapid.IntRange(0, len(gs)-1).Draw(t, "group"))}
		for range gs[w.g].Columns() {
			w.order = append(w.order, uint64(rapid.IntRange(0, 3).Draw(t, "ord")))
		}
		w.value = byte(rapid.IntRange(0, 2).Draw(t, "value"))
		return w
	})
	ws := rapid.SliceOfNDistinct(gen, 1, 12, func(w write) string { return fmt.Sprint(w.key, w.g, w.order) }).Draw(t, "writes")
	for _, k := range rapid.SliceOfN(rapid.IntRange(0, len(ws)-1), 0, 4).Draw(t, "repeats") {
		ws = append(ws, ws[k])
	}
	ws = rapid.Permutation(ws).Draw(t, "arrival")
	vs := make([]Version, len(ws))
	c, s := uint64(1), uint32(0)
	for i, w := range ws {
		if i > 0 && rapid.Bool().Draw(t, "next commit") {
			c, s = c+1, 0
		}
		vs[i] = Version{Key: []byte{w.key}, Group: w.g, Order: ints(w.order...), Commit: c, Seq: s, Values: []byte{w.value}}
		s++
	}
	return gs, vs
}

// settled prints, per key and group, the winner and the retained versions
// in rule-1 order, without commits: what R3.3 says cannot depend on arrival.
func settled(gs []Ordering, vs []Version, rs []Resolved) string {
	type kg struct {
		key byte
		g   GroupID
	}
	var keys []kg
	for i := range vs {
		if k := (kg{vs[i].Key[0], vs[i].Group}); !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b kg) int { return int(a.key)*8 + int(a.g) - int(b.key)*8 - int(b.g) })
	var out bytes.Buffer
	for _, k := range keys {
		var kept []*Version
		for i := range vs {
			if vs[i].Key[0] == k.key && vs[i].Group == k.g && rs[i].State != Dropped {
				kept = append(kept, &vs[i])
				if rs[i].State == Current {
					fmt.Fprintf(&out, "%v winner %x=%x; ", k, vs[i].Order, vs[i].Values)
				}
			}
		}
		slices.SortFunc(kept, func(a, b *Version) int { return Compare(gs[k.g], a, b) })
		for _, v := range kept {
			fmt.Fprintf(&out, "%x=%x ", v.Order, v.Values)
		}
		out.WriteString("\n")
	}
	return out.String()
}

func TestPropConvergence(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		gs, vs := genWrites(t)
		// A second arrival order of the same writes.
		perm := rapid.Permutation(vs).Draw(t, "second arrival")
		c, s := uint64(1), uint32(0)
		for i := range perm {
			if i > 0 && rapid.Bool().Draw(t, "next commit") {
				c, s = c+1, 0
			}
			perm[i].Commit, perm[i].Seq = c, s
			s++
		}
		a := settled(gs, vs, mustResolve(t, gs, vs, nil))
		b := settled(gs, perm, mustResolve(t, gs, perm, nil))
		if a != b {
			t.Fatalf("arrival changed the outcome:\n%s\nvs\n%s", a, b)
		}
	})
}

func TestPropRepeatsAddNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t, true)
		rs := mustResolve(t, h.groups, h.vs, h.ds)
		var counted []int
		for i := range h.vs {
			if rs[i].State != Dropped && h.groups[h.vs[i].Group].Ordered() {
				counted = append(counted, i)
			}
		}
		if len(counted) == 0 {
			t.Skip("no counted version in an ordered group")
		}
		u := h.vs[rapid.SampledFrom(counted).Draw(t, "repeated")]
		// The repeat lands after u and before the next delete of its key.
		limit := h.newest + 1
		for _, d := range h.ds {
			if bytes.Equal(d.Key, u.Key) && u.Pos().Compare(d.Pos()) < 0 && d.Commit-1 < limit {
				limit = max(d.Commit-1, u.Commit)
			}
		}
		dup := u
		dup.Commit = uint64(rapid.IntRange(int(u.Commit), int(limit)).Draw(t, "at"))
		dup.Seq = 5
		if dup.Commit == u.Commit {
			dup.Seq = u.Seq + 1
		}
		vs := append(slices.Clone(h.vs), dup)
		rs2 := mustResolve(t, h.groups, vs, h.ds)
		if rs2[len(h.vs)].State != Dropped {
			t.Fatalf("repeat of %+v at %v: %+v", u, dup.Pos(), rs2[len(h.vs)])
		}
		for i := range h.vs {
			if rs[i] != rs2[i] {
				t.Fatalf("the repeat changed version %d: %+v, then %+v", i, rs[i], rs2[i])
			}
		}
	})
}

func TestPropMergeRuns(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t, true)
		full := mustResolve(t, h.groups, h.vs, h.ds)

		// Any arrival order of the input gives the same answer (rule 7).
		perm := rapid.Permutation(intsUpTo(len(h.vs))).Draw(t, "input order")
		shuffled := make([]Version, len(h.vs))
		for j, i := range perm {
			shuffled[j] = h.vs[i]
		}
		ds := rapid.Permutation(h.ds).Draw(t, "delete order")
		again := mustResolve(t, h.groups, shuffled, ds)
		for j, i := range perm {
			a, b := again[j], full[i]
			if a.By >= 0 {
				a.By = perm[a.By]
			}
			if a != b {
				t.Fatalf("shuffled input changed version %d: %+v, then %+v", i, b, a)
			}
		}

		// Runs of contiguous commits, resolved alone, then merged: their
		// retained versions with every delete resolve as all at once.
		cuts := rapid.SliceOfN(rapid.Uint64Range(1, h.newest), 0, 3).Draw(t, "cuts")
		run := func(c uint64) int {
			r := 0
			for _, x := range cuts {
				if c > x {
					r++
				}
			}
			return r
		}
		var merged []Version
		var at []int
		for r := 0; r <= len(cuts); r++ {
			var vs []Version
			var idx []int
			for i := range h.vs {
				if run(h.vs[i].Commit) == r {
					vs, idx = append(vs, h.vs[i]), append(idx, i)
				}
			}
			var rds []Delete
			for _, d := range h.ds {
				if run(d.Commit) == r {
					rds = append(rds, d)
				}
			}
			for j, x := range mustResolve(t, h.groups, vs, rds) {
				if x.State != Dropped {
					merged, at = append(merged, vs[j]), append(at, idx[j])
				} else if full[idx[j]].State != Dropped {
					t.Fatalf("version %d dropped in its run but not overall", idx[j])
				}
			}
		}
		mr := mustResolve(t, h.groups, merged, h.ds)
		for j, x := range mr {
			f := full[at[j]]
			if x.State != f.State || x.WonAt != f.WonAt || x.EndedAt != f.EndedAt || x.SupersededBy != f.SupersededBy {
				t.Fatalf("merged version %d: %+v, all at once %+v", at[j], x, f)
			}
			if x.State != Dropped && x.Reason != f.Reason {
				t.Fatalf("merged version %d: reason %q, all at once %q", at[j], x.Reason, f.Reason)
			}
		}
		if kept := slices.IndexFunc(full, func(r Resolved) bool { return r.State != Dropped }); kept >= 0 && len(merged) == 0 {
			t.Fatal("merging lost every version")
		}
	})
}

func intsUpTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestOracleSeesRepeatsAndLateness makes sure the generators reach the cases
// the properties are about: without them the properties would hold vacuously.
func TestOracleSeesRepeatsAndLateness(t *testing.T) {
	seen := map[State]bool{}
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t, true)
		for _, r := range mustResolve(t, h.groups, h.vs, h.ds) {
			seen[r.State] = true
		}
	})
	for _, s := range []State{Current, Superseded, Late, Deleted, Dropped} {
		if !seen[s] {
			t.Errorf("no generated history had a %v version", s)
		}
	}
}

// TestPropTiedSaysWhenValuesMatter feeds every (key, group) to two
// Registers, one with the versions' values and one without (what storage's
// scans do until a step says Tied): up to the first step either reports
// Tied, both give the same steps, and Tied is the same in both. Decide
// likewise gives the same outcome without values unless Tied says it
// consults them.
func TestPropTiedSaysWhenValuesMatter(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		h := genHistory(t, true)
		type slot struct {
			key byte
			g   GroupID
		}
		type pair struct {
			with, without Register
			tied          bool
			winner        *Version // Decide's winner, fed with values
		}
		regs := map[slot]*pair{}
		get := func(key byte, g GroupID) *pair {
			s := slot{key, g}
			if regs[s] == nil {
				regs[s] = &pair{}
				regs[s].with.Init(h.groups[g])
				regs[s].without.Init(h.groups[g])
			}
			return regs[s]
		}
		type event struct {
			pos Pos
			v   int
			d   int
		}
		var evs []event
		for i := range h.vs {
			evs = append(evs, event{h.vs[i].Pos(), i, -1})
		}
		for k := range h.ds {
			evs = append(evs, event{h.ds[k].Pos(), -1, k})
		}
		slices.SortStableFunc(evs, func(a, b event) int { return a.pos.Compare(b.pos) })
		for _, e := range evs {
			if e.d >= 0 {
				d := &h.ds[e.d]
				for g := range h.groups {
					p := get(d.Key[0], GroupID(g))
					if p.tied {
						continue
					}
					a, aok, err1 := p.with.Delete(d)
					b, bok, err2 := p.without.Delete(d)
					if err1 != nil || err2 != nil || a != b || aok != bok {
						t.Fatalf("delete %+v: %v %v %v / %v %v %v", d, a, aok, err1, b, bok, err2)
					}
					p.winner = nil
				}
				continue
			}
			v := &h.vs[e.v]
			p := get(v.Key[0], v.Group)
			if p.tied {
				continue
			}
			bare := *v
			bare.Values = nil
			ord := h.groups[v.Group]
			if !Tied(ord, p.winner, v) {
				if a, b := Decide(ord, p.winner, v), Decide(ord, stripValues(p.winner), &bare); a != b {
					t.Fatalf("Decide %+v after %+v: %v with values, %v without", v, p.winner, a, b)
				}
			}
			if Decide(ord, p.winner, v) == Won {
				p.winner = v
			}
			a, err1 := p.with.Add(v)
			b, err2 := p.without.Add(&bare)
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if a.Tied != b.Tied {
				t.Fatalf("version %+v: Tied %v with values, %v without", v, a.Tied, b.Tied)
			}
			if a.Tied {
				p.tied = true
				continue
			}
			if a != b {
				t.Fatalf("version %+v: %+v with values, %+v without", v, a, b)
			}
		}
	})
}

// stripValues returns a copy of v without its values (nil for nil).
func stripValues(v *Version) *Version {
	if v == nil {
		return nil
	}
	c := *v
	c.Values = nil
	return &c
}
