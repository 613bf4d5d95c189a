package session

import (
	"strings"
	"testing"
)

// TestRenameTableIn: references to the renamed table read the new name
// under the old one as alias; an alias, other tables and columns stay; a
// WITH query of the old name refuses.
func TestRenameTableIn(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"SELECT src.a FROM src WHERE src.a > 1", "FROM events AS src WHERE"},
		{"SELECT x.a FROM src AS x JOIN other ON x.a = other.a", "FROM events AS x JOIN other"},
		{"SELECT a FROM public.src", "FROM events AS src"},
		{"SELECT a FROM versions(src)", "versions(events)"},
		{"SELECT a FROM t WHERE a IN (SELECT a FROM src)", "FROM events AS src)"},
	} {
		got, err := renameTableIn(tc.in, "src", "events")
		if err != nil || !strings.Contains(got, tc.want) {
			t.Errorf("%s: %q, %v; want it to hold %q", tc.in, got, err, tc.want)
		}
		if strings.Contains(strings.ReplaceAll(got, "AS src", ""), "FROM src") {
			t.Errorf("%s: %q still reads src", tc.in, got)
		}
	}
	if _, err := renameTableIn("WITH src AS (SELECT 1 AS a) SELECT a FROM src", "src", "events"); err == nil {
		t.Error("a WITH query named like the table was rewritten")
	}
}
