package session

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/plan"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/parser"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// A transformation (SPEC §12) is compiled from its stored query into one of
// two forms, both run by the runner (transform_run.go) over the rows its
// sources gained since its checkpoint:
//
//   - a row query (filters, projections, UNION ALL): the query itself, its
//     every output row an upsert into the target;
//   - an aggregate (the outermost block has GROUP BY or aggregates): a
//     partial query with the same FROM, WHERE and GROUP BY whose items are
//     the non-aggregate outputs (the state's key) and, per aggregate, the
//     values that merge: count(…), sum(…), min(…), max(…), and sum(x) with
//     count(x) for avg(x). Merged into the state kept per key, they give
//     the changed groups' outputs.
//
// Anything a delta of new rows cannot maintain is refused when the
// transformation is created (docs/transformations.md lists it all):
// joins and FROM lists, subqueries, DISTINCT, HAVING, window functions,
// ORDER BY, LIMIT, WITH, VALUES, system tables, *, parameters, GROUPING
// SETS, aggregates below the outermost block, inside an expression or with
// DISTINCT or FILTER, set operations other than UNION ALL, GROUP BY keys
// that are not outputs, and an aggregate's target not keyed by exactly its
// GROUP BY outputs (checkGroupKey, checkAggTarget, checkPlanNodes).

// outKind is what an output column of a transformation is.
type outKind uint8

const (
	outKey outKind = iota // a non-aggregate output: part of the state's key
	outCount
	outSum
	outMin
	outMax
	outAvg
)

// outCol is one output column of a compiled transformation.
type outCol struct {
	kind outKind
	// part is the column of the partial query it is read from; an avg's
	// sum is at part and its count at part+1.
	part int
	name string
	typ  types.Type
	// constant marks a non-aggregate output that is a literal: the same
	// in every group, it may go to a column outside the target's key.
	constant bool
}

// compiled is a transformation's query, ready for the runner.
type compiled struct {
	// delta is the query run over the sources' new rows: the stored query
	// for a row query, the partial query for an aggregate.
	delta *ast.SelectStmt
	agg   bool
	outs  []outCol
	// keys are the partial query's columns that make a group's key.
	keys []int
	// partTypes are the partial query's column types: a compile against
	// a later catalog that changes them (ALTER COLUMN … TYPE of a source
	// column) rebuilds the state, whose values have the old ones.
	partTypes []types.Type
	// reads are the source columns the query names: what the catalog
	// keeps from being renamed or dropped.
	reads []catalog.ColumnRef
	// target and listed are the table written and the column each output
	// goes to (by name); group is the attribute group, nil for an append
	// target.
	target *catalog.Table
	listed []*catalog.Column
	group  *catalog.Group
}

// aggFn returns the kind of a supported aggregate call, or false.
func aggFn(f *ast.FuncCall) (outKind, bool) {
	if f.Schema != "" && f.Schema != "pg_catalog" {
		return 0, false
	}
	switch f.Name {
	case "count":
		return outCount, true
	case "sum":
		return outSum, true
	case "min":
		return outMin, true
	case "max":
		return outMax, true
	case "avg":
		return outAvg, true
	}
	return 0, false
}

// notMaintainable is the error for a construct a transformation cannot keep
// up to date from new rows alone.
func notMaintainable(pos int, what string) error {
	return sqlerr.NotSupported(pos, "a transformation's query cannot use %s: it is maintained from each commit's new source rows "+
		"(filters, projections, UNION ALL, and an outermost GROUP BY with count, sum, min, max, avg)", what).
		WithHint("compute it in a view over the transformation's target instead")
}

// checkTransformQuery refuses what compileTransform cannot maintain.
func checkTransformQuery(q *ast.SelectStmt, outer bool) error {
	switch {
	case q.With != nil:
		return notMaintainable(q.With.Pos(), "WITH")
	case len(q.OrderBy) > 0:
		return notMaintainable(q.OrderBy[0].Pos(), "ORDER BY")
	case q.Limit != nil:
		return notMaintainable(q.Limit.Pos(), "LIMIT")
	case q.Offset != nil:
		return notMaintainable(q.Offset.Pos(), "OFFSET")
	case q.AsOf != nil:
		return notMaintainable(q.AsOf.Pos(), "AS OF")
	}
	return checkTransformBody(q.Body, outer)
}

