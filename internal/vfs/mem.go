package vfs

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Mem is an in-memory FS that models durability, so crash tests can run
// without processes. Every file has live contents (what reads see) and
// synced contents (what File.Sync last made durable); the namespace has live
// entries and durable entries (what SyncDir last made durable). CrashClone
// returns what a machine would find after losing power at that moment.
//
// The model is the strict one (invariant 3 in doc.go): a new, renamed or
// removed name is durable only after SyncDir of its directory, even if the
// file itself was synced; a file's bytes and size are durable only up to
// its last Sync. Directories are the exception: MkdirAll makes them durable
// at once, since storage creates them once and never renames them.
//
// All methods are safe for concurrent use; one mutex serialises them.
type Mem struct {
	mu      sync.Mutex
	dirs    map[string]bool
	files   map[string]*memNode // live namespace
	durable map[string]*memNode // namespace as of the last SyncDir of each directory
	locks   map[string]bool
}

var _ FS = (*Mem)(nil)

// memNode is one file (an inode). synced may alias data's backing array
// while shared is true; writeAt copies data before touching a synced byte.
type memNode struct {
	data    []byte
	synced  []byte
	shared  bool
	modTime time.Time
}

// NewMem returns an empty in-memory file system holding only the root
// directory.
func NewMem() *Mem {
	return &Mem{
		dirs:    map[string]bool{"/": true, ".": true},
		files:   map[string]*memNode{},
		durable: map[string]*memNode{},
		locks:   map[string]bool{},
	}
}

func memClean(name string) string { return filepath.Clean(name) }

// CrashClone returns a new Mem holding only what was durable: the entries
// made durable by SyncDir, each with the contents of its last Sync. Open
// files and locks are not carried over. The receiver is left unchanged, so
// a test can take several clones at different moments.
func (m *Mem) CrashClone() *Mem {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := NewMem()
	for d := range m.dirs {
		c.dirs[d] = true
	}
	for name, n := range m.durable {
		data := append([]byte(nil), n.synced...)
		nn := &memNode{data: data, synced: data[:len(data):len(data)], shared: true, modTime: n.modTime}
		c.files[name] = nn
		c.durable[name] = nn
	}
	return c
}

func (m *Mem) pathErr(op, name string, err error) error {
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// parentExistsLocked reports whether name's directory exists.
func (m *Mem) parentExistsLocked(name string) bool {
	return m.dirs[filepath.Dir(name)]
}

func (m *Mem) open(op, name string, create, trunc, write, app bool) (File, error) {
	name = memClean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.dirs[name] {
		return nil, m.pathErr(op, name, fmt.Errorf("is a directory"))
	}
	n, ok := m.files[name]
	if !ok {
		if !create {
			return nil, m.pathErr(op, name, fs.ErrNotExist)
		}
		if !m.parentExistsLocked(name) {
			return nil, m.pathErr(op, name, fs.ErrNotExist)
		}
		n = &memNode{modTime: time.Now()}
		m.files[name] = n
	} else if trunc {
		n.truncate(0)
		n.modTime = time.Now()
	}
	return &memFile{m: m, n: n, name: name, write: write, app: app}, nil
}

// Create implements FS.
func (m *Mem) Create(name string) (File, error) {
	return m.open("create", name, true, true, true, false)
}

// Open implements FS.
func (m *Mem) Open(name string) (File, error) {
	return m.open("open", name, false, false, false, false)
}

// OpenReadWrite implements FS.
func (m *Mem) OpenReadWrite(name string) (File, error) {
	return m.open("open", name, false, false, true, false)
}

// OpenAppend implements FS.
func (m *Mem) OpenAppend(name string) (File, error) {
	return m.open("open", name, true, false, true, true)
}

// Remove implements FS.
func (m *Mem) Remove(name string) error {
	name = memClean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[name]; ok {
		delete(m.files, name)
		return nil
	}
	if m.dirs[name] {
		if len(m.listLocked(name)) > 0 {
			return m.pathErr("remove", name, fmt.Errorf("directory not empty"))
		}
		delete(m.dirs, name)
		return nil
	}
	return m.pathErr("remove", name, fs.ErrNotExist)
}

// Rename implements FS. Renaming directories is not supported: storage never
// does it.
func (m *Mem) Rename(oldname, newname string) error {
	oldname, newname = memClean(oldname), memClean(newname)
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.files[oldname]
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	if !m.parentExistsLocked(newname) || m.dirs[newname] {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: fs.ErrNotExist}
	}
	delete(m.files, oldname)
	m.files[newname] = n
	return nil
}

// MkdirAll implements FS.
func (m *Mem) MkdirAll(dir string) error {
	dir = memClean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	for d := dir; !m.dirs[d]; d = filepath.Dir(d) {
		if _, ok := m.files[d]; ok {
			return m.pathErr("mkdir", d, fmt.Errorf("not a directory"))
		}
	}
	for d := dir; !m.dirs[d]; d = filepath.Dir(d) {
		m.dirs[d] = true
	}
	return nil
}

func (m *Mem) listLocked(dir string) []string {
	var names []string
	for name := range m.files {
		if filepath.Dir(name) == dir {
			names = append(names, filepath.Base(name))
		}
	}
	for d := range m.dirs {
		if d != dir && filepath.Dir(d) == dir {
			names = append(names, filepath.Base(d))
		}
	}
	sort.Strings(names)
	return names
}

// List implements FS.
func (m *Mem) List(dir string) ([]string, error) {
	dir = memClean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[dir] {
		return nil, m.pathErr("open", dir, fs.ErrNotExist)
	}
	return m.listLocked(dir), nil
}

