package expr

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// ts, day and iv parse a DATETIME64(6), DATE and INTERVAL as literals
// would be.
func ts(s string) types.Value  { return parsed(tsType, s) }
func day(s string) types.Value { return parsed(types.Of(types.Date), s) }
func iv(s string) types.Value  { return parsed(types.Of(types.Interval), s) }

func parsed(t types.Type, s string) types.Value {
	v, err := types.ParseText(t, s)
	if err != nil {
		panic(err)
	}
	return v
}

func f8(x float64) types.Value { return types.NewFloat64(x) }

// TestDateFuncs checks results and errors against PostgreSQL 15's.
func TestDateFuncs(t *testing.T) {
	i := func(x int64) types.Value { return types.NewInt64(x) }
	runFuncCases(t, []funcCase{
		{"to_timestamp", []types.Value{f8(1.5)}, "1970-01-01 00:00:01.500000"},
		{"to_timestamp", []types.Value{i(1700000000)}, "2023-11-14 22:13:20.000000"},
		{"to_timestamp", []types.Value{num("-1.5")}, "1969-12-31 23:59:58.500000"},
		// rint after moving to PostgreSQL's epoch: half to even
		{"to_timestamp", []types.Value{f8(1.0000005)}, "1970-01-01 00:00:01.000000"},
		{"to_timestamp", []types.Value{f8(1.0000015)}, "1970-01-01 00:00:01.000002"},
		{"to_timestamp", []types.Value{f8(-62135596800)}, "0001-01-01 00:00:00.000000"},
		{"to_timestamp", []types.Value{f8(253402300799.5)}, "9999-12-31 23:59:59.500000"},
		{"to_timestamp", []types.Value{null}, "NULL"},
		{"to_timestamp", []types.Value{f8(253402300800)}, `error 22008 ^timestamp out of range: "2.53402e\+11"$`},
		{"to_timestamp", []types.Value{f8(1e20)}, `error 22008 ^timestamp out of range: "1e\+20"$`},
		{"to_timestamp", []types.Value{parsed(tFloat8, "NaN")}, "error 22008 ^timestamp cannot be NaN$"},
		{"to_timestamp", []types.Value{parsed(tFloat8, "-Infinity")}, `error 22008 ^timestamp out of range: "-Infinity"$`},

		{"make_date", []types.Value{i(2024), i(2), i(29)}, "2024-02-29"},
		{"make_date", []types.Value{i(1), i(1), i(1)}, "0001-01-01"},
		{"make_date", []types.Value{null, i(1), i(1)}, "NULL"},
		{"make_date", []types.Value{i(2023), i(2), i(29)}, "error 22008 ^date field value out of range: 2023-02-29$"},
		{"make_date", []types.Value{i(0), i(1), i(1)}, "error 22008 ^date field value out of range: 0-01-01$"},
		{"make_date", []types.Value{i(2024), i(0), i(1)}, "error 22008 ^date field value out of range: 2024-00-01$"},
		{"make_date", []types.Value{i(2024), i(1), i(0)}, "error 22008 ^date field value out of range: 2024-01-00$"},
		{"make_date", []types.Value{i(10000), i(1), i(1)}, "error 22008 ^date out of range: 10000-01-01$"},
		{"make_date", []types.Value{i(-5), i(2), i(29)}, "error 22008 ^date out of range: -5-02-29$"},
		{"make_date", []types.Value{i(-4), i(2), i(29)}, "error 22008 ^date field value out of range: -4-02-29$"},

		{"make_timestamp", []types.Value{i(2024), i(2), i(29), i(13), i(45), f8(30.5)}, "2024-02-29 13:45:30.500000"},
		{"make_timestamp", []types.Value{i(2024), i(12), i(31), i(24), i(0), i(0)}, "2025-01-01 00:00:00.000000"},
		{"make_timestamp", []types.Value{i(2024), i(1), i(1), i(23), i(59), i(60)}, "2024-01-02 00:00:00.000000"},
		{"make_timestamp", []types.Value{i(2024), i(1), i(1), i(0), i(0), f8(59.9999996)}, "2024-01-01 00:01:00.000000"},
		{"make_timestamp", []types.Value{i(9999), i(12), i(31), i(23), i(59), f8(59.999999)}, "9999-12-31 23:59:59.999999"},
		{"make_timestamp", []types.Value{i(9999), i(12), i(31), i(24), i(0), i(0)}, "error 22008 ^timestamp out of range: 9999-12-31 24:00:00$"},
		{"make_timestamp", []types.Value{i(2024), i(4), i(31), i(0), i(0), i(0)}, "error 22008 ^date field value out of range: 2024-04-31$"},
		{"make_timestamp", []types.Value{i(2024), i(1), i(1), i(24), i(0), f8(1.5)}, "error 22008 ^time field value out of range: 24:00:1.5$"},
		{"make_timestamp", []types.Value{i(2024), i(1), i(1), i(0), i(0), f8(-1)}, "error 22008 ^time field value out of range: 0:00:-1$"},
		{"make_timestamp", []types.Value{i(2024), i(1), i(1), i(0), i(0), parsed(tFloat8, "NaN")}, "error 22008 ^time field value out of range: 0:00:NaN$"},
		{"make_timestamp", []types.Value{i(-1), i(1), i(1), i(0), i(0), i(0)}, "error 22008 ^timestamp out of range: -1-01-01 0:00:00$"},

		{"date_bin", []types.Value{iv("15 minutes"), ts("2020-02-11 15:44:17"), ts("2001-01-01")}, "2020-02-11 15:30:00.000000"},
		{"date_bin", []types.Value{iv("1 hour"), ts("2000-01-01 00:30"), ts("2000-01-01 01:00")}, "2000-01-01 00:00:00.000000"},
		{"date_bin", []types.Value{iv("1 hour"), ts("2000-01-01 00:00"), ts("2000-01-01 01:00")}, "2000-01-01 00:00:00.000000"},
		{"date_bin", []types.Value{iv("1 day 12 hours"), day("2024-03-05"), ts("2024-01-01 06:00")}, "2024-03-04 06:00:00.000000"},
		{"date_bin", []types.Value{iv("1 month"), ts("2020-02-11"), ts("2001-01-01")}, "error 0A000 ^timestamps cannot be binned into intervals containing months or years$"},
		{"date_bin", []types.Value{iv("-1 day"), ts("2020-02-11"), ts("2001-01-01")}, "error 22008 ^stride must be greater than zero$"},
		{"date_bin", []types.Value{iv("1 day -24 hours"), ts("2020-02-11"), ts("2001-01-01")}, "error 22008 ^stride must be greater than zero$"},
		{"date_bin", []types.Value{iv("1 hour"), ts("0001-01-01 00:30"), ts("0001-01-01 00:45")}, "error 22008 ^timestamp out of range$"},

		{"age", []types.Value{ts("2024-03-31"), ts("2023-01-31 12:00")}, "1 year 1 mon 30 days 12:00:00"},
		{"age", []types.Value{ts("2023-01-31 12:00"), ts("2024-03-31")}, "-1 years -1 mons -30 days -12:00:00"},
		{"age", []types.Value{ts("2001-04-10"), ts("1957-06-13")}, "43 years 9 mons 27 days"},
		{"age", []types.Value{ts("2024-05-31"), ts("2024-02-29")}, "3 mons 2 days"},
		{"age", []types.Value{ts("2024-03-01"), ts("2024-02-29 00:00:00.5")}, "23:59:59.5"},
		{"age", []types.Value{day("2024-03-01"), day("2024-03-01")}, "00:00:00"},

		{"justify_hours", []types.Value{iv("1 mon 35 days 25:00:00")}, "1 mon 36 days 01:00:00"},
		{"justify_hours", []types.Value{iv("-50 hours")}, "-2 days -02:00:00"},
		{"justify_hours", []types.Value{iv("1 day -25 hours")}, "-01:00:00"},
		{"justify_days", []types.Value{iv("-65 days")}, "-2 mons -5 days"},
		{"justify_days", []types.Value{iv("1 year -400 days")}, "-1 mons -10 days"},
		{"justify_interval", []types.Value{iv("1 mon -1 hour")}, "29 days 23:00:00"},
		{"justify_interval", []types.Value{iv("-1 mon 35 days -25:00:00")}, "3 days 23:00:00"},
		{"justify_interval", []types.Value{iv("29 days 24 hours")}, "1 mon"},
		{"justify_interval", []types.Value{iv("-1 mon 1 hour")}, "-29 days -23:00:00"},
		{"justify_days", []types.Value{iv("2147483647 mons 30 days")}, "error 22008 ^interval out of range$"},
	})
}

