package version

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	g := ord([]string{"v"}, []string{"r"})
	for _, c := range []struct {
		a, b Version
		want int
	}{
		{Version{Order: ints(1, 9), Commit: 9}, Version{Order: ints(2, 0), Commit: 1}, -1},
		{Version{Order: ints(2, 1), Commit: 9}, Version{Order: ints(2, 2), Commit: 1}, -1},
		{Version{Order: ints(2, 2), Commit: 1}, Version{Order: ints(2, 2), Commit: 2}, -1},
		{Version{Order: ints(2, 2), Commit: 2, Seq: 1}, Version{Order: ints(2, 2), Commit: 2}, 1},
		{Version{Order: ints(2, 2), Commit: 2, Seq: 1}, Version{Order: ints(2, 2), Commit: 2, Seq: 1}, 0},
		// Short order values (a malformed version) compare as empty.
		{Version{Order: ints(2)}, Version{Order: ints(2, 0)}, -1},
	} {
		if got := Compare(g, &c.a, &c.b); got != c.want {
			t.Errorf("Compare(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Less(g, &c.a, &c.b); got != (c.want < 0) {
			t.Errorf("Less(%v, %v) = %v", c.a, c.b, got)
		}
	}
	// Without ordering columns only the position counts.
	a, b := Version{Order: ints(5), Commit: 1}, Version{Order: ints(1), Commit: 2}
	if Compare(Ordering{}, &a, &b) != -1 {
		t.Error("a group without ordering columns must ignore order values")
	}
}

