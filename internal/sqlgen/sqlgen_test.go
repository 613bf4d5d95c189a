package sqlgen

import (
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/sql/parser"
)

// TestDeterministic: one seed, one sequence, so a failure's seed
// reproduces it.
func TestDeterministic(t *testing.T) {
	a, b := New(7), New(7)
	for i := 0; i < 500; i++ {
		x, y := a.Next(), b.Next()
		if x != y {
			t.Fatalf("statement %d differs: %q vs %q", i, x, y)
		}
		a.Result(nil)
		b.Result(nil)
	}
}

// families are fragments that each statement family contains.
var families = []string{"CREATE TABLE", "DROP TABLE", "ALTER TABLE", "INSERT INTO", "UPSERT INTO", "UPDATE ", "DELETE FROM",
	"AS OF COMMIT", "AS OF TIMESTAMP", "versions(", "JOIN", "CAST(", "GROUP BY", "count(", "NULL", "BEGIN", "ROLLBACK",
	"MODE APPEND", "MODE VERSIONED", "VALID BY", "UNION", "EXISTS", "18446744073709551615", " OVER ("}

// TestCoverage: the generator reaches every statement family it promises,
// and most of what it writes parses (the rest are deliberate mistakes).
func TestCoverage(t *testing.T) {
	g := New(1)
	seen := map[string]int{}
	parsed := 0
	const n = 3000
	for i := 0; i < n; i++ {
		sql := g.Next()
		_, err := parser.Parse(sql)
		if err == nil {
			parsed++
		}
		g.Result(err)
		for _, w := range families {
			if strings.Contains(sql, w) {
				seen[w]++
			}
		}
	}
	for _, w := range families {
		if seen[w] == 0 {
			t.Errorf("no statement with %q in %d", w, n)
		}
	}
	if parsed < n*8/10 {
		t.Errorf("only %d of %d statements parse", parsed, n)
	}
}
