package expr

import (
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// SubKind is the way a subquery is used.
type SubKind uint8

// The subquery uses.
const (
	SubScalar SubKind = iota // (SELECT …) as a value
	SubExists                // EXISTS (SELECT …)
	SubIn                    // X IN (SELECT …)
)

// CodeCardinality is the SQLSTATE of a scalar subquery returning more than
// one row (cardinality_violation).
const CodeCardinality = "21000"

// Subquery is a subquery used as an expression. Corr are the expressions of
// the enclosing query whose values the subquery reads as Outer slots 0…n-1;
// X is the left operand of IN, already cast to the subquery column's type.
type Subquery struct {
	Kind  SubKind
	Plan  any // *plan.Plan
	Corr  []Expr
	X     Expr
	Not   bool
	T     types.Type
	Pos   int
	Label string // for EXPLAIN
}

type subResult struct {
	v       types.Value
	exists  bool
	set     map[string]struct{}
	hasNull bool
}

type subCache struct {
	byKey map[string]*subResult
}

// Type implements Expr.
func (e *Subquery) Type() types.Type { return e.T }
func (e *Subquery) String() string {
	s := e.Label
	switch e.Kind {
	case SubExists:
		s = "EXISTS(" + s + ")"
	case SubIn:
		s = e.X.String() + " IN (" + s + ")"
		if e.Not {
			s = "NOT " + s
		}
	default:
		s = "(" + s + ")"
	}
	return s
}

// kids does not expose Corr and X: they belong to the enclosing query and
// are walked by ColumnIDs and Resolve explicitly; folding must not treat the
// subquery as constant.
func (e *Subquery) kids() []*Expr { return nil }

// Eval implements Expr.
func (e *Subquery) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	if c.Runner == nil {
		return nil, errorf("subquery without a runner")
	}
	if c.cache == nil {
		c.cache = map[*Subquery]*subCache{}
	}
	sc := c.cache[e]
	if sc == nil {
		sc = &subCache{byKey: map[string]*subResult{}}
		c.cache[e] = sc
	}
	n := b.Rows
	corr := make([]*types.Vector, len(e.Corr))
	for i, x := range e.Corr {
		v, err := x.Eval(c, b)
		if err != nil {
			return nil, err
		}
		corr[i] = v
	}
	var xv *types.Vector
	var xkeys [][]byte
	if e.Kind == SubIn {
		v, err := e.X.Eval(c, b)
		if err != nil {
			return nil, err
		}
		xv = v
		xkeys = EncodeKeys(make([][]byte, n), xv, n)
	}
	var keys [][]byte
	if len(corr) > 0 {
		keys = make([][]byte, n)
		for _, v := range corr {
			keys = EncodeKeys(keys, v, n)
		}
	}
	out := c.vec(e.T, n)
	outer := make([]types.Value, len(corr))
	for i := range n {
		k := ""
		if keys != nil {
			k = string(keys[i])
		}
		r := sc.byKey[k]
		if r == nil {
			for j, v := range corr {
				outer[j] = v.Get(i)
			}
			var err error
			if r, err = e.run(c, outer); err != nil {
				return nil, err
			}
			sc.byKey[k] = r
		}
		switch e.Kind {
		case SubScalar:
			out.Append(r.v)
		case SubExists:
			out.AppendBool(r.exists)
		case SubIn:
			if !r.exists {
				out.AppendBool(e.Not)
				continue
			}
			if xv.IsNull(i) {
				out.AppendNull()
				continue
			}
			_, found := r.set[string(xkeys[i])]
			if !found && r.hasNull {
				out.AppendNull()
				continue
			}
			out.AppendBool(found != e.Not)
		}
	}
	return out, nil
}

func (e *Subquery) run(c *Ctx, outer []types.Value) (*subResult, error) {
	rows, err := c.Runner.Rows(c.Context, e.Plan, append([]types.Value(nil), outer...))
	if err != nil {
		return nil, err
	}
	r := &subResult{exists: rows.Rows > 0}
	switch e.Kind {
	case SubScalar:
		switch {
		case rows.Rows > 1:
			return nil, sqlerr.New(CodeCardinality, "more than one row returned by a subquery used as an expression").WithPos(e.Pos)
		case rows.Rows == 1:
			r.v = rows.Cols[0].Get(0)
			if !r.v.IsNull() && r.v.Type() != e.T {
				if r.v, err = types.Cast(r.v, e.T); err != nil {
					return nil, CastError(e.Pos, r.v, e.T, err)
				}
			}
		default:
			r.v = types.Null(e.T)
		}
	case SubIn:
		r.set = make(map[string]struct{}, rows.Rows)
		keys := EncodeKeys(make([][]byte, rows.Rows), rows.Cols[0], rows.Rows)
		for i, k := range keys {
			if rows.Cols[0].IsNull(i) {
				r.hasNull = true
				continue
			}
			r.set[string(k)] = struct{}{}
		}
	}
	return r, nil
}
