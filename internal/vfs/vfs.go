package vfs

import (
	"errors"
	"io"
	"io/fs"
	"syscall"
)

// File is an open file. Writes go to the current offset, or to the end for a
// file opened with OpenAppend. Nothing written is durable until Sync returns
// nil (invariant 2 in doc.go).
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.Closer
	// Sync makes every byte written so far durable, together with the
	// file's size. It does not make the file's name durable: see FS.SyncDir.
	Sync() error
	// Stat describes the open file; Size is the current (not the synced)
	// size.
	Stat() (fs.FileInfo, error)
	// Truncate changes the file's size; like a write, the new size is durable
	// only after Sync.
	Truncate(size int64) error
}

// FS is the file system a storage engine needs, and nothing more. Names are
// slash- or OS-separated paths; an implementation cleans them.
type FS interface {
	// Create creates the named file, or truncates it if it exists, and opens
	// it for reading and writing at offset 0.
	Create(name string) (File, error)
	// Open opens an existing file for reading only.
	Open(name string) (File, error)
	// OpenReadWrite opens an existing file for reading and writing at
	// offset 0, keeping its contents.
	OpenReadWrite(name string) (File, error)
	// OpenAppend opens the named file for appending, creating it if it does
	// not exist; every Write goes to the end of the file.
	OpenAppend(name string) (File, error)
	// Remove removes a file or an empty directory. The removal is durable
	// only after SyncDir of the parent directory.
	Remove(name string) error
	// Rename renames oldname to newname, replacing newname if it exists.
	// The change is durable only after SyncDir of both parent directories.
	Rename(oldname, newname string) error
	// MkdirAll creates a directory and any missing parents.
	MkdirAll(dir string) error
	// List returns the names (not paths) of the entries of dir, sorted.
	List(dir string) ([]string, error)
	// Stat describes the named file or directory.
	Stat(name string) (fs.FileInfo, error)
	// Lock takes an exclusive advisory lock on the named file, creating it
	// and writing the caller's process id into it. While the lock is held a
	// second Lock of the same file, from this process or another, fails
	// with an error that wraps ErrLocked and names the holder's pid.
	// Closing the returned io.Closer releases the lock; a process that dies
	// releases it too.
	Lock(name string) (io.Closer, error)
	// SyncDir makes the entries of dir durable: files created, renamed into
	// or removed from it since the last SyncDir survive a crash only after
	// it returns nil.
	SyncDir(dir string) error
}

// ErrNoSpace is the error a write returns when the device is full. It is
// syscall.ENOSPC itself, so errors.Is(err, ErrNoSpace) holds for a real full
// disk (the os package wraps ENOSPC in *fs.PathError) as well as for one the
// Fault file system reports.
var ErrNoSpace error = syscall.ENOSPC

// ErrLocked is wrapped by the error Lock returns when another holder has the
// lock.
var ErrLocked = errors.New("vfs: file is locked")

// ErrInjected is the error a Fault rule returns when the rule gives none.
var ErrInjected = errors.New("vfs: injected fault")

// ReadFile reads the whole named file.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// WriteFile creates (or truncates) the named file, writes data and syncs it.
// It does not sync the directory.
func WriteFile(fsys FS, name string, data []byte) error {
	f, err := fsys.Create(name)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
