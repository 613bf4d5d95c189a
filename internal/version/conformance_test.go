package version

import (
	"slices"
	"testing"
)

// These tests replay, at the level of versions, the expectations of SPEC
// R3.5 and of ../shared/conformance/{ordering,modes,asof,groups}.slt that
// concern which version wins, states, superseded_by and reasons. Commit
// numbers are the ones the scripts get on a new database.

// idxRev is the ordering of ordering.slt's group g.
var idxRev = ord([]string{"idx"}, []string{"rev"})

func TestSpecR35Table(t *testing.T) {
	holding := ord([]string{"balance_index"}, []string{"balance_version"})
	vs := []Version{
		{Key: []byte("k"), Order: ints(100, 1), Commit: 1, Values: []byte("write 1")},
		{Key: []byte("k"), Order: ints(200, 1), Commit: 2, Values: []byte("write 2")},
		{Key: []byte("k"), Order: ints(150, 9), Commit: 3, Values: []byte("write 3")},
		{Key: []byte("k"), Order: ints(200, 2), Commit: 4, Values: []byte("write 4")},
	}
	want := []string{"write 1", "write 2", "write 2", "write 4"}
	wantCommit := []uint64{1, 2, 2, 4}
	var r Register
	r.Init(holding)
	rs := mustResolve(t, []Ordering{holding}, vs, nil)
	for i := range vs {
		if _, err := r.Add(&vs[i]); err != nil {
			t.Fatal(err)
		}
		p, _ := r.Winner()
		if p.Commit != wantCommit[i] {
			t.Errorf("arrival %d: Register winner at commit %d, want %s", i+1, p.Commit, want[i])
		}
		if got, _ := winnerValues(vs, rs, "k", 0, uint64(i+1)); got != want[i] {
			t.Errorf("arrival %d: winner %q, want %q", i+1, got, want[i])
		}
	}
	if rs[2].Reason != "lost to commit 2: balance_index 150 < 200" {
		t.Errorf("write 3 reason %q", rs[2].Reason)
	}
	if rs[1].Reason != "superseded by commit 4: balance_version 1 < 2" {
		t.Errorf("write 2 reason %q", rs[1].Reason)
	}
}

// orderingB is table b of ordering.slt: commits 2..5.
func orderingB() []Version {
	return []Version{
		{Key: []byte{1}, Order: ints(100, 1), Commit: 2, Values: []byte("write 1")},
		{Key: []byte{1}, Order: ints(200, 1), Commit: 3, Values: []byte("write 2")},
		{Key: []byte{1}, Order: ints(150, 9), Commit: 4, Values: []byte("write 3")},
		{Key: []byte{1}, Order: ints(200, 2), Commit: 5, Values: []byte("write 4")},
	}
}

func TestOrderingSLTStates(t *testing.T) {
	vs := orderingB()
	rs := mustResolve(t, []Ordering{idxRev}, vs, nil)
	want := []struct {
		state  State
		by     uint64
		reason string
	}{
		{Superseded, 3, "superseded by commit 3: idx 100 < 200"},
		{Superseded, 5, "superseded by commit 5: rev 1 < 2"},
		{Late, 3, "lost to commit 3: idx 150 < 200"},
		{Current, NoCommit, ""},
	}
	for i, w := range want {
		r := rs[i]
		if r.State != w.state || r.SupersededBy != w.by || r.Reason != w.reason {
			t.Errorf("%s: got (%v, %d, %q), want (%v, %d, %q)", vs[i].Values,
				r.State, r.SupersededBy, r.Reason, w.state, w.by, w.reason)
		}
	}
	for _, c := range []struct {
		n    uint64
		want string
	}{{2, "write 1"}, {3, "write 2"}, {4, "write 2"}, {5, "write 4"}} {
		if got, _ := winnerValues(vs, rs, "\x01", 0, c.n); got != c.want {
			t.Errorf("AS OF %d: %q, want %q", c.n, got, c.want)
		}
	}
	if _, ok := winnerValues(vs, rs, "\x01", 0, 1); ok {
		t.Error("AS OF 1: the key exists before its first write")
	}
	// States as they stood at commit 4: write 2 current, write 1 superseded,
	// write 3 late, write 4 not yet written.
	at4 := []State{Superseded, Current, Late, Invisible}
	for i, w := range at4 {
		if got := StateAt(rs[i], 4); got != w {
			t.Errorf("%s AS OF 4: %v, want %v", vs[i].Values, got, w)
		}
	}
}

