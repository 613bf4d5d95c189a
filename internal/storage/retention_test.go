package storage

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/version"
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
	return versionsBy(tb, snap, t, ScanSpec{Table: t.ID, AsOf: at, Cols: allCols(t), BatchRows: 4})
}

// versionsBy reads versions() of t through snap as spec says, sorted.
func versionsBy(tb testing.TB, snap *Snapshot, t *catalog.Table, spec ScanSpec) []string {
	tb.Helper()
	var bs []*types.Batch
	if _, err := snap.Versions(context.Background(), spec, func(b *types.Batch) error { bs = append(bs, b); return nil }); err != nil {
		tb.Fatalf("versions of %s at %d: %v", t.Name, spec.AsOf, err)
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

// retentionSpec is a versioned table of three attribute groups: g ordered
// by idx (late when idx goes down, repeats when v and idx recur), r by vi
// then rev, and h by commit alone; two shards, bound to policy keep.
func retentionSpec(name string) catalog.TableSpec {
	return catalog.TableSpec{
		Name: name, Mode: catalog.ModeVersioned, Shards: 2,
		Columns: []catalog.ColumnSpec{
			{Name: "k", Type: types.Of(types.Int64), NotNull: true},
			{Name: "v", Type: types.Of(types.String)},
			{Name: "idx", Type: types.Of(types.Int64)},
			{Name: "x", Type: types.Of(types.String)},
			{Name: "vi", Type: types.Of(types.Int32)},
			{Name: "rev", Type: types.Of(types.Int64)},
			{Name: "w", Type: types.Of(types.String)},
		},
		PrimaryKey: []string{"k"},
		Groups: []catalog.GroupSpec{
			{Name: "g", Columns: []string{"v", "idx"}, ValidBy: []string{"idx"}},
			{Name: "r", Columns: []string{"x", "vi", "rev"}, ValidBy: []string{"vi"}, RevisionBy: []string{"rev"}},
			{Name: "h", Columns: []string{"w"}},
		},
		Policies: []string{"keep"},
	}
}

// retentionModel keeps every version and delete committed to a versioned
// table, for version.Resolve.
type retentionModel struct {
	tbl  *catalog.Table
	ords []version.Ordering
	vs   []version.Version
	ds   []version.Delete
}

func newRetentionModel(tbl *catalog.Table) *retentionModel {
	m := &retentionModel{tbl: tbl}
	for _, g := range tbl.Groups {
		for int(g.ID) >= len(m.ords) {
			m.ords = append(m.ords, version.Ordering{})
		}
		m.ords[g.ID] = version.Ordering{Valid: tbl.Names(g.ValidBy), Revision: tbl.Names(g.RevisionBy)}
	}
	return m
}

// add records the rows of w, which take the positions of the commit from
// seq on, and returns the next position.
func (m *retentionModel) add(w Write, seq uint32) uint32 {
	for r := 0; r < w.Batch.Rows; r++ {
		key := types.AppendKey(nil, w.Batch.Cols[0].Get(r))
		if w.Kind == WriteDelete {
			m.ds = append(m.ds, version.Delete{Key: key, Seq: seq})
			seq++
			continue
		}
		g, _ := m.tbl.GroupByID(w.Group)
		var vals []byte
		for c := 1; c < len(w.Cols); c++ {
			vals = types.AppendBinary(vals, w.Batch.Cols[c].Get(r))
		}
		var order [][]byte
		for _, id := range append(slices.Clone(g.ValidBy), g.RevisionBy...) {
			order = append(order, types.AppendKey(nil, w.Batch.Cols[slices.Index(w.Cols, id)].Get(r)))
		}
		m.vs = append(m.vs, version.Version{Key: key, Group: version.GroupID(w.Group), Order: order, Seq: seq, Values: vals})
		seq++
	}
	return seq
}

// committed gives commit n to what add recorded since the last call.
func (m *retentionModel) committed(n uint64) {
	for i := range m.vs {
		if m.vs[i].Commit == 0 {
			m.vs[i].Commit = n
		}
	}
	for i := range m.ds {
		if m.ds[i].Commit == 0 {
			m.ds[i].Commit = n
		}
	}
}

// counts returns how many versions count at all (every one but the
// repeats) and how many of those horizon hz expires; horizon is the
// engine's Ordering.Horizon (a repeat is judged by the horizon at its
// commit).
func (m *retentionModel) counts(tb testing.TB, hz uint64, horizon func(uint64) uint64) (kept, expired int) {
	tb.Helper()
	ords := slices.Clone(m.ords)
	for i := range ords {
		ords[i].Horizon = horizon
	}
	rs, err := version.Resolve(ords, m.vs, m.ds)
	if err != nil {
		tb.Fatal(err)
	}
	for _, r := range rs {
		if r.State == version.Dropped {
			continue
		}
		kept++
		if version.Expired(r, hz) {
			expired++
		}
	}
	return kept, expired
}

// randomRetentionTxn draws one to three writes to tbl over keys 1..keys:
// deletes, versions of g (few idx and v values, so late writes and exact
// repeats are common, several versions of one key in one write too), of r
// and of h.
func randomRetentionTxn(tb testing.TB, rng *rand.Rand, tbl *catalog.Table, keys int) []Write {
	tb.Helper()
	pick := func(s ...string) string { return s[rng.IntN(len(s))] }
	var ws []Write
	for w, nw := 0, 1+rng.IntN(3); w < nw; w++ {
		kind := rng.IntN(20)
		var lines []string
		for r, rows := 0, 1+rng.IntN(4); r < rows; r++ {
			k := 1 + rng.IntN(keys)
			switch {
			case kind < 3:
				lines = append(lines, fmt.Sprintf("k=%d", k))
			case kind < 11:
				lines = append(lines, fmt.Sprintf("k=%d v=%s idx=%d", k, pick("a", "b"), 1+rng.IntN(4)))
			case kind < 16:
				lines = append(lines, fmt.Sprintf("k=%d x=%s vi=%d rev=%d", k, pick("p", "q"), 1+rng.IntN(3), 1+rng.IntN(2)))
			default:
				lines = append(lines, fmt.Sprintf("k=%d w=%s", k, pick("x", "y", "z")))
			}
		}
		var wr Write
		var err error
		switch {
		case kind < 3:
			wr, err = deleteWrite(tbl, lines)
		case kind < 11:
			wr, err = versionWrite(tbl, "g", lines)
		case kind < 16:
			wr, err = versionWrite(tbl, "r", lines)
		default:
			wr, err = versionWrite(tbl, "h", lines)
		}
		if err != nil {
			tb.Fatal(err)
		}
		ws = append(ws, wr)
	}
	return ws
}

// retentionReads renders every read TestRetentionMergeKeepsReads compares:
// scan and versions() at each commit from..to, and versions() at the
// snapshot's commit.
func retentionReads(tb testing.TB, snap *Snapshot, tbl *catalog.Table, from, to uint64, keys int) []string {
	tb.Helper()
	var out []string
	for n := from; n <= to; n++ {
		out = append(out, fmt.Sprintf("scan@%d %v", n, snapScan(tb, snap, tbl, n)))
		out = append(out, fmt.Sprintf("versions@%d %v", n, snapVersions(tb, snap, tbl, n)))
	}
	all := snapVersions(tb, snap, tbl, 0)
	out = append(out, fmt.Sprintf("versions %v", all))
	// versions() of one key takes its own path (keyversions.go), which
	// must leave out the same versions.
	for k := 1; k <= keys; k++ {
		got := keyVersions(tb, snap, tbl, k)
		if want := withKeys(all, k); !slices.Equal(got, want) {
			tb.Fatalf("versions() of key %d:\n got %v\nwant %v (of all keys' versions())", k, got, want)
		}
	}
	return out
}

// keyVersions reads versions() of key k alone through snap, sorted.
func keyVersions(tb testing.TB, snap *Snapshot, t *catalog.Table, k int) []string {
	tb.Helper()
	lo := types.AppendKey(nil, types.NewInt64(int64(k)))
	return versionsBy(tb, snap, t, ScanSpec{Table: t.ID, Cols: allCols(t), Ranges: []KeyRange{{Lo: lo, Hi: keyPrefixEnd(lo)}}})
}

func diffRetentionReads(tb testing.TB, what string, want, got []string) {
	tb.Helper()
	if len(want) != len(got) {
		tb.Fatalf("%s: %d reads, want %d", what, len(got), len(want))
	}
	for i := range want {
		if want[i] != got[i] {
			tb.Fatalf("%s:\n got %s\nwant %s", what, got[i], want[i])
		}
	}
}

// TestRetentionMergeKeepsReads checks R9.3 on a versioned table against
// the claim of version.Expired: dropping the versions that stopped
// counting by the horizon H never changes a read at a commit n ≥ H. Random
// commits (late writes, exact repeats, deletes, several versions of one
// key in one commit) are spread over time with flushes between them; then
// time moves on until the horizon falls in the middle of them. Every scan
// and versions() at H..newest, read before anything is dropped, must read
// the same after a full merge dropped the expired versions, and after a
// restart. The stored rows must fall to what version.Resolve says is left:
// every version but the repeats and the expired ones, plus the delete
// markers; and versions() must leave out exactly the expired versions
// before the merge, while they are still stored.
func TestRetentionMergeKeepsReads(t *testing.T) {
	const (
		keys   = 4
		period = 1000 * time.Second
	)
	// Seeds 1..rounds; STRATA_RETENTION_ROUNDS=n runs more.
	rounds := uint64(12)
	if n, err := strconv.ParseUint(os.Getenv("STRATA_RETENTION_ROUNDS"), 10, 64); err == nil && n > 0 {
		rounds = n
	}
	totalExpired, fell := 0, 0
	for seed := uint64(1); seed <= rounds; seed++ {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x5eed))
			h := newHarness(t)
			h.createRetention("keep", [2]string{"history", "1000 seconds"})
			h.create(retentionSpec("v"))
			tbl := h.table("v")
			m := newRetentionModel(tbl)
			// Commits 0..mid come before the horizon, mid+1.. after it:
			// mid+1 follows mid by 2000 s and the later ones by at most
			// 40 s each, so that a cutoff 800 s before the last commit
			// falls between mid and mid+1 with hundreds of seconds to
			// spare (the harness clock moves 1 s at every reading).
			nc := 8 + rng.IntN(12)
			mid := 2 + rng.IntN(nc-4)
			var commits []uint64
			for c := 0; c < nc; c++ {
				switch {
				case c <= mid:
					h.clock = h.clock.Add(time.Duration(1+rng.IntN(200)) * time.Second)
				case c == mid+1:
					h.clock = h.clock.Add(2000 * time.Second)
				default:
					h.clock = h.clock.Add(time.Duration(1+rng.IntN(40)) * time.Second)
				}
				ws := randomRetentionTxn(t, rng, tbl, keys)
				var seq uint32
				for _, w := range ws {
					seq = m.add(w, seq)
				}
				n := h.mustCommit(&Txn{Kind: KindWrite, Writes: ws, Tables: []string{"v"}, Rows: uint64(seq)})
				m.committed(n)
				commits = append(commits, n)
				if rng.IntN(3) == 0 {
					h.mustFlush()
				}
			}
			h.clock = h.clock.Add(period - 800*time.Second)

			s1 := h.e.Snapshot()
			defer s1.Release()
			ret := s1.Retention(tbl.ID)
			hz, last := ret.Horizon, s1.Commit()
			if hz != commits[mid] || ret.Period != period || !ret.Active() {
				t.Fatalf("retention %+v at commit %d, want horizon %d (commits %v)", ret, last, commits[mid], commits)
			}
			if hz == 0 || hz >= last {
				t.Fatalf("horizon %d, newest commit %d", hz, last)
			}
			kept, expired := m.counts(t, hz, h.e.horizonFn(tbl))
			totalExpired += expired
			want := retentionReads(t, s1, tbl, hz, last, keys)
			// versions() leaves out exactly the expired versions, which
			// are all still stored.
			if got := len(snapVersions(t, s1, tbl, 0)); got != kept-expired {
				t.Fatalf("versions() returns %d versions, want %d counting minus %d expired", got, kept, expired)
			}
			before := storedRows(s1, tbl.ID)
			if before < uint64(kept+len(m.ds)) {
				t.Fatalf("%d rows stored before the merge, want at least %d versions and %d deletes", before, kept, len(m.ds))
			}

			h.mustMerge(MergeFull)
			s2 := h.e.Snapshot()
			defer s2.Release()
			if r2 := s2.Retention(tbl.ID); r2.Horizon != hz {
				t.Fatalf("horizon moved from %d to %d during the merge", hz, r2.Horizon)
			}
			after := storedRows(s2, tbl.ID)
			if wantRows := uint64(kept - expired + len(m.ds)); after != wantRows {
				t.Fatalf("%d rows stored after the merge (%d before), want %d: %d versions counting, %d expired, %d deletes",
					after, before, wantRows, kept, expired, len(m.ds))
			}
			if expired > 0 {
				if after >= before {
					t.Fatalf("%d versions expired, but the merge left %d rows of %d", expired, after, before)
				}
				fell++
			}
			diffRetentionReads(t, "after the merge", want, retentionReads(t, s2, tbl, hz, last, keys))
			if err := h.e.Check(); err != nil {
				t.Fatal(err)
			}
			s1.Release()
			s2.Release()

			// A restart reads the merged parts afresh (no cache of
			// results read before the merge).
			h.reopen()
			s3 := h.e.Snapshot()
			defer s3.Release()
			if r3 := s3.Retention(tbl.ID); r3.Horizon != hz {
				t.Fatalf("horizon %d after reopen, want %d", r3.Horizon, hz)
			}
			if got := storedRows(s3, tbl.ID); got != after {
				t.Fatalf("%d rows stored after reopen, want %d", got, after)
			}
			diffRetentionReads(t, "after reopen", want, retentionReads(t, s3, tbl, hz, last, keys))
		})
	}
	if totalExpired == 0 || fell == 0 {
		t.Errorf("no round expired a version (%d expired, %d rounds dropped rows)", totalExpired, fell)
	}
	t.Logf("%d versions expired; %d of %d rounds dropped rows", totalExpired, fell, rounds)
}

