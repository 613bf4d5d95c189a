package session

import (
	"math/bits"

	"github.com/holiman/uint256"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/sql/ast"
	"github.com/strata-db/strata/internal/sql/token"
	"github.com/strata-db/strata/internal/types"
)

// noValuesWriter turns valuesWriter off, for tests that compare it with
// buildWriter; test-only, set before any session runs (not safe to change
// while statements run).
var noValuesWriter bool

// valueDest is a batch column a listed column's values are written to.
type valueDest struct {
	vec *types.Vector
	g   *groupWrite
	i   int // index of the column in g.cols
}

// valuesWriter is the writer of an INSERT whose source is a VALUES list of
// literals, parameters and DEFAULTs, or nil when the statement is anything
// else or has an error. Each value is written into its batch columns as it
// is read, without the matrix of evaluated cells buildWriter keeps, and an
// integer or string literal meant for a column of its kind is appended
// without becoming a Value. On any error it gives up and buildWriter runs
// instead, which reports the statement's first error exactly as it always
// has; the cells read until then were literals, whose evaluation has no
// effect, so evaluating them again is harmless.
func (st *statement) valuesWriter(n *ast.InsertStmt, tab *catalog.Table, listed []*catalog.Column) *writer {
	if noValuesWriter {
		return nil
	}
	src := n.Source
	v, ok := src.Body.(*ast.Values)
	if !ok || src.With != nil || src.OrderBy != nil || src.Limit != nil || src.Offset != nil || src.AsOf != nil || v.NumRows() == 0 {
		return nil
	}
	var width int
	if v.Lits != nil {
		width = v.Lits.Width
	} else {
		width = len(v.Rows[0].Items)
	}
	if n.Columns == nil {
		if width > len(tab.Columns) {
			return nil
		}
		listed = listed[:width]
	} else if width != len(listed) {
		return nil
	}
	var group *catalog.Group
	if n.Group != nil {
		if group, ok = tab.Group(n.Group.Name); !ok {
			return nil
		}
	}
	w, err := newWriter(tab, listed, group, v.NumRows(), n.Pos(), st.columnDefault)
	if err != nil {
		return nil
	}
	dests := make([][]valueDest, width)
	var defs []valueDest // columns no listed column feeds: their DEFAULT
	// The key columns are in every group's batch: the first group's
	// vectors are shared by the others rather than filled again. Nothing
	// writes to a batch once it is built (storage copies what it keeps).
	shared := make(map[catalog.ColumnID]*types.Vector, len(tab.Key))
	for _, g := range w.groups {
		if g.group != nil && g.group.Owner != "" {
			return nil
		}
		for i, c := range g.cols {
			if j := g.src[i]; j >= 0 && j < width && tab.IsKey(c.ID) {
				if v := shared[c.ID]; v != nil {
					g.batch.Cols[i] = v
					continue
				}
				shared[c.ID] = g.batch.Cols[i]
			}
			d := valueDest{vec: g.batch.Cols[i], g: g, i: i}
			if j := g.src[i]; j >= 0 && j < width {
				dests[j] = append(dests[j], d)
				continue
			}
			if g.perRow[i] != nil {
				return nil // a DEFAULT per row: writer.add evaluates it
			}
			if g.defs[i].IsNull() && w.nullError(g, c, 0) != nil {
				return nil
			}
			defs = append(defs, d)
		}
	}
	reserveStrings(v, dests)
	if v.Lits != nil {
		l := v.Lits
		for r := range l.Rows {
			for j := range width {
				c := &l.Cells[r*width+j]
				ds := dests[j]
				if len(ds) > 0 && appendLit(ds[0].vec, c) {
					for _, d := range ds[1:] {
						d.vec.AppendFrom(ds[0].vec, r)
					}
					continue
				}
				if !st.putValue(w, listed[j], ds, c.Expr()) {
					return nil
				}
			}
			for _, d := range defs {
				d.vec.Append(d.g.defs[d.i])
			}
			w.rows++
		}
	}
	for r, row := range v.Rows {
		if len(row.Items) != width {
			return nil
		}
		for j, e := range row.Items {
			ds := dests[j]
			switch e.(type) {
			case *ast.DefaultExpr:
				for _, d := range ds {
					if d.g.perRow[d.i] != nil {
						return nil // evaluated by writer.add
					}
					x := d.g.defs[d.i]
					if x.IsNull() && w.nullError(d.g, d.g.cols[d.i], 0) != nil {
						return nil
					}
					d.vec.Append(x)
				}
				continue
			case *ast.NumberLit, *ast.StringLit, *ast.BoolLit, *ast.NullLit, *ast.Param:
			case *ast.UnaryExpr:
				if u := e.(*ast.UnaryExpr); u.Op != token.MINUS {
					return nil
				} else if _, num := u.X.(*ast.NumberLit); !num {
					return nil
				}
			default:
				// Anything else is planned and evaluated: left to
				// buildWriter, which evaluates it once.
				return nil
			}
			if len(ds) > 0 && appendLiteral(ds[0].vec, e) {
				for _, d := range ds[1:] {
					d.vec.AppendFrom(ds[0].vec, r)
				}
				continue
			}
			if !st.putValue(w, listed[j], ds, e) {
				return nil
			}
		}
		for _, d := range defs {
			d.vec.Append(d.g.defs[d.i])
		}
		w.rows++
	}
	for _, g := range w.groups {
		g.batch.Rows = w.rows
	}
	return w
}

