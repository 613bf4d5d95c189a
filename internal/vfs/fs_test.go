package vfs

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// impls runs the behavioural suite against every implementation, each in a
// fresh directory.
func impls(t *testing.T, test func(t *testing.T, fsys FS, dir string)) {
	t.Run("OS", func(t *testing.T) { test(t, OS{}, t.TempDir()) })
	t.Run("Mem", func(t *testing.T) {
		m := NewMem()
		dir := "/data/db"
		if err := m.MkdirAll(dir); err != nil {
			t.Fatal(err)
		}
		test(t, m, dir)
	})
	t.Run("FaultOverMem", func(t *testing.T) {
		m := NewMem()
		if err := m.MkdirAll("/d"); err != nil {
			t.Fatal(err)
		}
		test(t, NewFault(m), "/d")
	})
	t.Run("FaultOverOS", func(t *testing.T) { test(t, NewFault(OS{}), t.TempDir()) })
}

func mustWrite(t *testing.T, f File, s string) {
	t.Helper()
	if n, err := f.Write([]byte(s)); err != nil || n != len(s) {
		t.Fatalf("write %q: n=%d err=%v", s, n, err)
	}
}

func readAll(t *testing.T, fsys FS, name string) string {
	t.Helper()
	b, err := ReadFile(fsys, name)
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

func TestCreateWriteReadStat(t *testing.T) {
	impls(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "a")
		f, err := fsys.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, f, "hello ")
		mustWrite(t, f, "world")
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		st, err := f.Stat()
		if err != nil || st.Size() != 11 {
			t.Fatalf("stat: %v %v", st, err)
		}
		buf := make([]byte, 5)
		if n, err := f.ReadAt(buf, 6); err != nil || n != 5 || string(buf) != "world" {
			t.Fatalf("ReadAt: %d %v %q", n, err, buf)
		}
		if n, err := f.ReadAt(buf, 8); n != 3 || err != io.EOF {
			t.Fatalf("ReadAt past end: %d %v", n, err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, fsys, name); got != "hello world" {
			t.Fatalf("got %q", got)
		}
		st, err = fsys.Stat(name)
		if err != nil || st.Size() != 11 || st.IsDir() || st.Name() != "a" {
			t.Fatalf("FS.Stat: %v %v", st, err)
		}
		if st, err := fsys.Stat(dir); err != nil || !st.IsDir() {
			t.Fatalf("Stat dir: %v %v", st, err)
		}
		// Create truncates.
		f, err = fsys.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, f, "x")
		f.Close()
		if got := readAll(t, fsys, name); got != "x" {
			t.Fatalf("after re-create got %q", got)
		}
	})
}

func TestOpenModes(t *testing.T) {
	impls(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "f")
		if _, err := fsys.Open(name); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Open missing: %v", err)
		}
		if _, err := fsys.OpenReadWrite(name); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("OpenReadWrite missing: %v", err)
		}
		if _, err := fsys.Stat(name); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Stat missing: %v", err)
		}
		a, err := fsys.OpenAppend(name) // creates
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, a, "abc")
		a.Close()
		a, err = fsys.OpenAppend(name)
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, a, "def")
		a.Close()
		if got := readAll(t, fsys, name); got != "abcdef" {
			t.Fatalf("append: %q", got)
		}
		rw, err := fsys.OpenReadWrite(name)
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, rw, "XY") // at offset 0, keeping the rest
		if err := rw.Truncate(4); err != nil {
			t.Fatal(err)
		}
		rw.Close()
		if got := readAll(t, fsys, name); got != "XYcd" {
			t.Fatalf("read-write: %q", got)
		}
		r, err := fsys.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Write([]byte("no")); err == nil {
			t.Fatal("write to a read-only file succeeded")
		}
		b, err := io.ReadAll(r)
		if err != nil || string(b) != "XYcd" {
			t.Fatalf("Read: %q %v", b, err)
		}
		r.Close()
		if _, err := r.Read(b); err == nil {
			t.Fatal("read after close succeeded")
		}
		if _, err := fsys.Create(filepath.Join(dir, "nodir", "f")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("Create in a missing directory: %v", err)
		}
	})
}

