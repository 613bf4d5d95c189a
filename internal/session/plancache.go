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
// concurrent use) and is keyed by the statement's syntax tree and by the
// parameters' types, which binding depends on. Only callers that hand
// over the same tree for the same statement hit it: package strata
// (which caches parsing by text) and pgwire's prepared statements; a
// query parsed anew for every run (pgwire's simple protocol) never does,
// so a template is derived only when a tree is run a second time.
//
// Invalidation: a template holds the catalog it was planned against and
// is not used on another, so DDL (which makes a new catalog) retires it;
// no setting changes how such a statement binds. Every new value is
// checked by the template (plan.Template.Plan), which leaves anything
// unusual to Build without retiring the template. A template also keeps
// its catalog alive until the cache lets go of it.
type PlanCache struct {
	m map[ast.Stmt]*cachedPlan
}

// cachedPlan is what the cache knows of one tree: seen once (tmpl nil,
// no refusals), a template for params' types, or refused (not a point
// SELECT of the template's shape, or the derivation met values Build
// treats specially, such as a NULL key). A refusal on values says nothing
// of the next run's, so a tree is derived again until maxRefusals.
type cachedPlan struct {
	params   []types.Type
	tmpl     *plan.Template
	refusals int
}

// maxRefusals is how many refused derivations a tree gets before the
// cache stops deriving it: enough that a NULL or an odd value on the run
// that derives does not cost a statement its template for good, few
// enough that a shape that never fits costs little.
const maxRefusals = 3

// maxCachedPlans bounds a PlanCache: statements that are parsed anew for
// every run (never the same tree) would otherwise fill it.
const maxCachedPlans = 256

// get returns the cached template of stmt for params' types, or nil.
func (c *PlanCache) get(stmt ast.Stmt, params []types.Value) *plan.Template {
	e := c.m[stmt]
	if e == nil || e.tmpl == nil || len(e.params) != len(params) {
		return nil
	}
	for i, p := range params {
		if p.Type() != e.params[i] {
			return nil
		}
	}
	return e.tmpl
}

// derive reports whether a template should be derived for stmt after
// Build planned it without one: not on a tree's first run (it may never
// come again) nor after maxRefusals refusals, but again when the
// parameters' types changed; a first run is remembered.
func (c *PlanCache) derive(stmt ast.Stmt) bool {
	e := c.m[stmt]
	if e == nil {
		c.entry(stmt)
		return false
	}
	return e.refusals < maxRefusals || e.tmpl != nil
}

// entry returns stmt's entry, making room for it when the cache is full.
func (c *PlanCache) entry(stmt ast.Stmt) *cachedPlan {
	if e := c.m[stmt]; e != nil {
		return e
	}
	if c.m == nil || len(c.m) >= maxCachedPlans {
		c.m = map[ast.Stmt]*cachedPlan{}
	}
	e := &cachedPlan{}
	c.m[stmt] = e
	return e
}

// put keeps t (nil: refused) as stmt's template for params' types.
func (c *PlanCache) put(stmt ast.Stmt, params []types.Value, t *plan.Template) {
	e := c.entry(stmt)
	e.tmpl = t
	if t == nil {
		e.refusals++
	}
	ts := make([]types.Type, len(params))
	for i, p := range params {
		ts[i] = p.Type()
	}
	e.params = slices.Clip(ts)
}
