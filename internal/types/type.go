package types

import (
	"fmt"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // machines without zoneinfo still know every IANA zone (R2.1)
)

// Kind is the family of a column type. The zero Kind is Invalid.
type Kind uint8

// The kinds of R2.1. Unknown is the type of an untyped NULL literal before
// it meets a column or an operator that gives it one.
const (
	Invalid Kind = iota
	Unknown
	Bool
	Int8
	Int16
	Int32
	Int64
	Int128
	Int256
	Uint8
	Uint16
	Uint32
	Uint64
	Uint128
	Uint256
	Float32
	Float64
	Decimal
	String
	Bytes
	Date
	DateTime64
	UUID
	// Interval is PostgreSQL's INTERVAL, an expression type only: no
	// column has it (interval.go).
	Interval
	numKinds
)

var kindNames = [numKinds]string{
	Invalid: "INVALID", Unknown: "UNKNOWN", Bool: "BOOL",
	Int8: "INT8", Int16: "INT16", Int32: "INT32", Int64: "INT64", Int128: "INT128", Int256: "INT256",
	Uint8: "UINT8", Uint16: "UINT16", Uint32: "UINT32", Uint64: "UINT64", Uint128: "UINT128", Uint256: "UINT256",
	Float32: "FLOAT32", Float64: "FLOAT64", Decimal: "DECIMAL", String: "STRING", Bytes: "BYTES",
	Date: "DATE", DateTime64: "DATETIME64", UUID: "UUID", Interval: "INTERVAL",
}

// String returns the kind's canonical upper-case name.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// IsInteger reports whether k is a signed or unsigned integer kind.
func (k Kind) IsInteger() bool { return k >= Int8 && k <= Uint256 }

// IsSigned reports whether k is a signed integer kind.
func (k Kind) IsSigned() bool { return k >= Int8 && k <= Int256 }

// IsUnsigned reports whether k is an unsigned integer kind.
func (k Kind) IsUnsigned() bool { return k >= Uint8 && k <= Uint256 }

// IsFloat reports whether k is FLOAT32 or FLOAT64.
func (k Kind) IsFloat() bool { return k == Float32 || k == Float64 }

// IsNumeric reports whether k is an integer, float or decimal kind.
func (k Kind) IsNumeric() bool { return k.IsInteger() || k.IsFloat() || k == Decimal }

// Bits returns the width in bits of an integer or float kind, 0 otherwise.
func (k Kind) Bits() int {
	switch k {
	case Int8, Uint8:
		return 8
	case Int16, Uint16:
		return 16
	case Int32, Uint32, Float32:
		return 32
	case Int64, Uint64, Float64:
		return 64
	case Int128, Uint128:
		return 128
	case Int256, Uint256:
		return 256
	}
	return 0
}

// MaxDecimalPrecision is the largest DECIMAL precision (R2.1).
const MaxDecimalPrecision = 76

// MaxDateTimePrecision is the largest DATETIME64 precision (R2.1).
const MaxDateTimePrecision = 9

// Type is a column type: a kind plus its parameters. Type is a small value
// type, compared with ==.
type Type struct {
	Kind Kind
	// Precision is DECIMAL's total digits or DATETIME64's fractional digits.
	Precision uint8
	// Scale is DECIMAL's digits after the point.
	Scale uint8
	// Len is VARCHAR(n)'s limit in characters; 0 means unlimited.
	Len int32
	// TZ is DATETIME64's IANA zone name; "" means UTC.
	TZ string
}

// Of returns the parameterless type of kind k.
func Of(k Kind) Type { return Type{Kind: k} }

// String returns the type in the form SHOW CREATE TABLE prints and the
// parser accepts back.
func (t Type) String() string {
	switch t.Kind {
	case Decimal:
		return fmt.Sprintf("DECIMAL(%d,%d)", t.Precision, t.Scale)
	case DateTime64:
		if t.TZ == "" {
			return fmt.Sprintf("DATETIME64(%d)", t.Precision)
		}
		return fmt.Sprintf("DATETIME64(%d, '%s')", t.Precision, t.TZ)
	case String:
		if t.Len > 0 {
			return fmt.Sprintf("VARCHAR(%d)", t.Len)
		}
	}
	return t.Kind.String()
}

// Location returns the time zone of a DATETIME64 type (UTC when none is named).
func (t Type) Location() *time.Location {
	if t.TZ == "" || t.TZ == "UTC" {
		return time.UTC
	}
	if loc, ok := zones.Load(t.TZ); ok {
		return loc.(*time.Location)
	}
	// time.LoadLocation reads and parses zone data on every call; values
	// are formatted and parsed per row, so keep each zone once.
	loc, err := time.LoadLocation(t.TZ)
	if err != nil {
		return time.UTC
	}
	zones.Store(t.TZ, loc)
	return loc
}

