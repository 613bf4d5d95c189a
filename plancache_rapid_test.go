package strata_test

import (
	"context"
	"fmt"
	"math/big"
	"strings"
	"testing"

	strata "github.com/strata-db/strata"
	"pgregory.net/rapid"
)

// TestPlanCacheRandom runs random point SELECTs again and again in one
// session, between random writes, deletes, transactions and merges, and
// compares every answer of the cached statement with the same statement
// planned from scratch in the same session (a text of its own, so its
// own parse and plan), which sees the same transaction.
func TestPlanCacheRandom(t *testing.T) {
	keyTypes := []string{"INT64", "UINT16", "INT8", "STRING", "BYTES", "UINT256", "INT32", "UINT64", "VARCHAR(2)"}
	rapid.Check(t, func(rt *rapid.T) {
		db, err := strata.Open(t.TempDir(), strata.Options{})
		if err != nil {
			rt.Fatal(err)
		}
		defer db.Close()
		s := db.NewSession()
		ctx := context.Background()
		run := func(q string, args ...any) string { return render(s.Run(ctx, q, args...)) }
		must := func(q string, args ...any) {
			if _, err := s.Run(ctx, q, args...); err != nil {
				rt.Fatalf("%s %v: %v", q, args, err)
			}
		}
		nk := rapid.IntRange(1, 2).Draw(rt, "keys")
		kt := make([]string, nk)
		for i := range kt {
			kt[i] = rapid.SampledFrom(keyTypes).Draw(rt, fmt.Sprint("type", i))
		}
		mode := rapid.SampledFrom([]string{"VERSIONED", "UPSERT", "VERSIONED SHARDS 2"}).Draw(rt, "mode")
		cols := "k0 " + kt[0] + " NOT NULL"
		pk := "k0"
		if nk == 2 {
			cols += ", k1 " + kt[1] + " NOT NULL"
			pk += ", k1"
		}
		must(fmt.Sprintf(`CREATE TABLE t (%s, v INT64 NULL, w STRING NULL, PRIMARY KEY (%s)) MODE %s`, cols, pk, mode))
		// A key value as a SQL literal of its column's type.
		lit := func(typ string, i int) string {
			switch typ {
			case "STRING", "VARCHAR(2)":
				return fmt.Sprintf("'%d'", i)
			case "BYTES":
				return fmt.Sprintf("'\\x%02x'", i)
			}
			return fmt.Sprint(i)
		}
		// A parameter for a key column: of the column's Go type mostly, of
		// others sometimes.
		arg := func(typ, label string) any {
			i := rapid.IntRange(0, 3).Draw(rt, label)
			switch rapid.IntRange(0, 9).Draw(rt, label+"kind") {
			case 0:
				// Text, as the wire's text format sends every value: the
				// template adapts it to the key column's type as the
				// binder does, or leaves it to Build.
				return rapid.SampledFrom([]string{fmt.Sprint(i), fmt.Sprintf(" %d ", i), fmt.Sprintf("+%d", i),
					fmt.Sprintf("%d.0", i), fmt.Sprintf("0%d", i), "x", "", "\\x0" + fmt.Sprint(i)}).Draw(rt, label+"text")
			case 1:
				return float64(i)
			case 2:
				return -i
			case 3:
				return nil
			case 4:
				return uint64(i)
			case 5:
				return []byte{byte(i)}
			case 6:
				return big.NewInt(int64(i))
			case 7:
				return 1<<40 + i
			}
			switch typ {
			case "STRING", "VARCHAR(2)":
				return fmt.Sprint(i)
			case "BYTES":
				return []byte{byte(i)}
			}
			return i
		}
		var queries []string
		// The items cover the template's narrowed scans (plan.pointScan,
		// plan.narrowScan):
		// columns reordered, a key column, _commit last, and the shapes it
		// leaves to a Project (a column twice, _commit first, columns cast
		// to a type, the form clients read values as text in).
		for _, item := range []string{"*", "v", "w, k0", "_commit, v", "v, _commit", "v, v", "w AS a, v, k0, _commit",
			"v::STRING, CAST(k0 AS STRING)", "(w)::BYTES, _commit::INT64", "v::INT8::STRING, w"} {
			var conds, casts []string
			for k := 0; k < nk; k++ {
				conds = append(conds, fmt.Sprintf("k%d = $%d", k, k+1))
				casts = append(casts, fmt.Sprintf("k%d = $%d::%s", k, k+1, kt[k]))
			}
			w, wc := strings.Join(conds, " AND "), strings.Join(casts, " AND ")
			queries = append(queries,
				fmt.Sprintf("SELECT %s FROM t WHERE %s", item, w),
				fmt.Sprintf("SELECT %s FROM t WHERE %s", item, wc),
				fmt.Sprintf("SELECT %s FROM t AS OF COMMIT $%d WHERE %s", item, nk+1, wc),
				fmt.Sprintf("SELECT %s FROM t WHERE %s AS OF COMMIT $%d", item, w, nk+1),
				fmt.Sprintf("SELECT %s FROM t WHERE %s AS OF COMMIT 3", item, w),
				fmt.Sprintf("SELECT %s FROM t WHERE k0 = %s%s", item, lit(kt[0], 1), strings.TrimPrefix(w, "k0 = $1")),
				// The versions of one key (an error on an UPSERT table).
				fmt.Sprintf("SELECT %s FROM versions(t) WHERE %s", item, w),
				fmt.Sprintf("SELECT %s FROM versions(t) WHERE %s", item, wc),
			)
		}
		fresh := 0
		inTx := false
		steps := rapid.IntRange(10, 60).Draw(rt, "steps")
		for step := 0; step < steps; step++ {
			switch rapid.IntRange(0, 9).Draw(rt, "op") {
			case 0, 1:
				var vals []string
				for k := 0; k < nk; k++ {
					vals = append(vals, lit(kt[k], rapid.IntRange(0, 3).Draw(rt, "wk")))
				}
				must(fmt.Sprintf(`UPSERT INTO t VALUES (%s, %d, 'w%d')`, strings.Join(vals, ", "), step, step))
			case 2:
				must(fmt.Sprintf(`DELETE FROM t WHERE k0 = %s`, lit(kt[0], rapid.IntRange(0, 3).Draw(rt, "dk"))))
			case 3:
				switch {
				case !inTx:
					must("BEGIN")
				case rapid.Bool().Draw(rt, "commit"):
					must("COMMIT")
				default:
					must("ROLLBACK")
				}
				inTx = !inTx
			case 4:
				if inTx {
					break
				}
				switch rapid.IntRange(0, 3).Draw(rt, "ddl") {
				case 0:
					must(fmt.Sprintf(`ALTER TABLE t ADD COLUMN z%d INT64 DEFAULT %d`, step, step))
				case 1:
					must(`ALTER TABLE t RENAME COLUMN v TO v2`)
					must(`ALTER TABLE t RENAME COLUMN v2 TO v`)
				case 2:
					must(`DROP TABLE t`)
					must(fmt.Sprintf(`CREATE TABLE t (%s, v INT64 NULL, w STRING NULL, PRIMARY KEY (%s)) MODE %s`, cols, pk, mode))
				default:
					if err := db.MergeNow(ctx); err != nil {
						rt.Fatal(err)
					}
				}
			default:
				q := rapid.SampledFrom(queries).Draw(rt, "query")
				var args []any
				for k := 0; k < nk; k++ {
					args = append(args, arg(kt[k], fmt.Sprint("arg", k)))
				}
				if strings.Contains(q, "AS OF COMMIT $") {
					args = append(args, rapid.IntRange(0, step+3).Draw(rt, "asof"))
				}
				for i := 0; i < 2; i++ {
					got := run(q, args...)
					if inTx && strings.HasPrefix(got, "error:") {
						// The error aborted the transaction: nothing to
						// compare with in it.
						must("ROLLBACK")
						inTx = false
						break
					}
					fresh++
					want := run(fmt.Sprintf("%s -- %d", q, fresh), args...)
					if got != want {
						rt.Fatalf("%s %v:\ncached: %s\nfresh:  %s", q, args, got, want)
					}
				}
			}
		}
	})
}
