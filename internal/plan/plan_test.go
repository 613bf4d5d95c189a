package plan_test

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

func testSource(t *testing.T) *fakeSource {
	cat := catalog.New()
	i64, str := types.Of(types.Int64), types.Of(types.String)
	specs := []catalog.TableSpec{
		{Name: "t", Mode: catalog.ModeVersioned, Columns: []catalog.ColumnSpec{
			{Name: "k", Type: i64, NotNull: true, PrimaryKey: true}, {Name: "v", Type: i64}}},
		{Name: "u", Columns: []catalog.ColumnSpec{
			{Name: "k", Type: i64, NotNull: true, PrimaryKey: true}, {Name: "s", Type: str}}},
		{Name: "log", Mode: catalog.ModeAppend, Columns: []catalog.ColumnSpec{{Name: "msg", Type: str}}},
	}
	for i, s := range specs {
		if _, _, err := cat.CreateTable(s, uint64(i+1)); err != nil {
			t.Fatal(err)
		}
	}
	return &fakeSource{Cat: cat, Newest: 13, Rows: map[catalog.TableID][]fakeRow{}}
}

// TestBuild runs testdata/build: each `build` prints the optimized plan in
// EXPLAIN form, or the error with its position.
func TestBuild(t *testing.T) {
	src := testSource(t)
	datadriven.RunTest(t, "testdata/build", func(t *testing.T, d *datadriven.TestData) string {
		stmt, err := parser.Parse(d.Input)
		if err != nil {
			return "parse error: " + err.Error() + "\n"
		}
		p, err := plan.Build(stmt, &plan.Env{Source: src})
		if err != nil {
			if se, ok := sqlerr.As(err); ok {
				return "error " + se.Code + " at " + itoa(se.Pos) + ": " + se.Message + "\n"
			}
			return "error: " + err.Error() + "\n"
		}
		return strings.Join(plan.Explain(p.Root, src, nil), "\n") + "\n"
	})
}

func itoa(n int) string {
	if n < 0 {
		return "-"
	}
	return strconv.Itoa(n)
}
