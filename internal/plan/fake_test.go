package plan_test

import "github.com/strata-db/strata/internal/plan/plantest"

// The shared in-memory source under the names these tests use.
type (
	fakeSource = plantest.Source
	fakeRow    = plantest.Row
)
