package expr

import (
	"context"
	"testing"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// TestStringFuncs checks results and errors against PostgreSQL 15's,
// multibyte UTF-8 included (positions and lengths count characters).
func TestStringFuncs(t *testing.T) {
	i := func(x int64) types.Value { return types.NewInt64(x) }
	runFuncCases(t, []funcCase{
		{"replace", []types.Value{str("abc"), str(""), str("x")}, "abc"},
		{"replace", []types.Value{str("aaa"), str("aa"), str("b")}, "ba"},
		{"replace", []types.Value{str("日本日本"), str("日"), str("x")}, "x本x本"},
		{"replace", []types.Value{str("abc"), null, str("x")}, "NULL"},
		{"strpos", []types.Value{str("héllo"), str("l")}, "3"},
		{"strpos", []types.Value{str("日本語"), str("語")}, "3"},
		{"strpos", []types.Value{str("abc"), str("")}, "1"},
		{"strpos", []types.Value{str(""), str("a")}, "0"},
		{"lpad", []types.Value{str("héllo"), i(7), str("äb")}, "äbhéllo"},
		{"rpad", []types.Value{str("hé"), i(5), str("xy")}, "héxyx"},
		{"lpad", []types.Value{str("hello"), i(2)}, "he"},
		{"rpad", []types.Value{str("hello"), i(2)}, "he"},
		{"lpad", []types.Value{str("x"), i(3), str("")}, "x"},
		{"lpad", []types.Value{str("x"), i(-1)}, ""},
		{"lpad", []types.Value{str(""), i(3), str("ab")}, "aba"},
		{"lpad", []types.Value{str("x"), i(1 << 40), str("ab")}, "error 54000 ^requested length too large$"},
		{"left", []types.Value{str("abcde"), i(-2)}, "abc"},
		{"right", []types.Value{str("abcde"), i(-2)}, "cde"},
		{"left", []types.Value{str("abc"), i(-5)}, ""},
		{"right", []types.Value{str("abc"), i(10)}, "abc"},
		{"left", []types.Value{str("日本語"), i(2)}, "日本"},
		{"right", []types.Value{str("日本語"), i(1)}, "語"},
		{"repeat", []types.Value{str("é"), i(3)}, "ééé"},
		{"repeat", []types.Value{str("x"), i(0)}, ""},
		{"repeat", []types.Value{str("x"), i(-3)}, ""},
		{"repeat", []types.Value{str("ab"), i(1 << 40)}, "error 54000 ^requested length too large$"},
		{"reverse", []types.Value{str("héllo")}, "olléh"},
		{"reverse", []types.Value{str("")}, ""},
		{"split_part", []types.Value{str("a,b,c"), str(","), i(-1)}, "c"},
		{"split_part", []types.Value{str("a,b,c"), str(","), i(-4)}, ""},
		{"split_part", []types.Value{str("a,b,c"), str(","), i(4)}, ""},
		{"split_part", []types.Value{str("a,,b"), str(","), i(2)}, ""},
		{"split_part", []types.Value{str(""), str(","), i(1)}, ""},
		{"split_part", []types.Value{str("abc"), str(""), i(1)}, "abc"},
		{"split_part", []types.Value{str("abc"), str(""), i(-1)}, "abc"},
		{"split_part", []types.Value{str("abc"), str(""), i(2)}, ""},
		{"split_part", []types.Value{str("a€b€c"), str("€"), i(-3)}, "a"},
		{"split_part", []types.Value{str("a,b"), str(","), i(0)}, "error 22023 ^field position must not be zero$"},
		{"initcap", []types.Value{str("hello wORLD foo_bar 1st élan ÉCOLE o'neil")}, "Hello World Foo_Bar 1st Élan École O'Neil"},
		{"chr", []types.Value{i(233)}, "é"},
		{"chr", []types.Value{i(0)}, "error 54000 ^null character not permitted$"},
		{"chr", []types.Value{i(-1)}, "error 22023 ^character number must be positive"},
		{"chr", []types.Value{i(0x110000)}, "error 54000 ^requested character too large for encoding: 1114112$"},
		{"chr", []types.Value{i(0xD800)}, "error 54000 ^requested character not valid for encoding: 55296$"},
		{"ascii", []types.Value{str("€uro")}, "8364"},
		{"ascii", []types.Value{str("")}, "0"},
		{"starts_with", []types.Value{str("日本"), str("日")}, "true"},
		{"starts_with", []types.Value{str("abc"), str("")}, "true"},
		{"starts_with", []types.Value{str("abc"), str("b")}, "false"},
		{"md5", []types.Value{str("")}, "d41d8cd98f00b204e9800998ecf8427e"},
		{"md5", []types.Value{str("é")}, "66ddcd97cfdeabb2f6fb8a999b4bc76f"},
		{"md5", []types.Value{types.NewBytes([]byte("abc"))}, "900150983cd24fb0d6963f7d28e17f72"},
		{"overlay", []types.Value{str("abcdef"), str("XY"), i(2), i(3)}, "aXYef"},
		{"overlay", []types.Value{str("abcdef"), str("XY"), i(2)}, "aXYdef"},
		{"overlay", []types.Value{str("abc"), str("XY"), i(10), i(1)}, "abcXY"},
		{"overlay", []types.Value{str("abc"), str("X"), i(1), i(-1)}, "Xabc"},
		{"overlay", []types.Value{str("日本語"), str("x"), i(2), i(1)}, "日x語"},
		{"overlay", []types.Value{str("abc"), str("X"), i(0)}, "error 22011 ^negative substring length not allowed$"},
		{"concat_ws", []types.Value{str(","), str("a"), null, str("1"), str("2.5")}, "a,1,2.5"},
		{"concat_ws", []types.Value{null, str("a")}, "NULL"},
		{"substring", []types.Value{str("abc"), str("b.")}, "bc"},
		{"substring", []types.Value{str("abcd"), str("b(.)")}, "c"},
		{"substring", []types.Value{str("abc"), str("z")}, "NULL"},
		{"substring", []types.Value{str("abc"), i(2), i(-1)}, "error 22011 ^negative substring length not allowed$"},
		{"regexp_replace", []types.Value{str("abcabc"), str("b"), str("X")}, "aXcabc"},
		{"regexp_replace", []types.Value{str("abcabc"), str("B"), str("X"), str("gi")}, "aXcaXc"},
		{"regexp_replace", []types.Value{str("a.b"), str(`(.)\.(.)`), str(`\2-\1`)}, "b-a"},
		{"regexp_replace", []types.Value{str("abc"), str("(b)"), str(`<\1\0\9\&\\\x>`)}, `a<b\0b\\x>c`},
		{"regexp_replace", []types.Value{str("abc"), str("b"), str(`x\`)}, `ax\c`},
		{"regexp_replace", []types.Value{str("abc"), str("z*"), str("-"), str("g")}, "-a-b-c-"},
		{"regexp_replace", []types.Value{str("a\nb"), str("a.b"), str("X")}, "X"},
		{"regexp_replace", []types.Value{str("a\nb"), str("a.b"), str("X"), str("n")}, "a\nb"},
		{"regexp_replace", []types.Value{str("日本語"), str("本"), str("x")}, "日x語"},
		{"regexp_replace", []types.Value{str("a"), str("("), str("b")}, "error 2201B ^invalid regular expression"},
		{"regexp_replace", []types.Value{str("a"), str("a"), str("b"), str("z")}, `error 22023 ^invalid regular expression option: "z"$`},
		{"regexp_like", []types.Value{str("Abc"), str("^a")}, "false"},
		{"regexp_like", []types.Value{str("Abc"), str("^a"), str("i")}, "true"},
		{"regexp_like", []types.Value{str("Abc"), str("^a"), str("g")}, "error 22023 global"},
	})
}

// TestStringBatchLimit: rows that each fit the limit of one value but not
// together in one batch are refused, not built (with the batch limit
// lowered from 1 GB to 1 MB for the test).
func TestStringBatchLimit(t *testing.T) {
	defer func(old int64) { maxBatchBytes = old }(maxBatchBytes)
	maxBatchBytes = 1 << 20
	const n = 8
	in := types.NewVector(types.Of(types.String), n)
	for range n {
		in.AppendString("ab")
	}
	f, _, err := NewFunc("repeat", []types.Type{types.Of(types.String), types.Of(types.Int64)}, 3)
	if err != nil {
		t.Fatal(err)
	}
	f.Args = []Expr{&Col{Name: "s", T: types.Of(types.String)}, NewConst(types.NewInt64(maxBatchBytes / 2 / 5))}
	_, err = f.Eval(NewCtx(context.Background(), nil, nil), &types.Batch{Cols: []*types.Vector{in}, Rows: n})
	if se, ok := sqlerr.As(err); !ok || se.Code != "54000" || se.Pos != 3 {
		t.Fatalf("repeat over a batch of %d rows of %d bytes: %v, want 54000 at 3", n, maxBatchBytes/5, err)
	}
}

// TestStringVectorized runs strpos and lpad over a column with NULLs:
// the fixed-size strpos allocates nothing per row, lpad builds its
// strings in one buffer.
func TestStringVectorized(t *testing.T) {
	const n = 1024
	in := types.NewVector(types.Of(types.String), n)
	for i := range n {
		if i%5 == 0 {
			in.AppendNull()
		} else {
			in.AppendString(string(rune('a'+i%26)) + "日本")
		}
	}
	b := &types.Batch{Cols: []*types.Vector{in}, Rows: n}
	tStr := types.Of(types.String)
	c := NewCtx(context.Background(), nil, nil)
	for _, tc := range []struct {
		name      string
		args      []Expr
		row       func(i int) string
		maxAllocs float64
	}{
		{"strpos", []Expr{&Col{Name: "s", T: tStr}, NewConst(str("本"))}, func(int) string { return "3" }, 2},
		{"lpad", []Expr{&Col{Name: "s", T: tStr}, NewConst(types.NewInt64(5)), NewConst(str("é"))},
			func(i int) string { return "éé" + string(rune('a'+i%26)) + "日本" }, 8},
	} {
		ts := make([]types.Type, len(tc.args))
		for i, a := range tc.args {
			ts[i] = a.Type()
		}
		f, _, err := NewFunc(tc.name, ts, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.Args = tc.args
		out, err := f.Eval(c, b)
		if err != nil {
			t.Fatal(err)
		}
		for i := range n {
			if i%5 == 0 {
				if !out.IsNull(i) {
					t.Fatalf("%s row %d: %v, want NULL", tc.name, i, out.Get(i))
				}
				continue
			}
			if got := out.Get(i).String(); got != tc.row(i) {
				t.Fatalf("%s row %d: %q, want %q", tc.name, i, got, tc.row(i))
			}
		}
		allocs := testing.AllocsPerRun(20, func() {
			c.Reset()
			if _, err := f.Eval(c, b); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > tc.maxAllocs {
			t.Errorf("%s over %d rows: %.0f allocations, want at most %.0f (none per row)", tc.name, n, allocs, tc.maxAllocs)
		}
	}
}
