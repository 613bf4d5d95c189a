package plan

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// binder turns syntax into plan nodes. Column ids are unique across the
// whole statement, subqueries included, so rewrite rules can move
// expressions between nodes without renumbering.
type binder struct {
	env    *Env
	ctx    context.Context
	nextID int
	lits   map[expr.Expr]bool // constants written as literals (they adapt to a column's type)
	// litPos is where each quoted string literal stands, for errors
	// that point at the literal (litError).
	litPos map[expr.Expr]int
	agg    *aggCtx // set while binding expressions above an Aggregate
	win    *winCtx // set while binding a block's select list and ORDER BY
	// corrStack holds the correlation lists of the subqueries being bound.
	corrStack []*corrList
	// inheritedAsOf is the AS OF in force in the block being bound.
	inheritedAsOf *asOf
	// lateralRels are the FROM items a LATERAL item being bound may read:
	// those before it in its FROM list, or its join's left side.
	lateralRels []*rel
	// from is the state of the FROM list being bound, for a JOIN LATERAL
	// item that reads a comma item before its join (lateral.go).
	fromItems fromState
	// working maps a WITH RECURSIVE definition being bound to its node: a
	// reference to it from its recursive term reads the work table; a key
	// with a nil node means its non-recursive term is being bound, where a
	// reference is an error.
	working map[*ast.CTE]*Recursive
	// deps, when set (BuildView), collects the scans and views bound.
	deps *viewDeps
	// viewDepth counts the views being bound inside one another.
	viewDepth int
	// volatiles counts the calls of functions with an effect bound so
	// far: a subquery or LATERAL item during whose binding it grew must
	// run for every outer row, not once per distinct outer tuple.
	volatiles int
	// mats holds the WITH queries bound once for the statement (cte.go),
	// which every later reference reads.
	mats map[matKey]*materialized
}

func newBinder(env *Env) *binder {
	return &binder{env: env, ctx: context.Background(), lits: map[expr.Expr]bool{}, litPos: map[expr.Expr]int{}, working: map[*ast.CTE]*Recursive{}}
}

func (b *binder) newCol(name string, t types.Type) ColRef {
	b.nextID++
	return ColRef{ID: b.nextID, Name: name, T: t}
}

// relCol is a column visible in a scope.
type relCol struct {
	name   string
	ref    ColRef
	hidden bool // not part of SELECT *
	// merged marks a column a JOIN … USING (or NATURAL JOIN) merged into
	// one: reachable qualified (a.k) and through a.*, but an unqualified k
	// or a bare * reads the join's merged column instead.
	merged bool
	// mk, when set, builds the column's value instead of reading ref: the
	// merged column of a FULL JOIN … USING is coalesce(left, right). It
	// returns a fresh expression each time (operators resolve expressions
	// in place).
	mk func() expr.Expr
}

// value is the expression reading c.
func (c *relCol) value() expr.Expr {
	if c.mk != nil {
		return c.mk()
	}
	return colExpr(c.ref)
}

// rel is a relation of a FROM clause.
type rel struct {
	name string
	cols []relCol
	scan *Scan // for _commit on demand
	b    *binder
}

// scope is the set of relations a query block's expressions see.
type scope struct {
	rels   []*rel
	parent *scope // the enclosing query, for correlated references
	corr   *corrList
	ctes   *cteEnv
	// block is set on the scope of a SELECT block (not on the helper scopes
	// of VALUES or FROM-clause functions): only a block can become an
	// aggregate when a subquery's aggregate turns out to be its own.
	block bool
	// clause names the clause being bound when aggregates are not allowed
	// in it ("WHERE", "JOIN conditions", "GROUP BY"); "" elsewhere.
	clause string
}

// corrList collects the outer expressions a subquery reads.
type corrList struct {
	exprs []expr.Expr
	// agg is the enclosing query's aggregate context while the subquery is
	// bound (nil when that query does not aggregate or the subquery is in
	// its FROM or WHERE).
	agg *aggCtx
}

// cteEnv is the chain of WITH definitions visible to a query.
type cteEnv struct {
	defs   map[string]*ast.CTE
	asOf   *asOf
	parent *cteEnv
	// recursive is set for the definitions of WITH RECURSIVE: one that
	// reads itself is bound as a Recursive node (bindRecursive).
	recursive bool
	// outer is the scope enclosing the query that declares the WITH (nil
	// at the top): the definitions may read its columns.
	outer *scope
	// refs counts the references to the definition in the query that
	// declares it (countRefs): more than one computes it once.
	refs int
}

// outerFor is the scope a definition of e, referenced from a FROM clause
// whose scope is sc, binds in. The definition reads the columns of e.outer,
// the query around the WITH; but its rows are computed where it is
// referenced, possibly in a subquery nested below the WITH, so every query
// level in between must pass those values down as correlated references.
// Each level in between is stood in for by a scope without relations (its
// own columns are not the definition's to see) that keeps the level's
// correlation list. nil when the definition can read no outer column.
func (e *cteEnv) outerFor(sc *scope) *scope {
	if e.outer == nil {
		return nil
	}
	var chain func(x *scope) *scope
	chain = func(x *scope) *scope {
		switch {
		case x == nil:
			return nil
		case x == e.outer:
			return x
		case x.corr == nil:
			return nil
		}
		up := chain(x.parent)
		if up == nil {
			return nil
		}
		return &scope{parent: up, corr: x.corr, ctes: x.ctes}
	}
	return chain(sc.parent)
}

func (c *cteEnv) lookup(name string) (*ast.CTE, *cteEnv) {
	for e := c; e != nil; e = e.parent {
		if d, ok := e.defs[name]; ok {
			return d, e
		}
	}
	return nil, nil
}