// retained returns the Values of the versions that count, in rule-1 order.
func retained(g Ordering, vs []Version, rs []Resolved) []string {
	var keep []*Version
	for i := range vs {
		if rs[i].State != Dropped {
			keep = append(keep, &vs[i])
		}
	}
	slices.SortFunc(keep, func(a, b *Version) int { return Compare(g, a, b) })
	out := make([]string, len(keep))
	for i, v := range keep {
		out[i] = string(v.Values)
	}
	return out
}

func TestOrderingSLTConvergeRepeatTies(t *testing.T) {
	b := orderingB()
	// b2: the same writes in the opposite order, two in one statement.
	b2 := []Version{
		{Key: []byte{1}, Order: ints(200, 2), Commit: 1, Values: []byte("write 4")},
		{Key: []byte{1}, Order: ints(150, 9), Commit: 2, Seq: 0, Values: []byte("write 3")},
		{Key: []byte{1}, Order: ints(200, 1), Commit: 2, Seq: 1, Values: []byte("write 2")},
		{Key: []byte{1}, Order: ints(100, 1), Commit: 3, Values: []byte("write 1")},
	}
	gs := []Ordering{idxRev}
	rb, rb2 := mustResolve(t, gs, b, nil), mustResolve(t, gs, b2, nil)
	wantHist := []string{"write 1", "write 3", "write 2", "write 4"}
	if got := retained(idxRev, b, rb); !slices.Equal(got, wantHist) {
		t.Errorf("b history %q", got)
	}
	if got := retained(idxRev, b2, rb2); !slices.Equal(got, wantHist) {
		t.Errorf("b2 history %q", got)
	}
	if got, _ := winnerValues(b2, rb2, "\x01", 0, 3); got != "write 4" {
		t.Errorf("b2 winner %q", got)
	}

	// An exact repeat adds nothing; ties go to the later commit, then to the
	// later position in a statement.
	b2 = append(b2,
		Version{Key: []byte{1}, Order: ints(200, 1), Commit: 4, Values: []byte("write 2")},
		Version{Key: []byte{1}, Order: ints(300, 1), Commit: 5, Values: []byte("tie a")},
		Version{Key: []byte{1}, Order: ints(300, 1), Commit: 6, Values: []byte("tie b")},
		Version{Key: []byte{1}, Order: ints(400, 1), Commit: 7, Seq: 0, Values: []byte("pos x")},
		Version{Key: []byte{1}, Order: ints(400, 1), Commit: 7, Seq: 1, Values: []byte("pos y")},
	)
	rb2 = mustResolve(t, gs, b2, nil)
	if rb2[4].State != Dropped || rb2[4].By != 2 {
		t.Errorf("repeat: %+v", rb2[4])
	}
	if n := len(retained(idxRev, b2[:5], rb2[:5])); n != 4 {
		t.Errorf("versions after the repeat: %d, want 4", n)
	}
	for _, c := range []struct {
		n    uint64
		want string
	}{{4, "write 4"}, {5, "tie a"}, {6, "tie b"}, {7, "pos y"}} {
		if got, _ := winnerValues(b2, rb2, "\x01", 0, c.n); got != c.want {
			t.Errorf("AS OF %d: %q, want %q", c.n, got, c.want)
		}
	}
	for i, want := range map[int]string{
		5: "superseded by commit 6: same ordering values, later commit",
		6: "superseded by commit 7: idx 300 < 400",
		7: "superseded by commit 7: same ordering values, later position in commit 7",
	} {
		if rb2[i].Reason != want {
			t.Errorf("%s: reason %q, want %q", b2[i].Values, rb2[i].Reason, want)
		}
	}
	// pos x won and lost inside commit 7: its interval is empty.
	if r := rb2[7]; r.WonAt != 7 || r.EndedAt != 7 || StateAt(r, 7) != Superseded {
		t.Errorf("pos x: %+v", r)
	}
}

