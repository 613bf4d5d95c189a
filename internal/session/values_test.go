package session

import (
	"fmt"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sqlerr"
	"github.com/strata-db/strata/internal/types"
)

// TestValuesWriterMatchesBuildWriter runs the same INSERTs with and without
// valuesWriter: every statement must succeed on both with the same rows,
// or fail on both with the same error, position included.
func TestValuesWriterMatchesBuildWriter(t *testing.T) {
	schema := `CREATE TABLE t (k INT64 NOT NULL, i8 INT8, u8 UINT8, i32 INT32, u64 UINT64, i256 INT256, u256 UINT256,
		d DECIMAL(10, 2), f FLOAT64, s STRING, b BOOL, dt DATE, ts DATETIME64(3, 'UTC'), idx UINT64 DEFAULT 1, n INT64 NOT NULL DEFAULT 5,
		PRIMARY KEY (k), ATTRIBUTE GROUP g1 (i8, u8, i32, u64, i256, u256, idx) VALID BY (idx),
		ATTRIBUTE GROUP g2 (d, f, s, b, dt, ts, n)) MODE VERSIONED`
	var stmts []string
	lits := []string{"0", "7", "127", "128", "-128", "-129", "255", "256", "2147483648", "123456789012345678",
		"1234567890123456789", "18446744073709551616", "007",
		"9223372036854775807", "9223372036854775808", "18446744073709551615", "0000000000000000000000042",
		"340282366920938463463374607431768211455", "340282366920938463463374607431768211456",
		"57896044618658097711785492504343953926634992332820282019728792003956564819967",
		"57896044618658097711785492504343953926634992332820282019728792003956564819968",
		"115792089237316195423570985008687907853269984665640564039457584007913129639935",
		"115792089237316195423570985008687907853269984665640564039457584007913129639936", "1.5", "1e3", "'12'", "'abc'", "'2026-01-02'", "'2026-01-02 03:04:05'", "'2026-01-02 03:04:05.123456'", "'2026-02-30'",
		"'-3'", "'300'", "'12.5'", "'1e3'", "'true'", "''", "' 7 '", "'0x10'", "NULL", "DEFAULT", "true", "$1", "-5", "1 + 1"}
	cols := []string{"i8", "u8", "i32", "u64", "i256", "u256", "d", "f", "s", "b", "dt", "ts", "idx", "n"}
	for i, c := range cols {
		for j, l := range lits {
			stmts = append(stmts, fmt.Sprintf("UPSERT INTO t (k, %s) VALUES (%d, %s), (%d, 1)", c, i*100+j, l, i*100+j+1000))
		}
	}
	stmts = append(stmts,
		"UPSERT INTO t (k, i8, s) VALUES (1, 2, 'x'), (2, 3)",
		"UPSERT INTO t (k, i8, s) VALUES (1, 2, 'x'), (2, 300, 'y'), (3, 1, 'z', 4)",
		"UPSERT INTO t VALUES (9, 1, 2, 3, 4, 5, 6, 7.25, 8.5, 'nine', false, '2026-02-03', '2026-02-03 04:05:06.789', 3, 4)",
		"UPSERT INTO t VALUES (10, 1, 2, 3, 4, 5, 6, 7.25, 8.5, 'nine', false, '2026-02-03', '2026-02-03 04:05:06.789', 3, 4, 5)",
		"UPSERT INTO t (k, i8) VALUES (NULL, 1)",
		"UPSERT INTO t (k, n) VALUES (11, NULL)",
		"UPSERT INTO t (k, idx) VALUES (12, NULL)",
		"UPSERT INTO t (k, i8) VALUES (13, 1) ATTRIBUTE GROUP g2",
		"UPSERT INTO t (k, d) VALUES (14, 1) ATTRIBUTE GROUP nosuch",
		"UPSERT INTO t (k, s) VALUES (15, 'a'), (15, 'b'), (16, DEFAULT)",
		"UPSERT INTO t (k, s) VALUES (17, 'a'), (17, 'a')",
	)
	run := func(off bool) []string {
		noValuesWriter = off
		defer func() { noValuesWriter = false }()
		h := newHarness(t)
		h.ok(schema)
		var out []string
		for _, q := range stmts {
			res, err := h.run(q, types.NewInt64(42))
			if err != nil {
				e, _ := sqlerr.As(err)
				out = append(out, fmt.Sprintf("%s: %v %+v", q, err, e))
				continue
			}
			out = append(out, fmt.Sprintf("%s: %s", q, res.Tag))
		}
		return append(out, h.table("t")...)
	}
	fast, slow := run(false), run(true)
	if len(fast) != len(slow) {
		t.Fatalf("%d lines, want %d", len(fast), len(slow))
	}
	for i := range fast {
		if fast[i] != slow[i] {
			t.Errorf("valuesWriter: %s\nbuildWriter: %s", fast[i], slow[i])
		}
	}
	if !strings.Contains(strings.Join(fast, "\n"), "123456789012345678") {
		t.Error("no row holds the 18-digit literal")
	}
}
