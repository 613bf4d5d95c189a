package plan_test

import (
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
)

// TestBuildWindow runs testdata/window as TestBuild runs testdata/build:
// where the Window node goes, what stays above it, and the binder's
// errors with their positions.
func TestBuildWindow(t *testing.T) {
	src := testSource(t)
	datadriven.RunTest(t, "testdata/window", func(t *testing.T, d *datadriven.TestData) string {
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