func TestOrderingSLTPlainTimestampUpsert(t *testing.T) {
	// plain: no ordering clauses, the last committed write wins, and an
	// identical write is still a new version (R3.4).
	plain := Ordering{}
	vs := []Version{
		{Key: []byte{1}, Commit: 10, Values: []byte("first")},
		{Key: []byte{1}, Commit: 11, Values: []byte("second")},
		{Key: []byte{1}, Commit: 12, Values: []byte("second")},
	}
	rs := mustResolve(t, []Ordering{plain}, vs, nil)
	if got, _ := winnerValues(vs, rs, "\x01", 0, 11); got != "second" {
		t.Errorf("plain winner %q", got)
	}
	if rs[2].State != Current || rs[1].State != Superseded {
		t.Errorf("plain states %v %v", rs[1].State, rs[2].State)
	}
	if rs[0].Reason != "superseded by commit 11: later commit" {
		t.Errorf("plain reason %q", rs[0].Reason)
	}

	// tsd: DATETIME64 ordering (milliseconds, big-endian): noon stays.
	at := ord([]string{"at"}, nil)
	noon, morning := uint64(1790856000000), uint64(1790845200000)
	vs = []Version{
		{Key: []byte{1}, Order: ints(noon), Commit: 20, Values: []byte("noon")},
		{Key: []byte{1}, Order: ints(morning), Commit: 21, Values: []byte("morning")},
	}
	rs = mustResolve(t, []Ordering{at}, vs, nil)
	if got, _ := winnerValues(vs, rs, "\x01", 0, 21); got != "noon" || rs[1].State != Late {
		t.Errorf("tsd winner %q, morning %v", got, rs[1].State)
	}

	// u: an upsert table keeps only the winner; the losing write is
	// accepted and discarded, an exact repeat of the winner changes nothing.
	g := ord([]string{"idx"}, nil)
	newer := Version{Key: []byte{1}, Order: ints(20), Commit: 30, Values: []byte("new")}
	older := Version{Key: []byte{1}, Order: ints(10), Commit: 31, Values: []byte("old")}
	again := Version{Key: []byte{1}, Order: ints(20), Commit: 32, Values: []byte("new")}
	redo := Version{Key: []byte{1}, Order: ints(20), Commit: 33, Values: []byte("redo")}
	if got := Decide(g, nil, &newer); got != Won {
		t.Errorf("first write: %v", got)
	}
	if got := Decide(g, &newer, &older); got != Lost {
		t.Errorf("older write: %v", got)
	}
	if got := Decide(g, &newer, &again); got != Repeat {
		t.Errorf("repeat: %v", got)
	}
	if got := Decide(g, &newer, &redo); got != Won {
		t.Errorf("same index, later commit, new values: %v", got)
	}
	if got := Decide(plain, &vs[0], &vs[1]); got != Won {
		t.Errorf("commit-ordered group: %v", got)
	}
}

