package plan_test

import (
	"sync"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/types"
)

// viewSource is testSource with view tv AS SELECT k, sum(v) … GROUP BY k.
func viewSource(t testing.TB, def string) *fakeSource {
	cat := catalog.New()
	i64 := types.Of(types.Int64)
	if _, _, err := cat.CreateTable(catalog.TableSpec{Name: "t", Mode: catalog.ModeVersioned, Columns: []catalog.ColumnSpec{
		{Name: "k", Type: i64, NotNull: true, PrimaryKey: true}, {Name: "v", Type: i64}}}, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateView(catalog.ViewSpec{Name: "tv", Select: def, Columns: []string{"k", "total"},
		Types: []types.Type{i64, types.Of(types.Int128)}, Sources: []string{"t"}}, 2); err != nil {
		t.Fatal(err)
	}
	return &fakeSource{Cat: cat, Newest: 2, Rows: map[catalog.TableID][]fakeRow{}}
}

// TestViewParsedOnce: a view's text is parsed at its first reference and
// the tree kept on the catalog's View; binding only reads it, so
// statements planned concurrently share it (go test -race), and the
// tree prints as the stored text afterwards. A clone of the catalog (any
// DDL) starts without it.
func TestViewParsedOnce(t *testing.T) {
	const def = "SELECT k, sum(v) AS total FROM t WHERE v > 0 GROUP BY k HAVING count(*) > 1 ORDER BY k"
	src := viewSource(t, def)
	v, _ := src.Cat.View("tv")
	if v.Parsed() != nil {
		t.Fatal("parsed before any reference")
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				stmt, err := parser.Parse("SELECT * FROM tv AS x WHERE k = 1 AND total > 2")
				if err != nil {
					t.Error(err)
					return
				}
				if _, err := plan.Build(stmt, &plan.Env{Source: src}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	q, ok := v.Parsed().(*ast.SelectStmt)
	if !ok {
		t.Fatalf("not cached: %T", v.Parsed())
	}
	if got := ast.Format(q); got != def {
		t.Fatalf("the cached tree changed:\n got  %s\n want %s", got, def)
	}
	if c, _ := src.Cat.Clone().View("tv"); c.Parsed() != nil {
		t.Fatal("a clone kept the parsed tree")
	}
}

// BenchmarkViewRef plans a point query on a view: the cost of a view
// reference, of which parsing the stored text was part.
func BenchmarkViewRef(b *testing.B) {
	src := viewSource(b, "SELECT k, sum(v) AS total FROM t WHERE v > 0 GROUP BY k")
	stmt, err := parser.Parse("SELECT * FROM tv WHERE k = 1")
	if err != nil {
		b.Fatal(err)
	}
	env := &plan.Env{Source: src}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := plan.Build(stmt, env); err != nil {
			b.Fatal(err)
		}
	}
}