// asOf is a resolved AS OF clause.
type asOf struct {
	commit uint64
	pos    int
}

func notSupported(n ast.Node, format string, args ...any) error {
	return sqlerr.NotSupported(n.Pos(), format, args...)
}

// query binds a whole SelectStmt. parent is the enclosing scope when the
// query is a subquery (nil otherwise); inh is the AS OF it inherits.
func (b *binder) query(q *ast.SelectStmt, parent *scope, ctes *cteEnv) (Node, []string, error) {
	n, names, err := b.queryAsOf(q, parent, ctes, nil)
	var na *needAgg
	if errors.As(err, &na) {
		// Each block catches its own needAgg; one that escaped names a
		// scope no block bound, which block() rules out. Report it as the
		// user's error it stands for rather than as an internal one.
		return nil, nil, sqlerr.New(sqlerr.CodeGrouping, "aggregate functions are not allowed here").WithPos(q.Pos())
	}
	return n, names, err
}

func (b *binder) queryAsOf(q *ast.SelectStmt, parent *scope, ctes *cteEnv, inh *asOf) (Node, []string, error) {
	if q.AsOf != nil {
		a, err := b.resolveAsOf(q.AsOf)
		if err != nil {
			return nil, nil, err
		}
		inh = a
	}
	ctes, err := b.withDefs(q.With, parent, ctes, inh, q, nil)
	if err != nil {
		return nil, nil, err
	}
	var node Node
	var names []string
	if blk, ok := q.Body.(*ast.SelectBlock); ok {
		node, names, err = b.block(blk, q.OrderBy, parent, ctes, inh)
	} else {
		node, names, err = b.body(q.Body, parent, ctes, inh)
		if err == nil && len(q.OrderBy) > 0 {
			node, err = b.orderOutputs(node, names, q.OrderBy)
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if q.Limit != nil || q.Offset != nil {
		lim := &Limit{In: node, Count: -1}
		if q.Limit != nil {
			if lim.Count, err = b.count(q.Limit, "LIMIT"); err != nil {
				return nil, nil, err
			}
		}
		if q.Offset != nil {
			if lim.Offset, err = b.count(q.Offset, "OFFSET"); err != nil {
				return nil, nil, err
			}
		}
		node = lim
	}
	return node, names, nil
}

// withDefs chains the definitions of w (nil: none) onto ctes, one link per
// definition, so that each sees the ones before it (PostgreSQL's scoping)
// and the query sees them all. scope is the query that declares w (with w
// itself as extra when w is not part of it), where its definitions'
// references are counted. (Two parameters, not a variadic list: a slice
// built at every call would cost a point SELECT an allocation.)
func (b *binder) withDefs(w *ast.With, parent *scope, ctes *cteEnv, inh *asOf, scope, extra ast.Node) (*cteEnv, error) {
	if w == nil {
		return ctes, nil
	}
	for i, c := range w.CTEs {
		for _, d := range w.CTEs[:i] {
			if d.Name.Name == c.Name.Name {
				return nil, sqlerr.New(codeDuplicateAlias, "WITH query name %q specified more than once", c.Name.Name).WithPos(c.Pos()).WithToken(c.Name.Name)
			}
		}
		if _, ran := b.env.Written[c]; c.Write != nil && !ran {
			return nil, sqlerr.New(sqlerr.CodeFeatureNotSupported, "WITH clause containing a data-modifying statement must be at the top level").
				WithPos(c.Write.Pos())
		}
		ctes = &cteEnv{defs: map[string]*ast.CTE{c.Name.Name: c}, asOf: inh, parent: ctes, recursive: w.Recursive, outer: parent, refs: countRefs(c, scope, extra)}
	}
	return ctes, nil
}

// isTextOperand reports whether e is a quoted literal or a parameter,
// whose string value has no type of its own yet.
func isTextOperand(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.StringLit, *ast.Param:
		return true
	case *ast.ParenExpr:
		return isTextOperand(x.X)
	}
	return false
}

// count evaluates a LIMIT or OFFSET operand.
func (b *binder) count(e ast.Expr, what string) (int64, error) {
	if _, ok := e.(*ast.NullLit); ok {
		return -1, nil
	}
	v, err := b.evalConst(e)
	if err != nil {
		return 0, err
	}
	if v.IsNull() {
		return -1, nil
	}
	if v.Kind() == types.String && isTextOperand(e) {
		// A quoted literal or a text parameter: its text read as the
		// integer, as PostgreSQL coerces an unknown literal to bigint.
		iv, perr := types.ParseText(types.Of(types.Int64), strings.TrimSpace(v.Str()))
		if perr != nil {
			return 0, expr.CastError(e.Pos(), v, types.Of(types.Int64), perr)
		}
		v = iv
	}
	iv, err := types.Cast(v, types.Of(types.Int64))
	if err != nil || !v.Kind().IsInteger() && v.Kind() != types.Decimal {
		return 0, sqlerr.New(sqlerr.CodeDatatypeMismatch, "argument of %s must be an integer, got %s", what, v).WithPos(e.Pos())
	}
	if iv.Int64() < 0 {
		return 0, sqlerr.New("2201W", "%s must not be negative", what).WithPos(e.Pos())
	}
	return iv.Int64(), nil
}

// body binds a query body that is not a plain block.
func (b *binder) body(body ast.QueryBody, parent *scope, ctes *cteEnv, inh *asOf) (Node, []string, error) {
	switch x := body.(type) {
	case *ast.SelectBlock:
		return b.block(x, nil, parent, ctes, inh)
	case *ast.ParenSelect:
		return b.queryAsOf(x.Select, parent, ctes, inh)
	case *ast.Values:
		return b.values(x, parent)
	case *ast.SetOp:
		return b.setOp(x, parent, ctes, inh)
	}
	return nil, nil, notSupported(body, "unsupported query body")
}

func (b *binder) values(v *ast.Values, parent *scope) (Node, []string, error) {
	v = &ast.Values{Span: v.Span, Rows: v.AllRows()}
	if len(v.Rows) == 0 {
		return nil, nil, sqlerr.Syntax(v.Pos(), "", "VALUES needs at least one row")
	}
	width := len(v.Rows[0].Items)
	sc := &scope{parent: parent}
	if parent != nil && len(b.corrStack) > 0 {
		// A VALUES subquery reads the enclosing query's columns like a
		// SELECT does: through its correlation list.
		sc.corr = b.corrStack[len(b.corrStack)-1]
	}
	rows := make([][]expr.Expr, len(v.Rows))
	colTypes := make([]types.Type, width)
	for i, r := range v.Rows {
		if len(r.Items) != width {
			return nil, nil, sqlerr.New(sqlerr.CodeSyntax, "VALUES lists must all be the same length").WithPos(r.Pos())
		}
		for j, it := range r.Items {
			e, err := b.expr(sc, it)
			if err != nil {
				return nil, nil, err
			}
			rows[i] = append(rows[i], e)
			if i == 0 {
				colTypes[j] = e.Type()
				continue
			}
			t, ok := types.Common(colTypes[j], e.Type())
			if !ok {
				return nil, nil, sqlerr.New(sqlerr.CodeDatatypeMismatch, "VALUES types %s and %s cannot be matched", colTypes[j], e.Type()).WithPos(it.Pos())
			}
			colTypes[j] = t
		}
	}
	n := &Values{Rows: rows}
	names := make([]string, width)
	for j := range width {
		t := colTypes[j]
		if t.Kind == types.Unknown {
			t = types.Of(types.String)
		}
		names[j] = fmt.Sprintf("column%d", j+1)
		n.Cols = append(n.Cols, b.newCol(names[j], t))
		for i := range rows {
			c, err := b.coerce(rows[i][j], t, v.Rows[i].Items[j].Pos())
			if err != nil {
				return nil, nil, err
			}
			rows[i][j] = c
		}
	}
	return n, names, nil
}

func (b *binder) setOp(s *ast.SetOp, parent *scope, ctes *cteEnv, inh *asOf) (Node, []string, error) {
	l, names, err := b.body(s.Left, parent, ctes, inh)
	if err != nil {
		return nil, nil, err
	}
	r, _, err := b.body(s.Right, parent, ctes, inh)
	if err != nil {
		return nil, nil, err
	}
	lo, ro := l.Output(), r.Output()
	opName := [...]string{"UNION", "INTERSECT", "EXCEPT"}[s.Op]
	if len(lo) != len(ro) {
		return nil, nil, sqlerr.New(sqlerr.CodeSyntax, "each %s query must have the same number of columns", opName).WithPos(s.Pos())
	}
	ts := make([]types.Type, len(lo))
	for i := range lo {
		t, ok := types.Common(lo[i].T, ro[i].T)
		if !ok {
			return nil, nil, sqlerr.New(sqlerr.CodeDatatypeMismatch, "%s types %s and %s cannot be matched", opName, lo[i].T, ro[i].T).WithPos(s.Pos())
		}
		if t.Kind == types.Unknown {
			t = types.Of(types.String)
		}
		ts[i] = t
	}
	l, r = b.castOutputs(l, ts), b.castOutputs(r, ts)
	n := &SetOp{Kind: SetOpKind(s.Op), All: s.All, L: l, R: r}
	for i, t := range ts {
		n.Cols = append(n.Cols, b.newCol(names[i], t))
	}
	return n, names, nil
}

// castOutputs wraps n in a projection casting its columns to ts when any
// differs.
func (b *binder) castOutputs(n Node, ts []types.Type) Node {
	out := n.Output()
	same := true
	for i, c := range out {
		if c.T != ts[i] {
			same = false
		}
	}
	if same {
		return n
	}
	p := &Project{In: n}
	for i, c := range out {
		var e expr.Expr = &expr.Col{ID: c.ID, Name: c.Name, T: c.T}
		if c.T != ts[i] {
			e = &expr.Cast{X: e, T: ts[i], Pos: -1}
		}
		p.Exprs = append(p.Exprs, e)
		p.Cols = append(p.Cols, b.newCol(c.Name, ts[i]))
	}
	return p
}

// orderOutputs sorts a set operation or VALUES by its output columns.
func (b *binder) orderOutputs(n Node, names []string, items []*ast.OrderItem) (Node, error) {
	out := n.Output()
	s := &Sort{In: n}
	for _, it := range items {
		idx := -1
		switch x := it.Expr.(type) {
		case *ast.NumberLit:
			k, err := ordinal(x, len(out))
			if err != nil {
				return nil, err
			}
			idx = k
		case *ast.ColumnRef:
			for i, nm := range names {
				if x.Table == "" && nm == x.Name {
					idx = i
					break
				}
			}
			if idx < 0 {
				return nil, sqlerr.UndefinedColumn(x.Pos(), x.Name)
			}
		default:
			return nil, notSupported(it, "ORDER BY of a set operation must name an output column")
		}
		c := out[idx]
		s.Keys = append(s.Keys, sortKey(&expr.Col{ID: c.ID, Name: c.Name, T: c.T}, it))
	}
	return s, nil
}

func ordinal(x *ast.NumberLit, n int) (int, error) {
	var k int
	if _, err := fmt.Sscanf(x.Text, "%d", &k); err != nil || k < 1 || k > n || fmt.Sprint(k) != x.Text {
		return 0, sqlerr.New(sqlerr.CodeInvalidParameter, "ORDER BY position %s is not in select list", x.Text).WithPos(x.Pos()).WithToken(x.Text)
	}
	return k - 1, nil
}

func sortKey(e expr.Expr, it *ast.OrderItem) SortKey {
	k := SortKey{E: e, Desc: it.Desc, NullsFirst: it.Desc}
	switch it.Nulls {
	case ast.NullsFirst:
		k.NullsFirst = true
	case ast.NullsLast:
		k.NullsFirst = false
	}
	return k
}

// from binds a FROM clause into one node and its scope.
func (b *binder) from(items []ast.TableExpr, sc *scope, inh *asOf) (Node, error) {
	var node Node
	saved := b.fromItems
	defer func() { b.fromItems = saved }()
	for _, it := range items {
		// A LATERAL item sees every FROM item before it.
		b.lateralRels = sc.rels
		b.fromItems = fromState{node: node, sc: sc, start: len(sc.rels)}
		n, err := b.tableExpr(it, sc, inh)
		if err != nil {
			return nil, err
		}
		if l, ok := attachLateral(n, node, JoinInner); ok {
			node = l
			continue
		}
		if b.fromItems.taken {
			// A JOIN LATERAL inside the item joined the items before it.
			node = n
			continue
		}
		if node == nil {
			node = n
		} else {
			node = &Join{Kind: JoinInner, L: node, R: n}
		}
	}
	return node, nil
}

func (b *binder) addRel(sc *scope, r *rel, pos int) error {
	for _, o := range sc.rels {
		if o.name == r.name && r.name != "" {
			return sqlerr.New(sqlerr.CodeDuplicateObject, "table name %q specified more than once", r.name).WithPos(pos)
		}
	}
	sc.rels = append(sc.rels, r)
	return nil
}

func aliasOf(a *ast.Alias, def string) (string, []*ast.Ident) {
	if a == nil || a.Name == nil {
		return def, nil
	}
	return a.Name.Name, a.Columns
}

func renameCols(r *rel, cols []*ast.Ident, pos int) error {
	vis := 0
	for i := range r.cols {
		if r.cols[i].hidden {
			continue
		}
		if vis < len(cols) {
			r.cols[i].name = cols[vis].Name
		}
		vis++
	}
	if len(cols) > vis {
		return sqlerr.New(sqlerr.CodeSyntax, "table %q has %d columns available but %d columns specified", r.name, vis, len(cols)).WithPos(pos)
	}
	return nil
}

func (b *binder) tableExpr(t ast.TableExpr, sc *scope, inh *asOf) (Node, error) {
	switch x := t.(type) {
	case *ast.TableRef:
		return b.tableRef(x, sc, inh)
	case *ast.TableFunc:
		return b.tableFunc(x, sc, inh)
	case *ast.DerivedTable:
		// A derived table sees the enclosing query's columns (as a
		// correlated reference of this block), not this FROM's other
		// items unless it is LATERAL.
		var n Node
		var names []string
		var err error
		if x.Lateral {
			n, names, err = b.lateralQuery(x, sc, inh)
		} else {
			n, names, err = b.queryAsOf(x.Query, sc.parent, sc.ctes, inh)
		}
		if err != nil && !x.Lateral {
			return nil, lateralHint(err, sc)
		}
		if err != nil {
			return nil, err
		}
		name, cols := aliasOf(x.Alias, "")
		r := &rel{name: name, b: b}
		for i, c := range n.Output() {
			r.cols = append(r.cols, relCol{name: names[i], ref: c})
		}
		if err := renameCols(r, cols, x.Pos()); err != nil {
			return nil, err
		}
		return n, b.addRel(sc, r, x.Pos())
	case *ast.ParenTable:
		inner := &scope{parent: sc.parent, ctes: sc.ctes}
		b.lateralRels = nil
		n, err := b.tableExpr(x.Inner, inner, inh)
		if err != nil {
			return nil, err
		}
		if l, ok := attachLateral(n, nil, JoinInner); ok {
			n = l
		}
		if x.Alias != nil && x.Alias.Name != nil {
			r := &rel{name: x.Alias.Name.Name, b: b}
			for _, ir := range inner.rels {
				for _, c := range ir.cols {
					// The aliased join shows its merged USING columns
					// once, as its SELECT * does.
					if !c.merged {
						r.cols = append(r.cols, c)
					}
				}
			}
			if err := renameCols(r, x.Alias.Columns, x.Pos()); err != nil {
				return nil, err
			}
			return n, b.addRel(sc, r, x.Pos())
		}
		for _, r := range inner.rels {
			if err := b.addRel(sc, r, x.Pos()); err != nil {
				return nil, err
			}
		}
		return n, nil
	case *ast.JoinExpr:
		return b.join(x, sc, inh)
	}
	return nil, notSupported(t, "unsupported FROM item")
}

func (b *binder) join(j *ast.JoinExpr, sc *scope, inh *asOf) (Node, error) {
	start := len(sc.rels)
	l, err := b.tableExpr(j.Left, sc, inh)
	if err != nil {
		return nil, err
	}
	nl := len(sc.rels)
	// A LATERAL right side sees the join's left side (its rows are
	// what it runs for) and, when the join is a FROM item, the items
	// before it in the FROM list.
	outer := b.fromItems
	b.lateralRels = sc.rels[start:nl:nl]
	if outer.node != nil && outer.sc == sc && outer.start == start {
		b.lateralRels = sc.rels[:nl:nl]
	}
	r, err := b.tableExpr(j.Right, sc, inh)
	if err != nil {
		return nil, err
	}
	kind := map[ast.JoinKind]JoinKind{ast.JoinInner: JoinInner, ast.JoinCross: JoinInner, ast.JoinLeft: JoinLeft, ast.JoinRight: JoinRight, ast.JoinFull: JoinFull}[j.Kind]
	lat, isLateral := attachLateral(r, l, kind)
	if isLateral && b.takesFromItems(lat, outer, sc, start) {
		// It reads a comma item before the join: a, b JOIN LATERAL s is
		// a × (b ⋈ s), which is (a × b) ⋈ s, for INNER and LEFT alike.
		lat.L = &Join{Kind: JoinInner, L: outer.node, R: l}
		b.fromItems.node, b.fromItems.taken = nil, true
	}
	if isLateral && kind != JoinInner && kind != JoinLeft {
		return nil, sqlerr.New(codeInvalidColumnReference, "invalid reference to FROM-clause entry for table %q", sc.rels[start].name).WithPos(j.Right.Pos()).
			WithDetail("The combining JOIN type must be INNER or LEFT for a LATERAL reference.")
	}
	n := &Join{Kind: kind, L: l, R: r}
	var conds []expr.Expr
	using := j.Using
	left, right := sc.rels[start:nl], sc.rels[nl:]
	if j.Natural {
		seen := map[string]bool{}
		for _, lr := range left {
			for _, lc := range lr.cols {
				if lc.hidden || lc.merged || seen[lc.name] {
					continue
				}
				for _, rr := range right {
					for _, rc := range rr.cols {
						if !rc.hidden && !rc.merged && lc.name == rc.name && !seen[lc.name] {
							seen[lc.name] = true
							using = append(using, &ast.Ident{Span: j.Span, Name: lc.name})
						}
					}
				}
			}
		}
	}
	// USING (and NATURAL) columns merge, as in PostgreSQL: the join shows
	// each once, first, and an unqualified name reads the merged column:
	// the left one for INNER and LEFT joins, the right one for RIGHT, and
	// coalesce(left, right) for FULL.
	merged := &rel{b: b}
	for i, u := range using {
		for _, w := range using[:i] {
			if w.Name == u.Name {
				return nil, sqlerr.New(sqlerr.CodeDuplicateColumn, "column name %q appears more than once in USING clause", u.Name).WithPos(u.Pos()).WithToken(u.Name)
			}
		}
		lc, err := findColIn(left, u.Name, u.Pos())
		if err != nil {
			return nil, err
		}
		rc, err := findColIn(right, u.Name, u.Pos())
		if err != nil {
			return nil, err
		}
		c, err := b.compare(expr.EQ, lc.value(), rc.value(), u.Pos())
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
		m := relCol{name: u.Name, ref: lc.ref, mk: lc.mk}
		switch kind {
		case JoinRight:
			m.ref, m.mk = rc.ref, rc.mk
		case JoinFull:
			lv, rv, pos := lc.value, rc.value, u.Pos()
			t, _ := types.Common(lc.ref.T, rc.ref.T)
			m.ref = ColRef{ID: -1, Name: u.Name, T: t}
			m.mk = func() expr.Expr {
				f, _, err := expr.NewFunc("coalesce", []types.Type{t, t}, pos)
				if err != nil {
					panic(err) // coalesce takes any two values of one type
				}
				l, r := lv(), rv()
				if l.Type() != t {
					l = &expr.Cast{X: l, T: t, Pos: pos}
				}
				if r.Type() != t {
					r = &expr.Cast{X: r, T: t, Pos: pos}
				}
				f.Args = []expr.Expr{l, r}
				return f
			}
		}
		lc.merged, rc.merged = true, true
		merged.cols = append(merged.cols, m)
	}
	if len(merged.cols) > 0 {
		sc.rels = slices.Insert(sc.rels, start, merged)
	}
	if j.On != nil {
		if hasLocalAgg(sc, j.On) {
			return nil, sqlerr.New(sqlerr.CodeGrouping, "aggregate functions are not allowed in JOIN conditions").WithPos(j.On.Pos())
		}
		saved := sc.clause
		sc.clause = "JOIN conditions"
		c, err := b.predicate(sc, j.On, "JOIN/ON")
		sc.clause = saved
		if err != nil {
			return nil, err
		}
		conds = append(conds, c)
	}
	if isLateral {
		lat.Cond = and(conds)
		return lat, nil
	}
	n.Cond = and(conds)
	return n, nil
}

// findColIn finds the column an unqualified name means among rels (a
// column merged by an inner USING is found as its merged column).
func findColIn(rels []*rel, name string, pos int) (*relCol, error) {
	var found *relCol
	for _, r := range rels {
		for i := range r.cols {
			if c := &r.cols[i]; c.name == name && !c.hidden && !c.merged {
				if found != nil {
					return nil, sqlerr.New(sqlerr.CodeAmbiguousColumn, "column reference %q is ambiguous", name).WithPos(pos).WithToken(name)
				}
				found = c
			}
		}
	}
	if found == nil {
		return nil, sqlerr.UndefinedColumn(pos, name).WithToken(name)
	}
	return found, nil
}

func colExpr(c ColRef) *expr.Col { return &expr.Col{ID: c.ID, Name: c.Name, T: c.T} }

func and(cs []expr.Expr) expr.Expr {
	switch len(cs) {
	case 0:
		return nil
	case 1:
		return cs[0]
	}
	args := make([]expr.Expr, 0, len(cs))
	for _, c := range cs {
		if l, ok := c.(*expr.Logic); ok && !l.Or {
			args = append(args, l.Args...)
		} else {
			args = append(args, c)
		}
	}
	return &expr.Logic{Args: args}
}

// tableRef binds a named relation: a CTE, a virtual relation or a table.
func (b *binder) tableRef(t *ast.TableRef, sc *scope, inh *asOf) (Node, error) {
	name := t.Name.Name
	alias, cols := aliasOf(t.Alias, name)
	own := inh
	if t.AsOf != nil {
		a, err := b.resolveAsOf(t.AsOf)
		if err != nil {
			return nil, err
		}
		own = a
	}
	if v, ok := b.env.Relations[t]; ok {
		return b.virtualRef(t, sc, v, "", name, alias, cols)
	}
	if t.Name.Schema == "" && sc.ctes != nil {
		if def, env := sc.ctes.lookup(name); def != nil {
			// Each reference binds the definition afresh: its own column
			// ids, and the AS OF in force where it is referenced.
			cteAsOf := own
			if cteAsOf == nil {
				cteAsOf = env.asOf
			}
			var n Node
			var names []string
			var err error
			switch rec, inProgress := b.working[def]; {
			case def.Write != nil:
				v := b.env.Written[def]
				if v == nil {
					return nil, sqlerr.New(sqlerr.CodeFeatureNotSupported, "WITH query %q does not have a RETURNING clause", name).
						WithPos(t.Pos()).WithToken(name)
				}
				n, names = b.writtenRows(name, v)
			case rec != nil:
				n, names = b.workTable(rec)
			case inProgress:
				return nil, sqlerr.New(codeInvalidRecursion, "recursive reference to query %q must not appear within its non-recursive term", name).WithPos(t.Pos()).WithToken(name)
			default:
				n, names, err = b.cteRef(def, env, sc, cteAsOf, alias)
			}
			if err != nil {
				return nil, err
			}
			r := &rel{name: alias, b: b}
			for i, c := range n.Output() {
				r.cols = append(r.cols, relCol{name: names[i], ref: c})
			}
			if err := renameCols(r, identsOf(def.Columns), def.Pos()); err != nil {
				return nil, err
			}
			if err := renameCols(r, cols, t.Pos()); err != nil {
				return nil, err
			}
			return n, b.addRel(sc, r, t.Pos())
		}
	}
	if t.Name.Schema == "" || t.Name.Schema == "public" {
		if v, ok := b.env.Source.Catalog().View(name); ok {
			return b.viewRef(t, v, sc, own, alias, cols)
		}
	}
	// An unqualified name that no table has may name a virtual relation of
	// a schema on the search path (pg_catalog's, as in PostgreSQL):
	// Virtual("", name) decides.
	unqualifiedVirtual := false
	if t.Name.Schema == "" && b.env.Virtual != nil {
		if _, isTable := b.env.Source.Catalog().Table(name); !isTable {
			_, unqualifiedVirtual = b.env.Virtual("", name)
		}
	}
	if t.Name.Schema != "" && t.Name.Schema != "public" || unqualifiedVirtual {
		if b.env.Virtual != nil {
			if v, ok := b.env.Virtual(t.Name.Schema, name); ok {
				if own != nil {
					// A system relation shows the database as it is now;
					// reading it at a commit would silently not (R6.4).
					full := name
					if t.Name.Schema != "" {
						full = t.Name.Schema + "." + name
					}
					hint := "AS OF reads versioned and append tables"
					if t.AsOf == nil {
						hint = "an AS OF after a query block applies to every relation it reads; write AS OF directly after each table to read at a commit"
					}
					return nil, sqlerr.New(sqlerr.CodeFeatureNotSupported, "%s keeps no history and cannot be read AS OF a commit", full).
						WithPos(t.Name.Pos()).WithToken(name).WithHint("%s", hint)
				}
				return b.virtualRef(t, sc, v, t.Name.Schema, name, alias, cols)
			}
		}
		return nil, sqlerr.UndefinedTable(t.Name.Pos(), t.Name.Schema+"."+name)
	}
	tbl, ok := b.env.Source.Catalog().Table(name)
	if !ok {
		return nil, sqlerr.UndefinedTable(t.Name.Pos(), name)
	}
	commit, err := b.checkAsOf(tbl, own, t.AsOf != nil)
	if err != nil {
		return nil, err
	}
	n := &Scan{Table: tbl, Alias: alias, AsOf: commit}
	r := &rel{name: alias, scan: n, b: b}
	for _, c := range tbl.Columns {
		ref := b.newCol(c.Name, c.Type)
		n.Cols = append(n.Cols, ref)
		n.ColIDs = append(n.ColIDs, c.ID)
		r.cols = append(r.cols, relCol{name: c.Name, ref: ref})
	}
	if b.deps != nil {
		b.deps.scans = append(b.deps.scans, boundScan{table: tbl, cols: slices.Clone(n.ColIDs)})
	}
	if err := renameCols(r, cols, t.Pos()); err != nil {
		return nil, err
	}
	node, err := b.retainRows(tbl, n)
	if err != nil {
		return nil, err
	}
	return node, b.addRel(sc, r, t.Pos())
}

// virtualRef binds a reference to virtual relation v, named schema.name,
// as alias (with its columns renamed to cols, when given).
func (b *binder) virtualRef(t *ast.TableRef, sc *scope, v Virtual, schema, name, alias string, cols []*ast.Ident) (Node, error) {
	n := &VirtualScan{Schema: schema, Name: name, V: v}
	r := &rel{name: alias, b: b}
	for _, c := range v.Columns() {
		ref := b.newCol(c.Name, c.Type)
		n.Cols = append(n.Cols, ref)
		r.cols = append(r.cols, relCol{name: c.Name, ref: ref})
	}
	if err := renameCols(r, cols, t.Pos()); err != nil {
		return nil, err
	}
	return n, b.addRel(sc, r, t.Pos())
}

func (e *cteEnv) parentOf(*ast.CTE) *cteEnv { return e.parent }

// writtenRows is a scan of the RETURNING rows of data-modifying WITH
// definition name, as the session computed them.
func (b *binder) writtenRows(name string, v Virtual) (Node, []string) {
	n := &VirtualScan{Name: name, V: v}
	var names []string
	for _, c := range v.Columns() {
		n.Cols = append(n.Cols, b.newCol(c.Name, c.Type))
		names = append(names, c.Name)
	}
	return n, names
}

func identsOf(ids []*ast.Ident) []*ast.Ident { return ids }

// checkAsOf applies R6.3/R6.4 to a table read at a: an upsert table keeps
// no history. It returns the commit to read at (0: the snapshot's).
func (b *binder) checkAsOf(t *catalog.Table, a *asOf, own bool) (uint64, error) {
	if a == nil {
		return 0, nil
	}
	if t.Mode == catalog.ModeUpsert {
		return 0, sqlerr.New(sqlerr.CodeFeatureNotSupported, "table %s is an upsert table and keeps no history; AS OF needs MODE VERSIONED", t.Name).WithPos(a.pos).WithHint("create the table WITH MODE VERSIONED to read it at an earlier commit")
	}
	if err := b.checkHorizon(t, a); err != nil {
		return 0, err
	}
	return a.commit, nil
}

// checkHorizon refuses a read of t at a commit older than its retention
// horizon (R6.3, R9.3): what stopped counting before it may be gone.
func (b *binder) checkHorizon(t *catalog.Table, a *asOf) error {
	r := b.env.Source.Retention(t.ID)
	if r.Horizon == 0 || a.commit >= r.Horizon {
		return nil
	}
	what := "its rows"
	if t.Mode == catalog.ModeVersioned {
		what = "the versions it replaced"
	}
	// The horizon only moves forward: a policy bound earlier may have
	// moved it, so the message says what retention did, and which policy
	// is bound now.
	return sqlerr.New(sqlerr.CodeInvalidParameter, "commit %d is older than the retention horizon of table %s, commit %d: retention has expired %s before it (the table's retention policy is now %s, %s)",
		a.commit, t.Name, r.Horizon, what, r.Policy.Name, r.Policy.SettingsText()).WithPos(a.pos).
		WithHint("read %s AS OF COMMIT %d or later; system.table_storage_plans shows each table's horizon", t.Name, r.Horizon)
}

// retainRows wraps scan n of append table t in the filter that leaves out
// the rows its retention policy expires by a column (R9.3): those whose
// column is before the cutoff (NULL never expires). Rows that expire by
// commit time are left out by storage itself (Retention.Horizon).
func (b *binder) retainRows(t *catalog.Table, n *Scan) (Node, error) {
	r := b.env.Source.Retention(t.ID)
	if r.ByCol == 0 {
		return n, nil
	}
	for i, id := range n.ColIDs {
		if id != r.ByCol {
			continue
		}
		c := n.Cols[i]
		cut, err := types.FromTime(c.T, r.ByCutoff.UTC())
		if err != nil {
			return nil, fmt.Errorf("plan: retention cutoff of table %s: %w", t.Name, err)
		}
		keep := &expr.Logic{Or: true, Args: []expr.Expr{
			&expr.Is{X: colExpr(c), Kind: expr.IsNull},
			&expr.Cmp{Op: expr.GE, L: colExpr(c), R: &expr.Const{V: cut}},
		}}
		return &Filter{In: n, Cond: keep}, nil
	}
	return n, nil
}

// tableFunc binds versions(t) (R7.1).
func (b *binder) tableFunc(f *ast.TableFunc, sc *scope, inh *asOf) (Node, error) {
	if f.Name.Schema != "" || f.Name.Name != "versions" {
		return b.setReturningFunc(f, sc)
	}
	if len(f.Args) != 1 {
		return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "versions() takes one table name").WithPos(f.Pos())
	}
	// The argument parses as a column reference: versions(t), or
	// versions(public.t) as FROM public.t names the same table.
	ref, ok := f.Args[0].(*ast.ColumnRef)
	if !ok || ref.Schema != "" || ref.Table != "" && ref.Table != "public" {
		return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "versions() takes a table name").WithPos(f.Args[0].Pos())
	}
	tbl, found := b.env.Source.Catalog().Table(ref.Name)
	if !found {
		if _, isView := b.env.Source.Catalog().View(ref.Name); isView {
			return nil, sqlerr.New(sqlerr.CodeFeatureNotSupported, "versions() reads a table's history, and %s is a view: name one of the tables it reads", ref.Name).WithPos(ref.Pos()).WithToken(ref.Name)
		}
		return nil, sqlerr.UndefinedTable(ref.Pos(), ref.Name)
	}
	if tbl.Mode != catalog.ModeVersioned {
		return nil, sqlerr.New(sqlerr.CodeFeatureNotSupported, "table %s is an %s table and keeps no history: versions() needs MODE VERSIONED", tbl.Name, tbl.Mode).WithPos(ref.Pos()).WithToken(ref.Name)
	}
	a := inh
	if f.AsOf != nil {
		var err error
		if a, err = b.resolveAsOf(f.AsOf); err != nil {
			return nil, err
		}
	}
	alias, cols := aliasOf(f.Alias, "versions")
	n := &Versions{Table: tbl, Alias: alias}
	if a != nil {
		if err := b.checkHorizon(tbl, a); err != nil {
			return nil, err
		}
		n.AsOf = a.commit
	}
	r := &rel{name: alias, b: b}
	colOf := map[catalog.ColumnID]ColRef{}
	for _, c := range tbl.Columns {
		ref := b.newCol(c.Name, c.Type)
		n.Cols = append(n.Cols, ref)
		n.ColIDs = append(n.ColIDs, c.ID)
		colOf[c.ID] = ref
	}
	extraTypes := []types.Type{types.Of(types.String), types.Of(types.Uint64), types.Of(types.String), types.Of(types.Uint64), types.Of(types.String)}
	for i, name := range storage.VersionsCols {
		n.Extra = append(n.Extra, b.newCol(name, extraTypes[i]))
	}
	// SELECT * order: key, _group, _commit, other columns, _state,
	// _superseded_by, _reason.
	for _, id := range tbl.Key {
		c := colOf[id]
		r.cols = append(r.cols, relCol{name: c.Name, ref: c})
	}
	r.cols = append(r.cols, relCol{name: "_group", ref: n.Extra[0]}, relCol{name: "_commit", ref: n.Extra[1]})
	for _, c := range tbl.Columns {
		if !tbl.IsKey(c.ID) {
			r.cols = append(r.cols, relCol{name: c.Name, ref: colOf[c.ID]})
		}
	}
	r.cols = append(r.cols, relCol{name: "_state", ref: n.Extra[2]}, relCol{name: "_superseded_by", ref: n.Extra[3]}, relCol{name: "_reason", ref: n.Extra[4]})
	if err := renameCols(r, cols, f.Pos()); err != nil {
		return nil, err
	}
	return n, b.addRel(sc, r, f.Pos())
}