func TestRegisterSteps(t *testing.T) {
	var r Register
	r.Init(ord([]string{"idx"}, nil))
	v := func(idx uint64, c uint64, s uint32, val string) *Version {
		return &Version{Order: ints(idx), Commit: c, Seq: s, Values: []byte(val)}
	}
	steps := []struct {
		v    *Version
		want Step
	}{
		{v(10, 1, 0, "a"), Step{Outcome: Won}},
		{v(20, 1, 1, "b"), Step{Outcome: Won, Other: Pos{1, 0}, HasOther: true}},
		{v(15, 2, 0, "c"), Step{Outcome: Lost, Other: Pos{1, 1}, HasOther: true}},
		{v(10, 3, 0, "a"), Step{Outcome: Repeat, Other: Pos{1, 0}, HasOther: true}},  // a superseded version still counts
		{v(15, 3, 1, "c"), Step{Outcome: Repeat, Other: Pos{2, 0}, HasOther: true}},  // so does a late one
		{v(15, 3, 2, "c2"), Step{Outcome: Lost, Other: Pos{1, 1}, HasOther: true}},   // same order, new values
		{v(20, 4, 0, "b2"), Step{Outcome: Won, Other: Pos{1, 1}, HasOther: true}},    // tie broken by commit
		{v(20, 4, 1, "b"), Step{Outcome: Repeat, Other: Pos{1, 1}, HasOther: true}},  // repeat of the one it beat
		{v(20, 4, 2, "b2"), Step{Outcome: Repeat, Other: Pos{4, 0}, HasOther: true}}, // repeat inside a statement
		{v(15, 4, 3, "c2"), Step{Outcome: Repeat, Other: Pos{3, 2}, HasOther: true}}, // in the middle of the set
		{v(25, 5, 0, "d"), Step{Outcome: Won, Other: Pos{4, 0}, HasOther: true}},     // the new maximum
		{v(5, 5, 1, "e"), Step{Outcome: Lost, Other: Pos{5, 0}, HasOther: true}},     // the new minimum
		{v(5, 5, 2, "e"), Step{Outcome: Repeat, Other: Pos{5, 1}, HasOther: true}},   // found at the front
		{v(25, 6, 0, "d"), Step{Outcome: Repeat, Other: Pos{5, 0}, HasOther: true}},  // found at the back
		{v(30, 6, 1, "f"), Step{Outcome: Won, Other: Pos{5, 0}, HasOther: true}},     // after repeats
		{v(30, 7, 0, "f"), Step{Outcome: Repeat, Other: Pos{6, 1}, HasOther: true}},  // of the winner
		{v(30, 7, 1, "f'"), Step{Outcome: Won, Other: Pos{6, 1}, HasOther: true}},    // a correction
		{v(2, 7, 2, "g"), Step{Outcome: Lost, Other: Pos{7, 1}, HasOther: true}},     // late at the front
		{v(22, 7, 3, "h"), Step{Outcome: Lost, Other: Pos{7, 1}, HasOther: true}},    // late in the middle
		{v(22, 7, 4, "h"), Step{Outcome: Repeat, Other: Pos{7, 3}, HasOther: true}},  // and repeated
		{v(20, 8, 0, "b3"), Step{Outcome: Lost, Other: Pos{7, 1}, HasOther: true}},   // equal order to others, lost
		{v(20, 8, 1, "b3"), Step{Outcome: Repeat, Other: Pos{8, 0}, HasOther: true}}, // last of three equal orders
		{v(20, 8, 2, "b"), Step{Outcome: Repeat, Other: Pos{1, 1}, HasOther: true}},  // first of three equal orders
		{v(20, 8, 3, "b2"), Step{Outcome: Repeat, Other: Pos{4, 0}, HasOther: true}}, // middle of three
		{v(20, 8, 4, "b4"), Step{Outcome: Lost, Other: Pos{7, 1}, HasOther: true}},   // none of them
		{v(31, 9, 0, "i"), Step{Outcome: Won, Other: Pos{7, 1}, HasOther: true}},     // still ordered after all that
		{v(31, 9, 1, "i"), Step{Outcome: Repeat, Other: Pos{9, 0}, HasOther: true}},
		{v(1, 9, 2, "j"), Step{Outcome: Lost, Other: Pos{9, 0}, HasOther: true}},
		{v(31, 10, 0, "k"), Step{Outcome: Won, Other: Pos{9, 0}, HasOther: true}},
		{v(31, 10, 1, "i"), Step{Outcome: Repeat, Other: Pos{9, 0}, HasOther: true}},  // behind the winner
		{v(31, 10, 2, "k"), Step{Outcome: Repeat, Other: Pos{10, 0}, HasOther: true}}, // the winner itself
	}
	for i, s := range steps {
		got, err := r.Add(s.v)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		// A repeat is told by its values: it must say so
		// (TestPropTiedSaysWhenValuesMatter checks Tied in general).
		if got.Outcome == Repeat && !got.Tied {
			t.Errorf("step %d (%s): a repeat not Tied", i, s.v.Values)
		}
		got.Tied = false
		if got != s.want {
			t.Errorf("step %d (%s): %+v, want %+v", i, s.v.Values, got, s.want)
		}
	}
	for i := 1; i < len(r.counted); i++ {
		a, b := r.counted[i-1], r.counted[i]
		if compareOrder(1, a.order, b.order) > 0 || (equalOrder(1, a.order, b.order) && a.pos.Compare(b.pos) >= 0) {
			t.Fatalf("I3 broken at %d: %v then %v", i, a, b)
		}
	}
	if w, ok := r.Winner(); !ok || w != (Pos{10, 0}) {
		t.Errorf("winner %v %v", w, ok)
	}
	ended, ok, err := r.Delete(&Delete{Commit: 11})
	if err != nil || !ok || ended != (Pos{10, 0}) {
		t.Errorf("delete ended %v %v %v", ended, ok, err)
	}
	if r.Counted() != 0 {
		t.Errorf("delete left %d counted", r.Counted())
	}
	// After the delete nothing counts: an old value is new again and wins.
	if got, _ := r.Add(v(10, 12, 0, "a")); got != (Step{Outcome: Won}) {
		t.Errorf("after delete: %+v", got)
	}
	if _, ok, _ := r.Delete(&Delete{Commit: 13}); !ok {
		t.Error("second delete ended nothing")
	}
	if _, ok, _ := r.Delete(&Delete{Commit: 14}); ok {
		t.Error("a delete of an empty group ended something")
	}
}