// Stat implements FS.
func (m *Mem) Stat(name string) (fs.FileInfo, error) {
	name = memClean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if n, ok := m.files[name]; ok {
		return memInfo{name: filepath.Base(name), size: int64(len(n.data)), mod: n.modTime}, nil
	}
	if m.dirs[name] {
		return memInfo{name: filepath.Base(name), dir: true}, nil
	}
	return nil, m.pathErr("stat", name, fs.ErrNotExist)
}

// SyncDir implements FS: the live entries of dir become its durable ones.
func (m *Mem) SyncDir(dir string) error {
	dir = memClean(dir)
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.dirs[dir] {
		return m.pathErr("syncdir", dir, fs.ErrNotExist)
	}
	for name := range m.durable {
		if filepath.Dir(name) == dir {
			delete(m.durable, name)
		}
	}
	for name, n := range m.files {
		if filepath.Dir(name) == dir {
			m.durable[name] = n
		}
	}
	return nil
}

// Lock implements FS. The lock is held by this Mem value: a second Lock of
// the same name fails until the first is released, and CrashClone starts
// with no locks held, as a restarted process would.
func (m *Mem) Lock(name string) (io.Closer, error) {
	name = memClean(name)
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.locks[name] {
		holder := ""
		if n, ok := m.files[name]; ok {
			holder = string(n.data)
		}
		return nil, lockedError(name, holder)
	}
	if !m.parentExistsLocked(name) {
		return nil, m.pathErr("open", name, fs.ErrNotExist)
	}
	n, ok := m.files[name]
	if !ok {
		n = &memNode{modTime: time.Now()}
		m.files[name] = n
	}
	n.truncate(0)
	n.writeAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	m.locks[name] = true
	return &memLock{m: m, name: name}, nil
}

type memLock struct {
	m    *Mem
	name string
	once sync.Once
}

func (l *memLock) Close() error {
	l.once.Do(func() {
		l.m.mu.Lock()
		delete(l.m.locks, l.name)
		l.m.mu.Unlock()
	})
	return nil
}

// writeAt writes p at off, zero-filling any gap, and never changes a byte
// that synced can see (copy on write). Appends after a sync extend the shared
// backing array in place, which synced cannot see past its length.
func (n *memNode) writeAt(p []byte, off int64) {
	oldLen := int64(len(n.data))
	end := off + int64(len(p))
	if n.shared && min(off, oldLen) < int64(len(n.synced)) {
		n.data = append([]byte(nil), n.data...)
		n.shared = false
	}
	if end > oldLen {
		if end <= int64(cap(n.data)) {
			n.data = n.data[:end]
			if off > oldLen {
				clear(n.data[oldLen:off])
			}
		} else {
			grown := make([]byte, end, max(end, int64(2*cap(n.data))))
			copy(grown, n.data)
			n.data = grown
			n.shared = false
		}
	}
	copy(n.data[off:], p)
}

// truncate sets the live size; bytes beyond the old size read as zeros.
func (n *memNode) truncate(size int64) {
	if size <= int64(len(n.data)) {
		n.data = n.data[:size]
		return
	}
	n.writeAt(make([]byte, size-int64(len(n.data))), int64(len(n.data)))
}

// sync makes the live contents the synced ones without copying: later
// writes copy before changing a byte synced can see.
func (n *memNode) sync() {
	n.synced = n.data[:len(n.data):len(n.data)]
	n.shared = true
}

type memFile struct {
	m      *Mem
	n      *memNode
	name   string
	pos    int64
	write  bool
	app    bool
	closed bool
}

func (f *memFile) check(op string, needWrite bool) error {
	if f.closed {
		return f.m.pathErr(op, f.name, fs.ErrClosed)
	}
	if needWrite && !f.write {
		return f.m.pathErr(op, f.name, fmt.Errorf("file not open for writing"))
	}
	return nil
}

func (f *memFile) Read(p []byte) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if f.pos >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	k := copy(p, f.n.data[f.pos:])
	f.pos += int64(k)
	return k, nil
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, f.m.pathErr("read", f.name, fs.ErrInvalid)
	}
	if off >= int64(len(f.n.data)) {
		return 0, io.EOF
	}
	k := copy(p, f.n.data[off:])
	if k < len(p) {
		return k, io.EOF
	}
	return k, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if f.app {
		f.pos = int64(len(f.n.data))
	}
	f.n.writeAt(p, f.pos)
	f.pos += int64(len(p))
	f.n.modTime = time.Now()
	return len(p), nil
}

func (f *memFile) Sync() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("sync", false); err != nil {
		return err
	}
	f.n.sync()
	return nil
}

func (f *memFile) Truncate(size int64) error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return f.m.pathErr("truncate", f.name, fs.ErrInvalid)
	}
	f.n.truncate(size)
	return nil
}

func (f *memFile) Stat() (fs.FileInfo, error) {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if err := f.check("stat", false); err != nil {
		return nil, err
	}
	return memInfo{name: filepath.Base(f.name), size: int64(len(f.n.data)), mod: f.n.modTime}, nil
}

func (f *memFile) Close() error {
	f.m.mu.Lock()
	defer f.m.mu.Unlock()
	if f.closed {
		return f.m.pathErr("close", f.name, fs.ErrClosed)
	}
	f.closed = true
	return nil
}

type memInfo struct {
	name string
	size int64
	dir  bool
	mod  time.Time
}

func (i memInfo) Name() string { return i.name }
func (i memInfo) Size() int64  { return i.size }
func (i memInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}
func (i memInfo) ModTime() time.Time { return i.mod }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }

// String describes the file system's live files and sizes, for test
// failure messages.
func (m *Mem) String() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	names := make([]string, 0, len(m.files))
	for name := range m.files {
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, name := range names {
		n := m.files[name]
		fmt.Fprintf(&b, "%s %d (synced %d)\n", name, len(n.data), len(n.synced))
	}
	return b.String()
}
