package manifest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/strata-db/strata/internal/vfs"
)

// Bucket and key names of the bbolt file.
//
//	meta        format -> uint record (storeFormat)
//	            next_part_id -> uint record: every allocated id is below it
//	            catalog -> catalog record
//	            wal_checkpoint -> uint record
//	            database_id -> 32 hex digits, random, set once
//	            retention_clock -> uint record: Unix nanoseconds
//	shards      table:8 shard:4 (big-endian) -> shard record
//	flushed     table:8 shard:4 -> uint record
//	parts       table:8 shard:4 id:8 -> part record
//	commits     seq:8 -> commit record
//	transforms  name -> transform record
//	volumes     placement volume location -> 1: the folders made
var (
	bucketMeta       = []byte("meta")
	bucketShards     = []byte("shards")
	bucketFlushed    = []byte("flushed")
	bucketParts      = []byte("parts")
	bucketCommits    = []byte("commits")
	bucketTransforms = []byte("transforms")
	// bucketVolumes is not in allBuckets: a file from before it has none
	// and reads as having made no volume folder.
	bucketVolumes = []byte("volumes")

	keyFormat        = []byte("format")
	keyNextPartID    = []byte("next_part_id")
	keyCatalog       = []byte("catalog")
	keyWALCheckpoint = []byte("wal_checkpoint")
	keyDatabaseID    = []byte("database_id")
	keyRetention     = []byte("retention_clock")

	allBuckets = [][]byte{bucketMeta, bucketShards, bucketFlushed, bucketParts, bucketCommits, bucketTransforms}
)

// storeFormat is the layout version of the whole file: bumped only when a
// bucket or key changes meaning, never for an added record field.
const storeFormat = 1

// idBlock is how many part ids one durable counter bump reserves, so that
// NextPartID costs an fsync only once per idBlock parts. A crash skips at
// most idBlock ids; it never reuses one.
const idBlock = 1024

// Bolt is the Store on a single bbolt file. It is safe for concurrent use:
// edits are serialized, snapshots are read without locks.
type Bolt struct {
	db       *bolt.DB
	path     string
	readOnly bool
	dbID     string // keyDatabaseID; empty in a read-only open of an older file

	cur atomic.Pointer[Snapshot]
	// closed is set under mu; NextPartID also reads it under ids alone.
	closed atomic.Bool

	// vols is the volumes bucket, read at open and written by AddVolume
	// under volsMu.
	volsMu sync.Mutex
	vols   map[string]bool

	mu struct {
		sync.Mutex
		idx    *index
		failed error
	}
	ids struct {
		sync.Mutex
		next     uint64 // the next id to hand out
		reserved uint64 // persisted counter; next <= reserved
	}
}

var _ Store = (*Bolt)(nil)

// Open opens or creates the manifest file at path and loads it into memory.
// If another process holds the file, Open waits Options.LockTimeout and then
// fails with an error that wraps ErrLocked and names the file.
func Open(path string, opts Options) (*Bolt, error) {
	timeout := opts.LockTimeout
	if timeout <= 0 {
		timeout = time.Second
	}
	db, err := bolt.Open(path, 0o644, &bolt.Options{
		Timeout:      timeout,
		ReadOnly:     opts.ReadOnly,
		FreelistType: bolt.FreelistMapType,
		// NoSync stays false: every commit is fsynced (invariant 4).
	})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("manifest: open %s: waited %s for the file lock: %w", path, timeout, ErrLocked)
	}
	if err != nil {
		return nil, fmt.Errorf("manifest: open %s: %w", path, err)
	}
	b := &Bolt{db: db, path: path, readOnly: opts.ReadOnly}
	if err := b.init(); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("manifest: open %s: %w", path, err)
	}
	return b, nil
}

