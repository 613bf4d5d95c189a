package expr

import (
	"context"
	"testing"

	"github.com/strata-db/strata/internal/types"
)

// TestBitwise checks the bitwise operators at every integer class against
// PostgreSQL 15 where it has the type (int2, int4, int8 on x86-64).
func TestBitwise(t *testing.T) {
	val := func(k types.Kind, s string) types.Value {
		v, err := types.Cast(num(s), types.Of(k))
		if err != nil {
			t.Fatalf("%s as %s: %v", s, k, err)
		}
		return v
	}
	for _, c := range []struct {
		op   BitOp
		k    types.Kind
		l, r string
		want string
	}{
		{BitAnd, types.Int64, "7", "3", "3"},
		{BitOr, types.Int64, "4", "3", "7"},
		{BitXor, types.Int64, "5", "3", "6"},
		{BitAnd, types.Int32, "-1", "255", "255"},
		{BitShl, types.Int16, "1", "15", "-32768"},
		{BitShl, types.Int16, "1", "16", "0"},
		{BitShl, types.Int32, "1", "33", "2"},
		{BitShl, types.Int64, "1", "63", "-9223372036854775808"},
		{BitShl, types.Int64, "1", "64", "1"},
		{BitShr, types.Int64, "-1", "40", "-1"},
		{BitShr, types.Int32, "-8", "1", "-4"},
		{BitShl, types.Uint8, "255", "1", "254"},
		{BitShr, types.Uint64, "18446744073709551615", "60", "15"},
		{BitXor, types.Uint32, "4294967295", "1", "4294967294"},
		{BitShl, types.Int128, "1", "127", "-170141183460469231731687303715884105728"},
		{BitShr, types.Int128, "-170141183460469231731687303715884105728", "126", "-2"},
		{BitShl, types.Uint128, "340282366920938463463374607431768211455", "1", "340282366920938463463374607431768211454"},
		{BitAnd, types.Int256, "-1", "12", "12"},
		{BitOr, types.Uint256, "1", "2", "3"},
		{BitShr, types.Uint256, "115792089237316195423570985008687907853269984665640564039457584007913129639935", "255", "1"},
	} {
		l := NewConst(val(c.k, c.l))
		var r Expr = NewConst(val(c.k, c.r))
		if c.op == BitShl || c.op == BitShr {
			r = NewConst(types.NewInt64(int64(val(types.Int64, c.r).Int64())))
		}
		e := &Bitwise{Op: c.op, L: l, R: r, T: types.Of(c.k)}
		v, err := e.Eval(NewCtx(context.Background(), nil, nil), &types.Batch{Rows: 1})
		if err != nil {
			t.Errorf("%s %s %s %s: %v", c.k, c.l, c.op, c.r, err)
			continue
		}
		if got := v.Get(0).String(); got != c.want {
			t.Errorf("%s: %s %s %s = %s, want %s", c.k, c.l, c.op, c.r, got, c.want)
		}
		// The value must be one of the type: a Cast to it changes nothing.
		if cv, err := types.Cast(v.Get(0), types.Of(c.k)); err != nil || !types.Equal(cv, v.Get(0)) {
			t.Errorf("%s: %s %s %s = %s is not a valid %s: %v", c.k, c.l, c.op, c.r, v.Get(0), c.k, err)
		}
	}
	for _, c := range []struct {
		k    types.Kind
		x    string
		want string
	}{
		{types.Int64, "5", "-6"},
		{types.Int16, "0", "-1"},
		{types.Uint8, "1", "254"},
		{types.Uint128, "0", "340282366920938463463374607431768211455"},
		{types.Int128, "-1", "0"},
	} {
		e := &BitNot{X: NewConst(val(c.k, c.x)), T: types.Of(c.k)}
		v, err := e.Eval(NewCtx(context.Background(), nil, nil), &types.Batch{Rows: 1})
		if err != nil || v.Get(0).String() != c.want {
			t.Errorf("~%s::%s = %v (%v), want %s", c.x, c.k, v.Get(0), err, c.want)
		}
	}
	// NULL in, NULL out.
	e := &Bitwise{Op: BitAnd, L: NewConst(types.Null(types.Of(types.Int64))), R: NewConst(types.NewInt64(1)), T: types.Of(types.Int64)}
	if v, err := e.Eval(NewCtx(context.Background(), nil, nil), &types.Batch{Rows: 2}); err != nil || !v.IsNull(0) || !v.IsNull(1) {
		t.Errorf("NULL & 1: %v, %v", v, err)
	}
}
