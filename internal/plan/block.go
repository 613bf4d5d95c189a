package plan

import (
	"errors"
	"slices"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// aggCtx maps expressions of an aggregated block onto the Aggregate's
// outputs: group keys by their SQL text, aggregate calls likewise.
type aggCtx struct {
	node   *Aggregate
	groups map[string]ColRef
	// byID maps the plan-wide id of a column grouped on directly to its
	// group output, so `col0`, `t.col0` and `cor0.col0` all name the same
	// group however the GROUP BY spelled it.
	byID  map[int]ColRef
	aggs  map[string]ColRef
	scope *scope
}

var aggFuncs = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"any_value": true, "max_by": true, "min_by": true, "bool_and": true, "bool_or": true, "every": true,
	"string_agg": true, "array_agg": true,
	"percentile_cont": true, "percentile_disc": true, "mode": true, "grouping": true,
	"stddev": true, "stddev_samp": true, "stddev_pop": true, "variance": true, "var_samp": true, "var_pop": true}

// IsAggregate reports whether a call of name (unqualified, lower case) is
// an aggregate when it has no OVER.
func IsAggregate(name string) bool { return aggFuncs[name] }

// HasAggregate reports whether n calls an aggregate outside subqueries:
// statements that bind expressions as a select list without grouping
// (RETURNING) refuse one.
func HasAggregate(n ast.Node) bool { return hasAgg(n) }

func hasAgg(e ast.Node) bool {
	found := false
	if e == nil {
		return false
	}
	ast.Inspect(e, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.FuncCall:
			if x.Schema == "" && aggFuncs[x.Name] && x.Over == nil {
				found = true
			}
		case *ast.SubqueryExpr, *ast.ExistsExpr:
			return false
		case *ast.QuantifiedExpr:
			if hasAgg(x.X) {
				found = true
			}
			return false
		case *ast.InExpr:
			if x.Query != nil {
				if hasAgg(x.X) {
					found = true
				}
				return false
			}
		}
		return !found
	})
	return found
}

// block binds one SELECT … FROM … WHERE … GROUP BY … HAVING block with the
// ORDER BY of its statement.
//
// A block that shows no aggregate of its own may still be one: a subquery
// in its select list, HAVING or ORDER BY can call an aggregate over this
// block's columns only (SELECT (SELECT max(t.v)) FROM t), which PostgreSQL
// computes here. Binding then stops with needAgg for this block's scope,
// and the block is bound once more as an aggregate.
func (b *binder) block(blk *ast.SelectBlock, order []*ast.OrderItem, parent *scope, ctes *cteEnv, inh *asOf) (Node, []string, error) {
	var corr *corrList
	if parent != nil && len(b.corrStack) > 0 {
		corr = b.corrStack[len(b.corrStack)-1]
	}
	mark := 0
	if corr != nil {
		mark = len(corr.exprs)
	}
	sc := &scope{parent: parent, ctes: ctes, corr: corr, block: true}
	n, names, err := b.blockIn(sc, blk, order, inh, false)
	var na *needAgg
	if errors.As(err, &na) && na.sc == sc {
		// The first attempt's correlated references are dropped with it.
		if corr != nil {
			corr.exprs = corr.exprs[:mark]
		}
		sc = &scope{parent: parent, ctes: ctes, corr: corr, block: true}
		n, names, err = b.blockIn(sc, blk, order, inh, true)
	}
	return n, names, err
}