func (b *Bolt) init() error {
	if !b.readOnly {
		created := false
		err := b.db.Update(func(tx *bolt.Tx) error {
			for _, name := range append(allBuckets, bucketVolumes) {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return err
				}
			}
			meta := tx.Bucket(bucketMeta)
			if meta.Get(keyDatabaseID) == nil {
				// Set once, by the first writable open (databases made
				// before it existed get theirs then).
				var id [16]byte
				if _, err := rand.Read(id[:]); err != nil {
					return err
				}
				if err := meta.Put(keyDatabaseID, []byte(hex.EncodeToString(id[:]))); err != nil {
					return err
				}
			}
			if meta.Get(keyFormat) == nil {
				created = true
				if err := meta.Put(keyFormat, encodeUint(storeFormat)); err != nil {
					return err
				}
				return meta.Put(keyNextPartID, encodeUint(1))
			}
			return nil
		})
		if err != nil {
			return err
		}
		if created {
			// The file's contents are fsynced by bbolt, its name is not:
			// without this, a power cut could lose a new database whose
			// first edits were acknowledged.
			if err := (vfs.OS{}).SyncDir(filepath.Dir(b.path)); err != nil {
				return err
			}
		}
	}
	var (
		st  *state
		err error
	)
	if err := b.db.View(func(tx *bolt.Tx) error {
		b.dbID = string(tx.Bucket(bucketMeta).Get(keyDatabaseID))
		b.vols = map[string]bool{}
		if vb := tx.Bucket(bucketVolumes); vb != nil {
			if err := vb.ForEach(func(k, _ []byte) error {
				b.vols[string(k)] = true
				return nil
			}); err != nil {
				return err
			}
		}
		st, err = load(tx)
		return err
	}); err != nil {
		return err
	}
	if err := st.verify(); err != nil {
		return err
	}
	b.cur.Store(st.snap)
	b.mu.idx = st.idx
	b.ids.next, b.ids.reserved = st.reserved, st.reserved
	return nil
}

// DatabaseID returns the database's random id, which names its folder on
// each placement volume (so that two databases may share a volume).
func (b *Bolt) DatabaseID() string { return b.dbID }

// HasVolume reports whether AddVolume recorded loc.
func (b *Bolt) HasVolume(loc string) bool {
	b.volsMu.Lock()
	defer b.volsMu.Unlock()
	return b.vols[loc]
}

// Volumes returns every location AddVolume recorded, sorted.
func (b *Bolt) Volumes() []string {
	b.volsMu.Lock()
	defer b.volsMu.Unlock()
	out := make([]string, 0, len(b.vols))
	for v := range b.vols {
		out = append(out, v)
	}
	slices.Sort(out)
	return out
}

// AddVolume durably records that this database made its folder on the
// placement volume at loc, once: from then on a missing folder there is a
// volume that is not mounted, never one to make again, and the folder is
// swept at every open even when no policy names the volume any more.
func (b *Bolt) AddVolume(loc string) error {
	b.volsMu.Lock()
	defer b.volsMu.Unlock()
	if b.vols[loc] {
		return nil
	}
	b.mu.Lock()
	err := b.writableLocked()
	b.mu.Unlock()
	if err != nil {
		return err
	}
	if err := b.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketVolumes).Put([]byte(loc), []byte{1})
	}); err != nil {
		return fmt.Errorf("manifest: record volume %s: %w", loc, err)
	}
	b.vols[loc] = true
	return nil
}

// Path returns the manifest file's path.
func (b *Bolt) Path() string { return b.path }

// Snapshot returns the current immutable view.
func (b *Bolt) Snapshot() *Snapshot { return b.cur.Load() }

// LiveFiles returns every file a live part names.
func (b *Bolt) LiveFiles() map[string]struct{} { return b.cur.Load().LiveFiles() }

// CommitAtOrBefore returns the newest commit at or before t (R6.7).
func (b *Bolt) CommitAtOrBefore(t time.Time) (Commit, bool) {
	return b.cur.Load().CommitAtOrBefore(t)
}

// FlushedThrough returns the commit up to which the shard's writes are in
// parts.
func (b *Bolt) FlushedThrough(table uint64, shard uint32) uint64 {
	return b.cur.Load().FlushedThrough(table, shard)
}

// TransformProgress returns a transformation's checkpoint.
func (b *Bolt) TransformProgress(name string) (processed uint64, state []byte, ok bool) {
	return b.cur.Load().TransformProgress(name)
}

// Catalog returns the encoded catalog and the commit that produced it.
func (b *Bolt) Catalog() (commit uint64, data []byte) { return b.cur.Load().Catalog() }

// writableLocked reports why edits are refused, if they are. Call with mu
// held.
func (b *Bolt) writableLocked() error {
	switch {
	case b.closed.Load():
		return ErrClosed
	case b.readOnly:
		return ErrReadOnly
	case b.mu.failed != nil:
		return fmt.Errorf("%w: %v", ErrFailed, b.mu.failed)
	}
	return nil
}

