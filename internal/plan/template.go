package plan

import (
	"bytes"
	"slices"
	"strings"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/token"
	"github.com/strata-db/strata/internal/storage"
	"github.com/strata-db/strata/internal/types"
)

// A Template is the plan of a point SELECT with parameters, kept so that
// running the statement again with new values skips binding and
// optimizing: the statement is
//
//	SELECT col, … | * FROM t [AS OF COMMIT $n | AS OF COMMIT <number>]
//	WHERE k1 = $i[::T] AND k2 = $j[::T] …  -- every key column once,
//	                                        -- or a number or string literal
//
// where an output col may also be cast (col::T, CAST(col AS T)), and its
// plan is a Project over a Scan with a Key; or the versions of one
// key,
//
//	SELECT col, … | * FROM versions(t) WHERE k1 = $i[::T] AND …
//
// (no AS OF), a Project over a Versions with the key's one-key range.
// Build's plan for the
// first values is the template; Plan swaps in the key and AS OF of new
// values; when the Project only picks columns, Plan returns the Scan
// alone, reading just those columns (pointScan), and otherwise the Project
// over a Scan of the columns it uses (narrowScan). Plan gives up (false)
// whenever the new values would not take
// the path the template was built on: another catalog, a NULL, a cast
// that fails, a value that is not exactly of the key column's type, an
// AS OF commit that Build would reject. The caller then runs Build, so
// every error and every unusual case keeps Build's behaviour; the
// template serves only the common case, and NewTemplate checks on the
// first values that its derivation agrees with Build's.
type Template struct {
	cat *catalog.Catalog
	// root is Build's Project; its expressions are shared by every plan
	// the template gives (exec resolves their column indexes in place on
	// each run), so plans from one template must not run at once: a
	// session runs one statement at a time.
	root *Project
	// scan is the Scan Plan runs under root when point is nil: Build's,
	// narrowed to the columns root uses, without its filter (narrowScan).
	scan *Scan
	// vers is the Versions node of a versions(t) template (scan nil).
	vers *Versions
	keys []keyParam // in key order
	asOf int        // parameter index (0-based) of AS OF COMMIT, -1 when none
	// asOfFixed is the commit of AS OF COMMIT <number>, 0 when none.
	asOfFixed uint64
	cols      []Column
	// point, when set, is the Scan a Plan runs alone: scan with only the
	// projected columns, in the projection's order, so the lookup reads
	// and hands on nothing else and no Project runs (pointScan).
	point *Scan
}

// keyParam is how one key column's value comes from the parameters.
type keyParam struct {
	param   int         // 0-based; -1 for a literal, whose value is fixed
	fixed   types.Value // the literal's key value, when param < 0
	cast    types.Type  // the written ::T, when hasCast
	hasCast bool
	typ     types.Type // the key column's type
}

