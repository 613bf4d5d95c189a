package strata

import (
	"math/big"
	"time"

	"github.com/strata-db/strata/internal/types"
)

// Result is what one statement returned.
type Result struct {
	// Tag is the command tag, as PostgreSQL reports it: "SELECT 2",
	// "INSERT 0 3", "UPSERT 3", "UPDATE 1", "DELETE 1", "CREATE TABLE", ….
	Tag string
	// Columns and Rows are set for statements that return rows.
	Columns []Column
	Rows    [][]Value
	// RowsAffected counts the rows written (accepted, R3.6) or returned.
	RowsAffected int64
	// Commit is the commit the statement took; 0 when it took none (a
	// query, a statement inside BEGIN … COMMIT, a no-op).
	Commit uint64
	// Notices are the warnings of a statement that succeeded, as
	// PostgreSQL sends them in NoticeResponse (SET TIME ZONE to a zone
	// DATETIME64 values do not follow).
	Notices []Notice
}

// Notice is one warning of a statement that succeeded.
type Notice struct {
	// Severity is WARNING or NOTICE; Code the SQLSTATE.
	Severity, Code string
	Message, Hint  string
}

// Column describes one result column.
type Column struct {
	Name string
	// Type is the SQL type as SHOW CREATE TABLE prints it: "UINT256",
	// "DATETIME64(3, 'UTC')", "STRING", ….
	Type string
}

// Value is one result value, or an argument built from one. The zero Value
// is not valid; values come from results.
type Value struct {
	v types.Value
}

// IsNull reports whether the value is SQL NULL.
func (v Value) IsNull() bool { return v.v.IsNull() }

// String returns the canonical text (../shared/conformance/README.md): an
// integer in decimal digits at any width, a float in its shortest
// round-trip form, true/false, a DATETIME64 as "YYYY-MM-DD HH:MM:SS" plus
// its precision's fractional digits in the column's time zone, "NULL" for
// NULL.
func (v Value) String() string {
	if v.v.IsNull() {
		return "NULL"
	}
	return string(types.AppendText(nil, v.v))
}

// Any returns the value as a Go value: int64 for signed integers up to 64
// bits, uint64 for unsigned ones, *big.Int for 128 and 256 bits, float64,
// string (STRING, DECIMAL in its exact text, and INTERVAL, a type only
// expressions have, in PostgreSQL's text form "1 year 2 mons 3 days
// 04:05:06": no Go type holds its months, days and microseconds apart,
// and time.Duration would lose the calendar units), []byte, bool,
// time.Time (DATE at midnight UTC, DATETIME64 in its column's zone) or
// [16]byte (UUID); nil for NULL.
func (v Value) Any() any {
	if v.v.IsNull() {
		return nil
	}
	switch k := v.v.Kind(); k {
	case types.Int8, types.Int16, types.Int32, types.Int64:
		return v.v.Int64()
	case types.Uint8, types.Uint16, types.Uint32, types.Uint64:
		return v.v.Uint64()
	case types.Int128, types.Int256, types.Uint128, types.Uint256:
		n, _ := new(big.Int).SetString(v.String(), 10)
		return n
	case types.Float32, types.Float64:
		return v.v.Float64()
	case types.Decimal, types.String, types.Interval:
		if k == types.String {
			return v.v.Str()
		}
		return v.String()
	case types.Bytes:
		return append([]byte(nil), v.v.Bytes()...)
	case types.Bool:
		return v.v.Bool()
	case types.Date, types.DateTime64:
		return v.v.Time()
	case types.UUID:
		return v.v.UUID()
	}
	return v.String()
}

// Time returns the value of a DATE or DATETIME64 and true, else false.
func (v Value) Time() (time.Time, bool) {
	if k := v.v.Kind(); v.v.IsNull() || (k != types.Date && k != types.DateTime64) {
		return time.Time{}, false
	}
	return v.v.Time(), true
}