// Apply validates and commits one edit; see Store.Apply and Edit.
func (b *Bolt) Apply(e Edit) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.writableLocked(); err != nil {
		return err
	}
	b.ids.Lock()
	reserved := b.ids.reserved
	b.ids.Unlock()
	next, err := build(b.cur.Load(), b.mu.idx, reserved, &e)
	if err != nil {
		return err
	}
	if err := b.db.Update(func(tx *bolt.Tx) error { return write(tx, &e, next) }); err != nil {
		// The commit may or may not have reached the disk; only a reopen
		// can tell (ErrFailed).
		b.mu.failed = err
		return fmt.Errorf("manifest: commit edit: %w", err)
	}
	b.mu.idx.update(&e)
	b.cur.Store(next)
	return nil
}

// NextPartID returns a fresh part id; see Store.NextPartID.
func (b *Bolt) NextPartID() (uint64, error) {
	b.mu.Lock()
	err := b.writableLocked()
	b.mu.Unlock()
	if err != nil {
		return 0, err
	}
	b.ids.Lock()
	defer b.ids.Unlock()
	if b.closed.Load() {
		// Close ran between the check above and taking ids.
		return 0, ErrClosed
	}
	if b.ids.next >= b.ids.reserved {
		limit := b.ids.next + idBlock
		err := b.db.Update(func(tx *bolt.Tx) error {
			return tx.Bucket(bucketMeta).Put(keyNextPartID, encodeUint(limit))
		})
		if err != nil {
			return 0, fmt.Errorf("manifest: reserve part ids: %w", err)
		}
		b.ids.reserved = limit
	}
	id := b.ids.next
	b.ids.next++
	return id, nil
}

// Close closes the file. It waits for a running Apply.
func (b *Bolt) Close() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed.Load() {
		return nil
	}
	b.closed.Store(true)
	// Taking ids.Mutex waits out a running reservation.
	b.ids.Lock()
	defer b.ids.Unlock()
	if err := b.db.Close(); err != nil {
		return fmt.Errorf("manifest: close %s: %w", b.path, err)
	}
	return nil
}

// write puts a validated edit into tx. next is the snapshot build made
// from it; appended commits are taken from there, already normalized.
func write(tx *bolt.Tx, e *Edit, next *Snapshot) error {
	meta := tx.Bucket(bucketMeta)
	shards := tx.Bucket(bucketShards)
	flushed := tx.Bucket(bucketFlushed)
	parts := tx.Bucket(bucketParts)
	commits := tx.Bucket(bucketCommits)
	transforms := tx.Bucket(bucketTransforms)

	if n := len(e.AppendCommits); n > 0 {
		for i := range next.commits[len(next.commits)-n:] {
			c := &next.commits[len(next.commits)-n+i]
			if err := commits.Put(seqKey(c.Seq), encodeCommit(c)); err != nil {
				return err
			}
		}
	}
	for i := range e.SetShards {
		s := &e.SetShards[i]
		if err := shards.Put(shardKey(s.Table, s.Shard), encodeShard(s)); err != nil {
			return err
		}
	}
	for _, r := range e.RemoveParts {
		if err := parts.Delete(partKey(r.Table, r.Shard, r.ID)); err != nil {
			return err
		}
	}
	for i := range e.AddParts {
		p := &e.AddParts[i]
		if err := parts.Put(partKey(p.Table, p.Shard, p.ID), encodePart(p)); err != nil {
			return err
		}
	}
	for _, r := range e.RemoveShards {
		k := shardKey(r.Table, r.Shard)
		if err := shards.Delete(k); err != nil {
			return err
		}
		if err := flushed.Delete(k); err != nil {
			return err
		}
	}
	for _, f := range e.SetFlushed {
		if err := flushed.Put(shardKey(f.Table, f.Shard), encodeUint(f.Commit)); err != nil {
			return err
		}
	}
	if e.Catalog != nil {
		if err := meta.Put(keyCatalog, encodeCatalog(e.Catalog)); err != nil {
			return err
		}
	}
	for _, name := range e.RemoveTransforms {
		if err := transforms.Delete([]byte(name)); err != nil {
			return err
		}
	}
	for i := range e.SetTransforms {
		t := &e.SetTransforms[i]
		if err := transforms.Put([]byte(t.Name), encodeTransform(t)); err != nil {
			return err
		}
	}
	if e.WALCheckpoint != 0 {
		if err := meta.Put(keyWALCheckpoint, encodeUint(e.WALCheckpoint)); err != nil {
			return err
		}
	}
	if !e.RetentionClock.IsZero() {
		if err := meta.Put(keyRetention, encodeUint(uint64(next.retClock.UnixNano()))); err != nil {
			return err
		}
	}
	return nil
}
