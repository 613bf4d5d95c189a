package expr

import (
	"encoding/binary"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// When is one WHEN Cond THEN Then arm of a Case.
type When struct {
	Cond, Then Expr
}

// Case is a searched CASE; a simple CASE is bound into one (operand = value
// conditions). Thens and Else are cast to T by the binder.
type Case struct {
	Whens []When
	Else  Expr // nil means NULL
	T     types.Type
}

// Type implements Expr.
func (e *Case) Type() types.Type { return e.T }
func (e *Case) String() string {
	s := "CASE"
	for _, w := range e.Whens {
		s += " WHEN " + w.Cond.String() + " THEN " + w.Then.String()
	}
	if e.Else != nil {
		s += " ELSE " + e.Else.String()
	}
	return s + " END"
}
func (e *Case) kids() []*Expr {
	ks := make([]*Expr, 0, 2*len(e.Whens)+1)
	for i := range e.Whens {
		ks = append(ks, &e.Whens[i].Cond, &e.Whens[i].Then)
	}
	if e.Else != nil {
		ks = append(ks, &e.Else)
	}
	return ks
}

// Eval implements Expr. Each arm runs only over the rows still undecided
// when it is reached (invariant 4), on a gathered sub-batch.
func (e *Case) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	n := b.Rows
	res := make([]types.Value, n)
	remaining := make([]int, n)
	for i := range remaining {
		remaining[i] = i
	}
	sub := b
	for _, w := range e.Whens {
		if len(remaining) == 0 {
			break
		}
		cond, err := w.Cond.Eval(c, sub)
		if err != nil {
			return nil, err
		}
		take := Selection(nil, cond, sub.Rows)
		if len(take) > 0 {
			tb := sub
			if len(take) != sub.Rows {
				tb = Gather(nil, sub, take)
			}
			v, err := w.Then.Eval(c, tb)
			if err != nil {
				return nil, err
			}
			for k, j := range take {
				res[remaining[j]] = v.Get(k)
			}
		}
		if len(take) == sub.Rows {
			remaining = remaining[:0]
			break
		}
		// Keep the rows not taken.
		keep := make([]int, 0, sub.Rows-len(take))
		next := make([]int, 0, sub.Rows-len(take))
		t := 0
		for j := range sub.Rows {
			if t < len(take) && take[t] == j {
				t++
				continue
			}
			keep = append(keep, j)
			next = append(next, remaining[j])
		}
		sub = Gather(nil, sub, keep)
		remaining = next
	}
	if len(remaining) > 0 {
		if e.Else != nil {
			v, err := e.Else.Eval(c, sub)
			if err != nil {
				return nil, err
			}
			for k, j := range remaining {
				res[j] = v.Get(k)
			}
		} else {
			for _, j := range remaining {
				res[j] = types.Null(e.T)
			}
		}
	}
	out := c.vec(e.T, n)
	for _, v := range res {
		if !v.IsNull() && v.Type() != e.T {
			var err error
			if v, err = types.Cast(v, e.T); err != nil {
				return nil, CastError(-1, v, e.T, err)
			}
		}
		out.Append(v)
	}
	return out, nil
}

// InList is X [NOT] IN (constants); the binder casts the constants to X's
// type and turns lists with non-constant items into ORs of equalities.
type InList struct {
	X       Expr
	Vals    []types.Value
	Not     bool
	hasNull bool
	ints    map[int64]struct{}
	keys    map[string]struct{}
}

// NewInList returns X IN (vals).
func NewInList(x Expr, vals []types.Value, not bool) *InList {
	e := &InList{X: x, Vals: vals, Not: not}
	cls := x.Type().Kind.Class()
	if cls == types.ClassInt64 {
		e.ints = make(map[int64]struct{}, len(vals))
	} else {
		e.keys = make(map[string]struct{}, len(vals))
	}
	var buf []byte
	for _, v := range vals {
		if v.IsNull() {
			e.hasNull = true
			continue
		}
		if e.ints != nil {
			e.ints[v.Int64()] = struct{}{}
			continue
		}
		buf = AppendValueKey(buf[:0], v)
		e.keys[string(buf)] = struct{}{}
	}
	return e
}

// Type implements Expr.
func (e *InList) Type() types.Type { return types.Of(types.Bool) }
func (e *InList) String() string {
	s := e.X.String()
	if e.Not {
		s += " NOT"
	}
	s += " IN ("
	for i, v := range e.Vals {
		if i > 0 {
			s += ", "
		}
		s += (&Const{V: v}).String()
	}
	return s + ")"
}
func (e *InList) kids() []*Expr { return []*Expr{&e.X} }