// withKeys keeps the rendered rows whose key (the first column, k) is one
// of keys.
func withKeys(rows []string, keys ...int) []string {
	var out []string
	for _, r := range rows {
		for _, k := range keys {
			if strings.HasPrefix(r, fmt.Sprintf("k=%d ", k)) {
				out = append(out, r)
			}
		}
	}
	return out
}

// TestRetentionAppend checks R9.3 on append tables. With rows = d, a scan
// leaves out the rows committed by the horizon (the last commit before now
// - d) at once, flushed or not, while they are still stored; a full merge
// then drops them from disk, and a scan at any commit from the horizon on
// reads the same before and after the merge and a restart. With rows = d,
// by = ts, storage scans return every row (the planner filters by the
// column), and a full merge drops the rows whose ts is before now - d,
// keeping NULL and recent ones.
func TestRetentionAppend(t *testing.T) {
	const period = 1000 * time.Second
	h := newHarness(t)
	h.createRetention("rows_d", [2]string{"rows", "1000 seconds"})
	h.createRetention("by_ts", [2]string{"rows", "1000 seconds"}, [2]string{"by", "ts"})
	h.create(catalog.TableSpec{Name: "a", Mode: catalog.ModeAppend, Shards: 2, ShardBy: []string{"k"}, Policies: []string{"rows_d"},
		Columns: []catalog.ColumnSpec{{Name: "k", Type: types.Of(types.Int64)}, {Name: "v", Type: types.Of(types.String)}}})
	h.create(catalog.TableSpec{Name: "b", Mode: catalog.ModeAppend, Policies: []string{"by_ts"},
		Columns: []catalog.ColumnSpec{{Name: "k", Type: types.Of(types.Int64)}, {Name: "ts", Type: types.Type{Kind: types.DateTime64, Precision: 3}}}})
	a, b := h.table("a"), h.table("b")
	write := func(tbl *catalog.Table, lines ...string) uint64 {
		t.Helper()
		w, err := appendWrite(tbl, lines)
		if err != nil {
			t.Fatal(err)
		}
		return h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{w}, Tables: []string{tbl.Name}, Rows: uint64(len(lines))})
	}

	// a: two old commits, one flushed and one left in the memtable, then
	// two recent ones after a gap of 3000 s.
	h.clock = h.clock.Add(10 * time.Second)
	write(a, "k=1 v=old", "k=2 v=old", "k=3 v=old")
	h.mustFlush()
	h.clock = h.clock.Add(10 * time.Second)
	c2 := write(a, "k=4 v=old", "k=5 v=old")
	h.clock = h.clock.Add(3000 * time.Second)
	c3 := write(a, "k=6 v=new", "k=7 v=new")
	h.mustFlush()
	h.clock = h.clock.Add(10 * time.Second)
	c4 := write(a, "k=8 v=new")
	// b: ts an hour before the cutoff, NULL, and recent, flushed and not.
	now := h.clock.Add(time.Second)
	ts := func(d time.Duration) string { return now.Add(d).Format("'2006-01-02 15:04:05.000'") }
	write(b, "k=1 ts="+ts(-period-time.Hour), "k=2 ts=NULL", "k=3 ts="+ts(-10*time.Second))
	h.mustFlush()
	last := write(b, "k=4 ts="+ts(-2*period), "k=5 ts="+ts(-period+time.Minute), "k=6 ts="+ts(time.Hour))

	s1 := h.e.Snapshot()
	defer s1.Release()
	ra, rb := s1.Retention(a.ID), s1.Retention(b.ID)
	if ra.Horizon != c2 || ra.ByCol != 0 || ra.Period != period || !ra.Active() {
		t.Fatalf("retention of a: %+v, want horizon %d", ra, c2)
	}
	ts0, _ := b.Column("ts")
	if rb.Horizon != 0 || rb.ByCol != ts0.ID || !rb.Active() {
		t.Fatalf("retention of b: %+v, want no horizon, by column %d", rb, ts0.ID)
	}
	if got := storedRows(s1, a.ID); got != 8 {
		t.Fatalf("a stores %d rows before the merge, want all 8", got)
	}
	scanA := snapScan(t, s1, a, 0)
	wantA := []string{
		fmt.Sprintf("k=6 v=new _commit=%d", c3), fmt.Sprintf("k=7 v=new _commit=%d", c3), fmt.Sprintf("k=8 v=new _commit=%d", c4)}
	if !slices.Equal(scanA, wantA) {
		t.Fatalf("scan of a before the merge:\n got %v\nwant %v", scanA, wantA)
	}
	readsA := func(snap *Snapshot) []string {
		var out []string
		for n := ra.Horizon; n <= last; n++ {
			out = append(out, fmt.Sprintf("scan@%d %v", n, snapScan(t, snap, a, n)))
		}
		// After still keeps only rows after it when it is past the horizon.
		spec := ScanSpec{Table: a.ID, Cols: allCols(a), Commit: true, After: c3}
		var bs []*types.Batch
		if _, err := snap.Scan(context.Background(), spec, func(b *types.Batch) error { bs = append(bs, b); return nil }); err != nil {
			t.Fatal(err)
		}
		return append(out, fmt.Sprintf("after %d %v", c3, render(append(a.Names(spec.Cols), "_commit"), bs)))
	}
	wantReadsA := readsA(s1)
	if got := wantReadsA[len(wantReadsA)-1]; got != fmt.Sprintf("after %d [k=8 v=new _commit=%d]", c3, c4) {
		t.Fatalf("scan after %d: %s", c3, got)
	}
	scanB := snapScan(t, s1, b, 0)
	if len(scanB) != 6 || storedRows(s1, b.ID) != 6 {
		t.Fatalf("b before the merge: %d rows stored, scan %v; want all 6", storedRows(s1, b.ID), scanB)
	}
	wantB := withKeys(scanB, 2, 3, 5, 6)

	h.mustMerge(MergeFull)
	check := func(what string) {
		t.Helper()
		s := h.e.Snapshot()
		defer s.Release()
		if r := s.Retention(a.ID); r.Horizon != c2 {
			t.Fatalf("%s: horizon of a %d, want %d", what, r.Horizon, c2)
		}
		if got := storedRows(s, a.ID); got != 3 {
			t.Errorf("%s: a stores %d rows, want the 3 recent ones", what, got)
		}
		diffRetentionReads(t, what+": a", wantReadsA, readsA(s))
		if got := storedRows(s, b.ID); got != 4 {
			t.Errorf("%s: b stores %d rows, want 4 (NULL and recent ts)", what, got)
		}
		if got := snapScan(t, s, b, 0); !slices.Equal(got, wantB) {
			t.Errorf("%s: scan of b\n got %v\nwant %v", what, got, wantB)
		}
	}
	check("after the merge")
	h.reopen()
	check("after reopen")
	h.mustMerge(MergeFull)
	check("after a second merge")
}

