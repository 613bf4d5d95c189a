package storage

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/cockroachdb/datadriven"
	"github.com/strata-db/strata/internal/catalog"
	"github.com/strata-db/strata/internal/types"
)

// TestDataDriven runs testdata/engine*: a small language over the engine.
//
//	create name=T mode=M [shards=N]   lines: "col NAME TYPE [key|GROUP]",
//	                                         "group G [valid=a,b] [revision=c]"
//	write table=T group=G             lines: "k=1 v='x' ..."   (staged)
//	delete table=T                    lines: "k=1"             (staged)
//	append table=T                    lines: "x=1 ..."         (staged)
//	commit                            commits what is staged
//	add-column table=T name=C type=TY [group=G] [default=V]
//	scan table=T [at=N] | versions table=T [at=N] | lookup table=T [at=N] k=...
//	commits | reopen | crash
func TestDataDriven(t *testing.T) {
	paths, err := filepath.Glob("testdata/engine_*")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scripts: %v", err)
	}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			h := newHarness(t)
			datadriven.RunTest(t, path, func(t *testing.T, d *datadriven.TestData) string {
				out, err := runCmd(h, d)
				if err != nil {
					return "error: " + err.Error() + "\n"
				}
				return out
			})
		})
	}
}

func argOr(d *datadriven.TestData, key, def string) string {
	for _, a := range d.CmdArgs {
		if a.Key == key && len(a.Vals) > 0 {
			return a.Vals[0]
		}
	}
	return def
}