// TestHashFuncs checks to_hex and the SHA-2 digests against PostgreSQL's.
func TestHashFuncs(t *testing.T) {
	i4 := func(x int64) types.Value { v, _ := types.NewInt(types.Of(types.Int32), x); return v }
	runFuncCases(t, []funcCase{
		{"to_hex", []types.Value{i4(255)}, "ff"},
		{"to_hex", []types.Value{i4(-1)}, "ffffffff"},
		{"to_hex", []types.Value{i4(-2147483648)}, "80000000"},
		{"to_hex", []types.Value{types.NewInt64(-1)}, "ffffffffffffffff"},
		{"to_hex", []types.Value{types.NewInt64(0)}, "0"},
		{"to_hex", []types.Value{types.NewUint64(1<<64 - 1)}, "ffffffffffffffff"},
		{"to_hex", []types.Value{parsed(types.Of(types.Int16), "-16")}, "fffffff0"},
		{"to_hex", []types.Value{null}, "NULL"},
	})
	for _, c := range []struct{ name, want string }{
		{"sha224", "23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7"},
		{"sha256", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"sha384", "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7"},
		{"sha512", "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f"},
	} {
		got, typ, err := callFunc(t, c.name, types.NewBytes([]byte("abc")))
		if err != nil || typ.Kind != types.Bytes || !strings.Contains(got, c.want) {
			t.Errorf("%s('abc') = %s (%s), %v; want %s", c.name, got, typ, err, c.want)
		}
	}
	if _, _, err := NewFunc("sha256", []types.Type{types.Of(types.String)}, 0); sqlerr.CodeOf(err) != sqlerr.CodeUndefinedFunction {
		t.Errorf("sha256(text): %v, want 42883 as PostgreSQL", err)
	}
	if _, _, err := NewFunc("to_hex", []types.Type{types.Of(types.Int128)}, 0); sqlerr.CodeOf(err) != sqlerr.CodeUndefinedFunction {
		t.Errorf("to_hex(INT128): %v, want 42883", err)
	}
}

