package session

import (
	"slices"

	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/types"
)

// PlanCache keeps, per statement, the plan template of a point SELECT
// (plan.Template) so that the statement run again with new parameters is
// not bound and optimized again. It is one session's (not safe for
// concurrent use) and is keyed by the statement's syntax tree, which
// callers that cache parsing (package strata) hand over unchanged for the
// same text, and by the parameters' types, which binding depends on.
//
// Invalidation: a template holds the catalog it was planned against and
// is not used on another, so DDL (which makes a new catalog) retires it;
// no setting changes how such a statement binds. Every new value is
// checked by the template (plan.Template.Plan), which leaves anything
// unusual to Build.
type PlanCache struct {
	m map[ast.Stmt]*cachedPlan
}

type cachedPlan struct {
	params []types.Type
	tmpl   *plan.Template
}

// maxCachedPlans bounds a PlanCache: statements that are parsed anew for
// every run (never the same tree) would otherwise fill it.
const maxCachedPlans = 256

// get returns the cached template of stmt for params' types, or nil.
func (c *PlanCache) get(stmt ast.Stmt, params []types.Value) *plan.Template {
	e := c.m[stmt]
	if e == nil || len(e.params) != len(params) {
		return nil
	}
	for i, p := range params {
		if p.Type() != e.params[i] {
			return nil
		}
	}
	return e.tmpl
}

// put keeps t as stmt's template for params' types.
func (c *PlanCache) put(stmt ast.Stmt, params []types.Value, t *plan.Template) {
	if c.m == nil || len(c.m) >= maxCachedPlans {
		c.m = map[ast.Stmt]*cachedPlan{}
	}
	ts := make([]types.Type, len(params))
	for i, p := range params {
		ts[i] = p.Type()
	}
	c.m[stmt] = &cachedPlan{params: slices.Clip(ts), tmpl: t}
}

// drop forgets stmt's template (its plan no longer applies).
func (c *PlanCache) drop(stmt ast.Stmt) { delete(c.m, stmt) }