// zones caches the *time.Location of every zone named so far.
var zones sync.Map

// Param is one parameter of a type name as written: DECIMAL(10, 2) has two
// integer parameters, DATETIME64(3, 'UTC') an integer and a string.
type Param struct {
	Int   int64
	Str   string
	IsStr bool
}

// aliases maps every accepted parameterless type name (upper case) to its type.
var aliases = map[string]Type{
	"BOOL": Of(Bool), "BOOLEAN": Of(Bool),
	"INT8": Of(Int8), "TINYINT": Of(Int8),
	"INT16": Of(Int16), "SMALLINT": Of(Int16),
	"INT32": Of(Int32), "INT": Of(Int32), "INTEGER": Of(Int32),
	"INT64": Of(Int64), "BIGINT": Of(Int64),
	"INT128": Of(Int128), "INT256": Of(Int256),
	"UINT8": Of(Uint8), "UINT16": Of(Uint16), "UINT32": Of(Uint32), "UINT64": Of(Uint64),
	"UINT128": Of(Uint128), "UINT256": Of(Uint256),
	"FLOAT32": Of(Float32), "REAL": Of(Float32), "FLOAT4": Of(Float32),
	"FLOAT64": Of(Float64), "DOUBLE": Of(Float64), "DOUBLE PRECISION": Of(Float64), "FLOAT8": Of(Float64), "FLOAT": Of(Float64),
	"STRING": Of(String), "TEXT": Of(String), "VARCHAR": Of(String),
	"BYTES": Of(Bytes), "BYTEA": Of(Bytes),
	"DATE":      Of(Date),
	"DATETIME":  {Kind: DateTime64},
	"TIMESTAMP": {Kind: DateTime64, Precision: 6},
	"UUID":      Of(UUID),
	"INTERVAL":  Of(Interval),
}

// FromName resolves a type name as written in SQL (case-insensitive, aliases
// of R2.1 included) with its parameters. The error says what is wrong with
// the name or a parameter.
func FromName(name string, params []Param) (Type, error) {
	up := strings.ToUpper(strings.Join(strings.Fields(name), " "))
	intParamFrom := func(i int, what string, min, max int64) (int64, error) {
		p := params[i]
		if p.IsStr || p.Int < min || p.Int > max {
			return 0, fmt.Errorf("%s of %s must be an integer from %d to %d", what, up, min, max)
		}
		return p.Int, nil
	}
	intParam := func(i int, what string, max int64) (int64, error) { return intParamFrom(i, what, 0, max) }
	switch up {
	case "DECIMAL", "NUMERIC":
		t := Type{Kind: Decimal, Precision: 38, Scale: 0}
		if len(params) > 2 {
			return Type{}, fmt.Errorf("%s takes at most 2 parameters, got %d", up, len(params))
		}
		if len(params) >= 1 {
			p, err := intParamFrom(0, "precision", 1, MaxDecimalPrecision)
			if err != nil {
				return Type{}, err
			}
			t.Precision = uint8(p)
		}
		if len(params) == 2 {
			s, err := intParam(1, "scale", int64(t.Precision))
			if err != nil {
				return Type{}, err
			}
			t.Scale = uint8(s)
		}
		return t, nil
	case "DATETIME64", "DATETIME", "TIMESTAMP", "TIMESTAMPTZ":
		t := Type{Kind: DateTime64}
		if up == "TIMESTAMP" || up == "TIMESTAMPTZ" {
			t.Precision = 6
		}
		if up == "DATETIME64" && len(params) == 0 {
			return Type{}, fmt.Errorf("DATETIME64 needs a precision: DATETIME64(p[, 'tz']) with p from 0 to %d", MaxDateTimePrecision)
		}
		if len(params) > 2 || (up != "DATETIME64" && len(params) > 1) {
			return Type{}, fmt.Errorf("too many parameters for %s", up)
		}
		for i, p := range params {
			if p.IsStr {
				if up != "DATETIME64" && up != "DATETIME" {
					return Type{}, fmt.Errorf("%s takes no time zone parameter", up)
				}
				if i != len(params)-1 {
					return Type{}, fmt.Errorf("the time zone of %s comes last", up)
				}
				name, ok := zoneName(p.Str)
				if !ok {
					return Type{}, fmt.Errorf("unknown time zone %q", p.Str)
				}
				t.TZ = name
				continue
			}
			v, err := intParam(i, "precision", MaxDateTimePrecision)
			if err != nil {
				return Type{}, err
			}
			t.Precision = uint8(v)
		}
		return t, nil
	case "VARCHAR", "CHARACTER VARYING", "CHAR", "CHARACTER":
		if len(params) == 0 {
			return Of(String), nil
		}
		if len(params) > 1 || params[0].IsStr || params[0].Int < 1 || params[0].Int > 1<<30 {
			return Type{}, fmt.Errorf("%s takes one positive length", up)
		}
		return Type{Kind: String, Len: int32(params[0].Int)}, nil
	case "FLOAT":
		// FLOAT(p) as PostgreSQL reads it: p ≤ 24 is single precision.
		if len(params) == 1 && !params[0].IsStr && params[0].Int >= 1 && params[0].Int <= 53 {
			if params[0].Int <= 24 {
				return Of(Float32), nil
			}
			return Of(Float64), nil
		}
	}
	t, ok := aliases[up]
	if !ok {
		return Type{}, fmt.Errorf("unknown type %s", strings.TrimSpace(name))
	}
	if len(params) > 0 {
		return Type{}, fmt.Errorf("type %s takes no parameters", up)
	}
	return t, nil
}