func TestTruncateGrowsWithZeros(t *testing.T) {
	impls(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "t")
		f, err := fsys.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		mustWrite(t, f, "abcdef")
		if err := f.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(2); err != nil {
			t.Fatal(err)
		}
		if err := f.Truncate(5); err != nil {
			t.Fatal(err)
		}
		f.Close()
		if got := readAll(t, fsys, name); got != "ab\x00\x00\x00" {
			t.Fatalf("got %q", got)
		}
	})
}

func TestListRemoveRenameMkdir(t *testing.T) {
	impls(t, func(t *testing.T, fsys FS, dir string) {
		for _, n := range []string{"c", "a", "b"} {
			if err := WriteFile(fsys, filepath.Join(dir, n), []byte(n)); err != nil {
				t.Fatal(err)
			}
		}
		sub := filepath.Join(dir, "sub", "deeper")
		if err := fsys.MkdirAll(sub); err != nil {
			t.Fatal(err)
		}
		if err := fsys.MkdirAll(sub); err != nil {
			t.Fatalf("MkdirAll of an existing dir: %v", err)
		}
		names, err := fsys.List(dir)
		if err != nil {
			t.Fatal(err)
		}
		if want := []string{"a", "b", "c", "sub"}; !reflect.DeepEqual(names, want) {
			t.Fatalf("List = %v, want %v", names, want)
		}
		if err := fsys.Rename(filepath.Join(dir, "a"), filepath.Join(dir, "b")); err != nil {
			t.Fatal(err)
		}
		if got := readAll(t, fsys, filepath.Join(dir, "b")); got != "a" {
			t.Fatalf("rename did not replace: %q", got)
		}
		if err := fsys.Rename(filepath.Join(dir, "c"), filepath.Join(sub, "c")); err != nil {
			t.Fatal(err)
		}
		if err := fsys.Remove(filepath.Join(dir, "b")); err != nil {
			t.Fatal(err)
		}
		if err := fsys.Remove(filepath.Join(dir, "b")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("second remove: %v", err)
		}
		if err := fsys.Remove(filepath.Join(dir, "sub")); err == nil {
			t.Fatal("removed a non-empty directory")
		}
		names, _ = fsys.List(dir)
		if want := []string{"sub"}; !reflect.DeepEqual(names, want) {
			t.Fatalf("List = %v, want %v", names, want)
		}
		names, _ = fsys.List(sub)
		if want := []string{"c"}; !reflect.DeepEqual(names, want) {
			t.Fatalf("List sub = %v, want %v", names, want)
		}
		if _, err := fsys.List(filepath.Join(dir, "missing")); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("List missing: %v", err)
		}
		for _, d := range []string{dir, sub} {
			if err := fsys.SyncDir(d); err != nil {
				t.Fatalf("SyncDir %s: %v", d, err)
			}
		}
		if err := fsys.SyncDir(filepath.Join(dir, "missing")); err == nil {
			t.Fatal("SyncDir of a missing directory succeeded")
		}
	})
}

func TestLock(t *testing.T) {
	impls(t, func(t *testing.T, fsys FS, dir string) {
		name := filepath.Join(dir, "LOCK")
		l, err := fsys.Lock(name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = fsys.Lock(name)
		if !errors.Is(err, ErrLocked) {
			t.Fatalf("second Lock: %v", err)
		}
		if pid := strconv.Itoa(os.Getpid()); !strings.Contains(err.Error(), "pid "+pid) {
			t.Fatalf("error %q does not name pid %s", err, pid)
		}
		if got := readAll(t, fsys, name); got != strconv.Itoa(os.Getpid())+"\n" {
			t.Fatalf("lock file holds %q", got)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		l2, err := fsys.Lock(name)
		if err != nil {
			t.Fatalf("Lock after release: %v", err)
		}
		l2.Close()
	})
}
