package storage

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// createRetention commits CREATE POLICY name FOR RETENTION (settings...),
// each setting an INTERVAL unless it is by (a column name).
func (h *harness) createRetention(name string, settings ...[2]string) {
	h.t.Helper()
	spec := catalog.PolicySpec{Name: name, Role: "retention"}
	for _, s := range settings {
		v := catalog.Value{Kind: catalog.ValueInterval, Text: s[1]}
		if s[0] == "by" {
			v.Kind = catalog.ValueIdent
		}
		spec.Settings = append(spec.Settings, catalog.SettingSpec{Key: s[0], Value: v})
	}
	h.ddl(func(c *catalog.Catalog, commit uint64) error {
		_, _, err := c.CreatePolicy(spec, commit)
		return err
	})
}

// snapScan reads table t through snap at commit at (0 = the snapshot's)
// with every current column and _commit, sorted.
func snapScan(tb testing.TB, snap *Snapshot, t *catalog.Table, at uint64) []string {
	tb.Helper()
	spec := ScanSpec{Table: t.ID, AsOf: at, Cols: allCols(t), Commit: true, BatchRows: 5}
	var bs []*types.Batch
	if _, err := snap.Scan(context.Background(), spec, func(b *types.Batch) error { bs = append(bs, b); return nil }); err != nil {
		tb.Fatalf("scan %s at %d: %v", t.Name, at, err)
	}
	out := render(append(t.Names(spec.Cols), "_commit"), bs)
	slices.Sort(out)
	return out
}

// snapVersions reads versions() of t through snap at commit at, sorted.
func snapVersions(tb testing.TB, snap *Snapshot, t *catalog.Table, at uint64) []string {
	tb.Helper()
	spec := ScanSpec{Table: t.ID, AsOf: at, Cols: allCols(t), BatchRows: 4}
	var bs []*types.Batch
	if _, err := snap.Versions(context.Background(), spec, func(b *types.Batch) error { bs = append(bs, b); return nil }); err != nil {
		tb.Fatalf("versions of %s at %d: %v", t.Name, at, err)
	}
	out := render(append(t.Names(spec.Cols), VersionsCols...), bs)
	slices.Sort(out)
	return out
}

// storedRows is what system.shards counts for table t: every retained
// version, delete marker and append row, in parts and memtables.
func storedRows(snap *Snapshot, t catalog.TableID) uint64 {
	var n uint64
	for _, s := range snap.Shards(t) {
		n += s.Rows
	}
	return n
}

func (h *harness) mustFlush() {
	h.t.Helper()
	if err := h.e.Flush(context.Background()); err != nil {
		h.t.Fatalf("flush: %v", err)
	}
}

func (h *harness) mustMerge(opts ...MergeOption) {
	h.t.Helper()
	if err := h.e.MergeNow(context.Background(), opts...); err != nil {
		h.t.Fatalf("merge: %v", err)
	}
}

// TestRetentionRepeatOfExpiredVersion: a version D that repeats an older
// version V (same key, ordering values and values, R3.4) reads as a repeat
// while V is on disk. Once V has expired (superseded before the horizon)
// a merge that drops V without D (a MergeNow that merges only the runs
// reaching back to the horizon) must not turn D into a version that
// counts: reads at commits after the horizon may not change.
func TestRetentionRepeatOfExpiredVersion(t *testing.T) {
	h := newHarness(t)
	h.createRetention("keep", [2]string{"history", "1000 seconds"})
	spec := kvSpec("t", catalog.ModeVersioned)
	spec.Policies = []string{"keep"}
	h.create(spec)
	tbl := h.table("t")
	h.mustWrite(tbl, "g", []string{"k=1 v=a idx=5"}) // V
	h.mustFlush()
	c2 := h.mustWrite(tbl, "g", []string{"k=1 v=b idx=5"}) // W: ties on idx, wins by position
	h.mustFlush()
	h.clock = h.clock.Add(2000 * time.Second)
	c3 := h.mustWrite(tbl, "g", []string{"k=1 v=a idx=5"}) // D: repeats V
	h.mustFlush()
	// The horizon falls between W and D.
	h.clock = h.e.Snapshot().Commits()[c2-1].At.Add(1000*time.Second + 500*time.Second)

	s1 := h.e.Snapshot()
	defer s1.Release()
	if hz := s1.Retention(tbl.ID).Horizon; hz != c2 {
		t.Fatalf("horizon %d, want %d", hz, c2)
	}
	wantScan := snapScan(t, s1, tbl, c3)
	wantVers := snapVersions(t, s1, tbl, c3)
	t.Logf("before: scan %v versions %v", wantScan, wantVers)

	h.mustMerge() // not full: the expiry merge takes the runs through the horizon
	s2 := h.e.Snapshot()
	defer s2.Release()
	if hz := s2.Retention(tbl.ID).Horizon; hz != c2 {
		t.Fatalf("horizon after the merge %d, want %d", hz, c2)
	}
	gotScan := snapScan(t, s2, tbl, c3)
	gotVers := snapVersions(t, s2, tbl, c3)
	if !slices.Equal(gotScan, wantScan) {
		t.Errorf("scan at %d after the merge:\n got %v\nwant %v", c3, gotScan, wantScan)
	}
	if !slices.Equal(gotVers, wantVers) {
		t.Errorf("versions at %d after the merge:\n got %v\nwant %v", c3, gotVers, wantVers)
	}
	t.Logf("after: scan %v (newest %v) versions %v", gotScan, snapScan(t, s2, tbl, 0), gotVers)
	_ = fmt.Sprint
}
