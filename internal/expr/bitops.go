package expr

import (
	"github.com/holiman/uint256"
	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// BitOp is a bitwise operator of PostgreSQL's integer types.
type BitOp uint8

// The bitwise operators: & | # (exclusive or) << >>.
const (
	BitAnd BitOp = iota
	BitOr
	BitXor
	BitShl
	BitShr
)

var bitNames = [...]string{"&", "|", "#", "<<", ">>"}

func (o BitOp) String() string { return bitNames[o] }

// Bitwise is L op R over integers. For &, | and # the binder has cast both
// operands to T, their common integer type; for << and >> T is L's type
// and R an INT64 shift count. A shift count is taken modulo the width
// PostgreSQL shifts in (32 bits for types up to 32 bits wide, as C
// promotes int2 to int, else the type's width), which is what
// PostgreSQL's int2shl, int4shl and int8shl do on x86-64; a left shift
// drops the bits that leave the type, as there.
type Bitwise struct {
	Op   BitOp
	L, R Expr
	T    types.Type
}

// Type implements Expr.
func (e *Bitwise) Type() types.Type { return e.T }
func (e *Bitwise) String() string {
	return "(" + e.L.String() + " " + e.Op.String() + " " + e.R.String() + ")"
}
func (e *Bitwise) kids() []*Expr { return []*Expr{&e.L, &e.R} }

// shiftWidth is the width a shift count of type t is reduced modulo.
func shiftWidth(t types.Type) uint {
	return uint(max(t.Kind.Bits(), 32))
}

// wrapInt truncates x to the signed integer kind k (sign-extended back).
func wrapInt(k types.Kind, x int64) int64 {
	switch k {
	case types.Int8:
		return int64(int8(x))
	case types.Int16:
		return int64(int16(x))
	case types.Int32:
		return int64(int32(x))
	}
	return x
}

// wrapUint truncates x to the unsigned integer kind k.
func wrapUint(k types.Kind, x uint64) uint64 {
	if b := k.Bits(); b < 64 {
		return x & (1<<uint(b) - 1)
	}
	return x
}

// wrapWide truncates a 256-bit two's complement x to the wide integer kind
// k: INT128 sign-extends bit 127, UINT128 clears the bits above 127.
func wrapWide(k types.Kind, x *uint256.Int) {
	switch k {
	case types.Int128:
		if x[1]>>63 != 0 {
			x[2], x[3] = ^uint64(0), ^uint64(0)
		} else {
			x[2], x[3] = 0, 0
		}
	case types.Uint128:
		x[2], x[3] = 0, 0
	}
}

// Eval implements Expr.
func (e *Bitwise) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	l, err := e.L.Eval(c, b)
	if err != nil {
		return nil, err
	}
	r, err := e.R.Eval(c, b)
	if err != nil {
		return nil, err
	}
	n := b.Rows
	out := c.vec(e.T, n)
	nulls := l.HasNulls() || r.HasNulls()
	k := e.T.Kind
	shift := e.Op == BitShl || e.Op == BitShr
	mask := int64(shiftWidth(e.T) - 1)
	var counts []int64
	if shift {
		counts = r.Int64s()
	}
	switch k.Class() {
	case types.ClassInt64:
		a := l.Int64s()
		var bb []int64
		if !shift {
			bb = r.Int64s()
		}
		for i := range n {
			if nulls && (l.IsNull(i) || r.IsNull(i)) {
				out.AppendNull()
				continue
			}
			x := a[i]
			var z int64
			switch e.Op {
			case BitAnd:
				z = x & bb[i]
			case BitOr:
				z = x | bb[i]
			case BitXor:
				z = x ^ bb[i]
			case BitShl:
				z = wrapInt(k, x<<uint(counts[i]&mask))
			case BitShr:
				z = x >> uint(counts[i]&mask)
			}
			out.AppendInt64(z)
		}
	case types.ClassUint64:
		a := l.Uint64s()
		var bb []uint64
		if !shift {
			bb = r.Uint64s()
		}
		for i := range n {
			if nulls && (l.IsNull(i) || r.IsNull(i)) {
				out.AppendNull()
				continue
			}
			x := a[i]
			var z uint64
			switch e.Op {
			case BitAnd:
				z = x & bb[i]
			case BitOr:
				z = x | bb[i]
			case BitXor:
				z = x ^ bb[i]
			case BitShl:
				z = wrapUint(k, x<<uint(counts[i]&mask))
			case BitShr:
				z = x >> uint(counts[i]&mask)
			}
			out.AppendUint64(z)
		}
	case types.ClassWide:
		a := l.Wides()
		var bb []uint256.Int
		if !shift {
			bb = r.Wides()
		}
		for i := range n {
			if nulls && (l.IsNull(i) || r.IsNull(i)) {
				out.AppendNull()
				continue
			}
			x := &a[i]
			var z uint256.Int
			switch e.Op {
			case BitAnd:
				z.And(x, &bb[i])
			case BitOr:
				z.Or(x, &bb[i])
			case BitXor:
				z.Xor(x, &bb[i])
			case BitShl:
				z.Lsh(x, uint(counts[i]&mask))
				wrapWide(k, &z)
			case BitShr:
				if k.IsSigned() {
					z.SRsh(x, uint(counts[i]&mask))
				} else {
					z.Rsh(x, uint(counts[i]&mask))
				}
			}
			out.AppendWide(&z)
		}
	default:
		return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "operator does not exist: %s %s %s", l.Type(), e.Op, r.Type())
	}
	return out, nil
}

// BitNot is ~X over an integer type: every bit of X flipped, within the
// type's width.
type BitNot struct {
	X Expr
	T types.Type
}

// Type implements Expr.
func (e *BitNot) Type() types.Type { return e.T }
func (e *BitNot) String() string   { return "(~" + e.X.String() + ")" }
func (e *BitNot) kids() []*Expr    { return []*Expr{&e.X} }

// Eval implements Expr.
func (e *BitNot) Eval(c *Ctx, b *types.Batch) (*types.Vector, error) {
	x, err := e.X.Eval(c, b)
	if err != nil {
		return nil, err
	}
	n := b.Rows
	out := c.vec(e.T, n)
	nulls := x.HasNulls()
	k := e.T.Kind
	for i := range n {
		if nulls && x.IsNull(i) {
			out.AppendNull()
			continue
		}
		switch k.Class() {
		case types.ClassInt64:
			out.AppendInt64(^x.Int64s()[i])
		case types.ClassUint64:
			out.AppendUint64(wrapUint(k, ^x.Uint64s()[i]))
		case types.ClassWide:
			var z uint256.Int
			z.Not(&x.Wides()[i])
			wrapWide(k, &z)
			out.AppendWide(&z)
		default:
			return nil, sqlerr.New(sqlerr.CodeUndefinedFunction, "operator does not exist: ~ %s", x.Type())
		}
	}
	return out, nil
}