func checkTransformBody(b ast.QueryBody, outer bool) error {
	switch x := b.(type) {
	case *ast.ParenSelect:
		return checkTransformQuery(x.Select, outer)
	case *ast.SetOp:
		if x.Op != ast.Union || !x.All {
			return notMaintainable(x.Pos(), "set operations other than UNION ALL")
		}
		if err := checkTransformBody(x.Left, false); err != nil {
			return err
		}
		return checkTransformBody(x.Right, false)
	case *ast.SelectBlock:
		return checkTransformBlock(x, outer)
	}
	return notMaintainable(b.Pos(), "VALUES")
}

func checkTransformBlock(x *ast.SelectBlock, outer bool) error {
	switch {
	case x.Distinct:
		return notMaintainable(x.Pos(), "DISTINCT")
	case x.Having != nil:
		return notMaintainable(x.Having.Pos(), "HAVING")
	case len(x.Windows) > 0:
		return notMaintainable(x.Windows[0].Pos(), "WINDOW")
	case len(x.From) == 0:
		return notMaintainable(x.Pos(), "a SELECT without FROM")
	case len(x.From) > 1:
		return notMaintainable(x.From[1].Pos(), "a join (a FROM list of several tables)")
	case !outer && len(x.GroupBy) > 0:
		return notMaintainable(x.GroupBy[0].Pos(), "GROUP BY below the outermost query")
	}
	for _, it := range x.Items {
		if st, ok := it.Expr.(*ast.StarExpr); ok {
			return notMaintainable(st.Pos(), "* (name the columns: what * means changes with ALTER TABLE … ADD COLUMN)")
		}
	}
	for _, g := range x.GroupBy {
		if gs, ok := g.(*ast.GroupingSet); ok {
			return notMaintainable(gs.Pos(), "GROUPING SETS, ROLLUP or CUBE")
		}
	}
	for _, f := range x.From {
		if err := checkTransformFrom(f); err != nil {
			return err
		}
	}
	var exprs []ast.Expr
	for _, it := range x.Items {
		exprs = append(exprs, it.Expr)
	}
	exprs = append(append(exprs, x.Where), x.GroupBy...)
	for i, e := range exprs {
		// Items may hold one aggregate each, at their top, in the
		// outermost block; nothing else may.
		top := outer && i < len(x.Items)
		if err := checkTransformExpr(e, top); err != nil {
			return err
		}
	}
	return nil
}

func checkTransformFrom(f ast.TableExpr) error {
	switch x := f.(type) {
	case *ast.TableRef:
		if x.AsOf != nil {
			return notMaintainable(x.AsOf.Pos(), "AS OF")
		}
		return nil
	case *ast.DerivedTable:
		if x.Lateral {
			return notMaintainable(x.Pos(), "LATERAL")
		}
		return checkTransformQuery(x.Query, false)
	case *ast.ParenTable:
		return checkTransformFrom(x.Inner)
	case *ast.JoinExpr:
		return notMaintainable(x.Pos(), "JOIN")
	}
	return notMaintainable(f.Pos(), "a table function")
}

// checkTransformExpr refuses subqueries, window functions and aggregates in
// e; with top, e itself may be one supported aggregate call.
func checkTransformExpr(e ast.Expr, top bool) error {
	if e == nil {
		return nil
	}
	if f, ok := e.(*ast.FuncCall); ok && top && f.Over == nil {
		if _, ok := aggFn(f); ok {
			switch {
			case f.Distinct:
				return notMaintainable(f.Pos(), f.Name+"(DISTINCT …)")
			case f.Filter != nil:
				return notMaintainable(f.Filter.Pos(), "FILTER")
			case len(f.OrderBy) > 0:
				return notMaintainable(f.OrderBy[0].Pos(), "ORDER BY in an aggregate")
			}
			for _, a := range f.Args {
				if err := checkTransformExpr(a, false); err != nil {
					return err
				}
			}
			return nil
		}
	}
	var err error
	ast.Inspect(e, func(n ast.Node) bool {
		if err != nil {
			return false
		}
		switch x := n.(type) {
		case *ast.SelectStmt:
			err = notMaintainable(x.Pos(), "a subquery")
		case *ast.SubqueryExpr:
			err = notMaintainable(x.Pos(), "a subquery")
		case *ast.ExistsExpr:
			err = notMaintainable(x.Pos(), "EXISTS")
		case *ast.Param:
			// The stored query runs with no parameters (PostgreSQL's
			// CREATE VIEW refuses them too).
			err = notMaintainable(x.Pos(), fmt.Sprintf("parameter $%d", x.Index))
		case *ast.FuncCall:
			if x.Over != nil {
				err = notMaintainable(x.Pos(), "a window function")
			} else if plan.IsAggregate(x.Name) {
				err = notMaintainable(x.Pos(), fmt.Sprintf("%s() here (an aggregate must be a whole output column of the outermost query, one of count, sum, min, max, avg; "+
					"no cast is needed around it: outputs take the target column's type when written)", x.Name))
			}
		}
		return err == nil
	})
	return err
}

