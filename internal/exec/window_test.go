package exec_test

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/exec"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// wrow is one row of the random table r(id, p, o, x); nil is NULL.
type wrow struct {
	id      int64
	p, o, x *int64
}

// windowSource builds r(id, p, o, x) with n random rows: few partitions,
// many ties in o, NULLs in every column but id.
func windowSource(t *testing.T, rng *rand.Rand, n int) (*fakeSource, []wrow) {
	cat := catalog.New()
	i64 := types.Of(types.Int64)
	tb, _, err := cat.CreateTable(catalog.TableSpec{Name: "r", Mode: catalog.ModeAppend, Columns: []catalog.ColumnSpec{
		{Name: "id", Type: i64, NotNull: true}, {Name: "p", Type: i64}, {Name: "o", Type: i64}, {Name: "x", Type: i64}}}, 1)
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeSource{Cat: cat, Newest: 2, Rows: map[catalog.TableID][]fakeRow{}}
	val := func(p *int64) types.Value {
		if p == nil {
			return types.Null(i64)
		}
		return types.NewInt64(*p)
	}
	maybe := func(lo, hi int64, nullOdds int) *int64 {
		if rng.Intn(nullOdds) == 0 {
			return nil
		}
		v := lo + rng.Int63n(hi-lo+1)
		return &v
	}
	var rows []wrow
	for i := range n {
		r := wrow{id: int64(i + 1), p: maybe(0, 2, 6), o: maybe(0, 6, 5), x: maybe(-5, 9, 6)}
		rows = append(rows, r)
		fr := fakeRow{Commit: 2, Vals: map[catalog.ColumnID]types.Value{}}
		for j, v := range []types.Value{types.NewInt64(r.id), val(r.p), val(r.o), val(r.x)} {
			fr.Vals[tb.Columns[j].ID] = v
		}
		f.Rows[tb.ID] = append(f.Rows[tb.ID], fr)
	}
	return f, rows
}

// inf stands for NULL in the reference's order values: NULLs sort last,
// ascending, and inf ± an offset is inf, which is what PostgreSQL's
// frames do with them.
const inf = int64(1) << 40

func orderVal(p *int64) int64 {
	if p == nil {
		return inf
	}
	return *p
}

func shift(v, d int64) int64 {
	if v == inf {
		return inf
	}
	return v + d
}

