package expr

import (
	"context"
	"math"
	"testing"

	"github.com/strata-db/strata/internal/types"
)

// BenchmarkFuncs evaluates functions over one batch of 1024 rows (a
// FLOAT64, an INT64 and a STRING column, every seventh row NULL), so
// -benchmem reports the allocations per batch: the typed loops allocate
// nothing per row. sqrt/rowpath is the same sqrt through the row-at-a-time
// path (rowFunc over types.Value) the typed loop replaces.
func BenchmarkFuncs(b *testing.B) {
	const n = 1024
	fv := types.NewVector(tFloat8, n)
	iv := types.NewVector(types.Of(types.Int64), n)
	sv := types.NewVector(types.Of(types.String), n)
	for i := range n {
		if i%7 == 3 {
			fv.AppendNull()
			iv.AppendNull()
			sv.AppendNull()
			continue
		}
		fv.AppendFloat64(float64(i) + 0.5)
		iv.AppendInt64(int64(i))
		sv.AppendString("héllo wörld " + string(rune('a'+i%26)))
	}
	batch := &types.Batch{Cols: []*types.Vector{fv, iv, sv}, Rows: n}
	f := &Col{Idx: 0, Name: "f", T: tFloat8}
	x := &Col{Idx: 1, Name: "i", T: types.Of(types.Int64)}
	s := &Col{Idx: 2, Name: "s", T: types.Of(types.String)}
	call := func(name string, args ...Expr) Expr {
		ts := make([]types.Type, len(args))
		for i, a := range args {
			ts[i] = a.Type()
		}
		fn, _, err := NewFunc(name, ts, 0)
		if err != nil {
			b.Fatal(err)
		}
		fn.Args = args
		return fn
	}
	rowSqrt := call("sqrt", f).(*Func)
	rowSqrt.vec = nil
	rowSqrt.fn = func(a []types.Value, _ types.Type) (types.Value, error) {
		return types.NewFloat64(math.Sqrt(a[0].Float64())), nil
	}
	for _, c := range []struct {
		name string
		e    Expr
	}{
		{"sqrt", call("sqrt", f)},
		{"sqrt/rowpath", rowSqrt},
		{"power", call("power", f, NewConst(types.NewFloat64(1.5)))},
		{"and", &Bitwise{Op: BitAnd, L: x, R: NewConst(types.NewInt64(7)), T: x.T}},
		{"shl", &Bitwise{Op: BitShl, L: x, R: NewConst(types.NewInt64(3)), T: x.T}},
		{"strpos", call("strpos", s, NewConst(str("ö")))},
		{"lpad", call("lpad", s, NewConst(types.NewInt64(20)), NewConst(str("·")))},
		{"split_part", call("split_part", s, NewConst(str(" ")), NewConst(types.NewInt64(-1)))},
		{"regexp_replace", call("regexp_replace", s, NewConst(str("l+")), NewConst(str("<\\&>")), NewConst(str("g")))},
	} {
		b.Run(c.name, func(b *testing.B) {
			ctx := NewCtx(context.Background(), nil, nil)
			b.ReportAllocs()
			for b.Loop() {
				ctx.Reset()
				if _, err := c.e.Eval(ctx, batch); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