// Eval implements Expr.
func (e *InList) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	x, err := e.X.Eval(c, b)
	if err != nil {
		return nil, err
	}
	out := c.vec(types.Of(types.Bool), b.Rows)
	var keys [][]byte
	if e.ints == nil {
		keys = EncodeKeys(make([][]byte, b.Rows), x, b.Rows)
	}
	for i := range b.Rows {
		if x.IsNull(i) {
			out.AppendNull()
			continue
		}
		var found bool
		if e.ints != nil {
			_, found = e.ints[x.Int64s()[i]]
		} else {
			_, found = e.keys[string(keys[i])]
		}
		if !found && e.hasNull {
			out.AppendNull()
			continue
		}
		out.AppendBool(found != e.Not)
	}
	return out, nil
}

// Like is X [NOT] LIKE|ILIKE Pattern [ESCAPE Escape].
type Like struct {
	X, Pattern Expr
	Escape     rune // 0: none; the default is backslash
	ILike, Not bool
	Pos        int
	compiled   *likePattern
}

// NewLike returns a LIKE node; a constant pattern is compiled once.
func NewLike(x, pattern Expr, escape rune, ilike, not bool, pos int) (*Like, error) {
	e := &Like{X: x, Pattern: pattern, Escape: escape, ILike: ilike, Not: not, Pos: pos}
	if k, ok := pattern.(*Const); ok && !k.V.IsNull() {
		p, err := compileLike(k.V.Str(), escape, ilike)
		if err != nil {
			return nil, err.WithPos(pos)
		}
		e.compiled = p
	}
	return e, nil
}

// Type implements Expr.
func (e *Like) Type() types.Type { return types.Of(types.Bool) }
func (e *Like) String() string {
	op := " LIKE "
	if e.ILike {
		op = " ILIKE "
	}
	if e.Not {
		op = " NOT" + op
	}
	return e.X.String() + op + e.Pattern.String()
}
func (e *Like) kids() []*Expr { return []*Expr{&e.X, &e.Pattern} }

// Eval implements Expr.
func (e *Like) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	x, err := e.X.Eval(c, b)
	if err != nil {
		return nil, err
	}
	var pv *types.Vector
	if e.compiled == nil {
		if pv, err = e.Pattern.Eval(c, b); err != nil {
			return nil, err
		}
	}
	out := c.vec(types.Of(types.Bool), b.Rows)
	for i := range b.Rows {
		if x.IsNull(i) || (pv != nil && pv.IsNull(i)) {
			out.AppendNull()
			continue
		}
		p := e.compiled
		if p == nil {
			var perr *sqlerr.Error
			if p, perr = compileLike(pv.StringAt(i), e.Escape, e.ILike); perr != nil {
				return nil, perr.WithPos(e.Pos)
			}
		}
		out.AppendBool(p.match(x.BytesAt(i)) != e.Not)
	}
	return out, nil
}

// likePattern is a compiled LIKE pattern: literal runs, '_' (one character)
// and '%' (any run).
type likePattern struct {
	toks  []likeTok
	lower bool
}

type likeTok struct {
	kind byte // 'l' literal, '_' one, '%' any
	lit  string
}

func compileLike(p string, escape rune, lower bool) (*likePattern, *sqlerr.Error) {
	if lower {
		p = strings.ToLower(p)
	}
	lp := &likePattern{lower: lower}
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			lp.toks = append(lp.toks, likeTok{kind: 'l', lit: lit.String()})
			lit.Reset()
		}
	}
	rs := []rune(p)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case escape != 0 && r == escape:
			if i+1 >= len(rs) {
				return nil, sqlerr.New(sqlerr.CodeInvalidParameter, "LIKE pattern must not end with escape character")
			}
			i++
			lit.WriteRune(rs[i])
		case r == '%':
			flush()
			if n := len(lp.toks); n == 0 || lp.toks[n-1].kind != '%' {
				lp.toks = append(lp.toks, likeTok{kind: '%'})
			}
		case r == '_':
			flush()
			lp.toks = append(lp.toks, likeTok{kind: '_'})
		default:
			lit.WriteRune(r)
		}
	}
	flush()
	return lp, nil
}