// resolveAsOf evaluates an AS OF operand once, at plan time (R6.3, R6.7).
func (b *binder) resolveAsOf(a *ast.AsOf) (*asOf, error) {
	pos := a.Expr.Pos()
	v, err := b.evalConst(a.Expr)
	if err != nil {
		return nil, err
	}
	newest := b.env.Source.Commit()
	if b.env.Describing && v.IsNull() && hasParam(a.Expr) {
		// Described before its Bind: the commit read changes no column.
		return &asOf{commit: newest, pos: pos}, nil
	}
	if a.Kind == ast.AsOfTimestamp {
		if v.IsNull() {
			return nil, sqlerr.New(sqlerr.CodeInvalidParameter, "AS OF TIMESTAMP must be a timestamp, got NULL").WithPos(pos)
		}
		if v.Kind() == types.String {
			if v, err = types.ParseText(types.Type{Kind: types.DateTime64, Precision: 6}, v.Str()); err != nil {
				return nil, sqlerr.New(sqlerr.CodeInvalidDatetime, "AS OF TIMESTAMP: %v", err).WithPos(pos)
			}
		}
		if v.Kind() != types.DateTime64 && v.Kind() != types.Date {
			return nil, sqlerr.New(sqlerr.CodeDatatypeMismatch, "AS OF TIMESTAMP must be a timestamp, got %s", v.Type()).WithPos(pos)
		}
		c, ok := b.env.Source.CommitAt(v.Time())
		if !ok {
			return nil, sqlerr.New(sqlerr.CodeInvalidParameter, "AS OF TIMESTAMP %s is before the first commit", v).WithPos(pos)
		}
		return &asOf{commit: c, pos: pos}, nil
	}
	if v.Kind() == types.String {
		// A quoted literal or a parameter sent as text takes the type of
		// its context, as in PostgreSQL: '42' is commit 42.
		if n, err := types.ParseText(types.Of(types.Int64), strings.TrimSpace(v.Str())); err == nil {
			v = n
		}
	}
	if v.IsNull() || !v.Kind().IsInteger() {
		what := "NULL"
		if !v.IsNull() {
			what = fmt.Sprintf("%s %s", strings.ToLower(v.Type().String()), v)
			if v.Kind() == types.String {
				what = fmt.Sprintf("the string '%s'", v.Str())
			}
		}
		return nil, sqlerr.New(sqlerr.CodeInvalidParameter, "AS OF COMMIT must be a positive integer, got %s", what).WithPos(pos)
	}
	if types.Compare(v, types.NewInt64(0)) <= 0 {
		return nil, sqlerr.New(sqlerr.CodeInvalidParameter, "AS OF COMMIT must be a positive integer, got %s", v).WithPos(pos)
	}
	if types.Compare(v, types.NewUint64(newest)) > 0 {
		return nil, sqlerr.New(sqlerr.CodeInvalidParameter, "commit %s is later than the newest commit %d", v, newest).WithPos(pos)
	}
	c, _ := types.Cast(v, types.Of(types.Uint64))
	return &asOf{commit: c.Uint64(), pos: pos}, nil
}

// hasParam reports whether e holds a bind parameter.
func hasParam(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if _, ok := n.(*ast.Param); ok {
			found = true
		}
		return !found
	})
	return found
}

// evalConst binds e without columns and computes it.
func (b *binder) evalConst(e ast.Expr) (types.Value, error) {
	ctes, err := b.withDefs(b.env.With, nil, nil, nil, b.env.With, e)
	if err != nil {
		return types.Value{}, err
	}
	x, err := b.expr(&scope{ctes: ctes}, e)
	if err != nil {
		return types.Value{}, err
	}
	x = fold(x)
	if k, ok := x.(*expr.Const); ok {
		return k.V, nil
	}
	if executor == nil {
		return types.Value{}, sqlerr.NotSupported(e.Pos(), "expression needs the executor")
	}
	c := expr.NewCtx(b.ctx, executor(b.ctx, b.env), nil)
	one := &types.Batch{Rows: 1}
	v, err := x.Eval(c, one)
	if err != nil {
		return types.Value{}, err
	}
	return v.Get(0), nil
}
