package manifest

import (
	"errors"
	"time"
)

// Store is what the engine needs from the metadata store. Bolt implements
// it on a local bbolt file; a cluster implements it on etcd, where Apply is
// one etcd transaction and NextPartID a counter key.
type Store interface {
	// Snapshot returns the current immutable view. It never blocks on a
	// running Apply and never reads the disk.
	Snapshot() *Snapshot
	// Apply validates edit against the current state and makes it durable
	// atomically: when it returns nil the edit survives a crash, and a
	// snapshot taken afterwards shows it; when it returns an error nothing
	// of the edit is applied.
	Apply(edit Edit) error
	// NextPartID returns an id no part has had or will have, even across
	// crashes. Ids increase but may skip.
	NextPartID() (uint64, error)
	// DatabaseID returns the database's id, random and set once, which
	// names its folder on each placement volume.
	DatabaseID() string
	// AddVolume durably records that the engine made its folder on the
	// placement volume at a Location; HasVolume and Volumes read the
	// record.
	AddVolume(loc string) error
	HasVolume(loc string) bool
	Volumes() []string
	// LiveFiles returns every file a live part names.
	LiveFiles() map[string]struct{}
	// Check verifies that the stored structures agree with each other and
	// with the in-memory snapshot.
	Check() error
	// Close releases the store. Snapshots taken before stay readable.
	Close() error
}

// FileName is the manifest file's name inside a data directory, so the
// engine and offline tools (strata check) agree on it.
const FileName = "manifest.db"

// Options tune Open. The zero value is what the engine uses.
type Options struct {
	// LockTimeout is how long Open waits for another process to release
	// the file lock before failing with ErrLocked; 0 means one second.
	LockTimeout time.Duration
	// ReadOnly opens the file with a shared lock (strata check on a
	// stopped database); Apply and NextPartID then fail with ErrReadOnly.
	ReadOnly bool
}

// Errors returned (wrapped) by the store; test with errors.Is.
var (
	// ErrLocked means another process holds the manifest file open.
	ErrLocked = errors.New("manifest: locked by another process")
	// ErrClosed means the store was closed.
	ErrClosed = errors.New("manifest: closed")
	// ErrReadOnly means the store was opened with Options.ReadOnly.
	ErrReadOnly = errors.New("manifest: opened read-only")
	// ErrFailed means an earlier commit to disk failed. Whether that edit
	// reached the disk is unknown, so the store refuses further edits; the
	// engine must close and reopen it, which reads the truth from disk.
	ErrFailed = errors.New("manifest: an earlier commit failed; reopen the store")
)
