package pgwire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// PostgreSQL type OIDs (pg_type.oid) the server sends and accepts.
const (
	oidBool        = 16
	oidBytea       = 17
	oidInt8        = 20
	oidInt2        = 21
	oidInt4        = 23
	oidText        = 25
	oidFloat4      = 700
	oidFloat8      = 701
	oidUnknown     = 705
	oidVarchar     = 1043
	oidBPChar      = 1042
	oidDate        = 1082
	oidTimestamp   = 1114
	oidTimestamptz = 1184
	oidInterval    = 1186
	oidNumeric     = 1700
	oidUUID        = 2950
	oidName        = 19
	oidOID         = 26
	oidChar        = 18
	oidJSON        = 114
)

// pgEpochDays is 2000-01-01, PostgreSQL's binary epoch, in days since
// 1970-01-01.
const pgEpochDays = 10957

// pgEpochSec is the same instant in Unix seconds.
const pgEpochSec = pgEpochDays * 86400

// typeInfo is how one Strata type appears on the wire: its OID, typlen and
// typmod for the RowDescription.
type typeInfo struct {
	oid    uint32
	size   int16
	typmod int32
}

// wireType maps a Strata type to its nearest PostgreSQL type (the table is
// in docs/pgwire.md). Integers that do not fit the next signed PostgreSQL
// integer become numeric, so every value round-trips exactly.
func wireType(t types.Type) typeInfo {
	switch t.Kind {
	case types.Bool:
		return typeInfo{oidBool, 1, -1}
	case types.Int8, types.Int16:
		return typeInfo{oidInt2, 2, -1}
	case types.Int32, types.Uint8, types.Uint16:
		return typeInfo{oidInt4, 4, -1}
	case types.Int64, types.Uint32:
		return typeInfo{oidInt8, 8, -1}
	case types.Uint64, types.Int128, types.Uint128, types.Int256, types.Uint256:
		return typeInfo{oidNumeric, -1, -1}
	case types.Decimal:
		return typeInfo{oidNumeric, -1, (int32(t.Precision)<<16 | int32(t.Scale)) + 4}
	case types.Float32:
		return typeInfo{oidFloat4, 4, -1}
	case types.Float64:
		return typeInfo{oidFloat8, 8, -1}
	case types.Bytes:
		return typeInfo{oidBytea, -1, -1}
	case types.Date:
		return typeInfo{oidDate, 4, -1}
	case types.DateTime64:
		return typeInfo{oidTimestamptz, 8, int32(t.Precision)}
	case types.UUID:
		return typeInfo{oidUUID, 16, -1}
	case types.Interval:
		return typeInfo{oidInterval, 16, -1}
	case types.String:
		if t.Len > 0 {
			return typeInfo{oidVarchar, -1, t.Len + 4}
		}
	}
	return typeInfo{oidText, -1, -1}
}

// appendText appends v (not NULL) in PostgreSQL's text output form: the
// canonical text, except bool as t/f and DATETIME64 with its UTC offset
// ("2024-01-01 00:00:00.123+00"), printed in the column's zone.
func appendText(dst []byte, v types.Value) []byte {
	switch v.Kind() {
	case types.Bool:
		if v.Bool() {
			return append(dst, 't')
		}
		return append(dst, 'f')
	case types.DateTime64:
		dst = types.AppendText(dst, v)
		if tz := v.Type().TZ; tz == "" || tz == "UTC" {
			return append(dst, "+00"...)
		}
		_, off := v.Time().Zone()
		return appendOffset(dst, off)
	}
	return types.AppendText(dst, v)
}

// appendOffset appends a UTC offset as PostgreSQL prints it: +HH, or
// +HH:MM (and :SS) when not a whole hour.
func appendOffset(dst []byte, off int) []byte {
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	dst = append(dst, sign)
	dst = append2(dst, off/3600)
	if m, s := off/60%60, off%60; m != 0 || s != 0 {
		dst = append(dst, ':')
		dst = append2(dst, m)
		if s != 0 {
			dst = append(dst, ':')
			dst = append2(dst, s)
		}
	}
	return dst
}

