package session

import (
	"context"
	"strings"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/exec"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/system"
	"github.com/strata-db/strata/internal/types"
)

func init() {
	defaultQuerier = planQuerier{}
	system.FormatView = formatView
}

// formatView lays a view's stored query out clause by clause, as
// PostgreSQL's pg_get_viewdef does (ast.FormatView), led by a space.
func formatView(v *catalog.View) string {
	sel, _ := v.Parsed().(*ast.SelectStmt)
	if sel == nil {
		s, err := parser.Parse(v.Select)
		if sel, _ = s.(*ast.SelectStmt); err != nil || sel == nil {
			return " " + v.Select
		}
	}
	return ast.FormatView(sel)
}

// planQuerier is the production Querier: plan.Build binds and optimizes,
// exec.Run executes, system tables resolve as plan.Virtual relations.
type planQuerier struct{}

func planEnv(q *QueryEnv) *plan.Env {
	// The plan's env and the PostgreSQL functions' in one allocation: a
	// point SELECT plans nothing and calls no PostgreSQL function.
	qe := &struct {
		env plan.Env
		pg  system.PGEnv
	}{}
	var src system.Source
	if q.Snapshot != nil {
		src = q.Snapshot
	}
	qe.pg.Init(src, q.Settings, q.Set)
	qe.env = plan.Env{Source: q.Snapshot, Virtual: func(schema, name string) (plan.Virtual, bool) {
		return virtual(schema, name, q.Settings)
	}, Params: q.Params, Now: q.Now, LastCommit: q.LastCommit, MemLimit: q.MemLimit,
		PG: qe.pg.Env(), Relations: q.Relations, With: q.With, Written: q.Written}
	return &qe.env
}

func (planQuerier) Query(ctx context.Context, stmt ast.Stmt, q *QueryEnv, fn func(*types.Batch) error) ([]Column, error) {
	env := planEnv(q)
	var p *plan.Plan
	var cached *plan.Template
	if q.Plans != nil {
		if cached = q.Plans.get(stmt, q.Params); cached != nil {
			p, _ = cached.Plan(env)
		}
	}
	if p == nil {
		var err error
		if p, err = plan.Build(stmt, env); err != nil {
			return nil, err
		}
		// A template that gave up on unusual values stays for the next
		// usual ones; otherwise a tree run again gets one derived.
		if q.Plans != nil && cached == nil && q.Plans.derive(stmt) {
			q.Plans.put(stmt, q.Params, plan.NewTemplate(stmt, env, p))
		}
	}
	pc := p.Columns()
	cols := make([]Column, len(pc))
	for i, c := range pc {
		cols[i] = Column{Name: c.Name, Type: c.Type}
	}
	if q.Start != nil {
		if err := q.Start(cols); err != nil {
			return nil, err
		}
	}
	if err := exec.Run(ctx, p, env, fn); err != nil {
		return nil, err
	}
	return cols, nil
}

func (planQuerier) EvalConst(ctx context.Context, e ast.Expr, q *QueryEnv) (types.Value, error) {
	return plan.EvalConst(ctx, e, planEnv(q))
}

// virtual resolves system.<name>, pg_catalog.<name> and
// information_schema.<name> for the planner, and an unqualified pg_<name> as
// pg_catalog's: PostgreSQL searches pg_catalog before the search_path.
func virtual(schema, name string, settings map[string]string) (plan.Virtual, bool) {
	if schema == "" && strings.HasPrefix(name, "pg_") {
		schema = "pg_catalog"
	}
	var t *system.Table
	ok := false
	if schema == "system" {
		t, ok = system.Lookup(name)
	} else {
		t, ok = system.LookupSchema(schema, name)
	}
	if !ok {
		return nil, false
	}
	return virtualTable{t, settings}, true
}

// virtualTable adapts a system table to plan.Virtual.
type virtualTable struct {
	t        *system.Table
	settings map[string]string
}

func (v virtualTable) Columns() []plan.Column {
	out := make([]plan.Column, len(v.t.Columns))
	for i, c := range v.t.Columns {
		out[i] = plan.Column{Name: c.Name, Type: c.Type}
	}
	return out
}

func (v virtualTable) Rows(ctx context.Context, src plan.Source) (*types.Batch, error) {
	return v.t.RowsWith(ctx, src, v.settings)
}