// NewTemplate returns the template of stmt, planned as p against env, or
// nil when stmt is not a point SELECT of the template's shape.
func NewTemplate(stmt ast.Stmt, env *Env, p *Plan) *Template {
	sel, ok := stmt.(*ast.SelectStmt)
	if !ok || p.Explain || p.Outer != 0 || sel.With != nil || sel.OrderBy != nil || sel.Limit != nil || sel.Offset != nil {
		return nil
	}
	blk, ok := sel.Body.(*ast.SelectBlock)
	if !ok || blk.Distinct || blk.GroupBy != nil || blk.Having != nil || len(blk.From) != 1 || blk.Where == nil {
		return nil
	}
	var ref *ast.TableRef
	switch f := blk.From[0].(type) {
	case *ast.TableRef:
		ref = f
	case *ast.TableFunc:
		// versions(t) without AS OF (its rows do not depend on one).
		if f.AsOf != nil || sel.AsOf != nil || f.Name.Schema != "" || f.Name.Name != "versions" {
			return nil
		}
		ref = &ast.TableRef{}
	default:
		return nil
	}
	// Only columns are output, plain or cast (col::T, CAST(col AS T), as
	// clients write to read a value as text): another expression could hold
	// values folded at bind time (parameters, now(), last_commit()).
	for _, it := range blk.Items {
		if _, ok := it.Expr.(*ast.StarExpr); !ok && !castColumn(it.Expr) {
			return nil
		}
	}
	t := &Template{cat: env.Source.Catalog(), asOf: -1}
	asOf := sel.AsOf
	if ref.AsOf != nil {
		if asOf != nil {
			return nil
		}
		asOf = ref.AsOf
	}
	if asOf != nil {
		if asOf.Kind != ast.AsOfCommit {
			return nil
		}
		switch x := asOf.Expr.(type) {
		case *ast.Param:
			t.asOf = x.Index - 1
		case *ast.NumberLit:
			// Build's commit, checked again for every snapshot.
			if pr, ok := p.Root.(*Project); ok {
				if sc, ok := pr.In.(*Scan); ok && sc.AsOf > 0 {
					t.asOfFixed = sc.AsOf
				}
			}
			if t.asOfFixed == 0 {
				return nil
			}
		default:
			return nil
		}
	}
	var conds []ast.Expr
	if !whereConjuncts(blk.Where, &conds) {
		return nil
	}
	proj, ok := p.Root.(*Project)
	if !ok {
		return nil
	}
	for _, e := range proj.Exprs {
		if baseColumn(e) == nil {
			return nil
		}
	}
	var (
		tbl    *catalog.Table
		cols   []ColRef
		ids    []catalog.ColumnID
		filter expr.Expr
		bkey   []types.Value
	)
	scan, _ := proj.In.(*Scan)
	vers, _ := proj.In.(*Versions)
	switch _, fn := blk.From[0].(*ast.TableFunc); {
	case scan != nil && !fn:
		tbl, cols, ids, filter, bkey = scan.Table, scan.Cols, scan.ColIDs, scan.Filter, scan.Key
	case vers != nil && fn && vers.AsOf == 0 && len(vers.Ranges) == 1:
		tbl, cols, ids, filter = vers.Table, vers.Cols, vers.ColIDs, vers.Filter
		bkey, _, _ = rangesOf(tbl, cols, ids, filter)
	default:
		return nil
	}
	if bkey == nil || tbl == nil || len(bkey) != len(tbl.Key) {
		return nil
	}
	bound := conjuncts(filter)
	if len(bound) != len(conds) || len(conds) != len(bkey) {
		return nil
	}
	t.keys = make([]keyParam, len(bkey))
	seen := make([]bool, len(bkey))
	for i, c := range conds {
		b := c.(*ast.BinaryExpr)
		colRef, val := b.L, b.R
		if _, ok := colRef.(*ast.ColumnRef); !ok {
			colRef, val = val, colRef
		}
		name := colRef.(*ast.ColumnRef).Name
		kp, ok := paramOf(val)
		if !ok {
			return nil
		}
		// The bound conjunct i is the written one (the binder keeps
		// their order): a key column compared with a constant.
		k := boundKey(tbl, cols, ids, bound[i], name)
		if k < 0 || seen[k] {
			return nil
		}
		seen[k] = true
		col, ok := tbl.AnyColumn(tbl.Key[k])
		if !ok || !templateKind(col.Type.Kind) {
			return nil
		}
		kp.typ = col.Type
		if kp.param < 0 {
			kp.fixed = bkey[k]
		}
		t.keys[k] = kp
	}
	t.root, t.scan, t.vers, t.cols = proj, scan, vers, p.cols
	if scan != nil {
		if t.point = pointScan(proj, scan); t.point == nil {
			t.scan = narrowScan(proj, scan)
		}
	}
	// The derivation must give, on the values Build saw, what Build gave.
	key, asOfCommit, ok := t.values(env)
	if !ok {
		return nil
	}
	for k, v := range key {
		if v.Type() != bkey[k].Type() || types.Compare(v, bkey[k]) != 0 {
			return nil
		}
	}
	if scan != nil {
		if asOfCommit != scan.AsOf {
			return nil
		}
	} else if r := oneKeyRange(vers.Table, key); asOfCommit != 0 || !bytes.Equal(r.Lo, vers.Ranges[0].Lo) || !bytes.Equal(r.Hi, vers.Ranges[0].Hi) {
		return nil
	}
	return t
}

