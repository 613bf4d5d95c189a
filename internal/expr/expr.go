package expr

import (
	"context"
	"fmt"
	"strings"

	"github.com/strata-db/strata/internal/types"
)

// Expr is a bound scalar expression.
type Expr interface {
	// Type is the type of every value Eval produces.
	Type() types.Type
	// Eval computes the expression for every row of b.
	Eval(c *Ctx, b *types.Batch) (*types.Vector, error)
	// String renders the expression for EXPLAIN.
	String() string
	// kids returns pointers to the child expressions, so that rewrites can
	// replace them in place.
	kids() []*Expr
}

// Children returns pointers to e's direct operands; assigning through them
// rewrites e in place (constant folding, id resolution).
func Children(e Expr) []*Expr { return e.kids() }

// Walk calls f for e and, while f returns true, for its operands, depth first.
func Walk(e Expr, f func(Expr) bool) {
	if e == nil || !f(e) {
		return
	}
	// The common nodes are walked without kids(), which allocates a slice
	// of pointers per node (it serves rewrites, which need them): the
	// planner walks every predicate several times per statement.
	switch x := e.(type) {
	case *Col, *Const, *Outer:
	case *Cmp:
		Walk(x.L, f)
		Walk(x.R, f)
	case *Logic:
		for _, a := range x.Args {
			Walk(a, f)
		}
	case *Func:
		for _, a := range x.Args {
			Walk(a, f)
		}
	case *Arith:
		Walk(x.L, f)
		Walk(x.R, f)
	case *Cast:
		Walk(x.X, f)
	case *Not:
		Walk(x.X, f)
	case *Is:
		Walk(x.X, f)
	default:
		for _, k := range e.kids() {
			Walk(*k, f)
		}
	}
}

// ColumnIDs calls f with the id of every column e refers to.
func ColumnIDs(e Expr, f func(id int)) {
	Walk(e, func(x Expr) bool {
		switch x := x.(type) {
		case *Col:
			f(x.ID)
		case *Subquery:
			for _, c := range x.Corr {
				ColumnIDs(c, f)
			}
			if x.X != nil {
				ColumnIDs(x.X, f)
			}
			for _, r := range x.Row {
				ColumnIDs(r, f)
			}
			return false
		}
		return true
	})
}

// Resolve sets the batch index of every column reference in e from its id.
// It fails if a column is not in the layout, a bug in the planner.
func Resolve(e Expr, layout func(id int) (int, bool)) error {
	var err error
	Walk(e, func(x Expr) bool {
		switch x := x.(type) {
		case *Col:
			i, ok := layout(x.ID)
			if !ok && err == nil {
				err = fmt.Errorf("expr: column %s (#%d) is not in the input", x.Name, x.ID)
			}
			x.Idx = i
		case *Subquery:
			for _, c := range x.Corr {
				if e := Resolve(c, layout); e != nil && err == nil {
					err = e
				}
			}
			if x.X != nil {
				if e := Resolve(x.X, layout); e != nil && err == nil {
					err = e
				}
			}
			for _, r := range x.Row {
				if e := Resolve(r, layout); e != nil && err == nil {
					err = e
				}
			}
			return false
		}
		return true
	})
	return err
}

// Runner runs a subquery's plan for one tuple of outer values and returns
// all of its rows. Package exec implements it; Plan is a *plan.Plan, held
// as any because plan imports expr.
type Runner interface {
	Rows(ctx context.Context, plan any, outer []types.Value) (*types.Batch, error)
}

// Ctx is the evaluation state of one operator: scratch vectors reused from
// batch to batch, the statement's outer values and the subquery runner.
// A Ctx is not safe for concurrent use.
type Ctx struct {
	Context context.Context
	// Outer holds the values of the enclosing query's columns a correlated
	// subquery refers to (Outer nodes index it).
	Outer []types.Value
	// Runner runs subqueries; nil when the plan has none.
	Runner Runner

	pool  []*types.Vector
	next  int
	cache map[*Subquery]*subCache
}

