package strata_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestPlacementVolumes follows a table's parts across placement volumes
// (R9.6, docs/placement.md): bound at creation they are written on their
// shards' volumes; bound to a volume that does not exist yet, new parts
// wait in the data directory and the old stay put, and everything moves
// once it exists; reads are the same throughout and across a restart; at
// open, part files no manifest names are swept from a volume's folder and
// other files are left alone.
func TestPlacementVolumes(t *testing.T) {
	dir := t.TempDir()
	vols := t.TempDir()
	va, vb, vc := filepath.Join(vols, "a"), filepath.Join(vols, "b"), filepath.Join(vols, "c")
	for _, v := range []string{va, vb} {
		if err := os.Mkdir(v, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	open := openPinned(t, dir, newPinnedClock())
	db := open()
	s := db.NewSession()
	mustRun(t, s, `CREATE POLICY two FOR PLACEMENT (volumes = ('`+va+`', '`+vb+`'))`)
	// vc does not exist yet: accepted, its parts wait.
	mustRun(t, s, `CREATE POLICY later FOR PLACEMENT (volumes = ('`+vc+`'))`)
	mustRun(t, s, `CREATE TABLE p (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) MODE VERSIONED SHARDS 4 POLICY two`)
	mustRun(t, s, `INSERT INTO p SELECT g, g FROM generate_series(1, 2000) g`) // 4
	mustRun(t, s, `INSERT INTO p SELECT g, -g FROM generate_series(1, 500) g`) // 5
	mustRun(t, s, `CHECKPOINT`)
	reads := func() string {
		var b strings.Builder
		for _, q := range []string{`SELECT count(*), sum(v) FROM p`, `SELECT sum(v) FROM p AS OF COMMIT 4`,
			`SELECT v FROM p WHERE k = 5`, `SELECT v FROM p AS OF COMMIT 4 WHERE k = 5`, `SELECT count(*) FROM versions(p)`} {
			b.WriteString(render(mustRun(t, s, q), nil))
		}
		return b.String()
	}
	asOf5 := func() string {
		return render(mustRun(t, s, `SELECT count(*), sum(v), min(v) FROM p AS OF COMMIT 5`), nil)
	}
	want5 := asOf5()
	// where counts the part files in each place, and system.parts' rows
	// for each location.
	files := func(d string) int {
		n := 0
		_ = filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".part") {
				n++
			}
			return nil
		})
		return n
	}
	listed := func(loc string) int {
		r := mustRun(t, s, `SELECT count(*) FROM system.parts WHERE table_name = 'p' AND location = $1`, loc)
		n, err := strconv.Atoi(fmt.Sprint(r.Rows[0][0]))
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	state := func() string {
		return render(mustRun(t, s, `SELECT state FROM system.table_storage_plans WHERE table_name = 'p' AND role = 'placement'`), nil)
	}
	// Files go with their last reader, in the background.
	waitFiles := func(d string, n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for files(d) != n {
			if time.Now().After(deadline) {
				t.Fatalf("%s holds %d part files, want %d", d, files(d), n)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	na, nb := listed("volume:"+va), listed("volume:"+vb)
	if na == 0 || nb == 0 || listed("local") != 0 {
		t.Fatalf("parts on a %d, b %d, local %d", na, nb, listed("local"))
	}
	waitFiles(va, na)
	waitFiles(vb, nb)
	waitFiles(filepath.Join(dir, "parts"), 0)
	if got := state(); !strings.Contains(got, "2 shards on volume "+va) || !strings.Contains(got, "2 shards on volume "+vb) {
		t.Fatalf("state %s", got)
	}

	// Bound to a volume that is not there: nothing moves, new parts wait
	// in the data directory, and the state says how many parts wait.
	mustRun(t, s, `ALTER TABLE p SET POLICY later`)
	mustRun(t, s, `INSERT INTO p SELECT g, g * 3 FROM generate_series(1, 100) g`) // 7
	mustRun(t, s, `CHECKPOINT`)
	if listed("volume:"+vc) != 0 || listed("local") == 0 {
		t.Fatalf("with the volume missing: %d parts on c, %d local", listed("volume:"+vc), listed("local"))
	}
	if _, err := os.Stat(vc); err == nil {
		t.Fatalf("a missing absolute volume was created")
	}
	if got := state(); !strings.Contains(got, "4 shards on volume "+vc) || !strings.Contains(got, "parts to move") {
		t.Fatalf("state %s", got)
	}
	want7 := reads()
	if err := os.Mkdir(vc, 0o755); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, `CHECKPOINT`)
	total := listed("volume:" + vc)
	if total == 0 || listed("local")+listed("volume:"+va)+listed("volume:"+vb) != 0 {
		t.Fatalf("after the volume appeared: %d on c, %d local, %d a, %d b", total, listed("local"), listed("volume:"+va), listed("volume:"+vb))
	}
	waitFiles(vc, total)
	waitFiles(va, 0)
	waitFiles(vb, 0)
	waitFiles(filepath.Join(dir, "parts"), 0)
	if got := reads(); got != want7 {
		t.Fatalf("reads after the move:\n%s\nwant\n%s", got, want7)
	}
	if got := asOf5(); got != want5 {
		t.Fatalf("AS OF 5 after the moves: %s; before: %s", got, want5)
	}
	if got := state(); strings.Contains(got, "to move") {
		t.Fatalf("state %s", got)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// A stray part file (a crash between a write and its manifest edit)
	// goes at the next open; a file that is not a part stays.
	folders, _ := filepath.Glob(filepath.Join(vc, "strata-*"))
	if len(folders) != 1 {
		t.Fatalf("folders on c: %v", folders)
	}
	stray, other := filepath.Join(folders[0], "1-0-999999.part"), filepath.Join(folders[0], "notes.txt")
	for _, f := range []string{stray, other} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	db = open()
	defer db.Close()
	s = db.NewSession()
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Fatalf("stray part file still there: %v", err)
	}
	if _, err := os.Stat(other); err != nil {
		t.Fatalf("a file not a part was removed: %v", err)
	}
	if got := reads(); got != want7 {
		t.Fatalf("reads after a restart:\n%s\nwant\n%s", got, want7)
	}
	if listed("volume:"+vc) != total {
		t.Fatalf("after a restart %d parts on c, want %d", listed("volume:"+vc), total)
	}
}

// TestPlacementMovesBackUnderReader moves a table's parts to a volume and
// back (and between two spellings of one directory, through a symbolic
// link) while a query holds the first files open: every copy has a file
// of its own, so no move overwrites a file a reader holds, and no
// reader's release removes a live one; the sweep at open compares real
// directories, so an alias never makes a live part look like a stray.
func TestPlacementMovesBackUnderReader(t *testing.T) {
	dir := t.TempDir()
	vols := t.TempDir()
	va, alias := filepath.Join(vols, "a"), filepath.Join(vols, "alias")
	if err := os.Mkdir(va, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(va, alias); err != nil {
		t.Fatal(err)
	}
	open := openPinned(t, dir, newPinnedClock())
	db := open()
	s := db.NewSession()
	mustRun(t, s, `CREATE POLICY a FOR PLACEMENT (volumes = ('`+va+`'))`)
	mustRun(t, s, `CREATE POLICY alias FOR PLACEMENT (volumes = ('`+alias+`'))`)
	mustRun(t, s, `CREATE POLICY home FOR PLACEMENT (volumes = ('.'))`)
	if _, err := s.Run(context.Background(), `CREATE POLICY two FOR PLACEMENT (volumes = ('`+va+`', '`+alias+`'))`); err == nil || !strings.Contains(err.Error(), "are one directory") {
		t.Fatalf("two spellings of one directory in one policy: %v", err)
	}
	mustRun(t, s, `CREATE TABLE p (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) MODE VERSIONED`)
	mustRun(t, s, `INSERT INTO p SELECT g, g FROM generate_series(1, 30000) g`)
	mustRun(t, s, `CHECKPOINT`)
	want := render(mustRun(t, s, `SELECT count(*), sum(v) FROM p`), nil)

	reader := db.NewSession()
	rows, err := reader.Query(context.Background(), `SELECT k, v FROM p`)
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	for _, pol := range []string{"a", "home", "alias", "a", "home"} {
		mustRun(t, s, `ALTER TABLE p SET POLICY `+pol)
		mustRun(t, s, `CHECKPOINT`)
		if got := render(mustRun(t, s, `SELECT count(*), sum(v) FROM p`), nil); got != want {
			t.Fatalf("after SET POLICY %s: %s, want %s", pol, got, want)
		}
		loc := map[string]string{"a": "volume:" + va, "alias": "volume:" + alias, "home": "local"}[pol]
		if got := render(mustRun(t, s, `SELECT DISTINCT location FROM system.parts WHERE table_name = 'p'`), nil); !strings.Contains(got, "["+loc+"];") || strings.Count(got, ";") != 1 {
			t.Fatalf("after SET POLICY %s the parts are at %s", pol, got)
		}
	}
	n := 1
	for rows.Next() {
		n++
	}
	if err := rows.Err(); err != nil || n != 30000 {
		t.Fatalf("the reader read %d rows: %v", n, err)
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	mustRun(t, s, `ALTER TABLE p SET POLICY alias`)
	mustRun(t, s, `CHECKPOINT`)
	for i := 0; i < 2; i++ {
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
		db = open()
		s = db.NewSession()
		if got := render(mustRun(t, s, `SELECT count(*), sum(v) FROM p`), nil); got != want {
			t.Fatalf("after reopen %d: %s, want %s", i, got, want)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
