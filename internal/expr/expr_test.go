package expr_test

import (
	"context"
	"testing"

	"github.com/strata-db/strata/internal/expr"
	"github.com/strata-db/strata/internal/types"
)

// batch holds one INT64 column (plan-wide id 0, index 0) with the given
// values; nil entries are NULL.
func batch(vals ...*int64) *types.Batch {
	b := types.NewBatch([]types.Type{types.Of(types.Int64)}, len(vals))
	for _, v := range vals {
		if v == nil {
			b.Cols[0].AppendNull()
		} else {
			b.Cols[0].AppendInt64(*v)
		}
	}
	b.Rows = len(vals)
	return b
}

func i64(v int64) *int64 { return &v }

func col() expr.Expr { return &expr.Col{ID: 0, Idx: 0, Name: "x", T: types.Of(types.Int64)} }

func eval(t *testing.T, e expr.Expr, b *types.Batch) ([]string, error) {
	t.Helper()
	v, err := e.Eval(expr.NewCtx(context.Background(), nil, nil), b)
	if err != nil {
		return nil, err
	}
	out := make([]string, v.Len())
	for i := range out {
		if v.IsNull(i) {
			out[i] = "NULL"
		} else {
			out[i] = v.Get(i).String()
		}
	}
	return out, nil
}

func coalesce(t *testing.T, args ...expr.Expr) expr.Expr {
	t.Helper()
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	f, _, err := expr.NewFunc("coalesce", ts, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Args = args
	return f
}

// x / (x - 1): a division by zero on the row where x is 1.
func divByXMinus1() expr.Expr {
	t := types.Of(types.Int64)
	minus := &expr.Arith{Op: types.OpSub, L: col(), R: expr.NewConst(types.NewInt64(1)), T: t}
	return &expr.Arith{Op: types.OpDiv, L: expr.NewConst(types.NewInt64(10)), R: minus, T: t}
}

func TestCoalesceIsLazy(t *testing.T) {
	// Row x=1 would divide by zero, but coalesce takes x there (non-NULL);
	// the division runs only on the NULL row, where it is NULL too, and
	// the last argument fills it.
	e := coalesce(t, col(), divByXMinus1(), expr.NewConst(types.NewInt64(-1)))
	got, err := eval(t, e, batch(i64(1), nil, i64(3)))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"1", "-1", "3"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("coalesce = %v, want %v", got, want)
		}
	}
	// Where the division is reached on x = 1, it is an error.
	e = coalesce(t, expr.NewConst(types.Null(types.Of(types.Int64))), divByXMinus1())
	if _, err := eval(t, e, batch(i64(1))); err == nil {
		t.Fatalf("coalesce(NULL, 10/0) = %v, want division by zero", err)
	}
}

func TestThreeValuedLogic(t *testing.T) {
	b := types.NewBatch([]types.Type{types.Of(types.Bool), types.Of(types.Bool)}, 9)
	vals := []int{1, 0, -1} // true, false, NULL
	for _, l := range vals {
		for _, r := range vals {
			for c, v := range []int{l, r} {
				if v < 0 {
					b.Cols[c].AppendNull()
				} else {
					b.Cols[c].AppendBool(v == 1)
				}
			}
			b.Rows++
		}
	}
	l := &expr.Col{ID: 0, Idx: 0, T: types.Of(types.Bool)}
	r := &expr.Col{ID: 1, Idx: 1, T: types.Of(types.Bool)}
	and, err := eval(t, &expr.Logic{Args: []expr.Expr{l, r}}, b)
	if err != nil {
		t.Fatal(err)
	}
	or, err := eval(t, &expr.Logic{Or: true, Args: []expr.Expr{l, r}}, b)
	if err != nil {
		t.Fatal(err)
	}
	// Rows: (T,T) (T,F) (T,N) (F,T) (F,F) (F,N) (N,T) (N,F) (N,N).
	wantAnd := []string{"true", "false", "NULL", "false", "false", "false", "NULL", "false", "NULL"}
	wantOr := []string{"true", "true", "true", "true", "false", "NULL", "true", "NULL", "NULL"}
	for i := range wantAnd {
		if and[i] != wantAnd[i] || or[i] != wantOr[i] {
			t.Fatalf("row %d: AND %s OR %s, want %s %s", i, and[i], or[i], wantAnd[i], wantOr[i])
		}
	}
}

func TestArithmeticNullAndOverflow(t *testing.T) {
	t64 := types.Of(types.Int64)
	add := &expr.Arith{Op: types.OpAdd, L: col(), R: expr.NewConst(types.NewInt64(1)), T: t64}
	got, err := eval(t, add, batch(i64(1), nil))
	if err != nil || got[0] != "2" || got[1] != "NULL" {
		t.Fatalf("x + 1 = %v, %v", got, err)
	}
	if _, err := eval(t, add, batch(i64(9223372036854775807))); err == nil {
		t.Fatal("INT64 max + 1 did not overflow")
	}
}