// NewCtx returns a Ctx for one operator.
func NewCtx(ctx context.Context, r Runner, outer []types.Value) *Ctx {
	return &Ctx{Context: ctx, Runner: r, Outer: outer}
}

// Reset makes every scratch vector handed out since the last Reset free for
// reuse. Operators call it before evaluating a new batch.
func (c *Ctx) Reset() { c.next = 0 }

// vec returns an empty scratch vector of type t.
func (c *Ctx) vec(t types.Type, n int) *types.Vector {
	if c.next < len(c.pool) {
		v := c.pool[c.next]
		if v.Type() == t {
			c.next++
			v.Reset()
			return v
		}
		v = types.NewVector(t, n)
		c.pool[c.next] = v
		c.next++
		return v
	}
	v := types.NewVector(t, n)
	c.pool = append(c.pool, v)
	c.next++
	return v
}

// Col is a reference to a column of the input.
type Col struct {
	ID   int // plan-wide column id
	Idx  int // index in the input batch, set by Resolve
	Name string
	T    types.Type
}

// Type implements Expr.
func (e *Col) Type() types.Type { return e.T }

// Eval implements Expr: the input vector itself.
func (e *Col) Eval(_ *Ctx, b *types.Batch) (*types.Vector, error) {
	if e.Idx < 0 || e.Idx >= len(b.Cols) {
		return nil, fmt.Errorf("expr: column %s index %d out of range", e.Name, e.Idx)
	}
	return b.Cols[e.Idx], nil
}

func (e *Col) String() string { return e.Name }
func (e *Col) kids() []*Expr  { return nil }

// Const is a constant.
type Const struct {
	V types.Value
}

// NewConst returns a constant.
func NewConst(v types.Value) *Const { return &Const{V: v} }

// Type implements Expr.
func (e *Const) Type() types.Type { return e.V.Type() }

// Eval implements Expr: the value repeated once per row.
func (e *Const) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	return fill(c, e.V, b.Rows), nil
}

func fill(c *Ctx, x types.Value, n int) *types.Vector {
	v := c.vec(x.Type(), n)
	if x.IsNull() {
		for range n {
			v.AppendNull()
		}
		return v
	}
	switch x.Type().Kind.Class() {
	case types.ClassInt64:
		y := x.Int64()
		for range n {
			v.AppendInt64(y)
		}
	case types.ClassUint64:
		y := x.Uint64()
		for range n {
			v.AppendUint64(y)
		}
	case types.ClassFloat64:
		y := x.Float64()
		for range n {
			v.AppendFloat64(y)
		}
	case types.ClassBool:
		y := x.Bool()
		for range n {
			v.AppendBool(y)
		}
	default:
		for range n {
			v.Append(x)
		}
	}
	return v
}

func (e *Const) String() string {
	if e.V.IsNull() {
		return "NULL"
	}
	switch e.V.Kind() {
	case types.String:
		return "'" + strings.ReplaceAll(e.V.Str(), "'", "''") + "'"
	case types.Date, types.DateTime64, types.UUID, types.Bytes:
		return "'" + e.V.String() + "'::" + e.V.Type().String()
	}
	return e.V.String()
}
func (e *Const) kids() []*Expr { return nil }

// Outer is a correlated reference: a column of an enclosing query, read from
// Ctx.Outer[Slot] while a subquery runs for one outer row.
type Outer struct {
	Slot int
	Name string
	T    types.Type
}

// Type implements Expr.
func (e *Outer) Type() types.Type { return e.T }

// Eval implements Expr.
func (e *Outer) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	if e.Slot >= len(c.Outer) {
		return nil, fmt.Errorf("expr: outer value %d not bound", e.Slot)
	}
	return fill(c, c.Outer[e.Slot], b.Rows), nil
}

func (e *Outer) String() string { return "outer." + e.Name }
func (e *Outer) kids() []*Expr  { return nil }

// list renders expressions separated by commas.
func list(es []Expr) string {
	var sb strings.Builder
	for i, e := range es {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(e.String())
	}
	return sb.String()
}

func ptrs(es []Expr) []*Expr {
	out := make([]*Expr, len(es))
	for i := range es {
		out[i] = &es[i]
	}
	return out
}
