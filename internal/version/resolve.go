package version

import (
	"bytes"
	"fmt"
	"slices"
)

// State is what a version is at some commit (rule 5).
type State uint8

// The states of a version. Invisible and Dropped never appear in versions().
const (
	// Invisible: the version was committed after the commit asked about.
	Invisible State = iota
	// Current: the version is the winner of its group.
	Current
	// Superseded: it was the winner until a greater version arrived.
	Superseded
	// Late: it lost on arrival to a greater version that already counted.
	Late
	// Deleted: it was the winner when a delete ended its epoch.
	Deleted
	// Dropped: it repeated a version that still counted (rule 3) and adds
	// nothing.
	Dropped
)

// String returns the state as versions() prints it in _state.
func (s State) String() string {
	switch s {
	case Invisible:
		return "invisible"
	case Current:
		return "current"
	case Superseded:
		return "superseded"
	case Late:
		return "late"
	case Deleted:
		return "deleted"
	case Dropped:
		return "dropped"
	}
	return "invalid"
}

// Resolved is everything the rules decide about one version, as of the
// newest commit of the input it was resolved with. Storage persists Commit,
// State, WonAt, EndedAt and SupersededBy so that a read AS OF n is a range
// check (StateAt) instead of a replay.
type Resolved struct {
	// Commit and Seq are the version's position.
	Commit uint64
	Seq    uint32
	// State is the version's state at the newest commit.
	State State
	// WonAt and EndedAt bound the commits [WonAt, EndedAt) at which the
	// version was the winner (rule 6): NoCommit for both when it never won,
	// EndedAt = Forever while it still wins.
	WonAt, EndedAt uint64
	// SupersededBy is the commit of the version that superseded it, of the
	// winner it lost to (late), of the delete that ended it (deleted), or of
	// the version it repeats (dropped); NoCommit while current. It is
	// meaningful at commit n whenever StateAt(r, n) is neither Current nor
	// Invisible.
	SupersededBy uint64
	// By is the index, in the input to Resolve, of the version that decided
	// the state: the superseding version, the winner lost to, or the version
	// repeated; -1 when current or deleted.
	By int
	// Reason says why, naming the deciding column and values (rule 5); empty
	// while current.
	Reason string
}

