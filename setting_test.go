package strata_test

import (
	"strings"
	"testing"
)

// current_setting() is read when the statement runs, not when it is
// planned: a statement run again after SET (through the session's parse
// and plan caches, and through a view) reads the new value, and a
// set_config() earlier in the same select list is seen, as in PostgreSQL
// (where current_setting is STABLE, never folded at plan time).
func TestCurrentSettingAtExecution(t *testing.T) {
	_, s := openDB(t)
	pointTable(t, s)
	mustRun(t, s, `CREATE VIEW sv AS SELECT current_setting('x.v') AS v`)
	for _, val := range []string{"1", "x", "2"} {
		mustRun(t, s, "SET x.v = '"+val+"'")
		for _, q := range []string{
			`SELECT current_setting('x.v')`,
			`SELECT v FROM sv`,
			`SELECT current_setting('x.v') FROM b WHERE c = $1::UINT16 AND a = $2`,
		} {
			var args []any
			if strings.HasSuffix(q, "$2") {
				args = []any{1, "x"}
			}
			for range 2 {
				if got := render(s.Run(t.Context(), q, args...)); !strings.HasSuffix(got, " ["+val+"];") {
					t.Errorf("%s after SET x.v = %s: %s", q, val, got)
				}
			}
		}
		// A key compared with the setting finds the row the setting names.
		if got := render(s.Run(t.Context(), `SELECT v FROM b WHERE c = 1 AND a = current_setting('x.v')`)); (got == "SELECT 1 v:INT64 [10];") != (val == "x") {
			t.Errorf("key = current_setting() after SET x.v = %s: %s", val, got)
		}
	}
	got := render(s.Run(t.Context(), `SELECT set_config('x.v', 'y', false), current_setting('x.v')`))
	if got != "SELECT 1 set_config:STRING current_setting:STRING [y y];" {
		t.Errorf("set_config then current_setting in one statement: %s, want [y y]", got)
	}
}