// blockIn binds blk in its fresh scope sc; forceAgg makes it an aggregate
// even when none of its own expressions call one.
func (b *binder) blockIn(sc *scope, blk *ast.SelectBlock, order []*ast.OrderItem, inh *asOf, forceAgg bool) (Node, []string, error) {
	savedAsOf := b.inheritedAsOf
	b.inheritedAsOf = inh
	defer func() { b.inheritedAsOf = savedAsOf }()
	var node Node
	if len(blk.From) > 0 {
		n, err := b.from(blk.From, sc, inh)
		if err != nil {
			return nil, nil, err
		}
		node = n
	} else {
		node = &Values{Rows: [][]expr.Expr{{}}}
	}
	if blk.Where != nil {
		if hasLocalAgg(sc, blk.Where) {
			return nil, nil, sqlerr.New(sqlerr.CodeGrouping, "aggregate functions are not allowed in WHERE").WithPos(blk.Where.Pos())
		}
		sc.clause = "WHERE"
		c, err := b.predicate(sc, blk.Where, "WHERE")
		sc.clause = ""
		if err != nil {
			return nil, nil, err
		}
		node = &Filter{In: node, Cond: c}
	}
	aggregated := forceAgg || len(blk.GroupBy) > 0 || hasLocalAgg(sc, blk.Having)
	for _, it := range blk.Items {
		if hasLocalAgg(sc, it.Expr) {
			aggregated = true
		}
	}
	for _, it := range order {
		if hasLocalAgg(sc, it.Expr) {
			aggregated = true
		}
	}
	// An aggregate in a WINDOW clause's definition groups the query too
	// (WINDOW w AS (ORDER BY count(*))), as in PostgreSQL.
	for _, w := range blk.Windows {
		for _, e := range w.Spec.PartitionBy {
			if hasLocalAgg(sc, e) {
				aggregated = true
			}
		}
		for _, o := range w.Spec.OrderBy {
			if hasLocalAgg(sc, o.Expr) {
				aggregated = true
			}
		}
	}
	saved := b.agg
	defer func() { b.agg = saved }()
	b.agg = nil
	if aggregated {
		ag := &Aggregate{In: node}
		ac := &aggCtx{node: ag, groups: map[string]ColRef{}, byID: map[int]ColRef{}, aggs: map[string]ColRef{}, scope: sc}
		sets, err := expandGroupBy(blk.GroupBy)
		if err != nil {
			return nil, nil, err
		}
		idxOf := map[string]int{}
		// addGroup binds one GROUP BY expression (a position or an output
		// name stands for its select-list item) and returns its place in
		// the Aggregate's Groups, binding each distinct text once.
		addGroup := func(g ast.Expr) (int, error) {
			ge := g
			if n, ok := g.(*ast.NumberLit); ok {
				k, err := ordinal(n, len(blk.Items))
				if err != nil {
					return 0, err
				}
				ge = blk.Items[k].Expr
			} else if cr, ok := g.(*ast.ColumnRef); ok && cr.Table == "" {
				if _, err := b.resolve(sc, cr); err != nil {
					for _, it := range blk.Items {
						if it.Alias != nil && it.Alias.Name == cr.Name {
							ge = it.Expr
						}
					}
				}
			}
			key := ast.Format(ge)
			if i, dup := idxOf[key]; dup {
				return i, nil
			}
			if hasLocalAgg(sc, ge) {
				return 0, sqlerr.New(sqlerr.CodeGrouping, "aggregate functions are not allowed in GROUP BY").WithPos(ge.Pos())
			}
			sc.clause = "GROUP BY"
			e, err := b.expr(sc, ge)
			sc.clause = ""
			if err != nil {
				return 0, err
			}
			c := b.newCol(key, e.Type())
			idxOf[key] = len(ag.Groups)
			ag.Groups = append(ag.Groups, e)
			ag.GroupCols = append(ag.GroupCols, c)
			ac.groups[key] = c
			if col, ok := e.(*expr.Col); ok {
				if _, seen := ac.byID[col.ID]; !seen {
					ac.byID[col.ID] = c
				}
			}
			return idxOf[key], nil
		}
		if sets == nil {
			for _, g := range blk.GroupBy {
				if _, err := addGroup(g); err != nil {
					return nil, nil, err
				}
			}
		} else if err := b.groupingSets(ag, sets, addGroup); err != nil {
			return nil, nil, err
		}
		b.agg = ac
		node = ag
		if f := windowIn(blk.Having); f != nil {
			return nil, nil, sqlerr.New(codeWindowing, "window functions are not allowed in HAVING").WithPos(f.Pos()).WithToken(f.Name)
		}
		if blk.Having != nil {
			c, err := b.predicate(sc, blk.Having, "HAVING")
			if err != nil {
				return nil, nil, err
			}
			node = &Filter{In: node, Cond: c}
		}
	}
	// The select list; window calls in it and in ORDER BY become columns
	// of a Window node under its Project.
	win, err := b.newWinCtx(sc, node, blk)
	if err != nil {
		return nil, nil, err
	}
	savedWin := b.win
	b.win = win
	defer func() { b.win = savedWin }()
	if err := b.checkWindowDefs(win, blk); err != nil {
		return nil, nil, err
	}
	p := &Project{In: node}
	var names []string
	texts := map[string]int{}
	for _, it := range blk.Items {
		if st, ok := it.Expr.(*ast.StarExpr); ok {
			n := 0
			for _, r := range sc.rels {
				if st.Table != "" && r.name != st.Table {
					continue
				}
				for _, c := range r.cols {
					if c.hidden || c.merged && st.Table == "" {
						continue
					}
					e := c.value()
					if b.agg != nil {
						key := c.name
						g, ok := b.agg.groups[key]
						if !ok {
							g, ok = b.agg.byID[c.ref.ID]
						}
						if !ok {
							return nil, nil, sqlerr.New(sqlerr.CodeGrouping, "column %q must appear in the GROUP BY clause or be used in an aggregate function", c.name).WithPos(st.Pos())
						}
						e = colExpr(g)
					}
					p.Exprs = append(p.Exprs, e)
					p.Cols = append(p.Cols, b.newCol(c.name, e.Type()))
					names = append(names, c.name)
					n++
				}
			}
			if n == 0 && st.Table != "" {
				// x.* of a relation of an enclosing query: its columns as
				// correlated references, each bound as x.col is.
				r := outerRel(sc, st.Table)
				if r == nil {
					return nil, nil, sqlerr.UndefinedTable(st.Pos(), st.Table)
				}
				for _, c := range r.cols {
					if c.hidden {
						continue
					}
					e, err := b.expr(sc, &ast.ColumnRef{Span: st.Span, Table: st.Table, Name: c.name})
					if err != nil {
						return nil, nil, err
					}
					p.Exprs = append(p.Exprs, e)
					p.Cols = append(p.Cols, b.newCol(c.name, e.Type()))
					names = append(names, c.name)
				}
				continue
			}
			if n == 0 && len(blk.From) == 0 {
				return nil, nil, sqlerr.New(sqlerr.CodeSyntax, "SELECT * with no tables specified is not valid").WithPos(st.Pos())
			}
			continue
		}
		e, err := b.expr(sc, it.Expr)
		if err != nil {
			return nil, nil, err
		}
		name := colName(it, e)
		texts[ast.Format(it.Expr)] = len(p.Exprs)
		p.Exprs = append(p.Exprs, e)
		p.Cols = append(p.Cols, b.newCol(name, e.Type()))
		names = append(names, name)
	}
	visible := len(p.Exprs)
	distinctOn := len(blk.DistinctOn) > 0
	// output finds the select-list column an ORDER BY or DISTINCT ON item
	// names (a position, an output name, or the same expression) or adds
	// it as a hidden column; what names the clause in messages.
	output := func(e ast.Expr, what string) (int, error) {
		idx := -1
		switch x := e.(type) {
		case *ast.NumberLit:
			return ordinal(x, visible)
		case *ast.ColumnRef:
			if x.Table == "" {
				for i, nm := range names {
					if nm == x.Name {
						if idx >= 0 {
							return 0, sqlerr.New(sqlerr.CodeAmbiguousColumn, "%s %q is ambiguous", what, x.Name).WithPos(x.Pos())
						}
						idx = i
					}
				}
			}
		}
		if idx < 0 {
			if i, ok := texts[ast.Format(e)]; ok {
				idx = i
			}
		}
		if idx < 0 {
			if blk.Distinct && !distinctOn {
				return 0, sqlerr.New(sqlerr.CodeInvalidParameter, "for SELECT DISTINCT, ORDER BY expressions must appear in select list").WithPos(e.Pos())
			}
			x, err := b.expr(sc, e)
			if err != nil {
				return 0, err
			}
			idx = len(p.Exprs)
			texts[ast.Format(e)] = idx
			p.Exprs = append(p.Exprs, x)
			p.Cols = append(p.Cols, b.newCol(ast.Format(e), x.Type()))
		}
		return idx, nil
	}
	var on []ColRef
	for _, e := range blk.DistinctOn {
		idx, err := output(e, "DISTINCT ON")
		if err != nil {
			return nil, nil, err
		}
		on = append(on, p.Cols[idx])
	}
	var keys []SortKey
	for i, it := range order {
		idx, err := output(it.Expr, "ORDER BY")
		if err != nil {
			return nil, nil, err
		}
		c := p.Cols[idx]
		if distinctOn && i < len(on) && !slices.ContainsFunc(on, func(o ColRef) bool { return o.ID == c.ID }) {
			// DISTINCT ON keeps the first row of each key in ORDER BY's
			// order, which means something only when ORDER BY sorts by the
			// key first (PostgreSQL's rule).
			return nil, nil, sqlerr.New(codeInvalidColumnReference, "SELECT DISTINCT ON expressions must match initial ORDER BY expressions").WithPos(it.Pos())
		}
		keys = append(keys, sortKey(colExpr(c), it))
	}
	if len(win.node.Funcs) > 0 {
		p.In = win.node
	}
	b.win = savedWin
	node = p
	if blk.Distinct && !distinctOn {
		node = &Distinct{In: node}
	}
	if len(keys) > 0 {
		node = &Sort{In: node, Keys: keys}
	}
	if distinctOn {
		node = &Distinct{In: node, On: on}
	}
	if len(p.Exprs) > visible {
		fp := &Project{In: node}
		for _, c := range p.Cols[:visible] {
			fp.Exprs = append(fp.Exprs, colExpr(c))
			fp.Cols = append(fp.Cols, b.newCol(c.Name, c.T))
		}
		node = fp
	}
	return node, names, nil
}