func append2(dst []byte, n int) []byte {
	return append(dst, byte('0'+n/10), byte('0'+n%10))
}

// appendBinary appends v (not NULL) in the binary format of its wire type.
func appendBinary(dst []byte, v types.Value) ([]byte, error) {
	switch k := v.Kind(); k {
	case types.Bool:
		if v.Bool() {
			return append(dst, 1), nil
		}
		return append(dst, 0), nil
	case types.Int8, types.Int16:
		return binary.BigEndian.AppendUint16(dst, uint16(v.Int64())), nil
	case types.Int32:
		return binary.BigEndian.AppendUint32(dst, uint32(v.Int64())), nil
	case types.Uint8, types.Uint16:
		return binary.BigEndian.AppendUint32(dst, uint32(v.Uint64())), nil
	case types.Int64:
		return binary.BigEndian.AppendUint64(dst, uint64(v.Int64())), nil
	case types.Uint32:
		return binary.BigEndian.AppendUint64(dst, v.Uint64()), nil
	case types.Float32:
		return binary.BigEndian.AppendUint32(dst, math.Float32bits(float32(v.Float64()))), nil
	case types.Float64:
		return binary.BigEndian.AppendUint64(dst, math.Float64bits(v.Float64())), nil
	case types.String:
		return append(dst, v.Str()...), nil
	case types.Bytes:
		return append(dst, v.Bytes()...), nil
	case types.UUID:
		u := v.UUID()
		return append(dst, u[:]...), nil
	case types.Date:
		return binary.BigEndian.AppendUint32(dst, uint32(int32(v.Int64()-pgEpochDays))), nil
	case types.DateTime64:
		return binary.BigEndian.AppendUint64(dst, uint64(micros(v))), nil
	case types.Interval:
		// PostgreSQL's layout: microseconds (int64), days, months (int32).
		m, d, us := v.Interval()
		dst = binary.BigEndian.AppendUint64(dst, uint64(us))
		dst = binary.BigEndian.AppendUint32(dst, uint32(d))
		return binary.BigEndian.AppendUint32(dst, uint32(m)), nil
	case types.Uint64, types.Int128, types.Uint128, types.Int256, types.Uint256, types.Decimal:
		var buf [100]byte
		return appendNumeric(dst, types.AppendText(buf[:0], v))
	}
	return types.AppendText(dst, v), nil
}

// micros converts a DATETIME64 to microseconds since 2000-01-01 UTC,
// PostgreSQL's timestamptz; digits below a microsecond are dropped (floor).
func micros(v types.Value) int64 {
	p := int(v.Type().Precision)
	t := v.Int64()
	switch {
	case p < 6:
		for i := p; i < 6; i++ {
			t *= 10
		}
	case p > 6:
		d := int64(1)
		for i := 6; i < p; i++ {
			d *= 10
		}
		q := t / d
		if t%d < 0 {
			q--
		}
		t = q
	}
	return t - pgEpochSec*1_000_000
}

