package version

// Outcome says what a new version did to its (key, group).
type Outcome uint8

// The outcomes of adding a version.
const (
	// Won: the version is now the winner (rule 1); it ends the previous
	// winner, if any, at its own commit (rule 6).
	Won Outcome = iota + 1
	// Lost: a greater version already counted; the version is late and is
	// retained (versioned) or discarded (upsert) (rules 4, 5).
	Lost
	// Repeat: the version repeats one that still counts and is dropped as if
	// never written (rule 3).
	Repeat
)

// String returns the outcome's name.
func (o Outcome) String() string {
	switch o {
	case Won:
		return "won"
	case Lost:
		return "lost"
	case Repeat:
		return "repeat"
	}
	return "invalid"
}

// Step reports what Register.Add did with one version.
type Step struct {
	Outcome Outcome
	// Other is, for Won, the position of the winner the version ended (only
	// when HasOther: the group may have been empty); for Lost, the winner it
	// lost to; for Repeat, the counted version it repeats.
	Other    Pos
	HasOther bool
	// Tied says the outcome consulted the version's values: it tied on
	// every ordering value with a counted version (rule 3). Otherwise the
	// outcome rests on ordering values and positions alone, so a caller
	// that fed versions without their values (storage's scans, which
	// build a payload only for the winner they return) got exactly the
	// outcome the values would have given, and must feed them again
	// with their values when Tied.
	Tied bool
}

// Register is the incremental state of one (key, group) (rule 6): it takes
// that group's versions and its key's deletes strictly in commit order and
// says, for each version, whether it wins, loses or repeats. It keeps the
// counted versions of the current epoch (only the winner, for a group
// ordered by commit alone), referencing the callers' slices, sorted under
// rule 1 (invariant I3). The zero Register orders by commit alone; Init
// gives it its group's ordering.
//
// A Register rebuilt by adding the current epoch's retained versions in
// commit order is in the same state as the one that first saw them, which is
// how storage can restore one after a flush. A merge that reads parts sorted
// by (key, group, commit, seq) can likewise feed each (key, group), with its
// key's deletes interleaved, to one reused Register instead of calling
// Resolve, without allocating per version.
//
// Cost: a write that beats the winner is O(1); a late write or a tie costs a
// binary search plus moving the counted versions above it, so memory and
// late-write time grow with the versions counted in the epoch, which is what
// exact repeat detection (rule 3) needs for a versioned table.
type Register struct {
	ord     Ordering
	cols    int
	seen    bool
	last    Pos
	counted []entry
}

// entry is one counted version: only what deciding needs. end is the
// commit at which it stopped counting as a winner, Forever while it wins,
// its own commit if it lost on arrival: what Ordering.Horizon is held
// against (rule 3 under retention).
type entry struct {
	order  [][]byte
	values []byte
	layout any
	pos    Pos
	end    uint64
}

// Init empties r and sets the group's ordering, keeping r's memory.
func (r *Register) Init(ord Ordering) {
	clear(r.counted)
	*r = Register{ord: ord, cols: ord.Columns(), counted: r.counted[:0]}
}

// Touch reads the first byte of the newest counted version's ordering
// values, which Add compares first, and returns it: a caller that adds to
// many Registers in a row touches them all first, so that their memory's
// cache misses overlap instead of following one another.
func (r *Register) Touch() byte {
	n := len(r.counted)
	if n == 0 {
		return 0
	}
	o := r.counted[n-1].order
	if len(o) == 0 || len(o[0]) == 0 {
		return 0
	}
	return o[0][0]
}

// Winner returns the position of the current winner, if the group is not
// empty.
func (r *Register) Winner() (Pos, bool) {
	if len(r.counted) == 0 {
		return Pos{}, false
	}
	return r.counted[len(r.counted)-1].pos, true
}

// Counted returns how many versions count in the current epoch.
func (r *Register) Counted() int { return len(r.counted) }

// advance checks that p is strictly after everything seen (rule 6 requires
// commit order) and records it.
func (r *Register) advance(p Pos) error {
	if r.seen && p.Compare(r.last) <= 0 {
		return ErrOutOfOrder
	}
	r.seen, r.last = true, p
	return nil
}

// Slab is memory for the counted sets of many Registers, handed out in
// pieces of larger allocations (AddIn). A memtable holds one Register per
// (key, group), and most of them count a version or two before the
// memtable is flushed: growing each counted set from the heap cost an
// allocation or more per version (60 % of a commit's allocations) and as
// many objects for the garbage collector. Pieces outgrown stay in the
// slab until the slab is dropped, so a Slab suits Registers that are
// dropped together. A Slab is not safe for concurrent use.
type Slab struct{ free []entry }

// slabChunk is the most entries of one slab allocation (64 KiB); a
// slab's allocations double up to it from slabFirst, so that a Slab that
// serves a few Registers (a read resolving one key's versions: bench/ R5)
// does not allocate and clear 64 KiB for them.
const (
	slabChunk = 1024
	slabFirst = 16
)

// grow returns a counted set of capacity at least 2·cap(c) (1 if c has
// none) holding c's entries, cut from s.
func (s *Slab) grow(c []entry) []entry {
	n := max(1, 2*cap(c))
	if cap(s.free)-len(s.free) < n {
		s.free = make([]entry, 0, max(n, min(slabChunk, max(slabFirst, 2*cap(s.free)))))
	}
	k := len(s.free)
	s.free = s.free[:k+n]
	out := s.free[k : k+len(c) : k+n]
	copy(out, c)
	return out
}

