package version

import (
	"strconv"
	"testing"
)

// A layout here is a number base: a payload is the value written in it.
// Payloads of one base are equal exactly when their bytes are; across
// bases only Same can tell ("10" in base 10 is "a" in base 16, and "10" in
// base 16 is sixteen).
func sameAcrossBases(la any, a []byte, lb any, b []byte, _ uint64) bool {
	x, errA := strconv.ParseUint(string(a), la.(int), 64)
	y, errB := strconv.ParseUint(string(b), lb.(int), 64)
	return errA == nil && errB == nil && x == y
}

// TestRepeatAcrossLayouts: a version repeats one of another layout that
// holds the same values (rule 3, R3.4 after an ALTER), in Register, Decide
// and Resolve alike; the same bytes under another layout are other values.
func TestRepeatAcrossLayouts(t *testing.T) {
	o := ord([]string{"idx"}, nil)
	o.Same = sameAcrossBases
	v := func(idx, c uint64, base int, val string) Version {
		return Version{Key: []byte("k"), Order: ints(idx), Commit: c, Values: []byte(val), Layout: base}
	}
	vs := []Version{
		v(10, 1, 10, "10"),
		v(20, 2, 10, "20"),
		v(10, 3, 16, "a"),  // repeats commit 1 in another base
		v(20, 4, 16, "20"), // thirty-two: not commit 2's twenty
		v(20, 5, 16, "14"), // twenty: repeats commit 2
	}
	want := []Outcome{Won, Won, Repeat, Won, Repeat}
	var r Register
	r.Init(o)
	for i := range vs {
		st, err := r.Add(&vs[i])
		if err != nil {
			t.Fatal(err)
		}
		if st.Outcome != want[i] {
			t.Errorf("Register: version %d: %v, want %v", i, st.Outcome, want[i])
		}
	}
	rs := mustResolve(t, []Ordering{o}, vs, nil)
	for i, s := range []State{Superseded, Superseded, Dropped, Current, Dropped} {
		if rs[i].State != s {
			t.Errorf("Resolve: version %d: %v, want %v", i, rs[i].State, s)
		}
	}
	// Without Same the layouts are ignored and bytes decide.
	plain := ord([]string{"idx"}, nil)
	rs = mustResolve(t, []Ordering{plain}, vs, nil)
	if rs[2].State == Dropped || rs[4].State == Dropped {
		t.Errorf("Resolve without Same dropped a version of other bytes: %v", rs)
	}
	// Decide (upsert) consults the winner across layouts too.
	w, x := v(20, 2, 10, "20"), v(20, 3, 16, "14")
	if got := Decide(o, &w, &x); got != Repeat {
		t.Errorf("Decide across layouts: %v, want repeat", got)
	}
	if z := v(20, 3, 10, "20"); Decide(o, &w, &z) != Repeat {
		t.Error("Decide: same values under one layout must repeat")
	}
	y := v(20, 3, 16, "20")
	if got := Decide(o, &w, &y); got != Won {
		t.Errorf("Decide: other values in another layout: %v, want won", got)
	}
}