// unparen returns the query q's parentheses hold, if that is all q is:
// (SELECT … GROUP BY …) is the aggregate inside. checkTransformQuery has
// refused ORDER BY, LIMIT and WITH at every level.
func unparen(q *ast.SelectStmt) *ast.SelectStmt {
	for {
		p, ok := q.Body.(*ast.ParenSelect)
		if !ok {
			return q
		}
		q = p.Select
	}
}

// isAggQuery reports whether q's outermost block aggregates.
func isAggQuery(q *ast.SelectStmt) (*ast.SelectBlock, bool) {
	b, ok := q.Body.(*ast.SelectBlock)
	if !ok {
		return nil, false
	}
	if len(b.GroupBy) > 0 {
		return b, true
	}
	for _, it := range b.Items {
		if f, ok := it.Expr.(*ast.FuncCall); ok && f.Over == nil {
			if _, ok := aggFn(f); ok {
				return b, true
			}
		}
	}
	return b, false
}

// compileTransform parses a stored transformation query and compiles it
// for the runner against env's catalog (compileQuery).
func compileTransform(text string, target *catalog.Table, group *catalog.Group, env *plan.Env) (*compiled, error) {
	stmt, err := parser.Parse(text)
	if err != nil {
		return nil, err
	}
	q, ok := stmt.(*ast.SelectStmt)
	if !ok {
		return nil, fmt.Errorf("session: stored transformation query is not a SELECT: %s", text)
	}
	c, _, err := compileQuery(q, target, group, env)
	return c, err
}

// compileQuery compiles q for target (group, nil for an append target),
// binding it on env, and returns what it reads too.
func compileQuery(q *ast.SelectStmt, target *catalog.Table, group *catalog.Group, env *plan.Env) (*compiled, plan.Deps, error) {
	c, deps, err := compileQueryDeps(q, target, group, env)
	if err != nil {
		return nil, deps, err
	}
	// What the writes will check, checked now: the key given, each column
	// in the group written.
	if _, err := newWriter(target, c.listed, group, 0, q.Pos(), staticDefaults); err != nil {
		return nil, deps, err
	}
	return c, deps, nil
}