// clockAt is a clock that runs with real time from base, plus whatever
// skip says, for the tests that run the background merger: its
// expiry wakes are real time (expiryWake), so retention must be judged on
// a clock that moves with it, and only when the test says so otherwise.
type clockAt struct {
	base  time.Time
	start time.Time
	skip  atomic.Int64
}

func (c *clockAt) now() time.Time {
	return c.base.Add(time.Since(c.start) + time.Duration(c.skip.Load()))
}

// TestRetentionBackground checks that the background merger drops what
// retention expired by itself: with no MergeNow, and first with no commit
// or flush either (it wakes itself, expiryWake), then after more commits
// and a flush.
func TestRetentionBackground(t *testing.T) {
	clk := &clockAt{base: time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC), start: time.Now()}
	h := (&harness{t: t, bgMerges: true, now: clk.now}).start()
	// A period of 2 s: the merger looks every 0.5 s, and a merge is due
	// once the cutoff moved on by 0.5 s since it first saw the shard.
	h.createRetention("keep", [2]string{"history", "2 seconds"})
	h.createRetention("rows_d", [2]string{"rows", "2 seconds"})
	spec := kvSpec("v", catalog.ModeVersioned)
	spec.Policies = []string{"keep"}
	h.create(spec)
	h.create(catalog.TableSpec{Name: "a", Mode: catalog.ModeAppend, Policies: []string{"rows_d"},
		Columns: []catalog.ColumnSpec{{Name: "k", Type: types.Of(types.Int64)}, {Name: "v", Type: types.Of(types.String)}}})
	v, a := h.table("v"), h.table("a")
	commit := func(ws ...func() (Write, error)) uint64 {
		t.Helper()
		txn := Txn{Kind: KindWrite}
		for _, f := range ws {
			w, err := f()
			if err != nil {
				t.Fatal(err)
			}
			txn.Writes = append(txn.Writes, w)
		}
		return h.mustCommit(&txn)
	}
	var c4 uint64
	for i := 1; i <= 4; i++ {
		c4 = commit(func() (Write, error) {
			return versionWrite(v, "g", []string{fmt.Sprintf("k=1 v=a idx=%d", i), fmt.Sprintf("k=2 v=b idx=%d", i), fmt.Sprintf("k=3 v=c idx=%d", i)})
		}, func() (Write, error) { return appendWrite(a, []string{fmt.Sprintf("k=%d v=x", i)}) })
		if i%2 == 0 {
			h.mustFlush()
		}
	}
	commit(func() (Write, error) { return deleteWrite(v, []string{"k=3"}) })
	// Final runs before anything expires, so that from here on only a
	// merge for retention can drop rows.
	h.mustMerge(MergeFull)
	rows := func() (uint64, uint64) {
		s := h.e.Snapshot()
		defer s.Release()
		return storedRows(s, v.ID), storedRows(s, a.ID)
	}
	// 12 versions and the delete; 4 rows.
	if rv, ra := rows(); rv != 13 || ra != 4 {
		t.Fatalf("stored before anything expired: v %d rows, a %d; want 13 and 4", rv, ra)
	}
	wait := func(what string, wantV, wantA uint64) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			rv, ra := rows()
			if rv == wantV && ra == wantA {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: v stores %d rows, a %d; want %d and %d", what, rv, ra, wantV, wantA)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Let the merger take the kick of MergeNow's flush first: from here on
	// nothing kicks it, it wakes by itself.
	time.Sleep(100 * time.Millisecond)
	// An hour passes without a commit: everything but the current
	// versions of k=1 and k=2 and the delete marker expires.
	clk.skip.Add(int64(time.Hour))
	start := time.Now()
	wait("an hour later", 3, 0)
	t.Logf("the merger dropped the expired rows %v after the clock moved", time.Since(start).Round(time.Millisecond))
	s := h.e.Snapshot()
	if got, want := snapScan(t, s, v, 0), []string{fmt.Sprintf("k=1 v=a idx=4 _commit=%d", c4), fmt.Sprintf("k=2 v=b idx=4 _commit=%d", c4)}; !slices.Equal(got, want) {
		t.Errorf("scan of v: got %v, want %v", got, want)
	}
	if got := len(snapVersions(t, s, v, 0)); got != 2 {
		t.Errorf("versions() of v returns %d versions, want the 2 current ones", got)
	}
	s.Release()

	// More commits and a flush: k=1's version 4 is superseded, and a
	// row appended; they expire an hour later.
	commit(func() (Write, error) { return versionWrite(v, "g", []string{"k=1 v=a idx=5"}) },
		func() (Write, error) { return appendWrite(a, []string{"k=5 v=y"}) })
	h.mustFlush()
	if rv, ra := rows(); rv != 4 || ra != 1 {
		t.Fatalf("stored after more commits: v %d rows, a %d; want 4 and 1", rv, ra)
	}
	clk.skip.Add(int64(time.Hour))
	wait("another hour later", 3, 0)

	// A restart: the merger counts a shard it first sees as merged at that
	// moment's cutoff, so what expires while the engine is down is
	// dropped a quarter of the period (0.5 s) after the open at the
	// earliest, without a commit, a flush or a MergeNow.
	c6 := commit(func() (Write, error) { return versionWrite(v, "g", []string{"k=1 v=a idx=6"}) },
		func() (Write, error) { return appendWrite(a, []string{"k=6 v=z"}) })
	h.mustMerge(MergeFull) // final runs again, nothing expired yet
	if rv, ra := rows(); rv != 4 || ra != 1 {
		t.Fatalf("stored before the restart: v %d rows, a %d; want 4 and 1", rv, ra)
	}
	if err := h.e.Close(); err != nil {
		t.Fatal(err)
	}
	h.e = nil
	clk.skip.Add(int64(time.Hour))
	opened := time.Now()
	h.open()
	s = h.e.Snapshot()
	defer s.Release()
	// Reads leave the expired rows out at once.
	if got, want := snapScan(t, s, v, 0), []string{fmt.Sprintf("k=1 v=a idx=6 _commit=%d", c6), fmt.Sprintf("k=2 v=b idx=4 _commit=%d", c4)}; !slices.Equal(got, want) {
		t.Errorf("scan of v after the restart: got %v, want %v", got, want)
	}
	if got := len(snapVersions(t, s, v, 0)); got != 2 {
		t.Errorf("versions() of v after the restart returns %d versions, want the 2 current ones", got)
	}
	if got := snapScan(t, s, a, 0); len(got) != 0 {
		t.Errorf("scan of a after the restart: %v, want nothing", got)
	}
	wait("after the restart", 3, 0)
	took := time.Since(opened)
	t.Logf("after the restart, the merger dropped the expired rows %v after the open", took.Round(time.Millisecond))
	if took < 400*time.Millisecond {
		t.Errorf("the merger dropped the expired rows %v after the open, before a quarter of the period", took)
	}
}

