package plan_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/plan/plantest"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/types"
)

// joinSource holds n tables t1…tn (a PRIMARY KEY, b, x), the shape of
// SQLite's select5.
func joinSource(b *testing.B, n int) *plantest.Source {
	cat := catalog.New()
	i64, str := types.Of(types.Int64), types.Of(types.String)
	for i := 1; i <= n; i++ {
		spec := catalog.TableSpec{Name: fmt.Sprintf("t%d", i), Columns: []catalog.ColumnSpec{
			{Name: fmt.Sprintf("a%d", i), Type: i64, NotNull: true, PrimaryKey: true},
			{Name: fmt.Sprintf("b%d", i), Type: i64}, {Name: fmt.Sprintf("x%d", i), Type: str}}}
		if _, _, err := cat.CreateTable(spec, uint64(i)); err != nil {
			b.Fatal(err)
		}
	}
	return &plantest.Source{Cat: cat, Newest: uint64(n), Rows: map[catalog.TableID][]plantest.Row{}}
}

// chainJoin is a select5-style n-way join: FROM in reverse order, a chain
// of b_i = a_{i+1} equalities, one constant filter.
func chainJoin(n int) string {
	var sel, from, where []string
	for i := 1; i <= n; i++ {
		sel = append(sel, fmt.Sprintf("x%d", i))
		from = append(from, fmt.Sprintf("t%d", n+1-i))
		if i < n {
			where = append(where, fmt.Sprintf("b%d=a%d", i, i+1))
		}
	}
	where = append(where, "a1=5")
	return "SELECT " + strings.Join(sel, ",") + " FROM " + strings.Join(from, ",") + " WHERE " + strings.Join(where, " AND ")
}

// BenchmarkBuildJoin64 plans (binds and optimizes, runs nothing) a 64-way
// join: the planner's cost on select5's largest statements.
func BenchmarkBuildJoin64(b *testing.B) {
	src := joinSource(b, 64)
	q := chainJoin(64)
	b.ReportAllocs()
	for b.Loop() {
		stmt, err := parser.Parse(q)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := plan.Build(stmt, &plan.Env{Source: src}); err != nil {
			b.Fatal(err)
		}
	}
}