// compileQueryDeps is compileQuery without the writer's check: the shape
// checks, the binding, the output columns matched to target's, and for an
// aggregate the partial query.
func compileQueryDeps(q *ast.SelectStmt, target *catalog.Table, group *catalog.Group, env *plan.Env) (*compiled, plan.Deps, error) {
	if err := checkTransformQuery(q, true); err != nil {
		return nil, plan.Deps{}, err
	}
	p, deps, err := plan.BuildView(q, env)
	if err != nil {
		return nil, deps, err
	}
	if len(deps.Views) > 0 {
		return nil, deps, sqlerr.NotSupported(q.Pos(), "a transformation reads tables, not views (%s)", strings.Join(deps.Views, ", "))
	}
	c := &compiled{delta: q, target: target, group: group}
	cols := p.Columns()
	seen := map[string]bool{}
	for _, col := range cols {
		tc, ok := target.Column(col.Name)
		if !ok {
			return nil, deps, sqlerr.New(sqlerr.CodeUndefinedColumn, "output column %s of the transformation's query is not a column of table %s", col.Name, target.Name).
				WithPos(q.Pos()).WithHint("name each output column after a column of %s with AS", target.Name)
		}
		if seen[col.Name] {
			return nil, deps, sqlerr.New(sqlerr.CodeDuplicateColumn, "the transformation's query writes column %s twice", col.Name).WithPos(q.Pos())
		}
		seen[col.Name] = true
		c.listed = append(c.listed, tc)
		c.outs = append(c.outs, outCol{name: col.Name, typ: col.Type})
	}
	if err := checkPlanNodes(p.Root, q.Pos()); err != nil {
		return nil, deps, err
	}
	c.reads = astReads(q, deps.Tables)
	block, agg := isAggQuery(unparen(q))
	if !agg {
		return c, deps, nil
	}
	c.agg = true
	// The names the block's FROM gives: a GROUP BY name is one of them
	// before it is an output alias, as in PostgreSQL.
	inQ := &ast.SelectStmt{Body: &ast.SelectBlock{Items: []*ast.SelectItem{{Expr: &ast.StarExpr{}}}, From: block.From}}
	ip, err := plan.Build(inQ, env)
	if err != nil {
		return nil, deps, err
	}
	inputs := map[string]bool{}
	for _, col := range ip.Columns() {
		inputs[col.Name] = true
	}
	if err := checkGroupKey(block, inputs); err != nil {
		return nil, deps, err
	}
	// The partial query: the same block, its items the keys and the
	// mergeable parts of each aggregate, its GROUP BY positions written
	// out (the items move: avg takes two).
	pb := *block
	pb.Items = nil
	for i, it := range block.Items {
		f, isCall := it.Expr.(*ast.FuncCall)
		kind, isAgg := outKey, false
		if isCall && f.Over == nil {
			kind, isAgg = aggFn(f)
		}
		c.outs[i].part = len(pb.Items)
		if !isAgg {
			c.keys = append(c.keys, len(pb.Items))
			c.outs[i].constant = constantExpr(it.Expr)
			pb.Items = append(pb.Items, it)
			continue
		}
		c.outs[i].kind = kind
		if kind == outAvg {
			sum := *f
			sum.Name = "sum"
			cnt := *f
			cnt.Name = "count"
			pb.Items = append(pb.Items, &ast.SelectItem{Span: it.Span, Expr: &sum}, &ast.SelectItem{Span: it.Span, Expr: &cnt})
			continue
		}
		pb.Items = append(pb.Items, &ast.SelectItem{Span: it.Span, Expr: it.Expr})
	}
	// GROUP BY positions name the same items at their new places.
	pb.GroupBy = nil
	for _, g := range block.GroupBy {
		if n, ok := g.(*ast.NumberLit); ok {
			part := c.outs[groupItem(n, block.Items, inputs)].part
			g = &ast.NumberLit{Span: n.Span, Text: strconv.Itoa(part + 1)}
		}
		pb.GroupBy = append(pb.GroupBy, g)
	}
	if err := checkAggTarget(c, target, q.Pos()); err != nil {
		return nil, deps, err
	}
	pq := *unparen(q)
	pq.Body = &pb
	c.delta = &pq
	// Planned now, so that what the runner will run fails here if at all,
	// and its column types tell a later compile whether the state still
	// fits (transform_run.go).
	dp, err := plan.Build(&pq, env)
	if err != nil {
		return nil, deps, err
	}
	for _, col := range dp.Columns() {
		c.partTypes = append(c.partTypes, col.Type)
	}
	return c, deps, nil
}

// checkAggTarget requires an aggregate's target to hold one row per group:
// a keyed table whose key columns are exactly the non-aggregate outputs.
// Into an append table every step would append each changed group again;
// a key written by an aggregate would add a row per new value and keep
// the old; a key narrower than the groups would keep one of several
// groups' rows, whichever came last.
func checkAggTarget(c *compiled, target *catalog.Table, pos int) error {
	if !target.Keyed() {
		return notMaintainable(pos, fmt.Sprintf("GROUP BY into table %s, which is MODE APPEND (an aggregate's target keeps one row per group: give it a PRIMARY KEY of the GROUP BY outputs)", target.Name))
	}
	keys := map[catalog.ColumnID]bool{}
	for _, k := range target.KeyColumns() {
		keys[k.ID] = true
	}
	for i, o := range c.outs {
		isKey := keys[c.listed[i].ID]
		switch {
		case o.kind == outKey && !isKey && !o.constant:
			return notMaintainable(pos, fmt.Sprintf("GROUP BY output %s, which is not part of the primary key of %s (the target's key must be exactly the GROUP BY outputs)", o.name, target.Name))
		case o.kind != outKey && isKey:
			return notMaintainable(pos, fmt.Sprintf("an aggregate into %s, part of the primary key of %s (the target's key must be exactly the GROUP BY outputs)", o.name, target.Name))
		}
		delete(keys, c.listed[i].ID)
	}
	for _, k := range target.KeyColumns() {
		if keys[k.ID] {
			return notMaintainable(pos, fmt.Sprintf("an aggregate without primary key column %s of %s among its GROUP BY outputs (the target's key must be exactly the GROUP BY outputs)", k.Name, target.Name))
		}
	}
	return nil
}

