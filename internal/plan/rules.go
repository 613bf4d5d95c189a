package plan

import (
	"context"
	"slices"

	"github.com/strata-db/strata/internal/catalog"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/types"
)

// rule is one rewrite of the optimizer; rules run once each, in order.
type rule struct {
	name string
	fn   func(n Node, env *Env) Node
}

// rules is THE ordered list of rewrites (chaisql's habit): each assumes the
// ones before it have run.
var rules = []rule{
	{"fold constants", foldNode},
	{"order joins by WHERE equalities", orderJoins},
	{"decorrelate EXISTS and IN into semi/anti joins", decorrelate},
	{"push filters into scans", pushFilters},
	{"extract hash join keys", joinKeys},
	{"key-prefix ranges", keyRanges},
	{"index scans", indexScans},
	{"prune scan columns", pruneColumns},
	{"top-n for ORDER BY … LIMIT", topN},
}

// maxTopN bounds the rows a TopN keeps; a larger LIMIT + OFFSET sorts.
const maxTopN = 1 << 16

// topN replaces Limit over Sort (possibly through the column-only Project
// that drops hidden ORDER BY columns) with one TopN operator.
func topN(n Node, env *Env) Node {
	switch x := n.(type) {
	case *Limit:
		x.In = topN(x.In, env)
		if x.Count <= 0 || x.Count+x.Offset > maxTopN || x.Count+x.Offset < 0 {
			return x
		}
		switch in := x.In.(type) {
		case *Sort:
			return &TopN{In: in.In, Keys: in.Keys, Count: x.Count, Offset: x.Offset}
		case *Project:
			if s, ok := in.In.(*Sort); ok {
				in.In = &TopN{In: s.In, Keys: s.Keys, Count: x.Count, Offset: x.Offset}
				return in
			}
		}
		return x
	case *Filter:
		x.In = topN(x.In, env)
	case *Project:
		x.In = topN(x.In, env)
	case *Aggregate:
		x.In = topN(x.In, env)
	case *Join:
		x.L, x.R = topN(x.L, env), topN(x.R, env)
	case *Lateral:
		x.L = topN(x.L, env)
	case *Sort:
		x.In = topN(x.In, env)
	case *Window:
		x.In = topN(x.In, env)
	case *TopN:
		x.In = topN(x.In, env)
	case *Distinct:
		x.In = topN(x.In, env)
	case *SetOp:
		x.L, x.R = topN(x.L, env), topN(x.R, env)
	}
	return n
}

// pruneColumns makes every scan read only the columns some expression, set
// operation or the plan's output needs (ids are plan-wide, so one pass over
// the tree finds them all).
func pruneColumns(root Node, env *Env) Node {
	need := map[int]bool{}
	for _, c := range root.Output() {
		need[c.ID] = true
	}
	use := func(e expr.Expr) {
		if e != nil {
			expr.ColumnIDs(e, func(id int) { need[id] = true })
		}
	}
	var walk func(n Node)
	walk = func(n Node) {
		switch x := n.(type) {
		case *Scan:
			use(x.Filter)
		case *Versions:
			use(x.Filter)
		case *VirtualScan:
			use(x.Filter)
		case *Filter:
			use(x.Cond)
		case *Project:
			for _, e := range x.Exprs {
				use(e)
			}
		case *Aggregate:
			for _, e := range x.Groups {
				use(e)
			}
			for _, a := range x.Aggs {
				for _, e := range a.Args {
					use(e)
				}
				for _, k := range a.Order {
					use(k.E)
				}
			}
		case *Lateral:
			use(x.Cond)
			for _, e := range x.Corr {
				use(e)
			}
			for _, c := range x.Cols {
				need[c.ID] = true
			}
		case *Join:
			use(x.Cond)
			for _, e := range x.LeftKeys {
				use(e)
			}
			for _, e := range x.RightKeys {
				use(e)
			}
		case *Sort:
			for _, k := range x.Keys {
				use(k.E)
			}
		case *Window:
			x.exprs(use)
		case *Distinct:
			for _, c := range x.In.Output() {
				need[c.ID] = true
			}
		case *SetOp:
			for _, c := range x.L.Output() {
				need[c.ID] = true
			}
			for _, c := range x.R.Output() {
				need[c.ID] = true
			}
		case *Recursive:
			for _, c := range x.Init.Output() {
				need[c.ID] = true
			}
			for _, c := range x.Step.Output() {
				need[c.ID] = true
			}
		}
		for _, in := range n.Inputs() {
			walk(in)
		}
	}
	walk(root)
	var prune func(n Node)
	prune = func(n Node) {
		if s, ok := n.(*Scan); ok {
			var cols []ColRef
			var ids []catalog.ColumnID
			for i, c := range s.Cols {
				if need[c.ID] {
					cols = append(cols, c)
					ids = append(ids, s.ColIDs[i])
				}
			}
			if len(cols) == 0 && len(s.Cols) > 0 && !s.Commit {
				cols, ids = s.Cols[:1], s.ColIDs[:1]
			}
			s.Cols, s.ColIDs = cols, ids
		}
		for _, in := range n.Inputs() {
			prune(in)
		}
	}
	prune(root)
	return root
}

