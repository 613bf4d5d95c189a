package storage

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
)

func kvSpec(name string, mode catalog.Mode) catalog.TableSpec {
	return catalog.TableSpec{
		Name: name, Mode: mode,
		Columns: []catalog.ColumnSpec{
			{Name: "k", Type: types.Of(types.Int64), NotNull: true},
			{Name: "v", Type: types.Of(types.String)},
			{Name: "idx", Type: types.Of(types.Int64)},
		},
		PrimaryKey: []string{"k"},
		Groups:     []catalog.GroupSpec{{Name: "g", Columns: []string{"v", "idx"}, ValidBy: []string{"idx"}}},
	}
}

// createKV commits CREATE TABLE t with the kvSpec schema, versioned, and
// returns the table.
func createKV(t testing.TB, e *Engine) *catalog.Table {
	t.Helper()
	if _, err := e.Commit(context.Background(), &Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, commit uint64) error {
		_, _, err := c.CreateTable(kvSpec("t", catalog.ModeVersioned), commit)
		return err
	}}); err != nil {
		t.Fatal(err)
	}
	tbl, _ := e.Catalog().Table("t")
	return tbl
}

func kvWrite(t testing.TB, tbl *catalog.Table, rows ...string) Write {
	t.Helper()
	w, err := versionWrite(tbl, "g", rows)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestNewDatabase(t *testing.T) {
	h := newHarness(t)
	snap := h.e.Snapshot()
	defer snap.Release()
	if snap.Commit() != 0 || len(snap.Catalog().Tables()) != 0 || len(snap.Commits()) != 0 {
		t.Fatalf("new database: commit %d, %d tables, %d commits", snap.Commit(), len(snap.Catalog().Tables()), len(snap.Commits()))
	}
	if n := h.create(kvSpec("t", catalog.ModeVersioned)); n != 1 {
		t.Fatalf("first commit is %d, want 1 (R5.1)", n)
	}
}

func TestSecondOpenNamesHolder(t *testing.T) {
	dir := t.TempDir()
	e, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = Open(dir, Options{})
	if !errors.Is(err, vfs.ErrLocked) || !strings.Contains(err.Error(), "pid") {
		t.Fatalf("second open: %v, want ErrLocked naming the holder", err)
	}
}

func TestFailedStatementsTakeNoNumber(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	if _, err := h.commit(&Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, commit uint64) error {
		_, _, err := c.CreateTable(kvSpec("t", catalog.ModeVersioned), commit)
		return err
	}}); err == nil {
		t.Fatal("duplicate CREATE TABLE committed")
	}
	tbl := h.table("t")
	w := kvWrite(t, tbl, "k=1 v=a idx=1")
	if _, err := h.commit(&Txn{Kind: KindWrite, CatalogVersion: 99, Writes: []Write{w}}); !errors.Is(err, ErrSchemaChanged) {
		t.Fatalf("stale plan: %v, want ErrSchemaChanged", err)
	}
	bad := w
	bad.Cols = bad.Cols[1:]
	bad.Batch = &types.Batch{Cols: w.Batch.Cols[1:], Rows: w.Batch.Rows}
	if _, err := h.commit(&Txn{Kind: KindWrite, Writes: []Write{bad}}); !errors.Is(err, ErrInvalidTxn) {
		t.Fatalf("write without key: %v, want ErrInvalidTxn", err)
	}
	if n := h.mustCommit(&Txn{Kind: KindWrite, CatalogVersion: 1, Writes: []Write{w}}); n != 2 {
		t.Fatalf("commit after failures is %d, want 2", n)
	}
}