// CanWiden reports whether a column of type from may be changed to type to
// by ALTER COLUMN … TYPE without rewriting data (R8.1): every value of from
// is exactly a value of to.
func CanWiden(from, to Type) bool {
	if from == to {
		return true
	}
	f, t := from.Kind, to.Kind
	switch {
	case f.IsUnsigned() && t.IsUnsigned():
		return t.Bits() > f.Bits()
	case f.IsSigned() && t.IsSigned():
		return t.Bits() > f.Bits()
	case f.IsUnsigned() && t.IsSigned():
		return t.Bits() > f.Bits()
	case f == Float32 && t == Float64:
		return true
	case f == Decimal && t == Decimal:
		return to.Scale >= from.Scale && int(to.Precision)-int(to.Scale) >= int(from.Precision)-int(from.Scale)
	case f == String && t == String:
		return to.Len == 0 || (from.Len > 0 && to.Len >= from.Len)
	}
	return false
}

// HoldsAll reports whether every value of from is exactly a value of to,
// whether or not ALTER COLUMN … TYPE may make that change (CanWiden): an
// integer in a DECIMAL with as many integer digits, a DATETIME64 at a
// finer precision in the same zone, a DATE as a DATETIME64, besides
// every widening.
func HoldsAll(from, to Type) bool {
	f, t := from.Kind, to.Kind
	switch {
	case CanWiden(from, to):
		return true
	case f.IsInteger() && t == Decimal:
		return intDigits(f) <= int(to.Precision)-int(to.Scale)
	case f == DateTime64 && t == DateTime64:
		return to.Precision >= from.Precision && to.TZ == from.TZ
	case f == Date && t == DateTime64:
		return true
	}
	return false
}

// KeyStable reports whether every value of from has the same AppendKey
// encoding as the same value of to. Storage keeps key, SHARD BY and
// ordering columns as those encodings (sorted, compared and hashed), so
// only a KeyStable widening of such a column is possible without a
// rewrite: integers of any widths, FLOAT32 → FLOAT64 and string lengths
// are; a DECIMAL whose scale changes is not (its unscaled integer would).
func KeyStable(from, to Type) bool {
	f, t := from.Kind, to.Kind
	switch {
	case from == to:
		return true
	case f.IsInteger() && t.IsInteger():
		return true
	case f.IsFloat() && t.IsFloat():
		return true
	case f == Decimal && t == Decimal:
		return from.Scale == to.Scale
	case f == String && t == String, f == Bytes && t == Bytes:
		return true
	}
	return false
}

// Orderable reports whether a column of type t may be a VALID BY or
// REVISION BY column (R3.2): an integer of any width, DATE or DATETIME64.
func (t Type) Orderable() bool {
	return t.Kind.IsInteger() || t.Kind == Date || t.Kind == DateTime64
}

// ZoneName returns the IANA name a time zone name spells, as DATETIME64's
// zone parameter takes it (zoneName), and false for a name Go's zone
// database does not hold.
func ZoneName(zone string) (string, bool) { return zoneName(zone) }

// zoneName returns the IANA name zone spells. PostgreSQL matches zone
// names without regard to case; Go's zone database does not, and lists no
// names to match against, so this takes the name as written when the
// database has it, UTC in any case, else the name with each word
// capitalized ('america/new_york' is America/New_York). Names spelled
// otherwise (US/Eastern, EST5EDT, Etc/GMT+5, America/Port-au-Prince)
// must be written as named.
func zoneName(zone string) (string, bool) {
	if zone == "" || strings.EqualFold(zone, "Local") {
		return "", false
	}
	if strings.EqualFold(zone, "UTC") {
		return "UTC", true
	}
	if _, err := time.LoadLocation(zone); err == nil {
		return zone, true
	}
	b := []byte(strings.ToLower(zone))
	for i := range b {
		if (i == 0 || b[i-1] == '/' || b[i-1] == '_') && b[i] >= 'a' && b[i] <= 'z' {
			b[i] -= 'a' - 'A'
		}
	}
	if _, err := time.LoadLocation(string(b)); err == nil {
		return string(b), true
	}
	return "", false
}
