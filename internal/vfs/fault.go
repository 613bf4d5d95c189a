package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"strings"
	"sync"
)

// Op names a kind of file system operation a Fault rule can fail.
type Op uint8

// The operations Fault counts and can fail.
const (
	OpCreate   Op = iota // Create, OpenAppend of a missing file
	OpOpen               // Open, OpenReadWrite, OpenAppend
	OpRead               // File.Read, File.ReadAt
	OpWrite              // File.Write
	OpSync               // File.Sync
	OpTruncate           // File.Truncate
	OpRemove             // FS.Remove
	OpRename             // FS.Rename
	OpSyncDir            // FS.SyncDir
	numOps
)

var opNames = [numOps]string{"create", "open", "read", "write", "sync", "truncate", "remove", "rename", "syncdir"}

// String returns the operation's name.
func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Rule says which operation to fail and how. Rules are counted per rule:
// the Nth operation of kind Op on a matching path, counted from when the
// rule was added, fails.
type Rule struct {
	Op Op
	// Nth is the 1-based number of the matching operation that fails.
	Nth int
	// Repeat fails the Nth matching operation and every one after it;
	// with Nth 0 it fails every matching operation.
	Repeat bool
	// Match, if not empty, restricts the rule to paths containing it.
	Match string
	// Keep, for OpWrite, is how many bytes of the failing write reach the
	// file before the error: a torn write. Zero writes nothing.
	Keep int
	// Err is the error to return; ErrInjected if nil.
	Err error
}

type faultRule struct {
	Rule
	seen int
}

// Fault wraps an FS and fails operations by rule, deterministically: rules
// are counted under one mutex in the order operations reach the wrapper, so
// a single-goroutine test always fails the same call. It also models a full
// device (LimitSpace). Safe for concurrent use and under -race.
type Fault struct {
	fs FS

	mu     sync.Mutex
	rules  []*faultRule
	counts [numOps]int
	// space is the number of bytes writes may still add; negative means
	// unlimited.
	space int64
}

var _ FS = (*Fault)(nil)

// NewFault wraps fsys with no rules and unlimited space.
func NewFault(fsys FS) *Fault {
	return &Fault{fs: fsys, space: -1}
}

// Inject adds a rule.
func (f *Fault) Inject(r Rule) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = append(f.rules, &faultRule{Rule: r})
}

// Clear removes every rule; counts and the space limit are kept.
func (f *Fault) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.rules = nil
}

// LimitSpace lets writes add at most n more bytes in total; the write that
// crosses the limit writes what fits and fails with an error that wraps
// ErrNoSpace (syscall.ENOSPC), and so does every write after it, until
// UnlimitSpace or a larger LimitSpace. LimitSpace(0) is a full disk.
func (f *Fault) LimitSpace(n int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.space = max(n, 0)
}

// UnlimitSpace returns the space: writes succeed again.
func (f *Fault) UnlimitSpace() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.space = -1
}

// Count reports how many operations of kind op reached the wrapper.
func (f *Fault) Count(op Op) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.counts[op]
}

// check counts one operation and returns the error to fail it with, if a
// rule says so, and for writes how many bytes to let through.
func (f *Fault) check(op Op, name string, size int) (keep int, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.counts[op]++
	keep = size
	for _, r := range f.rules {
		if r.Op != op || (r.Match != "" && !strings.Contains(name, r.Match)) {
			continue
		}
		r.seen++
		if r.seen == r.Nth || (r.Repeat && r.seen > r.Nth) {
			e := r.Err
			if e == nil {
				e = ErrInjected
			}
			if op == OpWrite {
				keep = min(max(r.Keep, 0), size)
			} else {
				keep = 0
			}
			err = &fs.PathError{Op: op.String(), Path: name, Err: e}
		}
	}
	if op == OpWrite && f.space >= 0 && int64(keep) > f.space {
		keep = int(f.space)
		if err == nil {
			err = &fs.PathError{Op: "write", Path: name, Err: ErrNoSpace}
		}
	}
	if op == OpWrite && f.space >= 0 {
		f.space -= int64(keep)
	}
	return keep, err
}

func (f *Fault) wrap(file File, name string, err error) (File, error) {
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, f: f, name: name}, nil
}

// Create implements FS.
func (f *Fault) Create(name string) (File, error) {
	if _, err := f.check(OpCreate, name, 0); err != nil {
		return nil, err
	}
	file, err := f.fs.Create(name)
	return f.wrap(file, name, err)
}

// Open implements FS.
func (f *Fault) Open(name string) (File, error) {
	if _, err := f.check(OpOpen, name, 0); err != nil {
		return nil, err
	}
	file, err := f.fs.Open(name)
	return f.wrap(file, name, err)
}

// OpenReadWrite implements FS.
func (f *Fault) OpenReadWrite(name string) (File, error) {
	if _, err := f.check(OpOpen, name, 0); err != nil {
		return nil, err
	}
	file, err := f.fs.OpenReadWrite(name)
	return f.wrap(file, name, err)
}

// OpenAppend implements FS.
func (f *Fault) OpenAppend(name string) (File, error) {
	if _, err := f.check(OpOpen, name, 0); err != nil {
		return nil, err
	}
	file, err := f.fs.OpenAppend(name)
	return f.wrap(file, name, err)
}

// Remove implements FS.
func (f *Fault) Remove(name string) error {
	if _, err := f.check(OpRemove, name, 0); err != nil {
		return err
	}
	return f.fs.Remove(name)
}

// Rename implements FS.
func (f *Fault) Rename(oldname, newname string) error {
	if _, err := f.check(OpRename, oldname, 0); err != nil {
		return err
	}
	return f.fs.Rename(oldname, newname)
}

// MkdirAll implements FS.
func (f *Fault) MkdirAll(dir string) error { return f.fs.MkdirAll(dir) }

// List implements FS.
func (f *Fault) List(dir string) ([]string, error) { return f.fs.List(dir) }

// Stat implements FS.
func (f *Fault) Stat(name string) (fs.FileInfo, error) { return f.fs.Stat(name) }

// Lock implements FS.
func (f *Fault) Lock(name string) (io.Closer, error) { return f.fs.Lock(name) }

// SyncDir implements FS.
func (f *Fault) SyncDir(dir string) error {
	if _, err := f.check(OpSyncDir, dir, 0); err != nil {
		return err
	}
	return f.fs.SyncDir(dir)
}

type faultFile struct {
	File
	f    *Fault
	name string
}

func (ff *faultFile) Read(p []byte) (int, error) {
	if _, err := ff.f.check(OpRead, ff.name, 0); err != nil {
		return 0, err
	}
	return ff.File.Read(p)
}

func (ff *faultFile) ReadAt(p []byte, off int64) (int, error) {
	if _, err := ff.f.check(OpRead, ff.name, 0); err != nil {
		return 0, err
	}
	return ff.File.ReadAt(p, off)
}

func (ff *faultFile) Write(p []byte) (int, error) {
	keep, ferr := ff.f.check(OpWrite, ff.name, len(p))
	if ferr == nil {
		return ff.File.Write(p)
	}
	n := 0
	if keep > 0 {
		var err error
		if n, err = ff.File.Write(p[:keep]); err != nil {
			return n, err
		}
	}
	return n, ferr
}

func (ff *faultFile) Sync() error {
	if _, err := ff.f.check(OpSync, ff.name, 0); err != nil {
		return err
	}
	return ff.File.Sync()
}

func (ff *faultFile) Truncate(size int64) error {
	if _, err := ff.f.check(OpTruncate, ff.name, 0); err != nil {
		return err
	}
	return ff.File.Truncate(size)
}
