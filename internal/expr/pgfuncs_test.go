package expr

import (
	"slices"
	"testing"

	"github.com/strata-db/strata/internal/types"
)

func TestFormatType(t *testing.T) {
	for _, c := range []struct {
		t    types.Type
		want string
	}{
		{types.Of(types.Uint256), "numeric(78,0)"},
		{types.Of(types.Uint64), "numeric(20,0)"},
		{types.Type{Kind: types.Decimal, Precision: 20, Scale: 2}, "numeric(20,2)"},
		{types.Type{Kind: types.DateTime64, Precision: 6}, "timestamp with time zone"},
		{types.Type{Kind: types.DateTime64, Precision: 3, TZ: "UTC"}, "timestamp(3) with time zone"},
		{types.Of(types.Int8), "smallint"},
		{types.Of(types.Uint32), "bigint"},
		{types.Of(types.String), "text"},
		{types.Type{Kind: types.String, Len: 10}, "character varying(10)"},
		{types.Of(types.Bytes), "bytea"},
		{types.Of(types.UUID), "uuid"},
		{types.Of(types.Date), "date"},
	} {
		oid, mod := PGType(c.t)
		if got := FormatType(oid, mod); got != c.want {
			t.Errorf("%s: format_type(%d, %d) = %q, want %q", c.t, oid, mod, got, c.want)
		}
	}
	if got := FormatType(1009, -1); got != "text[]" {
		t.Errorf("format_type(1009) = %q", got)
	}
	if got := FormatType(4242, -1); got != "???" {
		t.Errorf("format_type(4242) = %q", got)
	}
}

func TestSizePretty(t *testing.T) {
	// PostgreSQL 15's answers.
	for in, want := range map[int64]string{0: "0 bytes", 10239: "10239 bytes", 10240: "10 kB", 3145728: "3072 kB",
		123456789012: "115 GB", -10240: "-10 kB", 1 << 50: "1024 TB"} {
		if got := SizePretty(in); got != want {
			t.Errorf("pg_size_pretty(%d) = %q, want %q", in, got, want)
		}
	}
}