// pointScan returns scan reading exactly the columns proj outputs, in
// its order, or nil when proj is more than a choice of scan's columns
// (an expression, a column twice, _commit before another column). The
// template drops the scan's filter (Plan), so the key columns it read for
// the filter need not be read at all.
func pointScan(proj *Project, scan *Scan) *Scan {
	out := *scan
	out.Filter = nil // as Plan drops it below
	out.Cols, out.ColIDs, out.Commit = make([]ColRef, 0, len(proj.Exprs)), make([]catalog.ColumnID, 0, len(proj.Exprs)), false
	for i, e := range proj.Exprs {
		c, ok := e.(*expr.Col)
		if !ok {
			return nil
		}
		if scan.Commit && c.ID == scan.CommitCol.ID {
			if i != len(proj.Exprs)-1 {
				return nil
			}
			out.Commit = true
			continue
		}
		j := -1
		for k, sc := range scan.Cols {
			if sc.ID == c.ID {
				j = k
				break
			}
		}
		if j < 0 || slices.ContainsFunc(out.Cols, func(o ColRef) bool { return o.ID == c.ID }) {
			return nil
		}
		out.Cols, out.ColIDs = append(out.Cols, scan.Cols[j]), append(out.ColIDs, scan.ColIDs[j])
	}
	return &out
}

// castColumn reports whether e is a column, or a column cast to a type
// any number of times: what a template's Project may output.
func castColumn(e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.ColumnRef:
		return true
	case *ast.CastExpr:
		return castColumn(x.X)
	case *ast.ParenExpr:
		return castColumn(x.X)
	}
	return false
}

// narrowScan returns scan reading only the columns proj's outputs use
// (each a column or a cast of one: NewTemplate checked baseColumn), in scan's order,
// and no filter, as Plan runs it: the key columns the filter read need not
// be read or handed on.
func narrowScan(proj *Project, scan *Scan) *Scan {
	used := func(id int) bool {
		return slices.ContainsFunc(proj.Exprs, func(e expr.Expr) bool { return baseColumn(e).ID == id })
	}
	out := *scan
	out.Filter = nil
	out.Cols, out.ColIDs = nil, nil
	for i, c := range scan.Cols {
		if used(c.ID) {
			out.Cols, out.ColIDs = append(out.Cols, c), append(out.ColIDs, scan.ColIDs[i])
		}
	}
	out.Commit = scan.Commit && used(scan.CommitCol.ID)
	return &out
}

// baseColumn is the column under e's casts, nil when e is not a column
// cast any number of times: castColumn on the bound expression, which
// checks that binding and optimizing left each output a column read per
// row, nothing folded to a constant of the first values.
func baseColumn(e expr.Expr) *expr.Col {
	for {
		switch x := e.(type) {
		case *expr.Col:
			return x
		case *expr.Cast:
			e = x.X
		default:
			return nil
		}
	}
}

// whereConjuncts appends the AND-ed comparisons of e, each a column
// equal to something else, and reports whether e is only that (paramOf
// then says whether each something is a parameter or a literal).
func whereConjuncts(e ast.Expr, out *[]ast.Expr) bool {
	b, ok := e.(*ast.BinaryExpr)
	if !ok {
		return false
	}
	if b.Op == token.AND {
		return whereConjuncts(b.L, out) && whereConjuncts(b.R, out)
	}
	if b.Op != token.EQ {
		return false
	}
	_, lc := b.L.(*ast.ColumnRef)
	_, rc := b.R.(*ast.ColumnRef)
	if lc == rc {
		return false
	}
	*out = append(*out, e)
	return true
}

// paramOf reads $i or $i::T, or a literal (param -1) whose key value
// Build decides once.
func paramOf(e ast.Expr) (keyParam, bool) {
	switch x := e.(type) {
	case *ast.NumberLit, *ast.StringLit:
		return keyParam{param: -1}, true
	case *ast.Param:
		return keyParam{param: x.Index - 1}, x.Index >= 1
	case *ast.CastExpr:
		prm, ok := x.X.(*ast.Param)
		if !ok || prm.Index < 1 {
			return keyParam{}, false
		}
		t, err := typeOf(x.Type)
		if err != nil {
			return keyParam{}, false
		}
		return keyParam{param: prm.Index - 1, cast: t, hasCast: true}, true
	}
	return keyParam{}, false
}

