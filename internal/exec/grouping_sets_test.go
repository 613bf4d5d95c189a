package exec_test

import "testing"

// TestGroupingSets checks that each grouping set gets its own groups in
// one pass, with NULL in the columns a set leaves out, grouping() telling
// them from NULLs of the data, and the empty set's row over no input.
func TestGroupingSets(t *testing.T) {
	f := newFake(t)
	cases := []struct{ sql, want string }{
		{"SELECT dept, count(*), sum(salary), grouping(dept) FROM emp GROUP BY ROLLUP (dept) ORDER BY grouping(dept), dept",
			"eng 2 180 0\nops 2 160 0\nsales 1 NULL 0\nNULL 1 60 0\nNULL 6 400 1\n"},
		{"SELECT dept, bonus IS NULL AS nb, count(*), grouping(dept, bonus IS NULL) FROM emp WHERE dept <> 'sales' GROUP BY CUBE (dept, bonus IS NULL) ORDER BY 4, 1, 2",
			"eng false 1 0\neng true 1 0\nops false 1 0\nops true 1 0\neng NULL 2 1\nops NULL 2 1\nNULL false 2 2\nNULL true 2 2\nNULL NULL 4 3\n"},
		{"SELECT dept, count(*) FROM emp WHERE id > 100 GROUP BY GROUPING SETS ((dept), ())", "NULL 0\n"},
		{"SELECT dept, string_agg(name, ',' ORDER BY name DESC) FROM emp WHERE dept = 'eng' GROUP BY ROLLUP (dept) ORDER BY dept", "eng bob,ann\nNULL bob,ann\n"},
	}
	checkQueries(t, f, cases)
}

// BenchmarkRollup groups 120 000 rows by ROLLUP (dept, name): three
// grouping sets folded in one pass over the input; BenchmarkGroupByTwo is
// the finest set alone, for comparison.
func BenchmarkRollup(b *testing.B) {
	benchQuery(b, "SELECT dept, name, count(*), sum(salary) FROM emp, generate_series(1, 20000) g GROUP BY ROLLUP (dept, name)", 120_000)
}

func BenchmarkGroupByTwo(b *testing.B) {
	benchQuery(b, "SELECT dept, name, count(*), sum(salary) FROM emp, generate_series(1, 20000) g GROUP BY dept, name", 120_000)
}

// BenchmarkOrderedStringAgg is string_agg with an ORDER BY over 120 000
// rows in 4 groups: the rows are kept and sorted once.
func BenchmarkOrderedStringAgg(b *testing.B) {
	benchQuery(b, "SELECT dept, string_agg(name, ',' ORDER BY g DESC) FROM emp, generate_series(1, 20000) g GROUP BY dept", 120_000)
}