// TestConcurrentCommits checks group commit and publication order: every
// acknowledged commit has a distinct, gapless number, and a snapshot at n
// holds exactly the rows of commits ≤ n, whatever the interleaving.
func TestConcurrentCommits(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeUpsert))
	tbl := h.table("t")
	const writers, each = 8, 40
	var wg sync.WaitGroup
	seqs := make(chan uint64, writers*each)
	stop := make(chan struct{})
	readerErr := make(chan error, 1)
	go func() {
		defer close(readerErr)
		for {
			select {
			case <-stop:
				return
			default:
			}
			snap := h.e.Snapshot()
			rows := 0
			_, err := snap.Scan(context.Background(), ScanSpec{Table: tbl.ID, Cols: []catalog.ColumnID{tbl.Key[0]}, Commit: true},
				func(b *types.Batch) error {
					for _, c := range b.Cols[1].Uint64s() {
						if c > snap.Commit() {
							return fmt.Errorf("row of commit %d in snapshot %d", c, snap.Commit())
						}
					}
					rows += b.Rows
					return nil
				})
			snap.Release()
			if err == nil && uint64(rows) != snap.Commit()-1 {
				err = fmt.Errorf("snapshot %d holds %d rows, want %d", snap.Commit(), rows, snap.Commit()-1)
			}
			if err != nil {
				readerErr <- err
				return
			}
		}
	}()
	for w := 0; w < writers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < each; i++ {
				wr := kvWrite(t, tbl, fmt.Sprintf("k=%d v=x idx=1", w*each+i))
				n, err := h.commit(&Txn{Kind: KindWrite, Writes: []Write{wr}, Tables: []string{"t"}, Rows: 1})
				if err != nil {
					t.Error(err)
					return
				}
				seqs <- n
			}
		}(w)
	}
	wg.Wait()
	close(stop)
	if err := <-readerErr; err != nil {
		t.Fatal(err)
	}
	close(seqs)
	seen := map[uint64]bool{}
	for n := range seqs {
		if seen[n] {
			t.Fatalf("commit %d acknowledged twice", n)
		}
		seen[n] = true
	}
	for n := uint64(2); n <= writers*each+1; n++ {
		if !seen[n] {
			t.Fatalf("commit %d missing", n)
		}
	}
	st := h.e.wal.Stats()
	t.Logf("%d records in %d batches (max %d per fsync)", st.Records, st.Batches, st.MaxBatch)
}

// TestFsyncFailure: a failed fsync fails its commit and every later one;
// reads keep serving what was acknowledged; a reopen recovers it all.
func TestFsyncFailure(t *testing.T) {
	dir := t.TempDir()
	mem := vfs.NewMem()
	fault := vfs.NewFault(mem)
	e, err := Open(dir, Options{FS: fault})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tbl := createKV(t, e)
	if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=1 v=a idx=1")}}); err != nil {
		t.Fatal(err)
	}
	fault.Inject(vfs.Rule{Op: vfs.OpSync, Nth: 1, Match: "wal-"})
	if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=2 v=b idx=1")}}); !errors.Is(err, ErrFailed) {
		t.Fatalf("commit over a failed fsync: %v, want ErrFailed", err)
	}
	if _, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=3 v=c idx=1")}}); !errors.Is(err, ErrFailed) {
		t.Fatalf("commit after a failed fsync: %v, want ErrFailed", err)
	}
	snap := e.Snapshot()
	if snap.Commit() != 2 {
		t.Fatalf("snapshot after failure at %d, want 2", snap.Commit())
	}
	snap.Release()
	_ = e.Close()
	fault.Clear()
	e, err = Open(dir, Options{FS: mem})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if c := e.LastCommit(); c != 2 {
		t.Fatalf("after reopen at commit %d, want 2", c)
	}
	if n, err := e.Commit(ctx, &Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=3 v=c idx=1")}}); err != nil || n != 3 {
		t.Fatalf("commit after reopen: %d, %v", n, err)
	}
}

