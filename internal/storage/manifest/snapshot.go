package manifest

import (
	"sort"
	"time"
)

// Snapshot is an immutable view of the whole manifest as of one edit. It
// lives in memory: reading it never touches the disk or takes a lock.
//
// Apply builds the next snapshot copy-on-write (invariant 6 in doc.go):
// it copies the table map, the shard list of each table it touches and the
// part list of each shard it touches, and shares everything else. A
// snapshot therefore never changes after it is published, and slices it
// returns are shared with later snapshots: callers must not modify them.
type Snapshot struct {
	tables     map[uint64]*tableState
	catalog    CatalogUpdate
	commits    []Commit // commits[i].Seq == i+1
	walCheck   uint64
	retClock   time.Time // Edit.RetentionClock, the latest
	transforms map[string]*Transform
}

// tableState is the layout of one table: its shards sorted by number, with
// their records in a parallel slice so Shards needs no allocation.
type tableState struct {
	infos  []Shard
	shards []*shardState
}

type shardState struct {
	flushed uint64
	parts   []Part // sorted by ID
}

func emptySnapshot() *Snapshot {
	return &Snapshot{
		tables:     map[uint64]*tableState{},
		transforms: map[string]*Transform{},
	}
}

// Tables returns the ids of the tables that have at least one shard, in
// ascending order.
func (s *Snapshot) Tables() []uint64 {
	ids := make([]uint64, 0, len(s.tables))
	for id := range s.tables {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// Shards returns the shards of a table in ascending shard number, nil if the
// table has none. The slice is shared: do not modify it.
func (s *Snapshot) Shards(table uint64) []Shard {
	t := s.tables[table]
	if t == nil {
		return nil
	}
	return t.infos
}

// Shard returns one shard's record.
func (s *Snapshot) Shard(table uint64, shard uint32) (Shard, bool) {
	t := s.tables[table]
	if t == nil {
		return Shard{}, false
	}
	i, ok := t.find(shard)
	if !ok {
		return Shard{}, false
	}
	return t.infos[i], true
}

// Parts returns the live parts of a shard in ascending id order. The slice
// and the keys inside the parts are shared: do not modify them.
func (s *Snapshot) Parts(table uint64, shard uint32) []Part {
	sh := s.shard(table, shard)
	if sh == nil {
		return nil
	}
	return sh.parts
}

// FlushedThrough returns the commit up to which the shard's writes are in
// parts (0 when nothing was flushed). WAL replay skips writes to the shard
// at or below it.
func (s *Snapshot) FlushedThrough(table uint64, shard uint32) uint64 {
	sh := s.shard(table, shard)
	if sh == nil {
		return 0
	}
	return sh.flushed
}

// RetentionClock returns the latest clock reading a merge judged
// retention at (Edit.RetentionClock); zero when none did.
func (s *Snapshot) RetentionClock() time.Time { return s.retClock }

// WALCheckpoint returns the database-wide WAL checkpoint: the commit up to
// which every shard's writes are in parts, so WAL segments holding only
// older commits may be deleted.
func (s *Snapshot) WALCheckpoint() uint64 { return s.walCheck }

// Catalog returns the encoded catalog and the commit that produced it;
// commit 0 and nil data when none was stored. The data is shared: do not
// modify it.
func (s *Snapshot) Catalog() (commit uint64, data []byte) {
	return s.catalog.Commit, s.catalog.Data
}

// LastCommit returns the newest commit sequence recorded, 0 for a new
// database.
func (s *Snapshot) LastCommit() uint64 { return uint64(len(s.commits)) }

// Commit returns the summary of commit seq.
func (s *Snapshot) Commit(seq uint64) (Commit, bool) {
	if seq == 0 || seq > uint64(len(s.commits)) {
		return Commit{}, false
	}
	return s.commits[seq-1], true
}

// Commits returns the commits with from <= seq <= to, in order, clamped to
// the commits that exist. The slice is shared: do not modify it.
func (s *Snapshot) Commits(from, to uint64) []Commit {
	n := uint64(len(s.commits))
	if from == 0 {
		from = 1
	}
	if to > n {
		to = n
	}
	if from > to {
		return nil
	}
	// Cap the capacity so an append by the caller cannot write into
	// entries a later snapshot owns.
	return s.commits[from-1 : to : to]
}

// CommitAtOrBefore returns the newest commit whose time is at or before t
// (AS OF TIMESTAMP, R6.7). It reports false when every commit is later
// than t. Commit times never decrease (invariant 5), so this is a binary
// search.
func (s *Snapshot) CommitAtOrBefore(t time.Time) (Commit, bool) {
	// i is the first commit after t.
	i := sort.Search(len(s.commits), func(i int) bool { return s.commits[i].At.After(t) })
	if i == 0 {
		return Commit{}, false
	}
	return s.commits[i-1], true
}

// TransformProgress returns a transformation's checkpoint: the source
// commit processed up to and its state. ok is false for an unknown name.
// The state is shared: do not modify it.
func (s *Snapshot) TransformProgress(name string) (processed uint64, state []byte, ok bool) {
	t := s.transforms[name]
	if t == nil {
		return 0, nil, false
	}
	return t.Processed, t.State, true
}

// Transforms returns every transformation checkpoint, sorted by name.
func (s *Snapshot) Transforms() []Transform {
	out := make([]Transform, 0, len(s.transforms))
	for _, t := range s.transforms {
		out = append(out, *t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// LiveFiles returns every file a part of this snapshot names, local paths
// and object store keys alike (a superset is safe for a cleanup of either
// place). At startup the engine removes every data file not in this set
// (invariant 2).
func (s *Snapshot) LiveFiles() map[string]struct{} {
	files := map[string]struct{}{}
	for _, t := range s.tables {
		for _, sh := range t.shards {
			for i := range sh.parts {
				files[sh.parts[i].File] = struct{}{}
			}
		}
	}
	return files
}

func (s *Snapshot) shard(table uint64, shard uint32) *shardState {
	t := s.tables[table]
	if t == nil {
		return nil
	}
	i, ok := t.find(shard)
	if !ok {
		return nil
	}
	return t.shards[i]
}

// find returns the index of shard in t, or where it would be inserted.
func (t *tableState) find(shard uint32) (int, bool) {
	i := sort.Search(len(t.infos), func(i int) bool { return t.infos[i].Shard >= shard })
	return i, i < len(t.infos) && t.infos[i].Shard == shard
}

// findPart returns the index of part id in a sorted part list, or where it
// would be inserted.
func findPart(parts []Part, id uint64) (int, bool) {
	i := sort.Search(len(parts), func(i int) bool { return parts[i].ID >= id })
	return i, i < len(parts) && parts[i].ID == id
}