// putValue evaluates e, a literal or parameter appendLiteral did not
// take, casts it to the listed column's type and appends it to the
// column's batch columns ds; it reports false, for buildWriter to report
// the error, when any of that fails or the value is a NULL the column
// refuses.
func (st *statement) putValue(w *writer, listed *catalog.Column, ds []valueDest, e ast.Expr) bool {
	x, err := st.evalConst(e)
	if err != nil || !assignable(x, listed.Type) {
		return false
	}
	if x, err = types.Cast(x, listed.Type); err != nil {
		return false
	}
	for _, d := range ds {
		if x.IsNull() && w.nullError(d.g, d.g.cols[d.i], 0) != nil {
			return false
		}
		d.vec.Append(x)
	}
	return true
}

// reserveStrings makes room in each STRING destination for the bytes of
// the string literals its VALUES column holds, counted first: grown by
// appends instead, a column of 42-byte addresses was copied about ten
// times over its 1 000 rows and allocated ~2.5 times its bytes. Every
// destination of a column ends up holding the same bytes (the first by
// appends, the others copying from it), so each gets the same room.
func reserveStrings(v *ast.Values, dests [][]valueDest) {
	var sizes []int
	for j, ds := range dests {
		if len(ds) == 0 || ds[0].vec.Type() != stringType {
			continue
		}
		if sizes == nil {
			sizes = make([]int, len(dests))
		}
		if l := v.Lits; l != nil {
			for r := range l.Rows {
				if c := &l.Cells[r*l.Width+j]; c.Kind == ast.LitString {
					sizes[j] += len(c.Text)
				}
			}
		}
		for _, row := range v.Rows {
			if j < len(row.Items) {
				if s, ok := row.Items[j].(*ast.StringLit); ok {
					sizes[j] += len(s.Value)
				}
			}
		}
		for _, d := range ds {
			d.vec.Reserve(sizes[j])
		}
	}
}

// appendLiteral appends e to vec if e is a literal that needs no
// evaluation to be a value of vec's type, and reports whether it did: a
// string literal for a STRING column or for one of a type its text parses
// as (a DATETIME64 given as '2024-01-02 03:04:05'), or an unsigned integer
// literal for an integer column whose range holds it. Everything else,
// including every value out of range, takes evalConst and types.Cast,
// which judge it.
func appendLiteral(vec *types.Vector, e ast.Expr) bool {
	switch x := e.(type) {
	case *ast.StringLit:
		return appendString(vec, x.Value)
	case *ast.NumberLit:
		return appendNumber(vec, x.Text)
	}
	return false
}

// appendLit is appendLiteral of a compact VALUES item (ast.Lit): the same
// judgement of the same text, without the node.
func appendLit(vec *types.Vector, c *ast.Lit) bool {
	switch c.Kind {
	case ast.LitString:
		return appendString(vec, c.Text)
	case ast.LitNumber:
		return appendNumber(vec, c.Text)
	}
	return false
}

// appendString is appendLiteral of a string literal whose value is s.
func appendString(vec *types.Vector, s string) bool {
	t := vec.Type()
	if t == stringType {
		vec.AppendString(s)
		return true
	}
	if t.Kind == types.String {
		return false // a bounded STRING(n): castToString judges the length
	}
	// A quoted timestamp, date, UUID or number for a column of that
	// type: what types.Cast does with a STRING value, without building
	// one first. A value that does not parse takes the general path,
	// which reports it.
	if ticks, ok := types.ParseDateTimeFast(t, s); ok {
		vec.AppendInt64(ticks)
		return true
	}
	v, err := types.ParseText(t, s)
	if err != nil || v.IsNull() {
		return false
	}
	vec.Append(v)
	return true
}

// appendNumber is appendLiteral of a number literal of text text.
func appendNumber(vec *types.Vector, text string) bool {
	k := vec.Type().Kind
	if !k.IsInteger() || len(text) == 0 {
		return false
	}
	n, digits, fits := decimalUint64(text)
	if !digits {
		return false
	}
	switch k.Class() {
	case types.ClassInt64:
		if !fits || n >= 1<<(k.Bits()-1) {
			return false
		}
		vec.AppendInt64(int64(n))
	case types.ClassUint64:
		if b := k.Bits(); !fits || b < 64 && n >= 1<<b {
			return false
		}
		vec.AppendUint64(n)
	case types.ClassWide:
		// Wide columns take 128 or 256 bits: a literal past uint64 (an
		// amount, an index) is read whole here too, its range checked
		// against the type's bits, less the sign bit of a signed type.
		var w uint256.Int
		if fits {
			w.SetUint64(n)
		} else {
			if w.SetFromDecimal(text) != nil {
				return false
			}
			b := k.Bits()
			if k.IsSigned() {
				b--
			}
			if w.BitLen() > b {
				return false
			}
		}
		vec.AppendWide(&w)
	default:
		return false
	}
	return true
}

// decimalUint64 reads s as an unsigned decimal: digits reports whether s
// is all digits, fits whether its value fits in a uint64 (then n is it).
// Not strconv.ParseUint: the literals that overflow it (W1's 256-bit
// amounts) are the common case here, and its range error allocates.
func decimalUint64(s string) (n uint64, digits, fits bool) {
	fits = true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false, false
		}
		hi, lo := bits.Mul64(n, 10)
		lo, carry := bits.Add64(lo, uint64(c-'0'), 0)
		if hi != 0 || carry != 0 {
			fits = false
		}
		n = lo
	}
	if !fits {
		n = 0
	}
	return n, true, fits
}

// stringType is the type of a string literal.
var stringType = types.Of(types.String)