// joinKeys splits each join condition into equalities between one column
// expression of each side (hash join keys) and a residual condition.
func joinKeys(n Node, env *Env) Node {
	for _, in := range n.Inputs() {
		joinKeys(in, env)
	}
	j, ok := n.(*Join)
	if !ok || j.Cond == nil {
		return n
	}
	lids, rids := idsOf(j.L), idsOf(j.R)
	var rest []expr.Expr
	for _, c := range conjuncts(j.Cond) {
		cmp, ok := c.(*expr.Cmp)
		if ok && cmp.Op == expr.EQ && cmp.L.Type() == cmp.R.Type() && !hasSubquery(c) {
			switch {
			case covered(cmp.L, lids) && covered(cmp.R, rids) && usesCols(cmp.L) && usesCols(cmp.R):
				j.LeftKeys, j.RightKeys = append(j.LeftKeys, cmp.L), append(j.RightKeys, cmp.R)
				continue
			case covered(cmp.R, lids) && covered(cmp.L, rids) && usesCols(cmp.L) && usesCols(cmp.R):
				j.LeftKeys, j.RightKeys = append(j.LeftKeys, cmp.R), append(j.RightKeys, cmp.L)
				continue
			}
		}
		rest = append(rest, c)
	}
	j.Cond = and(rest)
	return n
}

func usesCols(e expr.Expr) bool {
	n := 0
	expr.ColumnIDs(e, func(int) { n++ })
	return n > 0
}

func hasSubquery(e expr.Expr) bool {
	found := false
	expr.Walk(e, func(x expr.Expr) bool {
		if _, ok := x.(*expr.Subquery); ok {
			found = true
		}
		return !found
	})
	return found
}

func optimize(n Node, env *Env) Node {
	for _, r := range rules {
		n = r.fn(n, env)
	}
	return n
}

// fold evaluates every subexpression whose operands are all constants.
// A folding error is not raised: the expression is left to run, so an
// error surfaces only if a row reaches it (CASE arms that cannot run stay
// silent, PostgreSQL-style).
func fold(e expr.Expr) expr.Expr {
	if e == nil {
		return nil
	}
	if _, ok := e.(*expr.Case); ok {
		for _, k := range expr.Children(e) {
			*k = fold(*k)
		}
		return e
	}
	all := true
	for _, k := range expr.Children(e) {
		*k = fold(*k)
		if _, ok := (*k).(*expr.Const); !ok {
			all = false
		}
	}
	switch x := e.(type) {
	case *expr.Const, *expr.Col, *expr.Outer, *expr.Subquery:
		return e
	case *expr.Func:
		if volatileFunc(x) || readsSession[x.Name] {
			return e
		}
	}
	if strictOnNull(e) {
		return expr.NewConst(types.Null(e.Type()))
	}
	if !all {
		return e
	}
	c := expr.NewCtx(context.Background(), nil, nil)
	v, err := e.Eval(c, &types.Batch{Rows: 1})
	if err != nil || v.Len() != 1 {
		return e
	}
	return expr.NewConst(v.Get(0))
}

