package system_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/strata-db/strata"
)

// TestViewOIDCollision checks that two views whose names share the 28-bit
// hash their oids come from get distinct oids, that the one created first
// keeps the hash, and that every catalog agrees on them before and after a
// restart. v84200 and v5704 collide (FNV-1a, low 28 bits 209648845).
func TestViewOIDCollision(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	const base = 0x80000000 + 209648845
	oids := func(db *strata.DB) map[string]int64 {
		t.Helper()
		s := db.NewSession()
		out := map[string]int64{}
		for _, name := range []string{"v84200", "v5704"} {
			r, err := s.Run(ctx, "SELECT oid::bigint, reltype::bigint FROM pg_class WHERE relname = '"+name+"'")
			if err != nil || len(r.Rows) != 1 {
				t.Fatalf("%s in pg_class: %v %v", name, r, err)
			}
			oid := num(t, r.Rows[0][0])
			out[name] = oid
			checks := []string{
				"SELECT '" + name + "'::regclass::oid::bigint",
				"SELECT max(attrelid)::bigint FROM pg_attribute WHERE attrelid = " + r.Rows[0][0].String(),
			}
			for _, q := range checks {
				r, err := s.Run(ctx, q)
				if err != nil || len(r.Rows) != 1 || num(t, r.Rows[0][0]) != oid {
					t.Errorf("%s: %v %v, want %d", q, r, err, oid)
				}
			}
			r, err = s.Run(ctx, "SELECT pg_get_viewdef("+r.Rows[0][0].String()+") LIKE '%"+name+"%'")
			if err != nil || len(r.Rows) != 1 || r.Rows[0][0].String() != "true" {
				t.Errorf("%s: pg_get_viewdef of its oid: %v %v", name, r, err)
			}
		}
		return out
	}
	db, err := strata.Open(dir, strata.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := db.NewSession()
	for _, q := range []string{"CREATE VIEW v84200 AS SELECT 'v84200' AS x", "CREATE VIEW v5704 AS SELECT 'v5704' AS y, 2 AS z"} {
		if _, err := s.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	before := oids(db)
	if before["v84200"] != base || before["v5704"] != base+1 {
		t.Errorf("oids %v: want v84200 at %d (created first), v5704 at the next one", before, int64(base))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = strata.Open(dir, strata.Options{}); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	after := oids(db)
	for n, o := range before {
		if after[n] != o {
			t.Errorf("%s: oid %d after a restart, %d before", n, after[n], o)
		}
	}
}

func num(t *testing.T, v strata.Value) int64 {
	t.Helper()
	n, err := strconv.ParseInt(v.String(), 10, 64)
	if err != nil {
		t.Fatalf("%v is not a number: %v", v, err)
	}
	return n
}
