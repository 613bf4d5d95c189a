package exec_test

import "testing"

// TestLateral checks the per-row runs of a LATERAL item: inner and LEFT
// joins, an ON condition over both sides, left rows that repeat a value
// (answered from the cache), and functions reading the left row.
func TestLateral(t *testing.T) {
	f := newFake(t)
	cases := []struct{ sql, want string }{
		{"SELECT e.id, s.name FROM emp e, LATERAL (SELECT i.name FROM emp i WHERE i.dept = e.dept AND i.id <> e.id) s ORDER BY 1",
			"1 bob\n2 ann\n3 dee\n4 cid\n"},
		{"SELECT e.id, s.n FROM emp e LEFT JOIN LATERAL (SELECT count(*) AS n FROM emp i WHERE i.salary > e.salary) s ON s.n > 2 ORDER BY 1",
			"1 NULL\n2 NULL\n3 3\n4 NULL\n5 4\n6 NULL\n"},
		{"SELECT d.code, g FROM dept d, LATERAL generate_series(1, length(d.code) - 1) g ORDER BY 1, 2", "eng 1\neng 2\nhr 1\nops 1\nops 2\n"},
		{"SELECT d.code, x.title FROM dept d LEFT JOIN LATERAL (SELECT title FROM dept WHERE code = d.code AND code <> 'hr') x ON true ORDER BY 1", "eng Engineering\nhr NULL\nops Operations\n"},
	}
	checkQueries(t, f, cases)
}

// BenchmarkLateral runs a LATERAL function per left row: 20 000 left rows,
// 6 distinct values of the column the function reads.
func BenchmarkLateral(b *testing.B) {
	benchQuery(b, "SELECT count(*) FROM generate_series(1, 20000) g, emp e, LATERAL generate_series(1, e.id) x WHERE g < 4000", 84_000)
}