// strictOnNull reports whether e is a strict operator with the NULL
// constant as an operand: its value is NULL whatever the other operand is,
// and PostgreSQL folds it so at plan time without evaluating that operand,
// so `col / 0 = NULL` raises no division by zero (docs/conformance.md).
// NULLIF(NULL, x) is NULL for every x too.
func strictOnNull(e expr.Expr) bool {
	isNull := func(x expr.Expr) bool {
		c, ok := x.(*expr.Const)
		return ok && c.V.IsNull()
	}
	switch x := e.(type) {
	case *expr.Arith:
		return isNull(x.L) || isNull(x.R)
	case *expr.Cmp:
		return isNull(x.L) || isNull(x.R)
	case *expr.Func:
		return x.Name == "nullif" && len(x.Args) == 2 && isNull(x.Args[0])
	}
	return false
}

func foldNode(n Node, env *Env) Node {
	switch x := n.(type) {
	case *Scan:
		x.Filter = fold(x.Filter)
	case *Filter:
		x.Cond = fold(x.Cond)
	case *Project:
		for i := range x.Exprs {
			x.Exprs[i] = fold(x.Exprs[i])
		}
	case *Join:
		x.Cond = fold(x.Cond)
	case *Lateral:
		x.Cond = fold(x.Cond)
		if k, ok := x.Cond.(*expr.Const); ok && !k.V.IsNull() && k.V.Kind() == types.Bool && k.V.Bool() {
			x.Cond = nil // ON true
		}
		for i := range x.Corr {
			x.Corr[i] = fold(x.Corr[i])
		}
	case *Window:
		for i := range x.Funcs {
			w := &x.Funcs[i]
			w.Frame.Start.Offset = fold(w.Frame.Start.Offset)
			w.Frame.End.Offset = fold(w.Frame.End.Offset)
		}
	case *Values:
		for _, r := range x.Rows {
			for i := range r {
				r[i] = fold(r[i])
			}
		}
	}
	for _, in := range n.Inputs() {
		foldNode(in, env)
	}
	return n
}

// conjuncts splits an AND into its operands.
func conjuncts(e expr.Expr) []expr.Expr {
	// One slice for the whole tree: this runs several times per planned
	// statement, and a slice per AND level was a tenth of a point
	// lookup's allocations.
	return appendConjuncts(make([]expr.Expr, 0, 4), e)
}

func appendConjuncts(out []expr.Expr, e expr.Expr) []expr.Expr {
	if l, ok := e.(*expr.Logic); ok && !l.Or {
		for _, a := range l.Args {
			out = appendConjuncts(out, a)
		}
		return out
	}
	return append(out, e)
}

func idsOf(n Node) map[int]bool {
	m := map[int]bool{}
	for _, c := range n.Output() {
		m[c.ID] = true
	}
	return m
}

// produces reports whether n outputs column id. Unlike idsOf it
// allocates nothing and walks through joins and filters instead of
// building their output lists: pushInto asks at every level of a join tree
// for every conjunct, and with a 64-way join (SQLite's select5) building
// those lists was most of the statement's planning time.
func produces(n Node, id int) bool {
	switch x := n.(type) {
	case *Join:
		if produces(x.L, id) {
			return true
		}
		return x.Kind != JoinSemi && x.Kind != JoinAnti && produces(x.R, id)
	case *Filter:
		return produces(x.In, id)
	}
	for _, c := range n.Output() {
		if c.ID == id {
			return true
		}
	}
	return false
}

// coveredBy reports whether every column e reads is an output of n.
func coveredBy(e expr.Expr, n Node) bool {
	ok := true
	expr.ColumnIDs(e, func(id int) {
		if ok && !produces(n, id) {
			ok = false
		}
	})
	return ok
}

func covered(e expr.Expr, ids map[int]bool) bool {
	ok := true
	expr.ColumnIDs(e, func(id int) {
		if !ids[id] {
			ok = false
		}
	})
	return ok
}

