package logictest

import (
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// renderValues renders a result row-major into one flat slice, one string per
// value, under the record's type letters. The caller has checked that every
// row has len(types) values.
func renderValues(rows [][]Value, types string, d Dialect) []string {
	out := make([]string, 0, len(rows)*len(types))
	for _, row := range rows {
		for c := range row {
			out = append(out, Render(row[c], types[c], d))
		}
	}
	return out
}

// sortValues orders a flat, row-major slice of rendered values in place, as
// upstream does: rowsort compares rows column by column, byte-wise (strcmp);
// valuesort sorts every value on its own.
func sortValues(vals []string, ncol int, mode SortMode) {
	switch mode {
	case ValueSort:
		slices.Sort(vals)
	case RowSort:
		if ncol <= 1 {
			slices.Sort(vals)
			return
		}
		rows := make([][]string, len(vals)/ncol)
		for r := range rows {
			rows[r] = vals[r*ncol : (r+1)*ncol : (r+1)*ncol]
		}
		slices.SortStableFunc(rows, func(a, b []string) int { return slices.Compare(a, b) })
		sorted := make([]string, 0, len(vals))
		for _, r := range rows {
			sorted = append(sorted, r...)
		}
		copy(vals, sorted)
	}
}

// hashValues is upstream's result hash: MD5 over every value followed by
// "\n", in result order (after sorting), as lower-case hex.
// The bytes are laid out in one buffer first: one allocation per result
// instead of one per value through the hash.Hash interface.
func hashValues(vals []string) string {
	n := 0
	for _, v := range vals {
		n += len(v) + 1
	}
	buf := make([]byte, 0, n)
	for _, v := range vals {
		buf = append(buf, v...)
		buf = append(buf, '\n')
	}
	sum := md5.Sum(buf)
	return hex.EncodeToString(sum[:])
}

// hashLines hashes expected lines the way hashValues hashes values; used for
// labelled queries that are skipped, whose expected text still takes part in
// the label check (upstream does the same in verify mode).
func hashLines(lines []string) string { return hashValues(lines) }

// joinRows joins each row's values with a single space: the conformance
// dialect's (and the classic row-per-line) expected form.
func joinRows(vals []string, ncol int) []string {
	if ncol == 0 {
		return nil
	}
	out := make([]string, 0, len(vals)/ncol)
	for r := 0; r+ncol <= len(vals); r += ncol {
		out = append(out, strings.Join(vals[r:r+ncol], " "))
	}
	return out
}

// outcome is the comparison of one query's result with its record.
type outcome struct {
	ok       bool
	msg      string
	expected []string
	got      []string
}

// compareQuery compares rendered (already sorted) values with the record's
// expected output under the dialect's rules (doc.go, "Comparison").
func compareQuery(rec *Record, vals []string, d Dialect) outcome {
	ncol := len(rec.Types)
	nrows := len(vals) / ncol
	if rec.Hashed {
		h := hashValues(vals)
		if len(vals) == rec.HashCount && h == rec.Hash {
			return outcome{ok: true}
		}
		got := []string{fmt.Sprintf("%d values hashing to %s", len(vals), h)}
		msg := "wrong result hash"
		if len(vals) != rec.HashCount {
			msg = fmt.Sprintf("wrong number of values: expected %d, got %d (%d rows)", rec.HashCount, len(vals), nrows)
		}
		return outcome{msg: msg, expected: rec.Expected, got: append(got, vals...)}
	}
	if d == Classic && (len(rec.Expected) == len(vals) || len(rec.Expected) != nrows) {
		// One value per line: upstream's form, and the one to show when the
		// line count matches neither form.
		if slices.Equal(rec.Expected, vals) {
			return outcome{ok: true}
		}
		return outcome{msg: mismatch(len(rec.Expected), len(vals), "values"), expected: rec.Expected, got: vals}
	}
	got := rowLines(vals, ncol, rec.Sort, d)
	exp := rec.Expected
	if rec.Sort == RowSort && d == Conformance {
		exp = slices.Clone(exp)
		slices.Sort(exp)
	}
	if slices.Equal(exp, got) {
		return outcome{ok: true}
	}
	return outcome{msg: mismatch(len(exp), len(got), "rows"), expected: exp, got: got}
}

// rowLines lays values out one row per line. In the conformance dialect a
// rowsort compares the rows as whole lines of text, so both sides are sorted
// as lines; in the classic dialect the rows keep upstream's column-wise order.
// A valuesort keeps the sorted values and cuts them into rows.
func rowLines(vals []string, ncol int, mode SortMode, d Dialect) []string {
	lines := joinRows(vals, ncol)
	if mode == RowSort && d == Conformance {
		slices.Sort(lines)
	}
	return lines
}

func mismatch(want, got int, unit string) string {
	if want != got {
		return fmt.Sprintf("wrong number of %s: expected %d, got %d", unit, want, got)
	}
	return "wrong result"
}