func TestModesSLTDeleteStartsAfresh(t *testing.T) {
	// vt: VALID BY (idx); insert at 10, delete at 11, insert at 12 with a
	// lower idx, which wins because the key started afresh (R5.4).
	g := ord([]string{"idx"}, nil)
	vs := []Version{
		{Key: []byte{1}, Order: ints(50), Commit: 10, Values: []byte("100")},
		{Key: []byte{1}, Order: ints(10), Commit: 12, Values: []byte("7")},
	}
	ds := []Delete{{Key: []byte{1}, Commit: 11}}
	rs := mustResolve(t, []Ordering{g}, vs, ds)
	for _, c := range []struct {
		n      uint64
		want   string
		exists bool
	}{{9, "", false}, {10, "100", true}, {11, "", false}, {12, "7", true}} {
		got, ok := winnerValues(vs, rs, "\x01", 0, c.n)
		if got != c.want || ok != c.exists || ExistsAt(rs, c.n) != c.exists {
			t.Errorf("AS OF %d: %q %v, want %q %v", c.n, got, ok, c.want, c.exists)
		}
	}
	if r := rs[0]; r.State != Deleted || r.SupersededBy != 11 || r.Reason != "deleted at commit 11" ||
		r.WonAt != 10 || r.EndedAt != 11 {
		t.Errorf("deleted version: %+v", r)
	}
	if rs[1].State != Current || rs[1].SupersededBy != NoCommit {
		t.Errorf("fresh version: %+v", rs[1])
	}

	// kv: an upsert table ordered by commit; a at 5, b at 5, a at 6, b
	// updated at 7, a deleted at 8: b 3 remains.
	plain := Ordering{}
	kv := []Version{
		{Key: []byte("a"), Commit: 5, Seq: 0, Values: []byte("1")},
		{Key: []byte("b"), Commit: 5, Seq: 1, Values: []byte("2")},
		{Key: []byte("a"), Commit: 6, Values: []byte("10")},
		{Key: []byte("b"), Commit: 7, Values: []byte("3")},
	}
	rs = mustResolve(t, []Ordering{plain}, kv, []Delete{{Key: []byte("a"), Commit: 8}})
	if _, ok := winnerValues(kv, rs, "a", 0, 8); ok {
		t.Error("a survives its delete")
	}
	if got, _ := winnerValues(kv, rs, "b", 0, 8); got != "3" {
		t.Errorf("b = %q", got)
	}
	if rs[0].State != Superseded || rs[2].State != Deleted {
		t.Errorf("a's versions: %v %v", rs[0].State, rs[2].State)
	}
}

func TestAsOfSLT(t *testing.T) {
	plain := Ordering{}
	vs := []Version{
		{Key: []byte{1}, Commit: 2, Seq: 0, Values: []byte("10")},
		{Key: []byte{2}, Commit: 2, Seq: 1, Values: []byte("20")},
		{Key: []byte{1}, Commit: 3, Values: []byte("11")},
		{Key: []byte{3}, Commit: 5, Values: []byte("30")},
	}
	ds := []Delete{{Key: []byte{2}, Commit: 4}}
	rs := mustResolve(t, []Ordering{plain}, vs, ds)
	rows := func(n uint64) map[string]string {
		out := map[string]string{}
		for _, k := range []string{"\x01", "\x02", "\x03"} {
			if v, ok := winnerValues(vs, rs, k, 0, n); ok {
				out[k] = v
			}
		}
		return out
	}
	want := map[uint64]map[string]string{
		1: {},
		2: {"\x01": "10", "\x02": "20"},
		3: {"\x01": "11", "\x02": "20"},
		4: {"\x01": "11"},
		5: {"\x01": "11", "\x03": "30"},
	}
	for n, w := range want {
		got := rows(n)
		if len(got) != len(w) {
			t.Errorf("AS OF %d: %q, want %q", n, got, w)
			continue
		}
		for k, v := range w {
			if got[k] != v {
				t.Errorf("AS OF %d: %q, want %q", n, got, w)
			}
		}
	}
}