// pushFilters moves each conjunct of a Filter as far down as it can go:
// into a Scan (re-checked on every row, R10.2), or below an inner join to
// the side whose columns it reads.
func pushFilters(n Node, env *Env) Node {
	switch x := n.(type) {
	case *Filter:
		x.In = pushFilters(x.In, env)
		var keep []expr.Expr
		for _, c := range conjuncts(x.Cond) {
			if !pushInto(x.In, c) {
				keep = append(keep, c)
			}
		}
		if len(keep) == 0 {
			return x.In
		}
		x.Cond = and(keep)
		return x
	case *Project:
		x.In = pushFilters(x.In, env)
	case *Aggregate:
		x.In = pushFilters(x.In, env)
	case *Sort:
		x.In = pushFilters(x.In, env)
	case *Window:
		// A filter above a Window stays there: pushInto never places one
		// below it, since removing rows changes the partitions (and every
		// frame) the window functions see.
		x.In = pushFilters(x.In, env)
	case *Limit:
		x.In = pushFilters(x.In, env)
	case *Distinct:
		x.In = pushFilters(x.In, env)
	case *SetOp:
		x.L, x.R = pushFilters(x.L, env), pushFilters(x.R, env)
	case *Join:
		x.L, x.R = pushFilters(x.L, env), pushFilters(x.R, env)
	case *Lateral:
		x.L = pushFilters(x.L, env)
	}
	return n
}

// pushInto tries to place conjunct c inside n; false if it must stay above.
func pushInto(n Node, c expr.Expr) bool {
	hasSub := false
	expr.Walk(c, func(e expr.Expr) bool {
		if _, ok := e.(*expr.Subquery); ok {
			hasSub = true
		}
		return true
	})
	switch x := n.(type) {
	case *Scan:
		if !coveredBy(c, x) {
			return false
		}
		x.Filter = and(append(conjuncts(x.Filter), c)[boolToInt(x.Filter == nil):])
		return true
	case *Versions:
		if !coveredBy(c, x) {
			return false
		}
		x.Filter = and(append(conjuncts(x.Filter), c)[boolToInt(x.Filter == nil):])
		return true
	case *Join:
		if hasSub {
			return false
		}
		if x.Kind == JoinInner || x.Kind == JoinLeft || x.Kind == JoinSemi || x.Kind == JoinAnti {
			if coveredBy(c, x.L) {
				if !pushInto(x.L, c) {
					x.L = &Filter{In: x.L, Cond: c}
				}
				return true
			}
		}
		if x.Kind == JoinInner {
			if coveredBy(c, x.R) {
				if !pushInto(x.R, c) {
					x.R = &Filter{In: x.R, Cond: c}
				}
				return true
			}
			if coveredBy(c, x) {
				x.Cond = and(append(conjuncts(x.Cond), c)[boolToInt(x.Cond == nil):])
				return true
			}
		}
	case *Filter:
		if coveredBy(c, x) {
			x.Cond = and(append(conjuncts(x.Cond), c))
			return true
		}
	case *Project:
		// A condition on columns a projection only passes through (a
		// view's or derived table's renamed columns) holds of its input's
		// columns: moved below, it can reach the scan, and so a key range
		// or a point lookup. Computed columns keep it above, and so does
		// a condition with an effect (set_config): below, it could run
		// once per input row of a join rather than per output row.
		if hasSub || volatile(c) {
			return false
		}
		pass := map[int]*expr.Col{}
		for i, out := range x.Cols {
			if in, ok := x.Exprs[i].(*expr.Col); ok {
				pass[out.ID] = in
			}
		}
		through := true
		expr.ColumnIDs(c, func(id int) {
			if pass[id] == nil {
				through = false
			}
		})
		if !through {
			return false
		}
		c = throughCols(c, pass)
		if !pushInto(x.In, c) {
			x.In = &Filter{In: x.In, Cond: c}
		}
		return true
	case *Aggregate:
		return pushThroughAggregate(x, c, hasSub)
	case *Lateral:
		// A condition on the left rows alone filters them before the
		// per-row plan runs (for a LEFT lateral join too: WHERE drops the
		// row whatever the right side gives).
		if !hasSub && coveredBy(c, x.L) {
			if !pushInto(x.L, c) {
				x.L = &Filter{In: x.L, Cond: c}
			}
			return true
		}
	}
	return false
}

