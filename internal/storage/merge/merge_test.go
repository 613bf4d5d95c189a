package merge

import (
	"errors"
	"runtime"
	"slices"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/storage/manifest"
	"github.com/strata-db/strata/internal/storage/part"
	"github.com/strata-db/strata/internal/version"
)

func sorted(rows []trow) []trow {
	slices.SortFunc(rows, func(a, b trow) int {
		if less(&a, &b) {
			return -1
		}
		return 1
	})
	return rows
}

func TestAppendConcatenates(t *testing.T) {
	f := newFixture(t, testTable(catalog.ModeAppend))
	a := f.write([]trow{{key: 1, commit: 1, a: 10}, {key: 3, commit: 1, seq: 1, a: 30}}, part.KindAppend, part.WriteOptions{})
	b := f.write([]trow{{key: 1, commit: 2, a: 11}, {key: 2, commit: 2, seq: 1, a: 20}, {key: 3, commit: 2, seq: 2, a: 31}}, part.KindAppend, part.WriteOptions{})
	out, st := f.merge([]manifest.Part{a, b}, true, 0)
	if len(out) != 1 || out[0].Kind != manifest.KindAppend || out[0].Level != 1 || out[0].Rows != 5 {
		t.Fatalf("outputs %+v", out)
	}
	var got []int64
	for _, r := range f.read(out[0]) {
		got = append(got, r.a)
	}
	if want := []int64{10, 11, 20, 30, 31}; !slices.Equal(got, want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	if st.In != 5 || st.Out != 5 || out[0].MinCommit != 1 || out[0].MaxCommit != 2 {
		t.Fatalf("stats %+v, part %+v", st, out[0])
	}
}

// TestVersionedSeedTable merges the four writes of R3.5, flushed as two
// parts, and checks the current and history runs.
func TestVersionedSeedTable(t *testing.T) {
	f := newFixture(t, testTable(catalog.ModeVersioned))
	p1 := f.write([]trow{{key: 1, group: 1, commit: 1, o: 100, b: 1}, {key: 1, group: 1, commit: 2, o: 200, b: 2}}, part.KindDelta, part.WriteOptions{})
	p2 := f.write([]trow{{key: 1, group: 1, commit: 3, o: 150, b: 3}, {key: 1, group: 1, commit: 4, o: 200, b: 4}, {key: 1, group: 1, commit: 5, o: 150, b: 3}}, part.KindDelta, part.WriteOptions{})
	out, st := f.merge([]manifest.Part{p1, p2}, true, 0)
	if len(out) != 2 || out[0].Kind != manifest.KindCurrent || out[1].Kind != manifest.KindHistory {
		t.Fatalf("outputs %+v", out)
	}
	cur, hist := f.read(out[0]), f.read(out[1])
	// The history part's ordering values are g1's VALID BY column o, so
	// it stores none and read rebuilt them (and compared them with o).
	rs := f.open(out[1:])
	if from := rs[0].Meta().OrderFrom; len(from) != 1 || from[0].Group != 1 || !slices.Equal(from[0].Cols, []catalog.ColumnID{3}) {
		t.Errorf("history part's OrderFrom = %v, want g1 from column 3", from)
	}
	rs[0].Close()
	if len(cur) != 1 || cur[0].b != 4 || cur[0].state != version.Current || cur[0].wonAt != 4 || cur[0].endedAt != version.Forever {
		t.Fatalf("current run %+v", cur)
	}
	want := []struct {
		b              int64
		state          version.State
		won, end, supe uint64
	}{{1, version.Superseded, 1, 2, 2}, {2, version.Superseded, 2, 4, 4}, {3, version.Late, 0, 0, 2}}
	if len(hist) != len(want) {
		t.Fatalf("history run %+v", hist)
	}
	for i, w := range want {
		h := hist[i]
		if h.b != w.b || h.state != w.state || h.wonAt != w.won || h.endedAt != w.end || h.superBy != w.supe {
			t.Errorf("history row %d = %+v, want %+v", i, h, w)
		}
	}
	if st.Repeats != 1 {
		t.Errorf("the repeat at commit 5 (R3.4) was not dropped: %+v", st)
	}
}

func TestUpsertDeletes(t *testing.T) {
	rows := []trow{
		{key: 1, commit: 1, a: 1}, {key: 1, tomb: true, commit: 2}, {key: 1, commit: 3, a: 3},
		{key: 1, tomb: true, commit: 4}, {key: 2, commit: 4, seq: 1, a: 2},
	}
	for _, oldest := range []bool{true, false} {
		f := newFixture(t, testTable(catalog.ModeUpsert))
		p := f.write(sorted(slices.Clone(rows)), part.KindDelta, part.WriteOptions{})
		out, _ := f.merge([]manifest.Part{p}, oldest, 0)
		got := f.read(out[0])
		want := []trow{{key: 1, tomb: true, commit: 4}, {key: 2, commit: 4, seq: 1, a: 2}}
		kind := manifest.KindDelta
		if oldest {
			// The deletes and everything they ended are gone.
			want = want[1:]
			want[0].state, want[0].wonAt, want[0].endedAt = version.Current, 4, version.Forever
			kind = manifest.KindCurrent
		}
		if out[0].Kind != kind || !slices.Equal(got, want) {
			t.Errorf("oldest=%v: %v %+v, want %+v", oldest, out[0].Kind, got, want)
		}
	}
}

// TestVersionedPartial: without the oldest data nothing is resolved, deletes
// stay, repeats go.
func TestVersionedPartial(t *testing.T) {
	f := newFixture(t, testTable(catalog.ModeVersioned))
	p := f.write(sorted([]trow{
		{key: 1, group: 1, commit: 1, o: 5, b: 1}, {key: 1, tomb: true, commit: 2},
		{key: 1, group: 1, commit: 3, o: 5, b: 1}, {key: 1, group: 1, commit: 4, o: 5, b: 1},
	}), part.KindDelta, part.WriteOptions{})
	out, st := f.merge([]manifest.Part{p}, false, 0)
	got := f.read(out[0])
	want := []trow{{key: 1, tomb: true, commit: 2}, {key: 1, group: 1, commit: 1, o: 5, b: 1}, {key: 1, group: 1, commit: 3, o: 5, b: 1}}
	if len(out) != 1 || out[0].Kind != manifest.KindDelta || !slices.Equal(got, want) || st.Repeats != 1 {
		t.Fatalf("%+v %+v, want %+v", out, got, want)
	}
}

func TestBadInput(t *testing.T) {
	f := newFixture(t, testTable(catalog.ModeVersioned))
	p := f.write([]trow{{key: 1, group: 1, tomb: true, commit: 1}}, part.KindDelta, part.WriteOptions{})
	rs := f.open([]manifest.Part{p})
	_, _, err := Merge(rs, Options{Table: f.table, FS: f.fs, Create: f.create, Oldest: true})
	if !errors.Is(err, ErrInput) {
		t.Fatalf("delete marker in group 1: %v", err)
	}
	other := testTable(catalog.ModeVersioned)
	other.ID = 8
	if _, _, err := Merge(rs, Options{Table: other, FS: f.fs, Create: f.create}); !errors.Is(err, ErrInput) {
		t.Fatalf("part of another table: %v", err)
	}
	if _, _, err := Merge(nil, Options{Table: other, FS: f.fs, Create: f.create}); err == nil {
		t.Fatal("no inputs accepted")
	}
}

// TestColumns: a dropped column is not carried forward, a column no input
// holds stays absent (reads fill its introduced default).
func TestColumns(t *testing.T) {
	tab := testTable(catalog.ModeVersioned)
	f := newFixture(t, tab)
	p := f.write([]trow{{key: 1, commit: 1, a: 4}, {key: 1, group: 1, commit: 1, seq: 1, o: 1, b: 2}}, part.KindDelta, part.WriteOptions{})
	later := *tab
	later.Columns = []*catalog.Column{tab.Columns[0], tab.Columns[2], tab.Columns[3],
		{ID: 5, Name: "c", Type: tab.Columns[3].Type, Group: 1, Introduced: &catalog.Default{Value: "9"}}}
	later.Dropped = []*catalog.Column{tab.Columns[1]}
	f.table = &later
	out, _ := f.merge([]manifest.Part{p}, true, 0)
	r, err := part.Open(f.fs, out[0].File)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ids []catalog.ColumnID
	for _, c := range r.Meta().Columns {
		ids = append(ids, c.ID)
	}
	if !slices.Equal(ids, []catalog.ColumnID{1, 3, 4}) {
		t.Fatalf("output columns %v", ids)
	}
}

// TestMemoryBound merges inputs many blocks long: the outputs are cut
// into parts of about PartRows rows, keys are never split across parts, and
// the row loop allocates far less than once per row.
func TestMemoryBound(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 120k rows")
	}
	f := newFixture(t, testTable(catalog.ModeVersioned))
	const perInput, inputs, partRows = 40000, 3, 10000
	var ps []manifest.Part
	for in := range inputs {
		rows := make([]trow, 0, perInput)
		for i := range perInput {
			rows = append(rows, trow{key: int64(i / 2), group: uint16(i % 2), commit: uint64(in + 1), seq: uint32(i),
				o: int64(in), b: int64(i), a: int64(in)})
		}
		ps = append(ps, f.write(rows, part.KindDelta, part.WriteOptions{BlockRows: 1000}))
	}
	rs := f.open(ps)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	outs, st, err := Merge(rs, Options{Table: f.table, FS: f.fs, Create: f.create, Oldest: true, PartRows: partRows,
		Write: part.WriteOptions{BlockRows: 1000}})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if st.In != perInput*inputs || st.Out != st.In {
		t.Fatalf("stats %+v", st)
	}
	var keys int64
	for _, o := range outs {
		if o.Part.Rows > partRows+2*inputs {
			t.Errorf("part %d has %d rows, PartRows is %d", o.Part.ID, o.Part.Rows, partRows)
		}
		rows := f.read(o.Part)
		if o.Part.Kind == manifest.KindCurrent {
			keys += int64(len(rows))
		}
	}
	if len(outs) < 2*inputs*perInput/partRows/2 || keys != perInput {
		t.Fatalf("%d outputs, %d current rows", len(outs), keys)
	}
	perRow := float64(after.Mallocs-before.Mallocs) / float64(st.In)
	t.Logf("%d outputs, %.3f allocations per row (part.Write's included)", len(outs), perRow)
	if perRow > 1 {
		t.Errorf("%.2f allocations per row", perRow)
	}
}

// TestFailureRemovesOutputs: when naming (or writing) an output fails
// midway, Merge fails and no part it wrote is left behind (invariant 5).
func TestFailureRemovesOutputs(t *testing.T) {
	f := newFixture(t, testTable(catalog.ModeVersioned))
	var rows []trow
	for i := range 40 {
		rows = append(rows, trow{key: int64(i), group: 1, commit: 1, o: 1, b: int64(i)})
	}
	p := f.write(rows, part.KindDelta, part.WriteOptions{})
	before, err := f.fs.List(".")
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	create := func(k part.Kind) (string, uint64, error) {
		if calls++; calls == 4 {
			return "", 0, errors.New("no more ids")
		}
		return f.create(k)
	}
	rs := f.open([]manifest.Part{p})
	defer rs[0].Close()
	if _, _, err := Merge(rs, Options{Table: f.table, FS: f.fs, Create: create, Oldest: true, PartRows: 5}); err == nil {
		t.Fatal("merge succeeded")
	}
	after, err := f.fs.List(".")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(before, after) || calls != 4 {
		t.Fatalf("files before %v, after %v (%d names asked)", before, after, calls)
	}
}