func TestGroupsSLT(t *testing.T) {
	const (
		def GroupID = iota
		money
		risk
	)
	gs := []Ordering{{}, ord([]string{"bal_idx"}, nil), ord([]string{"score_idx"}, nil)}
	id1, id2 := []byte{1}, []byte{2}
	vs := []Version{
		{Key: id1, Group: money, Order: ints(10), Commit: 2, Values: []byte("100")},
		{Key: id1, Group: risk, Order: ints(5), Commit: 3, Values: []byte("7")},
		{Key: id1, Group: money, Order: ints(9), Commit: 4, Values: []byte("50")},
		{Key: id1, Group: risk, Order: ints(6), Commit: 5, Values: []byte("8")},
		{Key: id1, Group: def, Commit: 6, Values: []byte("hello")},
		// commit 7: one statement, each row split by group at its position.
		{Key: id1, Group: money, Order: ints(1), Commit: 7, Seq: 0, Values: []byte("1")},
		{Key: id1, Group: risk, Order: ints(7), Commit: 7, Seq: 0, Values: []byte("9")},
		{Key: id2, Group: money, Order: ints(1), Commit: 7, Seq: 1, Values: []byte("20")},
		{Key: id2, Group: risk, Order: ints(1), Commit: 7, Seq: 1, Values: []byte("2")},
	}
	rs := mustResolve(t, gs, vs, nil)
	row := func(key string, n uint64) [3]string {
		var out [3]string
		for g := range out {
			if v, ok := winnerValues(vs, rs, key, GroupID(g), n); ok {
				out[g] = v
			} else {
				out[g] = "NULL"
			}
		}
		return out
	}
	for _, c := range []struct {
		key  string
		n    uint64
		want [3]string // default, money, risk
	}{
		{"\x01", 3, [3]string{"NULL", "100", "7"}},
		{"\x01", 4, [3]string{"NULL", "100", "7"}},
		{"\x01", 5, [3]string{"NULL", "100", "8"}},
		{"\x01", 6, [3]string{"hello", "100", "8"}},
		{"\x01", 7, [3]string{"hello", "100", "9"}},
		{"\x02", 6, [3]string{"NULL", "NULL", "NULL"}},
		{"\x02", 7, [3]string{"NULL", "20", "2"}},
	} {
		if got := row(c.key, c.n); got != c.want {
			t.Errorf("id %d AS OF %d: %q, want %q", c.key[0], c.n, got, c.want)
		}
	}
	counts := map[GroupID]int{}
	for i := range vs {
		if vs[i].Key[0] == 1 && rs[i].State != Dropped {
			counts[vs[i].Group]++
		}
	}
	if counts[def] != 1 || counts[money] != 3 || counts[risk] != 3 {
		t.Errorf("versions of id 1 per group: %v", counts)
	}
	// The stale write to money (commit 4) is late and never held risk back.
	if rs[2].State != Late || rs[2].Reason != "lost to commit 2: bal_idx 9 < 10" {
		t.Errorf("stale money write: %v %q", rs[2].State, rs[2].Reason)
	}
	sub, _ := pick(vs, rs, "\x02", money)
	if !ExistsAt(sub, 7) || ExistsAt(sub, 6) {
		t.Error("id 2 exists exactly from commit 7")
	}
}

func TestKeyOnlyWriteAndUpsertTies(t *testing.T) {
	// R4.4: a write of only the key columns is a version of the default
	// group with no columns; the key exists with every other group empty.
	gs := []Ordering{{}, ord([]string{"idx"}, nil)}
	vs := []Version{{Key: []byte("k"), Group: 0, Commit: 2}}
	rs := mustResolve(t, gs, vs, nil)
	if !ExistsAt(rs, 2) || ExistsAt(rs, 1) {
		t.Error("a key-only write must make the key exist from its commit")
	}
	if _, ok := winnerValues(vs, rs, "k", 1, 2); ok {
		t.Error("a key-only write must leave the other groups empty")
	}

	// Rule 4: an exact repeat of a version that lost a tie by commit order
	// is dropped in a versioned table (it still counts) but wins in an
	// upsert table, which kept only the winner.
	g := ord([]string{"idx"}, nil)
	a := Version{Key: []byte("k"), Order: ints(300), Commit: 5, Values: []byte("tie a")}
	b := Version{Key: []byte("k"), Order: ints(300), Commit: 6, Values: []byte("tie b")}
	again := a
	again.Commit = 7
	rs = mustResolve(t, []Ordering{g}, []Version{a, b, again}, nil)
	if rs[2].State != Dropped || rs[1].State != Current {
		t.Errorf("versioned: %v %v", rs[1].State, rs[2].State)
	}
	if Decide(g, &b, &again) != Won {
		t.Error("upsert: a repeat of a discarded version is a new write")
	}
}
