package pgwire

import (
	"encoding/binary"
	"math"
	"math/big"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/strata-db/strata/internal/session"
	"github.com/strata-db/strata/internal/types"
)

// TestNumericBinary: every decimal text survives PostgreSQL's base-10000
// binary numeric both ways, and pgx's own decoder reads the same number.
func TestNumericBinary(t *testing.T) {
	m := pgtype.NewMap()
	for _, s := range []string{
		"0", "1", "-1", "9999", "10000", "-10000", "12345678", "100000000",
		"0.5", "-0.0001", "0.00001", "123.4500", "1.000000001", "10000.0001",
		"115792089237316195423570985008687907853269984665640564039457584007913129639935",
		"-57896044618658097711785492504343953926634992332820282019728792003956564819968",
		"0.000", "5000000000000000000000.1",
	} {
		b, err := appendNumeric(nil, []byte(s))
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		back, err := numericText(b)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		want := s
		if back != want {
			t.Errorf("%s: round trip gave %s", s, back)
		}
		var n pgtype.Numeric
		if err := m.Scan(oidNumeric, 1, b, &n); err != nil {
			t.Fatalf("%s: pgx scan: %v", s, err)
		}
		var text pgtype.Numeric
		if err := m.Scan(oidNumeric, 0, []byte(s), &text); err != nil {
			t.Fatal(err)
		}
		if n.Int.Cmp(text.Int) != 0 || n.Exp != text.Exp && n.Int.Sign() != 0 {
			// Compare by value: scale each to the smaller exponent.
			a, b := n, text
			for a.Exp > b.Exp {
				a.Int.Mul(a.Int, bigTen)
				a.Exp--
			}
			for b.Exp > a.Exp {
				b.Int.Mul(b.Int, bigTen)
				b.Exp--
			}
			if a.Int.Cmp(b.Int) != 0 {
				t.Errorf("%s: pgx read the binary as %v e%d", s, n.Int, n.Exp)
			}
		}
	}
	for _, bad := range []string{"1e5", "NaN", "1.2.3", "--1"} {
		if _, err := appendNumeric(nil, []byte(bad)); err == nil {
			t.Errorf("%q encoded", bad)
		}
	}
}

// TestTextForms: the text PostgreSQL clients parse.
func TestTextForms(t *testing.T) {
	ts, err := types.ParseText(types.Type{Kind: types.DateTime64, Precision: 3, TZ: "Asia/Kolkata"}, "2024-01-01 00:00:00.120")
	if err != nil {
		t.Fatal(err)
	}
	utc, _ := types.ParseText(types.Type{Kind: types.DateTime64, Precision: 0}, "2024-06-01 12:00:00")
	for _, c := range []struct {
		v    types.Value
		want string
	}{
		{types.NewBool(true), "t"},
		{types.NewBool(false), "f"},
		{ts, "2024-01-01 00:00:00.120+05:30"},
		{utc, "2024-06-01 12:00:00+00"},
		{types.NewBytes([]byte{1, 0xab}), `\x01ab`},
		{types.NewFloat64(1e20), "1e+20"},
	} {
		if got := string(appendText(nil, c.v)); got != c.want {
			t.Errorf("%v: %q, want %q", c.v, got, c.want)
		}
	}
}