// aggregate binds an aggregate call above the Aggregate node.
func (b *binder) aggregate(f *ast.FuncCall) (expr.Expr, error) {
	ac := b.agg
	key := ast.Format(f)
	if c, ok := ac.aggs[key]; ok {
		return colExpr(c), nil
	}
	b.agg = nil
	defer func() { b.agg = ac }()
	call := AggCall{Fn: f.Name, Star: f.Star, Distinct: f.Distinct, Pos: f.Pos()}
	if call.Fn == "every" {
		call.Fn = "bool_and"
	}
	if call.Fn == "grouping" {
		return b.grouping(ac, f, key)
	}
	if orderedSetAggs[call.Fn] || f.WithinGroup {
		return b.orderedSetAggregate(ac, f, key)
	}
	for _, a := range f.Args {
		if hasLocalAgg(ac.scope, a) {
			return nil, sqlerr.New(sqlerr.CodeGrouping, "aggregate function calls cannot be nested").WithPos(a.Pos())
		}
		if w := windowIn(a); w != nil {
			return nil, sqlerr.New(sqlerr.CodeGrouping, "aggregate function calls cannot contain window function calls").WithPos(w.Pos()).WithToken(w.Name)
		}
		e, err := b.expr(ac.scope, a)
		if err != nil {
			return nil, err
		}
		call.Args = append(call.Args, e)
	}
	if err := b.aggOrder(ac.scope, f, &call); err != nil {
		return nil, err
	}
	if f.Filter != nil {
		if err := b.aggFilter(ac.scope, f, &call); err != nil {
			return nil, err
		}
	}
	t, err := aggCallType(call, f)
	if err != nil {
		return nil, err
	}
	call.T = t
	c := b.newCol(key, t)
	ac.node.Aggs = append(ac.node.Aggs, call)
	ac.node.AggCols = append(ac.node.AggCols, c)
	ac.aggs[key] = c
	return colExpr(c), nil
}