// Add takes the next version of the group. The version's key and group are
// the caller's business; its position must come after every input so far.
// Add does not allocate except to grow the counted set, amortised.
func (r *Register) Add(v *Version) (Step, error) { return r.AddIn(v, nil) }

// AddIn is Add, taking the memory the counted set grows into from s
// instead of the heap when s is not nil.
func (r *Register) AddIn(v *Version, s *Slab) (Step, error) {
	if s != nil && len(r.counted) == cap(r.counted) {
		r.counted = s.grow(r.counted)
	}
	if len(v.Order) != r.cols {
		return Step{}, ErrOrderColumns
	}
	p := v.Pos()
	if err := r.advance(p); err != nil {
		return Step{}, err
	}
	e := entry{order: v.Order, values: v.Values, layout: v.Layout, pos: p, end: Forever}
	n := len(r.counted)
	if r.cols == 0 {
		// Rule 1: ordered by commit alone, the newest write always wins
		// and, rule 3, every write is kept; only the winner matters for
		// what comes next.
		if n == 0 {
			r.counted = append(r.counted, e)
			return Step{Outcome: Won}, nil
		}
		prev := r.counted[0].pos
		r.counted[0] = e
		return Step{Outcome: Won, Other: prev, HasOther: true}, nil
	}
	// The common case, writes arriving in order: v's ordering values beat
	// the winner's outright, so it wins and can repeat nothing (I3).
	if n == 0 || compareOrder(r.cols, r.counted[n-1].order, v.Order) < 0 {
		if n > 0 {
			r.counted[n-1].end = p.Commit
		}
		r.counted = append(r.counted, e)
		if n == 0 {
			return Step{Outcome: Won}, nil
		}
		return Step{Outcome: Won, Other: r.counted[n-1].pos, HasOther: true}, nil
	}
	// v's position is the greatest seen, so under rule 1 it sorts after
	// every counted version whose ordering values are ≤ its own: find the
	// first counted version with greater ordering values.
	lo, hi := 0, n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if compareOrder(r.cols, r.counted[m].order, v.Order) > 0 {
			hi = m
		} else {
			lo = m + 1
		}
	}
	// Rule 3: the only versions v can repeat have its ordering values, and
	// I3 puts them directly before lo. Under retention a version that
	// stopped counting by the horizon of v's commit is one v cannot
	// repeat (Ordering.Horizon).
	tied := false
	for j := lo - 1; j >= 0 && equalOrder(r.cols, r.counted[j].order, v.Order); j-- {
		tied = true
		if c := &r.counted[j]; r.ord.sameValues(c.layout, c.values, v.Layout, v.Values, v.Commit) {
			if h := r.ord.Horizon; h != nil && r.counted[j].end <= h(p.Commit) {
				continue
			}
			return Step{Outcome: Repeat, Other: r.counted[j].pos, HasOther: true, Tied: true}, nil
		}
	}
	if lo == n {
		// A tie with the winner on every ordering value, broken by
		// position in v's favour.
		r.counted[n-1].end = p.Commit
		r.counted = append(r.counted, e)
		return Step{Outcome: Won, Other: r.counted[n-1].pos, HasOther: true, Tied: tied}, nil
	}
	winner := r.counted[n-1].pos
	e.end = p.Commit
	r.counted = append(r.counted, entry{})
	copy(r.counted[lo+1:], r.counted[lo:n])
	r.counted[lo] = e
	return Step{Outcome: Lost, Other: winner, HasOther: true, Tied: tied}, nil
}

// Delete takes a delete of the group's key (rule 2): it ends the current
// epoch and reports the winner it ended, if the group was not empty. The
// delete's position must come after every input so far.
func (r *Register) Delete(d *Delete) (ended Pos, ok bool, err error) {
	if err := r.advance(d.Pos()); err != nil {
		return Pos{}, false, err
	}
	ended, ok = r.Winner()
	clear(r.counted)
	r.counted = r.counted[:0]
	return ended, ok, nil
}

// Tied reports whether Decide consults the values of winner and v: they
// tie on every ordering value of an ordered group (rules 3 and 4).
// Otherwise its outcome rests on ordering values and positions alone (see
// Step.Tied).
func Tied(ord Ordering, winner, v *Version) bool {
	n := ord.Columns()
	return winner != nil && n > 0 && equalOrder(n, winner.Order, v.Order)
}

// Decide is the upsert form of rule 4: given the current winner of a (key,
// group) in an upsert table (nil when the group is empty) and a new version
// that comes after it in commit order, it says whether the version is kept
// as the new winner (Won) or accepted and discarded (Lost, or Repeat when it
// repeats the winner exactly). Only the winner is consulted.
func Decide(ord Ordering, winner, v *Version) Outcome {
	if winner == nil {
		return Won
	}
	n := ord.Columns()
	if n > 0 && equalOrder(n, winner.Order, v.Order) && ord.sameValues(winner.Layout, winner.Values, v.Layout, v.Values, v.Commit) {
		return Repeat
	}
	if Compare(ord, winner, v) < 0 {
		return Won
	}
	return Lost
}
