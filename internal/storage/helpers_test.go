package storage

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
	"github.com/strata-db/strata/internal/vfs"
)

// harness drives an engine for tests: the WAL on a vfs.Mem (so "crash" can
// keep only what was durable), the manifest in a t.TempDir().
type harness struct {
	t       testing.TB
	dir     string
	mem     *vfs.Mem
	e       *Engine
	pending Txn
	clock   time.Time
	// bgMerges runs the background merger; mergePartRows is
	// Options.MergePartRows (all three read at each open).
	bgMerges      bool
	mergePartRows int
	// splitBytes is Options.ShardSplitBytes.
	splitBytes int64
	// settleAfter is Options.SettleAfter.
	settleAfter time.Duration
	// now, when set, is Options.Clock instead of the clock ticking a
	// second a call from clock.
	now func() time.Time
}

func newHarness(t testing.TB) *harness {
	return (&harness{t: t}).start()
}

// start opens the harness's engine, on a new memory file system unless
// it has one, closes it when the test ends, and returns h.
func (h *harness) start() *harness {
	if h.dir == "" {
		h.dir = h.t.TempDir()
	}
	if h.mem == nil {
		h.mem = vfs.NewMem()
	}
	if h.clock.IsZero() {
		h.clock = time.Date(2026, 10, 1, 12, 0, 0, 0, time.UTC)
	}
	h.open()
	h.t.Cleanup(func() {
		if h.e != nil {
			_ = h.e.Close()
		}
	})
	return h
}

func (h *harness) open() {
	h.t.Helper()
	// Background merges would make part layouts (the engine_*_flushed
	// scripts) depend on timing; merge tests turn them on (h.bgMerges).
	// The AS OF index is off by default in the engine; the tests write it
	// so every merge test also checks that no
	// reader takes index rows for versions.
	clock := h.now
	if clock == nil {
		clock = func() time.Time { h.clock = h.clock.Add(time.Second); return h.clock }
	}
	e, err := Open(h.dir, Options{FS: h.mem, NoBackgroundMerges: !h.bgMerges, MergePartRows: h.mergePartRows, ShardSplitBytes: h.splitBytes, SettleAfter: h.settleAfter, AsOfIndex: true, WarmWrites: true,
		Clock: clock})
	if err != nil {
		h.t.Fatalf("open: %v", err)
	}
	h.e = e
}

func (h *harness) reopen() {
	h.t.Helper()
	if err := h.e.Close(); err != nil {
		h.t.Fatalf("close: %v", err)
	}
	h.open()
}

// crash drops the engine without Close and keeps only what the WAL made
// durable; the manifest keeps what its Applies committed.
func (h *harness) crash() {
	h.t.Helper()
	// The manifest is a real file that the clone does not copy, so the
	// old engine's merger must stop before the clone: a merge edit after
	// it would name parts the clone lacks. (Crashes in the middle of a
	// merge are TestSIGKILL's, with real processes.)
	h.e.stopBackground()
	// A flush held by holdFlush dies with the process: its worker goes
	// without writing anything.
	h.e.stopFlushes()
	h.e.fl.workers.Wait()
	clone := h.mem.CrashClone()
	old := h.e
	h.e = nil
	_ = old.man.Close()
	old.man = nil
	_ = old.closeFiles()
	h.mem = clone
	h.open()
}

// holdFlush freezes the memtables as a flush does and holds that flush
// before it writes anything, until Flush, Close or crash: reads and commits
// meanwhile see frozen memtables. Nothing happens while a flush is already
// in progress.
func (h *harness) holdFlush() {
	e := h.e
	e.ap.Lock()
	defer e.ap.Unlock()
	if e.fl.job == nil && !e.fl.halted {
		// The worker waits for the lock, then for retryAt.
		e.freezeLocked().retryAt = time.Now().Add(time.Hour)
	}
}

func (h *harness) commit(txn *Txn) (uint64, error) {
	return h.e.Commit(context.Background(), txn)
}