// checkPlanNodes refuses a plan reading anything but tables through scans
// the runner can limit to new rows (setScans): a system table, a table
// function, VALUES, or an operator the shape check did not foresee.
func checkPlanNodes(n plan.Node, pos int) error {
	switch x := n.(type) {
	case *plan.Scan, *plan.Filter, *plan.Project, *plan.Aggregate:
	case *plan.SetOp:
		if x.Kind != plan.Union || !x.All {
			return notMaintainable(pos, "set operations other than UNION ALL")
		}
	case *plan.VirtualScan:
		return notMaintainable(pos, "a system table")
	default:
		return notMaintainable(pos, fmt.Sprintf("this query (it plans to %T)", n))
	}
	for _, in := range n.Inputs() {
		if err := checkPlanNodes(in, pos); err != nil {
			return err
		}
	}
	return nil
}

// astReads returns the columns of tables that q names anywhere: what the
// stored text needs to bind again. The query has no * and no join (USING,
// NATURAL), so every column it reads is named; the scans' own columns are
// not used, as the binder folds some references away (v + NULL is NULL)
// and a count(*) reads a column the query never names. A name is taken
// for every source that has it: more than read, never less.
func astReads(q *ast.SelectStmt, tables []*catalog.Table) []catalog.ColumnRef {
	names := map[string]bool{}
	ast.Inspect(q, func(n ast.Node) bool {
		if c, ok := n.(*ast.ColumnRef); ok {
			names[c.Name] = true
		}
		return true
	})
	var out []catalog.ColumnRef
	for _, t := range tables {
		for _, col := range t.Columns {
			if names[col.Name] {
				out = append(out, catalog.ColumnRef{Table: t.Name, Column: col.Name})
			}
		}
	}
	return out
}

// groupItem returns the index of the output item GROUP BY expression g
// names (by position, by its text, or by the item's alias when no input
// column has that name), -1 if none.
func groupItem(g ast.Expr, items []*ast.SelectItem, inputs map[string]bool) int {
	if n, ok := g.(*ast.NumberLit); ok {
		i, err := strconv.Atoi(n.Text)
		if err != nil || i < 1 || i > len(items) {
			return -1
		}
		return i - 1
	}
	text := ast.Format(g)
	for i, it := range items {
		if ast.Format(it.Expr) == text {
			return i
		}
	}
	if c, ok := g.(*ast.ColumnRef); ok && c.Table == "" && !inputs[c.Name] {
		for i, it := range items {
			if it.Alias != nil && it.Alias.Name == c.Name {
				return i
			}
		}
	}
	return -1
}

// checkGroupKey requires an aggregate's non-aggregate outputs to be its
// GROUP BY expressions, or constants: a group's state is kept by them
// (transform_run.go), so grouping by more than the outputs would merge
// groups the query keeps apart, and an output that is neither (now(),
// random()) would change a group's key from one step to the next.
func checkGroupKey(b *ast.SelectBlock, inputs map[string]bool) error {
	grouped := make([]bool, len(b.Items))
	for _, g := range b.GroupBy {
		i := groupItem(g, b.Items, inputs)
		if i < 0 {
			return notMaintainable(g.Pos(), fmt.Sprintf("GROUP BY %s, which is not an output column (a transformation keeps one row per output key; output it, or group by less)", ast.Format(g)))
		}
		grouped[i] = true
	}
	for i, it := range b.Items {
		if f, ok := it.Expr.(*ast.FuncCall); ok && f.Over == nil {
			if _, ok := aggFn(f); ok {
				continue
			}
		}
		if grouped[i] || constantExpr(it.Expr) {
			continue
		}
		return notMaintainable(it.Pos(), fmt.Sprintf("output %s, which is neither an aggregate nor a GROUP BY expression", ast.Format(it.Expr)))
	}
	return nil
}