// Resolve applies rules 1–6 to versions of any keys and groups, in any
// order, with the deletes of their keys: result i describes vs[i]. groups
// gives the Ordering of each GroupID. The input order does not matter (rule
// 7). It returns an error only for malformed input: an unknown group, a
// version with the wrong number of ordering values, or two inputs at one
// position.
func Resolve(groups []Ordering, vs []Version, ds []Delete) ([]Resolved, error) {
	for i := range vs {
		g := vs[i].Group
		if int(g) >= len(groups) {
			return nil, fmt.Errorf("%w %d (version %d)", ErrUnknownGroup, g, i)
		}
		if len(vs[i].Order) != groups[g].Columns() {
			return nil, fmt.Errorf("%w: version %d has %d, group %d has %d columns",
				ErrOrderColumns, i, len(vs[i].Order), g, groups[g].Columns())
		}
	}
	idx := make([]int, len(vs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int {
		va, vb := &vs[a], &vs[b]
		if c := bytes.Compare(va.Key, vb.Key); c != 0 {
			return c
		}
		if va.Group != vb.Group {
			return int(va.Group) - int(vb.Group)
		}
		return va.Pos().Compare(vb.Pos())
	})
	dd := slices.Clone(ds)
	slices.SortFunc(dd, func(a, b Delete) int {
		if c := bytes.Compare(a.Key, b.Key); c != 0 {
			return c
		}
		return a.Pos().Compare(b.Pos())
	})
	for i := 1; i < len(dd); i++ {
		if bytes.Equal(dd[i-1].Key, dd[i].Key) && dd[i-1].Pos() == dd[i].Pos() {
			return nil, fmt.Errorf("%w: two deletes at commit %d seq %d", ErrDuplicatePosition, dd[i].Commit, dd[i].Seq)
		}
	}

	rs := make([]Resolved, len(vs))
	var scratch []int
	di := 0 // first delete whose key is not below the current run's key
	for start := 0; start < len(idx); {
		first := &vs[idx[start]]
		end := start + 1
		for end < len(idx) && vs[idx[end]].Group == first.Group && bytes.Equal(vs[idx[end]].Key, first.Key) {
			end++
		}
		for di < len(dd) && bytes.Compare(dd[di].Key, first.Key) < 0 {
			di++
		}
		dk := di
		for dk < len(dd) && bytes.Equal(dd[dk].Key, first.Key) {
			dk++
		}
		if err := resolveRun(&groups[first.Group], vs, idx[start:end], dd[di:dk], rs, &scratch); err != nil {
			return nil, err
		}
		start = end
	}
	for i := range rs {
		r := &rs[i]
		var by *Version
		if r.By >= 0 {
			by = &vs[r.By]
		}
		r.Reason = Reason(groups[vs[i].Group], r.State, &vs[i], by, r.SupersededBy)
	}
	return rs, nil
}

// resolveRun resolves the versions of one (key, group), given in commit order,
// with that key's deletes in commit order, by cutting them into epochs (rule 2).
func resolveRun(ord *Ordering, vs []Version, run []int, kd []Delete, rs []Resolved, scratch *[]int) error {
	e := 0
	for start := 0; start < len(run); {
		p := vs[run[start]].Pos()
		for e < len(kd) && kd[e].Pos().Compare(p) < 0 {
			e++
		}
		var del *Delete
		if e < len(kd) {
			if kd[e].Pos() == p {
				return fmt.Errorf("%w: a delete and a version at commit %d seq %d", ErrDuplicatePosition, p.Commit, p.Seq)
			}
			del = &kd[e]
		}
		end := start + 1
		for end < len(run) && (del == nil || vs[run[end]].Pos().Compare(del.Pos()) < 0) {
			if vs[run[end]].Pos() == vs[run[end-1]].Pos() {
				return fmt.Errorf("%w: two versions of group %d at commit %d seq %d",
					ErrDuplicatePosition, vs[run[end]].Group, vs[run[end]].Commit, vs[run[end]].Seq)
			}
			end++
		}
		resolveEpoch(ord, vs, run[start:end], del, rs, scratch)
		start = end
	}
	return nil
}

// resolveEpoch resolves one epoch of one (key, group): ep is in commit order,
// del is the delete that ends the epoch, or nil.
func resolveEpoch(ord *Ordering, vs []Version, ep []int, del *Delete, rs []Resolved, scratch *[]int) {
	n := ord.Columns()
	for _, i := range ep {
		rs[i] = Resolved{Commit: vs[i].Commit, Seq: vs[i].Seq, By: -1}
	}
	if n > 0 && (ord.Horizon != nil || ord.mixedLayouts(vs, ep)) {
		resolveEpochRetained(ord, vs, ep, del, rs, scratch)
		return
	}
	if n > 0 {
		// Rule 3: of the versions equal in ordering values and values,
		// only the first to arrive counts. Sorting by (ordering values,
		// values, position) puts each such family together, first arrival
		// first.
		s := append((*scratch)[:0], ep...)
		slices.SortFunc(s, func(a, b int) int {
			va, vb := &vs[a], &vs[b]
			if c := compareOrder(n, va.Order, vb.Order); c != 0 {
				return c
			}
			if c := bytes.Compare(va.Values, vb.Values); c != 0 {
				return c
			}
			return va.Pos().Compare(vb.Pos())
		})
		head := 0
		for k := 1; k < len(s); k++ {
			h, v := &vs[s[head]], &vs[s[k]]
			if equalOrder(n, h.Order, v.Order) && bytes.Equal(h.Values, v.Values) {
				rs[s[k]].State, rs[s[k]].By, rs[s[k]].SupersededBy = Dropped, s[head], h.Commit
				continue
			}
			head = k
		}
		*scratch = s
	}
	// Rules 1 and 6: in arrival order the winner is the running maximum.
	best := -1
	for _, i := range ep {
		r := &rs[i]
		if r.State == Dropped {
			continue
		}
		best = arrive(n, vs, rs, i, best)
	}
	endEpoch(rs, best, del)
}

// arrive applies rules 1 and 6 to version i, counted, arriving after the
// epoch's versions before it, whose winner so far is best (-1: none): it
// is late, or it wins and supersedes best. It returns the winner.
func arrive(n int, vs []Version, rs []Resolved, i, best int) int {
	v, r := &vs[i], &rs[i]
	if best >= 0 && greater(n, &vs[best], v) {
		r.State, r.SupersededBy, r.By = Late, vs[best].Commit, best
		return best
	}
	r.WonAt = v.Commit
	if best >= 0 {
		b := &rs[best]
		b.State, b.EndedAt, b.SupersededBy, b.By = Superseded, v.Commit, v.Commit, i
	}
	return i
}

// endEpoch settles the epoch's final winner best (-1: none): deleted by
// del, or current.
func endEpoch(rs []Resolved, best int, del *Delete) {
	if best < 0 {
		return
	}
	b := &rs[best]
	if del != nil {
		b.State, b.EndedAt, b.SupersededBy = Deleted, del.Commit, del.Commit
		return
	}
	b.State, b.EndedAt = Current, Forever
}

// resolveEpochRetained is resolveEpoch for an ordered group whose versions
// expire (Ordering.Horizon), or whose versions are of several layouts
// (Ordering.Same: equal values are not equal bytes, so sorting by bytes
// does not bring a family together): in arrival order, a version repeats
// a counted one (rule 3) only if that one had not stopped counting by the
// horizon of the new version's commit, so a family of equal versions can
// have a new first arrival once its earlier one expired. The rest is rules
// 1 and 6 as in resolveEpoch. It costs a scan of the counted versions per
// version.
func resolveEpochRetained(ord *Ordering, vs []Version, ep []int, del *Delete, rs []Resolved, scratch *[]int) {
	n := ord.Columns()
	counted := (*scratch)[:0]
	best := -1
	end := func(j int) uint64 {
		switch {
		case j == best:
			return Forever
		case rs[j].State == Late:
			return vs[j].Commit
		}
		return rs[j].EndedAt
	}
	for _, i := range ep {
		v, r := &vs[i], &rs[i]
		var h uint64
		if ord.Horizon != nil {
			h = ord.Horizon(v.Commit)
		}
		rep := -1
		for k := len(counted) - 1; k >= 0; k-- {
			j := counted[k]
			if equalOrder(n, vs[j].Order, v.Order) && ord.sameValues(vs[j].Layout, vs[j].Values, v.Layout, v.Values, v.Commit) && end(j) > h {
				rep = j
				break
			}
		}
		if rep >= 0 {
			r.State, r.By, r.SupersededBy = Dropped, rep, vs[rep].Commit
			continue
		}
		counted = append(counted, i)
		best = arrive(n, vs, rs, i, best)
	}
	*scratch = counted
	endEpoch(rs, best, del)
}

// greater reports whether a is greater than b under rule 1.
func greater(n int, a, b *Version) bool {
	if c := compareOrder(n, a.Order, b.Order); c != 0 {
		return c > 0
	}
	return a.Pos().Compare(b.Pos()) > 0
}

// StateAt returns the state of a resolved version at commit n (rule 5),
// from its interval alone (rule 6). n may be any commit up to the newest of
// the input r was resolved with.
func StateAt(r Resolved, n uint64) State {
	if n < r.Commit {
		return Invisible
	}
	switch r.State {
	case Current, Superseded, Deleted:
		if n < r.EndedAt {
			return Current
		}
	}
	return r.State
}

// WinnerAt returns the index in rs of the winner at commit n, or -1 when the
// group is empty at n. rs must hold the resolved versions of one key and
// group; I2 makes the winner unique.
func WinnerAt(rs []Resolved, n uint64) int {
	for i := range rs {
		if StateAt(rs[i], n) == Current {
			return i
		}
	}
	return -1
}

// ExistsAt reports whether a key exists at commit n (rule 2): whether any of
// rs, the resolved versions of one key across its groups, wins at n.
func ExistsAt(rs []Resolved, n uint64) bool {
	return WinnerAt(rs, n) >= 0
}

// Expired reports whether a version resolved as r is past retention
// horizon h (R9.3): it stopped counting at or before commit h, because it
// was superseded or deleted there or earlier, or it lost on arrival (late)
// or repeated another (dropped) there or earlier. A current version never
// expires, and h = 0 expires nothing.
//
// A read at any commit n ≥ h needs no expired version: each one's last
// commit as winner is before h. And dropping them does not change how the
// others resolve at n ≥ h: every version a kept one lost to, or was
// superseded by, still counted after h and is kept too.
func Expired(r Resolved, h uint64) bool {
	at, ok := ExpiresAt(r)
	return ok && at <= h
}

// ExpiresAt returns the lowest horizon at which a version resolved as r
// is Expired, and false for one that never expires (a current version).
func ExpiresAt(r Resolved) (uint64, bool) {
	switch r.State {
	case Superseded, Deleted:
		return r.EndedAt, true
	case Late, Dropped:
		return r.Commit, true
	}
	return 0, false
}