// TestRetentionRepeatOfExpiredVersion: a version D equal to an older
// version V of its key (same ordering values and values, R3.4) repeats it
// only if V had not stopped counting by the horizon of D's commit
// (version.Ordering.Horizon): here V was superseded 2000 s before D, past
// the 1000 s period, so D counts, and wins its tie with W. Reads must say
// so whether a merge dropped V before D, after it, or not at all (before
// the rule was judged at D's arrival, a merge that dropped V turned D from
// a repeat into the winner).
func TestRetentionRepeatOfExpiredVersion(t *testing.T) {
	setup := func(t *testing.T) (*harness, *catalog.Table, uint64) {
		h := newHarness(t)
		h.createRetention("keep", [2]string{"history", "1000 seconds"})
		spec := kvSpec("t", catalog.ModeVersioned)
		spec.Policies = []string{"keep"}
		h.create(spec)
		tbl := h.table("t")
		h.mustWrite(tbl, "g", []string{"k=1 v=a idx=5"}) // V
		h.mustFlush()
		c2 := h.mustWrite(tbl, "g", []string{"k=1 v=b idx=5"}) // W: ties with V on idx, wins as the later
		h.mustFlush()
		h.clock = h.clock.Add(2000 * time.Second)
		return h, tbl, c2
	}
	// A merge that drops V but not D: the expiry merge of MergeNow without
	// MergeFull takes only the runs that begin by the horizon.
	t.Run("partial", func(t *testing.T) {
		h, tbl, c2 := setup(t)
		c3 := h.mustWrite(tbl, "g", []string{"k=1 v=a idx=5"}) // D: repeats V
		h.mustFlush()
		s1 := h.e.Snapshot()
		defer s1.Release()
		if hz := s1.Retention(tbl.ID).Horizon; hz != c2 {
			t.Fatalf("horizon %d, want %d", hz, c2)
		}
		wantScan, wantVers := snapScan(t, s1, tbl, c3), snapVersions(t, s1, tbl, c3)
		h.mustMerge()
		h.reopen() // no cached results
		s2 := h.e.Snapshot()
		defer s2.Release()
		if hz := s2.Retention(tbl.ID).Horizon; hz != c2 {
			t.Fatalf("horizon after the merge %d, want %d", hz, c2)
		}
		if want := []string{fmt.Sprintf("k=1 v=a idx=5 _commit=%d", c3)}; !slices.Equal(wantScan, want) {
			t.Errorf("scan at %d before the merge: %v, want D current: %v", c3, wantScan, want)
		}
		if got := snapScan(t, s2, tbl, c3); !slices.Equal(got, wantScan) {
			t.Errorf("scan at %d after the merge:\n got %v\nwant %v", c3, got, wantScan)
		}
		if got := snapVersions(t, s2, tbl, c3); !slices.Equal(got, wantVers) {
			t.Errorf("versions at %d after the merge:\n got %v\nwant %v", c3, got, wantVers)
		}
	})
	// The same commits on two engines, a full merge on one of them before
	// D: the reads after D must not depend on it.
	t.Run("later", func(t *testing.T) {
		plain, tbl, _ := setup(t)
		merged, mtbl, _ := setup(t)
		merged.mustMerge(MergeFull)
		merged.clock = plain.clock
		plain.mustWrite(tbl, "g", []string{"k=1 v=a idx=5"})
		merged.mustWrite(mtbl, "g", []string{"k=1 v=a idx=5"})
		ps, ms := plain.e.Snapshot(), merged.e.Snapshot()
		defer ps.Release()
		defer ms.Release()
		if got, want := snapScan(t, ms, mtbl, 0), snapScan(t, ps, tbl, 0); !slices.Equal(got, want) {
			t.Errorf("scan after a repeat of an expired version:\n got %v (merged before it)\nwant %v (not merged)", got, want)
		}
		if got, want := snapVersions(t, ms, mtbl, 0), snapVersions(t, ps, tbl, 0); !slices.Equal(got, want) {
			t.Errorf("versions after a repeat of an expired version:\n got %v (merged before it)\nwant %v (not merged)", got, want)
		}
	})
}

