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
	SubCmp                   // X op ANY (SELECT …) or X op ALL (SELECT …) (Op, All)
)

// CodeCardinality is the SQLSTATE of a scalar subquery returning more than
// one row (cardinality_violation).
const CodeCardinality = "21000"

// Subquery is a subquery used as an expression. Corr are the expressions of
// the enclosing query whose values the subquery reads as Outer slots 0…n-1;
// X is the left operand of IN, already cast to the subquery column's type.
type Subquery struct {
	Kind SubKind
	Plan any // *plan.Plan
	Corr []Expr
	X    Expr
	// Row holds the operands of a row IN, (x1, …, xn) IN (SELECT c1, …,
	// cn), with X nil; each already cast to its column's type.
	Row []Expr
	Not bool
	// Op and All are a SubCmp's comparison and quantifier (ANY when All is
	// false). X = ANY and X <> ALL are bound as IN and NOT IN instead.
	Op    CmpOp
	All   bool
	T     types.Type
	Pos   int
	Label string // for EXPLAIN
	// Volatile marks a plan that calls a function with an effect
	// (set_config): a correlated one runs again for every row, as in
	// PostgreSQL, instead of once per distinct tuple of outer values.
	Volatile bool
}

type subResult struct {
	v       types.Value
	exists  bool
	set     map[string]struct{}
	hasNull bool
	// min and max are the least and greatest non-NULL values of a SubCmp's
	// rows (unset when every row is NULL): X < ANY holds when X < max,
	// X < ALL when X < min, and so on.
	min, max types.Value
	nonNull  int
	// rows are a row IN's rows, kept to tell NULL from false when no row
	// matches exactly and a NULL is involved.
	rows [][]types.Value
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
		x := ""
		if e.X != nil {
			x = e.X.String()
		} else {
			for i, r := range e.Row {
				if i > 0 {
					x += ", "
				}
				x += r.String()
			}
			x = "(" + x + ")"
		}
		s = x + " IN (" + s + ")"
		if e.Not {
			s = "NOT " + s
		}
	case SubCmp:
		q := " ANY ("
		if e.All {
			q = " ALL ("
		}
		s = e.X.String() + " " + e.Op.String() + q + s + ")"
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
	var rowv []*types.Vector
	if len(e.Row) > 0 {
		xkeys = make([][]byte, n)
		for _, x := range e.Row {
			v, err := x.Eval(c, b)
			if err != nil {
				return nil, err
			}
			rowv = append(rowv, v)
			xkeys = EncodeKeys(xkeys, v, n)
		}
	} else if e.Kind == SubIn || e.Kind == SubCmp {
		v, err := e.X.Eval(c, b)
		if err != nil {
			return nil, err
		}
		xv = v
		if e.Kind == SubIn {
			xkeys = EncodeKeys(make([][]byte, n), xv, n)
		}
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
		if r == nil || e.Volatile && keys != nil {
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
			if rowv != nil {
				switch rowIn(rowv, i, xkeys[i], r) {
				case 1:
					out.AppendBool(!e.Not)
				case 0:
					out.AppendBool(e.Not)
				default:
					out.AppendNull()
				}
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
		case SubCmp:
			if !r.exists {
				// Over no rows ANY is false and ALL is true, even for NULL.
				out.AppendBool(e.All)
				continue
			}
			if xv.IsNull(i) {
				out.AppendNull()
				continue
			}
			switch quantified(e.Op, e.All, xv.Get(i), r) {
			case 1:
				out.AppendBool(true)
			case 0:
				out.AppendBool(false)
			default:
				out.AppendNull()
			}
		}
	}
	return out, nil
}

// rowIn decides row i of x IN a non-empty result r: 1 true, 0 false, -1
// NULL. It is the OR over r's rows of row equality, which is false when
// some column pair is unequal, else NULL when some column is NULL, else
// true: an exact key match is true; otherwise, when x or some row holds a
// NULL, a row that no non-NULL pair rules out makes it NULL.
func rowIn(x []*types.Vector, i int, key []byte, r *subResult) int {
	if _, ok := r.set[string(key)]; ok {
		return 1
	}
	xNull := false
	for _, v := range x {
		if v.IsNull(i) {
			xNull = true
		}
	}
	if !xNull && !r.hasNull {
		return 0
	}
	for _, row := range r.rows {
		possible := true
		for j, v := range x {
			if !v.IsNull(i) && !row[j].IsNull() && types.Compare(v.Get(i), row[j]) != 0 {
				possible = false
				break
			}
		}
		if possible {
			return -1
		}
	}
	return 0
}

// quantified decides x op ANY/ALL over a non-empty result r, x not NULL:
// 1 true, 0 false, -1 NULL. ANY is true when some row's comparison is
// true, else NULL when some row is NULL, else false; ALL is false when
// some row's comparison is false, else NULL when some row is NULL, else
// true (SQL's three-valued OR and AND over the rows). The rows' least and
// greatest non-NULL values decide which comparisons hold.
func quantified(op CmpOp, all bool, x types.Value, r *subResult) int {
	unknown := -1
	if !r.hasNull {
		unknown = 0
		if all {
			unknown = 1
		}
	}
	if r.nonNull == 0 {
		return unknown
	}
	lo, hi := types.Compare(x, r.min), types.Compare(x, r.max)
	// some: a non-NULL row satisfies op; every: all of them do. For = and
	// <> min and max decide only = ALL and <> ANY (every row equals x
	// exactly when min = max = x); = ANY and <> ALL are bound as IN and
	// NOT IN and never come here.
	var some, every bool
	switch op {
	case EQ:
		every = lo == 0 && hi == 0
		some = every
	case NE:
		some = lo != 0 || hi != 0
		every = some
	case LT:
		some, every = hi < 0, lo < 0
	case LE:
		some, every = hi <= 0, lo <= 0
	case GT:
		some, every = lo > 0, hi > 0
	case GE:
		some, every = lo >= 0, hi >= 0
	}
	if all {
		if !every {
			return 0
		}
		return unknown
	}
	if some {
		return 1
	}
	return unknown
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
	case SubCmp:
		col := rows.Cols[0]
		for i := range rows.Rows {
			if col.IsNull(i) {
				r.hasNull = true
				continue
			}
			v := col.Get(i)
			if r.nonNull == 0 || types.Compare(v, r.min) < 0 {
				r.min = v
			}
			if r.nonNull == 0 || types.Compare(v, r.max) > 0 {
				r.max = v
			}
			r.nonNull++
		}
	case SubIn:
		if len(e.Row) > 0 {
			r.set = make(map[string]struct{}, rows.Rows)
			keys := make([][]byte, rows.Rows)
			for _, col := range rows.Cols[:len(e.Row)] {
				keys = EncodeKeys(keys, col, rows.Rows)
			}
			r.rows = make([][]types.Value, rows.Rows)
			for i, k := range keys {
				row := make([]types.Value, len(e.Row))
				complete := true
				for j, col := range rows.Cols[:len(e.Row)] {
					row[j] = col.Get(i)
					if row[j].IsNull() {
						complete = false
					}
				}
				r.rows[i] = row
				if !complete {
					r.hasNull = true
					continue
				}
				r.set[string(k)] = struct{}{}
			}
			break
		}
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