// TestDateFuncsVectorized runs to_timestamp and sha256 over a batch with
// NULLs: row by row as the single calls, and without an allocation per
// row.
func TestDateFuncsVectorized(t *testing.T) {
	const n = 1024
	fl := types.NewVector(tFloat8, n)
	by := types.NewVector(types.Of(types.Bytes), n)
	for i := range n {
		if i%5 == 2 {
			fl.AppendNull()
			by.AppendNull()
			continue
		}
		fl.AppendFloat64(float64(i) * 1.25)
		by.AppendBytes([]byte{byte(i), byte(i >> 8)})
	}
	b := &types.Batch{Cols: []*types.Vector{fl, by}, Rows: n}
	for _, c := range []struct {
		name string
		col  int
	}{{"to_timestamp", 0}, {"sha256", 1}} {
		ct := b.Cols[c.col].Type()
		f, sig, err := NewFunc(c.name, []types.Type{ct}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if sig.Params[0] != ct {
			t.Fatalf("%s(%s) takes %s", c.name, ct, sig.Params[0])
		}
		f.Args = []Expr{&Col{Name: "x", Idx: c.col, T: ct}}
		ctx := NewCtx(context.Background(), nil, nil)
		out, err := f.Eval(ctx, b)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for i := range n {
			if out.IsNull(i) != (i%5 == 2) {
				t.Fatalf("%s row %d: NULL is %v", c.name, i, out.IsNull(i))
			}
		}
		allocs := testing.AllocsPerRun(10, func() {
			ctx.Reset()
			if _, err := f.Eval(ctx, b); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > 8 {
			t.Errorf("%s over %d rows: %.0f allocations, want a few per batch", c.name, n, allocs)
		}
	}
}

func TestGenerateTimeSeries(t *testing.T) {
	ivT := types.Of(types.Interval)
	f, err := NewTableFunc("generate_series", []types.Type{tsType, tsType, ivT}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if f.Result != tsType {
		t.Fatalf("result %s, want %s", f.Result, tsType)
	}
	short := func(rows []string) string {
		for i, r := range rows {
			rows[i] = strings.TrimSuffix(strings.TrimSuffix(r, ".000000"), " 00:00:00")
		}
		return strings.Join(rows, " ")
	}
	for _, c := range []struct {
		args []types.Value
		want string
	}{
		{[]types.Value{ts("2024-01-01"), ts("2024-01-03"), iv("1 day")}, "2024-01-01 2024-01-02 2024-01-03"},
		{[]types.Value{ts("2024-01-01 00:00"), ts("2024-01-01 01:00"), iv("30 minutes")}, "2024-01-01 2024-01-01 00:30:00 2024-01-01 01:00:00"},
		// months add to the previous value, clamped each time
		{[]types.Value{ts("2024-01-31"), ts("2024-05-01"), iv("1 mon")}, "2024-01-31 2024-02-29 2024-03-29 2024-04-29"},
		{[]types.Value{ts("2024-01-03"), ts("2024-01-01"), iv("-1 day")}, "2024-01-03 2024-01-02 2024-01-01"},
		// the span's sign is the direction
		{[]types.Value{ts("2024-03-01"), ts("2024-02-01"), iv("1 mon -45 days")}, "2024-03-01 2024-02-16"},
		{[]types.Value{ts("2024-01-02"), ts("2024-01-01"), iv("1 day")}, ""},
		{[]types.Value{ts("2024-01-01"), types.Null(tsType), iv("1 day")}, ""},
		// the series ends where the next value would leave the years
		{[]types.Value{ts("9999-12-30"), ts("9999-12-31 12:00"), iv("1 day")}, "9999-12-30 9999-12-31"},
		{[]types.Value{ts("9999-12-30"), ts("9999-12-31 12:00"), iv("1 mon")}, "9999-12-30"},
		{[]types.Value{ts("0001-01-02"), ts("0001-01-01"), iv("-1 day")}, "0001-01-02 0001-01-01"},
	} {
		got, _, err := rowsOf(t, f, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if s := short(got); s != c.want {
			t.Errorf("generate_series(%s) = %q, want %q", valuesText(c.args), s, c.want)
		}
	}
	_, _, err = rowsOf(t, f, ts("2024-01-01"), ts("2024-01-02"), iv("0 days"))
	if e, ok := sqlerr.As(err); !ok || e.Code != sqlerr.CodeInvalidParameter || e.Message != "step size cannot equal zero" {
		t.Errorf("step 0: %v, want 22023", err)
	}
	// A whole year of minutes arrives in full batches, and an error from
	// the consumer (the executor's cancel check) stops the series at once.
	got, sizes, err := rowsOf(t, f, ts("2024-01-01"), ts("2024-01-02"), iv("1 minute"))
	if err != nil || len(got) != 1441 || len(sizes) != 2 || sizes[0] != TableFuncBatch {
		t.Errorf("a day of minutes: %d rows in batches %v, %v", len(got), sizes, err)
	}
	stop := errors.New("canceled")
	calls := 0
	err = f.Generate([]types.Value{ts("2000-01-01"), ts("9999-01-01"), iv("1 second")}, func(*types.Vector) error {
		calls++
		return stop
	})
	if err != stop || calls != 1 {
		t.Errorf("consumer error: %v after %d batches, want it after 1", err, calls)
	}
}

func TestTimeSeriesTypes(t *testing.T) {
	ivT, unk := types.Of(types.Interval), types.Of(types.Unknown)
	ny := types.Type{Kind: types.DateTime64, Precision: 3, TZ: "America/New_York"}
	for _, c := range []struct {
		args []types.Type
		want types.Type
	}{
		{[]types.Type{tsType, tsType, ivT}, tsType},
		{[]types.Type{types.Of(types.Date), types.Of(types.Date), ivT}, tsType},
		// a zoned millisecond start: its zone, microseconds (a finer
		// step would not move it)
		{[]types.Type{ny, unk, unk}, types.Type{Kind: types.DateTime64, Precision: 6, TZ: "America/New_York"}},
		{[]types.Type{{Kind: types.DateTime64, Precision: 9}, unk, ivT}, types.Type{Kind: types.DateTime64, Precision: 9}},
		{[]types.Type{unk, unk, ivT}, tsType},
	} {
		f, err := NewTableFunc("generate_series", c.args, 0)
		if err != nil {
			t.Errorf("%v: %v", c.args, err)
			continue
		}
		if f.Result != c.want || f.Params[2] != ivT {
			t.Errorf("%v: %s(%v), want %s", c.args, f.Result, f.Params, c.want)
		}
	}
	for _, args := range [][]types.Type{
		{tsType, tsType, types.Of(types.Int64)},
		{tsType, types.Of(types.Int64), ivT},
		{tsType, tsType},
	} {
		if _, err := NewTableFunc("generate_series", args, 0); sqlerr.CodeOf(err) != sqlerr.CodeUndefinedFunction {
			t.Errorf("%v: %v, want 42883", args, err)
		}
	}
}
