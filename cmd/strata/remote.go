package main

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// wireEngine runs the shell's statements on a server over the PostgreSQL
// protocol (`strata sql --url`, R13.2): each statement is one simple Query
// message, and values come back in PostgreSQL's text form, mapped to the
// canonical text the embedded shell prints (bool t/f to true/false, a
// timestamptz without its UTC offset), so both print the same.
type wireEngine struct{ c *pgx.Conn }

func dialWire(ctx context.Context, url string) (*wireEngine, error) {
	c, err := pgx.Connect(ctx, url)
	if err != nil {
		return nil, err
	}
	return &wireEngine{c: c}, nil
}

func (e *wireEngine) close() { e.c.Close(context.Background()) }

func (e *wireEngine) run(ctx context.Context, sql string) (*result, *stmtError) {
	mrr := e.c.PgConn().Exec(ctx, sql)
	var r *result
	for mrr.NextResult() {
		rr := mrr.ResultReader()
		fields := rr.FieldDescriptions()
		cur := &result{}
		if len(fields) > 0 {
			cur.columns = make([]column, len(fields))
			for j, f := range fields {
				cur.columns[j] = column{name: f.Name, typ: wireTypeName(f.DataTypeOID, f.TypeModifier)}
			}
		}
		for rr.NextRow() {
			vals := rr.Values()
			row := make([]cell, len(vals))
			for j, v := range vals {
				if v == nil {
					row[j] = cell{null: true}
				} else {
					row[j] = cell{text: canonicalText(fields[j].DataTypeOID, string(v))}
				}
			}
			cur.rows = append(cur.rows, row)
		}
		tag, err := rr.Close()
		if err != nil {
			mrr.Close()
			return nil, wireStmtError(err, sql)
		}
		cur.tag = tag.String()
		r = cur
	}
	if err := mrr.Close(); err != nil {
		return nil, wireStmtError(err, sql)
	}
	if r == nil {
		r = &result{}
	}
	return r, nil
}

// wireStmtError converts a server's error, its Position (1-based
// characters) becoming the line and column the shell shows.
func wireStmtError(err error, sql string) *stmtError {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return &stmtError{message: err.Error()}
	}
	se := &stmtError{message: pe.Message, detail: pe.Detail, hint: pe.Hint}
	if pe.Position > 0 {
		line, col, n := 1, 1, 1
		for _, r := range sql {
			if n == int(pe.Position) {
				break
			}
			if r == '\n' {
				line, col = line+1, 1
			} else {
				col++
			}
			n++
		}
		se.line, se.column = line, col
	}
	return se
}

// wireTypeName names a column's wire type in Strata's terms, the nearest
// Strata type of the PostgreSQL one (numeric reads as DECIMAL).
func wireTypeName(oid uint32, typmod int32) string {
	switch oid {
	case 16:
		return "BOOL"
	case 21:
		return "INT16"
	case 23:
		return "INT32"
	case 20:
		return "INT64"
	case 700:
		return "FLOAT32"
	case 701:
		return "FLOAT64"
	case 1700:
		return "DECIMAL"
	case 25, 1043, 1042, 19:
		return "STRING"
	case 17:
		return "BYTES"
	case 1082:
		return "DATE"
	case 1184, 1114:
		if typmod >= 0 {
			return "DATETIME64(" + strconv.Itoa(int(typmod)) + ")"
		}
		return "DATETIME64"
	case 2950:
		return "UUID"
	}
	return "STRING"
}

// canonicalText maps PostgreSQL's text output back to canonical text.
func canonicalText(oid uint32, s string) string {
	switch oid {
	case 16:
		switch s {
		case "t":
			return "true"
		case "f":
			return "false"
		}
	case 1184:
		if i := strings.LastIndexAny(s, "+-"); i >= 19 {
			return s[:i]
		}
	}
	return s
}