// pushThroughAggregate places c below aggregate x when it reads only
// grouping columns that are plain input columns: a group's row has the
// value every input row of the group has there, so the condition keeps
// or drops whole groups either way, and below it reaches the scan (a
// view's or derived table's GROUP BY filtered by its key). Not a
// condition on an aggregate's result, one with a subquery or a volatile
// function (set_config: how often it runs would change), nor one on a
// column some grouping set leaves out (its rows have NULL there, not the
// input's value), as in PostgreSQL. A condition on no column stays: over
// a grand total it would turn "no row" into a row of empty aggregates.
func pushThroughAggregate(x *Aggregate, c expr.Expr, hasSub bool) bool {
	if hasSub || volatile(c) {
		return false
	}
	pass := map[int]*expr.Col{}
	for i, out := range x.GroupCols {
		in, ok := x.Groups[i].(*expr.Col)
		if !ok {
			continue
		}
		inEvery := true
		for _, set := range x.Sets {
			if !slices.Contains(set, i) {
				inEvery = false
				break
			}
		}
		if inEvery {
			pass[out.ID] = in
		}
	}
	through, reads := true, false
	expr.ColumnIDs(c, func(id int) {
		reads = true
		if pass[id] == nil {
			through = false
		}
	})
	if !through || !reads {
		return false
	}
	c = throughCols(c, pass)
	if !pushInto(x.In, c) {
		x.In = &Filter{In: x.In, Cond: c}
	}
	return true
}

// volatile reports whether e calls a volatile function (volatileFunc).
func volatile(e expr.Expr) bool {
	found := false
	expr.Walk(e, func(e expr.Expr) bool {
		if f, ok := e.(*expr.Func); ok && volatileFunc(f) {
			found = true
		}
		return !found
	})
	return found
}

// volatileFuncs are the functions PostgreSQL marks VOLATILE whose calls
// may each return another value although they change nothing:
// random(), clock_timestamp(), timeofday(), a sequence's nextval(). Not
// every one of them exists in Strata; the names are listed so that none is
// ever folded or moved once it does.
var volatileFuncs = map[string]bool{
	"random": true, "random_normal": true, "clock_timestamp": true, "timeofday": true,
	"gen_random_uuid": true, "nextval": true, "setval": true, "currval": true, "lastval": true,
}

// readsSession are the functions whose value is the session's state when
// the statement runs (PostgreSQL's STABLE functions of settings): not
// folded at plan time, so a plan kept for another run of the statement
// reads the setting as it is then, and set_config() earlier in the
// statement is seen, as in PostgreSQL.
var readsSession = map[string]bool{"current_setting": true}

// volatileFunc reports whether f may return another value on each call or
// changes the session (set_config): PostgreSQL's VOLATILE. The planner
// neither folds such a call nor changes how often or on which rows it
// runs, and a WITH query that calls one is computed once (cte.go).
func volatileFunc(f *expr.Func) bool { return f.Volatile() || volatileFuncs[f.Name] }

// VolatileFunction reports whether a call of the function name may return
// another value on each call (random(), gen_random_uuid(), …): a column
// DEFAULT calling one is evaluated for each row written.
func VolatileFunction(name string) bool { return volatileFuncs[name] }

// throughCols rewrites, in place, every column of e that pass maps to the
// projection input's column it passes through.
func throughCols(e expr.Expr, pass map[int]*expr.Col) expr.Expr {
	if c, ok := e.(*expr.Col); ok {
		if in := pass[c.ID]; in != nil {
			return &expr.Col{ID: in.ID, Name: in.Name, T: in.T}
		}
		return c
	}
	for _, k := range expr.Children(e) {
		*k = throughCols(*k, pass)
	}
	return e
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
