package exec_test

import "testing"

// TestOrderedAggregates checks the aggregates that read their rows in an
// order: string_agg/array_agg with ORDER BY (over groups, where one sort
// serves all groups) and the ordered-set aggregates.
func TestOrderedAggregates(t *testing.T) {
	f := newFake(t)
	cases := []struct{ sql, want string }{
		{"SELECT string_agg(name, ',' ORDER BY salary DESC NULLS LAST) FROM emp", "ann,dee,bob,cid,eve,fay\n"},
		{"SELECT dept, string_agg(name, '|' ORDER BY id DESC), array_agg(bonus ORDER BY bonus NULLS FIRST) FROM emp GROUP BY dept ORDER BY dept", "eng bob|ann {NULL,10}\nops dee|cid {NULL,5}\nsales fay {7}\nNULL eve {0}\n"},
		{"SELECT array_agg(DISTINCT dept ORDER BY dept DESC) FROM emp", "{NULL,sales,ops,eng}\n"},
		{"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY salary), percentile_disc(0.5) WITHIN GROUP (ORDER BY salary), percentile_cont(0.1) WITHIN GROUP (ORDER BY salary DESC) FROM emp", "80 80 96\n"},
		{"SELECT dept, percentile_disc(1) WITHIN GROUP (ORDER BY name) FROM emp GROUP BY dept ORDER BY dept", "eng bob\nops dee\nsales fay\nNULL eve\n"},
		{"SELECT mode() WITHIN GROUP (ORDER BY dept), mode() WITHIN GROUP (ORDER BY dept DESC) FROM emp", "eng ops\n"},
		{"SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY salary) FROM emp WHERE id > 100", "NULL\n"},
	}
	checkQueries(t, f, cases)
	if _, err := query(t, f, "SELECT percentile_disc(-0.1) WITHIN GROUP (ORDER BY salary) FROM emp"); err == nil {
		t.Error("a fraction below 0 was accepted")
	}
}
