package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// versionsBoth reads versions(t) by spec with the seek path of one key
// (versionsOfKey) and the general path, and fails when they differ. It
// reports whether the seek path was taken.
func versionsBoth(t *testing.T, h *harness, spec ScanSpec, what string) bool {
	t.Helper()
	read := func(slow bool) []string {
		slowReads = slow
		defer func() { slowReads = false }()
		snap := h.e.Snapshot()
		defer snap.Release()
		tbl, _ := snap.Catalog().TableByID(spec.Table)
		var bs []*types.Batch
		if _, err := snap.Versions(context.Background(), spec, func(b *types.Batch) error { bs = append(bs, b); return nil }); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return render(append(tbl.Names(spec.Cols), VersionsCols...), bs)
	}
	want := read(true)
	before := keyVersionReads.Load()
	got := read(false)
	if !slices.Equal(got, want) {
		t.Fatalf("%s: the versions of one key differ from the general path:\nseek:\n%s\ngeneral:\n%s", what,
			strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	return keyVersionReads.Load() > before
}

// TestVersionsOfKey compares versions(t) of one full key, which seeks the
// key in each part (keyversions.go), with the general read, over the
// groupsSpec table (two ordered groups, one with REVISION BY, and the
// commit-ordered default group; ties, re-deliveries of earlier versions
// and deletes are frequent) in one shard and in three, through
// groupsSchedule's merges (several parts per run), delta parts, memtables,
// ADD COLUMN and DROP COLUMN: every key and one never written, AS OF
// every few commits, with every column and with a few.
func TestVersionsOfKey(t *testing.T) {
	for _, shards := range []int{1, 3} {
		for seed := uint64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprint(shards, seed), func(t *testing.T) {
				h := newHarness(t)
				h.mergePartRows = 16
				h.reopen()
				spec := groupsSpec(catalog.ModeVersioned)
				spec.Shards = shards
				h.create(spec)
				tbl := h.table("t")
				rng := rand.New(rand.NewPCG(seed, 41))
				const keys = 24
				round := groupsRound(t, h, &tbl, rng, keys)
				seeks := 0
				check := func(stage string) {
					t.Helper()
					c := tbl.Columns
					colSets := [][]catalog.ColumnID{allCols(tbl), {c[1].ID}, {c[0].ID, c[len(c)-1].ID}, {}}
					newest := h.e.LastCommit()
					for n := uint64(0); n <= newest; n += 1 + newest/5 {
						for _, cols := range colSets {
							for k := 0; k <= keys; k += 1 + k%2 {
								if k == keys {
									k = 1000 // never written
								}
								lo := types.AppendKey(nil, types.NewInt64(int64(k)))
								rs := []KeyRange{{Lo: lo, Hi: keyPrefixEnd(lo)}}
								spec := ScanSpec{Table: tbl.ID, Cols: cols, AsOf: n, Ranges: rs, BatchRows: 2}
								if versionsBoth(t, h, spec, fmt.Sprintf("%s: key %d at %d, cols %v", stage, k, n, cols)) {
									seeks++
								}
							}
						}
					}
				}
				groupsSchedule(t, h, &tbl, round, check, nil)
				if seeks == 0 {
					t.Fatal("no versions read took the seek path")
				}
			})
		}
	}
}

// TestVersionsOneKey: only a range that can hold one whole sort key is
// read by seeking; a prefix of a composite key, a wider range, several
// ranges or a malformed key take the general read.
func TestVersionsOneKey(t *testing.T) {
	c := catalog.New()
	tbl, _, err := c.CreateTable(balancesSpec(), 1)
	if err != nil {
		t.Fatal(err)
	}
	chain, _ := types.NewUint(types.Of(types.Uint16), 1)
	prefix := types.AppendKey(types.AppendKey(nil, chain), types.NewString("0xab"))
	full := types.AppendKey(append([]byte(nil), prefix...), types.NewString("T01"))
	other := types.AppendKey(append([]byte(nil), prefix...), types.NewString("T02"))
	for _, c := range []struct {
		name string
		rs   []KeyRange
		want bool
	}{
		{"full key", []KeyRange{{Lo: full, Hi: keyPrefixEnd(full)}}, true},
		{"full key, narrower end", []KeyRange{{Lo: full, Hi: append(append([]byte(nil), full...), 0)}}, true},
		{"prefix", []KeyRange{{Lo: prefix, Hi: keyPrefixEnd(prefix)}}, false},
		{"two keys", []KeyRange{{Lo: full, Hi: keyPrefixEnd(other)}}, false},
		{"open end", []KeyRange{{Lo: full}}, false},
		{"empty", []KeyRange{{Lo: full, Hi: full}}, false},
		{"two ranges", []KeyRange{{Lo: full, Hi: keyPrefixEnd(full)}, {Lo: other, Hi: keyPrefixEnd(other)}}, false},
		{"trailing byte", []KeyRange{{Lo: append(append([]byte(nil), full...), 1), Hi: keyPrefixEnd(full)}}, false},
		{"none", nil, false},
	} {
		if got := oneKeyOf(tbl, c.rs) != nil; got != c.want {
			t.Errorf("%s: oneKey says %v, want %v", c.name, got, c.want)
		}
	}
}