// aggType is the result type of an aggregate: count is INT64; sum of
// INT64 is DECIMAL(38,0), as PostgreSQL's sum(int8) is numeric (so
// sum(b) / count(*) divides exactly rather than truncating), sum of the
// other integers up to 64 bits widens to 128 bits (an integer, as
// PostgreSQL's sum(int4) is bigint), of 128-bit ones to 256 bits,
// UINT256 and INT256 stay; sum of DECIMAL(p,s) is DECIMAL(76,s); avg of
// integers and decimals is DECIMAL(76, max(s,6)); floats stay FLOAT64;
// sum and avg of INTERVAL are INTERVAL.
func aggType(a AggCall) (types.Type, error) {
	if a.Fn == "count" {
		return types.Of(types.Int64), nil
	}
	if t, ok, err := listAggType(a); ok {
		return t, err
	}
	t := a.Args[0].Type()
	switch a.Fn {
	case "sum", "avg":
		k := t.Kind
		switch {
		case k.IsFloat():
			return types.Of(types.Float64), nil
		case k == types.Unknown:
			return types.Of(types.Int64), nil
		case k == types.Interval:
			// PostgreSQL's interval_pl and, for avg, interval_div.
			return t, nil
		case !k.IsNumeric():
			return types.Type{}, errf("function %s(%s) does not exist", a.Fn, t)
		}
		if a.Fn == "avg" {
			s := t.Scale
			if s < 6 {
				s = 6
			}
			return types.Type{Kind: types.Decimal, Precision: 76, Scale: s}, nil
		}
		switch {
		case k == types.Decimal:
			return types.Type{Kind: types.Decimal, Precision: 76, Scale: t.Scale}, nil
		case k == types.Int64:
			// 2^63 rows of ±2^63 fit 38 digits; the INT64 fast paths of
			// package exec sum in 128 bits and store that as this DECIMAL.
			return types.Type{Kind: types.Decimal, Precision: 38}, nil
		case k.IsSigned() && k.Bits() <= 64:
			return types.Of(types.Int128), nil
		case k.IsUnsigned() && k.Bits() <= 64:
			return types.Of(types.Uint128), nil
		case k == types.Int128:
			return types.Of(types.Int256), nil
		case k == types.Uint128:
			return types.Of(types.Uint256), nil
		}
		return t, nil
	case "stddev", "stddev_samp", "stddev_pop", "variance", "var_samp", "var_pop":
		// FLOAT64 for every numeric argument: PostgreSQL's result for
		// float input; for exact input it is numeric, whose value-dependent
		// scale no DECIMAL type has (docs/functions.md).
		if !t.Kind.IsNumeric() && t.Kind != types.Unknown {
			return types.Type{}, errf("function %s(%s) does not exist", a.Fn, t)
		}
		return types.Of(types.Float64), nil
	case "bool_and", "bool_or":
		if t.Kind != types.Bool && t.Kind != types.Unknown {
			return types.Type{}, errf("function %s(%s) does not exist", a.Fn, t)
		}
		return types.Of(types.Bool), nil
	}
	return t, nil
}