func samePart(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// bound is one end of a frame in the reference: kind 0 UNBOUNDED
// PRECEDING, 1 n PRECEDING, 2 CURRENT ROW, 3 n FOLLOWING, 4 UNBOUNDED
// FOLLOWING.
type bound struct {
	kind int
	n    int64
}

func (b bound) sql() string {
	switch b.kind {
	case 0:
		return "UNBOUNDED PRECEDING"
	case 1:
		return fmt.Sprintf("%d PRECEDING", b.n)
	case 2:
		return "CURRENT ROW"
	case 3:
		return fmt.Sprintf("%d FOLLOWING", b.n)
	}
	return "UNBOUNDED FOLLOWING"
}

// signed is the bound's offset in sort order (PRECEDING negative).
func (b bound) signed() int64 {
	switch b.kind {
	case 1:
		return -b.n
	case 3:
		return b.n
	}
	return 0
}

// TestWindowFramesAgainstReference checks window aggregates over random
// ROWS, RANGE and GROUPS frames against a reference that decides each
// row's membership in every frame from the definitions (value distance
// for RANGE, peer-group distance for GROUPS, position for ROWS), with no
// incremental state: the operator's running and subtracting frames must
// agree with a fresh fold everywhere.
func TestWindowFramesAgainstReference(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	f, rows := windowSource(t, rng, 120)
	bounds := []bound{{0, 0}, {1, 0}, {1, 1}, {1, 3}, {2, 0}, {3, 0}, {3, 2}, {3, 4}, {4, 0}}
	ran := 0
	for _, mode := range []string{"ROWS", "RANGE", "GROUPS"} {
		for _, s := range bounds {
			for _, e := range bounds {
				if s.kind == 4 || e.kind == 0 || s.kind > e.kind && !(s.kind == 1 && e.kind == 1) && !(s.kind == 3 && e.kind == 3) {
					continue
				}
				if s.kind == 2 && e.kind == 1 || s.kind == 3 && e.kind <= 2 {
					continue
				}
				order := "o"
				if mode == "ROWS" {
					order = "o, id"
				}
				for excl, ex := range []string{"", " EXCLUDE CURRENT ROW", " EXCLUDE GROUP", " EXCLUDE TIES"} {
					frame := fmt.Sprintf("%s BETWEEN %s AND %s%s", mode, s.sql(), e.sql(), ex)
					sql := fmt.Sprintf("SELECT id, sum(x) OVER w, count(x) OVER w, count(*) OVER w, min(x) OVER w, max(x) OVER w, avg(x) OVER w FROM r WINDOW w AS (PARTITION BY p ORDER BY %s %s) ORDER BY id", order, frame)
					got, err := query(t, f, sql)
					if err != nil {
						t.Fatalf("%s: %v", sql, err)
					}
					want := referenceFrames(rows, mode, s, e, excl)
					if got != want {
						t.Fatalf("%s:\ngot:\n%s\nwant:\n%s", sql, got, want)
					}
					ran++
				}
			}
		}
	}
	if ran < 240 {
		t.Fatalf("only %d frames checked", ran)
	}
}

// referenceFrames computes the expected output of the query above; excl
// is 0 for no EXCLUDE, then CURRENT ROW, GROUP, TIES.
func referenceFrames(rows []wrow, mode string, s, e bound, excl int) string {
	var sb strings.Builder
	for _, r := range rows {
		var part []wrow
		for _, q := range rows {
			if samePart(q.p, r.p) {
				part = append(part, q)
			}
		}
		sort.SliceStable(part, func(i, j int) bool {
			a, b := orderVal(part[i].o), orderVal(part[j].o)
			if a != b {
				return a < b
			}
			return part[i].id < part[j].id
		})
		// peer group index and position of every row of the partition
		grp := map[int64]int64{}
		pos := map[int64]int64{}
		g := int64(0)
		for i, q := range part {
			if i > 0 && orderVal(q.o) != orderVal(part[i-1].o) {
				g++
			}
			grp[q.id], pos[q.id] = g, int64(i)
		}
		in := func(q wrow) bool {
			var key func(w wrow) int64
			switch mode {
			case "ROWS":
				key = func(w wrow) int64 { return pos[w.id] }
			case "GROUPS":
				key = func(w wrow) int64 { return grp[w.id] }
			default:
				key = func(w wrow) int64 { return orderVal(w.o) }
			}
			kq, kr := key(q), key(r)
			okS := s.kind == 0 || kq >= shift(kr, s.signed())
			okE := e.kind == 4 || kq <= shift(kr, e.signed())
			// peers: equal on the ORDER BY (o, and id too under ROWS)
			peer := orderVal(q.o) == orderVal(r.o) && (mode != "ROWS" || q.id == r.id)
			switch excl {
			case 1:
				okE = okE && q.id != r.id
			case 2:
				okE = okE && !peer
			case 3:
				okE = okE && (!peer || q.id == r.id)
			}
			return okS && okE
		}
		var sum, cnt, all int64
		var mn, mx *int64
		for _, q := range part {
			if !in(q) {
				continue
			}
			all++
			if q.x == nil {
				continue
			}
			v := *q.x
			sum += v
			cnt++
			if mn == nil || v < *mn {
				mn = &v
			}
			if mx == nil || v > *mx {
				w := v
				mx = &w
			}
		}
		str := func(p *int64) string {
			if p == nil {
				return "NULL"
			}
			return fmt.Sprint(*p)
		}
		sumS, avgS := "NULL", "NULL"
		if cnt > 0 {
			sumS = fmt.Sprint(sum)
			avgS = avgText(sum, cnt)
		}
		fmt.Fprintf(&sb, "%d %s %d %d %s %s %s\n", r.id, sumS, cnt, all, str(mn), str(mx), avgS)
	}
	return sb.String()
}

// avgText is avg(BIGINT)'s text: DECIMAL(76,6), rounded half away from
// zero.
func avgText(sum, cnt int64) string {
	v, _ := types.Div(decimal6(sum), types.NewInt64(cnt))
	v, _ = types.Cast(v, types.Type{Kind: types.Decimal, Precision: 76, Scale: 6})
	return v.String()
}

func decimal6(x int64) types.Value {
	v, _ := types.Cast(types.NewInt64(x), types.Type{Kind: types.Decimal, Precision: 76, Scale: 6})
	return v
}

// TestWindowValueFunctions checks lag, lead, first_value, last_value and
// nth_value over ROWS frames against positions in the sorted partition.
func TestWindowValueFunctions(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	f, rows := windowSource(t, rng, 80)
	sql := "SELECT id, lag(x, 2, -100) OVER w, lead(x) OVER w, first_value(x) OVER f, last_value(x) OVER f, nth_value(x, 2) OVER f, row_number() OVER w FROM r " +
		"WINDOW w AS (PARTITION BY p ORDER BY o DESC, id), f AS (w ROWS BETWEEN 1 PRECEDING AND 2 FOLLOWING) ORDER BY id"
	got, err := query(t, f, sql)
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	str := func(p *int64) string {
		if p == nil {
			return "NULL"
		}
		return fmt.Sprint(*p)
	}
	for _, r := range rows {
		var part []wrow
		for _, q := range rows {
			if samePart(q.p, r.p) {
				part = append(part, q)
			}
		}
		// DESC puts NULLs first
		sort.SliceStable(part, func(i, j int) bool {
			a, b := orderVal(part[i].o), orderVal(part[j].o)
			if a != b {
				return a > b
			}
			return part[i].id < part[j].id
		})
		i := 0
		for part[i].id != r.id {
			i++
		}
		at := func(j int, def string) string {
			if j < 0 || j >= len(part) {
				return def
			}
			return str(part[j].x)
		}
		fs, fe := max(i-1, 0), min(i+2, len(part)-1)
		nth := "NULL"
		if fs+1 <= fe {
			nth = str(part[fs+1].x)
		}
		fmt.Fprintf(&sb, "%d %s %s %s %s %s %d\n", r.id, at(i-2, "-100"), at(i+1, "NULL"), str(part[fs].x), str(part[fe].x), nth, i+1)
	}
	if want := sb.String(); got != want {
		t.Fatalf("%s:\ngot:\n%s\nwant:\n%s", sql, got, want)
	}
}

// TestWindowMemLimit: the Window operator buffers its input and counts it
// against the query's memory limit.
func TestWindowMemLimit(t *testing.T) {
	f := newFake(t)
	stmt, _ := parser.Parse("SELECT name, row_number() OVER (ORDER BY salary) FROM emp")
	env := &plan.Env{Source: f, MemLimit: 64}
	p, err := plan.Build(stmt, env)
	if err != nil {
		t.Fatal(err)
	}
	err = exec.Run(context.Background(), p, env, func(*types.Batch) error { return nil })
	if se, ok := sqlerr.As(err); !ok || se.Code != exec.CodeOutOfMemory {
		t.Fatalf("got %v, want a memory limit error (53200)", err)
	}
}