func (p *likePattern) match(s []byte) bool {
	if p.lower {
		s = []byte(strings.ToLower(string(s)))
	}
	return likeMatch(p.toks, s)
}

func likeMatch(toks []likeTok, s []byte) bool {
	for len(toks) > 0 {
		t := toks[0]
		switch t.kind {
		case 'l':
			if len(s) < len(t.lit) || string(s[:len(t.lit)]) != t.lit {
				return false
			}
			s = s[len(t.lit):]
		case '_':
			if len(s) == 0 {
				return false
			}
			_, n := utf8.DecodeRune(s)
			s = s[n:]
		case '%':
			rest := toks[1:]
			if len(rest) == 0 {
				return true
			}
			for i := 0; i <= len(s); {
				if likeMatch(rest, s[i:]) {
					return true
				}
				if i == len(s) {
					break
				}
				_, n := utf8.DecodeRune(s[i:])
				i += n
			}
			return false
		}
		toks = toks[1:]
	}
	return len(s) == 0
}

// EncodeKeys appends to keys[i] an encoding of row i of v that is equal for
// equal values of v's type (NULL included, as GROUP BY and DISTINCT need),
// one type switch per vector. Rows of one type only are ever compared.
func EncodeKeys(keys [][]byte, v *types.Vector, n int) [][]byte {
	nulls := v.HasNulls()
	switch v.Type().Kind.Class() {
	case types.ClassInt64:
		s := v.Int64s()
		for i := range n {
			if nulls && v.IsNull(i) {
				keys[i] = append(keys[i], 0)
				continue
			}
			keys[i] = binary.LittleEndian.AppendUint64(append(keys[i], 1), uint64(s[i]))
		}
	case types.ClassUint64:
		s := v.Uint64s()
		for i := range n {
			if nulls && v.IsNull(i) {
				keys[i] = append(keys[i], 0)
				continue
			}
			keys[i] = binary.LittleEndian.AppendUint64(append(keys[i], 1), s[i])
		}
	case types.ClassFloat64:
		s := v.Float64s()
		for i := range n {
			if nulls && v.IsNull(i) {
				keys[i] = append(keys[i], 0)
				continue
			}
			keys[i] = binary.LittleEndian.AppendUint64(append(keys[i], 1), floatKey(s[i]))
		}
	case types.ClassBool:
		s := v.Bools()
		for i := range n {
			switch {
			case nulls && v.IsNull(i):
				keys[i] = append(keys[i], 0)
			case s[i]:
				keys[i] = append(keys[i], 2)
			default:
				keys[i] = append(keys[i], 1)
			}
		}
	case types.ClassVarlen:
		for i := range n {
			if nulls && v.IsNull(i) {
				keys[i] = append(keys[i], 0)
				continue
			}
			b := v.BytesAt(i)
			keys[i] = append(binary.AppendUvarint(append(keys[i], 1), uint64(len(b))), b...)
		}
	default:
		for i := range n {
			keys[i] = AppendValueKey(keys[i], v.Get(i))
		}
	}
	return keys
}

// floatKey normalizes -0 to 0 and every NaN to one NaN.
func floatKey(f float64) uint64 {
	switch {
	case f == 0:
		return 0
	case f != f:
		return math.Float64bits(math.NaN())
	}
	return math.Float64bits(f)
}

// AppendValueKey appends the EncodeKeys encoding of one value.
func AppendValueKey(dst []byte, v types.Value) []byte {
	if v.IsNull() {
		return append(dst, 0)
	}
	switch v.Kind().Class() {
	case types.ClassInt64:
		return binary.LittleEndian.AppendUint64(append(dst, 1), uint64(v.Int64()))
	case types.ClassUint64:
		return binary.LittleEndian.AppendUint64(append(dst, 1), v.Uint64())
	case types.ClassFloat64:
		return binary.LittleEndian.AppendUint64(append(dst, 1), floatKey(v.Float64()))
	case types.ClassBool:
		if v.Bool() {
			return append(dst, 2)
		}
		return append(dst, 1)
	case types.ClassVarlen:
		var b []byte
		if v.Kind() == types.String {
			s := v.Str()
			dst = binary.AppendUvarint(append(dst, 1), uint64(len(s)))
			return append(dst, s...)
		}
		b = v.Bytes()
		dst = binary.AppendUvarint(append(dst, 1), uint64(len(b)))
		return append(dst, b...)
	}
	return types.AppendKey(append(dst, 1), v)
}
