package expr

import (
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// rowsOf runs a table function and returns its rows as text ("NULL" for
// NULL) and the batch sizes it emitted.
func rowsOf(t *testing.T, f *TableFunc, args ...types.Value) ([]string, []int, error) {
	t.Helper()
	var out []string
	var sizes []int
	err := f.Generate(args, func(v *types.Vector) error {
		sizes = append(sizes, v.Len())
		for i := 0; i < v.Len(); i++ {
			if v.IsNull(i) {
				out = append(out, "NULL")
			} else {
				out = append(out, v.Get(i).String())
			}
		}
		return nil
	})
	return out, sizes, err
}

func i64(x int64) types.Value { return types.NewInt64(x) }

func TestGenerateSeries(t *testing.T) {
	i8 := types.Of(types.Int64)
	f, err := NewTableFunc("generate_series", []types.Type{i8, i8, i8}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []types.Value
		want string
	}{
		{[]types.Value{i64(1), i64(5), i64(1)}, "1 2 3 4 5"},
		{[]types.Value{i64(10), i64(1), i64(-3)}, "10 7 4 1"},
		{[]types.Value{i64(5), i64(1), i64(1)}, ""},
		{[]types.Value{i64(0), i64(0), i64(7)}, "0"},
		{[]types.Value{types.Null(i8), i64(3), i64(1)}, ""},
		// The last value before overflow ends the series instead of
		// wrapping around.
		{[]types.Value{i64(9223372036854775806), i64(9223372036854775807), i64(5)}, "9223372036854775806"},
		{[]types.Value{i64(-9223372036854775807), i64(-9223372036854775808), i64(-1)}, "-9223372036854775807 -9223372036854775808"},
	} {
		got, _, err := rowsOf(t, f, c.args...)
		if err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		if s := strings.Join(got, " "); s != c.want {
			t.Errorf("generate_series%v = %q, want %q", c.args, s, c.want)
		}
	}
	_, _, err = rowsOf(t, f, i64(1), i64(2), i64(0))
	if e, ok := sqlerr.As(err); !ok || e.Code != sqlerr.CodeInvalidParameter {
		t.Errorf("step 0: %v, want 22023", err)
	}
	// Batches are full but for the last.
	got, sizes, err := rowsOf(t, f, i64(1), i64(2500), i64(1))
	if err != nil || len(got) != 2500 || len(sizes) != 3 || sizes[0] != TableFuncBatch || sizes[2] != 2500-2*TableFuncBatch {
		t.Errorf("2500 rows: %d rows in batches %v, %v", len(got), sizes, err)
	}
}

func TestTableFuncTypes(t *testing.T) {
	i2, i4, i8 := types.Of(types.Int16), types.Of(types.Int32), types.Of(types.Int64)
	unk := types.Of(types.Unknown)
	for _, c := range []struct {
		args []types.Type
		want types.Kind
	}{
		{[]types.Type{i4, i4}, types.Int32},
		{[]types.Type{i2, unk}, types.Int32},
		{[]types.Type{i4, i8}, types.Int64},
		{[]types.Type{i4, i4, i8}, types.Int64},
	} {
		f, err := NewTableFunc("generate_series", c.args, 0)
		if err != nil || f.Result.Kind != c.want {
			t.Errorf("generate_series%v: %v %v, want %v", c.args, f, err, c.want)
		}
	}
	for _, c := range []struct {
		name string
		args []types.Type
		code string
	}{
		{"generate_series", []types.Type{i4}, sqlerr.CodeUndefinedFunction},
		{"generate_series", []types.Type{types.Of(types.String), i4}, sqlerr.CodeUndefinedFunction},
		{"generate_series", []types.Type{types.Of(types.Uint64), i4}, sqlerr.CodeUndefinedFunction},
		{"unnest", []types.Type{i4}, sqlerr.CodeUndefinedFunction},
		{"no_such", nil, sqlerr.CodeUndefinedFunction},
	} {
		_, err := NewTableFunc(c.name, c.args, 3)
		e, ok := sqlerr.As(err)
		if !ok || e.Code != c.code || e.Pos != 3 {
			t.Errorf("%s%v: %v, want %s at 3", c.name, c.args, err, c.code)
		}
	}
}

func TestUnnest(t *testing.T) {
	f, err := NewTableFunc("unnest", []types.Type{types.Of(types.String)}, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := rowsOf(t, f, types.NewString(`{a,"b c",NULL,"NULL",""}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := strings.Join(got, "|"); s != "a|b c|NULL|NULL|" {
		t.Errorf("unnest = %q", s)
	}
	if got, _, _ := rowsOf(t, f, types.NewString("{}")); len(got) != 0 {
		t.Errorf("unnest('{}') = %q", got)
	}
	if _, _, err := rowsOf(t, f, types.NewString("a,b")); err == nil {
		t.Errorf("unnest('a,b'): no error")
	}
}

func TestAppendArrayElem(t *testing.T) {
	var b []byte
	for i, e := range []string{"a", "b c", "", "null", `q"\`} {
		if i > 0 {
			b = append(b, ',')
		}
		b = AppendArrayElem(b, e, false)
	}
	b = AppendArrayElem(append(b, ','), "", true)
	if got, want := "{"+string(b)+"}", `{a,"b c","","null","q\"\\",NULL}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	elems, nulls, err := parseArrayText("{" + string(b) + "}")
	if err != nil || len(elems) != 6 || elems[4] != `q"\` || !nulls[5] || nulls[3] {
		t.Errorf("round trip: %q %v %v", elems, nulls, err)
	}
}