func TestQuoteIdent(t *testing.T) {
	for in, want := range map[string]string{"balances": "balances", "Balances": `"Balances"`, `a"b`: `"a""b"`,
		"": `""`, "x1": "x1", "1x": `"1x"`, "a b": `"a b"`} {
		if got := QuoteIdent(in); got != want {
			t.Errorf("quote_ident(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestArrayText(t *testing.T) {
	for _, c := range []struct {
		in    string
		elems []string
		nulls []bool
	}{
		{"{}", nil, nil},
		{"{a,b}", []string{"a", "b"}, []bool{false, false}},
		{`{"a b",NULL,"NULL"}`, []string{"a b", "NULL", "NULL"}, []bool{false, true, false}},
		{`{"x\"y", z }`, []string{`x"y`, "z"}, []bool{false, false}},
	} {
		elems, nulls, err := parseArrayText(c.in)
		if err != nil || !slices.Equal(elems, c.elems) || !slices.Equal(nulls, c.nulls) {
			t.Errorf("parseArrayText(%q) = %q %v %v", c.in, elems, nulls, err)
		}
	}
	for _, bad := range []string{"", "a,b", "{a", `{"a}`, "{{a}}", `{"a"b}`} {
		if _, _, err := parseArrayText(bad); err == nil {
			t.Errorf("parseArrayText(%q) is not an error", bad)
		}
	}
	in := []string{"pg_catalog", "a b", "", "null", `q"`}
	out, _, err := parseArrayText(arrayText(in))
	if err != nil || !slices.Equal(out, in) {
		t.Errorf("round trip of %q: %q %v", in, out, err)
	}
}

// fakePG is a PGEnv with one table and one setting.
type fakePG struct{}

func (fakePG) Setting(name string) (string, bool) {
	switch name {
	case "search_path":
		return `"$user", public`, true
	case "session_authorization":
		return "alice", true
	}
	return "", false
}
func (fakePG) Name(k PGObject, oid uint32) (string, bool) {
	if k == PGRelation && oid == 16385 {
		return "balances", true
	}
	return "", false
}
func (fakePG) OID(k PGObject, name string) (uint32, bool) {
	switch {
	case k == PGRelation && (name == "balances" || name == "public.balances"):
		return 16385, true
	case k == PGNamespace && (name == "public" || name == "pg_catalog"):
		return 2200, true
	}
	return 0, false
}
func (fakePG) Size(uint32) (int64, bool) { return 0, false }

func call(t *testing.T, env PGEnv, name string, args ...types.Value) (types.Value, error) {
	t.Helper()
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	f, sig, err := NewFuncEnv(name, ts, 0, env)
	if err != nil {
		return types.Value{}, err
	}
	for i := range args {
		if args[i].Type() != sig.Params[i] && !args[i].IsNull() {
			if args[i], err = types.Cast(args[i], sig.Params[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	return f.fn(args, f.T)
}

func TestPGFuncs(t *testing.T) {
	s := types.NewString
	oid := func(x uint64) types.Value { v, _ := types.NewUint(types.Of(types.Uint32), x); return v }
	for _, c := range []struct {
		name string
		args []types.Value
		want string
	}{
		{"current_user", nil, "alice"},
		{"current_schema", nil, "public"},
		{"current_schemas", []types.Value{types.NewBool(true)}, "{pg_catalog,public}"},
		{"regclass", []types.Value{s("public.balances")}, "16385"},
		{"regclass", []types.Value{oid(16385)}, "balances"},
		{"regclass", []types.Value{oid(99)}, "99"},
		{"regtype", []types.Value{oid(1184)}, "timestamp with time zone"},
		{"regtype", []types.Value{s("numeric")}, "1700"},
		{"textregexeq", []types.Value{s("balances"), s("^(balances)$")}, "true"},
		{"texticregexne", []types.Value{s("Bal"), s("^b")}, "false"},
		{"array_to_string", []types.Value{s("{a,NULL,c}"), s(","), s("*")}, "a,*,c"},
		{"array_to_string", []types.Value{s("{a,NULL,c}"), s(",")}, "a,c"},
		{"anyarray_op", []types.Value{s("="), oid(3), s("{1,3}")}, "true"},
		{"anyarray_op", []types.Value{s("="), oid(2), s("{1,NULL}")}, "NULL"},
		{"anyarray_op", []types.Value{s("<>"), oid(2), s("{1,3}"), types.NewBool(true)}, "true"},
		{"anyarray_op", []types.Value{s("="), oid(2), s("{}")}, "false"},
		{"array", []types.Value{types.Null(types.Of(types.String))}, "{}"},
		{"array_upper", []types.Value{s("{4,5,6}"), types.NewInt64(1)}, "3"},
		{"array_element", []types.Value{s("{4,5,6}"), types.NewInt64(2)}, "5"},
		{"array_element", []types.Value{s("{4,5,6}"), types.NewInt64(0)}, "NULL"},
		{"array_element", []types.Value{s("{4,NULL}"), types.NewInt64(2)}, "NULL"},
		{"pg_get_userbyid", []types.Value{oid(77)}, "unknown (OID=77)"},
	} {
		got, err := call(t, fakePG{}, c.name, c.args...)
		if err != nil {
			t.Errorf("%s%v: %v", c.name, c.args, err)
			continue
		}
		if got.String() != c.want && !(c.want == "NULL" && got.IsNull()) {
			t.Errorf("%s%v = %s, want %s", c.name, c.args, got, c.want)
		}
	}
	if _, err := call(t, fakePG{}, "regclass", s("nosuch")); err == nil || err.Error() != `relation "nosuch" does not exist` {
		t.Errorf("regclass('nosuch'): %v", err)
	}
	if _, err := call(t, fakePG{}, "textregexeq", s("x"), s("(")); err == nil {
		t.Error("a bad regular expression is not an error")
	}
	if _, err := call(t, nil, "current_user"); err == nil {
		t.Error("current_user without a session is not an error")
	}
	if _, err := call(t, fakePG{}, "format_type", s("a"), s("b"), s("c")); err == nil {
		t.Error("format_type with three arguments is not an error")
	}
}

// TestPGFuncsAnyArguments binds every PostgreSQL function to every
// combination of up to three argument types and, where it binds, calls it
// with NULLs and with ordinary values: no input panics, and an error is an
// error, never a wrong type.
func TestPGFuncsAnyArguments(t *testing.T) {
	names := []string{"version", "current_database", "current_catalog", "current_user", "session_user",
		"current_role", "current_schema", "current_schemas", "current_setting", "pg_backend_pid", "format_type",
		"pg_get_userbyid", "pg_table_is_visible", "pg_type_is_visible", "pg_function_is_visible",
		"has_table_privilege", "obj_description", "col_description", "pg_get_expr", "pg_get_indexdef",
		"pg_get_constraintdef", "pg_encoding_to_char", "quote_ident", "array_to_string", "textregexeq",
		"texticregexne", "regclass", "regtype", "regnamespace", "regrole", "to_regclass", "to_regtype", "array",
		"anyarray_op", "array_element", "array_upper", "pg_get_function_result", "pg_relation_is_publishable",
		"pg_table_size", "pg_indexes_size", "pg_size_pretty", "pg_is_in_recovery", "pg_get_serial_sequence",
		"pg_client_encoding"}
	samples := []types.Value{types.NewString("{1,NULL,\"x\"}"), types.NewString("="), types.NewInt64(-3),
		types.NewBool(true), types.Null(types.Of(types.Unknown)), types.NewFloat64(1.5)}
	for _, name := range names {
		for n := 0; n <= 3; n++ {
			combos := [][]types.Value{{}}
			for range n {
				var next [][]types.Value
				for _, c := range combos {
					for _, s := range samples {
						next = append(next, append(slices.Clone(c), s))
					}
				}
				combos = next
			}
			for _, args := range combos {
				for _, env := range []PGEnv{fakePG{}, nil} {
					checkCall(t, env, name, args)
				}
			}
		}
	}
}

func checkCall(t *testing.T, env PGEnv, name string, args []types.Value) {
	ts := make([]types.Type, len(args))
	for i, a := range args {
		ts[i] = a.Type()
	}
	f, sig, err := NewFuncEnv(name, ts, 0, env)
	if err != nil {
		return
	}
	vals := make([]types.Value, len(args))
	for i, a := range args {
		if a.IsNull() || a.Type() == sig.Params[i] {
			vals[i] = types.Null(sig.Params[i])
			if !a.IsNull() {
				vals[i] = a
			}
			continue
		}
		c, err := types.Cast(a, sig.Params[i])
		if err != nil {
			return // the binder would have refused this argument
		}
		vals[i] = c
	}
	if f.strict {
		for _, v := range vals {
			if v.IsNull() {
				return
			}
		}
	}
	z, err := f.fn(vals, f.T)
	if err == nil && !z.IsNull() && z.Type().Kind != f.T.Kind {
		t.Errorf("%s%v returned a %s, declared %s", name, args, z.Type(), f.T)
	}
}