// appendNumeric appends the decimal number in text (an optional '-',
// digits, optionally '.' and digits) in PostgreSQL's binary numeric format:
// ndigits, weight, sign, dscale, then base-10000 digits. It allocates
// nothing: it runs once per numeric value of a binary result.
func appendNumeric(dst, text []byte) ([]byte, error) {
	orig := text
	sign := uint16(0)
	if len(text) > 0 && text[0] == '-' {
		sign, text = 0x4000, text[1:]
	}
	intPart, frac := text, text[len(text):]
	if i := bytes.IndexByte(text, '.'); i >= 0 {
		intPart, frac = text[:i], text[i+1:]
	}
	if len(intPart) == 0 || !allDigits(intPart) || !allDigits(frac) {
		return dst, fmt.Errorf("numeric %q has no binary form", string(orig))
	}
	var groups [maxNumericGroups]int16
	n := 0
	lead := len(intPart) % 4
	if lead == 0 {
		lead = 4
	}
	for i := 0; i < len(intPart); lead = 4 {
		g := 0
		for _, c := range intPart[i : i+lead] {
			g = g*10 + int(c-'0')
		}
		if n == len(groups) {
			return dst, fmt.Errorf("numeric %q is too long", string(orig))
		}
		groups[n], n, i = int16(g), n+1, i+lead
	}
	weight := n - 1
	for i := 0; i < len(frac); i += 4 {
		g := 0
		for j := i; j < i+4; j++ {
			g *= 10
			if j < len(frac) {
				g += int(frac[j] - '0')
			}
		}
		if n == len(groups) {
			return dst, fmt.Errorf("numeric %q is too long", string(orig))
		}
		groups[n], n = int16(g), n+1
	}
	gs := groups[:n]
	for len(gs) > 0 && gs[0] == 0 {
		gs = gs[1:]
		weight--
	}
	for len(gs) > 0 && gs[len(gs)-1] == 0 {
		gs = gs[:len(gs)-1]
	}
	if len(gs) == 0 {
		weight, sign = 0, 0
	}
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(gs)))
	dst = binary.BigEndian.AppendUint16(dst, uint16(int16(weight)))
	dst = binary.BigEndian.AppendUint16(dst, sign)
	dst = binary.BigEndian.AppendUint16(dst, uint16(len(frac)))
	for _, g := range gs {
		dst = binary.BigEndian.AppendUint16(dst, uint16(g))
	}
	return dst, nil
}

// maxNumericGroups bounds the base-10000 digits of one value: 78 digits of
// a 256-bit integer or DECIMAL(76)'s 76 need at most 21.
const maxNumericGroups = 32

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// numericText decodes PostgreSQL's binary numeric into decimal text.
func numericText(b []byte) (string, error) {
	if len(b) < 8 {
		return "", fmt.Errorf("numeric: %d bytes is too short", len(b))
	}
	n := int(binary.BigEndian.Uint16(b))
	weight := int(int16(binary.BigEndian.Uint16(b[2:])))
	sign := binary.BigEndian.Uint16(b[4:])
	dscale := int(binary.BigEndian.Uint16(b[6:]))
	if sign == 0xC000 || sign == 0xD000 || sign == 0xF000 {
		return "", fmt.Errorf("numeric NaN and infinity have no Strata value")
	}
	if len(b) != 8+2*n {
		return "", fmt.Errorf("numeric: %d bytes for %d digits", len(b), n)
	}
	var ip, fp strings.Builder
	for i := 0; i < n; i++ {
		g := int(binary.BigEndian.Uint16(b[8+2*i:]))
		if g > 9999 {
			return "", fmt.Errorf("numeric: digit %d out of range", g)
		}
		pos := weight - i // power of 10000 of this group
		if pos >= 0 {
			if ip.Len() == 0 {
				ip.WriteString(strconv.Itoa(g))
			} else {
				fmt.Fprintf(&ip, "%04d", g)
			}
			continue
		}
		if fp.Len() == 0 {
			// Groups between the point and the first fraction group are zero.
			fp.WriteString(strings.Repeat("0000", -pos-1))
		}
		fmt.Fprintf(&fp, "%04d", g)
	}
	intText := ip.String()
	// Whole groups of zeros after the last digit, up to the point.
	if last := weight - n + 1; last > 0 && intText != "" {
		intText += strings.Repeat("0000", last)
	}
	if intText == "" {
		intText = "0"
	}
	frac := fp.String()
	if len(frac) > dscale {
		frac = frac[:dscale]
	} else {
		frac += strings.Repeat("0", dscale-len(frac))
	}
	out := intText
	if frac != "" {
		out += "." + frac
	}
	if sign == 0x4000 {
		out = "-" + out
	}
	return out, nil
}