// mustWrite commits the versions lines of group of tbl (versionWrite's
// notation) as one write, or fails the test.
func (h *harness) mustWrite(tbl *catalog.Table, group string, lines []string) uint64 {
	h.t.Helper()
	w, err := versionWrite(tbl, group, lines)
	if err != nil {
		h.t.Fatal(err)
	}
	return h.mustCommit(&Txn{Kind: KindWrite, Writes: []Write{w}})
}

func (h *harness) mustCommit(txn *Txn) uint64 {
	h.t.Helper()
	n, err := h.commit(txn)
	if err != nil {
		h.t.Fatalf("commit: %v", err)
	}
	return n
}

func (h *harness) ddl(fn func(c *catalog.Catalog, commit uint64) error) uint64 {
	h.t.Helper()
	return h.mustCommit(&Txn{Kind: KindDDL, DDL: fn})
}

func (h *harness) create(spec catalog.TableSpec) uint64 {
	h.t.Helper()
	return h.ddl(func(c *catalog.Catalog, commit uint64) error {
		_, _, err := c.CreateTable(spec, commit)
		return err
	})
}

func (h *harness) table(name string) *catalog.Table {
	h.t.Helper()
	t, ok := h.e.Catalog().Table(name)
	if !ok {
		h.t.Fatalf("no table %s", name)
	}
	return t
}

// parseRow reads `name=value ...`; a value may be 'quoted text'; NULL is
// the null.
func parseRow(line string) (names, vals []string, nulls []bool, err error) {
	for line = strings.TrimSpace(line); line != ""; line = strings.TrimSpace(line) {
		eq := strings.IndexByte(line, '=')
		if eq <= 0 {
			return nil, nil, nil, fmt.Errorf("bad field in %q", line)
		}
		name := line[:eq]
		line = line[eq+1:]
		var v string
		isNull := false
		if strings.HasPrefix(line, "'") {
			end := strings.IndexByte(line[1:], '\'')
			if end < 0 {
				return nil, nil, nil, fmt.Errorf("unterminated quote")
			}
			v, line = line[1:1+end], line[2+end:]
		} else {
			sp := strings.IndexByte(line, ' ')
			if sp < 0 {
				sp = len(line)
			}
			v, line = line[:sp], line[sp:]
			isNull = v == "NULL"
		}
		names, vals, nulls = append(names, name), append(vals, v), append(nulls, isNull)
	}
	return names, vals, nulls, nil
}

// versionWrite builds a WriteVersion of group for rows given as lines: the
// key columns and the group's columns (unlisted ones NULL).
func versionWrite(t *catalog.Table, group string, lines []string) (Write, error) {
	g, ok := t.Group(group)
	if !ok {
		return Write{}, fmt.Errorf("no group %s", group)
	}
	cols := append(append([]catalog.ColumnID(nil), t.Key...), g.Columns...)
	w := Write{Kind: WriteVersion, Table: t.ID, Group: g.ID, Cols: cols}
	return w, fillBatch(t, &w, lines)
}

func deleteWrite(t *catalog.Table, lines []string) (Write, error) {
	w := Write{Kind: WriteDelete, Table: t.ID, Cols: append([]catalog.ColumnID(nil), t.Key...)}
	return w, fillBatch(t, &w, lines)
}

func appendWrite(t *catalog.Table, lines []string) (Write, error) {
	var cols []catalog.ColumnID
	for _, c := range t.Columns {
		cols = append(cols, c.ID)
	}
	w := Write{Kind: WriteAppend, Table: t.ID, Cols: cols}
	return w, fillBatch(t, &w, lines)
}

