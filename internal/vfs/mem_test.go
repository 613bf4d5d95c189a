package vfs

import (
	"errors"
	"io/fs"
	"sync"
	"testing"
)

func memWith(t *testing.T, dir string) *Mem {
	t.Helper()
	m := NewMem()
	if err := m.MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	return m
}

func cloneRead(t *testing.T, m *Mem, name string) (string, bool) {
	t.Helper()
	c := m.CrashClone()
	b, err := ReadFile(c, name)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(b), true
}

func TestCrashCloneKeepsOnlySyncedBytes(t *testing.T) {
	m := memWith(t, "/d")
	f, _ := m.Create("/d/f")
	mustWrite(t, f, "one ")
	if _, ok := cloneRead(t, m, "/d/f"); ok {
		t.Fatal("a file whose directory was never synced survived a crash")
	}
	if err := m.SyncDir("/d"); err != nil {
		t.Fatal(err)
	}
	if got, ok := cloneRead(t, m, "/d/f"); !ok || got != "" {
		t.Fatalf("unsynced bytes survived: %q %v", got, ok)
	}
	f.Sync()
	mustWrite(t, f, "two ")
	if got, _ := cloneRead(t, m, "/d/f"); got != "one " {
		t.Fatalf("got %q, want the synced prefix", got)
	}
	f.Sync()
	if got, _ := cloneRead(t, m, "/d/f"); got != "one two " {
		t.Fatalf("got %q", got)
	}
	// Overwriting and truncating synced bytes must not leak into the
	// durable state until the next Sync (copy on write).
	rw, _ := m.OpenReadWrite("/d/f")
	mustWrite(t, rw, "ONE")
	rw.Truncate(2)
	if got, _ := cloneRead(t, m, "/d/f"); got != "one two " {
		t.Fatalf("overwrite leaked before Sync: %q", got)
	}
	rw.Sync()
	if got, _ := cloneRead(t, m, "/d/f"); got != "ON" {
		t.Fatalf("got %q after Sync", got)
	}
	// Growing after a shrink must zero the gap, even though the backing
	// array still holds old bytes.
	rw.Truncate(5)
	rw.Sync()
	if got, _ := cloneRead(t, m, "/d/f"); got != "ON\x00\x00\x00" {
		t.Fatalf("got %q after grow", got)
	}
}

func TestCrashCloneDirectoryEntries(t *testing.T) {
	m := memWith(t, "/d")
	if err := WriteFile(m, "/d/a", []byte("A")); err != nil {
		t.Fatal(err)
	}
	m.SyncDir("/d")
	// Rename without SyncDir: the crash sees the old name.
	if err := m.Rename("/d/a", "/d/b"); err != nil {
		t.Fatal(err)
	}
	c := m.CrashClone()
	if got := readAll(t, c, "/d/a"); got != "A" {
		t.Fatalf("old name lost: %q", got)
	}
	if _, err := c.Stat("/d/b"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("new name durable without SyncDir: %v", err)
	}
	m.SyncDir("/d")
	c = m.CrashClone()
	if _, err := c.Stat("/d/a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("old name survived SyncDir: %v", err)
	}
	if got := readAll(t, c, "/d/b"); got != "A" {
		t.Fatalf("renamed file: %q", got)
	}
	// Remove without SyncDir: the file comes back.
	m.Remove("/d/b")
	if got, ok := cloneRead(t, m, "/d/b"); !ok || got != "A" {
		t.Fatalf("removed file should reappear after a crash: %q %v", got, ok)
	}
	m.SyncDir("/d")
	if _, ok := cloneRead(t, m, "/d/b"); ok {
		t.Fatal("removal was not made durable by SyncDir")
	}
	// A clone is independent of its source and usable as an FS.
	WriteFile(m, "/d/c", []byte("C"))
	m.SyncDir("/d")
	c = m.CrashClone()
	WriteFile(c, "/d/c", []byte("changed"))
	if got := readAll(t, m, "/d/c"); got != "C" {
		t.Fatalf("clone shares data with its source: %q", got)
	}
}

func TestCrashCloneDropsLocks(t *testing.T) {
	m := memWith(t, "/d")
	if _, err := m.Lock("/d/LOCK"); err != nil {
		t.Fatal(err)
	}
	c := m.CrashClone()
	l, err := c.Lock("/d/LOCK")
	if err != nil {
		t.Fatalf("a crash should release locks: %v", err)
	}
	l.Close()
}

func TestMemConcurrentWriters(t *testing.T) {
	m := memWith(t, "/d")
	f, _ := m.OpenAppend("/d/log")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				f.Write([]byte("0123456789"))
				f.Sync()
				m.CrashClone()
			}
		}()
	}
	wg.Wait()
	if st, _ := f.Stat(); st.Size() != 8*100*10 {
		t.Fatalf("size %d", st.Size())
	}
}
