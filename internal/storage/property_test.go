package storage

import (
	"fmt"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
	"pgregory.net/rapid"
)

// TestResolvedMatchesResolve checks invariant 4 of doc.go: after any
// sequence of commits of versions and deletes, what the memtable recorded
// about each retained version is exactly what version.Resolve says given
// every write, and the versions it did not retain are exactly the repeats.
func TestResolvedMatchesResolve(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		h := newHarness(t)
		h.create(kvSpec("t", catalog.ModeVersioned))
		tbl := h.table("t")
		g, _ := tbl.Group("g")
		ords := make([]version.Ordering, int(g.ID)+1)
		ords[g.ID] = version.Ordering{Valid: []string{"idx"}}
		var vs []version.Version
		var ds []version.Delete
		commits := rapid.IntRange(1, 12).Draw(rt, "commits")
		for c := 0; c < commits; c++ {
			var txn Txn
			txn.Kind = KindWrite
			var seq uint32
			for w, nw := 0, rapid.IntRange(1, 3).Draw(rt, "writes"); w < nw; w++ {
				rows := rapid.IntRange(1, 5).Draw(rt, "rows")
				if rows == 5 {
					// Longer than a look-ahead (addEncoded), so that one
					// key's rows fall on both sides of its boundaries.
					rows = lookAhead + rapid.IntRange(1, lookAhead).Draw(rt, "more")
				}
				var lines []string
				del := rapid.IntRange(0, 4).Draw(rt, "kind") == 0
				for r := 0; r < rows; r++ {
					k := rapid.IntRange(1, 3).Draw(rt, "k")
					if del {
						lines = append(lines, fmt.Sprintf("k=%d", k))
						continue
					}
					idx := rapid.IntRange(1, 3).Draw(rt, "idx")
					v := rapid.SampledFrom([]string{"a", "b"}).Draw(rt, "v")
					lines = append(lines, fmt.Sprintf("k=%d v=%s idx=%d", k, v, idx))
				}
				var wr Write
				var err error
				if del {
					wr, err = deleteWrite(tbl, lines)
				} else {
					wr, err = versionWrite(tbl, "g", lines)
				}
				if err != nil {
					rt.Fatal(err)
				}
				txn.Writes = append(txn.Writes, wr)
				// The model's inputs, encoded as the engine encodes them.
				for r := 0; r < wr.Batch.Rows; r++ {
					key := types.AppendKey(nil, wr.Batch.Cols[0].Get(r))
					if del {
						ds = append(ds, version.Delete{Key: key, Seq: seq})
					} else {
						var vals []byte
						vals = types.AppendBinary(vals, wr.Batch.Cols[1].Get(r))
						vals = types.AppendBinary(vals, wr.Batch.Cols[2].Get(r))
						order := [][]byte{types.AppendKey(nil, wr.Batch.Cols[2].Get(r))}
						vs = append(vs, version.Version{Key: key, Group: version.GroupID(g.ID), Order: order, Seq: seq, Values: vals})
					}
					seq++
				}
			}
			n := h.mustCommit(&txn)
			for i := range vs {
				if vs[i].Commit == 0 {
					vs[i].Commit = n
				}
			}
			for i := range ds {
				if ds[i].Commit == 0 {
					ds[i].Commit = n
				}
			}
		}
		want, err := version.Resolve(ords, vs, ds)
		if err != nil {
			rt.Fatal(err)
		}
		type posKey struct {
			key string
			pos version.Pos
		}
		got := map[posKey]version.Resolved{}
		m := h.e.cur.Load().tables[tbl.ID].shards[0].keyed
		m.ordered()
		for e := m.list.first(); e != nil; e = e.next[0] {
			for _, gh := range e.groups {
				for i := range gh.vers {
					got[posKey{string(e.key), gh.vers[i].v.Pos()}] = gh.res[i]
				}
			}
		}
		retained := 0
		for i, w := range want {
			k := posKey{string(vs[i].Key), vs[i].Pos()}
			r, ok := got[k]
			if w.State == version.Dropped {
				if ok {
					rt.Fatalf("repeat at %v retained", k.pos)
				}
				continue
			}
			retained++
			if !ok {
				rt.Fatalf("version at %v not retained (want %v)", k.pos, w.State)
			}
			if r.State != w.State || r.WonAt != w.WonAt || r.EndedAt != w.EndedAt || r.SupersededBy != w.SupersededBy {
				rt.Fatalf("version at %v: memtable %+v, Resolve %+v", k.pos, r, w)
			}
		}
		if retained != len(got) {
			rt.Fatalf("memtable retains %d versions, Resolve %d", len(got), retained)
		}
		if err := h.e.Check(); err != nil {
			rt.Fatal(err)
		}
	})
}