func fillBatch(t *catalog.Table, w *Write, lines []string) error {
	ts := make([]types.Type, len(w.Cols))
	for i, id := range w.Cols {
		c, _ := t.ColumnByID(id)
		ts[i] = c.Type
	}
	w.Batch = types.NewBatch(ts, len(lines))
	for _, line := range lines {
		names, vals, nulls, err := parseRow(line)
		if err != nil {
			return err
		}
		row := make([]types.Value, len(w.Cols))
		for i, id := range w.Cols {
			c, _ := t.ColumnByID(id)
			row[i] = types.Null(c.Type)
			for j, n := range names {
				if n != c.Name || nulls[j] {
					continue
				}
				v, err := types.ParseText(c.Type, vals[j])
				if err != nil {
					return err
				}
				row[i] = v
			}
		}
		for _, n := range names {
			found := false
			for _, id := range w.Cols {
				if c, _ := t.ColumnByID(id); c.Name == n {
					found = true
				}
			}
			if !found {
				return fmt.Errorf("column %s is not written here", n)
			}
		}
		w.Batch.AppendRow(row)
	}
	return nil
}

// stage adds a write to the pending transaction.
func (h *harness) stage(w Write, table string) {
	h.pending.Writes = append(h.pending.Writes, w)
	h.pending.Rows += uint64(w.Batch.Rows)
	for _, n := range h.pending.Tables {
		if n == table {
			return
		}
	}
	h.pending.Tables = append(h.pending.Tables, table)
	sort.Strings(h.pending.Tables)
}

func (h *harness) commitPending() (uint64, error) {
	txn := h.pending
	txn.Kind = KindWrite
	h.pending = Txn{}
	return h.commit(&txn)
}

// allCols returns the ids of every current column of t.
func allCols(t *catalog.Table) []catalog.ColumnID {
	var ids []catalog.ColumnID
	for _, c := range t.Columns {
		ids = append(ids, c.ID)
	}
	return ids
}

// render prints batches as one line per row, `name=value ...`.
func render(names []string, bs []*types.Batch) []string {
	var out []string
	for _, b := range bs {
		for r := 0; r < b.Rows; r++ {
			var sb strings.Builder
			for c, vec := range b.Cols {
				if c > 0 {
					sb.WriteByte(' ')
				}
				sb.WriteString(names[c])
				sb.WriteByte('=')
				v := vec.Get(r)
				s := v.String()
				if !v.IsNull() && strings.ContainsAny(s, " =") || s == "" && !v.IsNull() {
					s = "'" + s + "'"
				}
				sb.WriteString(s)
			}
			out = append(out, sb.String())
		}
	}
	return out
}

// scan reads table at commit at (0 = newest) with every current column and
// _commit, one string per row.
func (h *harness) scan(table string, at uint64) ([]string, error) {
	t := h.table(table)
	snap := h.e.Snapshot()
	defer snap.Release()
	spec := ScanSpec{Table: t.ID, AsOf: at, Cols: allCols(t), Commit: true, BatchRows: 3}
	var bs []*types.Batch
	_, err := snap.Scan(context.Background(), spec, func(b *types.Batch) error { bs = append(bs, b); return nil })
	return render(append(t.Names(spec.Cols), "_commit"), bs), err
}

func (h *harness) versions(table string, at uint64) ([]string, error) {
	t := h.table(table)
	snap := h.e.Snapshot()
	defer snap.Release()
	spec := ScanSpec{Table: t.ID, AsOf: at, Cols: allCols(t), BatchRows: 2}
	var bs []*types.Batch
	_, err := snap.Versions(context.Background(), spec, func(b *types.Batch) error { bs = append(bs, b); return nil })
	return render(append(t.Names(spec.Cols), VersionsCols...), bs), err
}

func sortStrings(s []string) { sort.Strings(s) }

func runLookup(h *harness, table string, k int) (string, error) {
	t := h.table(table)
	snap := h.e.Snapshot()
	defer snap.Release()
	row, ok, err := snap.Lookup(context.Background(), t.ID, []types.Value{types.NewInt64(int64(k))}, ScanSpec{Cols: allCols(t), Commit: true})
	return fmt.Sprint(row, ok), err
}
