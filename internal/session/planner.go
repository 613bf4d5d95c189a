package session

import (
	"context"

	"github.com/strata-db/strata/internal/exec"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/system"
	"github.com/strata-db/strata/internal/types"
)

func init() { defaultQuerier = planQuerier{} }

// planQuerier is the production Querier: plan.Build binds and optimizes,
// exec.Run executes, system tables resolve as plan.Virtual relations.
type planQuerier struct{}

func planEnv(q *QueryEnv) *plan.Env {
	return &plan.Env{Source: q.Snapshot, Virtual: virtual, Params: q.Params, Now: q.Now,
		LastCommit: q.LastCommit, MemLimit: q.MemLimit}
}

func (planQuerier) Query(ctx context.Context, stmt ast.Stmt, q *QueryEnv, fn func(*types.Batch) error) ([]Column, error) {
	env := planEnv(q)
	p, err := plan.Build(stmt, env)
	if err != nil {
		return nil, err
	}
	pc := p.Columns()
	cols := make([]Column, len(pc))
	for i, c := range pc {
		cols[i] = Column{Name: c.Name, Type: c.Type}
	}
	if err := exec.Run(ctx, p, env, fn); err != nil {
		return nil, err
	}
	return cols, nil
}

func (planQuerier) EvalConst(ctx context.Context, e ast.Expr, q *QueryEnv) (types.Value, error) {
	return plan.EvalConst(ctx, e, planEnv(q))
}

// virtual resolves system.<name> for the planner.
func virtual(schema, name string) (plan.Virtual, bool) {
	if schema != "system" {
		return nil, false
	}
	t, ok := system.Lookup(name)
	if !ok {
		return nil, false
	}
	return virtualTable{t}, true
}

// virtualTable adapts a system table to plan.Virtual.
type virtualTable struct{ t *system.Table }

func (v virtualTable) Columns() []plan.Column {
	out := make([]plan.Column, len(v.t.Columns))
	for i, c := range v.t.Columns {
		out[i] = plan.Column{Name: c.Name, Type: c.Type}
	}
	return out
}

func (v virtualTable) Rows(ctx context.Context, src plan.Source) (*types.Batch, error) {
	return v.t.Rows(ctx, src)
}