func TestRegisterCommitOrdered(t *testing.T) {
	var r Register
	r.Init(Ordering{})
	for i := range uint64(5) {
		got, err := r.Add(&Version{Commit: i + 1, Values: []byte("same")})
		if err != nil {
			t.Fatal(err)
		}
		want := Step{Outcome: Won, Other: Pos{Commit: i}, HasOther: i > 0}
		if got != want {
			t.Errorf("write %d: %+v, want %+v", i, got, want)
		}
	}
	if r.Counted() != 1 {
		t.Errorf("a commit-ordered group keeps %d counted, want only the winner", r.Counted())
	}
}

func TestRegisterErrors(t *testing.T) {
	var r Register
	r.Init(ord([]string{"idx"}, nil))
	if _, err := r.Add(&Version{Commit: 1}); !errors.Is(err, ErrOrderColumns) {
		t.Errorf("missing order value: %v", err)
	}
	if _, err := r.Add(&Version{Order: ints(1), Commit: 5, Seq: 2}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []Pos{{5, 2}, {5, 1}, {4, 9}} {
		if _, err := r.Add(&Version{Order: ints(9), Commit: p.Commit, Seq: p.Seq}); !errors.Is(err, ErrOutOfOrder) {
			t.Errorf("version at %v: %v", p, err)
		}
		if _, _, err := r.Delete(&Delete{Commit: p.Commit, Seq: p.Seq}); !errors.Is(err, ErrOutOfOrder) {
			t.Errorf("delete at %v: %v", p, err)
		}
	}
	// A rejected input changes nothing.
	if w, ok := r.Winner(); !ok || w != (Pos{5, 2}) || r.Counted() != 1 {
		t.Errorf("state after errors: %v %v %d", w, ok, r.Counted())
	}
	// Init resets, keeping nothing of the old epoch.
	r.Init(Ordering{})
	if _, ok := r.Winner(); ok {
		t.Error("Init kept a winner")
	}
	if _, err := r.Add(&Version{Commit: 1}); err != nil {
		t.Errorf("after Init: %v", err)
	}
}

func TestDeleteInsideCommit(t *testing.T) {
	g := ord([]string{"idx"}, nil)
	k := []byte("k")
	vs := []Version{
		{Key: k, Order: ints(5), Commit: 3, Seq: 0, Values: []byte("before")},
		{Key: k, Order: ints(1), Commit: 3, Seq: 2, Values: []byte("after")},
		{Key: k, Order: ints(9), Commit: 2, Values: []byte("older")},
	}
	ds := []Delete{{Key: k, Commit: 3, Seq: 1}}
	rs := mustResolve(t, []Ordering{g}, vs, ds)
	// "before" lost to "older"; the delete ends "older"; "after" starts afresh.
	if rs[0].State != Late || rs[0].SupersededBy != 2 {
		t.Errorf("before: %+v", rs[0])
	}
	if rs[2].State != Deleted || rs[2].EndedAt != 3 || StateAt(rs[2], 2) != Current || StateAt(rs[2], 3) != Deleted {
		t.Errorf("older: %+v", rs[2])
	}
	if rs[1].State != Current || rs[1].WonAt != 3 {
		t.Errorf("after: %+v", rs[1])
	}
	if StateAt(rs[0], 3) != Late || StateAt(rs[0], 2) != Invisible {
		t.Error("a late version stays late through a delete and is invisible before it is written")
	}

	// A version superseded before a delete stays superseded; only the winner
	// at the delete becomes deleted; a winner ended by a delete later in its
	// own commit has an empty interval.
	vs = []Version{
		{Key: k, Order: ints(1), Commit: 1, Values: []byte("a")},
		{Key: k, Order: ints(2), Commit: 2, Values: []byte("b")},
		{Key: k, Order: ints(7), Commit: 4, Seq: 0, Values: []byte("c")},
	}
	ds = []Delete{{Key: k, Commit: 3}, {Key: k, Commit: 4, Seq: 1}}
	rs = mustResolve(t, []Ordering{g}, vs, ds)
	if rs[0].State != Superseded || rs[0].SupersededBy != 2 || rs[1].State != Deleted || rs[1].SupersededBy != 3 {
		t.Errorf("a, b: %+v %+v", rs[0], rs[1])
	}
	if r := rs[2]; r.State != Deleted || r.WonAt != 4 || r.EndedAt != 4 || StateAt(r, 4) != Deleted {
		t.Errorf("c: %+v", r)
	}
	if ExistsAt(rs, 4) || !ExistsAt(rs, 2) || ExistsAt(rs, 3) {
		t.Error("existence across deletes")
	}
}

func TestResolveErrors(t *testing.T) {
	g := []Ordering{ord([]string{"idx"}, nil)}
	k := []byte("k")
	for name, c := range map[string]struct {
		vs   []Version
		ds   []Delete
		want error
	}{
		"unknown group": {vs: []Version{{Key: k, Group: 1, Commit: 1}}, want: ErrUnknownGroup},
		"order columns": {vs: []Version{{Key: k, Commit: 1}}, want: ErrOrderColumns},
		"two versions": {vs: []Version{{Key: k, Order: ints(1), Commit: 1}, {Key: k, Order: ints(2), Commit: 1}},
			want: ErrDuplicatePosition},
		"two deletes": {ds: []Delete{{Key: k, Commit: 1}, {Key: k, Commit: 1}}, want: ErrDuplicatePosition},
		"delete and version": {vs: []Version{{Key: k, Order: ints(1), Commit: 1}}, ds: []Delete{{Key: k, Commit: 1}},
			want: ErrDuplicatePosition},
	} {
		if _, err := Resolve(g, c.vs, c.ds); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
	}
	// The same position in different keys or groups is fine.
	gs := []Ordering{g[0], {}}
	vs := []Version{
		{Key: k, Order: ints(1), Commit: 1}, {Key: k, Group: 1, Commit: 1},
		{Key: []byte("j"), Order: ints(1), Commit: 1},
	}
	if _, err := Resolve(gs, vs, []Delete{{Key: []byte("i"), Commit: 1}}); err != nil {
		t.Errorf("distinct keys and groups: %v", err)
	}
}

func TestReasonFallbacks(t *testing.T) {
	g := Ordering{Valid: []string{"at"}}
	lo := &Version{Order: [][]byte{{0x01}}, Commit: 1}
	hi := &Version{Order: [][]byte{{0x02}}, Commit: 2}
	if got := Reason(g, Late, hi, lo, 0); got != "lost to commit 1: at 0x02 > 0x01" {
		t.Errorf("hex reason %q", got)
	}
	if got := Reason(g, Superseded, lo, hi, 0); got != "superseded by commit 2: at 0x01 < 0x02" {
		t.Errorf("hex reason %q", got)
	}
	if got := Reason(g, Dropped, hi, hi, 0); !strings.HasPrefix(got, "repeats commit 2") {
		t.Errorf("repeat reason %q", got)
	}
	for _, s := range []State{Current, Invisible} {
		if got := Reason(g, s, lo, nil, 0); got != "" {
			t.Errorf("%v reason %q", s, got)
		}
	}
	for s, want := range map[State]string{Late: "lost on arrival", Superseded: "superseded", Dropped: "repeat"} {
		if got := Reason(g, s, lo, nil, 0); got != want {
			t.Errorf("%v without a decider: %q", s, got)
		}
	}
	names := map[State]string{Invisible: "invisible", Current: "current", Superseded: "superseded",
		Late: "late", Deleted: "deleted", Dropped: "dropped", 99: "invalid"}
	for s, want := range names {
		if s.String() != want {
			t.Errorf("State(%d).String() = %q", s, s.String())
		}
	}
	for o, want := range map[Outcome]string{Won: "won", Lost: "lost", Repeat: "repeat", 0: "invalid"} {
		if o.String() != want {
			t.Errorf("Outcome(%d).String() = %q", o, o.String())
		}
	}
}

// TestAppendReasonAppends: AppendReason adds Reason's sentence after what
// dst holds, and a buffer reused for the next version holds only that
// version's sentence (storage's versions() reuses one per read).
func TestAppendReasonAppends(t *testing.T) {
	g := ord([]string{"idx"}, []string{"rev"})
	lo := &Version{Order: ints(1, 5), Commit: 3}
	hi := &Version{Order: ints(1, 7), Commit: 4, Seq: 2}
	tie := &Version{Order: ints(1, 7), Commit: 4, Seq: 3}
	cases := []struct {
		s      State
		v, by  *Version
		at     uint64
		reason string
	}{
		{Superseded, lo, hi, 0, "superseded by commit 4: rev 5 < 7"},
		{Late, lo, hi, 0, "lost to commit 4: rev 5 < 7"},
		{Superseded, hi, tie, 0, "superseded by commit 4: same ordering values, later position in commit 4"},
		{Superseded, lo, &Version{Order: ints(1, 5), Commit: 9}, 0, "superseded by commit 9: same ordering values, later commit"},
		{Deleted, lo, nil, 12, "deleted at commit 12"},
		{Dropped, tie, hi, 0, "repeats commit 4: same ordering values and values"},
		{Current, hi, nil, 0, ""},
	}
	buf := []byte("prefix|")
	for _, c := range cases {
		if got := Reason(g, c.s, c.v, c.by, c.at); got != c.reason {
			t.Errorf("Reason(%v) = %q, want %q", c.s, got, c.reason)
		}
		if got := string(AppendReason([]byte("prefix|"), &g, c.s, c.v, c.by, c.at)); got != "prefix|"+c.reason {
			t.Errorf("AppendReason(%v) = %q", c.s, got)
		}
		buf = AppendReason(buf[:0], &g, c.s, c.v, c.by, c.at)
		if string(buf) != c.reason {
			t.Errorf("reused buffer: %q, want %q", buf, c.reason)
		}
	}
}

// TestRegisterTouch: Touch reads the first byte of the ordering values Add
// compares first, the newest counted version's, and 0 when nothing counts.
func TestRegisterTouch(t *testing.T) {
	var r Register
	r.Init(ord([]string{"idx"}, nil))
	if got := r.Touch(); got != 0 {
		t.Fatalf("empty register: Touch = %d", got)
	}
	// Values that differ in their first byte, so the test tells which
	// version Touch read.
	for i, idx := range []uint64{10 << 56, 20 << 56, 15 << 56} {
		v := &Version{Order: ints(idx), Commit: uint64(i + 1), Values: []byte("x")}
		if _, err := r.Add(v); err != nil {
			t.Fatal(err)
		}
	}
	// Counted in ordering order; the greatest's encoding comes last.
	if want := ints(20 << 56)[0][0]; r.Touch() != want || want == ints(15 << 56)[0][0] {
		t.Fatalf("Touch = %d, want %d (first byte of the greatest's encoding)", r.Touch(), want)
	}
}

// TestSlabGrowsFromSmall: a Slab's allocations double from slabFirst up to
// slabChunk entries, so that one serving a few Registers (a read of one
// key's versions) takes a few hundred bytes, not 64 KiB, while one serving
// a memtable still allocates once per slabChunk entries; a piece larger
// than a chunk gets an allocation of its own size.
func TestSlabGrowsFromSmall(t *testing.T) {
	var s Slab
	c := s.grow(nil)
	if cap(c) != 1 || cap(s.free) != slabFirst {
		t.Fatalf("first piece %d of an allocation of %d entries, want 1 of %d", cap(c), cap(s.free), slabFirst)
	}
	var sizes []int
	for range 5000 {
		before := cap(s.free)
		s.grow(make([]entry, 0, 1))
		if cap(s.free) != before {
			sizes = append(sizes, cap(s.free))
		}
	}
	want := []int{32, 64, 128, 256, 512, 1024}
	if len(sizes) < len(want) || !slices.Equal(sizes[:len(want)], want) {
		t.Fatalf("allocations of %v entries, want %v then %d each", sizes, want, slabChunk)
	}
	for _, n := range sizes[len(want):] {
		if n != slabChunk {
			t.Fatalf("allocations of %v entries, want at most %d", sizes, slabChunk)
		}
	}
	big := s.grow(make([]entry, 0, 2*slabChunk))
	if cap(big) != 4*slabChunk {
		t.Fatalf("a piece of %d entries from a slab of chunks of %d", cap(big), slabChunk)
	}
}