// TestRetentionPendingOneCutoff: a statement of a transaction that has
// written reads through its snapshot with the writes pending
// (WithPending), and an AS OF read of it goes to the snapshot that one was
// built on. Retention must judge both at one instant, the one the planner
// checked the horizon at ("a statement sees one cutoff for all its
// reads"): versions() AS OF the horizon the pending snapshot reports must
// still return the version that was current there.
// (Scan and Versions judge retention on the snapshot they are called on,
// before going to the one an AS OF read uses.)
func TestRetentionPendingOneCutoff(t *testing.T) {
	h := newHarness(t)
	h.createRetention("keep", [2]string{"history", "1000 seconds"})
	spec := kvSpec("t", catalog.ModeVersioned)
	spec.Policies = []string{"keep"}
	h.create(spec)
	tbl := h.table("t")
	c1 := h.mustWrite(tbl, "g", []string{"k=1 v=a idx=1"})
	at1 := h.e.Snapshot().Commits()[c1-1].At
	h.clock = h.clock.Add(100 * time.Second)
	c2 := h.mustWrite(tbl, "g", []string{"k=1 v=b idx=2"}) // ends the first version at c2
	h.clock = at1.Add(1000*time.Second + 50*time.Second)   // the cutoff 50 s after c1, 50 s before c2

	s := h.e.Snapshot()
	defer s.Release()
	w, err := versionWrite(tbl, "g", []string{"k=2 v=c idx=1"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.WithPending([]Write{w})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Release()
	if hz := p.Retention(tbl.ID).Horizon; hz != c1 {
		t.Fatalf("horizon %d, want %d", hz, c1)
	}
	// The statement goes on 100 s later (on the harness clock, a few
	// readings): the cutoff it checked must still hold.
	h.clock = h.clock.Add(100 * time.Second)
	got := snapVersions(t, p, tbl, c1)
	if want := []string{fmt.Sprintf("k=1 v=a idx=1 _group=g _commit=%d _state=current _superseded_by=NULL _reason=''", c1)}; !slices.Equal(got, want) {
		t.Errorf("versions() AS OF %d (the horizon) through the pending snapshot:\n got %v\nwant %v (as the scan reads: %v; horizon of its AS OF snapshot %d, c2 = %d)",
			c1, got, want, snapScan(t, p, tbl, c1), p.readsAt(c1).Retention(tbl.ID).Horizon, c2)
	}
}

// TestRetentionDateCutoffIsUTC: a DATE expires once its whole UTC day is
// before the cutoff, whatever zone the instant was read in (the process's
// local zone included).
func TestRetentionDateCutoffIsUTC(t *testing.T) {
	h := newHarness(t)
	h.create(catalog.TableSpec{Name: "d", Mode: catalog.ModeAppend, Columns: []catalog.ColumnSpec{{Name: "day", Type: types.Of(types.Date)}}})
	tbl := h.table("d")
	col, _ := tbl.Column("day")
	tokyo := time.FixedZone("JST", 9*3600)
	// 2026-10-01 05:00 in Tokyo is 2026-09-30 20:00 UTC: the cutoff's UTC
	// day is the 30th, so the 30th is not yet wholly before it.
	cut := time.Date(2026, 10, 1, 5, 0, 0, 0, tokyo)
	x, err := expiryOf(tbl, Retention{ByCol: col.ID, ByCutoff: cut, Cutoff: cut})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := types.ParseText(types.Of(types.Date), "2026-09-30")
	if types.Compare(x.Before, want) != 0 {
		t.Fatalf("rows expire before %v, want %v", x.Before, want)
	}
}