// aggFilter applies agg(…) FILTER (WHERE cond) by feeding the aggregate
// NULL for the rows cond does not pass: its argument becomes CASE WHEN
// cond THEN arg END (count(*) counts CASE WHEN cond THEN 1 END). That is
// exact for the aggregates that skip NULL inputs; array_agg, which keeps
// them, and max_by/min_by are refused rather than answered wrongly.
func (b *binder) aggFilter(sc *scope, f *ast.FuncCall, call *AggCall) error {
	switch call.Fn {
	case "array_agg", "max_by", "min_by":
		return sqlerr.NotSupported(f.Filter.Pos(), "FILTER is not supported for %s", f.Name)
	}
	if hasLocalAgg(sc, f.Filter) {
		return sqlerr.New(sqlerr.CodeGrouping, "aggregate functions are not allowed in FILTER").WithPos(f.Filter.Pos())
	}
	cond, err := b.predicate(sc, f.Filter, "FILTER")
	if err != nil {
		return err
	}
	if call.Star {
		call.Star = false
		call.Args = []expr.Expr{expr.NewConst(types.NewInt64(1))}
	}
	if len(call.Args) == 0 {
		return nil
	}
	// An ordered-set aggregate's aggregated argument is its last one (the
	// first are direct arguments such as percentile_cont's fraction).
	i := 0
	if orderedSetAggs[call.Fn] {
		i = len(call.Args) - 1
	}
	arg := call.Args[i]
	call.Args[i] = &expr.Case{Whens: []expr.When{{Cond: cond, Then: arg}}, T: arg.Type()}
	return nil
}

// aggCallType checks an aggregate call's argument count and returns its
// result type, with errors positioned at the call f (a grouped aggregate's
// and a window aggregate's alike).
func aggCallType(call AggCall, f *ast.FuncCall) (types.Type, error) {
	want := 1
	switch call.Fn {
	case "max_by", "min_by", "string_agg":
		want = 2
	case "count":
		if call.Star {
			want = 0
		}
	}
	if len(call.Args) != want {
		return types.Type{}, sqlerr.New(sqlerr.CodeUndefinedFunction, "function %s takes %d arguments", f.Name, want).WithPos(f.Pos())
	}
	t, err := aggType(call)
	if err != nil {
		return types.Type{}, sqlerr.New(sqlerr.CodeUndefinedFunction, "%v", err).WithPos(f.Pos())
	}
	return t, nil
}

// outerRel is the relation named name in the nearest enclosing scope of sc
// that has one, or nil.
func outerRel(sc *scope, name string) *rel {
	for o := sc.parent; o != nil; o = o.parent {
		for _, r := range o.rels {
			if r.name == name {
				return r
			}
		}
	}
	return nil
}