// constantExpr reports whether e is a literal, or a cast of one.
func constantExpr(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.NumberLit, *ast.StringLit, *ast.BoolLit, *ast.NullLit, *ast.TypedLit:
		return true
	case *ast.CastExpr:
		return constantExpr(x.X)
	case *ast.UnaryExpr:
		return constantExpr(x.X)
	case *ast.ParenExpr:
		return constantExpr(x.X)
	}
	return false
}

// transformSpec checks CREATE TRANSFORMATION n against cat and returns the
// catalog's spec of it.
func (st *statement) transformSpec(n *ast.CreateTransformationStmt, cat *catalog.Catalog) (catalog.TransformationSpec, error) {
	spec := catalog.TransformationSpec{Name: n.Name.Name, Target: n.Target.Name, Select: ast.Format(n.Query)}
	if n.Group != nil {
		spec.Group = n.Group.Name
	}
	target, ok := cat.Table(n.Target.Name)
	if !ok {
		return spec, sqlerr.New(sqlerr.CodeUndefinedTable, "target table %s of transformation %s does not exist", n.Target.Name, n.Name.Name).WithPos(n.Target.Pos())
	}
	var group *catalog.Group
	if target.Keyed() {
		name := spec.Group
		if name == "" {
			name = catalog.DefaultGroupName
		}
		g, ok := target.Group(name)
		if !ok {
			pos := n.Target.Pos()
			if n.Group != nil {
				pos = n.Group.Pos()
			}
			return spec, sqlerr.New(sqlerr.CodeUndefinedObject, "table %s has no attribute group %s (target of transformation %s)", target.Name, name, n.Name.Name).WithPos(pos)
		}
		group = g
	}
	c, deps, err := compileQuery(n.Query, target, group, planEnv(st.env()))
	if err != nil {
		return spec, err
	}
	for _, t := range deps.Tables {
		spec.Sources = append(spec.Sources, t.Name)
	}
	spec.Reads = c.reads
	spec.Stateful = c.agg
	return spec, nil
}

// createTransformation is the DDL of CREATE TRANSFORMATION spec: run on
// the newest catalog, so that two transformations created at once cannot
// both pass the check that neither feeds the other's source.
func createTransformation(spec catalog.TransformationSpec, pos int) func(c *catalog.Catalog, commit uint64) error {
	return func(c *catalog.Catalog, commit uint64) error {
		if via := feedsBack(c, spec.Target, spec.Sources); via != "" {
			return sqlerr.New(catalog.CodeInvalidObjectDef, "transformation %s would feed its own source: %s", spec.Name, via).
				WithPos(pos).WithHint("transformations that write each other's sources would grow without end")
		}
		_, err := c.CreateTransformation(spec, commit)
		return err
	}
}

// feedsBack reports, as a path of table names, whether rows written to
// table target reach one of the tables sources through existing
// transformations; "" when they do not.
func feedsBack(cat *catalog.Catalog, targetName string, sources []string) string {
	t, ok := cat.Table(targetName)
	if !ok {
		return "" // CreateTransformation reports it
	}
	target := t.ID
	src := map[catalog.TableID]bool{}
	for _, name := range sources {
		if t, ok := cat.Table(name); ok {
			src[t.ID] = true
		}
	}
	name := func(id catalog.TableID) string {
		if t, ok := cat.TableByID(id); ok {
			return t.Name
		}
		return "?"
	}
	seen := map[catalog.TableID]bool{}
	var walk func(id catalog.TableID, path string) string
	walk = func(id catalog.TableID, path string) string {
		if seen[id] {
			return ""
		}
		seen[id] = true
		for _, x := range cat.Transformations() {
			if !slices.Contains(x.Sources, id) {
				continue
			}
			next := path + " → " + name(x.Target) + " (" + x.Name + ")"
			if src[x.Target] {
				return next
			}
			if p := walk(x.Target, next); p != "" {
				return p
			}
		}
		return ""
	}
	return walk(target, name(target))
}
