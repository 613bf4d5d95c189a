package strata_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTieringMovesAndReads follows parts to an object store (R9.4) with a
// pinned clock: nothing moves before move_after, the background merger
// moves them once they are old enough without any statement, reads are
// the same at every commit before and after and across a restart, and a
// dropped table's objects go with the next flush.
func TestTieringMovesAndReads(t *testing.T) {
	clock := newPinnedClock()
	dir := t.TempDir()
	cold := filepath.Join(dir, "cold")
	open := openPinned(t, dir, clock)
	db := open()
	s := db.NewSession()
	mustRun(t, s, `CREATE POLICY cold FOR STORAGE (object_store = 'file:cold', move_after = INTERVAL '4 seconds')`)
	mustRun(t, s, `CREATE TABLE p (k INT64 NOT NULL, v INT64, PRIMARY KEY (k)) MODE VERSIONED POLICY cold`)
	mustRun(t, s, `INSERT INTO p SELECT g, g FROM generate_series(1, 1000) g`) // 3
	mustRun(t, s, `INSERT INTO p SELECT g, -g FROM generate_series(1, 10) g`)  // 4
	mustRun(t, s, `CHECKPOINT`)
	reads := func() string {
		var b strings.Builder
		for _, q := range []string{`SELECT count(*), sum(v) FROM p`, `SELECT sum(v) FROM p AS OF COMMIT 3`,
			`SELECT v FROM p WHERE k = 5`, `SELECT v FROM p AS OF COMMIT 3 WHERE k = 5`, `SELECT count(*) FROM versions(p)`} {
			b.WriteString(render(mustRun(t, s, q), nil))
		}
		return b.String()
	}
	objects := func() int {
		names, _ := os.ReadDir(cold)
		return len(names)
	}
	locations := func() string {
		return render(mustRun(t, s, `SELECT DISTINCT location FROM system.parts WHERE table_name = 'p'`), nil)
	}
	want := reads()
	clock.advance(2 * time.Second)
	mustRun(t, s, `CHECKPOINT`)
	if got := locations(); !strings.Contains(got, "[local]") || strings.Contains(got, "file:cold") || objects() != 0 {
		t.Fatalf("after 2 s: parts at %s, %d objects", got, objects())
	}
	// No statement: the background merger wakes itself every quarter of
	// move_after (1 s of real time) and finds the parts due by the
	// pinned clock.
	clock.advance(3 * time.Second)
	deadline := time.Now().Add(30 * time.Second)
	for strings.Contains(locations(), "local") {
		if time.Now().After(deadline) {
			t.Fatalf("parts still local: %s", locations())
		}
		time.Sleep(20 * time.Millisecond)
		mustRun(t, s, `SELECT 1`)
	}
	if objects() == 0 {
		t.Fatal("no object in the store")
	}
	if got := reads(); got != want {
		t.Fatalf("reads after the move:\n got %s\nwant %s", got, want)
	}
	// A moved part's local file goes once the last read holding it ends,
	// which may be a moment after the move is published.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		entries, _ := os.ReadDir(filepath.Join(dir, "parts"))
		if len(entries) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d files left in parts/", len(entries))
		}
	}
	// Objects no manifest names (a crash between an upload and its edit)
	// go after the next open; other files in the folder stay.
	live := objects()
	for _, name := range []string{"1-0-999.part", "notes.txt"} {
		if err := os.WriteFile(filepath.Join(cold, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db = open()
	s = db.NewSession()
	deadline = time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(cold, "1-0-999.part")); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the stray object is still there after the open")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(cold, "notes.txt")); err != nil || objects() != live+1 {
		t.Fatalf("after the sweep: %v, %d objects (want the %d live ones and notes.txt)", err, objects(), live)
	}
	if err := os.Remove(filepath.Join(cold, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	if got := reads(); got != want {
		t.Fatalf("reads after a restart:\n got %s\nwant %s", got, want)
	}
	mustRun(t, s, `DROP TABLE p`)
	// A dropped table's parts go with the next publication of parts (a
	// flush or a merge), wherever they are.
	mustRun(t, s, `CREATE TABLE other (k INT64 NOT NULL, PRIMARY KEY (k))`)
	mustRun(t, s, `INSERT INTO other VALUES (1)`)
	mustRun(t, s, `CHECKPOINT`)
	deadline = time.Now().Add(10 * time.Second)
	for objects() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d objects left after DROP TABLE", objects())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