// TestCommitAtClampedWrite checks a write commit whose clock went back,
// compressed for the WAL with that time before the ordering lock and
// again with the clamped time under it, stores the clamped time: its
// commit time equals the previous one's, and WAL replay reads the same.
func TestCommitAtClampedWrite(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	c1 := h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=1 v=a idx=1")}})
	h.clock = h.clock.Add(-time.Minute)
	c2 := h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=2 v=b idx=1")}})
	at := func() (time.Time, time.Time) {
		snap := h.e.Snapshot()
		defer snap.Release()
		cs := snap.Commits()
		return cs[c1-1].At, cs[c2-1].At
	}
	a1, a2 := at()
	if !a2.Equal(a1) {
		t.Fatalf("commit %d at %v after commit %d at %v: the clock going back was not clamped", c2, a2, c1, a1)
	}
	h.crash()
	if r1, r2 := at(); !r1.Equal(a1) || !r2.Equal(a2) {
		t.Fatalf("after replay commits %d and %d at %v and %v, want %v and %v", c1, c2, r1, r2, a1, a2)
	}
}

func TestCommitAt(t *testing.T) {
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := []time.Time{base, base.Add(time.Minute), base.Add(30 * time.Second), base.Add(2 * time.Minute)}
	i := 0
	e, err := Open(t.TempDir(), Options{Clock: func() time.Time { c := clock[i]; i++; return c }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for range clock {
		if _, err := e.Commit(context.Background(), &Txn{Kind: KindDDL, DDL: func(*catalog.Catalog, uint64) error { return nil }}); err != nil {
			t.Fatal(err)
		}
	}
	snap := e.Snapshot()
	defer snap.Release()
	cs := snap.Commits()
	if !cs[2].At.Equal(cs[1].At) {
		t.Fatalf("clock going back not clamped: %v after %v", cs[2].At, cs[1].At)
	}
	for _, tc := range []struct {
		at   time.Time
		want uint64
		ok   bool
	}{
		{base.Add(-time.Second), 0, false},
		{base, 1, true},
		{base.Add(90 * time.Second), 3, true},
		{base.Add(time.Hour), 4, true},
	} {
		got, ok := snap.CommitAt(tc.at)
		if got != tc.want || ok != tc.ok {
			t.Errorf("CommitAt(%v) = %d, %v; want %d, %v", tc.at, got, ok, tc.want, tc.ok)
		}
	}
}

// TestSnapshotIsolation: a snapshot keeps reading its commit while later
// commits change the same keys.
func TestSnapshotIsolation(t *testing.T) {
	for _, mode := range []catalog.Mode{catalog.ModeUpsert, catalog.ModeVersioned} {
		h := newHarness(t)
		h.create(kvSpec("t", mode))
		tbl := h.table("t")
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=1 v=old idx=1")}})
		snap := h.e.Snapshot()
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=1 v=new idx=2", "k=2 v=x idx=1")}})
		d, _ := deleteWrite(tbl, []string{"k=1"})
		h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{d}})
		row, ok, err := snap.Lookup(context.Background(), tbl.ID, []types.Value{types.NewInt64(1)}, ScanSpec{Cols: allCols(tbl)})
		if err != nil || !ok || row[1].Str() != "old" {
			t.Fatalf("%s: old snapshot reads %v %v %v", mode, row, ok, err)
		}
		snap.Release()
		if _, _, err := snap.Lookup(context.Background(), tbl.ID, []types.Value{types.NewInt64(1)}, ScanSpec{}); !errors.Is(err, ErrReleased) {
			t.Fatalf("read after Release: %v", err)
		}
	}
}

func TestCheck(t *testing.T) {
	h := newHarness(t)
	h.create(kvSpec("t", catalog.ModeVersioned))
	tbl := h.table("t")
	h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{kvWrite(t, tbl, "k=1 v=a idx=2", "k=1 v=b idx=1")}})
	if err := h.e.Check(); err != nil {
		t.Fatal(err)
	}
	// A wrong recorded resolution is found.
	m := h.e.cur.Load().tables[tbl.ID].shards[0].keyed
	m.ordered()
	e := m.list.first()
	e.groups[0].res[1].EndedAt = 7
	if err := h.e.Check(); !errors.Is(err, ErrCheck) {
		t.Fatalf("Check of a damaged memtable: %v", err)
	}
	e.groups[0].res[1].EndedAt = 0
	if err := h.e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := CheckDir(h.dir, Options{FS: h.mem}); err != nil {
		t.Fatalf("CheckDir: %v", err)
	}
	h.open()
}