func lines(input string) []string {
	var out []string
	for _, l := range strings.Split(input, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func runCmd(h *harness, d *datadriven.TestData) (string, error) {
	switch d.Cmd {
	case "create":
		return createCmd(h, d)
	case "write", "delete", "append":
		t, ok := h.e.Catalog().Table(argOr(d, "table", ""))
		if !ok {
			return "", fmt.Errorf("no table")
		}
		var w Write
		var err error
		switch d.Cmd {
		case "write":
			w, err = versionWrite(t, argOr(d, "group", "default"), lines(d.Input))
		case "delete":
			w, err = deleteWrite(t, lines(d.Input))
		default:
			w, err = appendWrite(t, lines(d.Input))
		}
		if err != nil {
			return "", err
		}
		h.stage(w, t.Name)
		return "", nil
	case "commit":
		n, err := h.commitPending()
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("commit %d\n", n), nil
	case "add-column":
		spec := catalog.AddColumnSpec{Table: argOr(d, "table", ""), Group: argOr(d, "group", "")}
		ty, err := types.FromName(argOr(d, "type", "INT64"), nil)
		if err != nil {
			return "", err
		}
		spec.Column = catalog.ColumnSpec{Name: argOr(d, "name", ""), Type: ty}
		if v := argOr(d, "default", ""); v != "" {
			spec.Column.Default = &catalog.Default{SQL: v, Value: v}
		}
		n, err := h.commit(&Txn{Kind: KindDDL, DDL: func(c *catalog.Catalog, commit uint64) error {
			_, err := c.AddColumn(spec, commit)
			return err
		}})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("commit %d\n", n), nil
	case "scan", "versions":
		at, _ := strconv.ParseUint(argOr(d, "at", "0"), 10, 64)
		var rows []string
		var err error
		if d.Cmd == "scan" {
			rows, err = h.scan(argOr(d, "table", ""), at)
		} else {
			rows, err = h.versions(argOr(d, "table", ""), at)
		}
		if err != nil {
			return "", err
		}
		return strings.Join(rows, "\n") + "\n", nil
	case "lookup":
		return lookupCmd(h, d)
	case "shards":
		snap := h.e.Snapshot()
		defer snap.Release()
		var sb strings.Builder
		total := uint64(0)
		for _, s := range snap.Shards(h.table(argOr(d, "table", "")).ID) {
			fmt.Fprintf(&sb, "shard %d: rows>0=%v\n", s.Shard, s.Rows > 0)
			total += s.Rows
		}
		fmt.Fprintf(&sb, "rows=%d\n", total)
		return sb.String(), nil
	case "scan-sorted":
		at, _ := strconv.ParseUint(argOr(d, "at", "0"), 10, 64)
		rows, err := h.scan(argOr(d, "table", ""), at)
		sort.Strings(rows)
		return strings.Join(rows, "\n") + "\n", err
	case "commits":
		var sb strings.Builder
		snap := h.e.Snapshot()
		defer snap.Release()
		for _, c := range snap.Commits() {
			fmt.Fprintf(&sb, "%d %s [%s] rows=%d\n", c.Commit, c.Kind, strings.Join(c.Tables, ","), c.Rows)
		}
		return sb.String(), nil
	case "flush":
		if err := h.e.Flush(context.Background()); err != nil {
			return "", err
		}
		snap := h.e.Snapshot()
		defer snap.Release()
		var sb strings.Builder
		for _, t := range snap.Catalog().Tables() {
			for _, p := range snap.Parts(t.ID) {
				fmt.Fprintf(&sb, "%s: part rows=%d commits=%d..%d\n", t.Name, p.Rows, p.MinCommit, p.MaxCommit)
			}
		}
		return sb.String(), nil
	case "reopen":
		h.reopen()
		return "", nil
	case "crash":
		h.crash()
		return "", nil
	}
	return "", fmt.Errorf("unknown command %s", d.Cmd)
}

func createCmd(h *harness, d *datadriven.TestData) (string, error) {
	mode, _ := catalog.ParseMode(argOr(d, "mode", "upsert"))
	spec := catalog.TableSpec{Name: argOr(d, "name", ""), Mode: mode}
	if s := argOr(d, "shards", ""); s != "" {
		spec.Shards, _ = strconv.Atoi(s)
		spec.ShardBy = strings.Split(argOr(d, "shardby", ""), ",")
	}
	groups := map[string]*catalog.GroupSpec{}
	var order []string
	for _, l := range lines(d.Input) {
		f := strings.Fields(l)
		switch f[0] {
		case "col":
			ty, err := types.FromName(f[2], nil)
			if err != nil {
				return "", err
			}
			cs := catalog.ColumnSpec{Name: f[1], Type: ty}
			if len(f) > 3 && f[3] == "key" {
				cs.NotNull = true
				spec.PrimaryKey = append(spec.PrimaryKey, f[1])
			} else if len(f) > 3 {
				g := groups[f[3]]
				if g == nil {
					g = &catalog.GroupSpec{Name: f[3]}
					groups[f[3]] = g
					order = append(order, f[3])
				}
				g.Columns = append(g.Columns, f[1])
			}
			spec.Columns = append(spec.Columns, cs)
		case "group":
			g := groups[f[1]]
			if g == nil {
				g = &catalog.GroupSpec{Name: f[1]}
				groups[f[1]] = g
				order = append(order, f[1])
			}
			for _, kv := range f[2:] {
				k, v, _ := strings.Cut(kv, "=")
				if k == "valid" {
					g.ValidBy = strings.Split(v, ",")
				} else {
					g.RevisionBy = strings.Split(v, ",")
				}
			}
		}
	}
	for _, name := range order {
		spec.Groups = append(spec.Groups, *groups[name])
	}
	if argOr(d, "shards", "") == "" {
		spec.ShardBy = nil
	}
	n, err := h.commit(&Txn{Kind: KindDDL, Tables: []string{spec.Name}, DDL: func(c *catalog.Catalog, commit uint64) error {
		_, _, err := c.CreateTable(spec, commit)
		return err
	}})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("commit %d\n", n), nil
}

func lookupCmd(h *harness, d *datadriven.TestData) (string, error) {
	t, ok := h.e.Catalog().Table(argOr(d, "table", ""))
	if !ok {
		return "", fmt.Errorf("no table")
	}
	at, _ := strconv.ParseUint(argOr(d, "at", "0"), 10, 64)
	var key []types.Value
	for _, kc := range t.KeyColumns() {
		v, err := types.ParseText(kc.Type, argOr(d, kc.Name, ""))
		if err != nil {
			return "", err
		}
		key = append(key, v)
	}
	snap := h.e.Snapshot()
	defer snap.Release()
	spec := ScanSpec{AsOf: at, Cols: allCols(t), Commit: true}
	row, found, err := snap.Lookup(context.Background(), t.ID, key, spec)
	if err != nil || !found {
		return fmt.Sprintf("found=%v\n", found), err
	}
	b := types.NewBatch(nil, 1)
	for _, v := range row {
		vec := types.NewVector(v.Type(), 1)
		vec.Append(v)
		b.Cols = append(b.Cols, vec)
	}
	b.Rows = 1
	return render(append(t.Names(spec.Cols), "_commit"), []*types.Batch{b})[0] + "\n", nil
}