// boundKey returns the key position of the column that bound conjunct c
// compares with a constant, or -1 when c is not that or the column is not
// the one named.
func boundKey(tbl *catalog.Table, cols []ColRef, ids []catalog.ColumnID, c expr.Expr, name string) int {
	cmp, ok := c.(*expr.Cmp)
	if !ok || cmp.Op != expr.EQ {
		return -1
	}
	col, ok := cmp.L.(*expr.Col)
	if _, k := cmp.R.(*expr.Const); !ok || !k {
		col, ok = cmp.R.(*expr.Col)
		if _, k := cmp.L.(*expr.Const); !ok || !k {
			return -1
		}
	}
	for i, sc := range cols {
		if sc.ID != col.ID {
			continue
		}
		c, ok := tbl.AnyColumn(ids[i])
		if !ok || !strings.EqualFold(c.Name, name) {
			return -1
		}
		for k, id := range tbl.Key {
			if id == ids[i] {
				return k
			}
		}
	}
	return -1
}

// templateKind reports the key column kinds a template serves: those whose
// equal values have equal bytes, so that the row a lookup finds is one the
// filter keeps.
func templateKind(k types.Kind) bool {
	return k.IsInteger() || k == types.String || k == types.Bytes
}

// values derives the key and the AS OF commit (0: none) from env's
// parameters, or reports false where Build must decide.
func (t *Template) values(env *Env) ([]types.Value, uint64, bool) {
	if env.Source.Catalog() != t.cat {
		return nil, 0, false
	}
	key := make([]types.Value, len(t.keys))
	for k, kp := range t.keys {
		if kp.param < 0 {
			key[k] = kp.fixed
			continue
		}
		if kp.param >= len(env.Params) {
			return nil, 0, false
		}
		v := env.Params[kp.param]
		if v.IsNull() {
			return nil, 0, false
		}
		if kp.hasCast && v.Type() != kp.cast {
			// What expr.Cast does to the constant when the binder folds it.
			c, err := types.Cast(v, kp.cast)
			if err != nil {
				return nil, 0, false
			}
			v = c
		} else if v.Kind() == types.String && kp.typ.Kind != types.String {
			// A text parameter (the wire's text format sends every
			// value as one) compared with the key column: the binder
			// adapts it to the column's type (adaptValue), and where it
			// cannot, Build says why.
			a, ok := adaptValue(v, kp.typ)
			if !ok {
				return nil, 0, false
			}
			v = a
		}
		if v.Type() != kp.typ {
			return nil, 0, false
		}
		key[k] = v
	}
	commit := t.asOfFixed
	if commit > env.Source.Commit() {
		return nil, 0, false // Build says the commit is later than the newest
	}
	if t.asOf >= 0 {
		if t.asOf >= len(env.Params) {
			return nil, 0, false
		}
		v := env.Params[t.asOf]
		if v.IsNull() || !v.Kind().IsInteger() || types.Compare(v, types.NewInt64(0)) <= 0 ||
			types.Compare(v, types.NewUint64(env.Source.Commit())) > 0 {
			return nil, 0, false
		}
		c, err := types.Cast(v, types.Of(types.Uint64))
		if err != nil {
			return nil, 0, false
		}
		commit = c.Uint64()
	}
	if commit != 0 && t.scan != nil {
		if r := env.Source.Retention(t.scan.Table.ID); commit < r.Horizon {
			return nil, 0, false // Build says the commit is past the retention horizon
		}
	}
	return key, commit, true
}

// Plan returns the plan of the template's statement for env's parameters,
// or false when Build must plan it.
func (t *Template) Plan(env *Env) (*Plan, bool) {
	key, commit, ok := t.values(env)
	if !ok {
		return nil, false
	}
	root := *t.root
	if t.vers != nil {
		// As for a Scan below: the range holds only the key's versions,
		// which the filter's equalities all keep.
		v := *t.vers
		v.Ranges, v.Filter = []storage.KeyRange{oneKeyRange(v.Table, key)}, nil
		root.In = &v
		return &Plan{Root: &root, cols: t.cols}, true
	}
	if t.point != nil {
		// One allocation for the plan and its one node.
		pp := &struct {
			p Plan
			s Scan
		}{s: *t.point}
		pp.s.Key, pp.s.AsOf = key, commit
		pp.p = Plan{Root: &pp.s, cols: t.cols}
		return &pp.p, true
	}
	scan := *t.scan
	scan.Key, scan.AsOf = key, commit
	// The filter is exactly the key's equalities (NewTemplate checked), so
	// it holds for the one row the lookup can return: equal values of
	// these kinds have equal keys. Dropping it spares rebuilding it with
	// the new constants.
	scan.Filter = nil
	root.In = &scan
	return &Plan{Root: &root, cols: t.cols}, true
}
