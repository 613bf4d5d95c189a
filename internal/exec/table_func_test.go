package exec_test

import (
	"strings"
	"testing"
)

// TestSetReturningAndListAggregates runs generate_series, unnest,
// string_agg and array_agg as psql's \d and \d+ queries use them: a table
// function reading the enclosing row, the aggregates per group and over
// no rows (issue 5).
func TestSetReturningAndListAggregates(t *testing.T) {
	f := newFake(t)
	cases := []struct{ sql, want string }{
		{"SELECT * FROM generate_series(1, 4)", "1\n2\n3\n4\n"},
		{"SELECT s * 10 FROM pg_catalog.generate_series(9, 1, -4) s", "90\n50\n10\n"},
		{"SELECT x FROM generate_series(1, 3) AS g(x) WHERE x <> 2", "1\n3\n"},
		{"SELECT count(*), sum(g) FROM generate_series(1, 5000) g", "5000 12502500\n"},
		{"SELECT * FROM generate_series(1, 1000000) LIMIT 2", "1\n2\n"},
		{"SELECT * FROM generate_series(1, NULL)", ""},
		{"SELECT id, (SELECT count(*) FROM generate_series(1, e.salary / 10)) FROM emp e WHERE id < 3 ORDER BY id", "1 10\n2 8\n"},
		{"SELECT name FROM emp, generate_series(1, 2) g WHERE id = 1", "ann\nann\n"},
		{"SELECT u FROM unnest('{a,\"b c\",NULL}') u", "a\nb c\nNULL\n"},
		{"SELECT string_agg(name, ', ') FROM emp WHERE dept = 'eng'", "ann, bob\n"},
		{"SELECT dept, string_agg(name, '+'), array_agg(bonus) FROM emp GROUP BY dept ORDER BY dept", "eng ann+bob {10,NULL}\nops cid+dee {5,NULL}\nsales fay {7}\nNULL eve {0}\n"},
		{"SELECT string_agg(name, ','), array_agg(name) FROM emp WHERE id > 99", "NULL NULL\n"},
		{"SELECT string_agg(dept, NULL) FROM emp WHERE id < 4", "engengops\n"},
		{"SELECT string_agg(DISTINCT dept, ',') FROM emp WHERE id < 5", "eng,ops\n"},
		{"SELECT array_agg(x) FROM (VALUES ('a b'), (''), ('null'), ('q\"')) v(x)", "{\"a b\",\"\",\"null\",\"q\\\"\"}\n"},
		{"SELECT u FROM unnest((SELECT array_agg(name) FROM emp WHERE id < 3)) u", "ann\nbob\n"},
	}
	checkQueries(t, f, cases)
	errs := []struct{ sql, want string }{
		{"SELECT * FROM generate_series(1, 3, 0)", "step size cannot equal zero"},
		// a quoted literal takes the integer parameter's type, as in PostgreSQL
		{"SELECT * FROM generate_series('a', 3)", `invalid INT64 value "a"`},
		{"SELECT * FROM generate_series('a'::TEXT, 3)", "does not exist"},
		{"SELECT * FROM generate_series(1)", "does not exist"},
		{"SELECT * FROM nosuch(1)", "table function nosuch does not exist"},
		{"SELECT * FROM generate_series(1, e.id), emp e", "missing FROM-clause entry for table \"e\""},
		{"SELECT * FROM unnest('not an array')", "malformed array literal"},
		{"SELECT string_agg(id, ',') FROM emp", "string_agg(INT64, STRING) does not exist"},
		{"SELECT string_agg(name) FROM emp", "takes 2 arguments"},
		{"SELECT * FROM generate_series(1, 2) g(a, b)", "has 1 columns available but 2 columns specified"},
	}
	for _, c := range errs {
		_, err := query(t, f, c.sql)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got error %v, want %q", c.sql, err, c.want)
		}
	}
}

// BenchmarkGenerateSeries is generate_series(1, 1e6) counted: the table
// function's rows through an aggregate, per row.
func BenchmarkGenerateSeries(b *testing.B) {
	benchQuery(b, "SELECT count(*) FROM generate_series(1, 1000000) g", 1_000_000)
}

// BenchmarkStringAgg joins 100 000 texts per iteration; array_agg builds
// the array text of as many integers.
func BenchmarkStringAgg(b *testing.B) {
	benchQuery(b, "SELECT string_agg(name, ',') FROM emp, generate_series(1, 20000) g", 120_000)
}

func BenchmarkArrayAgg(b *testing.B) {
	benchQuery(b, "SELECT array_agg(g) FROM generate_series(1, 100000) g", 100_000)
}

// benchQuery runs sql b.N times and reports the time per input row. The
// fixtures take a *testing.T; a bare one serves, as nothing fails here
// that b.Fatal does not report.
func benchQuery(b *testing.B, sql string, rows int) {
	f := newFake(&testing.T{})
	b.ReportAllocs()
	for b.Loop() {
		if _, err := query(&testing.T{}, f, sql); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(rows), "ns/row")
}