// TestBinaryParams decodes what a driver sends in binary.
func TestBinaryParams(t *testing.T) {
	m := pgtype.NewMap()
	enc := func(oid uint32, v any) []byte {
		b, err := m.Encode(oid, 1, v, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, c := range []struct {
		oid  uint32
		v    any
		want string
	}{
		{oidInt2, int16(-7), "-7"},
		{oidInt4, int32(70000), "70000"},
		{oidInt8, int64(-1 << 62), "-4611686018427387904"},
		{oidFloat8, 0.25, "0.25"},
		{oidBool, true, "true"},
		{oidText, "héllo", "héllo"},
		{oidDate, "2024-02-29", "2024-02-29"},
		{oidNumeric, "-12.340", "-12.340"},
	} {
		var b []byte
		if c.oid == oidDate {
			var d pgtype.Date
			if err := d.Scan(c.v); err != nil {
				t.Fatal(err)
			}
			b = enc(c.oid, d)
		} else if c.oid == oidNumeric {
			var n pgtype.Numeric
			if err := n.Scan(c.v); err != nil {
				t.Fatal(err)
			}
			b = enc(c.oid, n)
		} else {
			b = enc(c.oid, c.v)
		}
		v, err := decodeParam(c.oid, 1, b)
		if err != nil {
			t.Fatalf("%d: %v", c.oid, err)
		}
		if got := v.String(); got != c.want {
			t.Errorf("%d %v: %s, want %s", c.oid, c.v, got, c.want)
		}
	}
	if _, err := decodeParam(oidInt4, 1, []byte{1, 2}); err == nil {
		t.Error("a 2-byte int4 decoded")
	}
	if _, err := decodeParam(0, 1, []byte{1}); err == nil {
		t.Error("a binary parameter of unknown type decoded")
	}
}

var bigTen = big.NewInt(10)

// TestConform: a column that runs as another wire type than its Describe
// announced is cast to the announced one, or fails cleanly.
func TestConform(t *testing.T) {
	res := &session.Result{Columns: []session.Column{{Name: "x", Type: types.Of(types.String)}},
		Rows: [][]types.Value{{types.NewString("42")}, {types.Null(types.Of(types.String))}}}
	described := []session.Column{{Name: "x", Type: types.Of(types.Int64)}}
	if err := conform(res, described); err != nil {
		t.Fatal(err)
	}
	if res.Columns[0].Type.Kind != types.Int64 || res.Rows[0][0].Kind() != types.Int64 || res.Rows[0][0].Int64() != 42 || !res.Rows[1][0].IsNull() {
		t.Fatalf("not conformed: %+v", res)
	}
	res.Columns[0].Type = types.Of(types.String)
	res.Rows[0][0] = types.NewString("forty-two")
	if err := conform(res, described); err == nil {
		t.Fatal("an uncastable value conformed")
	}
}

// TestIntervalWire checks INTERVAL's wire form: OID 1186, PostgreSQL's
// text, and the binary layout (microseconds, days, months) both ways.
func TestIntervalWire(t *testing.T) {
	v, err := types.ParseInterval("1 year 2 mons -3 days 04:05:06.5", types.NoField)
	if err != nil {
		t.Fatal(err)
	}
	if ti := wireType(v.Type()); ti.oid != oidInterval || ti.size != 16 {
		t.Errorf("wire type %+v", ti)
	}
	if got := string(appendText(nil, v)); got != "1 year 2 mons -3 days +04:05:06.5" {
		t.Errorf("text %q", got)
	}
	b, err := appendBinary(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	// pgx's own decoder reads the same fields.
	var iv pgtype.Interval
	if err := pgtype.NewMap().Scan(oidInterval, pgtype.BinaryFormatCode, b, &iv); err != nil {
		t.Fatal(err)
	}
	if iv.Months != 14 || iv.Days != -3 || iv.Microseconds != 14_706_500_000 {
		t.Errorf("pgx reads %+v", iv)
	}
	back, err := decodeParam(oidInterval, 1, b)
	if err != nil || back.String() != v.String() {
		t.Errorf("binary reads back as %v (%v)", back, err)
	}
}

// Binary timestamps and dates far from 2000 decode exactly (the
// microseconds are not made a time.Duration, which wraps after 292
// years), and those outside years 1 to 9999 are refused as a text one
// would be (types.CheckTime).
func TestDecodeBinaryTimeRange(t *testing.T) {
	ts := func(us int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(us)) }
	const usPerDay = 86400 * 1_000_000
	// 9999-12-31 23:59:59.999999 and 0001-01-01 00:00:00, in µs since 2000.
	last := (int64(2921939)+1)*usPerDay - 1
	first := int64(-730119) * usPerDay
	for _, c := range []struct {
		b    []byte
		want string
	}{
		{ts(last), "9999-12-31 23:59:59.999999"},
		{ts(first), "0001-01-01 00:00:00.000000"},
		{ts(-1), "1999-12-31 23:59:59.999999"},
	} {
		v, err := decodeParam(oidTimestamp, 1, c.b)
		if err != nil || v.String() != c.want {
			t.Errorf("%x: %v %v, want %s", c.b, v, err, c.want)
		}
	}
	for _, b := range [][]byte{ts(last + 1), ts(first - 1), ts(math.MaxInt64), ts(math.MinInt64)} {
		if v, err := decodeParam(oidTimestamp, 1, b); err == nil {
			t.Errorf("%x decoded as %v, want a range error", b, v)
		}
	}
	if v, err := decodeParam(oidDate, 1, binary.BigEndian.AppendUint32(nil, 2921940)); err == nil {
		t.Errorf("10000-01-01 decoded as %v, want a range error", v)
	}
	if v, err := decodeParam(oidDate, 1, binary.BigEndian.AppendUint32(nil, 2921939)); err != nil || v.String() != "9999-12-31" {
		t.Errorf("9999-12-31: %v %v", v, err)
	}
}