// textParam is a text parameter's string: UTF-8 without NUL, as the
// server's client_encoding promises and PostgreSQL's text holds (22021).
func textParam(b []byte) (types.Value, error) {
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 {
		return types.Value{}, sqlerr.New(sqlerr.CodeUntranslatable, "invalid byte sequence for encoding \"UTF8\"")
	}
	return types.NewString(string(b)), nil
}

// decodeParam turns one Bind parameter into a value. Text parameters are
// string values, which the binder coerces to the type the context asks
// for exactly as it coerces a string literal, whatever OID the client
// declared; binary parameters are decoded by their declared OID.
func decodeParam(oid uint32, format int16, b []byte) (types.Value, error) {
	if b == nil {
		return types.Null(types.Of(types.Unknown)), nil
	}
	if format == 0 {
		return textParam(b)
	}
	want := func(n int) error {
		if len(b) != n {
			return fmt.Errorf("binary value of %d bytes for a type of %d", len(b), n)
		}
		return nil
	}
	switch oid {
	case oidBool:
		if err := want(1); err != nil {
			return types.Value{}, err
		}
		return types.NewBool(b[0] != 0), nil
	case oidInt2:
		if err := want(2); err != nil {
			return types.Value{}, err
		}
		return types.NewInt64(int64(int16(binary.BigEndian.Uint16(b)))), nil
	case oidInt4:
		if err := want(4); err != nil {
			return types.Value{}, err
		}
		return types.NewInt64(int64(int32(binary.BigEndian.Uint32(b)))), nil
	case oidInt8:
		if err := want(8); err != nil {
			return types.Value{}, err
		}
		return types.NewInt64(int64(binary.BigEndian.Uint64(b))), nil
	case oidFloat4:
		if err := want(4); err != nil {
			return types.Value{}, err
		}
		return types.NewFloat32(math.Float32frombits(binary.BigEndian.Uint32(b))), nil
	case oidFloat8:
		if err := want(8); err != nil {
			return types.Value{}, err
		}
		return types.NewFloat64(math.Float64frombits(binary.BigEndian.Uint64(b))), nil
	case oidText, oidVarchar, oidBPChar, oidName, oidUnknown, oidJSON:
		return textParam(b)
	case oidBytea:
		return types.NewBytes(append([]byte(nil), b...)), nil
	case oidUUID:
		if err := want(16); err != nil {
			return types.Value{}, err
		}
		var u [16]byte
		copy(u[:], b)
		return types.NewUUID(u), nil
	case oidDate:
		if err := want(4); err != nil {
			return types.Value{}, err
		}
		d := types.NewDate(int64(int32(binary.BigEndian.Uint32(b))) + pgEpochDays)
		return d, types.CheckTime(d) // years 1 to 9999, as a text date
	case oidTimestamptz, oidTimestamp:
		if err := want(8); err != nil {
			return types.Value{}, err
		}
		// Whole seconds and the rest: a time.Duration of the microseconds
		// would overflow (and wrap) for dates more than 292 years from 2000.
		us := int64(binary.BigEndian.Uint64(b))
		sec, rem := us/1e6, us%1e6
		if rem < 0 {
			sec, rem = sec-1, rem+1e6
		}
		t := time.Unix(pgEpochSec+sec, rem*1000)
		return types.FromTime(types.Type{Kind: types.DateTime64, Precision: 6, TZ: "UTC"}, t.UTC())
	case oidInterval:
		if err := want(16); err != nil {
			return types.Value{}, err
		}
		return types.NewInterval(int64(int32(binary.BigEndian.Uint32(b[12:]))), int64(int32(binary.BigEndian.Uint32(b[8:]))), int64(binary.BigEndian.Uint64(b)))
	case oidNumeric:
		text, err := numericText(b)
		if err != nil {
			return types.Value{}, err
		}
		// A string value: the context types it, exactly like a literal.
		return types.NewString(text), nil
	}
	return types.Value{}, fmt.Errorf("binary format for type OID %d is not supported; send the parameter as text", oid)
}
