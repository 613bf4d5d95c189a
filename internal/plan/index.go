package plan

import (
	"fmt"
	"strings"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/types"
)

// IndexUse is the index a Scan or Versions reads through (R10.2): an
// equality or IN list of constants on the index's first column, Col,
// whose Values (non-NULL, of the column's type) storage probes for
// (storage.IndexProbe). The filter stays on the node and is re-checked
// on every row: the index only decides what is read.
type IndexUse struct {
	Index   *catalog.Index
	Col     catalog.ColumnID
	ColName string
	Values  []types.Value
}

// String is the EXPLAIN form: the index, its columns and scope.
func (u *IndexUse) String() string {
	return fmt.Sprintf("index %s (%s) scope %s", u.Index.Name, u.ColName, u.Index.Scope)
}

// indexScans chooses an index for every Scan and Versions that the
// key-prefix ranges left without a key or range, when its filter has a
// conjunct `col = constant` or `col IN (constants)` on the first column
// of an index of the table (docs/indexes.md). Among several, a current
// read prefers an index of scope CURRENT or BOTH, a read AS OF or of
// versions() one of scope BOTH, then HISTORY: an index's scope says which
// parts carry its filters, and parts without them are read whole, so any
// index gives the same rows.
func indexScans(n Node, env *Env) Node {
	for _, in := range n.Inputs() {
		indexScans(in, env)
	}
	switch s := n.(type) {
	case *Scan:
		if s.Key == nil && len(s.Ranges) == 0 {
			s.Index = chooseIndex(env, s.Table, s.Cols, s.ColIDs, s.Filter, s.AsOf != 0)
		}
	case *Versions:
		if len(s.Ranges) == 0 {
			s.Index = chooseIndex(env, s.Table, s.Cols, s.ColIDs, s.Filter, true)
		}
	}
	return n
}

// scopeRank orders scopes by preference for a read (lower is better).
// A current read of a keyed table never takes a HISTORY index
// (chooseIndex): it reads no history part, the only kind carrying its
// filters.
func scopeRank(s catalog.Scope, past bool) int {
	if !past {
		return 0
	}
	switch s {
	case catalog.ScopeBoth:
		return 0
	case catalog.ScopeHistory:
		return 1
	}
	return 2
}

// chooseIndex returns the index use of a scan of t with filter, or nil.
func chooseIndex(env *Env, t *catalog.Table, cols []ColRef, ids []catalog.ColumnID, filter expr.Expr, past bool) *IndexUse {
	if filter == nil || env == nil || env.Source == nil {
		return nil
	}
	cat := env.Source.Catalog()
	if cat == nil {
		return nil
	}
	var ixs []*catalog.Index
	for _, ix := range cat.AllIndexes() {
		if ix.Table == t.ID && len(ix.Columns) > 0 && !(t.Keyed() && t.IsKey(ix.Columns[0])) {
			ixs = append(ixs, ix)
		}
	}
	if len(ixs) == 0 {
		return nil
	}
	colOf := map[int]catalog.ColumnID{}
	for i, c := range cols {
		colOf[c.ID] = ids[i]
	}
	var best *IndexUse
	rank := 0
	for _, c := range conjuncts(filter) {
		col, vals := equalityOf(c)
		if col == nil {
			continue
		}
		id, ok := colOf[col.ID]
		if !ok {
			continue
		}
		cc, ok := t.AnyColumn(id)
		if !ok {
			continue
		}
		vs, ok := exactValues(vals, cc.Type)
		if !ok {
			continue
		}
		for _, ix := range ixs {
			if ix.Columns[0] != id || !past && t.Keyed() && ix.Scope == catalog.ScopeHistory {
				continue
			}
			if r := scopeRank(ix.Scope, past); best == nil || r < rank {
				best, rank = &IndexUse{Index: ix, Col: id, ColName: cc.Name, Values: vs}, r
			}
		}
	}
	return best
}

// equalityOf reads c as `col = constant` (either side) or `col IN
// (constants)`, col possibly under a widening integer cast (keyCol).
func equalityOf(c expr.Expr) (*expr.Col, []types.Value) {
	switch x := c.(type) {
	case *expr.Cmp:
		if x.Op != expr.EQ {
			return nil, nil
		}
		col, lok := keyCol(x.L)
		k, rok := x.R.(*expr.Const)
		if !lok || !rok {
			col, lok = keyCol(x.R)
			k, rok = x.L.(*expr.Const)
		}
		if lok && rok {
			return col, []types.Value{k.V}
		}
	case *expr.InList:
		if x.Not {
			return nil, nil
		}
		if col, ok := keyCol(x.X); ok && len(x.Vals) > 0 {
			return col, x.Vals
		}
	}
	return nil, nil
}

// exactValues casts vals to t, dropping NULLs (an equality with NULL is
// never TRUE); false when one is not exactly a value of t (then the
// comparison is not an equality on t's values, and the filter alone
// judges it) or none is left.
func exactValues(vals []types.Value, t types.Type) ([]types.Value, bool) {
	var out []types.Value
	for _, v := range vals {
		if v.IsNull() {
			continue
		}
		if v.Type() != t {
			nv, err := types.Cast(v, t)
			if err != nil {
				return nil, false
			}
			if back, err := types.Cast(nv, v.Type()); err != nil || types.Compare(back, v) != 0 {
				return nil, false
			}
			v = nv
		}
		out = append(out, v)
	}
	return out, len(out) > 0
}

// indexText is the EXPLAIN suffix of a node that uses u.
func indexText(u *IndexUse) string {
	if u == nil {
		return ""
	}
	vs := make([]string, len(u.Values))
	for i, v := range u.Values {
		vs[i] = (&expr.Const{V: v}).String()
	}
	return " " + u.String() + " values=[" + strings.Join(vs, ", ") + "]"
}
