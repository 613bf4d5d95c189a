package vfs

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
)

func TestFaultNthAndRepeat(t *testing.T) {
	impls(t, func(t *testing.T, fsys FS, dir string) {
		f := NewFault(fsys)
		boom := errors.New("boom")
		f.Inject(Rule{Op: OpSync, Nth: 2, Err: boom})
		f.Inject(Rule{Op: OpWrite, Nth: 4, Repeat: true})
		file, err := f.Create(filepath.Join(dir, "x"))
		if err != nil {
			t.Fatal(err)
		}
		var syncErrs []bool
		for range 3 {
			syncErrs = append(syncErrs, file.Sync() != nil)
		}
		if want := []bool{false, true, false}; !equalBools(syncErrs, want) {
			t.Fatalf("sync failures %v, want %v", syncErrs, want)
		}
		var writeErrs []bool
		for range 6 {
			_, err := file.Write([]byte("ab"))
			writeErrs = append(writeErrs, err != nil)
			if err != nil && !errors.Is(err, ErrInjected) {
				t.Fatalf("default error: %v", err)
			}
		}
		if want := []bool{false, false, false, true, true, true}; !equalBools(writeErrs, want) {
			t.Fatalf("write failures %v, want %v", writeErrs, want)
		}
		if got := f.Count(OpWrite); got != 6 {
			t.Fatalf("Count(write) = %d", got)
		}
		f.Clear()
		if _, err := file.Write([]byte("cd")); err != nil {
			t.Fatalf("write after Clear: %v", err)
		}
		file.Close()
		if got := readAll(t, fsys, filepath.Join(dir, "x")); got != "abababcd" {
			t.Fatalf("contents %q", got)
		}
	})
}

func equalBools(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestFaultTornWriteAndMatch(t *testing.T) {
	impls(t, func(t *testing.T, fsys FS, dir string) {
		f := NewFault(fsys)
		f.Inject(Rule{Op: OpWrite, Nth: 1, Keep: 3, Match: "torn"})
		other, _ := f.Create(filepath.Join(dir, "other"))
		if _, err := other.Write([]byte("whole")); err != nil {
			t.Fatalf("rule matched the wrong file: %v", err)
		}
		other.Close()
		file, _ := f.Create(filepath.Join(dir, "torn"))
		n, err := file.Write([]byte("abcdefgh"))
		if n != 3 || !errors.Is(err, ErrInjected) {
			t.Fatalf("torn write: n=%d err=%v", n, err)
		}
		file.Close()
		if got := readAll(t, fsys, filepath.Join(dir, "torn")); got != "abc" {
			t.Fatalf("torn file holds %q", got)
		}
	})
}

func TestFaultNoSpace(t *testing.T) {
	impls(t, func(t *testing.T, fsys FS, dir string) {
		f := NewFault(fsys)
		file, _ := f.Create(filepath.Join(dir, "full"))
		f.LimitSpace(5)
		if _, err := file.Write([]byte("abc")); err != nil {
			t.Fatal(err)
		}
		n, err := file.Write([]byte("defg"))
		if n != 2 || !errors.Is(err, ErrNoSpace) || !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("crossing the limit: n=%d err=%v", n, err)
		}
		if _, err := file.Write([]byte("x")); !errors.Is(err, ErrNoSpace) {
			t.Fatalf("full disk accepted a write: %v", err)
		}
		f.UnlimitSpace()
		if _, err := file.Write([]byte("hi")); err != nil {
			t.Fatalf("write after space returned: %v", err)
		}
		file.Close()
		if got := readAll(t, fsys, filepath.Join(dir, "full")); got != "abcdehi" {
			t.Fatalf("contents %q", got)
		}
	})
}

func TestFaultOtherOps(t *testing.T) {
	m := memWith(t, "/d")
	f := NewFault(m)
	for _, op := range []Op{OpCreate, OpRemove, OpRename, OpSyncDir, OpTruncate, OpRead, OpOpen} {
		f.Inject(Rule{Op: op, Nth: 1})
	}
	if _, err := f.Create("/d/a"); !errors.Is(err, ErrInjected) {
		t.Fatalf("create: %v", err)
	}
	file, err := f.Create("/d/a")
	if err != nil {
		t.Fatal(err)
	}
	if err := file.Truncate(0); !errors.Is(err, ErrInjected) {
		t.Fatalf("truncate: %v", err)
	}
	if _, err := file.ReadAt(make([]byte, 1), 0); !errors.Is(err, ErrInjected) {
		t.Fatalf("read: %v", err)
	}
	if _, err := f.Open("/d/a"); !errors.Is(err, ErrInjected) {
		t.Fatalf("open: %v", err)
	}
	if err := f.SyncDir("/d"); !errors.Is(err, ErrInjected) {
		t.Fatalf("syncdir: %v", err)
	}
	if err := f.Rename("/d/a", "/d/b"); !errors.Is(err, ErrInjected) {
		t.Fatalf("rename: %v", err)
	}
	if err := f.Remove("/d/a"); !errors.Is(err, ErrInjected) {
		t.Fatalf("remove: %v", err)
	}
	if err := f.Remove("/d/a"); err != nil {
		t.Fatalf("second remove: %v", err)
	}
	if OpSyncDir.String() != "syncdir" {
		t.Fatalf("Op.String = %q", OpSyncDir.String())
	}
}
